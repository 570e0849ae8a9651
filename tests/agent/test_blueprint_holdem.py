"""The blueprint's hold'em card abstraction: suit isomorphism, public clusters and their weights, deals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agent.blueprint.holdem import HAND_INDEX, SUIT_PERMS, BoardIndex, HoldemAbstraction, HoldemTables, canonical, relabel
from native.cards import holdem_hand_cards
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


# ---------------------------------------------------------------- with the shipped tables


@pytest.fixture(scope="module")
def shipped() -> HoldemAbstraction:
    from agent.blueprint.abstraction import make_abstraction
    from protocol.gamedef import load_game

    abstraction = make_abstraction("holdem", load_game("hunl"))
    assert isinstance(abstraction, HoldemAbstraction)
    return abstraction


def test_shipped_tables_bucket_every_hand_alike_under_suit_relabeling(shipped: HoldemAbstraction) -> None:
    rng = np.random.default_rng(6)
    cards = np.argsort(rng.random((30, 52)), axis=1)[:, :7]
    perm = SUIT_PERMS[rng.integers(24, size=30)]
    relabeled = (cards // 4) * 4 + perm[np.arange(30)[:, None], cards % 4]
    for row, other in zip(cards, relabeled):
        for r in range(4):
            a = shipped.bucket(r, int(HAND_INDEX[row[0], row[1]]), tuple(int(c) for c in row[2:]))
            b = shipped.bucket(r, int(HAND_INDEX[other[0], other[1]]), tuple(int(c) for c in other[2:]))
            assert a == b, (r, row, other)


def test_shipped_buckets_of_all_hands_match_single_lookups(shipped: HoldemAbstraction) -> None:
    board = (0, 17, 30, 44, 51)
    for r in range(4):
        every = shipped.buckets_all(r, board)
        for hand in (5, 400, 777, 1300):
            cards = set(holdem_hand_cards()[hand].tolist())
            if cards & set(board[: 2 + r] if r else ()):
                assert every[hand] == -1
            else:
                assert every[hand] == shipped.bucket(r, hand, board)
    flop_strength = shipped.buckets_all(1, board)  # stronger hands in higher private buckets, on average
    pf = shipped.tables.private[0]
    aces = [h for h, (a, b) in enumerate(holdem_hand_cards().tolist()) if a // 4 == 12 and b // 4 == 12 and every[h] >= 0]
    assert np.mean([flop_strength[h] % pf for h in aces]) > np.mean(flop_strength[flop_strength >= 0] % pf)


def test_the_shipped_hunl_blueprint_plays_on_loopback_without_corrections(tmp_path, capsys) -> None:
    from agent.cli.main import main

    code = main(["match", "hunl", "100", "blueprint", "random", "--duplicate", "--seed", "2", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("corrected actions 0") == 2
    think = float(out.split("blueprint: mean think ")[1].split(" ms/decision")[0])
    assert think < 100  # a table lookup (and a river equity): milliseconds, not a solve


def test_off_the_tree_the_hunl_blueprint_calls_a_bet_only_at_the_price_its_equity_pays() -> None:
    """Past the tree's three raises a min-raise is its all-in: calling it ends the tree while the
    hand goes on. It used to call every later bet with any two cards (7-2 against a 19,200 shove on
    K-Q-J); now it checks, and calls only when its equity against a uniform hand pays the price."""
    from agent.bots.blueprint import BlueprintBot
    from agent.bots.config import load_config
    from protocol.gamedef import load_game
    from protocol.matchstate import parse_matchstate

    game = load_game("hunl")
    bot = BlueprintBot(game, load_config(None), seed=0)
    line = "MATCHSTATE:1:{}:r200r400r600r800c/{}:|{}/KdQdJd"
    answers = {
        cards: str(bot.act(parse_matchstate(line.format(i, "r20000", cards), game)))
        for i, cards in enumerate(["7c2d", "3s2h", "AsAh", "AhKh"])
    }
    assert answers == {"7c2d": "f", "3s2h": "f", "AsAh": "c", "AhKh": "c"}
    assert bot.off_tree == 4
    assert str(bot.act(parse_matchstate("MATCHSTATE:0:9:r200r400r600r800c/:7c2d|/KdQdJd", game))) == "c"  # a check
