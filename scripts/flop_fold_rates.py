"""How often a flop solve folds to a bet with check-down leaves and with the turn network at the leaves
(docs/results.md, "Flop leaves and fold rates"):

    python scripts/flop_fold_rates.py --situations 15 --seed 11 --out RUN.jsonl
    python scripts/flop_fold_rates.py --summary RUN.jsonl [RUN2.jsonl ...]

Random flop situations as ``deepstack generate --street flop`` draws them (R(S,p) ranges, pots up to
8000 chips), solved with both ranges known (no gadget, no warm start: what the leaves alone do) with
DeepStack's flop sizes: check-down leaves at the bot's 200 iterations (alternating updates), and the
shipped turn network at the leaves (check-down where a leaf's chips behind are at most the pot, as
``flop: {leaves: net, checkdown_spr: 1}``) at 45, 200 and 600 iterations (simultaneous updates). Per
situation and solve: the responder's range-weighted fold frequency to each bet of the first player, and
the first player's to each bet after its check. One JSON line per situation; ``--summary`` prints
the mean fold rates and the network's differences to check-down, paired by situation.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from agent.bots.config import HoldemModels
from agent.bots.settings import data_file
from agent.leaves.by_stack import LeavesByStack
from agent.leaves.equity_matrix import CheckdownMatrices
from agent.leaves.holdem import BucketNetLeafValues, CheckdownLeafValues
from agent.nets.buckets import BucketTable
from agent.nets.manifest import load_value_net
from agent.solver.handspace import HandSpace
from agent.solver.resolve import Solution, SolverConfig, solve_ranges
from agent.solver.tree import DEEPSTACK_SIZING
from agent.training.situations import both_all_in, draw_situation
from protocol.gamedef import load_game
from protocol.state import HandState

#: (leaves, iterations): the shipped flop (check-down, 200) and the network at three budgets
SOLVES = (("checkdown", 200), ("net", 45), ("net", 200), ("net", 600))


def _weighted(reach: np.ndarray, strategy_row: np.ndarray) -> float:
    return float((reach * strategy_row).sum() / reach.sum())


def fold_rates(sol: Solution, ranges: np.ndarray) -> dict[str, float]:
    """``{line: fold frequency}``: ``r<to>`` the responder's fold to the first player's bet, ``x-r<to>``
    the first player's fold to the responder's bet after its own check."""
    first = sol.root_player
    root = sol.strategy_at(0)
    out: dict[str, float] = {}
    for a, act in enumerate(sol.root_actions):
        row = sol.child_row(0, act)
        node = sol.lookahead.nodes[row]
        if node.kind.name != "DECISION":
            continue
        if str(act) != "c":
            out[str(act)] = _weighted(ranges[1 - first], sol.strategy_at(row)[0])
            continue
        for bet in node.actions:
            below = sol.child_row(row, bet)
            if str(bet).startswith("r") and sol.lookahead.nodes[below].kind.name == "DECISION":
                out[f"x-{bet}"] = _weighted(ranges[first] * root[a], sol.strategy_at(below)[0])
    return out


def run(situations: int, seed: int, out: Path) -> None:
    torch.set_num_threads(1)
    game = load_game("hunl")
    space = HandSpace(game)
    models = HoldemModels()
    checkdown = CheckdownLeafValues(CheckdownMatrices(data_file(models.preflop_checkdown)))
    net, _ = load_value_net(models.turn_net)
    turn = BucketNetLeafValues(net, game, BucketTable.load(data_file(models.turn_buckets)))
    leaves = {"checkdown": checkdown, "net": LeavesByStack(turn, checkdown, min(game.stack), 1.0)}
    sizing = tuple(DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river"))
    rng = np.random.default_rng(seed)
    done = 0
    with out.open("a") as f:
        while done < situations:
            sit = draw_situation(space, 1, rng)
            if both_all_in(game, sit) or sit.pot > 8000:
                continue
            done += 1
            ranges = sit.ranges * space.valid(sit.board)
            ranges /= ranges.sum(axis=1, keepdims=True)
            state = HandState.at_round_start(game, 1, (sit.pot // 2, sit.pot // 2), sit.board)
            record: dict = {"seed": seed, "situation": done, "pot": sit.pot, "board": list(sit.board), "solves": []}
            for name, iterations in SOLVES:
                config = SolverConfig(iterations=iterations, alternating=name == "checkdown", device="cpu")
                start = time.perf_counter()
                sol = solve_ranges(
                    state, [ranges[0], ranges[1]], sizing, config, space=space, last_round=1, leaf_values=leaves[name]
                )
                seconds = time.perf_counter() - start
                record["solves"].append(
                    {"leaves": name, "iterations": iterations, "seconds": round(seconds, 2), "fold": fold_rates(sol, ranges)}
                )
            f.write(json.dumps(record) + "\n")
            f.flush()
            print(done, sit.pot, {f"{s['leaves']}-{s['iterations']}": s["fold"] for s in record["solves"]}, flush=True)


def _size(line: str, pot: int) -> str:
    to = int(line.split("r")[-1])
    if to == 20000:
        return "all-in"
    fraction = (to - pot / 2) / pot
    return {0.5: "half pot", 1.0: "pot"}.get(round(fraction * 2) / 2, f"{fraction:.2f} pot")


def summary(paths: list[Path]) -> None:
    table: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    records = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    for rec in records:
        for s in rec["solves"]:
            for line, p in s["fold"].items():
                who = "first player folds after its check" if line.startswith("x-") else "responder folds to a lead"
                table[(who, _size(line, rec["pot"]))][f"{s['leaves']}-{s['iterations']}"].append(p)
    print(f"{len(records)} flop situations")
    for (who, size), cells in sorted(table.items()):
        base = np.array(cells["checkdown-200"])
        row = [f"{who}, {size} (n={len(base)}): check-down 200 {base.mean():.3f}"]
        for name, iterations in SOLVES[1:]:
            d = np.array(cells[f"{name}-{iterations}"]) - base
            half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
            row.append(f"{name} {iterations} {base.mean() + d.mean():.3f} ({d.mean():+.3f} ± {half:.3f})")
        print(" | ".join(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--situations", type=int, default=15)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, help="JSON lines, appended")
    parser.add_argument("--summary", type=Path, nargs="+", help="summarise these files instead of solving")
    args = parser.parse_args()
    if args.summary:
        summary(args.summary)
    elif args.out is None:
        parser.error("--out is needed to solve (or --summary FILES)")
    else:
        run(args.situations, args.seed, args.out)


if __name__ == "__main__":
    main()
