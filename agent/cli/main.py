"""``deepstack``: the one command-line entry point; each subcommand has ``--help``."""

from __future__ import annotations

import argparse
import importlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

# Every subcommand's modules are imported here, not when the subcommand runs: measured, `deepstack --help`
# takes the same time either way (1.9-2.1 s on 2 cores; torch, which nearly every command needs, is ~1.2 s of it).
from agent.bots.config import Config, ConfigError, HoldemModels, load_config
from agent.bots.registry import bot_names, check_bot, make_bot
from agent.cli import eval as eval_cli
from agent.cli import solve as solve_cli
from agent.cli.blueprint import add_parser as add_blueprint
from agent.cli.campaign import add_parser as add_campaign
from agent.cli.common import GAME_HELP, HelpFormatter, add_network_leaf_options, example, port, positive_int, seed
from agent.cli.prepare import add_parser as add_prepare
from agent.cli.promote import add_parser as add_promote
from agent.evaluation.clock import clock_lines, clock_report
from agent.evaluation.match import check_log_dir, check_seat_program, new_log_dir, parse_seat, run_match
from agent.leaves.equity_matrix import preflop_matrix, save_preflop
from agent.nets.buckets import fit_buckets
from agent.nets.encoding import SituationEncoder
from agent.nets.manifest import ModelError, register_model
from agent.nets.valuenet import resolve_precision
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SpotError, pick_device
from agent.training.cluster import ClusterError, generate_on_ray
from agent.training.datagen import (
    GENERATE_DCFR,
    NEXT_STREET,
    DataFolderError,
    GenerateSpec,
    alternating_updates,
    check_harvest,
    check_labels,
    generate,
    is_hand_level,
    load_next_net,
    parse_batch,
    parse_dcfr,
)
from agent.training.streets import STREET_ROUND, street_abstraction
from agent.training.train import TrainSpec, train
from protocol.client import open_session, play_session
from protocol.dealer import build_parser as dealer_parser
from protocol.dealer import main as dealer_main
from protocol.gamedef import Game, GameDefError, load_game
from protocol.logs import configure_logging, get_logger, process_seconds

log = get_logger("play")


def _load_game_or_exit(text: str) -> Game:
    try:
        return load_game(text)
    except GameDefError as exc:  # exit 2, as every command's bad arguments
        print(f"deepstack: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


# ---------------------------------------------------------------------- play
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


def _add_play(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a match against an ACPC dealer",
        description="Connect to an ACPC dealer and play until it closes the connection.",
        epilog=PLAY_EPILOG,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--game", default="hunl", help=GAME_HELP)
    p.add_argument("--bot", default="deepstack", choices=bot_names(), help="which bot plays")
    p.add_argument("--host", default="127.0.0.1", help="dealer host")
    p.add_argument("--port", type=port, required=True, help="the seat's port printed by the dealer (1..65535)")
    p.add_argument(
        "--seed", type=seed, default=None, help="seed of the bot's random choices, 0..4294967295 (default: the config's seed)"
    )
    p.add_argument("--config", default=None, help="config file (default: $DEEPSTACK_CONFIG, else the shipped config.yaml)")
    p.add_argument(
        "--device", default=None, choices=["auto", "cpu", "cuda"], help="where the re-solver runs (default: the config's device)"
    )
    p.add_argument(
        "--log-json", default=None, help="also write JSON-lines logs (one line per decision) to this file (default: none)"
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
    p.set_defaults(func=_run_play)


def _plan_with_limits(config: Config, t_response: int | None, t_hand: int | None, t_per_hand: int | None) -> Config:
    """``config`` whose bots plan their thinking with the dealer's limits, or the config's where
    those are tighter (a bot may plan with less time than it is given, never with more)."""
    t = config.bot.time
    limits = replace(
        t,
        t_response_ms=min(t.t_response_ms, t_response or t.t_response_ms),
        t_hand_ms=min(t.t_hand_ms, t_hand or t.t_hand_ms),
        t_per_hand_ms=min(t.t_per_hand_ms, t_per_hand or t.t_per_hand_ms),
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
    config = _plan_with_limits(config, args.t_response, args.t_hand, args.t_per_hand)
    log_json = args.log_json or config.logging.json_path
    try:
        configure_logging(config.logging.level, log_json)
    except OSError as exc:  # a bad path given, not a dealer missing (exit 1): named by who gave it
        given = "--log-json" if args.log_json else f"{config.source}: logging.json_path"
        print(f"deepstack play: error: {given}: {log_json}: cannot open the log file: {exc}", file=sys.stderr)
        return 2
    game = _load_game_or_exit(args.game)
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


# ---------------------------------------------------------------------- match
SEATS_HELP = (
    "Seats: seat 1 and seat 2 are the dealer's seats, as in its SCORE line and logs and in 'deepstack eval plot' "
    "(positions alternate every hand). BOT1 sits in seat 1; with --duplicate a second match deals the same cards "
    "with the seats swapped."
)


def _add_match(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--config", default=None, help="config of built-in bots (default: the shipped config.yaml)")
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
    game = _load_game_or_exit(args.game)
    if game.num_players != 2:
        print(
            f"deepstack match: error: {args.game} has {game.num_players} players; match plays two-player games "
            "(deepstack dealer plays any number, one program per seat)",
            file=sys.stderr,
        )
        return 2
    if args.hands <= 0:
        print("deepstack match: error: HANDS must be positive", file=sys.stderr)
        return 2
    for flag in ("t_response", "t_hand", "t_per_hand"):
        if getattr(args, flag) <= 0:
            print(f"deepstack match: error: --{flag} {getattr(args, flag)} is not a positive number of ms", file=sys.stderr)
            return 2
    if not 0 < args.start_timeout < math.inf:
        print(
            f"deepstack match: error: --start-timeout {args.start_timeout} is not a positive number of seconds", file=sys.stderr
        )
        return 2
    # built-in seats budget their thinking from the limits this dealer enforces ('cmd:' seats are
    # told them by their own options, e.g. deepstack play --t_per_hand)
    config = _plan_with_limits(config, args.t_response, args.t_hand, args.t_per_hand)
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
        how = "terminated" if _Terminated.received else "interrupted"
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


# ---------------------------------------------------------------------- dealer
def _add_dealer(sub: argparse._SubParsersAction) -> None:
    sub.add_parser(
        "dealer",
        help="an ACPC-compatible dealer (same arguments as the ACPC dealer)",
        add_help=False,
    )


def _run_dealer(argv: Sequence[str]) -> int:
    return dealer_main(argv)


# ---------------------------------------------------------------------- generate / train
def _add_generate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="generate training situations for a value network",
        description="Random situations (board, pot, R(S,p) ranges) at the start of a round, solved by the "
        "re-solver; written as resumable shards (an interrupted run continues where it stopped; more "
        "--situations extend a folder; a folder made with other settings is refused).",
        epilog=example("deepstack generate --game leduc --situations 1000 --out data/leduc"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--game", required=True, help=GAME_HELP)
    p.add_argument(
        "--round", type=int, default=None, help="Leduc: round at whose start situations are made (default 1; hold'em: --street)"
    )
    p.add_argument(
        "--street",
        choices=["river", "turn", "flop", "preflop-aux"],
        default=None,
        help="hold'em: the network's street: river (situations at the start of the river, solved exactly), "
        "turn (situations at the start of the turn, solved to the end, or with --river-net to the end of the turn "
        "with the river network at the leaves), "
        "flop (start of the flop, solved to the end of the flop with the turn network at the leaves), "
        "preflop-aux (end of the pre-flop: the flop network averaged over the flops) (default: none, for Leduc games)",
    )
    p.add_argument(
        "--river-net",
        default=None,
        help="--street turn: solve to the end of the turn with this river network at the leaves, over every river card "
        "(e.g. models/holdem/river-small.pt; default: none, solved to the end of the game)",
    )
    p.add_argument("--turn-net", default=None, help="--street flop: the turn network (default: models/holdem/turn.pt)")
    add_network_leaf_options(p, "solves with the next street's network at the leaves (recorded in generate.json)")
    p.add_argument("--flop-net", default=None, help="--street preflop-aux: the flop network (default: models/holdem/flop.pt)")
    p.add_argument(
        "--aux-flops",
        type=int,
        default=None,
        help="--street preflop-aux: flops averaged per situation (default all 22100; fewer: a seeded sample)",
    )
    p.add_argument(
        "--teacher",
        default=None,
        metavar="NET",
        help="hold'em: label the situations with this network's values instead of solving them (data to distil "
        "it into another network, e.g. the mean of several from 'deepstack ensemble'; its street is --street's; "
        "default: none, solved)",
    )
    p.add_argument(
        "--per-board",
        type=int,
        default=1,
        metavar="K",
        help="with --teacher: K situations per board drawn, each with its own ranges and pot (they share the "
        "board's bucket lookup, most of a label's cost) (default 1)",
    )
    p.add_argument("--situations", type=int, required=True, help="number of situations (more extend a folder)")
    p.add_argument("--shard-size", type=int, default=500, help="situations per shard (default 500)")
    p.add_argument("--iterations", type=int, default=1000, help="CFR iterations per situation (default 1000)")
    p.add_argument(
        "--algorithm",
        default="dcfr",
        choices=["cfr+", "dcfr", "dcfr+", "hybrid"],
        help="CFR variant of the solves (default dcfr)",
    )
    p.add_argument(
        "--dcfr",
        default=None,
        metavar="ALPHA,BETA,GAMMA",
        help="DCFR's regret discounts and averaging exponent for --algorithm dcfr / dcfr+ (default 1.5,-inf,4: "
        "negative regrets reset every iteration, average weighted by t^4; DCFR's published choice is 1.5,0,2, "
        "what data made before this option was solved with)",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of the situations drawn (more data for a network: another seed)")
    p.add_argument(
        "--sparse",
        type=float,
        default=0.0,
        help="fraction of situations whose ranges leave out hands (each dropped with probability 1/2): "
        "the zero-mass hands of the ranges a network meets at re-solving leaves (default 0)",
    )
    p.add_argument(
        "--harvest-river",
        type=int,
        default=0,
        metavar="K",
        help="--street turn solved to the end: keep up to K of the river subgames inside each solve as river data "
        "(their ranges and values in the solve, where both players bring at least 0.1 of their range), in OUT/river, a "
        "river data folder; solved one situation per call, ~19%% slower (default 0: none; docs/training.md, 'River "
        "data harvested from turn solves')",
    )
    p.add_argument(
        "--device",
        default="auto",
        choices=["auto", "cpu", "cuda"],
        help="where the solves run (default auto: CUDA when present, else the CPU)",
    )
    p.add_argument(
        "--batch",
        default="auto",
        metavar="N|auto",
        help="hold'em turn and flop: situations per solver call, solved together as one forest (default auto: "
        "one at a time on the CPU, on a GPU as many as half its free memory holds)",
    )
    p.add_argument("--out", required=True, help="output folder (resumed when it holds this run's shards)")
    p.add_argument(
        "--ray-address",
        default=None,
        help="solve the shards as Ray tasks (needs the 'ray' extra): 'local' (a Ray instance on this "
        "machine, all cores), 'auto' (the cluster this machine is part of) or ray://HOST:PORT (default: none, "
        "solved in this process)",
    )
    p.add_argument("--ray-cpus", type=int, default=None, help="with --ray-address local: CPUs to use (default all)")
    p.set_defaults(func=_run_generate)


def _run_generate(args: argparse.Namespace) -> int:
    game = _load_game_or_exit(args.game)
    next_net = None
    if args.street is not None:
        if game.deck_size <= 12 or args.round is not None:
            print("deepstack generate: error: --street is for hold'em games and replaces --round", file=sys.stderr)
            return 2

        args.round = {"river": 3, "turn": 2, "flop": 1, "preflop-aux": 0}[args.street]
        if args.teacher is not None:
            if args.river_net or args.turn_net or args.flop_net:
                print(
                    "deepstack generate: error: --teacher labels situations, it solves nothing: no next network", file=sys.stderr
                )
                return 2
        elif args.street == "flop":
            next_net = args.turn_net or HoldemModels().turn_net
        elif args.street == "preflop-aux":
            next_net = args.flop_net or HoldemModels().flop_net
        elif args.street == "turn":
            next_net = args.river_net
        if next_net is not None:
            try:  # fail now, not in the first shard
                load_next_net(next_net, NEXT_STREET[args.street])
            except ModelError as exc:
                print(f"deepstack generate: error: {exc}", file=sys.stderr)
                return 2
    if (
        (args.river_net and args.street != "turn")
        or (args.turn_net and args.street != "flop")
        or ((args.flop_net or args.aux_flops) and args.street != "preflop-aux")
    ):
        print(
            "deepstack generate: error: --river-net is for --street turn, --turn-net for --street flop, --flop-net and "
            "--aux-flops for --street preflop-aux",
            file=sys.stderr,
        )
        return 2
    if args.aux_flops is not None and not 0 < args.aux_flops <= 22100:
        print("deepstack generate: error: --aux-flops must be in 1..22100", file=sys.stderr)
        return 2
    if args.street is None and not is_hand_level(game):
        print("deepstack generate: error: hold'em games need --street (river, turn, flop or preflop-aux)", file=sys.stderr)
        return 2
    if args.round is None:
        args.round = 1
    if args.street is None and not 1 <= args.round < game.num_rounds:
        print(
            f"deepstack generate: error: --round {args.round}: situations start a later round of {args.game} "
            f"(1..{game.num_rounds - 1})",
            file=sys.stderr,
        )
        return 2
    if args.situations <= 0 or args.shard_size <= 0 or args.iterations <= 0 or (args.ray_cpus is not None and args.ray_cpus <= 0):
        print(
            "deepstack generate: error: --situations, --shard-size, --iterations and --ray-cpus must be positive", file=sys.stderr
        )
        return 2

    try:
        alpha, beta, gamma = GENERATE_DCFR if args.dcfr is None else parse_dcfr(args.dcfr)
    except ValueError as exc:
        print(f"deepstack generate: error: --dcfr: {exc}", file=sys.stderr)
        return 2
    if not 0.0 <= args.sparse <= 1.0:
        print(f"deepstack generate: error: --sparse: {args.sparse} is not a fraction between 0 and 1", file=sys.stderr)
        return 2
    try:
        batch = parse_batch(args.batch)
    except ValueError as exc:
        print(f"deepstack generate: error: --batch: {exc}", file=sys.stderr)
        return 2
    try:  # a Ray cluster's workers pick their own device from auto; Leduc's tiny solves run best on the CPU
        if is_hand_level(game) and args.device == "auto":
            device = "cpu"
        else:
            device = args.device if args.ray_address is not None else pick_device(args.device).type
    except SpotError as exc:
        print(f"deepstack generate: error: --device: {exc}", file=sys.stderr)
        return 2
    # recorded as what ran, not "auto"; a Ray cluster's workers may differ, so auto is float32 there
    precision = None
    if next_net is not None:
        precision = (
            "float32" if device == "auto" and args.net_precision == "auto" else resolve_precision(args.net_precision, device)
        )
    spec = GenerateSpec(
        game=args.game,
        round=args.round,
        situations=args.situations,
        shard_size=args.shard_size,
        seed=args.seed,
        iterations=args.iterations,
        algorithm=args.algorithm,
        next_net=next_net,
        alternating=alternating_updates(args.updates, next_net is not None and args.round != 0),
        net_precision=precision,
        aux_flops=args.aux_flops,
        dcfr_alpha=alpha,
        dcfr_beta=beta,
        dcfr_gamma=gamma,
        device=device,
        batch=batch,
        sparse=args.sparse,
        harvest_river=args.harvest_river,
        teacher=args.teacher,
        per_board=args.per_board,
    )
    try:
        check_harvest(spec, game)
    except ValueError as exc:
        print(f"deepstack generate: error: --harvest-river: {exc}", file=sys.stderr)
        return 2
    try:
        check_labels(spec, game)
    except (ValueError, ModelError) as exc:
        print(f"deepstack generate: error: --teacher / --per-board: {exc}", file=sys.stderr)
        return 2
    try:
        if args.ray_address is not None:
            try:
                stats = generate_on_ray(spec, Path(args.out), args.ray_address, local_cpus=args.ray_cpus)
            except ClusterError as exc:
                print(f"deepstack generate: error: {exc}", file=sys.stderr)
                return 1
        else:
            stats = generate(spec, Path(args.out))
    except DataFolderError as exc:
        print(f"deepstack generate: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # --out not a folder, no space left, ...
        print(
            f"deepstack generate: error: cannot write to {args.out}: {exc} (shards already written are kept; "
            "the same command resumes)",
            file=sys.stderr,
        )
        return 1
    print(
        f"generated {int(stats['situations'])} situations in {stats['seconds']:.1f} s "
        f"({stats['situations_per_s']:.2f}/s) into {args.out}"
    )
    return 0


def _add_ensemble(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ensemble",
        help="average trained value networks into one TorchScript network",
        description="One network whose output is the mean of its members' (each checked against its manifest; they "
        "must share inputs and outputs). It is recorded in the manifest with every member's provenance, and loads "
        "wherever a value network does (e.g. bot.leduc.value_net).",
        epilog=example("deepstack ensemble --out my-ens.pt --name my-ens models/leduc/leduc-limit.pt runs/s1/leduc-limit-s1.pt"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("members", nargs="+", metavar="NET", help="the networks to average (.pt files listed in a manifest)")
    p.add_argument("--out", required=True, help="the ensemble's file (e.g. models/leduc/leduc-limit-ens.pt)")
    p.add_argument("--name", required=True, help="its name in the manifest")
    p.set_defaults(func=_run_ensemble)


def _run_ensemble(args: argparse.Namespace) -> int:
    from agent.training.ensemble import build_ensemble

    try:
        path = build_ensemble(args.members, Path(args.out), args.name)
    except ModelError as exc:
        print(f"deepstack ensemble: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({len(args.members)} networks averaged)")
    return 0


def _add_train(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="train a value network on generated data and export it as TorchScript",
        description="Adam with a learning-rate drop, a validation split, the best epoch kept, a loss curve PNG; "
        "exports OUT/NAME.pt (TorchScript) and records it in the model manifest. An interrupted run resumes "
        "from OUT/NAME.ckpt (kept every 10 epochs) when the same command runs again.",
        epilog=example(
            "deepstack train --game leduc --data data/leduc --out my-models --name leduc-mine --epochs 20",
            "on the data of the 'deepstack generate' example",
        ),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--game", required=True, help=GAME_HELP + " (hand-level networks: leduc, leduc-limit)")
    p.add_argument(
        "--data",
        required=True,
        nargs="+",
        metavar="DIR",
        help="folder(s) of shards from deepstack generate; several folders are pooled in the order given (which "
        "fixes the validation split); they must be data of one network and hold different situations: generate "
        "more with another --seed",
    )
    p.add_argument("--out", required=True, help="output folder (models/leduc replaces a shipped network and its manifest entry)")
    p.add_argument("--name", required=True, help="model name in the manifest (the files are OUT/NAME.pt, .ckpt, .loss.png)")
    p.add_argument("--epochs", type=int, default=200, help="passes over the training data (default 200)")
    p.add_argument("--batch-size", type=int, default=1000, help="situations per Adam step")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate until --lr-drop-epoch")
    p.add_argument("--lr-late", type=float, default=1e-4, help="the learning rate from --lr-drop-epoch on")
    p.add_argument("--lr-drop-epoch", type=int, default=150, help="the epoch at which the learning rate drops to --lr-late")
    p.add_argument(
        "--schedule",
        choices=["step", "cosine"],
        default="step",
        help="learning rate: step (--lr, then --lr-late from --lr-drop-epoch) or cosine (--lr decayed to 0 over the epochs)",
    )
    p.add_argument(
        "--weight-decay",
        type=float,
        default=0.0,
        help="AdamW's decoupled weight decay (default 0: plain Adam); against over-fitting small data sets",
    )
    p.add_argument(
        "--init",
        default=None,
        help="start from this network's weights (same --hidden/--layers/buckets; e.g. models/holdem/turn.pt to fine-tune "
        "the shipped network on new data) instead of random ones (default: random)",
    )
    p.add_argument("--hidden", type=int, default=500, help="units per hidden layer")
    p.add_argument("--layers", type=int, default=7, help="hidden layers")
    p.add_argument("--seed", type=seed, default=0, help="seed of the validation split, the initial weights and the batch order")
    p.add_argument(
        "--street",
        choices=["river", "turn", "flop", "preflop-aux"],
        default=None,
        help="hold'em: which network (its buckets map the data; preflop-aux: the 169 pre-flop classes; river: "
        "equity against a uniform hand in --river-buckets steps) (default: none, for Leduc games)",
    )
    p.add_argument("--buckets", default=None, help="hold'em: bucket table (default: the street's table in models/holdem)")
    p.add_argument("--river-buckets", type=int, default=1000, help="--street river: equity steps (default 1000)")
    p.set_defaults(func=_run_train)


def _run_train(args: argparse.Namespace) -> int:
    game = _load_game_or_exit(args.game)
    if args.epochs < 1 or args.batch_size < 1:
        print("deepstack train: error: --epochs and --batch-size must be at least 1", file=sys.stderr)
        return 2
    wrong = [
        f"--{name.replace('_', '-')} {value}"
        for name, value, ok in (
            ("hidden", args.hidden, args.hidden >= 1),
            ("layers", args.layers, args.layers >= 1),
            ("lr", args.lr, args.lr > 0),
            ("lr_late", args.lr_late, args.lr_late >= 0),
            ("lr_drop_epoch", args.lr_drop_epoch, args.lr_drop_epoch >= 0),
            ("weight_decay", args.weight_decay, args.weight_decay >= 0),
        )
        if not ok
    ]
    if wrong:  # a network of no width, a negative decay (silently plain Adam), ...: nothing worth training
        print(
            f"deepstack train: error: {', '.join(wrong)}: --hidden and --layers must be at least 1, --lr positive, "
            "--lr-late, --lr-drop-epoch and --weight-decay not negative",
            file=sys.stderr,
        )
        return 2
    spec = TrainSpec(
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        lr_late=args.lr_late,
        lr_drop_epoch=args.lr_drop_epoch,
        hidden=args.hidden,
        layers=args.layers,
        seed=args.seed,
        schedule=args.schedule,
        weight_decay=args.weight_decay,
    )
    try:
        if game.deck_size <= 12:
            space = HandSpace(game)
            stats = train(
                [Path(d) for d in args.data],
                Path(args.out),
                buckets=space.size,
                extra=len(space.deck),
                spec=spec,
                model_name=args.name,
                canonical_space=space,
                init=Path(args.init) if args.init else None,
                game=args.game,
            )
        else:
            table, _, extra_manifest = street_abstraction(args.street, args.river_buckets, args.buckets)
            stats = train(
                [Path(d) for d in args.data],
                Path(args.out),
                buckets=table.num_buckets,
                extra=0,
                spec=spec,
                model_name=args.name,
                encoder=SituationEncoder(table, float(sum(game.stack))),
                extra_manifest=extra_manifest,
                init=Path(args.init) if args.init else None,
                game=args.game,
                round_=STREET_ROUND[args.street],
            )
    except (FileNotFoundError, ValueError, ModelError) as exc:
        print(f"deepstack train: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # --out not a folder, no space left, ...
        print(f"deepstack train: error: cannot write to {args.out}: {exc}", file=sys.stderr)
        return 1
    print(
        f"best validation loss {stats['validation_loss']:.6f} at epoch {stats['best_epoch']} "
        f"({int(stats['situations'])} situations)"
    )
    return 0


# ---------------------------------------------------------------------- buckets
def _add_buckets(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "buckets",
        help="build the hold'em card abstraction (flop and turn buckets) and the pre-flop check-down matrix",
        description="k-means with earth mover's distance over equity histograms of random boards' hands "
        "(flop and turn), and the Monte-Carlo pre-flop check-down matrix; written to --out with manifest entries.",
        epilog=example(
            "deepstack buckets --street preflop --preflop-boards 1000 --out my-buckets",
            "a quick pre-flop check-down matrix; the default --out models/holdem replaces the shipped tables",
        ),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--street", choices=["flop", "turn", "preflop", "all"], default="all", help="what to build")
    p.add_argument("--buckets", type=positive_int, default=1000, help="clusters per street (default 1000)")
    p.add_argument("--boards", type=positive_int, default=400, help="random boards whose hands are clustered (default 400)")
    p.add_argument("--sample", type=positive_int, default=100_000, help="hands sampled for k-means (default 100000)")
    p.add_argument("--iterations", type=positive_int, default=20, help="k-means iterations (default 20)")
    p.add_argument("--bins", type=positive_int, default=50, help="equity histogram bins (default 50)")
    p.add_argument("--preflop-boards", type=positive_int, default=10_000, help="random boards of the pre-flop matrix")
    p.add_argument("--seed", type=seed, default=0, help="seed of the boards and of k-means")
    p.add_argument("--out", default="models/holdem", help="output folder (default models/holdem)")
    p.set_defaults(func=_run_buckets)


def _run_buckets(args: argparse.Namespace) -> int:
    out = Path(args.out)
    command = "deepstack " + " ".join(sys.argv[1:])
    if args.street != "preflop" and args.sample < args.buckets:  # k-means needs a hand per cluster
        print(
            f"deepstack buckets: error: --sample {args.sample} is less than --buckets {args.buckets} "
            "(k-means needs at least one hand per bucket)",
            file=sys.stderr,
        )
        return 2
    try:
        _write_buckets(args, out, command)
    except ValueError as exc:  # e.g. fewer hands on the boards than buckets
        print(f"deepstack buckets: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _write_buckets(args: argparse.Namespace, out: Path, command: str) -> None:
    """The tables and matrix asked for, each registered in the manifest once written."""
    for street in ("flop", "turn"):
        if args.street not in (street, "all"):
            continue
        table, stats = fit_buckets(
            street,
            args.buckets,
            args.boards,
            bins=args.bins,
            sample=args.sample,
            iterations=args.iterations,
            seed=args.seed,
            progress=lambda m, s=street: print(f"{s}: {m}", file=sys.stderr),
        )
        path = out / f"buckets-{street}.npz"
        table.save(path)
        register_model(
            path,
            name=f"buckets-{street}",
            kind="buckets",
            street=street,
            buckets=args.buckets,
            bins=args.bins,
            boards=args.boards,
            hands_clustered=int(stats["hands"]),
            mean_emd=stats["mean_emd"],
            command=command,
            seconds=stats["seconds"],
        )
        print(
            f"{street}: {args.buckets} buckets from {int(stats['hands'])} hands, "
            f"mean EMD {stats['mean_emd']:.4f}, {stats['seconds']:.0f} s -> {path}"
        )
    if args.street in ("preflop", "all"):
        start = time.perf_counter()
        matrix = preflop_matrix(args.preflop_boards, seed=args.seed, progress=True)
        path = out / "preflop-checkdown.npz"
        save_preflop(matrix, path, args.preflop_boards)
        register_model(
            path,
            name="preflop-checkdown",
            kind="checkdown-matrix",
            boards=args.preflop_boards,
            command=command,
            seconds=time.perf_counter() - start,
        )
        print(f"pre-flop check-down matrix from {args.preflop_boards} boards -> {path}")


# ---------------------------------------------------------------------- solve / bench
def _add_solve(sub: argparse._SubParsersAction) -> None:
    solve_cli.add_parser(sub)


def _add_eval(sub: argparse._SubParsersAction) -> None:
    eval_cli.add_parser(sub)


#: the benchmark suites, imported by name when one runs (each pulls in what it measures; the
#: name table also gives ``bench``'s choices without importing them)
BENCHES = {
    "solver": "agent.cli.solve:bench_main",
    "native": "native.bench:main",
    "generate": "agent.cli.bench_generate:main",
    "resolve": "agent.cli.bench_resolve:main",
    "parity": "agent.cli.bench_parity:main",
    "blueprint": "agent.cli.bench_blueprint:main",
}
#: each suite's argument parser (its --help), by the same names
BENCH_PARSERS = {
    "solver": "agent.cli.solve:bench_parser",
    "native": "native.bench:build_parser",
    "generate": "agent.cli.bench_generate:build_parser",
    "resolve": "agent.cli.bench_resolve:build_parser",
    "parity": "agent.cli.bench_parity:build_parser",
    "blueprint": "agent.cli.bench_blueprint:build_parser",
}


def _add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="benchmarks, printed as JSON lines",
        description="Run a benchmark suite: " + ", ".join(BENCHES) + ". Each prints one JSON object per "
        "measurement (bench, value, unit, impl, device, threads, ...). 'deepstack bench SUITE --help' "
        "lists the suite's options.",
        epilog=example("deepstack bench solver --quick"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("suite", choices=sorted(BENCHES), help="which benchmarks")
    p.add_argument("options", nargs=argparse.REMAINDER, help="options of the suite ('deepstack bench SUITE --help')")
    p.set_defaults(func=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    module, _, func = BENCHES[args.suite].partition(":")
    return int(getattr(importlib.import_module(module), func)(list(args.options)))


# ---------------------------------------------------------------------- main
_ADDERS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_play,
    _add_match,
    _add_dealer,
    _add_solve,
    _add_buckets,
    _add_generate,
    _add_train,
    add_campaign,
    add_promote,
    _add_ensemble,
    add_prepare,
    _add_eval,
    add_blueprint,
    _add_bench,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepstack",
        description="DeepStack for ACPC poker: play, run matches, solve, train and evaluate. "
        "'deepstack COMMAND --help' explains a command and ends with an example.",
        epilog=example("deepstack match leduc 300 deepstack random --duplicate"),
        formatter_class=HelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in _ADDERS:
        add(sub)
    return parser


def all_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(command, parser)`` of every command as its ``--help`` shows it: ``""`` (``deepstack``
    itself), each subcommand and each nested one (``eval lbr``), the dealer's own parser and each
    benchmark suite's (``bench solver``)."""

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        name = " ".join(path)
        yield name, dealer_parser() if name == "dealer" else parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child_name, child in action.choices.items():
                    yield from walk(child, path + (child_name,))

    yield from walk(build_parser(), ())
    for suite, target in BENCH_PARSERS.items():
        module, _, func = target.partition(":")
        yield f"bench {suite}", getattr(importlib.import_module(module), func)()


class _Terminated:
    """SIGTERM (``docker stop``, ``kill``) ends a command as Ctrl-C does, with its status 143. As
    PID 1 in a container a process has no default action for SIGTERM: without this handler
    ``docker stop`` waits its grace period and kills the bot mid-write."""

    received = False
    pid = 0  # the process that installed the handler: forked workers inherit it, and die as usual

    @classmethod
    def handler(cls, signum: int, frame: object) -> None:
        if os.getpid() != cls.pid:  # a pool stopping its workers: SIGTERM's default, no traceback
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        cls.received = True
        raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = " ".join(argv[:2] if argv and argv[0] in ("eval", "bench") else argv[:1])
    previous = None
    if threading.current_thread() is threading.main_thread():
        _Terminated.received, _Terminated.pid = False, os.getpid()
        previous = signal.signal(signal.SIGTERM, _Terminated.handler)
    try:
        if command == "dealer":
            code = _run_dealer(argv[1:])
        else:
            args = build_parser().parse_args(argv)
            code = int(args.func(args))
    except OSError as exc:
        # what the machine refused (an output path that is a file, no permission, no space):
        # one line naming the path, not a traceback; commands handle what they can resume
        print(f"deepstack {command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line and the shell's usual status, not a traceback
        print(f"deepstack {command}: {'terminated' if _Terminated.received else 'interrupted'}", file=sys.stderr)
        code = 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 143 if code == 130 and _Terminated.received else code


if __name__ == "__main__":
    sys.exit(main())
