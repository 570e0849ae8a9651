"""Terminal values: what a hand is worth at a fold or a showdown against a whole range.

Both are linear in the opponent's reach, and both exclude opponent hands that share a
card with ours (card removal). A showdown is computed without a hand x hand matrix:
hands are sorted by strength once per board; the opponent mass weaker (stronger) than
each of our hands is a prefix sum; the part of it that shares one of our cards is a
prefix sum over the (at most 51) hands holding that card. Everything is gathers and
cumulative sums on tensors, so the same code runs on the CPU and on CUDA. The dense
matrix (:func:`dense_showdown_matrix`) is the reference the tests compare against and
the faster choice for tiny games (Leduc).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from agent.handspace import HandSpace

#: hand lists up to this size use dense per-board matrices (a batched matmul beats the
#: gathers of the sorted method there); larger ones the sorted O(H) method
DENSE_MAX_HANDS = 700


def dense_showdown_matrix(space: HandSpace, hands: np.ndarray, board: Sequence[int]) -> np.ndarray:
    """``M[i, j] = sign(strength_i - strength_j)`` for compatible valid hands, else 0."""
    strength = space.strengths(board)[hands]
    valid = strength >= 0
    compat = space.compatible()[np.ix_(hands, hands)]
    sign = np.sign(strength[:, None] - strength[None, :])
    return sign * compat * valid[:, None] * valid[None, :]


def compatible_matrix(space: HandSpace, hands: np.ndarray, board: Sequence[int]) -> np.ndarray:
    """``C[i, j] = 1`` when hands i and j can be dealt together on ``board``."""
    valid = space.valid(board)[hands]
    compat = space.compatible()[np.ix_(hands, hands)]
    return compat * valid[:, None] * valid[None, :]


class TerminalEquity:
    """Fold and showdown masses for one hand list on a registry of boards.

    ``hands`` are indices into ``space`` (the solver's hand list, shared by both players).
    Methods take the opponent's reach ``[N, H]`` and the board id of each row.
    """

    def __init__(
        self,
        space: HandSpace,
        hands: np.ndarray,
        boards: Sequence[tuple[int, ...]],
        device: torch.device,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        self.space = space
        self.hands = np.asarray(hands, dtype=np.int64)
        self.boards = [tuple(b) for b in boards]
        self.device = device
        self.dtype = dtype
        self.size = len(self.hands)
        inc = space.card_incidence[self.hands]  # [H, 52]
        self.k = int(space.cards.shape[1])
        self.incidence = torch.as_tensor(inc, dtype=dtype, device=device)
        valid = np.stack([space.valid(b)[self.hands] for b in self.boards])
        self.valid = torch.as_tensor(valid, dtype=dtype, device=device)  # [B, H]
        self.dense = self.size <= DENSE_MAX_HANDS
        self._showdown_boards: dict[int, object] = {}

    # ------------------------------------------------------------------ folds
    def fold_mass(self, opp_reach: torch.Tensor, board_ids: torch.Tensor) -> torch.Tensor:
        """Opponent mass compatible with each of our hands (``[N, H]``), zero for blocked hands."""
        valid = self.valid[board_ids]
        reach = opp_reach * valid
        total = reach.sum(dim=1, keepdim=True)
        card_sums = reach @ self.incidence  # [N, 52]
        blocked = card_sums @ self.incidence.T  # sum over our cards of the mass holding them
        mass = total - blocked + (self.k - 1) * reach
        return mass * valid

    # ------------------------------------------------------------------ showdowns
    def showdown(self, board_ids: np.ndarray) -> "ShowdownGroup":
        """A prepared evaluator for a fixed list of showdown rows on the given boards."""
        if self.dense:
            return _DenseShowdown(self, np.asarray(board_ids))
        return _SortedShowdown(self, np.asarray(board_ids))


class ShowdownGroup(ABC):
    """Win-minus-lose opponent mass for fixed rows; call with the opponent reach ``[N, H]``."""

    @abstractmethod
    def __call__(self, opp_reach: torch.Tensor) -> torch.Tensor:
        """``[N, H]`` win-minus-lose mass for each of our hands."""


class _DenseShowdown(ShowdownGroup):
    """One matrix per distinct board; rows are grouped by board for a batched matmul."""

    def __init__(self, te: TerminalEquity, board_ids: np.ndarray) -> None:
        unique, inverse, counts = np.unique(board_ids, return_inverse=True, return_counts=True)
        mats = np.stack([dense_showdown_matrix(te.space, te.hands, te.boards[b]) for b in unique])
        self.matrices_t = torch.as_tensor(mats.transpose(0, 2, 1).copy(), dtype=te.dtype, device=te.device)
        order = np.argsort(inverse, kind="stable")
        self.order = torch.as_tensor(order, device=te.device)
        self.uniform = bool((counts == counts[0]).all())
        self.count = int(counts[0])
        self.splits = [int(c) for c in counts]

    def __call__(self, opp_reach: torch.Tensor) -> torch.Tensor:
        grouped = opp_reach.index_select(0, self.order)
        if self.uniform:
            out = torch.bmm(grouped.view(len(self.splits), self.count, -1), self.matrices_t)
            out = out.reshape(opp_reach.shape)
        else:
            parts = grouped.split(self.splits)
            out = torch.cat([part @ self.matrices_t[i] for i, part in enumerate(parts)])
        result = torch.empty_like(out)
        result[self.order] = out
        return result


@dataclass
class _SortedIndex:
    order: torch.Tensor  # [N, H] hands sorted by strength (blocked first)
    lt: torch.Tensor  # [N, H] number of hands strictly weaker
    le: torch.Tensor  # [N, H] number of hands not stronger
    members: torch.Tensor  # [N, 52*L] per card, its hands sorted by strength (pad = H)
    card_lt: torch.Tensor  # [N, H*k] flat index into the per-card prefix sums (strictly weaker)
    card_le: torch.Tensor  # [N, H*k] (not stronger)
    card_tot: torch.Tensor  # [N, H*k] index of each card's total
    valid: torch.Tensor  # [N, H]


class _SortedShowdown(ShowdownGroup):
    """O(H) per row: prefix sums in strength order, corrected per card for card removal."""

    def __init__(self, te: TerminalEquity, board_ids: np.ndarray) -> None:
        self.te = te
        unique, inverse = np.unique(board_ids, return_inverse=True)
        per_board = [self._prepare(te, te.boards[b]) for b in unique]
        self.L = max(pb["L"] for pb in per_board)
        stacked = {}
        for key in ("order", "lt", "le", "card_lt", "card_le", "card_tot", "valid", "members"):
            arrays = []
            for pb in per_board:
                a = pb[key]
                if key == "members":
                    a = self._pad_members(a, pb["L"], self.L, te.size)
                if key in ("card_lt", "card_le", "card_tot"):
                    a = self._reindex_cards(a, pb["L"], self.L)
                arrays.append(a)
            stacked[key] = np.stack(arrays)[inverse]
        dev = te.device
        self.index = _SortedIndex(
            order=torch.as_tensor(stacked["order"], device=dev),
            lt=torch.as_tensor(stacked["lt"], device=dev),
            le=torch.as_tensor(stacked["le"], device=dev),
            members=torch.as_tensor(stacked["members"], device=dev),
            card_lt=torch.as_tensor(stacked["card_lt"], device=dev),
            card_le=torch.as_tensor(stacked["card_le"], device=dev),
            card_tot=torch.as_tensor(stacked["card_tot"], device=dev),
            valid=torch.as_tensor(stacked["valid"], dtype=te.dtype, device=dev),
        )

    @staticmethod
    def _prepare(te: TerminalEquity, board: tuple[int, ...]) -> dict:
        H = te.size
        strength = te.space.strengths(board)[te.hands]  # -1 where blocked
        order = np.argsort(strength, kind="stable")
        sorted_s = strength[order]
        lt = np.searchsorted(sorted_s, strength, side="left")
        le = np.searchsorted(sorted_s, strength, side="right")
        cards = te.space.cards[te.hands].astype(np.int64)  # [H, k]
        k = cards.shape[1]
        members_list = []
        L = 1
        for c in range(52):
            holders = np.nonzero((cards == c).any(axis=1) & (strength >= 0))[0]
            holders = holders[np.argsort(strength[holders], kind="stable")]
            members_list.append(holders)
            L = max(L, len(holders))
        members = np.full((52, L), H, dtype=np.int64)
        card_lt = np.zeros((H, k), dtype=np.int64)
        card_le = np.zeros((H, k), dtype=np.int64)
        card_tot = np.zeros((H, k), dtype=np.int64)
        for c, holders in enumerate(members_list):
            members[c, : len(holders)] = holders
            hs = strength[holders]
            mine = np.nonzero((cards == c).any(axis=1))[0]
            for j in range(k):
                rows = mine[cards[mine, j] == c]
                # positions in the (L+1)-long prefix-sum row of card c (position 0 = empty sum)
                card_lt[rows, j] = c * (L + 1) + np.searchsorted(hs, strength[rows], side="left")
                card_le[rows, j] = c * (L + 1) + np.searchsorted(hs, strength[rows], side="right")
                card_tot[rows, j] = c * (L + 1) + len(holders)
        valid = (strength >= 0).astype(np.float64)
        return {
            "order": order,
            "lt": lt,
            "le": le,
            "members": members.reshape(-1),
            "card_lt": card_lt.reshape(-1),
            "card_le": card_le.reshape(-1),
            "card_tot": card_tot.reshape(-1),
            "valid": valid,
            "L": L,
        }

    @staticmethod
    def _pad_members(flat: np.ndarray, L: int, L_max: int, pad: int) -> np.ndarray:
        m = flat.reshape(52, L)
        out = np.full((52, L_max), pad, dtype=np.int64)
        out[:, :L] = m
        return out.reshape(-1)

    @staticmethod
    def _reindex_cards(flat: np.ndarray, L: int, L_max: int) -> np.ndarray:
        c, pos = np.divmod(flat, L + 1)
        return c * (L_max + 1) + pos

    def __call__(self, opp_reach: torch.Tensor) -> torch.Tensor:
        ix = self.index
        n, H = opp_reach.shape
        reach = opp_reach * ix.valid
        zero = reach.new_zeros(n, 1)
        sorted_r = reach.gather(1, ix.order)
        prefix = torch.cat([zero, sorted_r.cumsum(dim=1)], dim=1)  # [N, H+1]
        total = prefix[:, -1:]
        weaker = prefix.gather(1, ix.lt)
        not_stronger = prefix.gather(1, ix.le)
        padded = torch.cat([reach, zero], dim=1)  # index H = padding (mass 0)
        per_card = padded.gather(1, ix.members).view(n, 52, self.L)
        card_prefix = torch.cat([reach.new_zeros(n, 52, 1), per_card.cumsum(dim=2)], dim=2).view(n, -1)
        k = self.te.k
        c_weaker = card_prefix.gather(1, ix.card_lt).view(n, H, k).sum(dim=2)
        c_not_stronger = card_prefix.gather(1, ix.card_le).view(n, H, k).sum(dim=2)
        c_total = card_prefix.gather(1, ix.card_tot).view(n, H, k).sum(dim=2)
        win = weaker - c_weaker
        lose = (total - not_stronger) - (c_total - c_not_stronger)
        return (win - lose) * ix.valid
