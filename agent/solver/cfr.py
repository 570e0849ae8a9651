"""Vectorized CFR over a lookahead: CFR+, DeepStack's hybrid, Discounted CFR.

All hands of both players are updated at once (simultaneous updates, as in DeepStack);
one iteration is a short sequence of named phases on the tensors laid out by
:mod:`agent.solver.lookahead`:

    strategy -> reach (down) -> terminal + leaf values -> values (up) -> regrets -> averages

The same code runs on the CPU and on CUDA. Variants differ only in how regrets are
floored/discounted and how iterations are weighted in the averages (:class:`agent.solver.variant.Variant`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from agent.solver.gadget import Gadget
from agent.solver.lookahead import LeafInfo, Lookahead
from agent.solver.variant import Variant
from native.showdown import IndexedTerminalRows

#: the size of one player's [rows, hands] buffer from which alternating updates with the C
#: kernels interleave the phases depth by depth (a turn lookahead at pot 200 with fold, call,
#: pot and all-in: 13,641 rows x 1128 hands = 62 MB; the caches of the machines it was timed
#: on hold 32 MB)
INTERLEAVE_MIN_BYTES = 16 << 20


class LeafValueFn(Protocol):
    """Counterfactual values ``[2, L, H]`` at depth-limit leaves for the reach ``[2, L, H]``.

    CFR updates one player at a time and keeps only that player's half; a leaf function whose
    cost is per player may also offer ``one_player(reach, leaves, lookahead, player)`` giving
    ``[L, H]``, which the solver then calls instead (see :func:`leaf_values_of`)."""

    def __call__(self, reach: torch.Tensor, leaves: LeafInfo, lookahead: Lookahead) -> torch.Tensor:
        """Both players' ``[2, L, H]`` leaf values for ``reach`` (each iteration unless ``one_player`` is
        offered), with the same ``lookahead`` throughout a solve: what is prepared once per lookahead."""
        ...


def leaf_values_of(fn: LeafValueFn, reach: torch.Tensor, leaves: LeafInfo, la: Lookahead, player: int) -> torch.Tensor:
    """``player``'s ``[L, H]`` leaf values, computing only those where ``fn`` can."""
    one_player = getattr(fn, "one_player", None)
    if one_player is not None:
        return one_player(reach, leaves, la, player)
    return fn(reach, leaves, la)[player]


@dataclass
class SolveResult:
    """What :meth:`Solver.solve` returns: the iterations run and their seconds, the average strategy, the
    average counterfactual values of the tracked rows, and the reaches those values are weighted by."""

    iterations: int
    seconds: float
    average_strategy: torch.Tensor | None  # [M, A, H]; None when the solver keeps values only
    average_values: torch.Tensor  # [player, tracked row, hand]
    root_reach: torch.Tensor  # [2, H] at the end (gadget: the opponent's follow-weighted reach); forest: [2, roots, H]
    #: [2, H] reach at the solver's ``reach_row`` (the root unless told; a forest's first) averaged with the
    #: weights of ``average_values``: the reach each player's average counterfactual values
    #: are weighted by there (they are linear in the opponent's)
    average_reach: torch.Tensor


class Solver:
    """Runs CFR on one lookahead. Create, then :meth:`solve`.

    Per-player tensors are ``[row, hand]`` (contiguous), so gathers and scatters run along
    the first dimension. One *pass* for player p computes the opponent's reach down the
    tree and p's counterfactual values up the tree: alternating CFR does one pass per
    player and updates that player right after it; simultaneous CFR (DeepStack's hybrid)
    does both passes with the same strategies and then updates both.
    """

    def __init__(
        self,
        lookahead: Lookahead,
        variant: Variant = Variant(),
        leaf_values: LeafValueFn | None = None,
        track_rows: torch.Tensor | None = None,
        native: bool | None = None,
        average_strategy: bool = True,
        reach_row: int = 0,
    ) -> None:
        """``average_strategy=False``: keep only the average values of ``track_rows`` (what
        training data needs), skipping the strategy sums: less memory and one phase less.
        ``reach_row``: the row whose reach is averaged with the values (the decision a
        re-solve is for)."""
        la = lookahead
        if len(la.leaves.rows) and leaf_values is None:
            raise ValueError("the lookahead has depth-limit leaves but no leaf value function was given")
        self.la = la
        self.variant = variant
        self.leaf_values = leaf_values
        H, M, A, N = la.num_hands, len(la.dec_rows), la.num_actions, la.num_rows
        opts = {"device": la.device, "dtype": la.dtype}
        self.regrets = torch.zeros(M, A, H, **opts)
        self.tracks_strategy = average_strategy
        self.strategy_sum = torch.zeros(M, A, H, **opts) if average_strategy else torch.zeros(0, **opts)
        self.reach = torch.zeros(2, N, H, **opts)
        self.values = torch.zeros(2, N, H, **opts)
        # multiplier table: [ones; board masks; strategy]; the strategy block is rewritten in place
        self.table = torch.empty(la.table_rows, H, **opts)
        self.table[0] = 1
        self.table[1 : la.strategy_offset] = la.board_valid
        self.strategy = self.table[la.strategy_offset :].view(M, A, H)
        self.track_rows = track_rows if track_rows is not None else torch.arange(N, device=la.device)
        self.values_sum = torch.zeros(2, len(self.track_rows), H, **opts)
        self.reach_row = reach_row
        self.reach_sum = torch.zeros(2, H, **opts)
        self.weight_sum = 0.0
        self.valid = la.dec_valid.unsqueeze(2).to(la.dtype)  # [M, A, 1]
        self.num_valid = self.valid.sum(dim=1, keepdim=True)
        # [2, H], or [2, roots, H] for a forest (one range pair per tree)
        self.num_roots = la.num_roots
        self.root_reach = torch.zeros((2, H) if self.num_roots == 1 else (2, self.num_roots, H), **opts)
        self._showdown = la.terminal.showdown(la.showdown_boards) if len(la.showdown_rows) else None
        self._fold = la.terminal.fold_group(la.fold_boards) if len(la.fold_rows) else None
        self._has_leaves = len(la.leaves.rows) > 0
        #: only re-solves (solves keeping the average strategy) hand leaf values over to the next
        #: round; data generation and value-only solves skip the averaging (memory)
        self._leaf_tracker = getattr(leaf_values, "track_average", None) if self._has_leaves and average_strategy else None
        self.iterations_done = 0
        self._kernels = _bind_native_kernels(self) if native is not False else None
        self._br_plans: dict[int, list] = {}
        self._program: Any = None
        #: alternating iterations replayed as one C call each where they can be (False: the
        #: phases called one by one; the same results, for tests)
        self.replays_iterations = True
        if native and self._kernels is None:
            raise ValueError("native CFR kernels need a float32 lookahead on the CPU and the built native extension")
        self._terminal_rows = _bind_terminal_rows(la) if self._kernels is not None else None
        # interleaved phases (see _reach_and_terminal_values) pay only where a player's rows
        # outgrow the caches; on smaller trees their extra kernel calls cost more than they save
        big = la.num_rows * H * self.values.element_size() >= INTERLEAVE_MIN_BYTES
        self._terminal_by_depth = _bind_terminal_rows(la, by_depth=True) if big and self._terminal_rows is not None else None
        # the C backward pass writes every parent row itself: the values need no zeroing
        self._no_zeroing = self._kernels is not None and self._kernels.assigns_parents
        for p in range(2):
            self.update_strategy(p)

    # ------------------------------------------------------------------ phases
    def update_strategy(self, player: int) -> None:
        """Regret matching for ``player``'s decisions: positive regrets normalised, uniform if none."""
        if self._kernels is not None:
            return self._kernels.update_strategy(player)
        sl = self.la.dec_slices[player]
        valid = self.valid[sl]
        pos = self.regrets[sl].clamp(min=0).mul_(valid)
        total = pos.sum(dim=1, keepdim=True)
        torch.where(total > 0, pos.div_(total.clamp(min=1e-30)), valid / self.num_valid[sl], out=self.strategy[sl])

    def propagate_reach(self, player: int) -> None:
        """Reach of ``player`` at every row under the strategy in the table."""
        if self._kernels is not None:
            return self._kernels.propagate_reach(player)
        la = self.la
        reach = self.reach[player]
        reach[: self.num_roots] = self.root_reach[player]
        for d, tr in enumerate(la.transitions):
            child = reach[la.depth_slices[d + 1]]
            torch.index_select(reach[la.depth_slices[d]], 0, tr.parent_local, out=child)
            child.mul_(self.table.index_select(0, tr.src[player]))

    def terminal_values(self, player: int, zero_others: bool = True) -> None:
        """Fold, showdown and leaf values of ``player`` (other rows zero, ready to propagate;
        left as they are without ``zero_others``, for kernels that write every parent row)."""
        la = self.la
        values = self.values[player]
        opp = self.reach[1 - player]
        if zero_others:
            values.zero_()
        if self._terminal_rows is not None:  # C kernels reading and writing the rows in place
            out, opp_np = values.numpy(), opp.numpy()
            for fn in self._terminal_rows[player]:
                fn(opp_np, out)
        elif self._fold is not None:
            mass = self._fold(opp.index_select(0, la.fold_rows))
            values[la.fold_rows] = mass.mul_(la.fold_payoff[:, player : player + 1])
        if self._terminal_rows is None and self._showdown is not None:
            wl = self._showdown(opp.index_select(0, la.showdown_rows))
            values[la.showdown_rows] = wl.mul_(la.showdown_amount.unsqueeze(1))
        if self._has_leaves:
            self._leaf_values(player)

    def _leaf_values(self, player: int) -> None:
        """``player``'s values at the depth-limit leaves, from both players' reach there."""
        assert self.leaf_values is not None
        la = self.la
        leaf_reach = self.reach[:, la.leaves.rows]
        self.values[player, la.leaves.rows] = leaf_values_of(self.leaf_values, leaf_reach, la.leaves, la, player)

    def propagate_values(self, player: int) -> None:
        """Counterfactual values of ``player`` up the tree (strategy-weighted at its own decisions)."""
        if self._kernels is not None:
            return self._kernels.propagate_values(player)
        la = self.la
        values = self.values[player]
        for d in range(len(la.transitions) - 1, -1, -1):
            values.index_add_(0, la.transitions[d].parent, self._contribution(player, d))

    def _contribution(self, player: int, d: int) -> torch.Tensor:
        la = self.la
        tr = la.transitions[d]
        contrib = self.values[player, la.depth_slices[d + 1]] * self.table.index_select(0, tr.src[player])
        if tr.chance_weight is not None:
            contrib.mul_(tr.chance_weight)
        return contrib

    def update_regrets(self, t: int, player: int) -> None:
        """Add this iteration's regrets of ``player``'s decisions, then floor or discount them."""
        if self._kernels is not None:
            return self._kernels.update_regrets(player, self.variant.floors_regrets, *self.variant.discount(t))
        la = self.la
        sl = la.dec_slices[player]
        values = self.values[player]
        regrets = self.regrets[sl]
        child_values = values.index_select(0, la.dec_children[sl].reshape(-1)).view_as(regrets)
        node_values = values.index_select(0, la.dec_rows[sl]).unsqueeze(1)
        regrets.add_(child_values.sub_(node_values).mul_(self.valid[sl]))
        if self.variant.floors_regrets:
            regrets.clamp_(min=0)
        else:
            pos, neg = self.variant.discount(t)
            # factors of the regrets' dtype: Python floats would make a float32 tensor (float64 solves rounded)
            regrets.mul_(torch.where(regrets > 0, regrets.new_tensor(pos), regrets.new_tensor(neg)))

    def update_averages(self, t: int, player: int) -> None:
        """Average strategy (weighted by the player's own reach) and average values."""
        w = self.variant.average_weight(t)
        if w <= 0:
            return
        # the opponent's reach that this player's values were just computed with
        if self._kernels is not None:
            self._kernels.add_reach(1 - player, self.reach_row, w)
            self._kernels.update_averages(player, w, strategy=self.tracks_strategy)
            self._track_leaves(player, w)
            if player == 1:
                self.weight_sum += w
            return
        self.reach_sum[1 - player].add_(self.reach[1 - player, self.reach_row], alpha=w)
        la = self.la
        sl = la.dec_slices[player]
        if self.tracks_strategy:
            own_reach = self.reach[player].index_select(0, la.dec_rows[sl]).unsqueeze(1)  # [m, 1, H]
            self.strategy_sum[sl].add_(self.strategy[sl] * own_reach, alpha=w)
        self.values_sum[player].add_(self.values[player].index_select(0, self.track_rows), alpha=w)
        self._track_leaves(player, w)
        if player == 1:
            self.weight_sum += w

    def _track_leaves(self, player: int, w: float) -> None:
        """Let a leaf function that keeps its own averages (``track_average``) weigh this iteration."""
        if self._leaf_tracker is not None:
            self._leaf_tracker(self.la, player, w)

    # ------------------------------------------------------------------ driver
    def solve(
        self,
        root_reach: torch.Tensor,
        iterations: int,
        gadget: Gadget | None = None,
        deadline: float | None = None,
        on_iteration: Callable[[int], None] | None = None,
    ) -> SolveResult:
        """Run ``iterations`` iterations (or until ``time.monotonic()`` passes ``deadline``).

        ``root_reach`` is ``[2, H]`` (player, hand), for a forest ``[2, roots, H]``; with a
        gadget (one root only), the gadget player's row is replaced by its follow-weighted
        reach every iteration.
        """
        start = time.perf_counter()
        if gadget is not None and self.num_roots != 1:
            raise ValueError("a re-solving gadget needs a lookahead with one root")
        self.root_reach.copy_(root_reach.to(device=self.la.device, dtype=self.la.dtype))
        if gadget is not None:
            gadget_follow = gadget.follow_probability()
            self.root_reach[gadget.player] = gadget.reach(gadget_follow)
        for p in range(2):
            self.propagate_reach(p)
        t0 = self.iterations_done
        interleave = (
            self.variant.alternating
            and self._kernels is not None
            and self._kernels.interleaves_regrets
            and self._terminal_by_depth is not None
        )
        steps = self._program_steps(gadget) if self.variant.alternating and not interleave else None
        checked = self._kernels.checked_once() if self._kernels is not None else contextlib.nullcontext()
        with _gc_paused(), torch_serial(self.la.device), checked:
            for i in range(1, iterations + 1):
                t = t0 + i
                if steps is not None:
                    program, segments = steps
                    w = self.variant.average_weight(t)
                    pos, neg = self.variant.discount(t)
                    for lo, hi, hook in segments:
                        program.run(w, pos, neg, lo, hi)
                        if hook is not None:
                            hook(w)
                    if w > 0:
                        self.weight_sum += w
                elif interleave:
                    for p in (0, 1):
                        self._reach_and_terminal_values(p)
                        self._values_and_learn(t, p, gadget)
                elif self.variant.alternating:
                    for p in (0, 1):
                        self.propagate_reach(1 - p)
                        self._values_for(p, gadget)
                        self._learn(t, p)
                else:
                    for p in (0, 1):
                        self.propagate_reach(p)
                    for p in (0, 1):
                        self._values_for(p, gadget)
                    for p in (0, 1):
                        self._learn(t, p, strategy=False)
                    for p in (0, 1):
                        if self._kernels is None:
                            self.update_strategy(p)
                self.iterations_done = t
                if on_iteration is not None:
                    on_iteration(t)
                # the deadline holds inside the skipped iterations too: nothing is averaged yet then,
                # and the caller sees too few iterations (the bot answers out of time)
                if deadline is not None and time.monotonic() > deadline:
                    break
        return SolveResult(
            iterations=self.iterations_done,
            seconds=time.perf_counter() - start,
            average_strategy=self.average_strategy() if self.tracks_strategy else None,
            average_values=self.average_values(),
            root_reach=self.root_reach.clone(),
            average_reach=self.reach_sum / self.weight_sum if self.weight_sum > 0 else self.reach[:, self.reach_row].clone(),
        )

    def _program_steps(self, gadget: Gadget | None) -> tuple[Any, list] | None:
        """An alternating iteration replayed by the C kernels in as few calls as the Python
        work between them allows (:class:`native.cfr_program.IterationProgram`): one call
        without depth-limit leaves or a gadget; the leaf values, the gadget's update and the
        leaf function's averages at their points otherwise. The same results as the phases
        called one by one. None where the phases are not all C kernels. The program is built
        once per solver."""
        if not self.replays_iterations or self._kernels is None or self._terminal_rows is None or self.la.num_hands == 0:
            return None
        if self._program is None:
            self._program = self._kernels.iteration_program(self._terminal_rows, self.reach_row)
        hooks: dict[Any, Callable[[float], None]] = {}
        for p in (0, 1):
            if self._has_leaves:
                hooks[("leaves", p)] = functools.partial(self._leaf_hook, p)
            if gadget is not None and p == gadget.player:
                hooks[("gadget", p)] = functools.partial(self._gadget_hook, p, gadget)
            if self._leaf_tracker is not None:
                hooks[("averages", p)] = functools.partial(self._track_hook, p)
        return self._program, self._program.segments(hooks)

    def _leaf_hook(self, player: int, w: float) -> None:
        self._leaf_values(player)

    def _gadget_hook(self, player: int, gadget: Gadget, w: float) -> None:
        self._gadget_step(player, gadget)

    def _track_hook(self, player: int, w: float) -> None:
        if w > 0:
            self._track_leaves(player, w)

    def _learn(self, t: int, player: int, strategy: bool = True) -> None:
        """Regrets and averages of ``player`` after its values, and (``strategy``) its new
        strategy. The C kernels do the regrets and the regret matching in one pass, so the
        averages, which need the strategy just played, are taken first (they read neither)."""
        if self._kernels is not None:
            self.update_averages(t, player)
            self._kernels.update_regrets_strategy(player, self.variant.floors_regrets, *self.variant.discount(t))
            return
        self.update_regrets(t, player)
        self.update_averages(t, player)
        if strategy:
            self.update_strategy(player)

    def _reach_and_terminal_values(self, player: int) -> None:
        """The opponent's reach down the tree and ``player``'s terminal (and leaf) values, with the
        C kernels: each depth's terminal rows are evaluated as soon as the opponent's reach at
        their parents is written, while it is still in cache, and their own reach is formed as it
        is read (parent times multiplier, the product the forward pass would store), not stored.
        The same values as :meth:`propagate_reach` then :meth:`terminal_values`; the opponent's
        reach rows at fold and showdown nodes are left stale."""
        assert self._kernels is not None and self._terminal_by_depth is not None
        if not self._no_zeroing:
            self.values[player].zero_()
        out, opp, table = self.values[player].numpy(), self.reach[1 - player].numpy(), self.table.numpy()
        fns = self._terminal_by_depth[player]

        def terminals(d: int) -> None:
            for fn in fns[d]:
                fn(opp, out, table)

        self._kernels.propagate_reach(1 - player, after_depth=terminals, terminal_rows=False)
        if self._has_leaves:
            self._leaf_values(player)

    def _values_and_learn(self, t: int, player: int, gadget: Gadget | None) -> None:
        """:meth:`_values_for` then :meth:`_learn` with the C kernels, the regrets of each depth
        updated as soon as its values are known (see ``SolverKernels.propagate_values_and_learn``).
        The averages read the strategy just played: the strategy sums are taken before, the value
        sums after."""
        assert self._kernels is not None
        w = self.variant.average_weight(t)
        if w > 0 and self.tracks_strategy:
            self._kernels.update_averages(player, w, strategy=True, values=False)
        self._kernels.propagate_values_and_learn(player, self.variant.floors_regrets, *self.variant.discount(t))
        if w > 0:
            self._kernels.add_reach(1 - player, self.reach_row, w)
            self._kernels.update_averages(player, w, strategy=False)
            self._track_leaves(player, w)
            if player == 1:
                self.weight_sum += w
        self._gadget_step(player, gadget)

    def _values_for(self, player: int, gadget: Gadget | None) -> None:
        self.terminal_values(player, zero_others=not self._no_zeroing)
        self.propagate_values(player)
        self._gadget_step(player, gadget)

    def _gadget_step(self, player: int, gadget: Gadget | None) -> None:
        """With a gadget for ``player``: its update from the root values just computed, and the
        root reach it gives for the next iteration."""
        if gadget is not None and player == gadget.player:
            p_follow = gadget.follow_probability()
            gadget.update(self.values[player, 0], p_follow)
            self.root_reach[player] = gadget.reach(gadget.follow_probability())

    def average_strategy(self) -> torch.Tensor:
        """``[M, A, H]`` average strategy of every decision (uniform over the valid actions where a hand's
        sum is 0; the current strategy before any averaging); RuntimeError when only values are kept."""
        if not self.tracks_strategy:
            raise RuntimeError("this solver keeps average values only (average_strategy=False)")
        if self.weight_sum == 0:
            return self.strategy.clone()
        total = self.strategy_sum.sum(dim=1, keepdim=True)
        uniform = self.valid / self.num_valid
        return torch.where(total > 0, self.strategy_sum / total.clamp(min=1e-30), uniform)

    def average_values(self) -> torch.Tensor:
        """``[player, tracked row, hand]`` average counterfactual values."""
        if self.weight_sum == 0:
            return self.values[:, self.track_rows].clone()
        return self.values_sum / self.weight_sum

    # ------------------------------------------------------------------ evaluation
    @contextmanager
    def _playing(self, root_reach: torch.Tensor, strategy: torch.Tensor) -> Iterator[None]:
        """``strategy`` and ``root_reach`` in place of the solver's own for an evaluation, and
        the reach of both players under them; the current strategy (regret matching's, which
        the next iteration plays) and root reach are put back afterwards, so that checking a
        solve's exploitability between iterations does not change the solve."""
        saved_strategy, saved_root = self.strategy.clone(), self.root_reach.clone()
        try:
            self.strategy.copy_(strategy)
            self.root_reach.copy_(root_reach.to(device=self.la.device, dtype=self.la.dtype))
            for p in range(2):
                self.propagate_reach(p)
            yield
        finally:
            self.strategy.copy_(saved_strategy)
            self.root_reach.copy_(saved_root)

    def evaluate(self, root_reach: torch.Tensor, strategy: torch.Tensor) -> torch.Tensor:
        """Counterfactual values ``[2, N, H]`` of both players when both play ``strategy``
        (``self.reach`` is left holding their reach under it)."""
        with self._playing(root_reach, strategy):
            self._values_of_both()
            return self.values.clone()

    def _values_of_both(self) -> None:
        """Both players' counterfactual values into ``self.values`` under the reach in place."""
        for p in range(2):
            self.terminal_values(p, zero_others=not self._no_zeroing)
            self.propagate_values(p)

    def best_response_values(self, root_reach: torch.Tensor, strategy: torch.Tensor, player: int) -> torch.Tensor:
        """Counterfactual values ``[N, H]`` of ``player`` best-responding to ``strategy``."""
        with self._playing(root_reach, strategy):
            return self._best_response_values(player).clone()

    def exploitability_parts(self, root_reach: torch.Tensor, strategy: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Root rows ``(br0, br1, value0, value1)``: each player's best-response values against
        ``strategy`` and both players' values when both play it, from one evaluation (the
        strategy swapped in and the reach propagated once, not once per quantity)."""
        with self._playing(root_reach, strategy):
            self._values_of_both()
            values = [self.values[0, 0].clone(), self.values[1, 0].clone()]
            br = [self._best_response_values(p)[0].clone() for p in range(2)]
        return br[0], br[1], values[0], values[1]

    def best_response_plan(self, player: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None]:
        """Per depth, ``player``'s decision rows there, their children and the invalid actions
        (``[m, A, 1]``), found once per lookahead (a best response is checked many times)."""
        plan = self._br_plans.get(player)
        if plan is None:
            la = self.la
            sl = la.dec_slices[player]
            rows_all, children_all, valid_all = la.dec_rows[sl], la.dec_children[sl], la.dec_valid[sl]
            plan = []
            for d in range(len(la.transitions)):
                depth = la.depth_slices[d]
                at = (rows_all >= depth.start) & (rows_all < depth.stop)
                plan.append((rows_all[at], children_all[at], ~valid_all[at].unsqueeze(2)) if bool(at.any()) else None)
            self._br_plans[player] = plan
        return plan

    def _best_response_values(self, player: int) -> torch.Tensor:
        la = self.la
        self.terminal_values(player)
        values = self.values[player]
        if self._kernels is not None:
            self._kernels.propagate_best_response(player)
            return values
        plan = self.best_response_plan(player)
        for d in range(len(la.transitions) - 1, -1, -1):
            values.index_add_(0, la.transitions[d].parent, self._contribution(player, d))
            if plan[d] is not None:
                rows, children, invalid = plan[d]
                cv = values[children]  # [m, A, H], a gathered copy
                cv.masked_fill_(invalid, -math.inf)
                values[rows] = cv.max(dim=1).values
        return values


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the duration (as it was before, after). The
    iterations allocate small objects (kernel arguments, array views) that reference counting
    frees; the collections they trigger walk every tracked object of the process, about 3% of a
    turn solve's time on the C kernels."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def torch_serial(device: torch.device) -> Iterator[None]:
    """torch's own CPU operations on one thread for the duration (as many as before, after).

    The solver's parallel work is in the native kernels, whose pool degrades in proportion to
    the CPU it gets; torch's OpenMP threads do not: beside two busy processes on the 2-core
    machine, a turn solve's ``index_add_`` took 13x longer on two threads than on one
    (docs/benchmarks.md, "Solver threads")."""
    threads = torch.get_num_threads()
    if device.type != "cpu" or threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _bind_native_kernels(solver: Solver) -> object | None:
    """The fused C kernels of :mod:`native.solver_kernels` bound to ``solver``, where they apply
    (float32 on the CPU): the same phases in one pass each, without torch's temporaries
    (about twice as fast on hold'em lookaheads). None elsewhere (CUDA, float64). They use as
    many threads as torch (``torch.set_num_threads``; the bot's ``threads`` setting): large
    calls are shared by the caller and a pool of sleeping workers (native/src/pool.c), results
    identical whatever the count."""
    if solver.la.device.type != "cpu" or solver.la.dtype != torch.float32:
        return None
    try:
        from native.solver_kernels import SolverKernels
    except ImportError:
        return None
    return SolverKernels(solver, threads=max(1, torch.get_num_threads()))


def _bind_terminal_rows(la: Lookahead, by_depth: bool = False) -> list[list[Callable]] | list[list[list[Callable]]] | None:
    """Per player, the fold and showdown kernels of the lookahead's terminal rows, bound to
    read the opponent's reach rows and write the player's value rows in place (C backend only).
    ``by_depth``: per player, per depth, the kernels of that depth's terminal rows."""
    te = la.terminal
    if te.dense or (not len(la.fold_rows) and not len(la.showdown_rows)):
        return None
    backend = te.kernel()
    if backend.backend != "c":
        return None

    kernel = backend.kernel
    threads = max(1, torch.get_num_threads())  # as the CFR kernels: shared with the native pool
    fold_rows, showdown_rows = la.fold_rows.numpy(), la.showdown_rows.numpy()
    fold_boards, showdown_boards = np.asarray(la.fold_boards), np.asarray(la.showdown_boards)
    starts = np.array([sl.start for sl in la.depth_slices])

    def fns_for(p: int, fold_sel: np.ndarray, showdown_sel: np.ndarray) -> list[Callable]:
        fns: list[Callable] = []
        for fold, rows_all, boards, scale, sel in (
            (True, fold_rows, fold_boards, la.fold_payoff[:, p].numpy(), fold_sel),
            (False, showdown_rows, showdown_boards, la.showdown_amount.numpy(), showdown_sel),
        ):
            if not sel.any():
                continue
            rows = rows_all[sel]
            if by_depth:
                fns.append(
                    IndexedTerminalRows(
                        kernel,
                        fold,
                        boards[sel],
                        parent_of[rows],
                        rows,
                        scale[sel],
                        mult_rows=src_of[1 - p, rows],
                        threads=threads,
                    )
                )
            else:
                fns.append(IndexedTerminalRows(kernel, fold, boards[sel], rows, rows, scale[sel], threads=threads))
        return fns

    if not by_depth:
        return [fns_for(p, np.ones(len(fold_rows), bool), np.ones(len(showdown_rows), bool)) for p in range(2)]
    # by depth: each terminal row read as its parent's reach times the opponent's multiplier
    parent_of = np.full(la.num_rows, -1, dtype=np.int64)
    src_of = np.full((2, la.num_rows), -1, dtype=np.int64)
    for d, tr in enumerate(la.transitions):
        sl = la.depth_slices[d + 1]
        parent_of[sl] = la.depth_slices[d].start + tr.parent_local.numpy()
        for q in range(2):
            src_of[q, sl] = tr.src[q].numpy()
    fold_depth = np.searchsorted(starts, fold_rows, side="right") - 1
    showdown_depth = np.searchsorted(starts, showdown_rows, side="right") - 1
    return [[fns_for(p, fold_depth == d, showdown_depth == d) for d in range(len(starts))] for p in range(2)]


def exploitability(solver: Solver, root_reach: torch.Tensor, strategy: torch.Tensor | None = None) -> dict[str, float]:
    """Best-response values of both players against ``strategy`` (default: the average).

    Returns chips per deal (normalised by the probability of the ranges' deals), the
    game value for player 0 under the strategy, and exploitability = mean BR gain.
    """
    with torch_serial(solver.la.device):
        return _exploitability(solver, root_reach, strategy)


def _exploitability(solver: Solver, root_reach: torch.Tensor, strategy: torch.Tensor | None) -> dict[str, float]:
    la = solver.la
    if la.num_roots != 1:
        raise ValueError("exploitability is measured on a lookahead with one root, not on a forest")
    strategy = solver.average_strategy() if strategy is None else strategy
    reach = root_reach.to(device=la.device, dtype=la.dtype)
    z = float((reach[0] * la.terminal.fold_mass(reach[1:2], torch.zeros(1, dtype=torch.long, device=la.device))[0]).sum())
    if z <= 0:
        raise ValueError("the two ranges cannot be dealt together on this board (no compatible hands)")
    br0, br1, v0, v1 = solver.exploitability_parts(reach, strategy)
    br = [float((br0 * reach[0]).sum()) / z, float((br1 * reach[1]).sum()) / z]
    value0 = float((v0 * reach[0]).sum()) / z
    value1 = float((v1 * reach[1]).sum()) / z
    return {
        "br0": br[0],
        "br1": br[1],
        "value0": value0,
        "value1": value1,
        "exploitability": (br[0] + br[1] - value0 - value1) / 2,
    }
