"""``deepstack bench parity``: the same solves on the CPU and on CUDA, compared.

A GPU must give the answers the CPU gives. Each case is solved twice with the same solver
settings and iteration count, once per device, and the rows report the largest difference of
the root strategy (probability) and of the first round's average counterfactual values
(fraction of the pot), with each device's exploitability and seconds beside them. float64
runs the same torch phases on both devices (differences are summation order only); the CPU's
float32 runs through the fused C kernels, CUDA's through torch, so float32 rows differ more.

Cases: the standard river and turn spots (``agent/cli/spots.yaml``), a flop situation with the
shipped turn network at every depth-limit leaf, and a Leduc re-solve (CFR-D gadget) from the
root, once with round 2 solved exactly and once with the shipped Leduc network at round 2.
Without CUDA each case is one row saying it was skipped, so the command runs end to end anywhere.

A solve after a fixed number of iterations is not always well-conditioned: where regrets tie
(hands the suits make symmetric, actions worth the same), a rounding difference decides which
way regret matching breaks the tie, and the difference grows over the iterations. Measured on
the CPU alone in float64, ranges changed by 1e-15 relative move the turn spot's values by
0.007 of the pot after 40 iterations and the Leduc re-solve's exploitability from 0.35% to
0.71% of the pot, while the river spot moves by 5e-11. So each row also solves the case
again on the first device with its inputs changed at the precision's rounding level, three
independent draws of that change (``rounding_*``: the largest move): how far the solve itself
moves under rounding. A device difference of that
size is rounding; one far beyond it is a bug. For a network case the row also gives the
network's own largest output difference between the devices on the same inputs
(``net_max_diff``), and the inputs are changed by at least that much.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from agent.cli.common import HelpFormatter, example
from agent.cli.solve import DEFAULT_SPOTS
from agent.leaves.handnet import HandNetLeafValues
from agent.nets.manifest import load_value_net
from agent.solver.handspace import HandSpace
from agent.solver.resolve import Solution, SolverConfig, resolve, solve_ranges
from agent.solver.spots import load_spots
from agent.solver.tree import FCPA
from agent.training.datagen import _next_street_leaf
from agent.training.situations import both_all_in, draw_situation
from native.cards import cards_to_str
from protocol.gamedef import load_game
from protocol.state import HandState

#: the cases, in the order they run
CASES = ("river", "turn", "flop-net", "leduc-exact", "leduc-resolve")


@dataclass
class Case:
    """One solve, repeatable on any device: ``run(config, jitter, draw)`` returns the solution,
    with the inputs (ranges, the gadget's values) multiplied by ``1 + jitter * noise`` (the noise
    fixed by ``draw``)."""

    name: str
    pot: float
    run: Callable[[SolverConfig, float, int], Solution]
    notes: dict[str, Any] = field(default_factory=dict)


def _jittered(values: np.ndarray, jitter: float, seed: int = 12345, draw: int = 0) -> np.ndarray:
    """``values`` changed by ``jitter`` relative, the same noise for the same ``seed`` and
    ``draw`` (0: unchanged)."""
    if jitter == 0:
        return values
    noise = np.random.default_rng(seed + 1000 * draw).standard_normal(np.shape(values))
    return np.asarray(values, dtype=np.float64) * (1 + jitter * noise)


def _spot_case(name: str, iterations: int) -> Case:
    spots, _ = load_spots(DEFAULT_SPOTS)
    spot = spots[name]

    def run(config: SolverConfig, jitter: float = 0.0, draw: int = 0) -> Solution:
        ranges = [_jittered(r, jitter, seed, draw) for seed, r in enumerate(spot.ranges)]
        return solve_ranges(spot.state(), ranges, spot.sizing, _with(config, iterations))

    return Case(name, float(spot.pot), run, {"board": cards_to_str(spot.board)})


def _flop_net_case(iterations: int, seed: int = 0) -> Case:
    game = load_game("hunl")
    space = HandSpace(game)
    rng = np.random.default_rng(seed)
    sit = draw_situation(space, 1, rng)
    while both_all_in(game, sit):
        sit = draw_situation(space, 1, rng)
    state = HandState.at_round_start(game, 1, (sit.pot // 2, sit.pot // 2), sit.board)
    ranges = sit.ranges * space.valid(sit.board)
    ranges = ranges / ranges.sum(axis=1, keepdims=True)
    leaf = _next_street_leaf("hunl", "models/holdem/turn.pt", 1)

    def run(config: SolverConfig, jitter: float = 0.0, draw: int = 0) -> Solution:
        jittered = [_jittered(r, jitter, seed, draw) for seed, r in enumerate(ranges)]
        return solve_ranges(state, jittered, FCPA, _with(config, iterations), space=space, last_round=1, leaf_values=leaf)

    return Case("flop-net", float(sit.pot), run, {"leaves": "models/holdem/turn.pt", "pot": int(sit.pot)})


def _leduc_case(iterations: int, network: bool = True) -> Case:
    game = load_game("leduc-limit")
    space = HandSpace(game)
    state = HandState.initial(game)
    path = "models/leduc/leduc-limit.pt"
    nets: dict[str, HandNetLeafValues] = {}
    uniform = np.full(space.size, 1.0 / space.size)
    # opponent values the gadget holds it to: those of a full solve (both ranges uniform)
    full = solve_ranges(state, [uniform, uniform], FCPA, SolverConfig(iterations=300, device="cpu", dtype="float64"))
    opp_cfvs = full.values_at(0)[1]

    def run(config: SolverConfig, jitter: float = 0.0, draw: int = 0) -> Solution:
        ours, cfvs = _jittered(uniform, jitter, 0, draw), _jittered(opp_cfvs, jitter, 1, draw)
        if not network:
            return resolve(state, ours, cfvs, FCPA, _with(config, iterations), space=space)
        dev = str(config.device)
        if dev not in nets:
            net, entry = load_value_net(path, device=dev)
            nets[dev] = HandNetLeafValues(net, space, canonical=bool(entry.get("canonical_suits", False)))
        return resolve(state, ours, cfvs, FCPA, _with(config, iterations), space=space, last_round=0, leaf_values=nets[dev])

    if not network:
        return Case("leduc-exact", float(state.pot), run, {"leaves": "none (round 2 solved)", "gadget": True})
    return Case("leduc-resolve", float(state.pot), run, {"leaves": path, "gadget": True})


def _with(config: SolverConfig, iterations: int) -> SolverConfig:
    return replace(config, iterations=iterations)


def make_case(name: str, iterations: int | None = None) -> Case:
    """The parity case called ``name`` (one of ``CASES``), with each case's default iterations unless given."""
    if name in ("river", "turn"):
        return _spot_case(name, iterations or {"river": 200, "turn": 50}[name])
    if name == "flop-net":
        return _flop_net_case(iterations or 10)
    if name == "leduc-exact":
        return _leduc_case(iterations or 300, network=False)
    if name == "leduc-resolve":
        return _leduc_case(iterations or 300)
    raise ValueError(f"unknown parity case {name!r}: one of {', '.join(CASES)}")


def net_max_diff(path: str, devices: tuple[str, str], batch: int = 512, seed: int = 0) -> float:
    """The largest difference between a network's outputs on two devices for the same random
    inputs (ranges that sum to one, a pot feature in range): the network's own part of a gap."""
    loaded = [load_value_net(path, device=d) for d in devices]
    nets = [net for net, _ in loaded]
    spec = loaded[0][1].get("net", {})
    buckets, extra = int(spec.get("buckets", 0)), int(spec.get("extra", 0))
    g = torch.Generator().manual_seed(seed)
    ranges = torch.rand(2, batch, buckets, generator=g)
    ranges /= ranges.sum(dim=2, keepdim=True)
    x = torch.cat([torch.rand(batch, 1, generator=g), ranges[0], ranges[1], torch.rand(batch, extra, generator=g).round()], dim=1)
    with torch.no_grad():
        outs = [net(x.to(d)).cpu().double() for net, d in zip(nets, devices)]
    return float((outs[0] - outs[1]).abs().max())


#: relative change of the inputs for the rounding-sensitivity solve: a few units in the last place
ROUNDING = {"float32": 4 * float(np.finfo(np.float32).eps), "float64": 4 * float(np.finfo(np.float64).eps)}
#: independent draws of that change; the row keeps the largest move. One draw can land far below
#: the solve's usual sensitivity: the Leduc re-solve with its network (float32, 40 iterations) moved
#: 0.0002 of the pot under one draw and 0.002-0.03 under eight others (docs/gpu.md)
ROUNDING_DRAWS = 3


def _timed(case: Case, config: SolverConfig, jitter: float = 0.0, draw: int = 0) -> tuple[Solution, float]:
    start = time.perf_counter()
    sol = case.run(config, jitter, draw)
    if config.device == "cuda":
        torch.cuda.synchronize()
    return sol, time.perf_counter() - start


def compare(
    case: Case,
    dtype: str,
    devices: tuple[str, str] = ("cpu", "cuda"),
    algorithm: str = "dcfr",
    rounding_draws: int = ROUNDING_DRAWS,
) -> dict[str, Any]:
    """Solve ``case`` on both ``devices`` with one config; the row of their differences, and of
    the first device's solve against itself with rounding-level changes of the inputs, the
    largest over ``rounding_draws`` draws of the noise (``("cpu", "cpu")`` checks that a solve
    repeats itself exactly, on any machine)."""
    a, b = devices
    row: dict[str, Any] = {
        "bench": f"parity.{case.name}",
        "dtype": dtype,
        "devices": f"{a}-{b}",
        "impl": "ours",
        "unit": "probability",
        "device": b,  # the device checked against the first (the CPU's reference solve)
        "threads": torch.get_num_threads(),
        **case.notes,
    }
    if "cuda" in devices and not torch.cuda.is_available():
        return {**row, "value": None, "skipped": "no CUDA device: nothing to compare"}
    sols, secs = [], []
    for dev in devices:
        config = SolverConfig(algorithm=algorithm, device=dev, dtype=dtype)  # type: ignore[arg-type]
        sol, sec = _timed(case, config)
        sols.append(sol)
        secs.append(sec)
    jitter = ROUNDING[dtype]
    leaves = str(case.notes.get("leaves", ""))
    if leaves.endswith(".pt"):  # the network rounds differently on each device too: jitter at least that much
        row["net_max_diff"] = float(f"{net_max_diff(leaves, devices):.3g}")
        jitter = max(jitter, row["net_max_diff"])
    config_a = SolverConfig(algorithm=algorithm, device=a, dtype=dtype)  # type: ignore[arg-type]
    moved = [_timed(case, config_a, jitter, draw)[0] for draw in range(rounding_draws)]
    strat = float(np.abs(sols[0].root_strategy() - sols[1].root_strategy()).max())
    values = float(np.abs(sols[0].values_at(0) - sols[1].values_at(0)).max()) / case.pot
    expl = [100 * s.exploitability()["exploitability"] / case.pot for s in sols]
    moved_strat = max(float(np.abs(sols[0].root_strategy() - m.root_strategy()).max()) for m in moved)
    moved_values = max(float(np.abs(sols[0].values_at(0) - m.values_at(0)).max()) for m in moved) / case.pot
    moved_expl = max(100 * m.exploitability()["exploitability"] / case.pot for m in moved)
    rounding = {
        "rounding_jitter": float(f"{jitter:.3g}"),
        "rounding_draws": rounding_draws,
        "rounding_strategy_diff": float(f"{moved_strat:.3g}"),
        "rounding_value_diff_pot": float(f"{moved_values:.3g}"),
        f"rounding_exploitability_pct_{a}": round(moved_expl, 5),
    }
    return {
        **row,
        "value": float(f"{strat:.3g}"),
        "max_strategy_diff": float(f"{strat:.3g}"),
        "max_value_diff_pot": float(f"{values:.3g}"),
        f"exploitability_pct_{a}": round(expl[0], 5),
        f"exploitability_pct_{b}": round(expl[1], 5),
        **rounding,
        "iterations": int(sols[0].result.iterations),
        f"seconds_{a}": round(secs[0], 4),
        f"seconds_{b}": round(secs[1], 4),
        "hands": int(len(sols[0].hands)),
        "rows": int(sols[0].lookahead.num_rows),
        "gpu": torch.cuda.get_device_name(0) if "cuda" in devices else None,
    }


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``deepstack bench parity`` (also shown by ``deepstack bench parity --help``)."""
    p = argparse.ArgumentParser(
        prog="deepstack bench parity",
        description=" ".join(__doc__.split("\n\n")[0].split()),
        epilog=example("deepstack bench parity --case leduc-resolve", "without CUDA each case is one row saying it was skipped"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--case", action="append", choices=CASES, default=None, help="cases to run, repeatable (default: all)")
    p.add_argument(
        "--dtype",
        action="append",
        choices=["float32", "float64"],
        default=None,
        help="solver precisions to compare (default: both)",
    )
    p.add_argument(
        "--iterations",
        type=int,
        default=None,
        help="iterations per solve (default per case: river 200, turn 50, flop-net 10, leduc 300)",
    )
    return p


def main(argv: list[str]) -> int:
    """Run ``deepstack bench parity``: one JSON line per case and precision (a skipped row per case without CUDA)."""
    args = build_parser().parse_args(argv)
    if args.iterations is not None and args.iterations <= 0:
        print("deepstack bench parity: error: --iterations must be positive", file=sys.stderr)
        return 2
    for name in args.case or CASES:
        if not torch.cuda.is_available():  # say what is skipped without building the case
            print(
                json.dumps(
                    {
                        "bench": f"parity.{name}",
                        "impl": "ours",
                        "value": None,
                        "unit": "probability",
                        "device": "cuda",
                        "threads": torch.get_num_threads(),
                        "skipped": "no CUDA device: nothing to compare",
                    }
                ),
                flush=True,
            )
            continue
        case = make_case(name, args.iterations)
        for dtype in args.dtype or ["float32", "float64"]:
            print(json.dumps(compare(case, dtype)), flush=True)
    return 0
