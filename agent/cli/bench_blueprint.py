"""``deepstack bench blueprint``: MCCFR iterations per second of the blueprint's equilibrium finder on
Leduc (lossless) or hold'em (the shipped abstraction and the shipped blueprint's tree): one process,
one process with public clusters, and the distributed two-pass scheme on Ray in local mode with each
worker count asked for, each both in all (``blueprint.ray``: the actors' start and the final merge
included) and steady (``blueprint.ray_steady``: the batches only); the speed-up of W workers over the
first count, measured in the same run on the same machine."""

from __future__ import annotations

import argparse
import json
import os
import sys

from agent.blueprint.distributed import train_distributed
from agent.blueprint.mccfr import Blueprint
from agent.cli.common import HelpFormatter, example, positive_int
from agent.solver.tree import FCPA, BetSizing
from agent.training.cluster import ClusterError, connect_ray
from protocol.gamedef import load_game


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``deepstack bench blueprint`` (also shown by ``deepstack bench blueprint --help``)."""
    p = argparse.ArgumentParser(
        prog="deepstack bench blueprint",
        description=" ".join(__doc__.split("\n\n")[0].split()),
        epilog=example("deepstack bench blueprint --iterations 200000 --workers 1,2"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--game", default="leduc-limit", choices=["leduc", "leduc-limit", "hunl"], help="the game")
    p.add_argument("--iterations", type=positive_int, default=1_000_000, help="iterations per measurement")
    p.add_argument(
        "--clusters",
        type=positive_int,
        default=None,
        help="public clusters (default: 3 in Leduc, the abstraction's 8 in hold'em)",
    )
    p.add_argument("--workers", default="1,2", help="worker counts of the distributed runs, comma separated (none: '')")
    p.add_argument("--batch", type=positive_int, default=500, help="deals per trunk update of the distributed runs (at least 1)")
    return p


def _row(name: str, iterations: int, seconds: float, **context: object) -> dict:
    return {
        "bench": f"blueprint.{name}",
        "value": round(iterations / seconds, 1),
        "unit": "iterations/s",
        "impl": "ours",
        "device": "cpu",
        "threads": 1,
        "cpus": os.cpu_count(),
        "iterations": iterations,
        "seconds": round(seconds, 3),
        **context,
    }


def main(argv: list[str]) -> int:
    """Run ``deepstack bench blueprint``: print one JSON line of iterations/s per measurement; 2 on bad options."""
    args = build_parser().parse_args(argv)
    try:
        workers = [int(w) for w in args.workers.split(",") if w.strip()]
    except ValueError:
        print(f"deepstack bench blueprint: error: --workers {args.workers!r}: expected counts like 1,2", file=sys.stderr)
        return 2
    holdem = args.game == "hunl"
    clusters = args.clusters if args.clusters is not None else (8 if holdem else 3)
    if args.iterations < 1 or any(not 1 <= w <= clusters for w in workers):
        print("deepstack bench blueprint: error: --iterations >= 1 and each worker count in 1..--clusters", file=sys.stderr)
        return 2
    game = load_game(args.game)
    n = args.iterations

    def fresh() -> Blueprint:
        if holdem:  # the shipped hold'em blueprint's tree and abstraction
            return Blueprint.create(game, BetSizing.parse("0.5,1;1", max_raises=3, all_in_past_cap=True), "holdem")
        return Blueprint.create(game, FCPA)

    try:  # a cluster count the game's boards cannot hold, named before any measurement
        fresh().train(1, seed=1, clusters=clusters)
    except ValueError as exc:
        print(f"deepstack bench blueprint: error: --clusters {clusters}: {exc}", file=sys.stderr)
        return 2
    seconds = fresh().train(n, seed=1)
    print(json.dumps(_row("single", n, seconds, game=args.game, clusters=1)), flush=True)
    seconds = fresh().train(n, seed=1, clusters=clusters)
    print(json.dumps(_row("single_clusters", n, seconds, game=args.game, clusters=clusters)), flush=True)
    if not workers:
        return 0
    try:
        ray, started = connect_ray("local", max(workers))
    except ClusterError as exc:
        print(f"deepstack bench blueprint: error: {exc}", file=sys.stderr)
        return 2
    try:
        base = None
        for w in workers:
            stats: dict[str, float] = {}
            seconds = train_distributed(fresh(), n, clusters, w, seed=1, batch=args.batch, ray=ray, stats=stats)
            context = dict(game=args.game, clusters=clusters, workers=w, batch=args.batch)
            row = _row("ray", n, seconds, **context, start_s=round(stats["start_s"], 3), merge_s=round(stats["merge_s"], 3))
            steady = _row("ray_steady", n, seconds - stats["start_s"] - stats["merge_s"], **context)
            if base is None:
                base = row["value"], steady["value"]
            row["speedup_over_first"] = round(row["value"] / base[0], 3)
            steady["speedup_over_first"] = round(steady["value"] / base[1], 3)
            print(json.dumps(row), flush=True)
            print(json.dumps(steady), flush=True)
    finally:
        if started:
            ray.shutdown()
    return 0
