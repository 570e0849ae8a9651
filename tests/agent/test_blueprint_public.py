"""Seed 001's public buckets (Algorithms 2-3): the transition-table distance and its clustering."""

from __future__ import annotations

import numpy as np
import pytest

from agent.blueprint.holdem import BoardIndex, build_tables
from agent.blueprint.public import board_distances, cluster_public, transition_table, within_cluster_distance
from agent.bots.config import PACKAGE_ROOT
from agent.nets.buckets import BucketTable


def test_the_distance_counts_private_states_sharing_a_bucket_whoever_they_are() -> None:
    # the seed's example: 4 hands of flop i and 12 of flop j in a bucket share 4 places, whichever hands they are
    rows = np.array([[0] * 4 + [1] * 12 + [-1], [0] * 12 + [1] * 4 + [-1], [1] * 12 + [0] * 4 + [-1]])
    table = transition_table(rows, 2)
    np.testing.assert_array_equal(table, [[4, 12], [12, 4], [4, 12]])
    d = board_distances(table)
    assert d[0, 1] == pytest.approx((16 - 8) / 16)
    assert d[0, 2] == 0.0  # other hands, the same bucket counts: the same public state for the distance
    np.testing.assert_allclose(d, d.T)
    np.testing.assert_allclose(np.diag(d), 0.0)


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        transition_table(np.array([[0, 3]]), 2)
    with pytest.raises(ValueError, match="same number"):
        board_distances(np.array([[1, 1], [1, 2]]))
    with pytest.raises(ValueError, match="clusters"):
        cluster_public(np.zeros((3, 3)), 4, np.random.default_rng(0))


def test_the_clustering_recovers_planted_groups_and_keeps_every_cluster() -> None:
    rng = np.random.default_rng(0)
    groups = rng.integers(3, size=240)
    rows = []
    for g in groups:  # each group's flops send most hands to its own third of 45 buckets
        p = np.ones(45)
        p[g * 15 : (g + 1) * 15] += 20
        rows.append(rng.choice(45, 1176, p=p / p.sum()))
    d = board_distances(transition_table(np.array(rows), 45))
    assign = cluster_public(d, 3, np.random.default_rng(1))
    assert all(len(set(assign[groups == g].tolist())) == 1 for g in range(3))
    assert len(set(assign.tolist())) == 3
    assert within_cluster_distance(d, assign) < 0.5 * within_cluster_distance(d, rng.integers(3, size=240))
    many = cluster_public(d, 40, np.random.default_rng(2))  # more clusters than groups: none empties
    assert len(set(many.tolist())) == 40


class _FewBoards(BoardIndex):
    """Every 97th canonical board: build_tables' steps on a few boards, with the real bucket tables."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.codes = self.codes[:: 97 if size == 3 else 1500]


def test_build_tables_clusters_flops_and_buckets_their_hands_per_cluster() -> None:
    flop, turn = (BucketTable.load(PACKAGE_ROOT / f"models/holdem/buckets-{s}.npz") for s in ("flop", "turn"))
    stats: dict[str, float] = {}
    tables = build_tables(flop, turn, (4, 4, 4), 3, seed=0, boards=_FewBoards, stats=stats)
    assert tables.flop_private.shape == (19, 1326) and tables.turn_private.shape == (11, 1326)
    assert sorted(set(tables.flop_cluster.tolist())) == [0, 1, 2]
    for row, size in ((tables.flop_private, 1176), (tables.turn_private, 1128)):
        assert ((row < 4).sum(axis=1) == size).all() and ((row == 255).sum(axis=1) == 1326 - size).all()
    assert set(stats) == {"within_cluster_distance_transition", "within_cluster_distance_histogram"}
    assert all(0.0 <= v <= 1.0 for v in stats.values())
    for k in range(3):  # each cluster's private buckets are its own: stronger hands higher, all four in use
        rows = tables.flop_private[tables.flop_cluster == k]
        assert set(rows[rows < 255].tolist()) == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="public clustering"):
        build_tables(flop, turn, (4, 4, 4), 3, boards=_FewBoards, public="nearest")
