"""Vectorized CFR over a lookahead: CFR+, DeepStack's hybrid, Discounted CFR.

All hands of both players are updated at once (simultaneous updates, as in DeepStack);
one iteration is a short sequence of named phases on the tensors laid out by
:mod:`agent.lookahead`:

    strategy -> reach (down) -> terminal + leaf values -> values (up) -> regrets -> averages

The same code runs on the CPU and on CUDA. Variants differ only in how regrets are
floored/discounted and how iterations are weighted in the averages (:class:`Variant`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Literal, Protocol

import numpy as np
import torch

from agent.lookahead import LeafInfo, Lookahead

Algorithm = Literal["cfr+", "hybrid", "dcfr", "dcfr+"]


@dataclass(frozen=True)
class Variant:
    """Regret and averaging rules of a CFR variant.

    * ``cfr+``: regret-matching+ (regrets floored at 0), linear averaging after ``skip``.
    * ``hybrid``: DeepStack's choice: regret-matching+, uniform averaging, the first ``skip``
      iterations left out of the averages.
    * ``dcfr``: Discounted CFR (alpha, beta, gamma), averaging weight t^gamma.
    * ``dcfr+``: DCFR regrets with linear averaging weight max(0, t - skip) (Supremus).
    """

    algorithm: Algorithm = "dcfr"
    skip: int = 0
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0
    #: update one player per half-iteration (CFR+ as published) instead of both at once
    alternating: bool = False

    def __post_init__(self) -> None:
        if self.algorithm not in ("cfr+", "hybrid", "dcfr", "dcfr+"):
            raise ValueError(f"unknown CFR algorithm {self.algorithm!r}; use cfr+, hybrid, dcfr or dcfr+")
        if self.skip < 0:
            raise ValueError("skip must be >= 0")

    @property
    def floors_regrets(self) -> bool:
        return self.algorithm in ("cfr+", "hybrid")

    def average_weight(self, t: int) -> float:
        if self.algorithm == "hybrid":
            return 1.0 if t > self.skip else 0.0
        if self.algorithm in ("cfr+", "dcfr+"):
            return float(max(0, t - self.skip))
        return float(t) ** self.gamma if t > self.skip else 0.0

    def discount(self, t: int) -> tuple[float, float]:
        """Multipliers of positive and negative accumulated regrets after iteration t."""
        if self.algorithm in ("dcfr", "dcfr+"):
            ta = float(t) ** self.alpha
            tb = float(t) ** self.beta
            return ta / (ta + 1.0), tb / (tb + 1.0)
        return 1.0, 1.0


class LeafValueFn(Protocol):
    """Counterfactual values ``[2, L, H]`` at depth-limit leaves for the reach ``[2, L, H]``."""

    def __call__(self, reach: torch.Tensor, leaves: LeafInfo, lookahead: Lookahead) -> torch.Tensor: ...


@dataclass
class Gadget:
    """CFR-D re-solving gadget for ``player`` (the opponent): terminate (receive ``cfvs``) or follow.

    ``prior`` is the deal of the opponent's hand (uniform, or mixed with a range estimate for
    the conservative warm start); with ``aggressive`` > 0 the opponent must follow with
    probability ``aggressive`` holding a hand from ``estimate``.
    """

    player: int
    cfvs: torch.Tensor  # [H]
    prior: torch.Tensor  # [H]
    estimate: torch.Tensor | None = None
    aggressive: float = 0.0
    regret_follow: torch.Tensor = field(init=False)
    regret_terminate: torch.Tensor = field(init=False)
    follow_sum: torch.Tensor = field(init=False)

    def __post_init__(self) -> None:
        self.regret_follow = torch.zeros_like(self.cfvs)
        self.regret_terminate = torch.zeros_like(self.cfvs)
        self.follow_sum = torch.zeros_like(self.cfvs)

    def follow_probability(self) -> torch.Tensor:
        f = self.regret_follow.clamp(min=0)
        t = self.regret_terminate.clamp(min=0)
        total = f + t
        return torch.where(total > 0, f / total.clamp(min=1e-30), torch.full_like(f, 0.5))

    def reach(self, p_follow: torch.Tensor) -> torch.Tensor:
        r = self.prior * p_follow
        if self.aggressive > 0 and self.estimate is not None:
            r = (1 - self.aggressive) * r + self.aggressive * self.estimate
        return r

    def update(self, follow_values: torch.Tensor, p_follow: torch.Tensor) -> None:
        v = p_follow * follow_values + (1 - p_follow) * self.cfvs
        self.regret_follow = (self.regret_follow + follow_values - v).clamp(min=0)
        self.regret_terminate = (self.regret_terminate + self.cfvs - v).clamp(min=0)


@dataclass
class SolveResult:
    iterations: int
    seconds: float
    average_strategy: torch.Tensor  # [M, A, H]
    average_values: torch.Tensor  # [tracked row, player, hand]
    root_reach: torch.Tensor  # [2, H] at the end (gadget: the opponent's follow-weighted reach)


class Solver:
    """Runs CFR on one lookahead. Create, then :meth:`solve`.

    Tensors are ``[row, player, hand]`` so that every gather and scatter runs along the
    first dimension; ``view(-1, H)`` gives the flat ``row * 2 + player`` indexing.
    """

    def __init__(
        self,
        lookahead: Lookahead,
        variant: Variant = Variant(),
        leaf_values: LeafValueFn | None = None,
        track_rows: torch.Tensor | None = None,
    ) -> None:
        la = lookahead
        if len(la.leaves.rows) and leaf_values is None:
            raise ValueError("the lookahead has depth-limit leaves but no leaf value function was given")
        self.la = la
        self.variant = variant
        self.leaf_values = leaf_values
        H, M, A, N = la.num_hands, len(la.dec_rows), la.num_actions, la.num_rows
        opts = {"device": la.device, "dtype": la.dtype}
        self.regrets = torch.zeros(M, A, H, **opts)
        self.strategy_sum = torch.zeros(M, A, H, **opts)
        self.reach = torch.zeros(N, 2, H, **opts)
        self.values = torch.zeros(N, 2, H, **opts)
        # multiplier table: [ones; board masks; strategy]; the strategy block is rewritten in place
        self.table = torch.empty(la.table_rows, H, **opts)
        self.table[0] = 1
        self.table[1 : la.strategy_offset] = la.board_valid
        self.strategy = self.table[la.strategy_offset :].view(M, A, H)
        self.track_rows = track_rows if track_rows is not None else torch.arange(N, device=la.device)
        self.values_sum = torch.zeros(len(self.track_rows), 2, H, **opts)
        self.weight_sum = 0.0
        self.valid = la.dec_valid.unsqueeze(2).to(la.dtype)  # [M, A, 1]
        self.num_valid = self.valid.sum(dim=1, keepdim=True)
        # flat (row * 2 + player) indices used every iteration
        actor = la.dec_actor.unsqueeze(1).expand_as(la.dec_children)
        self.child_flat = (la.dec_children * 2 + actor).reshape(-1)  # [M*A]
        self.node_flat = la.dec_rows * 2 + la.dec_actor  # [M]
        self.actor_mask = torch.stack([(la.dec_actor == p).to(la.dtype).view(-1, 1, 1) for p in range(2)])
        self._showdown = None
        if len(la.showdown_rows):
            self._showdown = la.terminal.showdown(np.concatenate([la.showdown_boards, la.showdown_boards]))
        self._fold_boards = la.fold_boards.repeat_interleave(2) if len(la.fold_rows) else None
        self.iterations_done = 0

    # ------------------------------------------------------------------ phases
    def update_strategy(self) -> torch.Tensor:
        """Regret matching into the strategy block: positive regrets normalised, uniform if none."""
        pos = self.regrets.clamp(min=0).mul_(self.valid)
        total = pos.sum(dim=1, keepdim=True)
        torch.where(total > 0, pos.div_(total.clamp(min=1e-30)), self.valid / self.num_valid, out=self.strategy)
        return self.strategy

    def propagate_reach(self, root_reach: torch.Tensor) -> None:
        """Reach of both players at every row, for the strategy in the table."""
        la = self.la
        H = la.num_hands
        self.reach[0] = root_reach
        for d, tr in enumerate(la.transitions):
            child = self.reach.index_select(0, tr.parent)
            child.mul_(self.table.index_select(0, tr.mult_src).view(-1, 2, H))
            self.reach[la.depth_slices[d + 1]] = child

    def terminal_values(self) -> None:
        """Fold, showdown and leaf values (all other rows zero, ready for propagation)."""
        la = self.la
        H = la.num_hands
        self.values.zero_()
        if len(la.fold_rows):
            opp = self.reach.index_select(0, la.fold_rows).flip(1).reshape(-1, H)  # [F*2, H]
            mass = la.terminal.fold_mass(opp, self._fold_boards).view(-1, 2, H)
            self.values[la.fold_rows] = mass * la.fold_payoff.unsqueeze(2)
        if self._showdown is not None:
            opp = self.reach.index_select(0, la.showdown_rows).flip(1)  # [S, 2, H]
            opp = opp.transpose(0, 1).reshape(-1, H)  # player-major: [2*S, H]
            wl = self._showdown(opp).view(2, -1, H).transpose(0, 1)
            self.values[la.showdown_rows] = wl * la.showdown_amount.view(-1, 1, 1)
        if len(la.leaves.rows):
            assert self.leaf_values is not None
            leaf_reach = self.reach[la.leaves.rows].transpose(0, 1)  # [2, L, H]
            self.values[la.leaves.rows] = self.leaf_values(leaf_reach, la.leaves, la).transpose(0, 1)

    def _child_contribution(self, d: int) -> torch.Tensor:
        la = self.la
        tr = la.transitions[d]
        contrib = self.values[la.depth_slices[d + 1]] * self.table.index_select(0, tr.mult_src).view(-1, 2, la.num_hands)
        if tr.chance_weight is not None:
            contrib.mul_(tr.chance_weight)
        return contrib

    def propagate_values(self) -> None:
        """Counterfactual values up the tree: strategy-weighted for the actor, summed otherwise."""
        la = self.la
        for d in range(len(la.transitions) - 1, -1, -1):
            self.values.index_add_(0, la.transitions[d].parent, self._child_contribution(d))

    def update_regrets(self, t: int, player: int | None = None) -> None:
        """Add this iteration's regrets (of ``player``'s decisions only, if given)."""
        la = self.la
        flat = self.values.view(-1, la.num_hands)
        child_values = flat.index_select(0, self.child_flat).view_as(self.regrets)
        node_values = flat.index_select(0, self.node_flat).unsqueeze(1)
        gain = (child_values - node_values).mul_(self.valid)
        if player is not None:
            gain.mul_(self.actor_mask[player])
        self.regrets.add_(gain)
        if self.variant.floors_regrets:
            self.regrets.clamp_(min=0)
        else:
            pos, neg = self.variant.discount(t)
            factor = torch.where(self.regrets > 0, pos, neg)
            if player is not None:
                mask = self.actor_mask[player]
                factor = factor * mask + (1 - mask)
            self.regrets.mul_(factor)

    def update_averages(self, t: int, player: int | None = None) -> None:
        w = self.variant.average_weight(t)
        if w <= 0:
            return
        la = self.la
        own_reach = self.reach.view(-1, la.num_hands).index_select(0, self.node_flat).unsqueeze(1)  # [M, 1, H]
        contrib = self.strategy * own_reach
        if player is not None:
            contrib.mul_(self.actor_mask[player])
            self.values_sum[:, player].add_(self.values[self.track_rows, player], alpha=w)
        else:
            self.values_sum.add_(self.values[self.track_rows], alpha=w)
        self.strategy_sum.add_(contrib, alpha=w)
        if player in (None, 1):
            self.weight_sum += w

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

        ``root_reach`` is ``[2, H]`` (player, hand).
        """
        start = time.perf_counter()
        root_reach = root_reach.to(device=self.la.device, dtype=self.la.dtype).clone()
        t0 = self.iterations_done
        players: tuple[int | None, ...] = (0, 1) if self.variant.alternating else (None,)
        for i in range(1, iterations + 1):
            t = t0 + i
            for player in players:
                self.update_strategy()
                if gadget is not None:
                    p_follow = gadget.follow_probability()
                    root_reach[gadget.player] = gadget.reach(p_follow)
                self.propagate_reach(root_reach)
                self.terminal_values()
                self.propagate_values()
                if gadget is not None and player in (None, gadget.player):
                    gadget.update(self.values[0, gadget.player], p_follow)
                self.update_regrets(t, player)
                self.update_averages(t, player)
            self.iterations_done = t
            if on_iteration is not None:
                on_iteration(t)
            if deadline is not None and time.monotonic() > deadline and self.weight_sum > 0:
                break
        return SolveResult(
            iterations=self.iterations_done,
            seconds=time.perf_counter() - start,
            average_strategy=self.average_strategy(),
            average_values=self.average_values(),
            root_reach=root_reach,
        )

    def average_strategy(self) -> torch.Tensor:
        if self.weight_sum == 0:
            return self.update_strategy().clone()
        total = self.strategy_sum.sum(dim=1, keepdim=True)
        uniform = self.valid / self.num_valid
        return torch.where(total > 0, self.strategy_sum / total.clamp(min=1e-30), uniform)

    def average_values(self) -> torch.Tensor:
        """``[tracked row, player, hand]`` average counterfactual values."""
        if self.weight_sum == 0:
            return self.values[self.track_rows].clone()
        return self.values_sum / self.weight_sum

    # ------------------------------------------------------------------ evaluation
    def set_strategy(self, strategy: torch.Tensor) -> None:
        self.strategy.copy_(strategy)

    def evaluate(self, root_reach: torch.Tensor, strategy: torch.Tensor) -> torch.Tensor:
        """Counterfactual values ``[N, 2, H]`` of both players when both play ``strategy``."""
        self.set_strategy(strategy)
        self.propagate_reach(root_reach.to(device=self.la.device, dtype=self.la.dtype))
        self.terminal_values()
        self.propagate_values()
        return self.values.clone()

    def best_response_values(self, root_reach: torch.Tensor, strategy: torch.Tensor, player: int) -> torch.Tensor:
        """Counterfactual values ``[N, H]`` of ``player`` best-responding to ``strategy``."""
        la = self.la
        self.set_strategy(strategy)
        self.propagate_reach(root_reach.to(device=la.device, dtype=la.dtype))
        self.terminal_values()
        mine = la.dec_actor == player
        for d in range(len(la.transitions) - 1, -1, -1):
            self.values.index_add_(0, la.transitions[d].parent, self._child_contribution(d))
            sl = la.depth_slices[d]
            at_depth = mine & (la.dec_rows >= sl.start) & (la.dec_rows < sl.stop)
            if bool(at_depth.any()):
                rows = la.dec_rows[at_depth]
                cv = self.values[la.dec_children[at_depth], player]  # [m, A, H]
                cv = torch.where(la.dec_valid[at_depth].unsqueeze(2), cv, torch.full_like(cv, -math.inf))
                self.values[rows, player] = cv.max(dim=1).values
        return self.values[:, player].clone()


def exploitability(solver: Solver, root_reach: torch.Tensor, strategy: torch.Tensor | None = None) -> dict[str, float]:
    """Best-response values of both players against ``strategy`` (default: the average).

    Returns chips per deal (normalised by the probability of the ranges' deals), the
    game value for player 0 under the strategy, and exploitability = mean BR gain.
    """
    la = solver.la
    strategy = solver.average_strategy() if strategy is None else strategy
    reach = root_reach.to(device=la.device, dtype=la.dtype)
    z = float((reach[0] * la.terminal.fold_mass(reach[1:2], torch.zeros(1, dtype=torch.long, device=la.device))[0]).sum())
    if z <= 0:
        raise ValueError("the two ranges cannot be dealt together on this board (no compatible hands)")
    br = []
    for p in range(2):
        v = solver.best_response_values(reach, strategy, p)
        br.append(float((v[0] * reach[p]).sum()) / z)
    values = solver.evaluate(reach, strategy)
    value0 = float((values[0, 0] * reach[0]).sum()) / z
    value1 = float((values[0, 1] * reach[1]).sum()) / z
    return {
        "br0": br[0],
        "br1": br[1],
        "value0": value0,
        "value1": value1,
        "exploitability": (br[0] + br[1] - value0 - value1) / 2,
    }
