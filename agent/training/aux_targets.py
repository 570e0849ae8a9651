"""Targets of DeepStack's auxiliary pre-flop network: the flop network averaged over flops.

At the end of the pre-flop the counterfactual value of a hand is the mean, over the flops
that can come, of its value on that flop; the flop network gives the latter. For a flop f,
with both ranges normalised over the pre-flop hands, player p's hand h is worth

    v_p(h) = (1 / C(48, 3)) * sum_f net_f(h) * m_f(opp)      (fractions of the pot)

where ``net_f`` is the network's value of h's bucket on f (with both ranges mapped to f's
buckets and renormalised there) and ``m_f(opp)`` the opponent's range mass left possible
on f: the same sum :class:`agent.leaves.holdem.BucketNetLeafValues` computes at a
depth-limit leaf, with 1/C(48, 3) the chance of one flop given both players' hands.

Bucketing all 22100 flops would take an hour (each flop's equity histograms); flops that
differ only by a permutation of suits share their buckets up to the same permutation of
hands, so only the 1755 suit-canonical flops are bucketed and the others are mapped.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations, permutations
from math import comb

import numpy as np
import torch

from agent.nets.buckets import BucketTable
from agent.nets.encoding import bucket_ranges, hand_values
from native.cards import NUM_CARDS, holdem_hand_cards, holdem_hand_index

ALL_FLOPS = np.array(list(combinations(range(NUM_CARDS), 3)), dtype=np.int64)  # [22100, 3]
#: the chance of one given flop once both players' hole cards are known
FLOP_WEIGHT = 1.0 / comb(NUM_CARDS - 4, 3)


def _suit_maps() -> tuple[np.ndarray, np.ndarray]:
    """Card and hand images ``[24, 52]`` / ``[24, 1326]`` under the 24 permutations of suits
    (card = 4 * rank + suit)."""
    cards = np.arange(NUM_CARDS)
    hands = holdem_hand_cards().astype(np.int64)
    card_maps, hand_maps = [], []
    for perm in permutations(range(4)):
        cm = (cards // 4) * 4 + np.asarray(perm)[cards % 4]
        card_maps.append(cm)
        hand_maps.append(np.array([holdem_hand_index(int(cm[a]), int(cm[b])) for a, b in hands]))
    return np.stack(card_maps), np.stack(hand_maps)


class FlopBuckets:
    """Bucket ids of every hand on any of the 22100 flops, computed for the suit-canonical flops
    only (on first use: a sampled average buckets only the flops it needs) and mapped."""

    def __init__(self, table: BucketTable) -> None:
        if table.street != "flop":
            raise ValueError(f"the auxiliary targets need flop buckets, got a {table.street} table")
        self.table = table
        self.num_buckets = table.num_buckets
        card_maps, self._hand_maps = _suit_maps()
        images = np.sort(card_maps[:, ALL_FLOPS], axis=2)  # [24, F, 3]: every flop under every suit permutation
        keys = (images[..., 0] * NUM_CARDS + images[..., 1]) * NUM_CARDS + images[..., 2]  # [24, F]
        self._perm = keys.argmin(axis=0)  # the permutation taking each flop to its canonical form
        self._reps, self._rep_of = np.unique(keys[self._perm, np.arange(len(ALL_FLOPS))], return_inverse=True)
        self._rep_ids: dict[int, np.ndarray] = {}

    @property
    def canonical_flops(self) -> int:
        """Number of suit-canonical flops (1755 of the 22100): the most this ever buckets."""
        return len(self._reps)

    def _canonical(self, r: int) -> np.ndarray:
        hit = self._rep_ids.get(r)
        if hit is None:
            key = int(self._reps[r])
            board = (key // NUM_CARDS**2, key // NUM_CARDS % NUM_CARDS, key % NUM_CARDS)
            hit = self._rep_ids[r] = np.asarray(self.table.assign(board), dtype=np.int64)
        return hit

    def ids(self, rows: np.ndarray) -> np.ndarray:
        """``[len(rows), 1326]`` bucket ids (-1: blocked) on the flops ``ALL_FLOPS[rows]``:
        hand h on a flop plays as hand sigma(h) on its canonical flop."""
        return np.stack([self._canonical(int(self._rep_of[i]))[self._hand_maps[self._perm[i]]] for i in rows])


def aux_values(
    net: Callable[[torch.Tensor], torch.Tensor],
    flops: FlopBuckets,
    ranges: np.ndarray,
    pot: float,
    total_stacks: float,
    flop_rows: np.ndarray | None = None,
    chunk: int = 1024,
) -> np.ndarray:
    """``[2, 1326]`` pre-flop counterfactual values per unit of pot for normalised ``ranges``.

    ``flop_rows``: indices into :data:`ALL_FLOPS` to average over (default all 22100, the
    exact target); a subset gives the unbiased estimate scaled to the whole set."""
    rows = np.arange(len(ALL_FLOPS)) if flop_rows is None else np.asarray(flop_rows)
    scale = len(ALL_FLOPS) / len(rows) * FLOP_WEIGHT
    reach = torch.as_tensor(ranges, dtype=torch.float64)
    out = torch.zeros(2, reach.shape[1], dtype=torch.float64)
    k = flops.num_buckets
    for start in range(0, len(rows), chunk):
        ids = torch.as_tensor(flops.ids(rows[start : start + chunk]))  # [F, H]
        valid = (ids >= 0).to(torch.float64)
        masked = reach.unsqueeze(1) * valid  # [2, F, H]
        mass = masked.sum(dim=2, keepdim=True)  # [2, F, 1]
        b = torch.stack([bucket_ranges(masked[p], ids, k) for p in range(2)])
        x = torch.cat([torch.full((ids.shape[0], 1), pot / total_stacks, dtype=torch.float64), b[0], b[1]], dim=1).float()
        with torch.no_grad():
            y = net(x).to(torch.float64)
        for p in range(2):
            out[p] += (hand_values(y[:, p * k : (p + 1) * k], ids) * mass[1 - p]).sum(dim=0)
    return (out * scale).numpy()
