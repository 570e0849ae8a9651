"""Where a re-solve's time goes on a device: torch.profiler over a fixed number of solver
iterations of a standard spot, the top operators by device time and the kernel launches per
iteration. ``python scripts/gpu_profile.py --spot turn --device cuda --iterations 50``."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import torch
from torch.profiler import ProfilerActivity, profile

from agent.cli.solve import DEFAULT_SPOTS
from agent.solver.resolve import SolverConfig, solve_ranges
from agent.solver.spots import load_spots


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spot", default="turn")
    p.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--rows", type=int, default=25, help="operators listed")
    args = p.parse_args()
    spots, _ = load_spots(DEFAULT_SPOTS)
    spot = spots[args.spot]
    config = SolverConfig(device=args.device, dtype=args.dtype, iterations=5)
    solve_ranges(spot.state(), list(spot.ranges), spot.sizing, config)  # warm-up: allocator, kernels
    cuda = args.device == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    config = replace(config, iterations=args.iterations)
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        sol = solve_ranges(spot.state(), list(spot.ranges), spot.sizing, config)
        if cuda:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    key = "cuda_time_total" if cuda else "cpu_time_total"
    events = prof.key_averages()
    kernels = sum(e.count for e in events if cuda and e.device_type == torch.autograd.DeviceType.CUDA)
    device_us = sum(getattr(e, "self_device_time_total", 0) or 0 for e in events) if cuda else None
    summary = {
        "bench": f"profile.{args.spot}",
        "device": args.device,
        "dtype": args.dtype,
        "iterations": args.iterations,
        "seconds": round(seconds, 4),
        "ms_per_iteration": round(1000 * seconds / args.iterations, 3),
        "kernel_launches": kernels,
        "kernels_per_iteration": round(kernels / args.iterations, 1) if cuda else None,
        "device_busy_s": round(device_us / 1e6, 4) if device_us is not None else None,
        "rows": sol.lookahead.num_rows,
        "hands": int(len(sol.hands)),
    }
    print(json.dumps(summary), flush=True)
    print(events.table(sort_by=key, row_limit=args.rows))


if __name__ == "__main__":
    main()
