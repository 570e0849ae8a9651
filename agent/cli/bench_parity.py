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

Strategies after a fixed number of iterations are not a well-conditioned thing to compare:
hands that the suits make exactly symmetric tie, and a rounding difference decides which way
regret matching breaks the tie (on the Leduc network re-solve, a relative change of 1e-7 in
the network's outputs moves the root strategy by 0.008). The rows therefore report values and
exploitability beside the strategy, and for a network case the network's own largest output
difference between the devices on the same inputs (``net_max_diff``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import torch

from agent.cli.solve import DEFAULT_SPOTS
from agent.leaves.handnet import HandNetLeafValues
from agent.nets.manifest import load_value_net
from agent.solver.handspace import HandSpace
from agent.solver.resolve import Solution, SolverConfig, resolve, solve_ranges
from agent.solver.spots import load_spots
from agent.solver.tree import FCPA
from agent.training.datagen import _next_street_leaf, both_all_in, draw_situation
from native.cards import cards_to_str
from protocol.gamedef import load_game
from protocol.state import HandState

#: the cases, in the order they run
CASES = ("river", "turn", "flop-net", "leduc-exact", "leduc-resolve")


@dataclass
class Case:
    """One solve, repeatable on any device: ``run(config)`` returns the solution."""

    name: str
    pot: float
    run: Callable[[SolverConfig], Solution]
    notes: dict[str, Any] = field(default_factory=dict)


def _spot_case(name: str, iterations: int) -> Case:
    spots, _ = load_spots(DEFAULT_SPOTS)
    spot = spots[name]

    def run(config: SolverConfig) -> Solution:
        return solve_ranges(spot.state(), list(spot.ranges), spot.sizing, _with(config, iterations))


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
    leaf = _next_street_leaf("hunl", "models/holdem/turn.pt")

    def run(config: SolverConfig) -> Solution:
        return solve_ranges(state, list(ranges), FCPA, _with(config, iterations), space=space, last_round=1, leaf_values=leaf)

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

    def run(config: SolverConfig) -> Solution:
        if not network:
            return resolve(state, uniform, opp_cfvs, FCPA, _with(config, iterations), space=space)
        dev = str(config.device)
        if dev not in nets:
            net, entry = load_value_net(path, device=dev)
            nets[dev] = HandNetLeafValues(net, space, canonical=bool(entry.get("canonical_suits", False)))
        return resolve(state, uniform, opp_cfvs, FCPA, _with(config, iterations), space=space, last_round=0,
                       leaf_values=nets[dev])

    if not network:
        return Case("leduc-exact", float(state.pot), run, {"leaves": "none (round 2 solved)", "gadget": True})
    return Case("leduc-resolve", float(state.pot), run, {"leaves": path, "gadget": True})


def _with(config: SolverConfig, iterations: int) -> SolverConfig:
    return replace(config, iterations=iterations)


def make_case(name: str, iterations: int | None = None) -> Case:
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
    nets = [load_value_net(path, device=d)[0] for d in devices]
    _, entry = load_value_net(path)
    spec = entry.get("net", {})
    buckets, extra = int(spec.get("buckets", 0)), int(spec.get("extra", 0))
    g = torch.Generator().manual_seed(seed)
    ranges = torch.rand(2, batch, buckets, generator=g)
    ranges /= ranges.sum(dim=2, keepdim=True)
    x = torch.cat([torch.rand(batch, 1, generator=g), ranges[0], ranges[1], torch.rand(batch, extra, generator=g).round()], dim=1)
    with torch.no_grad():
        outs = [net(x.to(d)).cpu().double() for net, d in zip(nets, devices)]
    return float((outs[0] - outs[1]).abs().max())


def _timed(case: Case, config: SolverConfig) -> tuple[Solution, float]:
    start = time.perf_counter()
    sol = case.run(config)
    if config.device == "cuda":
        torch.cuda.synchronize()
    return sol, time.perf_counter() - start


def compare(case: Case, dtype: str, devices: tuple[str, str] = ("cpu", "cuda"), algorithm: str = "dcfr") -> dict[str, Any]:
    """Solve ``case`` on both ``devices`` with one config; the row of their differences
    (``("cpu", "cpu")`` checks that a solve repeats itself exactly, on any machine)."""
    a, b = devices
    row: dict[str, Any] = {"bench": f"parity.{case.name}", "dtype": dtype, "devices": f"{a}-{b}", "impl": "ours",
                           "unit": "probability", **case.notes}
    if "cuda" in devices and not torch.cuda.is_available():
        return {**row, "value": None, "skipped": "no CUDA device: nothing to compare"}
    sols, secs = [], []
    for dev in devices:
        config = SolverConfig(algorithm=algorithm, device=dev, dtype=dtype)  # type: ignore[arg-type]
        sol, sec = _timed(case, config)
        sols.append(sol)
        secs.append(sec)
    strat = float(np.abs(sols[0].root_strategy() - sols[1].root_strategy()).max())
    values = float(np.abs(sols[0].values_at(0) - sols[1].values_at(0)).max()) / case.pot
    expl = [100 * s.exploitability()["exploitability"] / case.pot for s in sols]
    leaves = str(case.notes.get("leaves", ""))
    if leaves.endswith(".pt"):
        row["net_max_diff"] = float(f"{net_max_diff(leaves, devices):.3g}")
    return {
        **row,
        "value": float(f"{strat:.3g}"),
        "max_strategy_diff": float(f"{strat:.3g}"),
        "max_value_diff_pot": float(f"{values:.3g}"),
        f"exploitability_pct_{a}": round(expl[0], 5),
        f"exploitability_pct_{b}": round(expl[1], 5),
        "iterations": int(sols[0].result.iterations),
        f"seconds_{a}": round(secs[0], 4),
        f"seconds_{b}": round(secs[1], 4),
        "hands": int(len(sols[0].hands)),
        "rows": int(sols[0].lookahead.num_rows),
        "threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if "cuda" in devices else None,
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="deepstack bench parity", description=__doc__.split("\n\n")[0])
    p.add_argument("--case", action="append", choices=CASES, default=None, help="cases to run (default: all)")
    p.add_argument("--dtype", action="append", choices=["float32", "float64"], default=None,
                   help="solver precisions to compare (default: both)")
    p.add_argument("--iterations", type=int, default=None,
                   help="iterations per solve (default per case: river 200, turn 50, flop-net 10, leduc 300)")
    args = p.parse_args(argv)
    if args.iterations is not None and args.iterations <= 0:
        print("deepstack bench parity: error: --iterations must be positive", file=sys.stderr)
        return 2
    for name in args.case or CASES:
        if not torch.cuda.is_available():  # say what is skipped without building the case
            print(json.dumps({"bench": f"parity.{name}", "impl": "ours", "value": None, "unit": "probability",
                              "skipped": "no CUDA device: nothing to compare"}), flush=True)
            continue
        case = make_case(name, args.iterations)
        for dtype in args.dtype or ["float32", "float64"]:
            print(json.dumps(compare(case, dtype)), flush=True)
    return 0
