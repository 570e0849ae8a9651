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
from math import comb
from pathlib import Path

import numpy as np
import torch
from native._native import ffi, lib
from tqdm import tqdm

from agent.common.files import save_npz
from native.board_tables import BoardTable
from native.cards import hands_blocked_by, holdem_hand_cards


def _pair_compat() -> np.ndarray:
    inc = np.zeros((1326, 52), dtype=np.float32)
    cards = holdem_hand_cards().astype(np.int64)
    inc[np.repeat(np.arange(1326), 2), cards.reshape(-1)] = 1
    return (inc @ inc.T) == 0


def _accumulate(boards: list[tuple[int, ...]], progress: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum of sign matrices and number of boards on which each pair is possible."""
    total = torch.zeros(1326, 1326)
    count = torch.zeros(1326, 1326)
    for board in tqdm(boards, desc="pre-flop matrix", unit=" boards", disable=not progress):
        s = torch.as_tensor(BoardTable(board).strength.astype(np.float32))
        valid = (s >= 0).float()
        total += torch.sign(s[:, None] - s[None, :]) * valid[:, None] * valid[None, :]
        count += valid[:, None] * valid[None, :]
    return total, count


def exact_matrix(board: tuple[int, ...]) -> torch.Tensor:
    """``[1326, 1326]`` check-down matrix of a flop, turn or river board (all runouts enumerated).

    The C kernel sums the win/lose signs of every pair over the runouts (~1 s for a flop
    instead of ~15 s of dense tensor passes); two compatible hands that the board does not
    block are both valid on exactly C(remaining - 4, missing) runouts, so the sum is divided
    by that count."""

    remaining = [c for c in range(52) if c not in board]
    missing = 5 - len(board)
    runouts = [tuple(board) + extra for extra in combinations(remaining, missing)]
    strength = np.ascontiguousarray(np.stack([BoardTable(r).strength for r in runouts]), dtype=np.int32)
    total = np.zeros((1326, 1326), dtype=np.int32)
    rc = lib.ds_pair_sign_sum(1326, len(runouts), ffi.from_buffer("int32_t[]", strength), ffi.from_buffer("int32_t[]", total))
    if rc != 0:  # pragma: no cover - sizes are fixed here
        raise RuntimeError(f"ds_pair_sign_sum failed ({rc})")
    blocked = torch.as_tensor(_blocked_by(board))
    keep = torch.as_tensor(_pair_compat()) & ~blocked[:, None] & ~blocked[None, :]
    count = comb(len(remaining) - 4, missing)
    return torch.as_tensor(total, dtype=torch.float32) / count * keep


def _blocked_by(board: tuple[int, ...]) -> np.ndarray:
    return np.asarray(hands_blocked_by(board), dtype=bool)


def preflop_matrix(boards: int, seed: int = 0, progress: bool = False) -> torch.Tensor:
    """Monte-Carlo estimate of the pre-flop check-down matrix from ``boards`` random boards."""
    rng = np.random.default_rng(seed)
    sample = [tuple(int(c) for c in rng.choice(52, 5, replace=False)) for _ in range(boards)]
    total, count = _accumulate(sample, progress)
    compat = torch.as_tensor(_pair_compat())
    return torch.where(count > 0, total / count.clamp(min=1), torch.zeros(())) * compat


class CheckdownMatrices:
    """Matrices per board (computed on first use, kept in an LRU cache)."""

    def __init__(self, preflop_path: Path | None = None, cache: int = 8) -> None:
        self.preflop_path = preflop_path
        self._cache: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()
        self.cache_size = cache

    def matrix(self, board: tuple[int, ...]) -> torch.Tensor:
        """The ``[1326, 1326]`` check-down matrix of ``board`` (0, 3, 4 or 5 cards, any order): the pre-flop
        one read from ``preflop_path``, the others enumerated exactly (a flop's takes a while, hence the cache)."""
        key = tuple(sorted(board))
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        if len(key) == 0:
            if self.preflop_path is None or not Path(self.preflop_path).exists():
                raise FileNotFoundError(
                    f"pre-flop check-down matrix {self.preflop_path} is missing (deepstack buckets builds it)"
                )
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
    """Write the Monte-Carlo pre-flop matrix (float16, with its board count) where :class:`CheckdownMatrices` loads it."""
    save_npz(path, matrix=matrix.numpy().astype(np.float16), boards=np.array(boards))
