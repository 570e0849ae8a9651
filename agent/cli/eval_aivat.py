"""``deepstack eval aivat`` and ``eval aivat-log``: AIVAT estimates of a bot's winnings, simulated exactly
(Leduc) or from a match's logs."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tqdm import tqdm

from agent.bots.config import ConfigError
from agent.cli.common import MAX_HANDS, dumps
from agent.evaluation.aivat import ProfileValue, run_aivat
from agent.evaluation.aivat_log import log_aivat
from agent.evaluation.policies import OutsideSolvedTree, ProviderFactory
from agent.nets.manifest import ModelError
from protocol.dealer_log import dealer_logs, one_game
from protocol.gamedef import GameDefError, load_game
from protocol.paths import not_there

#: one example per tool (each --help ends with it)


def run_aivat_cli(args: argparse.Namespace) -> int:
    """Run ``deepstack eval aivat``: simulated hands of the bot against an opponent (Leduc), its winnings in mbb/g
    with AIVAT's variance reduction against exact equilibrium values."""

    try:
        game = load_game(args.game)
        if game.deck_size > 12:
            raise ValueError(f"{args.game}: AIVAT's exact equilibrium values are available for Leduc games only")
        if not 2 <= args.hands <= MAX_HANDS:
            raise ValueError(f"--hands must be from 2 to {MAX_HANDS}, not {args.hands}")
        if args.hands % 2:  # the hand left over had no twin: in the raw and AIVAT rows, not in the duplicate ones
            raise ValueError(f"--hands must be even (pairs of hands with the same cards and the seats swapped), not {args.hands}")
        ours = ProviderFactory(args.game, args.bot, args.config, args.iterations)()
        opponent = ProviderFactory(args.game, args.opponent, args.config, args.iterations)()
        reference = ProviderFactory(args.game, "equilibrium", iterations=1000)()
    except (GameDefError, ConfigError, ModelError, ValueError) as exc:
        print(f"deepstack eval aivat: error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    bar = tqdm(total=args.hands, desc=f"{args.bot} vs {args.opponent}", unit="hand", disable=args.json)
    try:
        result = run_aivat(
            game,
            ours,
            opponent,
            ProfileValue(ours.space, [reference, reference]),
            args.hands,
            seed=args.seed,
            progress=bar.update,
        )
    except OutsideSolvedTree as exc:  # the equilibrium bot facing a size it was not solved for
        bar.close()
        print(f"deepstack eval aivat: error: {exc}", file=sys.stderr)
        return 2
    bar.close()
    scale = 1000.0 / game.big_blind
    out = {
        "game": args.game,
        "bot": args.bot,
        "opponent": args.opponent,
        "hands": args.hands,
        "unit": "mbb/g",
        **_estimates_json(result, scale),
        "seconds": round(time.perf_counter() - start, 1),
    }
    if args.json:
        print(dumps(out))
    else:
        _print_estimates(result, scale)
    return 0


def _estimates_json(result: dict, scale: float) -> dict:
    """Estimates by name (spaces made underscores) in mbb/g, for --json."""
    return {name.replace(" ", "_"): est.to_dict(scale) for name, est in result.items()}


def _print_estimates(result: dict, scale: float) -> None:
    for name, est in result.items():
        print(
            f"{name:>15}: {est.mean * scale:+.1f} ± {est.ci95 * scale:.1f} mbb/g (95% CI; std {est.std * scale:.1f}, n={est.n})"
        )
    if any(name.endswith("duplicate") for name in result):
        print(
            "(the raw and aivat intervals count each hand as independent, though the two hands of a pair share "
            "their cards; the duplicate rows, one sample per pair, are the ones that account for it)"
        )


def run_aivat_log_cli(args: argparse.Namespace) -> int:
    """Run ``deepstack eval aivat-log``: AIVAT estimates (mbb/g) of one seat's winnings from a match folder's dealer
    logs, corrected with the bot's logged strategies (bots.jsonl) where it has them."""
    source = Path(args.source)
    try:
        if args.decisions and not Path(args.decisions).is_file():  # given on purpose: not silently left out
            raise ValueError(f"--decisions {not_there(Path(args.decisions), 'file')}")
        if not source.is_dir():
            raise ValueError(f"{source}: not a folder (give a match --log-dir)")
        found = dealer_logs(source)
        if not found:
            raise ValueError(f"{source}: no dealer logs in it")
        game_name = one_game(source, found)  # a folder mixing games is refused, naming them
        logs = [path for path, _ in found]
        game = load_game(game_name)
        decisions = Path(args.decisions) if args.decisions else source / "bots.jsonl"
        start = time.perf_counter()
        result, tally = log_aivat(game, logs, args.player, decisions, args.action_values, args.decisions is not None)
    except (GameDefError, ValueError, OSError) as exc:
        print(f"deepstack eval aivat-log: error: {exc}", file=sys.stderr)
        return 2
    scale = 1000.0 / game.big_blind
    out = {
        "game": game_name,
        "player": args.player,
        "logs": [p.name for p in logs],
        "unit": "mbb/g",
        **_estimates_json(result, scale),
        "chance_corrections": tally.chance_events,
        "action_corrections": tally.action_events,
        "action_corrections_bot_values": tally.bot_value_events,
        "decisions_not_corrected": tally.unmatched_decisions,
        "seconds": round(time.perf_counter() - start, 1),
    }
    if args.json:
        print(dumps(out))
    else:
        _print_estimates(result, scale)
        print(
            f"corrections: {tally.chance_events} board deals, {tally.action_events} of our decisions "
            f"({tally.bot_value_events} with the bot's own values; {tally.unmatched_decisions} decisions without "
            "a logged strategy: not corrected)"
        )
    return 0
