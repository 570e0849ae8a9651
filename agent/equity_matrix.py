"""Hand-versus-hand check-down matrices: ``E[h, h'] = E[sign(strength h - strength h')]`` over
every way to complete the board, for hands that can be dealt together.

They value a depth-limit leaf when no value network is available (or is wanted): the
rest of the hand is assumed checked down, so a leaf is worth ``amount * E @ opponent reach``.
A flop matrix enumerates all 1081 turn-river runouts, a turn matrix the 46 rivers; the
pre-flop matrix is estimated from random boards (an unbiased Monte-Carlo mean, cached on
disk because it is the same every hand).
"""

from __future__ import annotations

from collections import OrderedDict
from itertools import combinations
from pathlib import Path

import numpy as np
import torch

from native.cards import holdem_hand_cards
from native.showdown import BoardTable


def _pair_compat() -> np.ndarray:
    inc = np.zeros((1326, 52), dtype=np.float32)
    cards = holdem_hand_cards().astype(np.int64)
    inc[np.repeat(np.arange(1326), 2), cards.reshape(-1)] = 1
    return (inc @ inc.T) == 0


def _accumulate(boards: list[tuple[int, ...]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum of sign matrices and number of boards on which each pair is possible."""
    total = torch.zeros(1326, 1326)
    count = torch.zeros(1326, 1326)
    for board in boards:
        s = torch.as_tensor(BoardTable(board).strength.astype(np.float32))
        valid = (s >= 0).float()
        total += torch.sign(s[:, None] - s[None, :]) * valid[:, None] * valid[None, :]
        count += valid[:, None] * valid[None, :]
    return total, count


def exact_matrix(board: tuple[int, ...]) -> torch.Tensor:
    """``[1326, 1326]`` check-down matrix of a flop or turn board (all runouts enumerated)."""
    remaining = [c for c in range(52) if c not in board]
    runouts = [tuple(board) + extra for extra in combinations(remaining, 5 - len(board))]
    total, count = _accumulate(runouts)
    compat = torch.as_tensor(_pair_compat())
    return torch.where(count > 0, total / count.clamp(min=1), torch.zeros(())) * compat


def preflop_matrix(boards: int, seed: int = 0) -> torch.Tensor:
    """Monte-Carlo estimate of the pre-flop check-down matrix from ``boards`` random boards."""
    rng = np.random.default_rng(seed)
    sample = [tuple(int(c) for c in rng.choice(52, 5, replace=False)) for _ in range(boards)]
    total, count = _accumulate(sample)
    compat = torch.as_tensor(_pair_compat())
    return torch.where(count > 0, total / count.clamp(min=1), torch.zeros(())) * compat


class CheckdownMatrices:
    """Matrices per board (computed on first use, kept in an LRU cache)."""

    def __init__(self, preflop_path: Path | None = None, cache: int = 8) -> None:
        self.preflop_path = preflop_path
        self._cache: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()
        self.cache_size = cache

    def matrix(self, board: tuple[int, ...]) -> torch.Tensor:
        key = tuple(sorted(board))
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        if len(key) == 0:
            if self.preflop_path is None or not Path(self.preflop_path).exists():
                raise FileNotFoundError(f"pre-flop check-down matrix {self.preflop_path} is missing (deepstack buckets builds it)")
            with np.load(self.preflop_path) as z:
                m = torch.as_tensor(z["matrix"].astype(np.float32))
        elif len(key) in (3, 4):
            m = exact_matrix(key)
        elif len(key) == 5:
            m = exact_matrix(key)
        else:
            raise ValueError(f"no check-down matrix for a {len(key)}-card board")
        self._cache[key] = m
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return m


def save_preflop(matrix: torch.Tensor, path: Path, boards: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, matrix=matrix.numpy().astype(np.float16), boards=np.array(boards))
