"""Terminal values: what a hand is worth at a fold or a showdown against a whole range.

Both are linear in the opponent's reach, and both exclude opponent hands that share a
card with ours (card removal). Showdowns use the native O(H) kernels of
:mod:`native.torch_showdown` (sorted sweeps with per-card corrections; C on the CPU,
tensor operations on CUDA), never a hand x hand matrix; the dense matrix
(:func:`dense_showdown_matrix`) is the reference the tests compare against and the faster
choice for tiny games (Leduc).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import torch

from agent.solver.handspace import HandSpace
from native.torch_showdown import TorchShowdown

#: hand lists up to this size use dense per-board matrices (tiny games such as Leduc);
#: larger ones the native O(H) kernels
DENSE_MAX_HANDS = 32


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
        self._kernel: TorchShowdown | None = None

    def kernel(self) -> TorchShowdown:
        """The native kernels for this hand list and board registry (built on first use)."""
        if self._kernel is None:
            cards = np.ascontiguousarray(self.space.cards[self.hands])
            self._kernel = TorchShowdown(cards, self.boards, self.device, self.dtype)
        return self._kernel

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
    def showdown(self, board_ids: np.ndarray) -> ShowdownGroup:
        """A prepared evaluator for a fixed list of showdown rows on the given boards."""
        if self.dense:
            return _DenseShowdown(self, np.asarray(board_ids))
        return _KernelShowdown(self, np.asarray(board_ids))

    def fold_group(self, board_ids: torch.Tensor) -> FoldGroup:
        """An evaluator for the fold rows on ``board_ids``, prepared once (the native kernels unless dense)."""
        return FoldGroup(self, board_ids)


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


class _KernelShowdown(ShowdownGroup):
    """The native O(H) kernels (C on the CPU in float32, tensor ops otherwise), rows prepared once."""

    def __init__(self, te: TerminalEquity, board_ids: np.ndarray) -> None:
        self.rows = te.kernel().prepare(torch.as_tensor(np.asarray(board_ids, dtype=np.int64), device=te.device))

    def __call__(self, opp_reach: torch.Tensor) -> torch.Tensor:
        return self.rows.showdown(opp_reach)


class FoldGroup:
    """Compatible opponent mass for fixed rows (prepared once)."""

    def __init__(self, te: TerminalEquity, board_ids: torch.Tensor) -> None:
        self.te = te
        self.board_ids = board_ids
        self.rows = None if te.dense else te.kernel().prepare(board_ids)

    def __call__(self, opp_reach: torch.Tensor) -> torch.Tensor:
        """``[N, H]`` opponent mass compatible with each of our hands on its row's board, as :meth:`TerminalEquity.fold_mass`."""
        if self.rows is None:
            return self.te.fold_mass(opp_reach, self.board_ids)
        return self.rows.fold(opp_reach)
