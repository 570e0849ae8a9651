"""The phases of :class:`agent.solver.cfr.Solver` run by the fused C kernels, bound once per solver.

:class:`SolverKernels` checks a solver's tensors once, precomputes the kernels' pointers and
runs whole phases: ``propagate_reach``, ``propagate_values``, ``update_regrets``,
``update_averages``, ``update_strategy``, with the same results as the torch methods of the
same names (bit for bit except the ``w * x + y`` of the averages). ``threads``: 1 (default)
runs in the calling thread; more splits the rows of large calls over pthreads (results do not
depend on it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from native.cfr_program import IterationProgram
from native.kernel_args import (
    OK,
    check_shape,
    decision_shape,
    ffi,
    float_ptr,
    index_arg,
    index_ptr,
    lib,
    thread_count,
    valid_arg,
    values_arg,
)

__all__ = ["SolverKernels"]


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
        self.threads = thread_count(threads)
        reach = values_arg(solver.reach, "solver.reach", 3)
        values = values_arg(solver.values, "solver.values", 3)
        table = values_arg(solver.table, "solver.table")
        regrets_ = decision_shape(solver.regrets, "solver.regrets")
        M, A, H = regrets_
        N = la.num_rows
        check_shape(reach, "solver.reach", (2, N, H))
        check_shape(values, "solver.values", (2, N, H))
        self._sums_strategy = bool(getattr(solver, "tracks_strategy", True))
        if self._sums_strategy:
            check_shape(values_arg(solver.strategy_sum, "solver.strategy_sum", 3), "solver.strategy_sum", (M, A, H))
        R = la.num_roots
        check_shape(
            values_arg(solver.root_reach, "solver.root_reach", (2, 3)), "solver.root_reach", (2, H) if R == 1 else (2, R, H)
        )
        self.R = R
        valid = valid_arg(solver.valid, M, A)
        strat = solver.strategy
        if strat.data_ptr() != table.data_ptr() + la.strategy_offset * H * 4 or tuple(strat.shape) != (M, A, H):
            raise ValueError("solver.strategy must be the [M, A, H] block of solver.table at la.strategy_offset")
        track = index_arg(solver.track_rows, "solver.track_rows")
        check_shape(values_arg(solver.values_sum, "solver.values_sum", 3), "solver.values_sum", (2, len(track), H))
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
            pl = keep(index_arg(tr.parent_local, "parent_local"))
            check_shape(pl, "parent_local", (n,))
            inner = keep(torch.as_tensor(np.flatnonzero(~terminal[child_sl]), dtype=torch.int64))
            weight = None
            if tr.chance_weight is not None:
                weight = keep(values_arg(tr.chance_weight, "chance_weight", (1, 2)).reshape(-1))
                check_shape(weight, "chance_weight", (n,))
            for p in range(2):
                src = keep(index_arg(tr.src[p], "src"))
                check_shape(src, "src", (n,))
                self._forward[p].append(
                    (
                        n,
                        H,
                        index_ptr(pl),
                        index_ptr(src),
                        rows(reach[p], parent_sl),
                        P,
                        float_ptr(table),
                        T,
                        rows(reach[p], child_sl),
                        t,
                    )
                )
                self._forward_inner[p].append(
                    (
                        len(inner),
                        H,
                        index_ptr(inner),
                        n,
                        index_ptr(pl),
                        index_ptr(src),
                        rows(reach[p], parent_sl),
                        P,
                        float_ptr(table),
                        T,
                        rows(reach[p], child_sl),
                        t,
                    )
                )
                self._backward[p].append(
                    [
                        n,
                        H,
                        index_ptr(pl),
                        index_ptr(src),
                        float_ptr(weight),
                        rows(values[p], child_sl),
                        float_ptr(table),
                        T,
                        rows(values[p], parent_sl),
                        P,
                        0,
                        t,
                    ]
                )
        # per player: decision slices
        dec_rows = keep(index_arg(la.dec_rows, "dec_rows"))
        dec_children = keep(index_arg(la.dec_children, "dec_children", 2))
        check_shape(dec_rows, "dec_rows", (M,))
        check_shape(dec_children, "dec_children", (M, A))
        self._dec: list[tuple[int, int]] = []
        for p in range(2):
            sl = la.dec_slices[p]
            self._dec.append((sl.start, sl.stop - sl.start))
        self._dec_by_depth = _decisions_by_depth(la, self._dec)
        self._dec_rows, self._dec_children, self._valid_t = dec_rows, dec_children, valid
        self._track = track
        self._track_identity = bool(len(track) == N and torch.equal(track, torch.arange(N)))
        self._regrets_p = float_ptr(solver.regrets)
        self._strategy_p = float_ptr(strat)
        self._sum_p = float_ptr(solver.strategy_sum)
        self._valid_p = float_ptr(valid)
        self._rows_p = index_ptr(dec_rows)
        self._children_p = index_ptr(dec_children)
        self._values_p = [float_ptr(values[p]) for p in range(2)]
        self._reach_p = [float_ptr(reach[p]) for p in range(2)]
        self._vsum_p = [float_ptr(solver.values_sum[p]) for p in range(2)]
        self._track_p = ffi.NULL if self._track_identity else index_ptr(track)
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
        if code != OK:
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

        For a :class:`agent.solver.variant.Variant`: ``floor=variant.floors_regrets``,
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
            1, self.H, ffi.NULL, self._reach_p[player] + row * self.H, 1, float(w), float_ptr(self.solver.reach_sum[player]), 1
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
                plan.append((len(rows), index_ptr(rows), index_ptr(children), float_ptr(valid)))
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
            prog.add("copy root reach", lib.DS_OP_COPY, (R * H,), (float_ptr(s.root_reach[o]), self._reach_p[o]))
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
            prog.add(
                "reach_sum", lib.DS_OP_ADD_ROWS, (1, H, N), (index_ptr(row_index), self._reach_p[o], float_ptr(s.reach_sum[o]))
            )
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
