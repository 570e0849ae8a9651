"""The blueprint's hold'em card abstraction: suit isomorphism, public clusters and their weights, deals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agent.blueprint.holdem import HAND_INDEX, SUIT_PERMS, BoardIndex, HoldemAbstraction, HoldemTables, canonical, relabel
from native.evaluator import evaluate


@pytest.fixture(scope="module")
def synthetic() -> HoldemAbstraction:
    """Random public clusters and private buckets: the bookkeeping checked without the real tables."""
    rng = np.random.default_rng(0)
    tables = HoldemTables(
        flop_cluster=rng.integers(0, 4, 1755).astype(np.uint8),
        flop_private=rng.integers(0, 5, (1755, 1326)).astype(np.uint8),
        turn_private=rng.integers(0, 5, (16432, 1326)).astype(np.uint8),
        private=(5, 5, 6),
    )
    return HoldemAbstraction(tables)


def test_canonical_boards_are_the_known_counts_and_suit_relabelings_share_them() -> None:
    assert len(BoardIndex(3)) == 1755 and len(BoardIndex(4)) == 16432
    rng = np.random.default_rng(1)
    boards = np.argsort(rng.random((500, 52)), axis=1)[:, :4]
    codes, perm = canonical(boards)
    other = (boards // 4) * 4 + SUIT_PERMS[rng.integers(24, size=500)][np.arange(500)[:, None], boards % 4]
    np.testing.assert_array_equal(canonical(other)[0], codes)  # any relabeling: the same canonical board
    relabeled = np.sort(relabel(boards, perm), axis=1)
    decoded = np.stack([(codes // 52 ** (3 - j)) % 52 for j in range(4)], axis=1)
    np.testing.assert_array_equal(relabeled, decoded)  # the permutation returned gives the canonical board


def test_cluster_weights_count_the_flops_the_hole_cards_leave(synthetic: HoldemAbstraction) -> None:
    rng = np.random.default_rng(2)
    held = np.argsort(rng.random((40, 52)), axis=1)[:, :4]
    raw = np.array(list(itertools.combinations(range(52), 3)))
    cluster = synthetic._raw_cluster
    for k in range(4):
        got = synthetic._possible_flops(k, held)
        for i in range(len(held)):
            free = ~np.isin(raw, held[i]).any(axis=1)
            assert got[i] == np.sum(free & (cluster == k))


def test_deals_draw_each_cluster_its_own_flop_and_score_the_showdown(synthetic: HoldemAbstraction) -> None:
    rng = np.random.default_rng(3)
    deals = synthetic.deal(rng, 300, clusters=4)
    assert deals.buckets.shape == (300, 4, 2, 4) and deals.split_round == 1
    pf, pt, pr = synthetic.tables.private
    for r, p in ((1, pf), (2, pt), (3, pr)):
        clusters = deals.buckets[:, :, :, r] // p
        np.testing.assert_array_equal(clusters, np.broadcast_to(np.arange(4)[None, :, None], clusters.shape))
    np.testing.assert_array_equal(deals.buckets[:, 0, :, 0], deals.buckets[:, 3, :, 0])  # one pre-flop per deal
    assert np.all(deals.weight > 0) and np.all(deals.weight.sum(axis=1) == 17296)  # C(48, 3) flops in all
    plain = synthetic.deal(np.random.default_rng(4), 2000)
    assert plain.K == 1 and set(np.unique(plain.outcome)) == {-1, 0, 1}
    assert plain.buckets[:, 0, :, 0].max() < 169


def test_a_plain_deals_outcome_is_the_evaluators(synthetic: HoldemAbstraction) -> None:
    rng = np.random.default_rng(5)
    cards = np.argsort(np.random.default_rng(5).random((50, 52)), axis=1)[:, :9]  # the abstraction's own draw
    deals = synthetic.deal(rng, 50)
    holes = cards[:, :4].reshape(50, 2, 2)
    s0 = evaluate(np.concatenate([holes[:, 0], cards[:, 4:]], axis=1).astype(np.uint8)).astype(int)
    s1 = evaluate(np.concatenate([holes[:, 1], cards[:, 4:]], axis=1).astype(np.uint8)).astype(int)
    np.testing.assert_array_equal(deals.outcome[:, 0], np.sign(s0 - s1))
    for d in range(10):  # a single lookup gives the deal's buckets
        hand = int(HAND_INDEX[holes[d, 0, 0], holes[d, 0, 1]])
        board = tuple(int(c) for c in cards[d, 4:])
        for r in range(4):
            assert synthetic.bucket(r, hand, board) == deals.buckets[d, 0, 0, r]
