"""``deepstack match``: a local match between two bots through our dealer on loopback."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.bots.config import ConfigError, load_config
from agent.bots.registry import bot_names, check_bot
from agent.cli.common import (
    GAME_HELP,
    HelpFormatter,
    Terminated,
    cannot_write,
    example,
    load_game_or_exit,
    path_arg,
    seed,
)
from agent.cli.play import plan_with_limits
from agent.evaluation.clock import clock_lines, clock_report
from agent.evaluation.match import check_log_dir, check_seat_program, new_log_dir, parse_seat, run_match
from agent.nets.manifest import ModelError
from protocol.dealer import MAX_HANDS, MAX_TIME_MS
from protocol.logs import configure_logging

SEATS_HELP = (
    "Seats: seat 1 and seat 2 are the dealer's seats, as in its SCORE line and logs and in 'deepstack eval plot' "
    "(positions alternate every hand). BOT1 sits in seat 1; with --duplicate a second match deals the same cards "
    "with the seats swapped."
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack match`` (two bots through our dealer on loopback, BOT1's win rate in mbb/g)."""
    p = sub.add_parser(
        "match",
        help="run a local match between two bots through our dealer",
        description="Start the dealer and both seats on loopback (real TCP) and report the result: each match's "
        "SCORE, BOT1's win rate per seating (and per deal with --duplicate) in mbb/g with its 95% confidence "
        "interval, think times and corrected actions; a progress line goes to stderr every 10% of the hands. "
        "A seat is a built-in bot (" + ", ".join(bot_names()) + ") or 'cmd:' + a command line "
        "with {host} and {port} placeholders (run without a shell). " + SEATS_HELP + " Every match writes its "
        "logs to a folder of its own: a folder that already holds a match's logs is refused.",
        epilog="logs: the dealer logs, the built-in bots' decisions (bots.jsonl) and each 'cmd:'\n"
        "seat's output go to --log-dir (default: a new folder runs/match-GAME-YYYYmmddTHHMMSSZ, UTC).\n\n"
        + example("deepstack match leduc 300 deepstack random --duplicate --seed 1"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("hands", type=int, help="number of hands (per seating with --duplicate)")
    p.add_argument("bot1", metavar="BOT1", help="the bot in seat 1 (the one whose win rate is reported)")
    p.add_argument("bot2", metavar="BOT2", help="the bot in seat 2")
    p.add_argument("--seed", type=seed, default=0, help="seed of the deal")
    p.add_argument("--duplicate", action="store_true", help="play every deal twice with the seats swapped")
    p.add_argument(
        "--log-dir",
        type=path_arg,
        default=None,
        help="a folder for the logs, new or holding no match's logs; one holding another match's logs is refused "
        "(default: a new folder runs/match-GAME-TIME, TIME in UTC)",
    )
    p.add_argument(
        "--t_response",
        type=int,
        default=600_000,
        help="dealer limit: ms per response (built-in bots plan with it where the config's bot.time is looser; default 600000)",
    )
    p.add_argument(
        "--t_hand",
        type=int,
        default=600_000,
        help="dealer limit: ms per player per hand (built-in bots plan with it where the config's is looser; default 600000)",
    )
    p.add_argument(
        "--t_per_hand",
        type=int,
        default=7_000,
        help="dealer limit: average ms per hand (built-in bots plan with it where the config's bot.time is looser; default 7000)",
    )
    p.add_argument("--deck", choices=["high", "low"], default="high", help="reduced-deck convention of the dealer")
    p.add_argument(
        "--config",
        type=path_arg,
        default=None,
        help="config of built-in bots (default: $DEEPSTACK_CONFIG, else the shipped config.yaml)",
    )
    p.add_argument(
        "--start-timeout",
        type=float,
        default=600.0,
        help="seconds the dealer waits for the seats to connect (default 600: a 'cmd:' seat's program may take "
        "long to start; 'deepstack play' connects within seconds; a seat program that exits before "
        "connecting ends the wait at once)",
    )
    p.add_argument(
        "--progress",
        type=int,
        default=None,
        metavar="N",
        help="a progress line on stderr every N hands: hands done, BOT1's win rate so far with its 95%% interval, "
        "mean think times (default: every 10%% of the hands; 0: none)",
    )
    p.set_defaults(func=_run_match)


def _run_match(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"deepstack match: error: {exc}", file=sys.stderr)
        return 2
    game = load_game_or_exit(args.game, "match")
    if game.num_players != 2:
        print(
            f"deepstack match: error: {args.game} has {game.num_players} players; match plays two-player games "
            "(deepstack dealer plays any number, one program per seat)",
            file=sys.stderr,
        )
        return 2
    if not 0 < args.hands <= MAX_HANDS:
        print(f"deepstack match: error: HANDS must be positive and at most {MAX_HANDS}", file=sys.stderr)
        return 2
    for flag in ("t_response", "t_hand", "t_per_hand"):
        if not 0 < getattr(args, flag) <= MAX_TIME_MS:
            print(
                f"deepstack match: error: --{flag} {getattr(args, flag)} is not a positive number of ms up to {MAX_TIME_MS}",
                file=sys.stderr,
            )
            return 2
    if not 0 < args.start_timeout <= MAX_TIME_MS / 1000:
        print(
            f"deepstack match: error: --start-timeout {args.start_timeout} is not a positive number of seconds up to "
            f"{MAX_TIME_MS // 1000}",
            file=sys.stderr,
        )
        return 2
    # built-in seats budget their thinking from the limits this dealer enforces ('cmd:' seats are
    # told them by their own options, e.g. deepstack play --t_per_hand), on loopback: no round trip
    # to pay, whatever latency a config for a remote dealer gives
    config = plan_with_limits(config, args.t_response, args.t_hand, args.t_per_hand, latency=0.0)
    if args.progress is not None and args.progress < 0:
        print("deepstack match: error: --progress must be 0 (none) or a number of hands", file=sys.stderr)
        return 2
    try:
        for seat in (args.bot1, args.bot2):
            spec = parse_seat(seat)  # before any folder is made: a wrong model path named by its key
            if spec.command:
                check_seat_program(spec)
            else:
                check_bot(seat, game, config)
        if args.log_dir is None:
            log_dir = new_log_dir(game)
        else:
            log_dir = Path(args.log_dir)
            check_log_dir(log_dir)
    except (ValueError, ModelError) as exc:
        print(f"deepstack match: error: {exc}", file=sys.stderr)
        return 2
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a place the machine refuses (read-only, a file on the way): said as the other commands say it
        print(f"deepstack match: error: {cannot_write(log_dir, exc)}", file=sys.stderr)
        return 1
    configure_logging("warning", log_dir / "bots.jsonl")
    try:
        report = run_match(
            game,
            args.game,
            args.hands,
            [args.bot1, args.bot2],
            seed=args.seed,
            duplicate=args.duplicate,
            log_dir=log_dir,
            progress=None if args.progress == 0 else (lambda line: print(line, file=sys.stderr, flush=True)),
            progress_every=args.progress or 0,
            t_response_ms=args.t_response,
            t_hand_ms=args.t_hand,
            t_per_hand_ms=args.t_per_hand,
            deck=args.deck,
            bot_config=config,
            connect_timeout_s=args.start_timeout,
        )
    except (ValueError, ModelError) as exc:
        print(f"deepstack match: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the hands played so far are in the logs; say where
        how = "terminated" if Terminated.received else "interrupted"
        print(f"deepstack match: {how}: the hands played so far are in {log_dir.resolve()}", file=sys.stderr)
        return 130
    for line in report.summary_lines():
        print(line)
    clock = clock_report([log_dir / "bots.jsonl"], game.num_rounds) if (log_dir / "bots.jsonl").exists() else {}
    if clock:  # built-in DeepStack seats, both pooled
        print("deepstack decisions by street (the clock):")
        for line in clock_lines(clock):
            print(f"  {line}")
    print(f"logs: {log_dir.resolve()}")
    return 0 if report.ok else 1
