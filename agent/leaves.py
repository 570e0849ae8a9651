"""Value functions for depth-limit leaves that need no network.

:func:`checkdown_leaf_values` values a leaf as if the rest of the hand were checked down:
the showdown at the current pot, averaged over every way to complete the board (with
card removal). It is exact for trees whose later rounds have no bets, and it is the
assumption of local best response (LBR).
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import torch

from agent.lookahead import LeafInfo, Lookahead
from agent.terminal import TerminalEquity


class _CheckdownCache:
    def __init__(self, la: Lookahead, leaves: LeafInfo) -> None:
        space = la.space
        game = space.game
        k = game.num_hole_cards
        boards: list[tuple[int, ...]] = []
        index: dict[tuple[int, ...], int] = {}
        rows: list[int] = []  # leaf index of each expanded row
        row_boards: list[int] = []
        weights: list[float] = []
        for i, board in enumerate(leaves.boards):
            missing = game.total_board_cards - len(board)
            remaining = [c for c in space.deck if c not in board]
            w = 1.0 / comb(len(remaining) - 2 * k, missing)
            for extra in combinations(remaining, missing):
                full = board + extra
                if full not in index:
                    index[full] = len(boards)
                    boards.append(full)
                rows.append(i)
                row_boards.append(index[full])
                weights.append(w)
        board_ids = np.array(row_boards, dtype=np.int64)
        self.terminal = TerminalEquity(space, la.hands, boards, la.device, la.dtype)
        self.showdown = self.terminal.showdown(board_ids)
        self.rows = torch.as_tensor(np.array(rows, dtype=np.int64), device=la.device)
        self.weights = torch.as_tensor(np.array(weights), dtype=la.dtype, device=la.device).unsqueeze(1)
        amount = np.array([min(s) for s in leaves.spent], dtype=np.float64)
        self.amount = torch.as_tensor(amount, dtype=la.dtype, device=la.device).unsqueeze(1)
        self.num_leaves = len(leaves.boards)


def checkdown_leaf_values(reach: torch.Tensor, leaves: LeafInfo, la: Lookahead) -> torch.Tensor:
    """``[2, L, H]`` values of each leaf if nobody bets any more (showdown over all runouts)."""
    cache = getattr(la, "_checkdown_cache", None)
    if cache is None:
        cache = _CheckdownCache(la, leaves)
        object.__setattr__(la, "_checkdown_cache", cache)
    out = torch.zeros_like(reach)
    for p in range(2):
        opp = reach[1 - p].index_select(0, cache.rows)
        wl = cache.showdown(opp) * cache.weights
        out[p].index_add_(0, cache.rows, wl)
        out[p].mul_(cache.amount)
    return out
