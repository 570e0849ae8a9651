"""The L1-nearest centroid of each point in C (native/src/nearest.c): hand buckets from
cumulative equity histograms, ~4x torch.cdist(p=1)'s speed on one core, which a flop re-solve
with network leaves pays for all 49 turn cards before its first iteration."""

from __future__ import annotations

import torch

from native.evaluator import ffi, lib

__all__ = ["nearest_l1"]


def nearest_l1(points: torch.Tensor, centroids_t: torch.Tensor) -> torch.Tensor:
    """``[N]`` int64 index of the L1-nearest centroid of each point ``[N, D]``, the centroids given
    transposed ``[D, K]`` (float32 CPU; ties to the lowest index, as ``torch.argmin``)."""
    if points.dim() != 2 or centroids_t.dim() != 2 or points.shape[1] != centroids_t.shape[0]:
        raise ValueError(f"points [N, D] and centroids [D, K] needed, not {tuple(points.shape)} and {tuple(centroids_t.shape)}")
    if centroids_t.shape[1] < 1:
        raise ValueError("no centroids")
    p = points.detach().to("cpu", torch.float32).contiguous()
    c = centroids_t.detach().to("cpu", torch.float32).contiguous()
    out = torch.empty(p.shape[0], dtype=torch.int64)
    code = lib.ds_nearest_l1(
        p.shape[0],
        c.shape[1],
        p.shape[1],
        ffi.cast("float *", p.data_ptr()),
        ffi.cast("float *", c.data_ptr()),
        ffi.cast("int64_t *", out.data_ptr()),
    )
    if code != -1:
        raise ValueError(f"nearest_l1: bad sizes (code {code})")
    return out
