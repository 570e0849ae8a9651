"""Value networks compared on situations none of them trained on.

A network's own validation loss is measured on the rows that also chose its best epoch, and two
networks' validation sets are different random tenths of different data: neither number says
which network is better. Scored here on one test folder (a seed no network trained on), every
network answers the same situations, and the per-situation differences give a paired interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agent.nets.encoding import SituationEncoder
from agent.nets.manifest import load_value_net
from agent.nets.valuenet import masked_huber
from agent.training.datasets import check_data_game, load_datasets
from agent.training.streets import STREET_ROUND, street_abstraction


@dataclass(frozen=True)
class HeldOutScore:
    """One network's Huber loss on the test situations (fraction of pot, as in training)."""

    path: str
    #: every unmasked output pooled, as ``deepstack train`` reports its validation loss
    loss: float
    median: float
    #: per-situation losses (the mean over each situation's unmasked outputs)
    per_situation: np.ndarray
    #: the abstraction its inputs and targets are in (street, buckets file or river steps)
    abstraction: tuple
    #: each situation's pot in chips and its count of unmasked outputs (its weight in the pooled loss)
    pots: np.ndarray
    weights: np.ndarray

    def band_masks(self, edges: Sequence[float]) -> list[np.ndarray]:
        """Which situations fall in each pot band ``[edges[i], edges[i + 1])`` (the last band closed)."""
        last = len(edges) - 2
        return [
            (self.pots >= lo) & ((self.pots <= hi) if i == last else (self.pots < hi))
            for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))
        ]

    def by_pot(self, edges: Sequence[float]) -> list[tuple[int, float | None]]:
        """``(situations, pooled loss)`` in each pot band of :meth:`band_masks` (None where a band holds none):
        most of a hold'em network's loss is a few small pots, whose deep trees its values must foresee, and the
        pooled number hides where a network gained."""
        out: list[tuple[int, float | None]] = []
        for inside in self.band_masks(edges):
            w = self.weights[inside]
            out.append((int(inside.sum()), float((self.per_situation[inside] * w).sum() / w.sum()) if w.sum() > 0 else None))
        return out

    def paired_difference(self, other: HeldOutScore, inside: np.ndarray | None = None) -> tuple[float, float]:
        """Mean per-situation loss of ``self`` minus ``other`` (over the situations ``inside`` selects, all by
        default) and the half-width of its 95% interval (normal approximation over the situations)."""
        diff = self.per_situation - other.per_situation
        diff = diff if inside is None else diff[inside]
        n = len(diff)
        half = 1.96 * float(diff.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
        return float(diff.mean()), half


def _abstraction(path: str | Path, entry: dict) -> tuple:
    street = entry.get("street")
    if street is None:
        raise ValueError(
            f"{path}: not a hold'em network (its manifest entry names no street); only hold'em networks are scored here"
        )
    return (street, entry.get("buckets_file"), entry.get("river_buckets"))


def score_networks(
    net_paths: Sequence[str | Path], data_dirs: Sequence[Path], total_stacks: float, game: str | None = None
) -> list[HeldOutScore]:
    """Each network's loss on every situation of ``data_dirs``, in that network's own buckets
    (read from its manifest entry); the rows are encoded once per abstraction. With ``game``,
    folders of another game, or of another round than a network's street, are refused."""
    encoded: dict[tuple, tuple[torch.Tensor, ...]] = {}
    scores = []
    for path in net_paths:
        net, entry = load_value_net(path)
        key = _abstraction(path, entry)
        if game is not None:
            check_data_game(list(data_dirs), game, STREET_ROUND.get(key[0]))
        if key not in encoded:
            street, buckets_file, river_buckets = key
            table, _, _ = street_abstraction(street, int(river_buckets or 1000), buckets_file)
            x, y, m, _ = load_datasets(list(data_dirs), SituationEncoder(table, total_stacks))
            encoded[key] = tuple(torch.as_tensor(a) for a in (x, y, m))
        X, Y, M = encoded[key]
        with torch.no_grad():
            pred = net(X)
            pooled = float(masked_huber(pred, Y, M))
            rows = torch.nn.functional.huber_loss(pred * M, Y * M, reduction="none", delta=1.0).sum(dim=1)
            per = (rows / M.sum(dim=1).clamp(min=1.0)).numpy()
        weights = M.sum(dim=1).numpy()
        keep = weights > 0  # a situation without an unmasked output has no loss
        pots = np.round(X[:, 0].numpy().astype(np.float64) * total_stacks)  # whole chips, as dealt
        scores.append(HeldOutScore(str(path), pooled, float(np.median(per[keep])), per[keep], key, pots[keep], weights[keep]))
    return scores


def pot_bands(pots: np.ndarray, count: int = 4) -> list[float]:
    """Edges of up to ``count`` pot bands holding about as many situations each (quantiles of ``pots``, rounded
    to whole chips): one set of bands for every network scored on the same situations. Equal pots are never
    split, so where many tie (the all-in pots of no-limit data, a sixth of them) there are fewer bands."""
    if len(pots) == 0:
        raise ValueError("no situation with a value to put in pot bands (the test folders hold none)")
    edges = np.unique(np.round(np.quantile(pots, np.linspace(0.0, 1.0, count + 1))))
    if len(edges) == 1:  # every pot the same: one band of that pot
        edges = np.repeat(edges, 2)
    return [float(e) for e in edges]
