"""``deepstack blueprint``: train the abstraction-based blueprint (MCCFR) and measure it exactly
where the game is small enough (Leduc)."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from agent.blueprint.abstraction import make_abstraction
from agent.blueprint.distributed import train_distributed
from agent.blueprint.holdem import PUBLIC_METHODS, build_tables
from agent.blueprint.mccfr import BATCH, Blueprint, BlueprintFileError
from agent.blueprint.postprocess import POSTPROCESSING
from agent.bots.config import PACKAGE_ROOT
from agent.bots.start_cache import is_shipped
from agent.cli.common import (
    GAME_HELP,
    HelpFormatter,
    cannot_write,
    dumps,
    example,
    fraction,
    make_folder,
    path_arg,
    pot_fractions,
    seed,
)
from agent.evaluation.evaluate import blueprint_profile, profile_exploitability
from agent.nets.buckets import BucketTable
from agent.nets.manifest import ModelError, manifest_path_for, read_manifest, register_model
from agent.solver.tree import BetSizing
from agent.training.cluster import ClusterError, connect_ray
from protocol.gamedef import GameDefError, load_game


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack blueprint`` and its subcommands (``train``, ``eval``, ``abstraction``)."""
    p = sub.add_parser(
        "blueprint",
        help="train and measure the abstraction-based blueprint (MCCFR)",
        description="The blueprint agent of seed 001 (play it with --bot blueprint): external-sampling MCCFR "
        "in C over the whole game's betting tree and a card abstraction.",
        epilog=example("deepstack blueprint train leduc 50000000 --out models/blueprint/leduc.npz --seed 1"),
        formatter_class=HelpFormatter,
    )
    bsub = p.add_subparsers(dest="blueprint_command", required=True, metavar="COMMAND")
    t = bsub.add_parser(
        "train",
        help="run MCCFR iterations into a blueprint file (resumes it when it exists)",
        description="Run ITERATIONS more MCCFR iterations (one deal each, both positions traversed, linear "
        "averaging) into OUT, written every --save-every iterations and at the end; an existing OUT is resumed "
        "(its game, bet sizes and abstraction are kept; the options for them must match or be left out). A file "
        "under models/ is recorded in models/manifest.json.",
        epilog=example("deepstack blueprint train leduc-limit 10000000 --out models/blueprint/leduc-limit.npz"),
        formatter_class=HelpFormatter,
    )
    t.add_argument("game", help=GAME_HELP)
    t.add_argument("iterations", type=int, help="MCCFR iterations to add")
    t.add_argument("--out", type=path_arg, required=True, help="the blueprint file (.npz)")
    t.add_argument(
        "--sizing",
        type=pot_fractions,
        default=None,
        help="bet sizes as pot fractions, per round separated by '/', per depth by ';' (e.g. '0.5,1;1/1'); one "
        "spec applies to every round; all-in is always added; default: 1, or the resumed file's",
    )
    t.add_argument(
        "--max-raises",
        type=int,
        default=None,
        help="at most this many bets and raises per round in the tree, all-in past them (where an opponent's further "
        "raise goes); default: as the game's rules allow, or the resumed file's",
    )
    t.add_argument(
        "--abstraction",
        default=None,
        help="card abstraction: lossless (small games), holdem (the shipped tables) or holdem:PATH; default: "
        "lossless, or the resumed file's",
    )
    t.add_argument("--seed", type=seed, default=0, help="seed of the deals and samples")
    t.add_argument("--save-every", type=int, default=5_000_000, help="iterations between saves")
    t.add_argument(
        "--clusters",
        type=int,
        default=1,
        help="public clusters of the second round's boards (seed 001): every deal continues once in each",
    )
    t.add_argument(
        "--workers",
        type=int,
        default=0,
        help="0: one process; W >= 1: the distributed two-pass scheme, each cluster's continuations on one of W "
        "Ray actors (the trunk on this process)",
    )
    t.add_argument(
        "--ray-address",
        default="local",
        help="with --workers: local (a Ray instance on this machine), auto or ray://host:port (a cluster)",
    )
    t.add_argument("--batch", type=int, default=500, help="with --workers: deals per trunk update (staleness)")
    a = bsub.add_parser(
        "abstraction",
        help="build the hold'em card abstraction (public clusters of flops, private buckets per street)",
        description="Build the blueprint's hold'em card abstraction (agent/blueprint/holdem.py): the value networks' "
        "flop and turn bucket tables coarsened to P private buckets each and stored for every suit-canonical flop "
        "(1,755) and turn (16,432), the flops clustered into C public clusters, river buckets by equity. A file "
        "under models/ is recorded in models/manifest.json. Takes minutes (every canonical board's histograms).",
        epilog=example("deepstack blueprint abstraction --out models/blueprint/holdem-abstraction.npz"),
        formatter_class=HelpFormatter,
    )
    a.add_argument("--out", type=path_arg, required=True, help="the abstraction file (.npz)")
    a.add_argument("--private", default="32,32,32", help="private buckets per public cluster: flop,turn,river")
    a.add_argument("--clusters", type=int, default=8, help="public clusters of the flops")
    a.add_argument("--flop-buckets", default="models/holdem/buckets-flop.npz", help="the EMD bucket table to coarsen")
    a.add_argument("--turn-buckets", default="models/holdem/buckets-turn.npz", help="the EMD bucket table to coarsen")
    a.add_argument("--seed", type=seed, default=0, help="seed of the k-means")
    a.add_argument(
        "--public",
        choices=PUBLIC_METHODS,
        default="transition",
        help="how flops are clustered: transition (seed 001's transition-table distance over the flop table's "
        "buckets) or histogram (k-means over each flop's histogram of private buckets); default: transition",
    )
    p_eval = bsub.add_parser(
        "eval",
        help="exact exploitability of a blueprint (Leduc)",
        description="The blueprint's average strategy measured by the exact best response (Leduc): "
        "exploitability in mbb/g and the game value it gets, as JSON.",
        epilog=example("deepstack blueprint eval models/blueprint/leduc-limit.npz"),
        formatter_class=HelpFormatter,
    )
    p_eval.add_argument("file", help="a blueprint file")
    p_eval.add_argument("--postprocess", default="none", choices=POSTPROCESSING, help="measure the strategy as played after this")
    p_eval.add_argument("--threshold", type=fraction, default=0.15, help="the post-processing's threshold, in [0, 1]")
    p.set_defaults(func=run)


def resolve_model(path: str) -> Path:
    """A path as given, else the shipped model of that name (models/...)."""
    p = Path(path)
    if not p.exists() and (PACKAGE_ROOT / p).exists():
        return PACKAGE_ROOT / p
    return p


def _sizing(spec: str, rounds: int, max_raises: int | None = None) -> tuple[BetSizing, ...]:
    parts = spec.split("/")
    if len(parts) not in (1, rounds):
        raise ValueError(f"--sizing {spec!r}: {len(parts)} rounds given, the game has {rounds}")
    if max_raises is not None and max_raises < 1:
        raise ValueError("--max-raises must be at least 1")
    per_round = [BetSizing.parse(s, max_raises=max_raises, all_in_past_cap=max_raises is not None) for s in parts]
    return tuple(per_round * rounds if len(per_round) == 1 else per_round)


def run(args: argparse.Namespace) -> int:
    """Run ``deepstack blueprint COMMAND``; a bad file, game or option is one error line and exit 2."""
    name = f"deepstack blueprint {args.blueprint_command}"
    try:
        if args.blueprint_command == "eval":
            return _eval(args)
        if args.blueprint_command == "abstraction":
            return _abstraction(args)
        return _train(args)
    except (BlueprintFileError, GameDefError, ValueError, ClusterError, ModelError) as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2


#: the most MCCFR iterations one ``blueprint train`` adds
MAX_ITERATIONS = 10**12


def _train(args: argparse.Namespace) -> int:
    game = load_game(args.game)
    if args.iterations < 0 or args.save_every < 1 or args.clusters < 1 or args.workers < 0 or args.batch < 1:
        raise ValueError("iterations and --workers must be >= 0; --save-every, --clusters and --batch >= 1")
    if args.iterations > MAX_ITERATIONS:  # 10^23 ran until killed
        raise ValueError(
            f"{args.iterations} iterations: at most {MAX_ITERATIONS:,} in one run (twelve days at a million a second)"
        )
    out = Path(args.out)
    if out.is_dir():
        raise ValueError(f"--out {out}: is a folder; give the blueprint's file (.npz)")
    try:  # a file where its folder should be: refused now, not after the first --save-every iterations
        make_folder(out.parent)
    except OSError as exc:
        print(f"deepstack blueprint train: error: {cannot_write(out, exc)}", file=sys.stderr)
        return 1
    if out.exists():
        bp = Blueprint.open(out, game)
        _keep_recorded(args, bp, out)
        print(f"resuming {out} at {bp.iterations:,} iterations", file=sys.stderr)
        earlier = _earlier_command(out, bp.iterations)
    else:
        args.sizing = args.sizing if args.sizing is not None else "1"
        args.abstraction = args.abstraction if args.abstraction is not None else "lossless"
        sizing = _sizing(args.sizing, game.num_rounds, args.max_raises)
        make_abstraction(args.abstraction, game)  # a bad name fails before the tree is built
        bp = Blueprint.create(game, sizing, args.abstraction)
        earlier = ""
    if args.workers > args.clusters:  # before Ray starts, not after
        raise ValueError(f"{args.workers} workers for {args.clusters} clusters: each worker needs a cluster")
    # every save ends a batch: resumed chunks then split the deals as one run does
    step = args.batch if args.workers > 0 else BATCH
    every = -(-args.save_every // step) * step
    if every != args.save_every:
        print(f"saving every {every:,} iterations (a multiple of the batch, {step:,})", file=sys.stderr)
    if args.iterations % step:
        print(
            f"note: {args.iterations:,} iterations is not a multiple of the batch ({step:,}): a later resume of {out} "
            "continues a training that differs (in its random draws, not its kind) from one run of the total",
            file=sys.stderr,
        )
    ray, started = (None, False)
    if args.workers > 0:
        ray, started = connect_ray(args.ray_address, args.workers if args.ray_address == "local" else None)
    try:
        left = args.iterations
        while left > 0:
            n = min(left, every)
            if args.workers > 0:
                train_distributed(bp, n, args.clusters, args.workers, seed=args.seed, batch=args.batch, ray=ray, progress=True)
            else:
                bp.train(n, seed=args.seed, progress=True, clusters=args.clusters)
            bp.save(out)
            left -= n
    finally:
        if started:
            ray.shutdown()
    if not out.exists():
        bp.save(out)
    if is_shipped(out):
        command = f"{earlier} && {train_command(args)}" if earlier else train_command(args)
        register_model(
            out,
            f"blueprint-{out.stem}",
            kind="blueprint",
            game=args.game,
            command=command,
            iterations=bp.iterations,
            abstraction=bp.abstraction.name,
            training_seconds=round(bp.seconds, 1),
        )
    rate = bp.iterations / bp.seconds if bp.seconds else 0.0
    print(
        dumps({"file": str(out), "iterations": bp.iterations, "seconds": round(bp.seconds, 1), "iterations_per_s": round(rate)})
    )
    return 0


def _keep_recorded(args: argparse.Namespace, bp: Blueprint, out: Path) -> None:
    """Fill the options left out from the resumed file; refuse, naming both values, any that differ
    (its tree's slots belong to those sizes and that abstraction)."""
    recorded = bp.tree.sizing
    recorded_text, recorded_cap = sizing_text(recorded), recorded[0].max_raises
    if args.sizing is not None or args.max_raises is not None:
        spec = args.sizing if args.sizing is not None else recorded_text
        cap = args.max_raises if args.max_raises is not None else recorded_cap
        if _sizing(spec, bp.tree.game.num_rounds, cap) != recorded:
            asked = f"--sizing {spec}" + (f" --max-raises {cap}" if cap is not None else "")
            raise ValueError(
                f"{out} was trained with --sizing {recorded_text}"
                + (f" --max-raises {recorded_cap}" if recorded_cap is not None else "")
                + f", not {asked}; leave them out to resume it, or use another --out"
            )
    if args.abstraction is not None and args.abstraction != bp.abstraction.name:
        raise ValueError(
            f"{out} was trained with --abstraction {bp.abstraction.name}, not {args.abstraction}; leave it out to "
            "resume it, or use another --out"
        )
    args.sizing, args.max_raises, args.abstraction = recorded_text, recorded_cap, bp.abstraction.name


def sizing_text(sizing: tuple[BetSizing, ...]) -> str:
    """The ``--sizing`` text of a tree's per-round sizes (one spec when every round has the same)."""

    def number(x: float) -> str:
        text = repr(float(x))
        return text[:-2] if text.endswith(".0") else text

    rounds = [";".join(",".join(number(x) for x in depth) for depth in s.bets) for s in sizing]
    return rounds[0] if len(set(rounds)) == 1 else "/".join(rounds)


def _earlier_command(out: Path, iterations: int) -> str:
    """The manifest's command for a shipped blueprint being resumed, if it made exactly this file's
    ``iterations`` (so that the entry of a file trained in steps lists every step)."""
    if not is_shipped(out):
        return ""
    manifest = manifest_path_for(out.resolve())
    path = str(out.resolve().relative_to(manifest.parent))
    entry = next((e for e in read_manifest(manifest)["models"].values() if e.get("path") == path), None)
    return str(entry["command"]) if entry and entry.get("iterations") == iterations and entry.get("command") else ""


def _abstraction(args: argparse.Namespace) -> int:
    try:
        private = tuple(int(x) for x in args.private.split(","))
    except ValueError:
        raise ValueError(f"--private {args.private!r}: expected three counts like 32,32,32") from None
    if len(private) != 3 or not all(1 <= p <= 255 for p in private) or not 1 <= args.clusters <= 255:
        raise ValueError("--private needs three counts in 1..255 and --clusters one in 1..255")
    if max(private) * args.clusters > 2**31 - 1:
        raise ValueError("too many buckets")
    out = Path(args.out)
    if out.is_dir():  # refused now, not after minutes of clustering
        raise ValueError(f"--out {out}: is a folder; give the tables' file (.npz)")
    try:
        make_folder(out.parent)
    except OSError as exc:
        print(f"deepstack blueprint abstraction: error: {cannot_write(out, exc)}", file=sys.stderr)
        return 1
    start = time.perf_counter()
    stats: dict[str, float] = {}
    tables = build_tables(
        BucketTable.load(resolve_model(args.flop_buckets)),
        BucketTable.load(resolve_model(args.turn_buckets)),
        private,  # type: ignore[arg-type]
        args.clusters,
        seed=args.seed,
        progress=True,
        public=args.public,
        stats=stats,
    )
    tables.save(out)
    seconds = time.perf_counter() - start
    if is_shipped(out):
        command = f"deepstack blueprint abstraction --out {args.out} --private {args.private} --clusters {args.clusters}"
        command += f" --seed {args.seed} --public {args.public}"
        register_model(out, out.stem, kind="blueprint_abstraction", game="hunl", command=command, seconds=round(seconds, 1))
    sizes = np.bincount(tables.flop_cluster, minlength=args.clusters).tolist()
    print(dumps({"file": str(out), "seconds": round(seconds, 1), "flops_per_cluster": sizes, **stats}))
    return 0


def train_command(args: argparse.Namespace) -> str:
    """The command line that made this run, for the manifest."""
    parts = ["deepstack blueprint train", args.game, str(args.iterations), "--out", args.out, "--sizing", args.sizing]
    if args.max_raises:
        parts += ["--max-raises", str(args.max_raises)]
    if args.abstraction != "lossless":
        parts += ["--abstraction", args.abstraction]
    if args.clusters > 1:
        parts += ["--clusters", str(args.clusters)]
    if args.workers:
        parts += ["--workers", str(args.workers), "--batch", str(args.batch)]
    parts += ["--seed", str(args.seed)]
    if args.save_every != 5_000_000:
        parts += ["--save-every", str(args.save_every)]
    return " ".join(shlex.quote(p) if i else p for i, p in enumerate(parts))


def _eval(args: argparse.Namespace) -> int:
    bp = Blueprint.open(args.file)
    game = bp.tree.game
    if bp.abstraction.name != "lossless":
        raise ValueError("exact evaluation needs a lossless abstraction of a small game")
    profile = blueprint_profile(bp, bp.abstraction.space, args.postprocess, args.threshold)  # type: ignore[attr-defined]
    e = profile_exploitability(profile)
    out = {
        "file": args.file,
        "iterations": bp.iterations,
        "postprocess": args.postprocess,
        "threshold": args.threshold,
        "exploitability_mbb_g": 1000 * e["exploitability"] / game.big_blind,
        "value0": e["value0"],
        "br0": e["br0"],
        "br1": e["br1"],
    }
    print(dumps(out))
    return 0
