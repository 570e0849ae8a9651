"""Value functions for depth-limit leaves that need no network.

:func:`checkdown_leaf_values` values a leaf as if the rest of the hand were checked down:
the showdown at the current pot, averaged over every way to complete the board (with
card removal). It is exact for trees whose later rounds have no bets, and it is the
assumption of local best response (LBR).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb

import numpy as np
import torch

from agent.solver.handspace import HandSpace
from agent.solver.lookahead import LeafInfo, Lookahead
from agent.solver.terminal import TerminalEquity


class CheckdownEvaluator:
    """Check-down values of fixed leaves (boards, contributions) for one hand list."""

    def __init__(
        self,
        space: HandSpace,
        hands: np.ndarray,
        boards: Sequence[tuple[int, ...]],
        spent: np.ndarray,
        device: torch.device,
        dtype: torch.dtype,
    ) -> None:
        game = space.game
        k = game.num_hole_cards
        full_boards: list[tuple[int, ...]] = []
        index: dict[tuple[int, ...], int] = {}
        rows: list[int] = []  # leaf index of each (leaf, completion) row
        row_boards: list[int] = []
        weights: list[float] = []
        for i, board in enumerate(boards):
            missing = game.total_board_cards - len(board)
            remaining = [c for c in space.deck if c not in board]
            w = 1.0 / comb(len(remaining) - 2 * k, missing)
            for extra in combinations(remaining, missing):
                full = tuple(board) + extra
                if full not in index:
                    index[full] = len(full_boards)
                    full_boards.append(full)
                rows.append(i)
                row_boards.append(index[full])
                weights.append(w)
        self.terminal = TerminalEquity(space, hands, full_boards, device, dtype)
        self.showdown = self.terminal.showdown(np.array(row_boards, dtype=np.int64))
        self.rows = torch.as_tensor(np.array(rows, dtype=np.int64), device=device)
        self.weights = torch.as_tensor(np.array(weights), dtype=dtype, device=device).unsqueeze(1)
        amount = np.asarray(spent, dtype=np.float64).min(axis=1)
        self.amount = torch.as_tensor(amount, dtype=dtype, device=device).unsqueeze(1)

    def __call__(self, reach: torch.Tensor) -> torch.Tensor:
        """``[2, L, H]`` values for the reach ``[2, L, H]``."""
        out = torch.zeros_like(reach)
        for p in range(2):
            opp = reach[1 - p].index_select(0, self.rows)
            out[p].index_add_(0, self.rows, self.showdown(opp) * self.weights)
            out[p].mul_(self.amount)
        return out


def checkdown_leaf_values(reach: torch.Tensor, leaves: LeafInfo, la: Lookahead) -> torch.Tensor:
    """``[2, L, H]`` values of each leaf if nobody bets any more (showdown over all runouts)."""
    evaluator = getattr(la, "_checkdown", None)
    if evaluator is None:
        evaluator = CheckdownEvaluator(la.space, la.hands, leaves.boards, leaves.spent, la.device, la.dtype)
        object.__setattr__(la, "_checkdown", evaluator)
    return evaluator(reach)
