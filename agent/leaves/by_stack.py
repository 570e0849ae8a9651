"""Depth-limit leaves valued by a network where chips are left to bet, checked down where they
are (nearly) all in.

Against the turn solved to the end, river-network leaves halve check-down's error where stacks
are deep, and add error where little is left to bet, where checking down is (nearly) exact
(docs/results.md, "Leaf accuracy against the turn solved to the end"). A leaf goes to check-down
when its stack-to-pot ratio, the chips behind over the pot, is at most ``max_spr``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from agent.leaves.per_lookahead import PerLookahead
from agent.leaves.snapshot import LeafSnapshot
from agent.solver.cfr import LeafValueFn
from agent.solver.lookahead import LeafInfo, Lookahead


def stack_to_pot(spent: np.ndarray, stack: int) -> np.ndarray:
    """``[L]`` chips behind (the smaller stack's) over the pot, for leaves spending ``spent`` ``[L, 2]``."""
    spent = np.asarray(spent, dtype=np.float64).reshape(-1, 2)
    return (stack - spent.max(axis=1)) / spent.sum(axis=1)


@dataclass
class _Split:
    net_idx: torch.Tensor
    net_leaves: LeafInfo
    checkdown_idx: torch.Tensor
    checkdown_leaves: LeafInfo
    local: dict[int, int]  # global leaf index -> index among the network's leaves


def _subset(leaves: LeafInfo, idx: np.ndarray) -> LeafInfo:
    return replace(
        leaves,
        rows=leaves.rows[torch.as_tensor(idx, dtype=torch.long, device=leaves.rows.device)],
        boards=[leaves.boards[i] for i in idx],
        spent=leaves.spent[idx],
        next_round=leaves.next_round[idx],
    )


class LeavesByStack:
    """``net`` at leaves with a stack-to-pot ratio above ``max_spr``, ``checkdown`` at the others.

    Each prepares a lookahead for its own part of the leaves: neither may value the same lookahead
    for another caller."""

    def __init__(self, net: LeafValueFn, checkdown: LeafValueFn, stack: int, max_spr: float) -> None:
        self.net = net
        self.checkdown = checkdown
        self.stack = stack
        self.max_spr = max_spr
        self._splits: PerLookahead[_Split] = PerLookahead()

    def _split(self, leaves: LeafInfo, la: Lookahead) -> _Split:
        def build() -> _Split:
            deep = stack_to_pot(leaves.spent, self.stack) > self.max_spr
            net_idx, cd_idx = np.flatnonzero(deep), np.flatnonzero(~deep)
            return _Split(
                torch.as_tensor(net_idx, device=la.device),
                _subset(leaves, net_idx),
                torch.as_tensor(cd_idx, device=la.device),
                _subset(leaves, cd_idx),
                {int(g): i for i, g in enumerate(net_idx)},
            )

        return self._splits.get(la, build)

    def __call__(self, reach: torch.Tensor, leaves: LeafInfo, la: Lookahead) -> torch.Tensor:
        split = self._split(leaves, la)
        out = torch.zeros_like(reach)
        if len(split.net_idx):
            out[:, split.net_idx] = self.net(reach.index_select(1, split.net_idx).contiguous(), split.net_leaves, la)
        if len(split.checkdown_idx):
            part = reach.index_select(1, split.checkdown_idx).contiguous()
            out[:, split.checkdown_idx] = self.checkdown(part, split.checkdown_leaves, la)
        return out

    def track_average(self, la: Lookahead, player: int, weight: float) -> None:
        """The solver's averaging step, for the network's leaves (check-down keeps no averages)."""
        track = getattr(self.net, "track_average", None)
        if track is not None and self._splits.peek(la) is not None:
            track(la, player, weight)

    def average_board_values(self, la: Lookahead, leaf: int) -> dict[tuple[int, ...], torch.Tensor] | None:
        """The network's averaged per-board values at leaf ``leaf`` (None at check-down leaves)."""
        split = self._splits.peek(la)
        fn = getattr(self.net, "average_board_values", None)
        if split is None or fn is None or leaf not in split.local:
            return None
        return fn(la, split.local[leaf])

    def chance_values(self, leaf: LeafSnapshot, board: tuple[int, ...]) -> np.ndarray:
        """The next round's values below ``leaf``, from whichever valued it in the re-solve."""
        deep = stack_to_pot(np.array(leaf.spent), self.stack)[0] > self.max_spr
        return (self.net if deep else self.checkdown).chance_values(leaf, board)  # type: ignore[attr-defined]
