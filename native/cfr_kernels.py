"""Fused C kernels (``native/src/cfr_kernels.c``) for the CPU phases of :class:`agent.solver.cfr.Solver`.

Each kernel does in one pass over ``[rows, H]`` float32 data what the torch phase does with
several passes and temporaries. Every tensor argument must be a contiguous float32 (values)
or int64 (indices) CPU tensor of the documented shape; anything else raises ``ValueError``
(nothing is copied or converted silently). Indices are always range-checked in C before
anything is written, so a bad index raises ``ValueError`` and leaves the outputs untouched.
Outputs must not overlap inputs.

Low-level kernels (the first argument is modified in place, the others are read):

* :func:`forward`  ``out[j] = parent[parent_local[j]] * table[src[j]]``
* :func:`backward` ``dst[parent_local[j]] += child[j] * table[src[j]] (* weight[j])``
* :func:`regrets`  ``R[m, a] += (values[dec_children[m, a]] - values[dec_rows[m]]) * valid[m, a]``,
  then floored at 0 (CFR+ / hybrid) or multiplied by ``pos`` where > 0 and ``neg`` elsewhere
* :func:`strategy` regret matching ``S[m, a] = max(R[m, a], 0) * valid[m, a] / sum_a (...)``,
  ``valid[m, a] / sum_a valid[m, a]`` where the sum is 0
* :func:`average`  ``SS[m, a] += w * (S[m, a] * reach[dec_rows[m]])``
* :func:`add_rows` ``dst[i] += w * src[rows[i]]`` (``rows=None``: ``src[i]``)

(rows of ``[rows, H]`` tensors written ``x[i]``; ``R``, ``S``, ``SS`` are ``[m, A, H]``).

Whole solver phases, with the kernels bound once to a solver's tensors, are in
:mod:`native.solver_kernels`; the argument checks in :mod:`native.kernel_args`.

``threads``: 1 (default) runs in the calling thread; more splits the rows of large calls
over pthreads (results do not depend on it).
"""

from __future__ import annotations

import torch

from native.kernel_args import (
    check_no_overlap,
    check_shape,
    decision_shape,
    float_ptr,
    index_arg,
    index_ptr,
    lib,
    raise_code,
    thread_count,
    valid_arg,
    values_arg,
)

__all__ = ["forward", "backward", "regrets", "regrets_strategy", "strategy", "average", "add_rows"]


# --------------------------------------------------------------------------- kernels
def forward(
    out: torch.Tensor,
    parent: torch.Tensor,
    parent_local: torch.Tensor,
    table: torch.Tensor,
    src: torch.Tensor,
    *,
    threads: int = 1,
) -> None:
    """``out[j, :] = parent[parent_local[j], :] * table[src[j], :]`` (``out`` written in place).

    Args:
        out: ``[n, H]`` float32 (e.g. the child depth's slice of ``reach[p]``).
        parent: ``[P, H]`` float32 (the parent depth's slice).
        parent_local: ``[n]`` int64 in ``[0, P)``.
        table: ``[T, H]`` float32 multiplier table.
        src: ``[n]`` int64 in ``[0, T)`` (e.g. ``transition.src[p]``).
    """
    values_arg(out, "out")
    n, H = out.shape
    values_arg(parent, "parent")
    values_arg(table, "table")
    check_shape(parent, "parent", (parent.shape[0], H))
    check_shape(table, "table", (table.shape[0], H))
    check_shape(index_arg(parent_local, "parent_local"), "parent_local", (n,))
    check_shape(index_arg(src, "src"), "src", (n,))
    check_no_overlap(out, "out", parent=parent, table=table, parent_local=parent_local, src=src)
    if n == 0 or H == 0:
        return
    code = lib.ds_cfr_forward(
        n,
        H,
        index_ptr(parent_local),
        index_ptr(src),
        float_ptr(parent),
        parent.shape[0],
        float_ptr(table),
        table.shape[0],
        float_ptr(out),
        thread_count(threads),
    )
    raise_code(code, "forward", [("parent_local", parent_local, parent.shape[0]), ("src", src, table.shape[0])])


def backward(
    dst: torch.Tensor,
    child: torch.Tensor,
    parent_local: torch.Tensor,
    table: torch.Tensor,
    src: torch.Tensor,
    weight: torch.Tensor | None = None,
    *,
    assign: bool = False,
    threads: int = 1,
) -> None:
    """``dst[parent_local[j], :] += child[j, :] * table[src[j], :] * weight[j]`` (``dst`` in place).

    With ``assign`` each parent's first child writes its row instead of adding to it (the rows
    need no zeroing beforehand); ``parent_local`` must then be non-decreasing.

    Args:
        dst: ``[P, H]`` float32 (the parent depth's slice of ``values[p]``, holding the
            terminal values and zeros).
        child: ``[n, H]`` float32 (the child depth's slice).
        parent_local: ``[n]`` int64 in ``[0, P)``; with ``threads`` > 1 the rows are split
            between threads only if it is non-decreasing (as the lookahead lays rows out).
        table: ``[T, H]`` float32; src: ``[n]`` int64 in ``[0, T)``.
        weight: ``None`` or ``[n]`` / ``[n, 1]`` float32 (the chance weights).
    """
    values_arg(child, "child")
    n, H = child.shape
    values_arg(dst, "dst")
    values_arg(table, "table")
    check_shape(dst, "dst", (dst.shape[0], H))
    check_shape(table, "table", (table.shape[0], H))
    check_shape(index_arg(parent_local, "parent_local"), "parent_local", (n,))
    check_shape(index_arg(src, "src"), "src", (n,))
    if weight is not None:
        values_arg(weight, "weight", (1, 2))
        if weight.numel() != n or (weight.dim() == 2 and weight.shape[1] != 1):
            raise ValueError(f"weight must have shape ({n},) or ({n}, 1), got {tuple(weight.shape)}")
    check_no_overlap(dst, "dst", child=child, table=table, weight=weight, parent_local=parent_local, src=src)
    if assign and n > 1 and bool((parent_local[1:] < parent_local[:-1]).any()):
        raise ValueError("backward with assign needs each parent's children in one run (parent_local non-decreasing)")
    if n == 0 or H == 0:
        return
    code = lib.ds_cfr_backward(
        n,
        H,
        index_ptr(parent_local),
        index_ptr(src),
        float_ptr(weight),
        float_ptr(child),
        float_ptr(table),
        table.shape[0],
        float_ptr(dst),
        dst.shape[0],
        int(bool(assign)),
        thread_count(threads),
    )
    raise_code(code, "backward", [("parent_local", parent_local, dst.shape[0]), ("src", src, table.shape[0])])


def _regret_args(
    regrets: torch.Tensor, values: torch.Tensor, dec_rows: torch.Tensor, dec_children: torch.Tensor, valid: torch.Tensor
) -> tuple[int, int, int]:
    """Checks of the regret kernels' arguments; ``(m, A, H)``."""
    m, A, H = decision_shape(regrets, "regrets")
    values_arg(values, "values")
    check_shape(values, "values", (values.shape[0], H))
    check_shape(index_arg(dec_rows, "dec_rows"), "dec_rows", (m,))
    check_shape(index_arg(dec_children, "dec_children", 2), "dec_children", (m, A))
    valid_arg(valid, m, A)
    check_no_overlap(regrets, "regrets", values=values, valid=valid, dec_rows=dec_rows, dec_children=dec_children)
    return m, A, H


def regrets(
    regrets: torch.Tensor,
    values: torch.Tensor,
    dec_rows: torch.Tensor,
    dec_children: torch.Tensor,
    valid: torch.Tensor,
    *,
    floor: bool,
    pos: float = 1.0,
    neg: float = 1.0,
    threads: int = 1,
) -> None:
    """Add one iteration's regrets, then floor or discount, in one pass (``regrets`` in place).

    ``regrets[m, a] += (values[dec_children[m, a]] - values[dec_rows[m]]) * valid[m, a]``, then
    ``max(regrets, 0)`` if ``floor`` else ``regrets * (pos if regrets > 0 else neg)``.

    Args:
        regrets: ``[m, A, H]`` float32 (one player's slice of the solver's regrets).
        values: ``[N, H]`` float32 (that player's values); dec_rows: ``[m]``, dec_children:
            ``[m, A]`` int64 rows of ``values``; valid: ``[m, A]`` or ``[m, A, 1]`` float32.
    """
    m, A, H = _regret_args(regrets, values, dec_rows, dec_children, valid)
    if m == 0 or H == 0:
        return
    N = values.shape[0]
    code = lib.ds_cfr_regrets(
        m,
        A,
        H,
        index_ptr(dec_rows),
        index_ptr(dec_children),
        float_ptr(valid),
        float_ptr(values),
        N,
        float_ptr(regrets),
        int(bool(floor)),
        float(pos),
        float(neg),
        thread_count(threads),
    )
    raise_code(code, "regrets", [("dec_rows", dec_rows, N), ("dec_children", dec_children, N)])


def regrets_strategy(
    regrets: torch.Tensor,
    strategy: torch.Tensor,
    values: torch.Tensor,
    dec_rows: torch.Tensor,
    dec_children: torch.Tensor,
    valid: torch.Tensor,
    *,
    floor: bool,
    pos: float = 1.0,
    neg: float = 1.0,
    threads: int = 1,
) -> None:
    """:func:`regrets` then :func:`strategy` in one pass (both in place), bit for bit the same
    for the valid actions; actions with ``valid == 0`` are skipped (their regrets and strategy
    are left as they are: 0 in a solver). Saves re-reading the regrets, the largest array."""
    m, A, H = _regret_args(regrets, values, dec_rows, dec_children, valid)
    check_shape(values_arg(strategy, "strategy", 3), "strategy", (m, A, H))
    check_no_overlap(
        strategy, "strategy", regrets=regrets, values=values, valid=valid, dec_rows=dec_rows, dec_children=dec_children
    )
    if m == 0 or H == 0:
        return
    N = values.shape[0]
    code = lib.ds_cfr_regrets_strategy(
        m,
        A,
        H,
        index_ptr(dec_rows),
        index_ptr(dec_children),
        float_ptr(valid),
        float_ptr(values),
        N,
        float_ptr(regrets),
        float_ptr(strategy),
        int(bool(floor)),
        float(pos),
        float(neg),
        thread_count(threads),
    )
    raise_code(code, "regrets_strategy", [("dec_rows", dec_rows, N), ("dec_children", dec_children, N)])


def strategy(strategy: torch.Tensor, regrets: torch.Tensor, valid: torch.Tensor, *, threads: int = 1) -> None:
    """Regret matching into ``strategy`` ``[m, A, H]`` (in place) from ``regrets`` ``[m, A, H]``.

    ``strategy[m, a] = max(regrets[m, a], 0) * valid[m, a] / total`` where ``total`` (the sum over
    actions) is > 0, else ``valid[m, a] / sum_a valid[m, a]`` (0 if no action is valid).
    ``valid``: ``[m, A]`` or ``[m, A, 1]`` float32.
    """
    m, A, H = decision_shape(strategy, "strategy")
    check_shape(values_arg(regrets, "regrets", 3), "regrets", (m, A, H))
    valid_arg(valid, m, A)
    check_no_overlap(strategy, "strategy", regrets=regrets, valid=valid)
    if m == 0 or H == 0:
        return
    code = lib.ds_cfr_strategy(m, A, H, float_ptr(valid), float_ptr(regrets), float_ptr(strategy), thread_count(threads))
    raise_code(code, "strategy", [])


def average(
    strategy_sum: torch.Tensor,
    strategy: torch.Tensor,
    reach: torch.Tensor,
    dec_rows: torch.Tensor,
    w: float,
    *,
    threads: int = 1,
) -> None:
    """``strategy_sum[m, a] += w * (strategy[m, a] * reach[dec_rows[m]])`` (``strategy_sum`` in place).

    strategy_sum, strategy: ``[m, A, H]`` float32; reach: ``[N, H]`` float32 (the acting
    player's reach); dec_rows: ``[m]`` int64 rows of ``reach``.
    """
    m, A, H = decision_shape(strategy_sum, "strategy_sum")
    check_shape(values_arg(strategy, "strategy", 3), "strategy", (m, A, H))
    values_arg(reach, "reach")
    check_shape(reach, "reach", (reach.shape[0], H))
    check_shape(index_arg(dec_rows, "dec_rows"), "dec_rows", (m,))
    check_no_overlap(strategy_sum, "strategy_sum", strategy=strategy, reach=reach, dec_rows=dec_rows)
    if m == 0 or H == 0:
        return
    N = reach.shape[0]
    code = lib.ds_cfr_average(
        m,
        A,
        H,
        index_ptr(dec_rows),
        float_ptr(strategy),
        float_ptr(reach),
        N,
        float(w),
        float_ptr(strategy_sum),
        thread_count(threads),
    )
    raise_code(code, "average", [("dec_rows", dec_rows, N)])


def add_rows(dst: torch.Tensor, src: torch.Tensor, rows: torch.Tensor | None = None, w: float = 1.0, *, threads: int = 1) -> None:
    """``dst[i, :] += w * src[rows[i], :]`` (``dst`` ``[n, H]`` in place; ``rows=None``: ``src[i]``,
    needing ``src`` to have at least ``n`` rows). E.g. the solver's average values."""
    values_arg(dst, "dst")
    n, H = dst.shape
    values_arg(src, "src")
    check_shape(src, "src", (src.shape[0], H))
    if rows is not None:
        check_shape(index_arg(rows, "rows"), "rows", (n,))
    elif src.shape[0] < n:
        raise ValueError(f"src has {src.shape[0]} rows, fewer than dst ({n}) and no rows were given")
    check_no_overlap(dst, "dst", src=src, rows=rows)
    if n == 0 or H == 0:
        return
    code = lib.ds_cfr_add_rows(
        n, H, index_ptr(rows), float_ptr(src), src.shape[0], float(w), float_ptr(dst), thread_count(threads)
    )
    raise_code(code, "add_rows", [("rows", rows, src.shape[0])] if rows is not None else [])
