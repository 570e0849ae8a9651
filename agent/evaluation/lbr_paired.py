"""Two LBR runs on the same deals, compared hand for hand.

Hand i's cards come from the run's seed and i alone (:func:`agent.evaluation.lbr.run_lbr`), so two
folders written with one game, setting and seed, against two bots or two ``--config`` files, hold
the same deals: the difference of LBR's winnings hand for hand cancels most of the luck of the
cards, and its interval is much narrower than either run's. This is how a setting of the bot
(leaves, warm start, iterations) is chosen by exploitability.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from agent.evaluation.lbr import DEAL_SCHEME, fold_summary, stored_hands
from agent.evaluation.plots import winnings_png
from agent.evaluation.stats import estimate
from protocol.gamedef import load_game
from protocol.paths import not_there

#: what must agree for two folders to hold the same deals and the same LBR
PAIRED_KEYS = ("game", "setting", "seed", "deals")

#: the estimates in the order they are printed, with their labels
LABELS = {"realised": "realised", "range_expected": "range-expected", "aivat": "AIVAT"}


def read_run(folder: Path) -> dict:
    """A folder's ``run.json`` (what wrote its chunks), checked to pair by hand."""
    path = folder / "run.json"
    if not folder.is_dir():
        raise ValueError(not_there(folder))
    if not path.is_file():
        raise ValueError(f"{folder}: no run.json (not a folder written by 'deepstack eval lbr --out')")
    try:
        run = json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path}: unreadable ({exc})") from exc
    if not isinstance(run, dict):
        raise ValueError(f"{path}: not a JSON object")
    if run.get("deals") != DEAL_SCHEME:
        raise ValueError(
            f"{path}: records deals {run.get('deals')!r}, not {DEAL_SCHEME!r}: its hands were not dealt from the seed and "
            "the hand's number alone (written before 1eb3959), so they do not pair with another run's"
        )
    return run


def compare_lbr_runs(a_dir: Path, b_dir: Path, png: Path | None = None) -> dict:
    """The paired comparison of two LBR folders over the hands both hold (from hand 0).

    Returns a JSON-ready dict: both runs' ``run.json``, ``hands``, per estimate ``a``, ``b`` and
    ``diff`` (``b - a`` hand for hand; mbb/g, mean and 95% half-width) and each run's fold summary
    over the chunks that lie within the common hands. ``png``: also draw both runs' running win
    rates and their difference (AIVAT where both kept it, else realised), each with its 95% band."""
    runs = [read_run(a_dir), read_run(b_dir)]
    differ = [
        f"{k} {runs[0].get(k)!r} in {a_dir}, {runs[1].get(k)!r} in {b_dir}"
        for k in PAIRED_KEYS
        if runs[0].get(k) != runs[1].get(k)
    ]
    if differ:
        raise ValueError(f"the two runs did not play the same deals: {'; '.join(differ)}")
    game = load_game(runs[0]["game"])
    held = [stored_hands(a_dir), stored_hands(b_dir)]
    hands = min(h.hands for h in held)
    if hands < 2:
        raise ValueError(f"the two runs share {hands} hands from hand 0 (at least 2 are needed)")
    # per estimate both runs kept (an older folder may lack one): A's and B's winnings, hand for hand
    pairs = {
        name: [np.asarray(h.per_hand[name][:hands]) for h in held] for name in LABELS if all(name in h.per_hand for h in held)
    }
    if png is not None:
        name = "aivat" if "aivat" in pairs else "realised"
        a, b = pairs[name]
        winnings_png(
            png,
            {f"A ({LABELS[name]})": a, f"B ({LABELS[name]})": b, "B - A, hand for hand": b - a},
            float(game.big_blind),
            title=f"Paired LBR {runs[0]['setting']}, seed {runs[0]['seed']}: LBR's winnings "
            f"(A: {Path(a_dir).name}, B: {Path(b_dir).name})",
        )
    return {
        "a": {"folder": str(a_dir), "run": runs[0], "hands_held": held[0].hands},
        "b": {"folder": str(b_dir), "run": runs[1], "hands_held": held[1].hands},
        "hands": hands,
        "estimates": {
            name: {
                "a": estimate(a, game.big_blind).to_dict(),
                "b": estimate(b, game.big_blind).to_dict(),
                "diff": estimate(b - a, game.big_blind).to_dict(),
            }
            for name, (a, b) in pairs.items()
        },
        "bot_fold": {
            "a": fold_summary(held[0].queries(hands), game.num_rounds),
            "b": fold_summary(held[1].queries(hands), game.num_rounds),
        },
    }


def _what(run: dict) -> str:
    """The bot and its settings that a run played against, in words."""
    parts = [run.get("bot") or "?", f"config {run['config']}" if run.get("config") else "the shipped config"]
    if run.get("iterations"):
        parts.append(f"{run['iterations']} iterations")
    return ", ".join(parts)


def _est(d: dict) -> str:
    return f"{d['mean']:+.0f} ± {d['ci95']:.0f}"


def format_comparison(result: dict) -> str:
    """The comparison as text: one line per estimate, then the fold rates that differ by side."""
    run = result["a"]["run"]
    lines = [
        f"Paired LBR ({run['setting']}, {run['game']}, seed {run['seed']}): {result['hands']} hands in both "
        "(LBR's winnings, mbb/g, 95% CI; positive: LBR wins)",
        f"  A: {result['a']['folder']} ({_what(result['a']['run'])}; {result['a']['hands_held']} hands held)",
        f"  B: {result['b']['folder']} ({_what(result['b']['run'])}; {result['b']['hands_held']} hands held)",
    ]
    width = max(len(label) for label in LABELS.values())
    for name, row in result["estimates"].items():
        lines.append(
            f"  {LABELS[name]:<{width}}  A {_est(row['a']):>13}  B {_est(row['b']):>13}  B - A, hand for hand {_est(row['diff'])}"
        )
    lines.append("  (B - A above 0: LBR wins more against B; an interval that includes 0 shows no difference)")
    folds = result["bot_fold"]
    for street, kinds in folds["a"].items():
        for kind, row_a in kinds.items():
            row_b = folds["b"].get(street, {}).get(kind)
            if row_b is None:
                continue
            for label, words in (("after_bot_", "after the bot's check or bet"), ("lbr_led_", "LBR leading the round")):
                if f"{label}queries" in row_a and f"{label}queries" in row_b:
                    lines.append(
                        f"  {street} {kind} bets folded, {words}: A {row_a[f'{label}mean_fold']:.1%} "
                        f"({row_a[f'{label}queries']}; a bluff gains above {row_a[f'{label}bluff_breakeven']:.1%}), "
                        f"B {row_b[f'{label}mean_fold']:.1%} ({row_b[f'{label}queries']}; above "
                        f"{row_b[f'{label}bluff_breakeven']:.1%})"
                    )
    return "\n".join(lines)
