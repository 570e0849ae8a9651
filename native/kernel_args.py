"""Argument checks and raw pointers shared by the wrappers of the fused C CFR kernels.

The C side trusts its pointers, so every tensor is checked here first: a contiguous float32
(values) or int64 (indices) CPU tensor of the expected shape, or ``ValueError`` (nothing is
copied or converted silently). ``raise_code`` turns the kernels' return codes, which locate a
bad index, into a message naming the argument and the position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

try:
    from native._native import ffi, lib
except ImportError as exc:  # pragma: no cover - depends on the build
    raise ImportError("native._native is not built; run `python native/build_ffi.py` (or pip install -e .)") from exc

if not hasattr(lib, "ds_cfr_program"):  # pragma: no cover - stale extension
    raise ImportError("native._native predates the CFR kernels it needs; rebuild it with `python native/build_ffi.py`")

__all__ = [
    "BAD_ARGS",
    "CPU",
    "OK",
    "byte_span",
    "check_no_overlap",
    "check_shape",
    "checked_tensor",
    "decision_shape",
    "ffi",
    "float_ptr",
    "index_arg",
    "index_ptr",
    "lib",
    "raise_code",
    "thread_count",
    "valid_arg",
    "values_arg",
]

OK = -1  # the kernels' "no error"; a value >= 0 is the flat position of the first bad index
BAD_ARGS = -2
CPU = torch.device("cpu")


def checked_tensor(t: Any, name: str, dtype: torch.dtype, ndim: int | Sequence[int]) -> torch.Tensor:
    """A tensor the C side may read through a raw pointer: the dtype, on the CPU, contiguous, ``ndim`` in range."""
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
    if t.dtype != dtype:
        raise ValueError(f"{name} must be {dtype}, got {t.dtype}")
    if t.device != CPU:
        raise ValueError(f"{name} must be on the CPU, got {t.device}")
    dims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if t.dim() not in dims:
        raise ValueError(f"{name} must have {' or '.join(map(str, dims))} dimensions, got shape {tuple(t.shape)}")
    if not t.is_contiguous():
        raise ValueError(f"{name} must be contiguous")
    return t


def values_arg(t: Any, name: str, ndim: int | Sequence[int] = 2) -> torch.Tensor:
    """A float32 values tensor (rows of hands) checked as by :func:`checked_tensor`."""
    return checked_tensor(t, name, torch.float32, ndim)


def index_arg(t: Any, name: str, ndim: int = 1) -> torch.Tensor:
    """An int64 index tensor checked as by :func:`checked_tensor` (its range is checked in C)."""
    return checked_tensor(t, name, torch.int64, ndim)


def check_shape(t: torch.Tensor, name: str, shape: tuple[int, ...]) -> None:
    """``ValueError`` naming ``name`` unless ``t`` has exactly ``shape``."""
    if tuple(t.shape) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(t.shape)}")


def byte_span(t: torch.Tensor) -> tuple[int, int]:
    """The ``[first, end)`` byte addresses of ``t``'s storage, for the overlap check."""
    start = t.data_ptr()
    return start, start + t.numel() * t.element_size()


def check_no_overlap(out: torch.Tensor, out_name: str, **inputs: torch.Tensor | None) -> None:
    """The kernels write ``out`` while reading the inputs, so they must not share memory."""
    if out.numel() == 0:
        return
    a0, a1 = byte_span(out)
    for name, t in inputs.items():
        if t is None or t.numel() == 0:
            continue
        b0, b1 = byte_span(t)
        if a0 < b1 and b0 < a1:
            raise ValueError(f"{out_name} overlaps {name} (outputs must not share memory with inputs)")


def float_ptr(t: torch.Tensor | None) -> Any:
    """``t``'s data as a C ``float *`` (NULL for None: an optional argument left out)."""
    return ffi.NULL if t is None else ffi.cast("float *", t.data_ptr())


def index_ptr(t: torch.Tensor | None) -> Any:
    """``t``'s data as a C ``int64_t *`` (NULL for None: an optional argument left out)."""
    return ffi.NULL if t is None else ffi.cast("int64_t *", t.data_ptr())


def thread_count(threads: int) -> int:
    """``threads`` checked: an int >= 1 (the C side splits rows over that many pthreads)."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}")
    return threads


def raise_code(code: int, what: str, names: Sequence[tuple[str, torch.Tensor, int]]) -> None:
    """Turn a C return code into ValueError; ``names``: (name, index tensor, limit) in C order."""
    if code == OK:
        return
    if code == BAD_ARGS:
        raise ValueError(f"{what}: bad sizes")
    pos = int(code)
    for name, idx, limit in names:
        flat = idx.reshape(-1)
        if pos < flat.numel():
            where = tuple(int(i) for i in torch.unravel_index(torch.tensor(pos), tuple(idx.shape)))
            label = f"{name}[{', '.join(map(str, where))}]"
            raise ValueError(f"{what}: {label} = {int(flat[pos])} is out of range [0, {limit})")
        pos -= flat.numel()
    raise ValueError(f"{what}: error code {code}")  # pragma: no cover - C contract


def decision_shape(t: torch.Tensor, name: str) -> tuple[int, int, int]:
    """``(m, A, H)`` of a ``[decisions, actions, hands]`` block (regrets, strategy); at least one action."""
    values_arg(t, name, 3)
    m, A, H = t.shape
    if A < 1:
        raise ValueError(f"{name} must have at least one action, got shape {tuple(t.shape)}")
    return m, A, H


def valid_arg(valid: Any, m: int, A: int) -> torch.Tensor:
    """The legal-action mask, ``[m, A]`` or ``[m, A, 1]`` float32 (1 legal, 0 not)."""
    values_arg(valid, "valid", (2, 3))
    if tuple(valid.shape[:2]) != (m, A) or (valid.dim() == 3 and valid.shape[2] != 1):
        raise ValueError(f"valid must have shape ({m}, {A}) or ({m}, {A}, 1), got {tuple(valid.shape)}")
    return valid
