"""How close a turn solve that ends at depth-limit leaves comes to the turn solved to the end.

Random turn situations as ``deepstack generate --street turn`` draws them (R(S,p) ranges, pot
intervals; fold, call, pot, all-in), solved to the end of the game (the reference) and
to the end of the turn: with check-down leaves, with each shipped river network over every river card
at the leaves, and with the small river network where the leaf's chips behind over the pot exceed
``--checkdown-spr`` and check-down elsewhere (``checkdown_spr`` in config.yaml). Per situation and
leaf kind: the range-weighted mean absolute error of both players' root counterfactual values, as a
fraction of the pot, and the seconds it took.

    python scripts/leaf_accuracy.py --situations 12 --iterations 300 --seed 5
    python scripts/leaf_accuracy.py --river-net CANDIDATE.pt --river-net models/holdem/river-small.pt
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agent.bots.config import HoldemModels
from agent.bots.settings import data_file
from agent.leaves.by_stack import LeavesByStack
from agent.leaves.equity_matrix import CheckdownMatrices
from agent.leaves.holdem import BucketNetLeafValues, CheckdownLeafValues
from agent.nets.buckets import RiverStrength
from agent.nets.manifest import load_value_net
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig
from agent.training.datagen import solve_situation_checked
from agent.training.situations import both_all_in, draw_situation
from protocol.gamedef import load_game

RIVER_NETS = ("models/holdem/river-small.pt", "models/holdem/river.pt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--situations", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=300, help="DCFR iterations of every solve")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--checkdown-spr", type=float, default=1.0, help="the split leaves' stack-to-pot ratio")
    parser.add_argument("--skip-large", action="store_true", help="leave river.pt (7 x 500) out: it is slow")
    parser.add_argument(
        "--river-net",
        action="append",
        metavar="PATH",
        help="river network(s) at the leaves instead of the shipped ones (repeat; each beside its manifest; "
        "the first is also the split's); e.g. a candidate against a copy of the shipped network",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    game = load_game("hunl")
    space = HandSpace(game)
    leaves = {"checkdown": CheckdownLeafValues(CheckdownMatrices(data_file(HoldemModels().preflop_checkdown)))}
    paths = args.river_net or (RIVER_NETS[:1] if args.skip_large else RIVER_NETS)
    for path in paths:
        net, entry = load_value_net(path)
        leaves[path] = BucketNetLeafValues(net, game, RiverStrength(int(entry["river_buckets"])))
    split = f"split at spr {args.checkdown_spr:g}"
    leaves[split] = LeavesByStack(leaves[paths[0]], leaves["checkdown"], min(game.stack), args.checkdown_spr)
    config = SolverConfig(iterations=args.iterations, device="cpu")
    rng = np.random.default_rng(args.seed)
    errors: dict[str, list[float]] = {k: [] for k in leaves}
    done = 0
    while done < args.situations:
        sit = draw_situation(space, 2, rng)
        if both_all_in(game, sit):
            continue
        done += 1
        start = time.perf_counter()
        exact, _ = solve_situation_checked(space, 2, sit, config, check=False)
        row = [f"pot {sit.pot:5d}: to the end {time.perf_counter() - start:.1f} s"]
        ranges = sit.ranges * space.valid(sit.board)
        ranges = ranges / ranges.sum(axis=1, keepdims=True)
        for name, leaf in leaves.items():
            start = time.perf_counter()
            values, _ = solve_situation_checked(space, 2, sit, config, check=False, leaf_values=leaf)
            err = float(np.mean([(ranges[p] * np.abs(values[p] - exact[p])).sum() for p in range(2)]))
            errors[name].append(err)
            row.append(f"{name} {err:.4f} ({time.perf_counter() - start:.1f} s)")
        print(" | ".join(row), flush=True)
    for name, errs in errors.items():
        e = np.array(errs)
        half = 1.96 * e.std(ddof=1) / np.sqrt(len(e)) if len(e) > 1 else float("nan")
        print(f"{name}: mean error {e.mean():.4f} of the pot (± {half:.4f}), median {np.median(e):.4f}, {len(e)} situations")


if __name__ == "__main__":
    main()
