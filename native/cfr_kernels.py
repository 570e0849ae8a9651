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

:class:`SolverKernels` binds the kernels once to a solver's tensors (checked once, pointers
precomputed) and runs whole phases: ``propagate_reach``, ``propagate_values``,
``update_regrets``, ``update_averages``, ``update_strategy``, with the same results as the
torch methods of the same names (bit for bit except the ``w * x + y`` of the averages).

``threads``: 1 (default) runs in the calling thread; more splits the rows of large calls
over pthreads (results do not depend on it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

try:
    from native._native import ffi, lib
except ImportError as exc:  # pragma: no cover - depends on the build
    raise ImportError("native._native is not built; run `python native/build_ffi.py` (or pip install -e .)") from exc

if not hasattr(lib, "ds_cfr_program"):  # pragma: no cover - stale extension
    raise ImportError("native._native predates the CFR kernels it needs; rebuild it with `python native/build_ffi.py`")

__all__ = ["forward", "backward", "regrets", "strategy", "average", "add_rows", "SolverKernels", "IterationProgram"]

_OK = -1
_BAD_ARGS = -2
_CPU = torch.device("cpu")


# --------------------------------------------------------------------------- checks
def _tensor(t: Any, name: str, dtype: torch.dtype, ndim: int | Sequence[int]) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
    if t.dtype != dtype:
        raise ValueError(f"{name} must be {dtype}, got {t.dtype}")
    if t.device != _CPU:
        raise ValueError(f"{name} must be on the CPU, got {t.device}")
    dims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if t.dim() not in dims:
        raise ValueError(f"{name} must have {' or '.join(map(str, dims))} dimensions, got shape {tuple(t.shape)}")
    if not t.is_contiguous():
        raise ValueError(f"{name} must be contiguous")
    return t


def _values(t: Any, name: str, ndim: int | Sequence[int] = 2) -> torch.Tensor:
    return _tensor(t, name, torch.float32, ndim)


def _index(t: Any, name: str, ndim: int = 1) -> torch.Tensor:
    return _tensor(t, name, torch.int64, ndim)


def _shape(t: torch.Tensor, name: str, shape: tuple[int, ...]) -> None:
    if tuple(t.shape) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(t.shape)}")


def _span(t: torch.Tensor) -> tuple[int, int]:
    start = t.data_ptr()
    return start, start + t.numel() * t.element_size()


def _no_overlap(out: torch.Tensor, out_name: str, **inputs: torch.Tensor | None) -> None:
    if out.numel() == 0:
        return
    a0, a1 = _span(out)
    for name, t in inputs.items():
        if t is None or t.numel() == 0:
            continue
        b0, b1 = _span(t)
        if a0 < b1 and b0 < a1:
            raise ValueError(f"{out_name} overlaps {name} (outputs must not share memory with inputs)")


def _fp(t: torch.Tensor | None) -> Any:
    return ffi.NULL if t is None else ffi.cast("float *", t.data_ptr())


def _ip(t: torch.Tensor | None) -> Any:
    return ffi.NULL if t is None else ffi.cast("int64_t *", t.data_ptr())


def _threads(threads: int) -> int:
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}")
    return threads


def _raise_code(code: int, what: str, names: Sequence[tuple[str, torch.Tensor, int]]) -> None:
    """Turn a C return code into ValueError; ``names``: (name, index tensor, limit) in C order."""
    if code == _OK:
        return
    if code == _BAD_ARGS:
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
    _values(out, "out")
    n, H = out.shape
    _values(parent, "parent")
    _values(table, "table")
    _shape(parent, "parent", (parent.shape[0], H))
    _shape(table, "table", (table.shape[0], H))
    _shape(_index(parent_local, "parent_local"), "parent_local", (n,))
    _shape(_index(src, "src"), "src", (n,))
    _no_overlap(out, "out", parent=parent, table=table, parent_local=parent_local, src=src)
    if n == 0 or H == 0:
        return
    code = lib.ds_cfr_forward(
        n,
        H,
        _ip(parent_local),
        _ip(src),
        _fp(parent),
        parent.shape[0],
        _fp(table),
        table.shape[0],
        _fp(out),
        _threads(threads),
    )
    _raise_code(code, "forward", [("parent_local", parent_local, parent.shape[0]), ("src", src, table.shape[0])])


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
    _values(child, "child")
    n, H = child.shape
    _values(dst, "dst")
    _values(table, "table")
    _shape(dst, "dst", (dst.shape[0], H))
    _shape(table, "table", (table.shape[0], H))
    _shape(_index(parent_local, "parent_local"), "parent_local", (n,))
    _shape(_index(src, "src"), "src", (n,))
    if weight is not None:
        _values(weight, "weight", (1, 2))
        if weight.numel() != n or (weight.dim() == 2 and weight.shape[1] != 1):
            raise ValueError(f"weight must have shape ({n},) or ({n}, 1), got {tuple(weight.shape)}")
    _no_overlap(dst, "dst", child=child, table=table, weight=weight, parent_local=parent_local, src=src)
    if assign and n > 1 and bool((parent_local[1:] < parent_local[:-1]).any()):
        raise ValueError("backward with assign needs each parent's children in one run (parent_local non-decreasing)")
    if n == 0 or H == 0:
        return
    code = lib.ds_cfr_backward(
        n,
        H,
        _ip(parent_local),
        _ip(src),
        _fp(weight),
        _fp(child),
        _fp(table),
        table.shape[0],
        _fp(dst),
        dst.shape[0],
        int(bool(assign)),
        _threads(threads),
    )
    _raise_code(code, "backward", [("parent_local", parent_local, dst.shape[0]), ("src", src, table.shape[0])])


def _decision_shapes(t: torch.Tensor, name: str) -> tuple[int, int, int]:
    _values(t, name, 3)
    m, A, H = t.shape
    if A < 1:
        raise ValueError(f"{name} must have at least one action, got shape {tuple(t.shape)}")
    return m, A, H


def _valid(valid: Any, m: int, A: int) -> torch.Tensor:
    _values(valid, "valid", (2, 3))
    if tuple(valid.shape[:2]) != (m, A) or (valid.dim() == 3 and valid.shape[2] != 1):
        raise ValueError(f"valid must have shape ({m}, {A}) or ({m}, {A}, 1), got {tuple(valid.shape)}")
    return valid


def _regret_args(
    regrets: torch.Tensor, values: torch.Tensor, dec_rows: torch.Tensor, dec_children: torch.Tensor, valid: torch.Tensor
) -> tuple[int, int, int]:
    """Checks of the regret kernels' arguments; ``(m, A, H)``."""
    m, A, H = _decision_shapes(regrets, "regrets")
    _values(values, "values")
    _shape(values, "values", (values.shape[0], H))
    _shape(_index(dec_rows, "dec_rows"), "dec_rows", (m,))
    _shape(_index(dec_children, "dec_children", 2), "dec_children", (m, A))
    _valid(valid, m, A)
    _no_overlap(regrets, "regrets", values=values, valid=valid, dec_rows=dec_rows, dec_children=dec_children)
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
        _ip(dec_rows),
        _ip(dec_children),
        _fp(valid),
        _fp(values),
        N,
        _fp(regrets),
        int(bool(floor)),
        float(pos),
        float(neg),
        _threads(threads),
    )
    _raise_code(code, "regrets", [("dec_rows", dec_rows, N), ("dec_children", dec_children, N)])


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
    _shape(_values(strategy, "strategy", 3), "strategy", (m, A, H))
    _no_overlap(strategy, "strategy", regrets=regrets, values=values, valid=valid, dec_rows=dec_rows, dec_children=dec_children)
    if m == 0 or H == 0:
        return
    N = values.shape[0]
    code = lib.ds_cfr_regrets_strategy(
        m,
        A,
        H,
        _ip(dec_rows),
        _ip(dec_children),
        _fp(valid),
        _fp(values),
        N,
        _fp(regrets),
        _fp(strategy),
        int(bool(floor)),
        float(pos),
        float(neg),
        _threads(threads),
    )
    _raise_code(code, "regrets_strategy", [("dec_rows", dec_rows, N), ("dec_children", dec_children, N)])


def strategy(strategy: torch.Tensor, regrets: torch.Tensor, valid: torch.Tensor, *, threads: int = 1) -> None:
    """Regret matching into ``strategy`` ``[m, A, H]`` (in place) from ``regrets`` ``[m, A, H]``.

    ``strategy[m, a] = max(regrets[m, a], 0) * valid[m, a] / total`` where ``total`` (the sum over
    actions) is > 0, else ``valid[m, a] / sum_a valid[m, a]`` (0 if no action is valid).
    ``valid``: ``[m, A]`` or ``[m, A, 1]`` float32.
    """
    m, A, H = _decision_shapes(strategy, "strategy")
    _shape(_values(regrets, "regrets", 3), "regrets", (m, A, H))
    _valid(valid, m, A)
    _no_overlap(strategy, "strategy", regrets=regrets, valid=valid)
    if m == 0 or H == 0:
        return
    code = lib.ds_cfr_strategy(m, A, H, _fp(valid), _fp(regrets), _fp(strategy), _threads(threads))
    _raise_code(code, "strategy", [])


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
    m, A, H = _decision_shapes(strategy_sum, "strategy_sum")
    _shape(_values(strategy, "strategy", 3), "strategy", (m, A, H))
    _values(reach, "reach")
    _shape(reach, "reach", (reach.shape[0], H))
    _shape(_index(dec_rows, "dec_rows"), "dec_rows", (m,))
    _no_overlap(strategy_sum, "strategy_sum", strategy=strategy, reach=reach, dec_rows=dec_rows)
    if m == 0 or H == 0:
        return
    N = reach.shape[0]
    code = lib.ds_cfr_average(
        m, A, H, _ip(dec_rows), _fp(strategy), _fp(reach), N, float(w), _fp(strategy_sum), _threads(threads)
    )
    _raise_code(code, "average", [("dec_rows", dec_rows, N)])


def add_rows(dst: torch.Tensor, src: torch.Tensor, rows: torch.Tensor | None = None, w: float = 1.0, *, threads: int = 1) -> None:
    """``dst[i, :] += w * src[rows[i], :]`` (``dst`` ``[n, H]`` in place; ``rows=None``: ``src[i]``,
    needing ``src`` to have at least ``n`` rows). E.g. the solver's average values."""
    _values(dst, "dst")
    n, H = dst.shape
    _values(src, "src")
    _shape(src, "src", (src.shape[0], H))
    if rows is not None:
        _shape(_index(rows, "rows"), "rows", (n,))
    elif src.shape[0] < n:
        raise ValueError(f"src has {src.shape[0]} rows, fewer than dst ({n}) and no rows were given")
    _no_overlap(dst, "dst", src=src, rows=rows)
    if n == 0 or H == 0:
        return
    code = lib.ds_cfr_add_rows(n, H, _ip(rows), _fp(src), src.shape[0], float(w), _fp(dst), _threads(threads))
    _raise_code(code, "add_rows", [("rows", rows, src.shape[0])] if rows is not None else [])


# --------------------------------------------------------------------------- solver binding
class SolverKernels:
    """The phases of an :class:`agent.solver.cfr.Solver` (float32, CPU) run by the C kernels.

    Built once per solver: every tensor is checked here and the raw pointers are kept, so a
    phase costs one C call per depth (or per player slice) and no Python-side checks beyond
    verifying that the solver still holds the same buffers (``RuntimeError`` if one of them
    was replaced; the kernels keep the tensors they were bound to alive). Indices are still
    range-checked in C on every call (a small fraction of the work).

    Modified in place, as by the torch methods: ``update_strategy`` the strategy block of
    ``solver.table``; ``propagate_reach`` ``solver.reach[player]``; ``propagate_values``
    ``solver.values[player]`` (terminal values must be in place, other rows zero, unless
    ``assigns_parents``: then each parent row is written by its first child, no zeroing needed);
    ``update_regrets_strategy`` both the regrets and the strategy block;
    ``update_regrets`` ``solver.regrets``; ``update_averages`` ``solver.strategy_sum`` and
    ``solver.values_sum[player]`` (but not ``solver.weight_sum``: the caller's bookkeeping).
    """

    _BUFFERS = ("reach", "values", "table", "regrets", "strategy_sum", "values_sum", "root_reach", "valid", "reach_sum")

    def __init__(self, solver: Any, threads: int = 1) -> None:
        la = solver.la
        self.solver = solver
        self.threads = _threads(threads)
        reach = _values(solver.reach, "solver.reach", 3)
        values = _values(solver.values, "solver.values", 3)
        table = _values(solver.table, "solver.table")
        regrets_ = _decision_shapes(solver.regrets, "solver.regrets")
        M, A, H = regrets_
        N = la.num_rows
        _shape(reach, "solver.reach", (2, N, H))
        _shape(values, "solver.values", (2, N, H))
        self._sums_strategy = bool(getattr(solver, "tracks_strategy", True))
        if self._sums_strategy:
            _shape(_values(solver.strategy_sum, "solver.strategy_sum", 3), "solver.strategy_sum", (M, A, H))
        R = la.num_roots
        _shape(_values(solver.root_reach, "solver.root_reach", (2, 3)), "solver.root_reach", (2, H) if R == 1 else (2, R, H))
        self.R = R
        valid = _valid(solver.valid, M, A)
        strat = solver.strategy
        if strat.data_ptr() != table.data_ptr() + la.strategy_offset * H * 4 or tuple(strat.shape) != (M, A, H):
            raise ValueError("solver.strategy must be the [M, A, H] block of solver.table at la.strategy_offset")
        track = _index(solver.track_rows, "solver.track_rows")
        _shape(_values(solver.values_sum, "solver.values_sum", 3), "solver.values_sum", (2, len(track), H))
        self._ptrs = {name: getattr(solver, name).data_ptr() for name in self._BUFFERS}
        self._trusted = False
        self._keep: list[torch.Tensor] = [getattr(solver, name) for name in self._BUFFERS]
        self.H, self.M, self.A, self.N = H, M, A, N
        T = table.shape[0]
        t = self.threads

        def rows(x: torch.Tensor, sl: slice) -> Any:
            return ffi.cast("float *", x.data_ptr() + sl.start * H * 4)

        def keep(x: torch.Tensor) -> torch.Tensor:
            self._keep.append(x)
            return x

        # per player: per depth d the arguments of the forward / backward calls, and of the
        # forward calls that leave the terminal rows out
        self._forward: list[list[tuple]] = [[], []]
        self._forward_inner: list[list[tuple]] = [[], []]
        self._backward: list[list[tuple]] = [[], []]
        terminal = np.zeros(N, dtype=bool)
        for term_rows in (la.fold_rows, la.showdown_rows):
            terminal[term_rows.cpu().numpy()] = True
        for d, tr in enumerate(la.transitions):
            parent_sl, child_sl = la.depth_slices[d], la.depth_slices[d + 1]
            n = child_sl.stop - child_sl.start
            P = parent_sl.stop - parent_sl.start
            pl = keep(_index(tr.parent_local, "parent_local"))
            _shape(pl, "parent_local", (n,))
            inner = keep(torch.as_tensor(np.flatnonzero(~terminal[child_sl]), dtype=torch.int64))
            weight = None
            if tr.chance_weight is not None:
                weight = keep(_values(tr.chance_weight, "chance_weight", (1, 2)).reshape(-1))
                _shape(weight, "chance_weight", (n,))
            for p in range(2):
                src = keep(_index(tr.src[p], "src"))
                _shape(src, "src", (n,))
                self._forward[p].append(
                    (n, H, _ip(pl), _ip(src), rows(reach[p], parent_sl), P, _fp(table), T, rows(reach[p], child_sl), t)
                )
                self._forward_inner[p].append(
                    (
                        len(inner),
                        H,
                        _ip(inner),
                        n,
                        _ip(pl),
                        _ip(src),
                        rows(reach[p], parent_sl),
                        P,
                        _fp(table),
                        T,
                        rows(reach[p], child_sl),
                        t,
                    )
                )
                self._backward[p].append(
                    [
                        n,
                        H,
                        _ip(pl),
                        _ip(src),
                        _fp(weight),
                        rows(values[p], child_sl),
                        _fp(table),
                        T,
                        rows(values[p], parent_sl),
                        P,
                        0,
                        t,
                    ]
                )
        # per player: decision slices
        dec_rows = keep(_index(la.dec_rows, "dec_rows"))
        dec_children = keep(_index(la.dec_children, "dec_children", 2))
        _shape(dec_rows, "dec_rows", (M,))
        _shape(dec_children, "dec_children", (M, A))
        self._dec: list[tuple[int, int]] = []
        for p in range(2):
            sl = la.dec_slices[p]
            self._dec.append((sl.start, sl.stop - sl.start))
        self._dec_by_depth = _decisions_by_depth(la, self._dec)
        self._dec_rows, self._dec_children, self._valid_t = dec_rows, dec_children, valid
        self._track = track
        self._track_identity = bool(len(track) == N and torch.equal(track, torch.arange(N)))
        self._regrets_p = _fp(solver.regrets)
        self._strategy_p = _fp(strat)
        self._sum_p = _fp(solver.strategy_sum)
        self._valid_p = _fp(valid)
        self._rows_p = _ip(dec_rows)
        self._children_p = _ip(dec_children)
        self._values_p = [_fp(values[p]) for p in range(2)]
        self._reach_p = [_fp(reach[p]) for p in range(2)]
        self._vsum_p = [_fp(solver.values_sum[p]) for p in range(2)]
        self._track_p = ffi.NULL if self._track_identity else _ip(track)
        self._T = T
        self._br_plans: dict[int, list] = {}
        self.assigns_parents = _parents_assignable(la)
        if self.assigns_parents:
            for p in range(2):
                for args in self._backward[p]:
                    args[10] = 1

    # ------------------------------------------------------------------ helpers
    @contextmanager
    def checked_once(self) -> Iterator[None]:
        """The solver's tensors checked now, and not again by each phase until the block ends:
        for a solve's iterations, which replace none of them (the check per phase was ~15% of a
        river spot's time)."""
        self._check()
        self._trusted = True
        try:
            yield
        finally:
            self._trusted = False

    def _check(self) -> None:
        if self._trusted:
            return
        s = self.solver
        for name, ptr in self._ptrs.items():
            if getattr(s, name).data_ptr() != ptr:
                raise RuntimeError(f"solver.{name} was replaced since the kernels were bound; bind them again")

    @staticmethod
    def _ok(code: int, what: str) -> None:
        if code != _OK:
            raise ValueError(f"{what}: C kernel returned {code} (index out of range or bad sizes)")

    # ------------------------------------------------------------------ phases
    def update_strategy(self, player: int) -> None:
        """Regret matching for ``player``'s decisions into the strategy block of the table."""
        self._check()
        m0, m = self._dec[player]
        if m == 0 or self.H == 0:
            return
        off = m0 * self.A
        code = lib.ds_cfr_strategy(
            m,
            self.A,
            self.H,
            self._valid_p + off,
            self._regrets_p + off * self.H,
            self._strategy_p + off * self.H,
            self.threads,
        )
        self._ok(code, "update_strategy")

    def propagate_reach(self, player: int, after_depth: Callable[[int], None] | None = None, terminal_rows: bool = True) -> None:
        """``reach[player]`` at every row: the root from ``root_reach``, then down the depths.
        ``after_depth(d)``, if given, is called as soon as the rows of depth d are written (d >= 1),
        to use them while they are still in cache. Without ``terminal_rows`` the fold and showdown
        rows are not written (left as they were): for terminal kernels that form them from the
        parent's reach and the multiplier as they read them."""
        self._check()
        s = self.solver
        s.reach[player, : self.R].copy_(s.root_reach[player])
        if self.H == 0:
            return
        fwd = lib.ds_cfr_forward if terminal_rows else lib.ds_cfr_forward_rows
        for d, args in enumerate(self._forward[player] if terminal_rows else self._forward_inner[player]):
            if args[0]:
                self._ok(fwd(*args), "propagate_reach")
            if after_depth is not None:
                after_depth(d + 1)

    def propagate_values(self, player: int) -> None:
        """``values[player]`` up the tree (terminal rows filled beforehand; the others zero,
        unless ``assigns_parents``: then every parent row is written by its first child)."""
        self._check()
        if self.H == 0:
            return
        bwd = lib.ds_cfr_backward
        for args in reversed(self._backward[player]):
            if args[0]:
                self._ok(bwd(*args), "propagate_values")

    @property
    def interleaves_regrets(self) -> bool:
        """Whether :meth:`propagate_values_and_learn` can run (each player's decisions sorted by depth)."""
        return self._dec_by_depth is not None

    def propagate_values_and_learn(self, player: int, floor: bool, pos: float = 1.0, neg: float = 1.0) -> None:
        """:meth:`propagate_values` and :meth:`update_regrets_strategy` interleaved: after the
        values of a depth are known, the regrets and strategy of ``player``'s decisions at that
        depth are updated, while the rows just written are still in cache (the strategy of a
        decision is used only for its own value, which is then computed). The same results as
        the two calls one after the other: each decision's arithmetic is unchanged."""
        self._check()
        if self.H == 0:
            return
        if self._dec_by_depth is None:
            self.propagate_values(player)
            self.update_regrets_strategy(player, floor, pos, neg)
            return
        bwd = lib.ds_cfr_backward
        A, H = self.A, self.H
        for d in range(len(self._backward[player]) - 1, -1, -1):
            args = self._backward[player][d]
            if args[0]:
                self._ok(bwd(*args), "propagate_values")
            m0, m = self._dec_by_depth[player][d]
            if m:  # (interleaving is for tables larger than the caches: the strategy is streamed)
                code = lib.ds_cfr_regrets_strategy_stream(
                    m,
                    A,
                    H,
                    self._rows_p + m0,
                    self._children_p + m0 * A,
                    self._valid_p + m0 * A,
                    self._values_p[player],
                    self.N,
                    self._regrets_p + m0 * A * H,
                    self._strategy_p + m0 * A * H,
                    int(bool(floor)),
                    float(pos),
                    float(neg),
                    self.threads,
                )
                self._ok(code, "update_regrets_strategy")

    def update_regrets(self, player: int, floor: bool, pos: float = 1.0, neg: float = 1.0) -> None:
        """Add ``player``'s regrets, then floor (``floor``) or discount by ``pos`` / ``neg``.

        For a :class:`agent.solver.cfr.Variant`: ``floor=variant.floors_regrets``,
        ``pos, neg = variant.discount(t)``.
        """
        self._check()
        m0, m = self._dec[player]
        if m == 0 or self.H == 0:
            return
        A, H = self.A, self.H
        code = lib.ds_cfr_regrets(
            m,
            A,
            H,
            self._rows_p + m0,
            self._children_p + m0 * A,
            self._valid_p + m0 * A,
            self._values_p[player],
            self.N,
            self._regrets_p + m0 * A * H,
            int(bool(floor)),
            float(pos),
            float(neg),
            self.threads,
        )
        self._ok(code, "update_regrets")

    def update_regrets_strategy(self, player: int, floor: bool, pos: float = 1.0, neg: float = 1.0) -> None:
        """:meth:`update_regrets` then :meth:`update_strategy` in one pass (the regrets are read
        once instead of twice; invalid actions are skipped: their regrets and strategy stay 0).
        The strategy it replaces is gone: take the averages before."""
        self._check()
        m0, m = self._dec[player]
        if m == 0 or self.H == 0:
            return
        A, H = self.A, self.H
        code = lib.ds_cfr_regrets_strategy(
            m,
            A,
            H,
            self._rows_p + m0,
            self._children_p + m0 * A,
            self._valid_p + m0 * A,
            self._values_p[player],
            self.N,
            self._regrets_p + m0 * A * H,
            self._strategy_p + m0 * A * H,
            int(bool(floor)),
            float(pos),
            float(neg),
            self.threads,
        )
        self._ok(code, "update_regrets_strategy")

    def update_averages(self, player: int, w: float, strategy: bool = True, values: bool = True) -> None:
        """``strategy_sum`` of ``player``'s decisions (unless ``strategy`` is false or the
        solver keeps no strategy sums) and (unless ``values`` is false) ``values_sum[player]`` += w * ...

        Does nothing when ``w <= 0`` (like the solver); ``solver.weight_sum`` is not touched.
        """
        self._check()
        if w <= 0 or self.H == 0:
            return
        m0, m = self._dec[player]
        A, H = self.A, self.H
        if m and strategy and self._sums_strategy:
            code = lib.ds_cfr_average(
                m,
                A,
                H,
                self._rows_p + m0,
                self._strategy_p + m0 * A * H,
                self._reach_p[player],
                self.N,
                float(w),
                self._sum_p + m0 * A * H,
                self.threads,
            )
            self._ok(code, "update_averages")
        if not values:
            return
        code = lib.ds_cfr_add_rows(
            len(self._track),
            H,
            self._track_p,
            self._values_p[player],
            self.N,
            float(w),
            self._vsum_p[player],
            self.threads,
        )
        self._ok(code, "update_averages")

    def add_reach(self, player: int, row: int, w: float) -> None:
        """``solver.reach_sum[player] += w * solver.reach[player, row]`` (the reach the average
        values go with), by the kernel the iteration program uses: the same bits either way."""
        self._check()
        if w <= 0 or self.H == 0:
            return
        if not 0 <= row < self.N:
            raise ValueError(f"row {row} out of range 0..{self.N - 1}")
        code = lib.ds_cfr_add_rows(
            1, self.H, ffi.NULL, self._reach_p[player] + row * self.H, 1, float(w), _fp(self.solver.reach_sum[player]), 1
        )
        self._ok(code, "add_reach")

    # ------------------------------------------------------------------ best response
    def _best_response_plan(self, player: int) -> list[tuple[int, Any, Any, Any] | None]:
        """The solver's :meth:`~agent.solver.cfr.Solver.best_response_plan` as (count, rows,
        children, valid) pointers into contiguous copies kept alive here; built once per player."""
        plan = self._br_plans.get(player)
        if plan is None:
            plan = []
            for entry in self.solver.best_response_plan(player):
                if entry is None:
                    plan.append(None)
                    continue
                rows, children, invalid = entry
                valid = (~invalid).squeeze(2).to(torch.float32)
                rows, children, valid = (self._hold(x.cpu().contiguous()) for x in (rows, children, valid))
                plan.append((len(rows), _ip(rows), _ip(children), _fp(valid)))
            self._br_plans[player] = plan
        return plan

    def _hold(self, x: torch.Tensor) -> torch.Tensor:
        self._keep.append(x)
        return x

    def propagate_best_response(self, player: int) -> None:
        """``values[player]`` up the tree as :meth:`propagate_values`, except that at the player's
        own decisions each hand takes its best valid action's value (a best response to the
        opponent's strategy in the table). Terminal values in place, other rows zero."""
        self._check()
        if self.H == 0:
            return
        plan = self._best_response_plan(player)
        values = self._values_p[player]
        for d in range(len(self._backward[player]) - 1, -1, -1):
            args = self._backward[player][d]
            if args[0]:
                self._ok(lib.ds_cfr_backward(*args), "propagate_best_response")
            if plan[d] is not None:
                m, rows, children, valid = plan[d]
                self._ok(lib.ds_cfr_max_rows(m, self.A, self.H, rows, children, valid, values, self.N), "max_rows")

    # ------------------------------------------------------------------ program
    def iteration_program(self, terminal_rows: Sequence[Sequence[Any]], reach_row: int) -> IterationProgram:
        """One alternating iteration, ``for p in (0, 1)``: the opponent's reach down the tree,
        p's terminal values (``terminal_rows[p]``: the solver's bound
        :class:`native.showdown.IndexedTerminalRows`) and values up the tree, the averages
        (``reach_sum``, strategy and value sums) and p's regrets and strategy: the calls
        :class:`agent.solver.cfr.Solver` makes. What the solver does in Python between them
        goes at the marks (:meth:`IterationProgram.segments`): ``("leaves", p)`` after p's
        terminal values (depth-limit leaf values), ``("gadget", p)`` after p's values (a
        re-solving gadget's update), ``("averages", p)`` after p's sums (a leaf function's own
        averages)."""
        s = self.solver
        H, N, R = self.H, self.N, self.R
        prog = IterationProgram(self.threads)
        row_index = prog.hold(torch.tensor([reach_row], dtype=torch.int64))
        if not 0 <= reach_row < N:
            raise ValueError(f"reach_row {reach_row} out of range 0..{N - 1}")
        for p in (0, 1):
            o = 1 - p
            prog.add("copy root reach", lib.DS_OP_COPY, (R * H,), (_fp(s.root_reach[o]), self._reach_p[o]))
            for n, _, pl, src, parent, P, table, T, out, _ in self._forward[o]:
                if n:
                    prog.add("propagate_reach", lib.DS_OP_FORWARD, (n, H, P, T), (pl, src, parent, table, out))
            if not self.assigns_parents:
                prog.add("zero values", lib.DS_OP_ZERO, (N * H,), (ffi.NULL, self._values_p[p]))
            opp, out = s.reach[o].numpy(), s.values[p].numpy()
            for fn in terminal_rows[p]:
                ints, ptrs = fn.program_op(opp, out)
                prog.add("terminal_values", lib.DS_OP_TERMINAL, ints, ptrs, keep=(fn, ptrs))
            prog.mark(("leaves", p))
            for n, _, pl, src, weight, child, table, T, dst, P, assign, _ in reversed(self._backward[p]):
                if n:
                    prog.add("propagate_values", lib.DS_OP_BACKWARD, (n, H, T, P, assign), (pl, src, weight, child, table, dst))
            prog.mark(("gadget", p))
            prog.add("reach_sum", lib.DS_OP_ADD_ROWS, (1, H, N), (_ip(row_index), self._reach_p[o], _fp(s.reach_sum[o])))
            m0, m = self._dec[p]
            A = self.A
            if m and self._sums_strategy:
                prog.add(
                    "update_averages",
                    lib.DS_OP_AVERAGE,
                    (m, A, H, N),
                    (self._rows_p + m0, self._strategy_p + m0 * A * H, self._reach_p[p], self._sum_p + m0 * A * H),
                )
            prog.add(
                "update_averages",
                lib.DS_OP_ADD_ROWS,
                (len(self._track), H, N),
                (self._track_p, self._values_p[p], self._vsum_p[p]),
            )
            prog.mark(("averages", p))
            if m:
                prog.add(
                    "update_regrets_strategy",
                    lib.DS_OP_REGRETS_STRATEGY,
                    (m, A, H, N, int(bool(s.variant.floors_regrets))),
                    (
                        self._rows_p + m0,
                        self._children_p + m0 * A,
                        self._valid_p + m0 * A,
                        self._values_p[p],
                        self._regrets_p + m0 * A * H,
                        self._strategy_p + m0 * A * H,
                    ),
                )
        prog.keep(self)  # the kernels hold the solver's tensors the pointers are into
        return prog


class IterationProgram:
    """A list of kernel calls replayed by one C call (``ds_cfr_program``, native/src/cfr_program.c).

    Built by :meth:`SolverKernels.iteration_program`; :meth:`run` takes the iteration's
    averaging weight and regret discounts. The pointers are fixed when the ops are added:
    the program holds whatever they point into."""

    def __init__(self, threads: int) -> None:
        self.threads = _threads(threads)
        self._ops: list[tuple[int, tuple[int, ...], tuple[Any, ...]]] = []
        self._names: list[str] = []
        self._keep: list[Any] = []
        self._array: Any = None
        self._failed = ffi.new("int64_t *")
        self._marks: dict[Any, int] = {}

    def hold(self, x: Any) -> Any:
        self._keep.append(x)
        return x

    def keep(self, x: Any) -> None:
        self._keep.append(x)

    def add(self, name: str, op: int, ints: Sequence[int], ptrs: Sequence[Any], keep: Any = None) -> None:
        if len(ints) > 6 or len(ptrs) > 8:
            raise ValueError(f"{name}: an op has at most 6 integers and 8 pointers")
        self._ops.append((op, tuple(int(i) for i in ints), tuple(ptrs)))
        self._names.append(name)
        if keep is not None:
            self._keep.append(keep)
        self._array = None

    def mark(self, key: Any) -> None:
        """Name the point after the ops added so far (see :meth:`segments`)."""
        self._marks[key] = len(self._ops)

    def segments(self, hooks: dict[Any, Callable[[float], None]]) -> list[tuple[int, int, Callable[[float], None] | None]]:
        """The program cut at the marks that have hooks: ``(first op, end, hook or None)`` in
        order, for :meth:`run` over each range followed by its hook."""
        cuts = sorted((self._marks[key], i, hook) for i, (key, hook) in enumerate(hooks.items()))
        out: list[tuple[int, int, Callable[[float], None] | None]] = []
        lo = 0
        for at, _, hook in cuts:
            out.append((lo, at, hook))
            lo = at
        out.append((lo, len(self._ops), None))
        return out

    def __len__(self) -> int:
        return len(self._ops)

    def _built(self) -> Any:
        if self._array is None:
            arr = ffi.new("ds_op[]", max(1, len(self._ops)))
            for i, (op, ints, ptrs) in enumerate(self._ops):
                arr[i].op = op
                for k, v in enumerate(ints):
                    arr[i].n[k] = v
                for k, v in enumerate(ptrs):
                    arr[i].p[k] = ffi.cast("void *", v)
            self._array = arr
        return self._array

    def run(self, w: float = 0.0, pos: float = 1.0, neg: float = 1.0, lo: int = 0, hi: int | None = None) -> None:
        """Ops ``lo`` to ``hi`` (default: all) once, in order (AVERAGE and ADD_ROWS with weight
        ``w``, skipped when it is not positive; REGRETS_STRATEGY discounting by ``pos`` / ``neg``)."""
        hi = len(self._ops) if hi is None else hi
        if not 0 <= lo <= hi <= len(self._ops):
            raise ValueError(f"ops {lo}..{hi} out of range 0..{len(self._ops)}")
        if lo == hi:
            return
        code = lib.ds_cfr_program(self._built() + lo, hi - lo, float(w), float(pos), float(neg), self.threads, self._failed)
        if code != _OK:
            i = lo + int(self._failed[0])
            what = self._names[i] if 0 <= i < len(self._names) else "program"
            raise ValueError(f"{what} (op {i}): C kernel returned {code} (index out of range or bad sizes)")


def _decisions_by_depth(la: Any, dec: list[tuple[int, int]]) -> list[list[tuple[int, int]]] | None:
    """Per player, per depth d of the backward steps, ``(first decision, count)`` of the
    player's decisions at depth d; None unless each player's decisions are sorted by depth."""
    starts = np.array([sl.start for sl in la.depth_slices], dtype=np.int64)
    rows = la.dec_rows.cpu().numpy()
    out: list[list[tuple[int, int]]] = []
    for m0, m in dec:
        depth = np.searchsorted(starts, rows[m0 : m0 + m], side="right") - 1
        if m and bool((np.diff(depth) < 0).any()):
            return None
        per: list[tuple[int, int]] = []
        for d in range(len(la.transitions)):
            lo, hi = np.searchsorted(depth, d, side="left"), np.searchsorted(depth, d, side="right")
            per.append((m0 + int(lo), int(hi - lo)))
        if sum(n for _, n in per) != m:  # a decision at the last depth (no children): not a tree
            return None
        out.append(per)
    return out


def _parents_assignable(la: Any) -> bool:
    """Whether backward may write each parent row from its first child instead of adding into
    zeroed rows: every depth's children come in one run per parent (parent_local
    non-decreasing), and every row is a terminal, a depth-limit leaf or a parent, so that no
    row is left holding an earlier pass's values."""
    covered = torch.zeros(la.num_rows, dtype=torch.bool)
    for rows in (la.fold_rows, la.showdown_rows, la.leaves.rows):
        if len(rows):
            covered[rows.cpu()] = True
    for d, tr in enumerate(la.transitions):
        pl = tr.parent_local.cpu()
        if len(pl) > 1 and bool((pl[1:] < pl[:-1]).any()):
            return False
        if len(pl):
            covered[pl + la.depth_slices[d].start] = True
    return bool(covered.all())
