"""``deepstack buckets``: the hold'em card abstraction (bucket tables) and the pre-flop check-down matrix."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agent.cli.common import (
    HelpFormatter,
    bins,
    cannot_write,
    example,
    path_arg,
    positive_int,
    seed,
)
from agent.leaves.equity_matrix import preflop_matrix, save_preflop
from agent.nets.buckets import fit_buckets
from agent.nets.manifest import ModelError, check_registrable, register_model


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack buckets`` (the flop and turn card abstraction, the pre-flop check-down matrix)."""
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
    p.add_argument("--bins", type=bins, default=50, help="equity histogram bins, at most 1000 (default 50)")
    p.add_argument("--preflop-boards", type=positive_int, default=10_000, help="random boards of the pre-flop matrix")
    p.add_argument("--seed", type=seed, default=0, help="seed of the boards and of k-means")
    p.add_argument("--out", type=path_arg, default="models/holdem", help="output folder (default models/holdem)")
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
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file, a folder we may not write in, ...: before minutes of clustering
        print(f"deepstack buckets: error: {cannot_write(out, exc)}", file=sys.stderr)
        return 1
    try:
        for name, file in _outputs(args.street):  # a manifest we could not update: before the work
            check_registrable(out / file, name)
        _write_buckets(args, out, command)
    except (ValueError, ModelError) as exc:  # e.g. fewer hands on the boards than buckets
        print(f"deepstack buckets: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # no space left, ...
        print(f"deepstack buckets: error: {cannot_write(out, exc)}", file=sys.stderr)
        return 1
    return 0


def _outputs(street: str) -> list[tuple[str, str]]:
    """The manifest names and file names that ``--street`` writes."""
    names = [f"buckets-{s}" for s in ("flop", "turn") if street in (s, "all")]
    names += ["preflop-checkdown"] if street in ("preflop", "all") else []
    return [(name, f"{name}.npz") for name in names]


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
