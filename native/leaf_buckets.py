"""Network leaves between hands and buckets in C (native/src/leaf_buckets.c): the encoding of a
re-solve's leaf ranges into network inputs and the decoding of the network's bucket values into
hand values, one pass each over the leaf rows instead of torch's several (scatter, sums, gather,
products, index_add)."""

from __future__ import annotations

import torch

from native.evaluator import ffi, lib

__all__ = ["LeafBuckets"]


def _f32(t: torch.Tensor, shape: tuple[int, ...], name: str) -> torch.Tensor:
    if t.dtype != torch.float32 or t.device.type != "cpu" or tuple(t.shape) != shape or not t.is_contiguous():
        raise ValueError(f"{name} must be a contiguous float32 CPU tensor of shape {shape}, not {tuple(t.shape)} {t.dtype}")
    return t


def _ptr(t: torch.Tensor, kind: str) -> object:
    return ffi.cast(kind, t.data_ptr())


class LeafBuckets:
    """The network rows of one lookahead's leaves: row ``r`` is leaf ``rows[r]`` (of
    ``num_leaves``) on its own board, hand ``h`` in bucket ``slots[r, h]`` (``valid[r, h]`` 0 where
    the board blocks it), pot ``pot[r]``, weight ``weight[r]`` in its leaf's sum. Output buffers
    are kept and rewritten by each call."""

    def __init__(
        self,
        rows: torch.Tensor,
        slots: torch.Tensor,
        valid: torch.Tensor,
        pot: torch.Tensor,
        weight: torch.Tensor,
        num_leaves: int,
        buckets: int,
        stack_total: float,
    ) -> None:
        R, H = slots.shape
        if buckets < 1 or num_leaves < 0 or stack_total <= 0:
            raise ValueError("buckets must be >= 1, num_leaves >= 0 and stack_total > 0")
        self.R, self.H, self.K, self.L = R, H, buckets, num_leaves
        self.rows = rows.to(torch.int64).contiguous()
        if self.rows.shape != (R,) or (R and (int(self.rows.min()) < 0 or int(self.rows.max()) >= num_leaves)):
            raise ValueError(f"rows must be {R} leaf indices in 0..{num_leaves - 1}")
        if R and (int(slots.min()) < 0 or int(slots.max()) >= buckets):
            raise ValueError(f"slots must be bucket indices in 0..{buckets - 1}")
        self.slots = slots.to(torch.int32).contiguous()
        self.valid = _f32(valid.float().contiguous(), (R, H), "valid")
        self.pot = _f32(pot.float().contiguous(), (R,), "pot")
        self.weight = _f32(weight.float().reshape(-1).contiguous(), (R,), "weight")
        self.inv_stack = 1.0 / float(stack_total)
        self.x = torch.empty(R, 1 + 2 * buckets)
        self.mass = torch.zeros(2, R)  # decode before any encode: zeros, not leftover memory
        self.vals = torch.empty(2, R, H)
        self.acc = torch.empty(2, num_leaves, H)

    def encode(self, reach: torch.Tensor) -> torch.Tensor:
        """The network input ``[R, 1 + 2K]`` for the leaves' reach ``[2, L, H]`` (kept: the masses for :meth:`decode`)."""
        _f32(reach, (2, self.L, self.H), "reach")
        code = lib.ds_leaf_encode(
            self.R,
            self.H,
            self.K,
            self.L,
            _ptr(self.rows, "int64_t *"),
            _ptr(reach, "float *"),
            _ptr(self.slots, "int32_t *"),
            _ptr(self.valid, "float *"),
            _ptr(self.pot, "float *"),
            self.inv_stack,
            _ptr(self.x, "float *"),
            _ptr(self.mass, "float *"),
        )
        self._raise(code, "encode")
        return self.x

    def decode(self, net_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """From the network's ``[R, 2K]`` output (of the last :meth:`encode`'s input): the per-row
        hand values ``[2, R, H]`` and their weighted sums per leaf ``[2, L, H]``."""
        _f32(net_out, (self.R, 2 * self.K), "net_out")
        code = lib.ds_leaf_decode(
            self.R,
            self.H,
            self.K,
            self.L,
            _ptr(self.rows, "int64_t *"),
            _ptr(net_out, "float *"),
            _ptr(self.slots, "int32_t *"),
            _ptr(self.valid, "float *"),
            _ptr(self.pot, "float *"),
            _ptr(self.mass, "float *"),
            _ptr(self.weight, "float *"),
            _ptr(self.vals, "float *"),
            _ptr(self.acc, "float *"),
        )
        self._raise(code, "decode")
        return self.vals, self.acc

    def _raise(self, code: int, what: str) -> None:
        if code == -1:
            return
        if code == -2:
            raise ValueError(f"leaf buckets {what}: bad sizes")
        raise ValueError(f"leaf buckets {what}: index out of range at position {code}")
