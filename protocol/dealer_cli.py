"""``deepstack dealer``: the ACPC dealer's command line (arguments, options, error lines and exit
status) over :class:`protocol.dealer.Dealer`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from protocol.dealer import (
    DEFAULT_T_HAND_MS,
    DEFAULT_T_PER_HAND_MS,
    DEFAULT_T_RESPONSE_MS,
    MAX_HANDS,
    MAX_TIME_MS,
    Dealer,
    DealerAbort,
    DealerConfig,
)
from protocol.gamedef import GameDefError, load_game
from protocol.paths import os_reason


def build_parser() -> argparse.ArgumentParser:
    """The ``deepstack dealer`` parser: the ACPC dealer's arguments and options, plus our own (log folder, deck, ...)."""
    parser = argparse.ArgumentParser(
        prog="deepstack dealer",
        description="ACPC-compatible dealer: prints the seat ports on the first stdout line,\n"
        "plays HANDS hands and writes NAME.log (STATE lines and SCORE). Seat N is the\n"
        "N-th player name and the N-th port; the positions alternate every hand (unless -f).",
        epilog="example (then connect a bot to each port, e.g. 'deepstack play --port 18791'):\n"
        "  deepstack dealer m hunl 1000 0 deepstack opponent -p 18791,18792",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", help="match name (the log is NAME.log)")
    parser.add_argument("game", help="short name (hunl, hul, leduc, leduc-limit) or .game file")
    parser.add_argument("hands", type=int, help="number of hands")
    parser.add_argument("seed", type=int, help="random seed of the deal")
    parser.add_argument("players", nargs="+", help="one name per seat")
    parser.add_argument(
        "-p",
        dest="ports",
        help="comma-separated ports to listen on in seat order, each 1..65535 or 0 for any free port; seats after the "
        "list get free ports, as with the ACPC dealer (default: any free ports)",
    )
    parser.add_argument(
        "--t_response", type=int, default=DEFAULT_T_RESPONSE_MS, help=f"max ms per response (default {DEFAULT_T_RESPONSE_MS})"
    )
    parser.add_argument(
        "--t_hand", type=int, default=DEFAULT_T_HAND_MS, help=f"max ms of one player per hand (default {DEFAULT_T_HAND_MS})"
    )
    parser.add_argument(
        "--t_per_hand",
        type=int,
        default=DEFAULT_T_PER_HAND_MS,
        help=f"max average ms per hand over the match (default {DEFAULT_T_PER_HAND_MS})",
    )
    parser.add_argument(
        "--start_timeout",
        type=int,
        default=-1,
        help="max ms to wait for the players to connect, counted from the start (<0: none, as the default -1; 0: "
        "only clients already waiting); when positive, also the wait for each version line",
    )
    parser.add_argument("-q", dest="quiet", action="store_true", help="only errors, warnings and the score on stderr")
    parser.add_argument("-f", dest="fixed", action="store_true", help="fixed seats (no rotation of positions)")
    parser.add_argument("-l", dest="no_log", action="store_true", help="no log file")
    parser.add_argument("-L", dest="no_log", action="store_false", help="write the log file (the default)")
    parser.add_argument("-a", dest="append", action="store_true", help="append to the log file")
    parser.add_argument("-t", dest="transactions", action="store_false", help="no transaction file (the default)")
    parser.add_argument(
        "-T",
        dest="transactions",
        action="store_true",
        help="write every action to NAME.tlog in --log-dir; with -a, first replay the actions already there (resumes "
        "an interrupted match: same arguments plus -a; default: off)",
    )
    parser.set_defaults(transactions=False)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--deck",
        choices=["high", "low"],
        default="high",
        help="reduced-deck convention: top ranks/last suits (high, default) or lowest ranks/first suits (low)",
    )
    parser.add_argument("--log-dir", default=".", help="folder of NAME.log (default: current folder)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``deepstack dealer``: print the seat ports on the first stdout line, play the match and write its
    logs; 0 when it completes, 1 on any error or abort (as the ACPC dealer)."""
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)
    try:
        game = load_game(args.game)
    except GameDefError as exc:
        print(f"ERROR: could not read game {exc}", file=sys.stderr)  # the error names the file first
        return 1
    if len(args.players) != game.num_players:
        print(f"ERROR: {game.num_players} player names needed, got {len(args.players)}", file=sys.stderr)
        return 1
    ports: tuple[int, ...] = ()
    if args.ports:
        rule = f"give up to {game.num_players} comma-separated ports, each 1..65535 or 0 for any free port"
        try:
            ports = tuple(int(p) for p in args.ports.split(","))
        except ValueError:
            print(f"ERROR: bad port string {args.ports}: {rule}", file=sys.stderr)
            return 1
        if len(ports) > game.num_players or not all(0 <= p < 65536 for p in ports):
            print(f"ERROR: bad port string {args.ports}: {rule}", file=sys.stderr)
            return 1
        ports += (0,) * (game.num_players - len(ports))  # the seats after the list: free ports
    if not 0 < args.hands <= MAX_HANDS:
        print(f"ERROR: invalid number of hands {args.hands} (1..{MAX_HANDS})", file=sys.stderr)
        return 1
    for flag in ("t_response", "t_hand", "t_per_hand"):
        if getattr(args, flag) < 0:
            print(f"ERROR: --{flag} {getattr(args, flag)} is negative", file=sys.stderr)
            return 1
    for flag in ("t_response", "t_hand", "t_per_hand", "start_timeout"):
        if getattr(args, flag) > MAX_TIME_MS:
            print(f"ERROR: --{flag} {getattr(args, flag)} is more than {MAX_TIME_MS} ms", file=sys.stderr)
            return 1
    if not args.no_log or args.transactions:  # before the ports are printed: a harness then starts its clients
        folder = Path(args.log_dir)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if not os.access(folder, os.W_OK):
                raise PermissionError("not writable")
        except OSError as exc:
            print(f"ERROR: cannot write the logs in {folder}: {os_reason(exc)}", file=sys.stderr)
            return 1
        # NAME may hold a folder, as the ACPC dealer's (NAME.log is written as given): one that exists
        if not args.name or args.name.endswith(("/", ".")) or not (folder / args.name).parent.is_dir():
            print(
                f"ERROR: bad match name {args.name!r}: it names the files NAME.log and NAME.tlog in --log-dir, "
                "in a folder that exists",
                file=sys.stderr,
            )
            return 1
        for suffix, wanted in ((".log", not args.no_log), (".tlog", args.transactions)):
            if wanted and (folder / f"{args.name}{suffix}").is_dir():
                print(f"ERROR: cannot write {folder / (args.name + suffix)}: it is a folder", file=sys.stderr)
                return 1
    config = DealerConfig(
        match_name=args.name,
        game=game,
        game_label=args.game,
        hands=args.hands,
        seed=args.seed,
        names=tuple(args.players),
        ports=ports,
        host=args.host,
        t_response_ms=args.t_response,
        t_hand_ms=args.t_hand,
        t_per_hand_ms=args.t_per_hand,
        start_timeout_ms=args.start_timeout,
        log_dir=None if args.no_log else Path(args.log_dir),
        append=args.append,
        quiet=args.quiet,
        fixed_seats=args.fixed,
        deck=args.deck,
        transactions=Path(args.log_dir) / f"{args.name}.tlog" if args.transactions else None,
    )
    try:
        dealer = Dealer(config)
    except ValueError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    try:
        ports = dealer.open()
    except DealerAbort as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    print(" ".join(str(p) for p in ports), flush=True)
    result = dealer.run()
    return 0 if result.ok else 1
