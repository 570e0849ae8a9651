"""Card abstractions of the blueprint: which bucket a position's cards fall in, per round, and
deals drawn as buckets plus the showdown's outcome (all the C MCCFR sees of the cards).

:class:`LosslessAbstraction` keeps every (hand, board) apart: exact for games small enough to
enumerate (Leduc), where the blueprint's equilibrium can be checked by exact best response."""

from __future__ import annotations

from itertools import combinations
from typing import Protocol

import numpy as np

from agent.solver.handspace import HandSpace
from protocol.gamedef import Game

#: a lossless abstraction beyond this many buckets in a round is not what its caller wants
MAX_LOSSLESS_BUCKETS = 1_000_000


class Abstraction(Protocol):
    """Buckets per round and deals for MCCFR."""

    #: how a blueprint file names it (:func:`make_abstraction`)
    name: str
    num_buckets: tuple[int, ...]

    def bucket(self, round_: int, hand: int, board: tuple[int, ...]) -> int:
        """The bucket of hand index ``hand`` (of the game's :class:`HandSpace`) with ``board`` in ``round_``."""
        ...

    def deal(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` random deals: buckets ``[n, 2, rounds]`` (int32) and outcomes ``[n]`` (int8: +1
        position 0 wins the showdown, -1 position 1 does, 0 a tie)."""
        ...


class LosslessAbstraction:
    """Bucket = (hand, board) pair: round ``r``'s bucket is ``hand * boards_r + board index``."""

    name = "lossless"

    def __init__(self, space: HandSpace) -> None:
        game = space.game
        self.space = space
        self.deck = np.array(space.deck, dtype=np.int64)
        self.k = game.num_hole_cards
        self.board_sizes = [game.board_cards_through(r) for r in range(game.num_rounds)]
        # the boards of each round (their cards sorted) -> index
        self._board_index = [{b: i for i, b in enumerate(combinations(sorted(space.deck), s))} for s in self.board_sizes]
        self.num_buckets = tuple(space.size * len(ix) for ix in self._board_index)
        if max(self.num_buckets) > MAX_LOSSLESS_BUCKETS:
            raise ValueError(f"a lossless abstraction of {game.name!r} needs {max(self.num_buckets):,} buckets in a round")
        # dense lookups by the cards' code (sorted, base 52), for drawing deals in numpy
        self._hand_table = _dense_table({tuple(int(c) for c in row): i for i, row in enumerate(space.cards)}, self.k)
        self._board_tables = [_dense_table(ix, size) for ix, size in zip(self._board_index, self.board_sizes)]
        final = self._board_index[-1]
        self._strength = np.full((len(final), space.size), -1, dtype=np.int64)
        for board, i in final.items():
            self._strength[i] = space.strengths(board)

    def bucket(self, round_: int, hand: int, board: tuple[int, ...]) -> int:
        key = tuple(sorted(int(c) for c in board[: self.board_sizes[round_]]))
        return hand * len(self._board_index[round_]) + self._board_index[round_][key]

    def deal(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        k = self.k
        cards = self.deck[np.argsort(rng.random((n, len(self.deck))), axis=1)[:, : 2 * k + self.board_sizes[-1]]]
        hands = np.stack([self._hand_table[_code(cards[:, p * k : (p + 1) * k])] for p in range(2)], axis=1)
        buckets = np.empty((n, 2, len(self.board_sizes)), dtype=np.int32)
        for r, size in enumerate(self.board_sizes):
            board = self._board_tables[r][_code(cards[:, 2 * k : 2 * k + size])]
            buckets[:, :, r] = hands * len(self._board_index[r]) + board[:, None]
        strength = self._strength[board[:, None], hands]
        outcome = np.sign(strength[:, 0] - strength[:, 1]).astype(np.int8)
        return buckets, outcome


def make_abstraction(name: str, game: Game) -> Abstraction:
    """The card abstraction called ``name`` for ``game``."""
    if name == "lossless":
        return LosslessAbstraction(HandSpace(game))
    raise ValueError(f"unknown card abstraction {name!r}; known: lossless")


def _code(cards: np.ndarray) -> np.ndarray:
    """Rows of cards -> one integer per row, the same for any order of a row's cards."""
    out = np.zeros(len(cards), dtype=np.int64)
    for column in np.sort(cards, axis=1).T:
        out = out * 52 + column
    return out


def _dense_table(index: dict[tuple[int, ...], int], size: int) -> np.ndarray:
    """``index`` (sorted card tuples of ``size`` cards) as an array over :func:`_code`."""
    if size > 3:
        raise ValueError(f"a lossless abstraction looks up at most 3 cards at once, not {size}")
    table = np.full(52**size, -1, dtype=np.int64)
    for cards, i in index.items():
        table[_code(np.array([cards], dtype=np.int64).reshape(1, size))[0]] = i
    return table
