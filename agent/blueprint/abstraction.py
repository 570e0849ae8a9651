"""Card abstractions of the blueprint: which bucket a position's cards fall in, per round, and
deals drawn as buckets plus the showdown's outcome (all the C MCCFR sees of the cards).

:class:`LosslessAbstraction` keeps every (hand, board) apart: exact for games small enough to
enumerate (Leduc), where the blueprint's equilibrium can be checked by exact best response."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from pathlib import Path
from typing import Protocol

import numpy as np

from agent.blueprint.holdem import HoldemAbstraction, HoldemTables
from agent.nets.manifest import checked_file, sha256_of
from agent.solver.handspace import HandSpace
from models import MODELS_DIR
from native.mccfr import Deals, Trunk
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

    def deal(self, rng: np.random.Generator, n: int, clusters: int = 1) -> Deals:
        """``n`` random deals; with ``clusters`` > 1, each with one continuation per public cluster
        (:meth:`cluster_of`) of the split round's boards, weighted by its boards the hands leave possible."""
        ...

    def cluster_of(self, round_: int, bucket: int, clusters: int) -> int:
        """The public cluster of ``bucket`` in ``round_`` (a round from the split on)."""
        ...

    def deal_trunk(self, rng: np.random.Generator, n: int, clusters: int) -> Trunk:
        """The private cards of ``n`` deals, their trunk buckets and each cluster's weight."""
        ...

    def continuation(self, trunk: Trunk, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Cluster ``k``'s continuation of every deal of ``trunk``: buckets ``[n, 2, rounds]`` (the
        trunk's rounds as in ``trunk``) and outcomes ``[n]``, a board drawn from the cluster."""
        ...

    def buckets_all(self, round_: int, board: tuple[int, ...]) -> np.ndarray:
        """The bucket of every hand of the game's :class:`HandSpace` with ``board`` (-1 where blocked)."""
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
        self._final_cards = np.array(list(final), dtype=np.int64)  # [boards, size], in index order
        self._strength = np.full((len(final), space.size), -1, dtype=np.int64)
        for board, i in final.items():
            self._strength[i] = space.strengths(board)

    def bucket(self, round_: int, hand: int, board: tuple[int, ...]) -> int:
        key = tuple(sorted(int(c) for c in board[: self.board_sizes[round_]]))
        return hand * len(self._board_index[round_]) + self._board_index[round_][key]

    def buckets_all(self, round_: int, board: tuple[int, ...]) -> np.ndarray:
        shown = tuple(board[: self.board_sizes[round_]])
        out = np.array([self.bucket(round_, h, shown) for h in range(self.space.size)], dtype=np.int64)
        return np.where(self.space.valid(shown), out, -1)

    #: the first round of the continuations: every public cluster is a set of this round's boards
    @property
    def split_round(self) -> int:
        """Always 1: the public clusters group the second round's boards (split deals: two-round games only)."""
        return 1

    def _clusters(self, clusters: int) -> list[np.ndarray]:
        """The split round's board indices in ``clusters`` contiguous groups (Leduc: by rank)."""
        boards = len(self._board_index[1])
        if not 1 <= clusters <= boards:
            raise ValueError(f"{clusters} public clusters of {boards} boards")
        return np.array_split(np.arange(boards), clusters)

    def cluster_of(self, round_: int, bucket: int, clusters: int) -> int:
        board = bucket % len(self._board_index[round_])
        return next(i for i, group in enumerate(self._clusters(clusters)) if board in group)

    def deal(self, rng: np.random.Generator, n: int, clusters: int = 1) -> Deals:
        k = self.k
        rounds = len(self.board_sizes)
        if clusters == 1:
            cards = self.deck[np.argsort(rng.random((n, len(self.deck))), axis=1)[:, : 2 * k + self.board_sizes[-1]]]
            hands = np.stack([self._hand_table[_code(cards[:, p * k : (p + 1) * k])] for p in range(2)], axis=1)
            boards = [self._board_tables[r][_code(cards[:, 2 * k : 2 * k + size])] for r, size in enumerate(self.board_sizes)]
            buckets, outcome = self._buckets(hands, boards)
            return Deals(buckets[:, None], outcome[:, None], np.ones((n, 1), np.float32), rounds)
        return assemble(self, self.deal_trunk(rng, n, clusters), rng)

    def deal_trunk(self, rng: np.random.Generator, n: int, clusters: int) -> Trunk:
        k = self.k
        if len(self.board_sizes) != 2:
            raise ValueError("public clusters of a lossless abstraction: two-round games only (Leduc)")
        cards = self.deck[np.argsort(rng.random((n, len(self.deck))), axis=1)[:, : 2 * k]]
        hands = np.stack([self._hand_table[_code(cards[:, p * k : (p + 1) * k])] for p in range(2)], axis=1)
        blocked = (self._final_cards[None, :, :, None] == cards[:, None, None, :]).any(axis=(2, 3))  # [n, boards]
        weight = np.stack([(~blocked[:, group]).sum(axis=1) for group in self._clusters(clusters)], axis=1)
        buckets = np.zeros((n, 2, 2), np.int32)
        buckets[:, :, 0] = hands  # round 1 has no board: the bucket is the hand
        return Trunk(cards, buckets, weight.astype(np.float32))

    def continuation(self, trunk: Trunk, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        group = self._clusters(trunk.clusters)[k]
        ok = ~(self._final_cards[group][None, :, :, None] == trunk.cards[:, None, None, :]).any(axis=(2, 3))
        pick = group[np.argmax(rng.random(ok.shape) * ok, axis=1)]  # uniform among the possible ones
        hands = trunk.buckets[:, :, 0].astype(np.int64)
        return self._buckets(hands, [np.zeros(len(hands), np.int64), pick])

    def _buckets(self, hands: np.ndarray, boards: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Buckets ``[n, 2, rounds]`` and outcomes ``[n]`` of hands ``[n, 2]`` with each round's board index."""
        buckets = np.empty((len(hands), 2, len(boards)), dtype=np.int32)
        for r, board in enumerate(boards):
            buckets[:, :, r] = hands * len(self._board_index[r]) + board[:, None]
        strength = self._strength[boards[-1][:, None], hands]
        return buckets, np.sign(strength[:, 0] - strength[:, 1]).astype(np.int8)


#: the shipped hold'em abstraction's tables (deepstack blueprint abstraction)
HOLDEM_TABLES = MODELS_DIR / "blueprint" / "holdem-abstraction.npz"


def assemble(abstraction: Abstraction, trunk: Trunk, rng: np.random.Generator) -> Deals:
    """Deals with every cluster's continuation (one process: the same draws a cluster's worker makes
    from the same generator state, cluster after cluster)."""
    n, clusters = trunk.weight.shape
    rounds = trunk.buckets.shape[2]
    buckets = np.empty((n, clusters, 2, rounds), np.int32)
    outcome = np.empty((n, clusters), np.int8)
    for k in range(clusters):
        buckets[:, k], outcome[:, k] = abstraction.continuation(trunk, k, rng)
    return Deals(buckets, outcome, trunk.weight, abstraction.split_round)


def make_abstraction(name: str, game: Game) -> Abstraction:
    """The card abstraction called ``name`` for ``game``: ``lossless`` (small games), ``holdem`` (the
    shipped tables) or ``holdem:PATH`` (tables of one's own)."""
    if name == "lossless":
        return LosslessAbstraction(HandSpace(game))
    if name == "holdem" or name.startswith("holdem:"):
        if game.num_rounds != 4 or game.num_hole_cards != 2 or game.deck_size != 52:
            raise ValueError(f"the hold'em abstraction is for heads-up hold'em, not {game.name}")
        path = Path(name.partition(":")[2]) if ":" in name else HOLDEM_TABLES
        stat = path.stat() if path.exists() else None  # a file rewritten since is read again
        return _holdem(str(path), name, (stat.st_mtime_ns, stat.st_size) if stat else None)
    raise ValueError(f"unknown card abstraction {name!r}; known: lossless, holdem, holdem:PATH")


@lru_cache(maxsize=2)
def _holdem(path: str, name: str, stamp: tuple[int, int] | None = None) -> HoldemAbstraction:
    if Path(path).resolve().is_relative_to(MODELS_DIR.resolve()):
        checked_file(path, " (deepstack blueprint abstraction builds it)")  # a shipped file: its sha256
    abstraction = HoldemAbstraction(HoldemTables.load(Path(path)), name)
    abstraction.sha256 = sha256_of(Path(path))  # recorded with a blueprint: rebuilt tables are refused
    return abstraction


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
