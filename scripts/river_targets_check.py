"""River training targets made on two machines (a GPU's shard and the same situations solved again
on a CPU), each measured against a reference solve of many more iterations in float64.

Also solves the situations again here in float32 through the torch showdown (the code the GPU runs,
forced onto the CPU) and in float64, so that a difference can be put down to the device or to the
arithmetic. Used for docs/gpu.md ("Are the GPU's river targets the CPU's?"):

    python scripts/river_targets_check.py GPU_SHARD.npz CPU_SHARD.npz --situations 24 --also 220 69 104 123

Errors are range-weighted mean absolute differences per situation, as a fraction of the pot (the
worse of the two players).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import native.torch_showdown as torch_showdown
from agent.solver.handspace import HandSpace
from agent.training.datagen import solve_situations
from agent.training.generate_spec import GenerateSpec
from agent.training.situations import Situation
from protocol.gamedef import load_game


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("gpu_shard", help="a river shard made on the GPU")
    p.add_argument("cpu_shard", help="the same situations solved on a CPU (same seed and settings)")
    p.add_argument("--situations", type=int, default=24, help="the first N situations (default 24)")
    p.add_argument("--also", type=int, nargs="*", default=[], help="further situations by index")
    p.add_argument("--iterations", type=int, default=200, help="the shards' iterations (default 200)")
    p.add_argument("--reference-iterations", type=int, default=2000, help="the reference's (default 2000)")
    args = p.parse_args()
    torch.set_num_threads(1)
    gpu, cpu = np.load(args.gpu_shard), np.load(args.cpu_shard)
    for key in ("boards", "pots", "ranges"):
        if not np.array_equal(gpu[key], cpu[key]):
            raise SystemExit(f"the shards hold other situations ({key} differ)")
    idx = list(range(args.situations)) + list(args.also)
    space = HandSpace(load_game("hunl"))
    sits = [
        Situation(tuple(int(c) for c in cpu["boards"][i]), int(cpu["pots"][i]), cpu["ranges"][i].astype(np.float64)) for i in idx
    ]

    def config(iterations: int, dtype: str):  # noqa: ANN202 - the solver's config
        spec = GenerateSpec(game="hunl", round=3, situations=1, iterations=iterations, alternating=True, device="cpu")
        return spec.solver_config(dtype)

    start = time.time()
    ref = solve_situations(space, 3, sits, config(args.reference_iterations, "float64"), None, None)
    print(f"reference (torch float64, {args.reference_iterations} iterations): {time.time() - start:.0f} s", flush=True)
    t64 = solve_situations(space, 3, sits, config(args.iterations, "float64"), None, None)
    plain_init = torch_showdown.TorchShowdown.__init__

    def torch_backend(self, *a, **k) -> None:  # noqa: ANN001, ANN002, ANN003 - the showdown's own arguments
        k["backend"] = "torch"
        plain_init(self, *a, **k)

    torch_showdown.TorchShowdown.__init__ = torch_backend  # the float32 code the GPU runs, on the CPU
    try:
        t32 = solve_situations(space, 3, sits, config(args.iterations, "float32"), None, None)
    finally:
        torch_showdown.TorchShowdown.__init__ = plain_init

    def error(values: np.ndarray, j: int) -> float:
        w = cpu["ranges"][idx[j]]
        return float(((np.abs(values - ref[j]) * w).sum(-1) / w.sum(-1)).max())

    rows = {
        "GPU shard (float32, torch)": [error(gpu["values"][i], j) for j, i in enumerate(idx)],
        "CPU shard (float32, C kernels)": [error(cpu["values"][i], j) for j, i in enumerate(idx)],
        "here, float32, torch": [error(v, j) for j, v in enumerate(t32)],
        "here, float64, torch": [error(v, j) for j, v in enumerate(t64)],
    }
    n = args.situations
    for name, errs in rows.items():
        e = np.array(errs)
        also = " ".join(f"{x:.4f}" for x in e[n:])
        print(
            f"{name}: first {n}: mean {e[:n].mean():.4f} median {np.median(e[:n]):.4f} max {e[:n].max():.4f}"
            + (f"; also: {also}" if also else "")
        )


if __name__ == "__main__":
    main()
