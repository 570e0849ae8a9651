"""Auxiliary pre-flop targets: flop buckets through suit isomorphism, and the flop average."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
import torch

from agent.bots.config import HoldemModels
from agent.bots.settings import data_file
from agent.nets.buckets import BucketTable
from agent.training.aux_targets import ALL_FLOPS, FLOP_WEIGHT, FlopBuckets, aux_values


@pytest.fixture(scope="module")
def flops() -> FlopBuckets:
    return FlopBuckets(BucketTable.load(data_file(HoldemModels().flop_buckets)))


def test_every_flop_maps_to_one_of_the_1755_canonical_flops(flops: FlopBuckets) -> None:
    assert len(ALL_FLOPS) == comb(52, 3) == 22100 and flops.canonical_flops == 1755
    rows = np.random.default_rng(1).choice(len(ALL_FLOPS), 4, replace=False)
    for row, mapped in zip(rows, flops.ids(rows)):
        direct = np.asarray(flops.table.assign(tuple(int(c) for c in ALL_FLOPS[row])))
        np.testing.assert_array_equal(mapped, direct)  # bucketing is suit-blind: the mapping is exact


def test_aux_values_average_the_network_over_the_flops(flops: FlopBuckets) -> None:
    """Against a direct computation: each flop bucketed itself, ranges renormalised on it,
    the network queried, hand values weighted by the opponent's mass left on that flop."""
    torch.manual_seed(0)
    k = flops.num_buckets
    net = torch.nn.Sequential(torch.nn.Linear(1 + 2 * k, 2 * k), torch.nn.Tanh())
    rng = np.random.default_rng(2)
    ranges = rng.random((2, 1326))
    ranges /= ranges.sum(axis=1, keepdims=True)
    rows = np.sort(rng.choice(len(ALL_FLOPS), 3, replace=False))
    got = aux_values(net, flops, ranges, pot=1000.0, total_stacks=40000.0, flop_rows=rows, chunk=2)
    want = np.zeros((2, 1326))
    for row in rows:
        ids = np.asarray(flops.table.assign(tuple(int(c) for c in ALL_FLOPS[row])))
        valid = ids >= 0
        masses = np.zeros((2, k))
        for p in range(2):
            np.add.at(masses[p], ids[valid], ranges[p][valid])
        left = masses.sum(axis=1)
        x = np.concatenate([[1000.0 / 40000.0], masses[0] / left[0], masses[1] / left[1]])
        with torch.no_grad():
            y = net(torch.as_tensor(x, dtype=torch.float32).unsqueeze(0))[0].double().numpy()
        for p in range(2):
            want[p][valid] += y[p * k + ids[valid]] * left[1 - p]
    want *= FLOP_WEIGHT * len(ALL_FLOPS) / len(rows)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)
