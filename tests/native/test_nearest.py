"""The C nearest-centroid kernel against torch.cdist(p=1).argmin, and the turn buckets it assigns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agent.nets.buckets import BucketTable, histogram_cdfs
from native.nearest import nearest_l1

TURN_BUCKETS = Path(__file__).resolve().parents[2] / "models" / "holdem" / "buckets-turn.npz"


def _torch_nearest(points: torch.Tensor, centroids: torch.Tensor) -> torch.Tensor:
    return torch.cdist(points, centroids, p=1).argmin(dim=1)


@pytest.mark.parametrize(("n", "k", "d"), [(1, 1, 1), (7, 17, 3), (1001, 37, 50), (64, 16, 50), (5, 1000, 50)])
def test_matches_torch_on_random_points(n: int, k: int, d: int) -> None:
    g = torch.Generator().manual_seed(n * 1000 + k)
    points, centroids = torch.rand(n, d, generator=g), torch.rand(k, d, generator=g)
    assert torch.equal(nearest_l1(points, centroids.T.contiguous()), _torch_nearest(points, centroids))


def test_ties_go_to_the_lowest_index_and_no_points_is_fine() -> None:
    centroids = torch.tensor([[0.5, 0.5], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]] * 5)  # 20: past one block of 16
    points = torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5], [0.2, 0.1], [0.9, 0.8]])
    got = nearest_l1(points, centroids.T.contiguous())
    assert got.tolist() == [1, 3, 0, 1, 3] == _torch_nearest(points, centroids).tolist()
    assert nearest_l1(torch.empty(0, 2), centroids.T.contiguous()).shape == (0,)


def test_refuses_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="points"):
        nearest_l1(torch.rand(3, 4), torch.rand(5, 6))
    with pytest.raises(ValueError, match="no centroids"):
        nearest_l1(torch.rand(3, 4), torch.rand(4, 0))


def test_turn_buckets_equal_the_torch_assignment() -> None:
    table = BucketTable.load(TURN_BUCKETS)
    rng = np.random.default_rng(3)
    for _ in range(3):
        board = tuple(int(c) for c in rng.choice(52, 4, replace=False))
        cdfs = histogram_cdfs(board, table.bins)
        valid = cdfs[:, -1] > 0
        expected = _torch_nearest(torch.as_tensor(cdfs[valid]), torch.as_tensor(table.centroids))
        assert np.array_equal(table.assign(board)[valid], expected.numpy())
