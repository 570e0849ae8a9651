"""The blueprint's hold'em card abstraction (seed 001's hierarchy, at a small size).

* Pre-flop: the 169 lossless classes.
* Public buckets: the 1,755 suit-canonical flops clustered into C public clusters by the seed's
  transition-table distance over a base abstraction, the value networks' flop table of 1000 buckets
  (agent/blueprint/public.py); the first version's k-means over each flop's histogram of its private
  buckets remains as ``public="histogram"``.
* Private buckets, imperfect recall, inside each public cluster: a street's bucket is ``cluster * P +
  private``, the cluster being the flop's for the whole hand, so every information set after the flop belongs
  to one cluster (what the distributed scheme's workers own). Flop and turn: the value networks' EMD bucket
  tables (models/holdem/buckets-*.npz, 1000 equity-histogram centroids) coarsened to P groups by k-means over
  their centroids, stored for every suit-canonical board (1,755 flops, 16,432 turns) and hand; on the flop
  separately per public cluster (the centroids its flops use), as the seed does; on the turn for all clusters
  at once (a canonical turn board's table cannot know which of its cards were the flop; a table per cluster
  would be 8 times the size). River: the hand's equity against a uniform hand, cut into P equal steps,
  computed per deal in C.

Suit isomorphism: a board's canonical form is the smallest (as sorted cards) of its 24 suit relabelings;
the hand is relabeled with the same permutation before its table row is read.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from agent.blueprint.public import board_distances, cluster_public, transition_table, within_cluster_distance
from agent.common.files import NPZ_ERRORS, npz_problem, save_npz
from agent.nets.buckets import BucketTable, RiverStrength, kmeans_l1, preflop_classes
from native.cards import holdem_hand_cards
from native.equity import river_equity_deals
from native.evaluator import evaluate
from native.mccfr import Deals, Trunk

#: the 24 relabelings of the four suits
SUIT_PERMS = np.array(list(itertools.permutations(range(4))), dtype=np.int64)
NUM_PREFLOP = 169
#: the file format of a hold'em abstraction
FORMAT = "deepstack-holdem-abstraction-1"


def _code(cards: np.ndarray) -> np.ndarray:
    """Sorted rows of cards -> base-52 integers."""
    out = np.zeros(len(cards), dtype=np.int64)
    for j in range(cards.shape[1]):
        out = out * 52 + cards[:, j]
    return out


def canonical(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``boards`` ``[n, s]``: the code of its canonical form and the suit permutation (index
    into :data:`SUIT_PERMS`) that gives it."""
    rank, suit = boards // 4, boards % 4
    codes = np.stack([_code(np.sort(rank * 4 + p[suit], axis=1)) for p in SUIT_PERMS], axis=1)  # [n, 24]
    which = np.argmin(codes, axis=1)
    return codes[np.arange(len(boards)), which], which


def relabel(cards: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """``cards`` ``[n, k]`` with row i's suits relabeled by ``SUIT_PERMS[perm[i]]``."""
    return (cards // 4) * 4 + SUIT_PERMS[perm][np.arange(len(cards))[:, None], cards % 4]


class BoardIndex:
    """The suit-canonical boards of ``size`` cards, numbered, with a dense lookup by code."""

    def __init__(self, size: int) -> None:
        combos = np.array(list(itertools.combinations(range(52), size)), dtype=np.int64)
        codes = np.unique(canonical(combos)[0])
        self.size = size
        self.codes = codes
        self.table = np.full(52**size, -1, dtype=np.int32)
        self.table[codes] = np.arange(len(codes), dtype=np.int32)

    def __len__(self) -> int:
        return len(self.codes)

    def cards(self, i: int) -> tuple[int, ...]:
        """Canonical board ``i``'s cards, decoded from its base-52 code."""
        code, out = int(self.codes[i]), []
        for _ in range(self.size):
            code, c = divmod(code, 52)
            out.append(c)
        return tuple(reversed(out))

    def lookup(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Canonical board index and suit permutation of each row of ``boards``."""
        codes, perm = canonical(boards)
        return self.table[codes], perm


def _hand_table() -> np.ndarray:
    table = np.full((52, 52), -1, dtype=np.int64)
    hands = holdem_hand_cards().astype(np.int64)
    table[hands[:, 0], hands[:, 1]] = np.arange(len(hands))
    table[hands[:, 1], hands[:, 0]] = np.arange(len(hands))
    return table


HAND_INDEX = _hand_table()


@dataclass
class HoldemTables:
    """What a hold'em abstraction stores: each canonical flop's public cluster, and each canonical flop's
    and turn's private bucket of every hand (relabeled to the canonical suits; 255 where blocked)."""

    flop_cluster: np.ndarray  # [1755] uint8
    flop_private: np.ndarray  # [1755, 1326] uint8
    turn_private: np.ndarray  # [16432, 1326] uint8
    private: tuple[int, int, int]  # P per street: flop, turn, river

    @property
    def clusters(self) -> int:
        """Number of public clusters of the flops (their labels run 0..clusters-1)."""
        return int(self.flop_cluster.max()) + 1

    def save(self, path: Path) -> None:
        """Write the tables to the ``.npz`` file ``path`` atomically, tagged with the format :meth:`load` checks."""
        save_npz(
            path,
            format=np.array(FORMAT),
            flop_cluster=self.flop_cluster,
            flop_private=self.flop_private,
            turn_private=self.turn_private,
            private=np.array(self.private),
        )

    @classmethod
    def load(cls, path: Path) -> HoldemTables:
        """The tables saved at ``path``; a ValueError naming the file if it is not a hold'em abstraction
        of this format or its tables have the wrong shapes."""
        try:
            with np.load(path) as z:
                if str(z["format"]) != FORMAT:
                    raise ValueError(f"format {z['format']}, expected {FORMAT}")
                tables = cls(z["flop_cluster"], z["flop_private"], z["turn_private"], tuple(int(x) for x in z["private"]))
        except NPZ_ERRORS as exc:
            raise ValueError(f"{path}: not a hold'em abstraction ({npz_problem(exc)})") from None
        if tables.flop_private.shape != (1755, 1326) or tables.turn_private.shape != (16432, 1326):
            raise ValueError(f"{path}: tables of shapes {tables.flop_private.shape} and {tables.turn_private.shape}")
        return tables


def coarsen(centroids: np.ndarray, groups: int, seed: int = 0) -> np.ndarray:
    """Bucket ``centroids`` (cumulative histograms) in ``groups`` groups (k-means over them), numbered from
    the weakest (lowest mean equity) up: ``[len(centroids)]`` group of each bucket."""
    rng = np.random.default_rng(seed)
    points = torch.as_tensor(centroids, dtype=torch.float32)
    groups = min(groups, len(points))
    means, _ = kmeans_l1(points, groups, 30, rng)
    assign = torch.cdist(points, means, p=1).argmin(dim=1).numpy()
    order = np.argsort(np.argsort(means.sum(dim=1).numpy())[::-1])  # larger CDF sum = weaker
    return order[assign]


def build_tables(
    flop_table: BucketTable,
    turn_table: BucketTable,
    private: tuple[int, int, int],
    clusters: int,
    seed: int = 0,
    progress: bool = False,
    boards: Callable[[int], BoardIndex] = BoardIndex,
    public: str = "transition",
    stats: dict[str, float] | None = None,
) -> HoldemTables:
    """Every canonical flop's and turn's private buckets, and the flops' public clusters: by the seed's
    transition-table distance over the flop table's own buckets (``public="transition"``, seed 001's
    Algorithms 2-3, agent/blueprint/public.py) or by k-means over each flop's histogram of coarse buckets
    (``"histogram"``, the first version). ``stats``, if given, receives each method's mean within-cluster
    distance (the seed's distance), to compare them."""
    if public not in PUBLIC_METHODS:
        raise ValueError(f"public clustering {public!r}: expected one of {', '.join(PUBLIC_METHODS)}")
    base = _board_buckets(flop_table, boards(3), progress)  # the flop table's own buckets: the seed's base
    flop_private = _grouped(base, coarsen(flop_table.centroids, private[0], seed))
    turn_private = _grouped(_board_buckets(turn_table, boards(4), progress), coarsen(turn_table.centroids, private[1], seed))
    distance = board_distances(transition_table(base, flop_table.num_buckets))
    flop_cluster = public_clusters(public, distance, flop_private, private[0], clusters, seed)
    if stats is not None:
        for method in PUBLIC_METHODS:
            assign = (
                flop_cluster if method == public else public_clusters(method, distance, flop_private, private[0], clusters, seed)
            )
            stats[f"within_cluster_distance_{method}"] = within_cluster_distance(distance, assign)
    regroup_flops(flop_private, base, flop_cluster, flop_table.centroids, private[0], seed)
    return HoldemTables(flop_cluster.astype(np.uint8), flop_private, turn_private, private)


def regroup_flops(
    rows: np.ndarray, base: np.ndarray, flop_cluster: np.ndarray, centroids: np.ndarray, groups: int, seed: int
) -> None:
    """The flop's private buckets made separately inside each public cluster (seed 001): the base buckets
    that the cluster's flops use, coarsened to ``groups`` by themselves, so each cluster spends its buckets
    on the hands it has. ``rows`` ([flops, 1326], 255 where blocked) is rewritten in place."""
    for k in np.unique(flop_cluster):
        mine = flop_cluster == k
        used = np.unique(base[mine][base[mine] >= 0])
        lookup = np.full(len(centroids), 255, dtype=np.uint8)
        lookup[used] = coarsen(centroids[used], groups, seed)
        rows[mine] = _grouped(base[mine], lookup)


def _board_buckets(table: BucketTable, index: BoardIndex, progress: bool) -> np.ndarray:
    """``[boards, 1326]`` bucket of every hand on every board of ``index`` (-1 where blocked)."""
    street = "flop" if index.size == 3 else "turn"
    rows = np.full((len(index), 1326), -1, dtype=np.int32)
    for i in tqdm(range(len(index)), desc=f"{street} buckets", unit="board", disable=not progress):
        rows[i] = table.assign(index.cards(i))
    return rows


def _grouped(ids: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Bucket ids mapped through ``groups`` as uint8 (255 where blocked)."""
    return np.where(ids >= 0, groups[np.maximum(ids, 0)], 255).astype(np.uint8)


#: how the flops are clustered into public buckets
PUBLIC_METHODS = ("transition", "histogram")


def public_clusters(
    method: str, distance: np.ndarray, coarse: np.ndarray, coarse_buckets: int, clusters: int, seed: int
) -> np.ndarray:
    """``[flops]`` public cluster of each canonical flop. ``distance``: the seed's distances between the flops;
    ``coarse``: every flop's hands in the private buckets (255 where blocked, ordered by strength)."""
    rng = np.random.default_rng(seed)
    if method == "transition":
        return cluster_public(distance, clusters, rng)
    counts = np.stack([np.bincount(r[r < 255], minlength=coarse_buckets) for r in coarse]).astype(np.float32)
    cdfs = torch.as_tensor(np.cumsum(counts / counts.sum(axis=1, keepdims=True), axis=1))
    centroids, _ = kmeans_l1(cdfs, clusters, 50, rng)
    return torch.cdist(cdfs, centroids, p=1).argmin(dim=1).numpy()


class HoldemAbstraction:
    """The blueprint's card abstraction of heads-up hold'em (see the module's docstring)."""

    split_round = 1

    def __init__(self, tables: HoldemTables, name: str = "holdem") -> None:
        self.name = name
        self.tables = tables
        #: the tables file's sha256, where they came from one (a blueprint records it)
        self.sha256: str | None = None
        self.flops = BoardIndex(3)
        self.turns = BoardIndex(4)
        pf, pt, pr = tables.private
        c = tables.clusters
        self.num_buckets = (NUM_PREFLOP, c * pf, c * pt, c * pr)
        self._preflop = preflop_classes()
        # every raw flop's cluster, and per cluster its raw flops (for drawing one from a cluster)
        raw = np.array(list(itertools.combinations(range(52), 3)), dtype=np.int64)
        self._raw_flops = raw
        self._raw_cluster = tables.flop_cluster[self.flops.lookup(raw)[0]].astype(np.int64)
        self._flop_cluster_by_code = np.full(52**3, -1, dtype=np.int64)
        self._flop_cluster_by_code[_code(raw)] = self._raw_cluster
        # per cluster, how many raw flops hold a card / a pair of cards (for the weights |F_{k,h}|)
        self._holding = np.zeros((c, 52), dtype=np.int64)
        self._holding_pair = np.zeros((c, 52, 52), dtype=np.int64)
        for (a, b, d), k in zip(raw.tolist(), self._raw_cluster.tolist()):
            for x in (a, b, d):
                self._holding[k, x] += 1
            for x, y in ((a, b), (a, d), (b, d)):
                self._holding_pair[k, x, y] += 1
                self._holding_pair[k, y, x] += 1
        self._cluster_size = np.bincount(self._raw_cluster, minlength=c)

    # ---------------------------------------------------------------- buckets
    def _private(self, round_: int, hands: np.ndarray, boards: np.ndarray, held: np.ndarray) -> np.ndarray:
        """Private bucket of each row: ``hands`` ``[n, 2]`` cards, ``boards`` ``[n, s]``; ``held`` the
        other cards of the deal (for the river's C call only)."""
        pf, pt, pr = self.tables.private
        if round_ == 3:
            deals = np.concatenate([hands, held, boards], axis=1)
            eq = river_equity_deals(deals)[:, 0]
            return np.minimum((eq * pr).astype(np.int64), pr - 1)
        index, rows = (self.flops, self.tables.flop_private) if round_ == 1 else (self.turns, self.tables.turn_private)
        board_i, perm = index.lookup(boards)
        own = relabel(hands, perm)
        return rows[board_i, HAND_INDEX[own[:, 0], own[:, 1]]].astype(np.int64)

    def _cluster(self, flops: np.ndarray) -> np.ndarray:
        return self._flop_cluster_by_code[_code(np.sort(flops, axis=1))]

    def bucket(self, round_: int, hand: int, board: tuple[int, ...]) -> int:
        cards = holdem_hand_cards()[hand].astype(np.int64)
        if round_ == 0:
            return int(self._preflop[hand])
        b = np.array([board[: 2 + round_]], dtype=np.int64)
        cluster = int(self._cluster(b[:, :3])[0])
        others = np.array([c for c in range(52) if c not in cards and c not in board][:2], dtype=np.int64)
        private = int(self._private(round_, cards[None], b, others[None])[0])
        return cluster * self.tables.private[round_ - 1] + private

    def buckets_all(self, round_: int, board: tuple[int, ...]) -> np.ndarray:
        """``[1326]`` bucket of every hand with ``board`` in ``round_`` (-1 where the board blocks it)."""
        hands = holdem_hand_cards().astype(np.int64)
        blocked = np.isin(hands, np.asarray(board[: 2 + round_] if round_ else (), dtype=np.int64)).any(axis=1)
        if round_ == 0:
            return self._preflop.copy()
        b = np.array([board[: 2 + round_]], dtype=np.int64)
        cluster = int(self._cluster(b[:, :3])[0])
        size = self.tables.private[round_ - 1]
        if round_ == 3:
            eq = RiverStrength.equity_of(tuple(int(c) for c in board[:5]))
            private = np.minimum((np.nan_to_num(eq) * size).astype(np.int64), size - 1)
        else:
            index, rows = (self.flops, self.tables.flop_private) if round_ == 1 else (self.turns, self.tables.turn_private)
            board_i, perm = index.lookup(b)
            own = relabel(hands, np.full(len(hands), perm[0]))
            private = rows[board_i[0], HAND_INDEX[own[:, 0], own[:, 1]]].astype(np.int64)
        return np.where(blocked, -1, cluster * size + private)

    def cluster_of(self, round_: int, bucket: int, clusters: int) -> int:
        if clusters != self.tables.clusters:
            raise ValueError(f"this abstraction has {self.tables.clusters} public clusters, not {clusters}")
        return bucket // self.tables.private[round_ - 1]

    def _deal_buckets(self, holes: np.ndarray, board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Buckets ``[n, 2, 4]`` and outcomes of hole cards ``[n, 2, 2]`` and full boards ``[n, 5]`` (each
        board canonicalised once for both positions, the river's equities in one C call)."""
        n = len(holes)
        pf, pt, pr = self.tables.private
        buckets = np.empty((n, 2, 4), dtype=np.int32)
        cluster = self._cluster(board[:, :3])
        for p in range(2):
            buckets[:, p, 0] = self._preflop[HAND_INDEX[holes[:, p, 0], holes[:, p, 1]]]
        for r, index, rows, size in (
            (1, self.flops, self.tables.flop_private, pf),
            (2, self.turns, self.tables.turn_private, pt),
        ):
            board_i, perm = index.lookup(board[:, : 2 + r])
            for p in range(2):
                own = relabel(holes[:, p], perm)
                buckets[:, p, r] = cluster * size + rows[board_i, HAND_INDEX[own[:, 0], own[:, 1]]]
        eq = river_equity_deals(np.concatenate([holes[:, 0], holes[:, 1], board], axis=1))
        buckets[:, :, 3] = cluster[:, None] * pr + np.minimum((eq * pr).astype(np.int64), pr - 1)
        strength = [evaluate(np.concatenate([holes[:, p], board], axis=1).astype(np.uint8)).astype(np.int64) for p in (0, 1)]
        return buckets, np.sign(strength[0] - strength[1]).astype(np.int8)

    def deal(self, rng: np.random.Generator, n: int, clusters: int = 1) -> Deals:
        if clusters == 1:
            cards = np.argsort(rng.random((n, 52)), axis=1)[:, :9].astype(np.int64)
            buckets, outcome = self._deal_buckets(cards[:, :4].reshape(n, 2, 2), cards[:, 4:9])
            return Deals(buckets[:, None], outcome[:, None], np.ones((n, 1), np.float32), 4)
        trunk = self.deal_trunk(rng, n, clusters)
        continuations = {k: self.continuation(trunk, k, rng) for k in range(clusters)}
        return trunk.deals(self.split_round, continuations)

    def deal_trunk(self, rng: np.random.Generator, n: int, clusters: int) -> Trunk:
        if clusters != self.tables.clusters:
            raise ValueError(f"this abstraction has {self.tables.clusters} public clusters, not {clusters}")
        held = np.argsort(rng.random((n, 52)), axis=1)[:, :4].astype(np.int64)
        buckets = np.zeros((n, 2, 4), dtype=np.int32)
        for p in range(2):
            buckets[:, p, 0] = self._preflop[HAND_INDEX[held[:, 2 * p], held[:, 2 * p + 1]]]
        weight = np.stack([self._possible_flops(k, held) for k in range(clusters)], axis=1)
        return Trunk(held, buckets, weight)

    def continuation(self, trunk: Trunk, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        held = trunk.cards
        flops = self._draw_flops(rng, k, held)
        rest = self._draw_rest(rng, np.concatenate([held, flops], axis=1), 2)
        return self._deal_buckets(held.reshape(len(held), 2, 2), np.concatenate([flops, rest], axis=1))

    def _draw_flops(self, rng: np.random.Generator, k: int, held: np.ndarray) -> np.ndarray:
        """One raw flop of cluster ``k`` per row that shares no card with ``held`` (uniform among those)."""
        pool = self._raw_flops[self._raw_cluster == k]
        out = pool[rng.integers(len(pool), size=len(held))]
        bad = (out[:, :, None] == held[:, None, :]).any(axis=(1, 2))
        while bad.any():
            out[bad] = pool[rng.integers(len(pool), size=int(bad.sum()))]
            bad = (out[:, :, None] == held[:, None, :]).any(axis=(1, 2))
        return out

    @staticmethod
    def _draw_rest(rng: np.random.Generator, used: np.ndarray, count: int) -> np.ndarray:
        """``count`` cards per row drawn uniformly from those not in ``used``."""
        keys = rng.random((len(used), 52))
        keys[np.arange(len(used))[:, None], used] = 2.0  # never drawn
        return np.argsort(keys, axis=1)[:, :count]

    def _possible_flops(self, k: int, held: np.ndarray) -> np.ndarray:
        """How many raw flops of cluster ``k`` share no card with each row's four ``held`` cards
        (inclusion-exclusion over the cards; a flop holds at most three of them)."""
        single = self._holding[k][held].sum(axis=1)
        pairs = sum(self._holding_pair[k][held[:, i], held[:, j]] for i, j in itertools.combinations(range(4), 2))
        triples = sum(
            (self._flop_cluster_by_code[_code(np.sort(held[:, list(t)], axis=1))] == k).astype(np.int64)
            for t in itertools.combinations(range(4), 3)
        )
        return (self._cluster_size[k] - single + pairs - triples).astype(np.float32)
