"""``deepstack play``: the bot against an ACPC dealer over TCP, until the dealer closes the connection."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

from agent.bots.config import Config, ConfigError, load_config
from agent.bots.registry import bot_names, check_bot, make_bot
from agent.cli.common import (
    GAME_HELP,
    HelpFormatter,
    host,
    load_game_or_exit,
    non_negative_float,
    os_reason,
    path_arg,
    port,
    positive_int,
    seed,
)
from agent.nets.manifest import ModelError
from protocol.client import open_session, play_session
from protocol.logs import configure_logging, get_logger, process_seconds

log = get_logger("play")


PLAY_EPILOG = """exit codes:
  0  the match ended: the dealer closed the connection after a finished hand
  1  the dealer could not be reached (nothing listening within client.connect_timeout_s)
  2  bad arguments, config, game file, model file or log file; or --game is not the dealer's game (a
     state of another shipped game arrived: the error names it)
  3  the connection was lost in the middle of a hand (the dealer died or closed it), or the
     dealer closed it before sending a state
  4  the dealer sent nothing for client.read_timeout_s seconds (off unless set)
  130, 143  interrupted: Ctrl-C, or SIGTERM (docker stop)
In 3, 4, 130 and 143 the summary line is printed, the error names the last hand and its betting
(if any), and the logs are kept as written up to then.

a dealer to play against: deepstack dealer m hunl 1000 0 deepstack opponent -p 18791,18792

example (seat 1 of that dealer):
  deepstack play --host 127.0.0.1 --port 18791 --game hunl --log-json decisions.jsonl"""


#: exit status of ``deepstack play`` by how the match ended
PLAY_EXIT = {"complete": 0, "lost": 3, "silent": 4, "wrong_game": 2, "interrupted": 130}


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack play`` (one bot in a dealer's seat until the dealer closes the connection)."""
    p = sub.add_parser(
        "play",
        help="play a match against an ACPC dealer",
        description="Connect to an ACPC dealer and play until it closes the connection.",
        epilog=PLAY_EPILOG,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--game", default="hunl", help=GAME_HELP)
    p.add_argument("--bot", default="deepstack", choices=bot_names(), help="which bot plays")
    p.add_argument("--host", type=host, default="127.0.0.1", help="dealer host (default 127.0.0.1)")
    p.add_argument("--port", type=port, required=True, help="the seat's port printed by the dealer (1..65535)")
    p.add_argument(
        "--seed", type=seed, default=None, help="seed of the bot's random choices, 0..4294967295 (default: the config's seed)"
    )
    p.add_argument(
        "--config", type=path_arg, default=None, help="config file (default: $DEEPSTACK_CONFIG, else the shipped config.yaml)"
    )
    p.add_argument(
        "--device", default=None, choices=["auto", "cpu", "cuda"], help="where the re-solver runs (default: the config's device)"
    )
    p.add_argument(
        "--log-json",
        type=path_arg,
        default=None,
        help="also write JSON-lines logs (one line per decision) to this file (default: none)",
    )
    for flag, what in (
        ("--t_response", "ms per response"),
        ("--t_hand", "ms per player per hand"),
        ("--t_per_hand", "average ms per hand"),
    ):
        p.add_argument(
            flag,
            type=positive_int,
            default=None,
            help=f"the dealer's limit, {what}, as its option of the same name: the bot plans with it where the "
            "config's bot.time is looser (default: the config's)",
        )
    p.add_argument(
        "--latency",
        type=non_negative_float,
        default=None,
        metavar="MS",
        help="the network's round trip to the dealer in ms (a remote dealer: its ping time; the log's "
        "handshake_ms at connection is about one): charged per reply, on the dealer's clock "
        "but not the bot's (default: the config's bot.time.latency_ms, 0)",
    )
    p.set_defaults(func=_run_play)


def plan_with_limits(
    config: Config, t_response: int | None, t_hand: int | None, t_per_hand: int | None, latency: float | None = None
) -> Config:
    """``config`` whose bots plan their thinking with the dealer's limits, or the config's where
    those are tighter (a bot may plan with less time than it is given, never with more), and with
    ``latency`` ms of round trip per reply if given. ConfigError: a latency the limits leave no room for."""
    t = config.bot.time
    limits = replace(
        t,
        t_response_ms=min(t.t_response_ms, t_response or t.t_response_ms),
        t_hand_ms=min(t.t_hand_ms, t_hand or t.t_hand_ms),
        t_per_hand_ms=min(t.t_per_hand_ms, t_per_hand or t.t_per_hand_ms),
        latency_ms=t.latency_ms if latency is None else latency,
    )
    return replace(config, bot=replace(config.bot, time=limits))


def _run_play(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"deepstack play: error: {exc}", file=sys.stderr)
        return 2
    if args.device is not None:
        config = replace(config, device=args.device)
    try:
        config = plan_with_limits(config, args.t_response, args.t_hand, args.t_per_hand, args.latency)
    except ConfigError as exc:
        print(f"deepstack play: error: bot.time.{exc} (the config, or --latency and the dealer limits given)", file=sys.stderr)
        return 2
    log_json = args.log_json or config.logging.json_path
    try:
        configure_logging(config.logging.level, log_json)
    except OSError as exc:  # a bad path given, not a dealer missing (exit 1): named by who gave it
        given = "--log-json" if args.log_json else f"{config.source}: logging.json_path"
        print(f"deepstack play: error: {given}: {log_json}: cannot open the log file ({os_reason(exc)})", file=sys.stderr)
        return 2
    game = load_game_or_exit(args.game, "play")
    seed = args.seed if args.seed is not None else config.seed
    try:
        check_bot(args.bot, game, config)  # a wrong model or game stops us before we take the seat
    except (ValueError, ModelError) as exc:
        print(f"deepstack play: error: {exc}", file=sys.stderr)
        return 2
    # connect first (a dealer that is not there is reported at once), then build the bot: with
    # its start cache that takes well under a second, and the dealer's first state waits
    try:
        sock = open_session(args.host, args.port, config.client.connect_timeout_s)
    except ConnectionError as exc:
        print(f"deepstack play: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"deepstack play: error: connection to {args.host}:{args.port} failed: {exc}", file=sys.stderr)
        return 1
    built = time.monotonic()
    try:
        bot = make_bot(args.bot, game, config, seed=seed)
    except (ValueError, ModelError) as exc:
        sock.close()
        print(f"deepstack play: error: {exc}", file=sys.stderr)
        return 2
    seconds = time.monotonic() - built
    charge = getattr(bot, "charge_startup", None)
    if charge is not None:  # the dealer's clock may have been running for our first decision
        charge(seconds)
    log.info("startup", phase="bot_ready", seconds=round(seconds, 2), since_process_start_s=process_seconds())
    summary = play_session(sock, game, bot, read_timeout=config.client.read_timeout_s)
    print(summary.line(), flush=True)
    if not summary.complete:
        where = f" in hand {summary.last_hand} at betting '{summary.last_betting}'" if summary.last_hand is not None else ""
        print(f"deepstack play: error: the match did not finish ({summary.ended}){where}: {summary.error}", file=sys.stderr)
    return PLAY_EXIT[summary.ended]
