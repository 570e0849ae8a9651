"""``deepstack generate``: solved training situations for a value network, resumable, on this machine or a Ray cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.bots.config import HoldemModels
from agent.cli.common import (
    GAME_HELP,
    HelpFormatter,
    add_network_leaf_options,
    cannot_write,
    example,
    load_game_or_exit,
    make_folder,
    path_arg,
    remove_empty,
    seed,
)
from agent.nets.manifest import ModelError
from agent.nets.valuenet import resolve_precision
from agent.solver.resolve import SpotError, pick_device
from agent.training.cluster import ClusterError, generate_on_ray
from agent.training.data_folder import DataFolderError, shard_files
from agent.training.datagen import NEXT_STREET, check_harvest, check_labels, generate, is_hand_level, load_next_net
from agent.training.generate_spec import GENERATE_DCFR, GenerateSpec, alternating_updates, parse_batch, parse_dcfr

#: far past any data set made so far (DeepStack 10M turn situations, Supremus 50M river ones)
MAX_SITUATIONS = 1_000_000_000
#: a resumed run looks every shard up before it solves (about a second per 200,000 on this machine):
#: DeepStack's 10M turn situations in shards of 8 are 1.25M
MAX_SHARDS = 4_000_000


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack generate`` (value-network training situations, solved and written as resumable shards)."""
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
        "what data made before this option was solved with; ALPHA and BETA at most 50, GAMMA at most 5)",
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
        help="hold'em river, turn and flop: situations per solver call, solved together as one forest (default auto: "
        "one at a time on the CPU, on a GPU as many as half its free memory holds)",
    )
    p.add_argument("--out", type=path_arg, required=True, help="output folder (resumed when it holds this run's shards)")
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
    game = load_game_or_exit(args.game, "generate")
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
    shards = -(-args.situations // args.shard_size)
    # a start with 10^10 situations looked every shard up before solving one, for minutes, as its memory grew
    if args.situations > MAX_SITUATIONS:
        print(f"deepstack generate: error: --situations {args.situations}: at most {MAX_SITUATIONS:,}", file=sys.stderr)
        return 2
    if shards > MAX_SHARDS:
        print(
            f"deepstack generate: error: --situations {args.situations} in shards of {args.shard_size} are {shards:,} "
            f"shards: at most {MAX_SHARDS:,} (give a larger --shard-size)",
            file=sys.stderr,
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
    try:  # README.md, a folder under a file, /proc: said now, as train says it, not as a write that "resumes"
        made = make_folder(args.out)
    except OSError as exc:
        print(f"deepstack generate: error: {cannot_write(args.out, exc)}", file=sys.stderr)
        return 1
    code, stats = _generate_into(args, spec)
    if code != 0:
        remove_empty(made)  # a refused run leaves no empty --out behind
        return code
    print(
        f"generated {int(stats['situations'])} situations in {stats['seconds']:.1f} s "
        f"({stats['situations_per_s']:.2f}/s) into {args.out}"
    )
    return 0


def _generate_into(args: argparse.Namespace, spec: GenerateSpec) -> tuple[int, dict[str, float]]:
    """Generate into the --out folder made; 0 and the run's stats, or the exit status of the refusal printed."""
    try:
        if args.ray_address is not None:
            try:
                return 0, generate_on_ray(spec, Path(args.out), args.ray_address, local_cpus=args.ray_cpus)
            except ClusterError as exc:
                print(f"deepstack generate: error: {exc}", file=sys.stderr)
                return 1, {}
        return 0, generate(spec, Path(args.out))
    except DataFolderError as exc:
        print(f"deepstack generate: error: {exc}", file=sys.stderr)
        return 2, {}
    except OSError as exc:  # no space left, a folder we may not write in, ...
        # the advice only where it holds: a run that wrote no shard has nothing to resume
        kept = " (shards already written are kept; the same command resumes)" if shard_files(Path(args.out)) else ""
        print(f"deepstack generate: error: {cannot_write(args.out, exc)}{kept}", file=sys.stderr)
        return 1, {}
