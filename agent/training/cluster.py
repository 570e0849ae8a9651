"""``deepstack generate --ray-address``: the same data generation on a Ray cluster.

One Ray task per missing shard. A shard is a function of ``(spec, shard index)`` only, so
it does not matter which machine solves it: the driver receives each shard's arrays and
writes them exactly as a local run does (atomically, with the same metadata), so outputs,
resuming and the recorded command are the same. The cluster's machines need this package
installed (e.g. the project's Docker image); no shared filesystem is needed. Ray is an
optional extra (``pip install -e '.[ray]'``) so the base install stays light.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from agent.training.data_folder import missing_shards, start_output, write_shard
from agent.training.datagen import timed_shard
from agent.training.generate_spec import GenerateSpec


class ClusterError(RuntimeError):
    """Ray is missing or the cluster cannot be reached."""


def _solve_shard(spec: GenerateSpec, index: int, count: int) -> tuple[dict[str, np.ndarray], float]:
    torch.set_num_threads(spec.threads)
    return timed_shard(spec, index, count)


def connect_ray(address: str, local_cpus: int | None) -> tuple[Any, bool]:
    """Ray, connected; and whether we started the connection (an existing one, e.g. a driver
    script that called ``ray.init`` itself, is used as it is and left open)."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError("--ray-address needs Ray, an optional extra: pip install -e '.[ray]'") from exc
    if ray.is_initialized():
        return ray, False
    # ray.init installs its own SIGTERM handler (a C++ stack dump, status 134): ours are put back
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if address == "local":  # a private single-machine Ray instance: every core of this machine
            ray.init(num_cpus=local_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError ... depending on the failure
        raise ClusterError(f"cannot start or reach the Ray cluster at {address!r}: {exc}") from exc
    finally:
        for sig, handler in handlers.items():
            if handler is not None:
                try:
                    signal.signal(sig, handler)
                except ValueError:  # not the main thread: signals are not ours to set there
                    pass
    return ray, True


def generate_on_ray(
    spec: GenerateSpec,
    out: Path,
    address: str,
    progress: bool = True,
    command: str | None = None,
    local_cpus: int | None = None,
) -> dict[str, float]:
    """Write the missing shards of ``spec`` into ``out``, solved by Ray tasks.

    ``address``: ``"local"`` (start a Ray instance on this machine with ``local_cpus`` CPUs,
    default all), ``"auto"`` (the cluster this machine belongs to) or ``"ray://host:port"``;
    ignored when this process is already connected to Ray.
    """
    meta_base = start_output(spec, out, command)
    todo = missing_shards(spec, out)
    ray, started = connect_ray(address, local_cpus)
    start = time.perf_counter()
    try:
        # a shard solved on CUDA takes a whole GPU (its forests fill half the memory); Ray hides
        # the GPUs from tasks that ask for none, so auto asks for one where the cluster has GPUs
        gpus = float(ray.cluster_resources().get("GPU", 0))
        if spec.device == "cuda" and gpus < 1:
            raise ClusterError("--device cuda: the Ray cluster has no GPU")
        use_gpu = spec.device == "cuda" or (spec.device == "auto" and gpus >= 1)
        task = ray.remote(num_cpus=spec.threads, num_gpus=1 if use_gpu else 0, max_retries=2)(_solve_shard)
        pending = {task.remote(spec, i, count): (i, count) for i, count in todo}
        bar = tqdm(
            total=spec.situations,
            desc=f"generate {spec.game} (ray)",
            unit="sit",
            disable=not progress,
            initial=spec.situations - sum(c for _, c in todo),
        )
        made = 0
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i, count = pending.pop(ref)
                try:
                    arrays, seconds = ray.get(ref)
                except Exception as exc:  # a task's own error, re-raised by Ray as RayTaskError
                    raise ClusterError(
                        f"shard {i} failed on the cluster (shards written so far are kept; "
                        f"run the same command again to resume): {exc}"
                    ) from exc
                write_shard(out, i, arrays, {**meta_base, "shard": i, "count": count, "seconds": round(seconds, 3)})
                made += count
                bar.update(count)
                bar.set_postfix(sit_per_s=f"{made / (time.perf_counter() - start):.2f}")
        bar.close()
    finally:
        if started:
            ray.shutdown()
    elapsed = time.perf_counter() - start
    return {"situations": float(made), "seconds": elapsed, "situations_per_s": made / elapsed if elapsed > 0 else 0.0}
