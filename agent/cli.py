"""``deepstack``: the one command-line entry point; each subcommand has ``--help``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from agent.bots import bot_names, make_bot
from agent.config import ConfigError, load_config
from protocol.gamedef import SHORT_NAMES, Game, GameDefError, load_game
from protocol.logs import configure_logging

GAME_HELP = "game: " + ", ".join(SHORT_NAMES) + " or a path to a .game file"


def _load_game_or_exit(text: str) -> Game:
    try:
        return load_game(text)
    except GameDefError as exc:
        raise SystemExit(f"deepstack: error: {exc}") from None


# ---------------------------------------------------------------------- play
def _add_play(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play a match against an ACPC dealer", description="Connect to an ACPC dealer and play until it closes the connection.")
    p.add_argument("--game", required=True, help=GAME_HELP)
    p.add_argument("--bot", required=True, choices=bot_names(), help="which bot plays")
    p.add_argument("--host", default="127.0.0.1", help="dealer host (default 127.0.0.1)")
    p.add_argument("--port", type=int, required=True, help="the seat's port printed by the dealer")
    p.add_argument("--seed", type=int, default=None, help="seed of the bot's random choices (default: config)")
    p.add_argument("--config", default=None, help="config file (default: the shipped config.yaml)")
    p.add_argument("--log-json", default=None, help="also write JSON-lines logs to this file")
    p.set_defaults(func=_run_play)


def _run_play(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"deepstack play: error: {exc}", file=sys.stderr)
        return 2
    configure_logging(config.logging.level, args.log_json or config.logging.json_path)
    game = _load_game_or_exit(args.game)
    seed = args.seed if args.seed is not None else config.seed
    bot = make_bot(args.bot, seed=seed)
    from protocol.client import play

    try:
        summary = play(game, bot, args.host, args.port, connect_timeout=config.client.connect_timeout_s)
    except ConnectionError as exc:
        print(f"deepstack play: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"deepstack play: error: connection to {args.host}:{args.port} failed: {exc}", file=sys.stderr)
        return 1
    print(summary.line(), flush=True)
    return 0


# ---------------------------------------------------------------------- match
def _add_match(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "match",
        help="run a local match between two bots through our dealer",
        description="Start the dealer and both seats on loopback (real TCP) and report the result. "
        "A seat is a built-in bot (" + ", ".join(bot_names()) + ") or 'cmd:' + a command line "
        "with {host} and {port} placeholders (run without a shell).",
    )
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("hands", type=int, help="number of hands (per seating with --duplicate)")
    p.add_argument("bot1", help="seat 1")
    p.add_argument("bot2", help="seat 2")
    p.add_argument("--seed", type=int, default=0, help="seed of the deal (default 0)")
    p.add_argument("--duplicate", action="store_true", help="play every deal twice with the seats swapped")
    p.add_argument("--log-dir", default="runs/match", help="where the dealer logs go (default runs/match)")
    p.add_argument("--t_response", type=int, default=600_000, help="dealer limit: ms per response")
    p.add_argument("--t_hand", type=int, default=600_000, help="dealer limit: ms per player per hand")
    p.add_argument("--t_per_hand", type=int, default=7_000, help="dealer limit: average ms per hand")
    p.add_argument("--deck", choices=["high", "low"], default="high", help="reduced-deck convention of the dealer")
    p.set_defaults(func=_run_match)


def _run_match(args: argparse.Namespace) -> int:
    from agent.match import run_match

    configure_logging("warning")
    game = _load_game_or_exit(args.game)
    if args.hands <= 0:
        print("deepstack match: error: HANDS must be positive", file=sys.stderr)
        return 2
    try:
        report = run_match(
            game,
            args.game,
            args.hands,
            [args.bot1, args.bot2],
            seed=args.seed,
            duplicate=args.duplicate,
            log_dir=Path(args.log_dir),
            t_response_ms=args.t_response,
            t_hand_ms=args.t_hand,
            t_per_hand_ms=args.t_per_hand,
            deck=args.deck,
        )
    except ValueError as exc:
        print(f"deepstack match: error: {exc}", file=sys.stderr)
        return 2
    for line in report.summary_lines():
        print(line)
    print(f"logs: {Path(args.log_dir).resolve()}")
    return 0 if report.ok else 1


# ---------------------------------------------------------------------- dealer
def _add_dealer(sub: argparse._SubParsersAction) -> None:
    sub.add_parser(
        "dealer",
        help="an ACPC-compatible dealer (same arguments as the ACPC dealer)",
        add_help=False,
    )


def _run_dealer(argv: Sequence[str]) -> int:
    from protocol.dealer import main as dealer_main

    return dealer_main(argv)


# ---------------------------------------------------------------------- solve / bench
def _add_solve(sub: argparse._SubParsersAction) -> None:
    from agent.solve_cli import add_parser

    add_parser(sub)


BENCHES = {
    "solver": "agent.solve_cli:bench_main",
    "native": "native.bench:main",
}


def _add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="benchmarks, printed as JSON lines",
        description="Run a benchmark suite: " + ", ".join(BENCHES) + ". Each prints one JSON object per "
        "measurement (bench, value, unit, impl, device, threads, ...). 'deepstack bench SUITE --help' "
        "lists the suite's options.",
    )
    p.add_argument("suite", choices=sorted(BENCHES), help="which benchmarks")
    p.add_argument("options", nargs=argparse.REMAINDER, help="options of the suite")
    p.set_defaults(func=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    import importlib

    module, _, func = BENCHES[args.suite].partition(":")
    return int(getattr(importlib.import_module(module), func)(list(args.options)))


# ---------------------------------------------------------------------- main
_ADDERS: list[Callable[[argparse._SubParsersAction], None]] = [_add_play, _add_match, _add_dealer, _add_solve, _add_bench]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepstack",
        description="DeepStack for ACPC poker: play, run matches, solve, train and evaluate.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in _ADDERS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "dealer":
        return _run_dealer(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
