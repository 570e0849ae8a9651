"""``deepstack bench generate``: how many training situations per second data generation solves.

Rows (JSON lines): ``generate.leduc`` (round-2 situations of no-limit Leduc, solved in
batches and, for comparison, one per solver call) and ``generate.turn`` (hold'em turn
situations with full 1326-hand ranges, fold/call/pot/all-in, solved to the end of the game
with no card abstraction). The flop row needs a turn network, which is reported as missing
when there is none. DeepStack's reference: about 550 core-seconds per turn situation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agent.datagen import GenerateSpec, both_all_in, draw_situation, generate_shard, solve_situation
from agent.handspace import HandSpace
from agent.resolve import SolverConfig, pick_device
from protocol.gamedef import load_game

#: DeepStack (supplement): 10M turn situations took 175 core-years, i.e. ~550 core-seconds each
DEEPSTACK_CORE_S_PER_TURN_SITUATION = 550.0


def _row(bench: str, value: float, unit: str, device: str, **context: Any) -> dict[str, Any]:
    return {"bench": bench, "value": float(f"{value:.6g}"), "unit": unit, "impl": "ours", "device": device,
            "threads": torch.get_num_threads(), **context}


def _time_shard(spec: GenerateSpec, count: int) -> float:
    start = time.perf_counter()
    generate_shard(spec, 0, count)
    return time.perf_counter() - start


def bench_leduc(situations: int, iterations: int) -> list[dict[str, Any]]:
    rows = []
    spec = GenerateSpec(game="leduc", round=1, situations=situations, shard_size=situations, seed=1, iterations=iterations)
    seconds = _time_shard(spec, situations)
    rows.append(_row("generate.leduc", situations / seconds, "situations/s", "cpu", mode="batched", situations=situations,
                     iterations=iterations, algorithm=spec.algorithm, seconds=round(seconds, 3)))
    single = max(1, min(10, situations))
    space = HandSpace(load_game("leduc"))
    rng = np.random.default_rng(1)
    config = SolverConfig(algorithm=spec.algorithm, iterations=iterations, device="cpu", dtype="float64")
    start = time.perf_counter()
    for _ in range(single):
        solve_situation(space, 1, draw_situation(space, 1, rng), config)
    seconds = time.perf_counter() - start
    rows.append(_row("generate.leduc", single / seconds, "situations/s", "cpu", mode="one-per-solver-call", situations=single,
                     iterations=iterations, algorithm=spec.algorithm, seconds=round(seconds, 3)))
    return rows


def bench_turn(situations: int, iterations: int, algorithm: str, device: str) -> dict[str, Any]:
    """Turn situations drawn as ``deepstack generate --street turn`` draws them (seeded), each solved
    and timed; both-all-in situations (a showdown, no solve) are counted but reported apart."""
    dev = pick_device(device)
    game = load_game("hunl")
    space = HandSpace(game)
    rng = np.random.default_rng([1, 0])
    config = SolverConfig(algorithm=algorithm, iterations=iterations, device=str(dev), dtype="float32")
    times, allin = [], 0
    for _ in range(situations):
        sit = draw_situation(space, 2, rng)
        start = time.perf_counter()
        solve_situation(space, 2, sit, config)
        elapsed = time.perf_counter() - start
        if both_all_in(game, sit):
            allin += 1
        else:
            times.append(elapsed)
    solved = sum(times)
    rate = len(times) / solved if solved > 0 else 0.0
    cores = os.cpu_count() or 1
    return _row("generate.turn", rate, "situations/s", dev.type, situations=len(times), allin_skipped=allin, iterations=iterations,
                algorithm=algorithm, seconds_per_situation=[round(t, 2) for t in times], hands=1326, sizing="fold,call,pot,all-in",
                goal_cpu=0.25, goal_h100=100.0, deepstack_core_s_per_situation=DEEPSTACK_CORE_S_PER_TURN_SITUATION,
                deepstack_rate_on_these_cores=round(cores / DEEPSTACK_CORE_S_PER_TURN_SITUATION, 5), cpu_cores=cores)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="deepstack bench generate", description=__doc__.split("\n\n")[0])
    p.add_argument("--street", action="append", choices=["leduc", "turn", "flop"], default=None,
                   help="which rows (default: leduc and turn)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--leduc-situations", type=int, default=2000)
    p.add_argument("--turn-situations", type=int, default=3, help="turn situations to draw (default 3)")
    p.add_argument("--iterations", type=int, default=1000, help="CFR iterations per situation (default 1000)")
    p.add_argument("--turn-algorithm", default="cfr+", choices=["cfr+", "dcfr", "hybrid", "dcfr+"])
    args = p.parse_args(argv)
    streets = args.street or ["leduc", "turn"]
    if min(args.leduc_situations, args.turn_situations, args.iterations) <= 0:
        print("deepstack bench generate: error: counts and --iterations must be positive", file=sys.stderr)
        return 2
    if "leduc" in streets:
        for row in bench_leduc(args.leduc_situations, args.iterations):
            print(json.dumps(row), flush=True)
    if "turn" in streets:
        print(json.dumps(bench_turn(args.turn_situations, args.iterations, args.turn_algorithm, args.device)), flush=True)
    if "flop" in streets:
        turn_net = Path(__file__).resolve().parent.parent / "models" / "holdem" / "turn.pt"
        if not turn_net.exists():
            print(f"deepstack bench generate: flop skipped: flop situations need a turn network ({turn_net} is missing)", file=sys.stderr)
    return 0
