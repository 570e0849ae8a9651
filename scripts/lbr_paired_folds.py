"""The bot's fold rates to LBR's bets, paired question for question, where two LBR runs ask at the same
state (docs/results.md, "Flop leaves and fold rates"):

    python scripts/lbr_paired_folds.py RUNS/A RUNS/B --round 1

Two folders of ``deepstack eval lbr --out`` with one setting and seed (``deepstack eval lbr-paired``
checks that), against two configs that play alike before ``--round`` (e.g. the shipped bot and the
same bot with other flop leaves: the same pre-flop re-solves, so the same flop states). Where LBR
leads that round, the bot has not acted in it yet and both runs ask the same question at the same
state. The questions of a chunk are paired in order up to the first that differs (size or all-in
amount): a hand the two bots played apart shifts the bot's sampling for the chunk's later hands. Per
bet size: the bot's mean fold probability in each run, B - A per question with its 95% interval, and
LBR's pure-bluff value ``p_fold - (1 - p_fold) * bet`` in pots (a bet above zero gains even with no
equity at all).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def led_questions(path: Path, round_: int) -> list[list]:
    """LBR's questions of one chunk file in ``round_`` where it leads (the bot has not acted there)."""
    return [q for q in json.loads(path.read_text()) if q[0] == round_ and q[4] is False]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--round", type=int, default=1, help="0 pre-flop, 1 flop, ... (default: 1)")
    args = parser.parse_args()
    pairs: dict[str, list[tuple[float, float, float]]] = {}
    paired = cut = 0
    for fa in sorted(args.a.glob("folds-*.json")):
        fb = args.b / fa.name
        if not fb.exists():
            continue
        qa, qb = led_questions(fa, args.round), led_questions(fb, args.round)
        common = 0  # the chunk's questions in line up to the first hand the two runs played apart
        while common < min(len(qa), len(qb)) and qa[common][:3] == qb[common][:3]:
            common += 1
        paired += 1
        cut += common < max(len(qa), len(qb))
        for x, y in zip(qa[:common], qb[:common]):
            kind = "all-in" if x[2] else ("pot" if abs(x[1] - 1.0) < 0.05 else f"{x[1]:g} pot")
            pairs.setdefault(kind, []).append((x[3], y[3], x[1]))
    print(f"{paired} chunks paired, {cut} of them up to the first question out of line")
    for kind, rows in sorted(pairs.items()):
        a = np.array(rows)
        diff = a[:, 1] - a[:, 0]
        bluff = a[:, :2] - (1 - a[:, :2]) * a[:, 2:3]
        n = len(a)

        def half(x: np.ndarray) -> float:
            return 1.96 * float(x.std(ddof=1)) / np.sqrt(n) if n > 1 else float("nan")

        gain = bluff[:, 1] - bluff[:, 0]
        print(
            f"LBR leads, {kind}: {n} questions; fold A {a[:, 0].mean():.3f}, B {a[:, 1].mean():.3f}, "
            f"B - A {diff.mean():+.3f} ± {half(diff):.3f}; pure bluff A {bluff[:, 0].mean():+.3f}, "
            f"B {bluff[:, 1].mean():+.3f} pots, B - A {gain.mean():+.3f} ± {half(gain):.3f}"
        )


if __name__ == "__main__":
    main()
