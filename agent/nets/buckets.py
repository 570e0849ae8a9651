"""Card abstraction for the value networks' inputs (DeepStack section 7).

Post-flop hands are grouped by k-means with the earth mover's distance over their equity
histograms (the distribution, over the next card, of the hand's equity against a random
hand). For one-dimensional histograms with equal-width bins the EMD is the L1 distance
between cumulative histograms, so the clustering runs on CDFs with an L1 assignment and a
mean update. Pre-flop, the 169 strategically distinct classes are lossless. The bot's
decisions never use buckets: only the network inputs and outputs do.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from agent.common.files import NPZ_ERRORS, npz_problem, save_npz
from agent.nets.manifest import ModelError
from agent.solver.ranges import hand_class_cell
from native.board_tables import holdem_hands
from native.cards import NUM_HOLDEM_HANDS
from native.equity import equity_histograms
from native.nearest import nearest_l1
from native.showdown import fold_values, showdown_values

Street = Literal["flop", "turn"]
BOARD_SIZE = {"flop": 3, "turn": 4}
NUM_PREFLOP_CLASSES = 169


def preflop_classes() -> np.ndarray:
    """Class 0..168 of each of the 1326 hands (the cell of the 13x13 grid)."""
    return np.array([r * 13 + c for r, c in (hand_class_cell(h) for h in range(NUM_HOLDEM_HANDS))], dtype=np.int64)


class PreflopClasses:
    """The 169 lossless pre-flop classes as a bucket table (the auxiliary network's buckets)."""

    street = "preflop"
    num_buckets = NUM_PREFLOP_CLASSES

    def assign(self, board: tuple[int, ...]) -> np.ndarray:
        """``[1326]`` pre-flop class of each hand, as :meth:`BucketTable.assign` for the empty board (any
        other board is a ValueError)."""
        if board:
            raise ValueError(f"pre-flop classes are for the empty board, got {len(board)} cards")
        return preflop_classes()


def histogram_cdfs(board: tuple[int, ...], bins: int) -> np.ndarray:
    """``[1326, bins]`` cumulative equity histograms (rows of blocked hands are all zero)."""

    hist = np.asarray(equity_histograms(board, bins), dtype=np.float32)
    return np.cumsum(hist, axis=1)


def nearest(points: torch.Tensor, centroids: torch.Tensor, chunk: int = 8192) -> torch.Tensor:
    """Index of the L1-nearest centroid of every point (ties to the lowest index): in C on the
    CPU (a turn board's 1081 hands in ~7 ms against torch.cdist's ~27), else torch.cdist."""
    if points.device.type == "cpu" and centroids.device.type == "cpu":
        return nearest_l1(points, centroids.T.contiguous())
    out = torch.empty(len(points), dtype=torch.long, device=points.device)
    for i in range(0, len(points), chunk):
        out[i : i + chunk] = torch.cdist(points[i : i + chunk], centroids, p=1).argmin(dim=1)
    return out


@dataclass
class BucketTable:
    """Centroids of one street; assigns every hand of any board of that street to a bucket."""

    street: Street
    centroids: np.ndarray  # [K, bins] cumulative histograms
    cache_size: int = 256

    def __post_init__(self) -> None:
        self._centroids = torch.as_tensor(self.centroids, dtype=torch.float32)
        self._centroids_t = self._centroids.T.contiguous()  # the C kernel's layout, made once
        self._cache: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()

    @property
    def num_buckets(self) -> int:
        """K, the rows of ``centroids``: a value network for this street has 2K outputs."""
        return int(self.centroids.shape[0])

    @property
    def bins(self) -> int:
        """Equity-histogram bins per hand, the columns of ``centroids``: :meth:`assign` builds histograms this fine."""
        return int(self.centroids.shape[1])

    def assign(self, board: tuple[int, ...]) -> np.ndarray:
        """``[1326]`` bucket of each hand on ``board`` (-1 where the hand is blocked)."""
        key = tuple(sorted(int(c) for c in board))
        if len(key) != BOARD_SIZE[self.street]:
            raise ValueError(f"{self.street} buckets need a {BOARD_SIZE[self.street]}-card board, got {len(key)} cards")
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        cdfs = histogram_cdfs(key, self.bins)
        valid = cdfs[:, -1] > 0
        ids = np.full(NUM_HOLDEM_HANDS, -1, dtype=np.int64)
        ids[valid] = nearest_l1(torch.as_tensor(cdfs[valid]), self._centroids_t).numpy()
        ids.setflags(write=False)
        self._cache[key] = ids
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return ids

    def save(self, path: Path) -> None:
        """Write the street and the float32 centroids to the ``.npz`` file ``path`` atomically."""
        save_npz(path, street=np.array(self.street), centroids=self.centroids.astype(np.float32))

    @classmethod
    def load(cls, path: Path) -> BucketTable:
        """The table saved at ``path``; a ModelError naming the file if it is not a bucket table."""
        try:
            with np.load(path) as z:
                street = str(z["street"])
                centroids = z["centroids"]
        except NPZ_ERRORS as exc:
            raise ModelError(f"{path}: not a bucket table: {npz_problem(exc)}") from None
        if street not in BOARD_SIZE or centroids.ndim != 2:
            raise ModelError(f"{path}: bucket table with street {street!r} and centroids {centroids.shape}")
        return cls(street, centroids)  # type: ignore[arg-type]


class RiverStrength:
    """The river's card abstraction: a hand's bucket is its equity against every hand the board
    leaves it (ties count half), cut into ``num_buckets`` equal steps. On the river there is no
    card to come, so the equity histogram the flop and turn buckets cluster is a single value:
    clustering it would only find these steps. Computed per board (C showdown kernel), not stored."""

    street = "river"

    def __init__(self, num_buckets: int = 1000, cache_size: int = 256) -> None:
        if num_buckets < 1:
            raise ValueError(f"river buckets must be at least 1, not {num_buckets}")
        self.num_buckets = num_buckets
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()

    def equity(self, board: tuple[int, ...]) -> np.ndarray:
        """``[1326]`` equity of each hand on the 5-card ``board`` against a uniform opponent (nan where blocked)."""
        return self.equity_of(board)

    @staticmethod
    def equity_of(board: tuple[int, ...]) -> np.ndarray:
        """:meth:`equity` without an instance."""
        uniform = np.ones(NUM_HOLDEM_HANDS, dtype=np.float32)
        compatible = fold_values(board, uniform).astype(np.float64)
        margin = showdown_values(board, uniform).astype(np.float64)  # wins minus losses
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(compatible > 0, (compatible + margin) / (2 * compatible), np.nan)

    def assign(self, board: tuple[int, ...]) -> np.ndarray:
        """``[1326]`` bucket of each hand on ``board`` (-1 where the hand is blocked)."""
        key = tuple(sorted(int(c) for c in board))
        if len(key) != 5:
            raise ValueError(f"river buckets need a 5-card board, got {len(key)} cards")
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        eq = self.equity(key)
        ids = np.full(NUM_HOLDEM_HANDS, -1, dtype=np.int64)
        ok = ~np.isnan(eq)
        ids[ok] = np.minimum((eq[ok] * self.num_buckets).astype(np.int64), self.num_buckets - 1)
        ids[holdem_hands().blocked(key)] = -1  # hands sharing a board card
        ids.setflags(write=False)
        self._cache[key] = ids
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return ids


def kmeans_l1(
    points: torch.Tensor,
    k: int,
    iterations: int,
    rng: np.random.Generator,
    progress: Callable[[str], None] | None = None,
) -> tuple[torch.Tensor, float]:
    """k-means with L1 assignment and mean update (the EMD between cumulative histograms): ``k``
    centroids of ``points`` and the mean distance to the nearest; an empty cluster restarts on a
    random point."""
    centroids = points[torch.as_tensor(rng.choice(len(points), k, replace=False))].clone()
    inertia = float("inf")
    for it in range(iterations):
        assign = nearest(points, centroids)
        counts = torch.bincount(assign, minlength=k)
        sums = torch.zeros_like(centroids).index_add_(0, assign, points)
        empty = counts == 0
        centroids = torch.where(empty.unsqueeze(1), centroids, sums / counts.clamp(min=1).unsqueeze(1))
        if bool(empty.any()):  # restart empty clusters on random points
            centroids[empty] = points[torch.as_tensor(rng.choice(len(points), int(empty.sum()), replace=False))]
        inertia = float((points - centroids[assign]).abs().sum(dim=1).mean())
        if progress:
            progress(f"k-means iteration {it + 1}/{iterations}: mean EMD {inertia:.4f}")
    return centroids, inertia


def random_board(street: Street, rng: np.random.Generator) -> tuple[int, ...]:
    """A uniformly random flop or turn board (card indices 0..51) whose hands :func:`fit_buckets` clusters."""
    return tuple(int(c) for c in rng.choice(52, BOARD_SIZE[street], replace=False))


def fit_buckets(
    street: Street,
    buckets: int,
    boards: int,
    bins: int = 50,
    sample: int = 100_000,
    iterations: int = 20,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> tuple[BucketTable, dict[str, float]]:
    """k-means (EMD) on the histograms of all hands of ``boards`` random boards."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    rows = []
    for i in range(boards):
        cdfs = histogram_cdfs(random_board(street, rng), bins)
        rows.append(cdfs[cdfs[:, -1] > 0])
        if progress and (i + 1) % 25 == 0:
            progress(f"histograms: {i + 1}/{boards} boards")
    data = np.concatenate(rows)
    if len(data) > sample:
        data = data[rng.choice(len(data), sample, replace=False)]
    if buckets > len(data):
        raise ValueError(f"{buckets} buckets need at least as many hands; only {len(data)} sampled")
    centroids, inertia = kmeans_l1(torch.as_tensor(data), buckets, iterations, rng, progress)
    stats = {"hands": float(len(data)), "mean_emd": inertia, "seconds": time.perf_counter() - start}
    return BucketTable(street, centroids.numpy()), stats
