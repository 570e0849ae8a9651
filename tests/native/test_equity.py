"""Equities and equity histograms (``native.equity``) against brute-force enumeration."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from native.board_tables import HandList
from native.cards import holdem_hand_cards
from native.equity import equity_histograms, hand_equities, next_card_equities, river_equity_deals
from native.evaluator import evaluate

CARDS = holdem_hand_cards()


def brute_equity(
    h: int,
    board: tuple[int, ...],
    r: np.ndarray,
    cards: np.ndarray = CARDS,
    deck: tuple[int, ...] = tuple(range(52)),
    final: int = 5,
) -> float:
    """Equity of hand ``h``: every opponent hand (weight r) and every runout, one at a time."""
    mine = set(cards[h].tolist())
    if mine & set(board):
        return float("nan")
    num = den = 0.0
    for o in np.flatnonzero(r > 0):
        theirs = set(cards[o].tolist())
        if theirs & mine or theirs & set(board):
            continue
        rest = [c for c in deck if c not in board and c not in mine and c not in theirs]
        runs = np.array([list(board) + list(x) for x in combinations(rest, final - len(board))], dtype=np.uint8)
        a = evaluate(np.concatenate([np.broadcast_to(cards[h], (len(runs), cards.shape[1])), runs], axis=1)).astype(int)
        b = evaluate(np.concatenate([np.broadcast_to(cards[o], (len(runs), cards.shape[1])), runs], axis=1)).astype(int)
        num += r[o] * ((a > b) + 0.5 * (a == b)).mean()
        den += r[o]
    return num / den if den > 0 else float("nan")


def random_range(rng: np.random.Generator, H: int, zeros: float = 0.5) -> np.ndarray:
    r = rng.random(H)
    r[rng.random(H) < zeros] = 0
    return r


def valid_hands(board: tuple[int, ...], cards: np.ndarray = CARDS) -> np.ndarray:
    return np.flatnonzero(~np.isin(cards, board).any(axis=1))


def test_river_equity_matches_pairwise_counts() -> None:
    rng = np.random.default_rng(10)
    board = (2, 11, 23, 37, 48)
    r = random_range(rng, 1326)
    eq = hand_equities(board, r)
    blocked = np.isin(CARDS, board).any(axis=1)
    assert np.isnan(eq[blocked]).all() and not np.isnan(eq[~blocked]).any()
    for h in rng.choice(valid_hands(board), 12, replace=False):
        assert eq[h] == pytest.approx(brute_equity(int(h), board, r), abs=1e-6)


@pytest.mark.parametrize("uniform", [True, False])
def test_turn_equity_matches_brute_force(uniform: bool) -> None:
    rng = np.random.default_rng(11)
    board = (5, 18, 30, 44)
    r = np.ones(1326) if uniform else random_range(rng, 1326)
    eq = hand_equities(board, None if uniform else r)
    for h in rng.choice(valid_hands(board), 3, replace=False):
        assert eq[h] == pytest.approx(brute_equity(int(h), board, r), abs=2e-6)


def test_flop_equity_matches_brute_force_for_a_few_hands() -> None:
    rng = np.random.default_rng(12)
    board = (0, 21, 42)
    r = random_range(rng, 1326, zeros=0.97)  # few opponent hands keep the brute force quick
    eq = hand_equities(board, r)
    for h in rng.choice(valid_hands(board), 2, replace=False):
        assert eq[h] == pytest.approx(brute_equity(int(h), board, r), abs=2e-6)


def test_small_deck_equities_match_brute_force_for_every_hand() -> None:
    """Leduc-like: 1-card hands from 8 cards, 1 board card dealt from the rest (and 2-card hands)."""
    deck = (32, 33, 36, 37, 40, 41, 44, 45)
    for k, final, board in ((1, 1, ()), (1, 2, (36,)), (2, 3, (40,))):
        cards = np.array(list(combinations(deck, k)), dtype=np.uint8)
        rng = np.random.default_rng(13 + k)
        r = random_range(rng, len(cards), zeros=0.2)
        eq = hand_equities(board, r, hand_cards=HandList(cards), deck=deck, final_board_size=final)
        for h in range(len(cards)):
            want = brute_equity(h, board, r, cards, deck, final)
            if np.isnan(want):
                assert np.isnan(eq[h])
            else:
                assert eq[h] == pytest.approx(want, abs=1e-6)


def test_next_card_equities_are_the_equities_of_the_extended_boards() -> None:
    rng = np.random.default_rng(14)
    board = (7, 19, 33, 45)
    r = random_range(rng, 1326)
    cards, eq, weight = next_card_equities(board, r)
    assert len(cards) == 48 and eq.shape == weight.shape == (48, 1326)
    for i in rng.choice(48, 4, replace=False):
        np.testing.assert_allclose(eq[i], hand_equities(board + (cards[i],), r), atol=1e-6, equal_nan=True)
        holders = np.isin(CARDS, [cards[i]]).any(axis=1)
        assert (weight[i, holders] == 0).all()
    # the weights average the river equities back to the turn equity
    with np.errstate(invalid="ignore"):
        averaged = np.nansum(eq * weight, axis=0) / weight.sum(axis=0)
    np.testing.assert_allclose(averaged, hand_equities(board, r), atol=1e-6, equal_nan=True)


def test_equity_histograms_against_manual_binning() -> None:
    board = (1, 14, 27)
    bins = 8
    hist = equity_histograms(board, bins)
    cards, eq, weight = next_card_equities(board)
    assert hist.shape == (1326, bins)
    blocked = np.isin(CARDS, board).any(axis=1)
    assert (hist[blocked] == 0).all()
    np.testing.assert_allclose(hist[~blocked].sum(axis=1), 1.0, atol=1e-12)
    for h in (int(np.flatnonzero(~blocked)[0]), 640, 1325):
        if blocked[h]:
            continue
        ok = weight[:, h] > 0
        assert ok.sum() == 47  # uniform range: every card not in the hand, equally likely
        np.testing.assert_allclose(weight[ok, h], weight[ok, h][0])
        want = np.bincount(np.minimum((eq[ok, h] * bins).astype(int), bins - 1), minlength=bins) / 47.0
        np.testing.assert_allclose(hist[h], want, atol=1e-12)


def test_equity_bad_inputs() -> None:
    with pytest.raises(ValueError, match="no next card"):
        equity_histograms((0, 1, 2, 3, 4), 10)
    with pytest.raises(ValueError, match="bins"):
        equity_histograms((0, 1, 2), 0)
    with pytest.raises(ValueError, match="shape"):
        hand_equities((0, 1, 2), np.ones(5))
    with pytest.raises(ValueError, match="non-negative"):
        hand_equities((0, 1, 2), -np.ones(1326))
    with pytest.raises(ValueError, match="repeats"):
        hand_equities((0, 1, 1))
    with pytest.raises(ValueError, match="final_board_size"):
        hand_equities((0, 1, 2, 3, 4, 5), final_board_size=5, hand_cards=np.arange(52).reshape(-1, 1))
    with pytest.raises(ValueError, match="not in the deck"):
        hand_equities((0,), hand_cards=np.array([[1], [2]]), deck=(1, 2, 3), final_board_size=1)
    deal = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8]])
    assert river_equity_deals(deal).shape == (1, 2)
    with pytest.raises(ValueError, match="268 does not fit uint8"):  # it wrapped onto card 12
        river_equity_deals(deal + np.array([0, 0, 0, 0, 256 + 8, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="integer dtype"):  # 12.9 was truncated to card 12
        river_equity_deals(deal + 0.9)
    with pytest.raises(ValueError, match="outside 0..51"):
        river_equity_deals(deal + 50)
