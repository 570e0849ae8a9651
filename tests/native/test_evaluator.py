"""Tests of the C hand evaluator through its Python API (``native.evaluator``).

Correctness is pinned three ways: exact category counts over every 5- and 7-card hand,
agreement of the order with the independent evaluator eval7 on a million random hands,
and a slow, obviously correct Python reference for hands of every size 1..7 mixed together.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from itertools import combinations, combinations_with_replacement
from typing import Any

import numpy as np
import pytest

from native import evaluator as ev
from native.cards import cards_from_str, cards_to_str, make_card

SEVEN_CARD_COUNTS = {
    "high card": 23_294_460,
    "pair": 58_627_800,
    "two pair": 31_433_400,
    "three of a kind": 6_461_620,
    "straight": 6_180_020,
    "flush": 4_047_644,
    "full house": 3_473_184,
    "four of a kind": 224_848,
    "straight flush": 41_584,
}
FIVE_CARD_COUNTS = {
    "high card": 1_302_540,
    "pair": 1_098_240,
    "two pair": 123_552,
    "three of a kind": 54_912,
    "straight": 10_200,
    "flush": 5_108,
    "full house": 3_744,
    "four of a kind": 624,
    "straight flush": 40,
}
# Hand classes per category over all hands of 1..7 cards: the 5-card classes plus those
# of shorter hands (e.g. pairs: 13 pair ranks x (220 + 66 + 12 + 1) kicker sets).
CLASSES_PER_CATEGORY = {
    "high card": 1277 + 715 + 286 + 78 + 13,
    "pair": 13 * (220 + 66 + 12 + 1),
    "two pair": 858 + 78,
    "three of a kind": 858 + 156 + 13,
    "straight": 10,
    "flush": 1277,
    "full house": 156,
    "four of a kind": 156 + 13,
    "straight flush": 10,
}
# Sum of the values of all 7-card hands: a golden digest of the value layout. It changes
# only if the layout does (then update it together with every stored value).
SEVEN_CARD_CHECKSUM = 1_034_405_072_944


def random_hands(rng: np.random.Generator, n_hands: int, k: int) -> np.ndarray:
    """``n_hands`` rows of ``k`` distinct random cards (rejection sampling, vectorised)."""
    hands = rng.integers(0, 52, size=(n_hands, k), dtype=np.int64)
    while True:
        ordered = np.sort(hands, axis=1)
        bad = np.flatnonzero((np.diff(ordered, axis=1) == 0).any(axis=1))
        if bad.size == 0:
            return hands.astype(np.uint8)
        hands[bad] = rng.integers(0, 52, size=(bad.size, k))


def assert_same_order(reference: np.ndarray, ours: np.ndarray) -> None:
    """``ours`` is a strictly increasing function of ``reference``: same order, same ties."""
    order = np.lexsort((ours, reference))
    ref_step = np.diff(reference[order])
    our_step = np.diff(ours[order].astype(np.int64))
    misordered = np.flatnonzero((ref_step > 0) & (our_step <= 0))
    split_ties = np.flatnonzero((ref_step == 0) & (our_step != 0))
    assert misordered.size == 0, f"{misordered.size} adjacent pairs ordered differently, e.g. {order[misordered[:3]]}"
    assert split_ties.size == 0, f"{split_ties.size} reference ties split, e.g. {order[split_ties[:3]]}"


# --- A slow reference: tuples that compare like the hands -------------------------------


def _groups(ranks: Sequence[int]) -> tuple[list[int], list[int]]:
    """Ranks grouped by multiplicity (largest group first, then highest rank) and the sizes."""
    groups = sorted(Counter(ranks).items(), key=lambda rc: (-rc[1], -rc[0]))
    return [r for r, _ in groups], [c for _, c in groups]


def _reference_5(cards: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    ranks = [c >> 2 for c in cards]
    flush = len({c & 3 for c in cards}) == 1
    order, shape = _groups(ranks)
    distinct = sorted(set(ranks))
    top = -1
    if len(distinct) == 5 and distinct[4] - distinct[0] == 4:
        top = distinct[4]
    elif distinct == [0, 1, 2, 3, 12]:
        top = 3  # A-2-3-4-5
    if top >= 0:
        return (8 if flush else 4, (top,))
    if flush:
        return (5, tuple(sorted(ranks, reverse=True)))
    category = {(4, 1): 7, (3, 2): 6, (3, 1, 1): 3, (2, 2, 1): 2, (2, 1, 1, 1): 1}.get(tuple(shape), 0)
    return (category, tuple(order))


def reference_value(cards: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    """(category, deciding ranks) of a hand of 1..7 cards; Python tuple order = hand order.

    5+ cards: best of all 5-card subsets. Fewer: multiplicities then kickers; a shorter
    kicker tuple that is a prefix of a longer one compares lower, i.e. a missing kicker
    loses to any card.
    """
    if len(cards) >= 5:
        return max(_reference_5(five) for five in combinations(cards, 5))
    order, shape = _groups([c >> 2 for c in cards])
    category = {4: 7, 3: 3}.get(shape[0], 0)
    if shape[0] == 2:
        category = 2 if shape[:2] == [2, 2] else 1
    return (category, tuple(order))


def _reference_ranks(hands: list[Sequence[int]]) -> np.ndarray:
    keys = [reference_value(h) for h in hands]
    index = {key: i for i, key in enumerate(sorted(set(keys)))}
    return np.array([index[k] for k in keys], dtype=np.int64)


# --- Exhaustive counts -------------------------------------------------------------------


def test_all_seven_card_hands_by_category() -> None:
    counts = ev.enumerate7_category_counts()
    assert counts == SEVEN_CARD_COUNTS
    assert sum(counts.values()) == ev.NUM_7CARD_HANDS


def test_seven_card_checksum_is_the_golden_digest() -> None:
    assert ev.enumerate7_checksum() == SEVEN_CARD_CHECKSUM


def test_all_five_card_hands_by_category_and_7462_values() -> None:
    assert ev.enumerate_category_counts(5) == FIVE_CARD_COUNTS
    assert len(ev.distinct_values(5)) == 7462
    assert len(ev.distinct_values(7)) == 4824


def test_values_are_dense_within_each_category_over_all_hand_sizes() -> None:
    values = np.unique(np.concatenate([ev.distinct_values(n) for n in range(1, 8)]))
    cats = ev.category(values)
    for cat, name in enumerate(ev.CATEGORY_NAMES):
        index = values[cats == cat] & 0xFFF
        assert np.array_equal(index, np.arange(CLASSES_PER_CATEGORY[name])), name


def test_enumeration_paths_agree() -> None:
    assert ev.enumerate_category_counts(7) == ev.enumerate7_category_counts()
    batch = ev.evaluate(np.array(list(combinations(range(52), 3)), dtype=np.uint8))
    assert set(batch.tolist()) == set(ev.distinct_values(3).tolist())


# --- Agreement with independent evaluators -----------------------------------------------


@pytest.fixture(scope="module")
def eval7_deck() -> list[Any]:
    eval7 = pytest.importorskip("eval7")
    return [eval7.Card(cards_to_str([c])) for c in range(52)]


@pytest.mark.parametrize(("k", "n_hands"), [(7, 1_000_000), (6, 100_000), (5, 100_000)])
def test_order_agrees_with_eval7(eval7_deck: list[Any], k: int, n_hands: int) -> None:
    import eval7

    hands = random_hands(np.random.default_rng(20240 + k), n_hands, k)
    deck, evaluate7 = eval7_deck, eval7.evaluate
    reference = np.fromiter((evaluate7([deck[c] for c in row]) for row in hands.tolist()), dtype=np.int64, count=n_hands)
    assert_same_order(reference, ev.evaluate(hands))


def test_order_agrees_with_python_reference_across_hand_sizes() -> None:
    """Every hand of 1..3 cards and random hands of 4..7 cards, all compared together."""
    rng = np.random.default_rng(7)
    hands: list[Sequence[int]] = []
    ours: list[np.ndarray] = []
    for k in range(1, 8):
        if k <= 3:
            rows = np.array(list(combinations(range(52), k)), dtype=np.uint8)
        else:
            rows = random_hands(rng, 20_000 if k == 4 else 6_000, k)
        hands.extend(rows.tolist())
        ours.append(ev.evaluate(rows))
    assert_same_order(_reference_ranks(hands), np.concatenate(ours))


def test_every_four_card_class_against_python_reference() -> None:
    """One hand per rank multiset of 4 cards (suits spread out), compared with 5-card hands."""
    rng = np.random.default_rng(4)
    four = []
    for multiset in combinations_with_replacement(range(13), 4):
        copies: Counter[int] = Counter()
        hand = []
        for rank in multiset:  # the i-th copy of a rank gets suit i
            hand.append(make_card(rank, copies[rank]))
            copies[rank] += 1
        four.append(hand)
    assert len(four) == 1820
    five = random_hands(rng, 5_000, 5).tolist()
    ours = np.concatenate([ev.evaluate(np.array(four)), ev.evaluate(np.array(five, dtype=np.uint8))])
    assert_same_order(_reference_ranks(four + five), ours)


# --- Small hands (Leduc hold'em) -------------------------------------------------------


def _order_of(hands: list[str]) -> list[int]:
    return [ev.evaluate_one(cards_from_str(h)) for h in hands]


@pytest.mark.parametrize(
    ("deck", "strongest_first"),
    [
        ("Qh Qs Kh Ks Ah As", ["AhAs", "KhKs", "QhQs", "AhKs", "AhQs", "KhQs"]),
        ("2c 2d 3c 3d 4c 4d", ["4c4d", "3c3d", "2c2d", "4c3d", "4c2d", "3c2d"]),
    ],
)
def test_leduc_two_card_hands(deck: str, strongest_first: list[str]) -> None:
    """Hole card + board card: any pair beats any unpaired hand, then high card, then low."""
    cards = cards_from_str(deck)
    values = {frozenset(pair): ev.evaluate_one(pair) for pair in combinations(cards, 2)}
    distinct = sorted(set(values.values()), reverse=True)
    assert distinct == _order_of(strongest_first)
    for pair, value in values.items():  # suits never matter with two cards
        ranks = sorted((c >> 2 for c in pair), reverse=True)
        twin = [make_card(ranks[0], 0), make_card(ranks[1], 1)]
        assert value == ev.evaluate_one(twin)
    assert ev.category(np.array(distinct)).tolist() == [1, 1, 1, 0, 0, 0]


def test_small_hands_compare_like_acpc() -> None:
    assert ev.evaluate_one(cards_from_str("2c2d")) > ev.evaluate_one(cards_from_str("AsKs"))
    assert ev.evaluate_one(cards_from_str("AsKd")) > ev.evaluate_one(cards_from_str("AcQs"))
    assert ev.evaluate_one(cards_from_str("As")) > ev.evaluate_one(cards_from_str("Ks"))
    assert ev.evaluate_one(cards_from_str("2s")) < ev.evaluate_one(cards_from_str("3s2d"))
    # missing kickers lose to any present kicker: KK+AQJ > KK+A > KK > QQ+AKJ
    assert (
        ev.evaluate_one(cards_from_str("KcKdAhQhJh"))
        > ev.evaluate_one(cards_from_str("KcKdAh"))
        > ev.evaluate_one(cards_from_str("KcKd"))
        > ev.evaluate_one(cards_from_str("QcQdAhKhJh"))
    )
    # four cards of a straight/flush are no straight/flush; quads need no kicker
    assert ev.category_name(ev.evaluate_one(cards_from_str("5h6h7h8h"))) == "high card"
    assert ev.category_name(ev.evaluate_one(cards_from_str("2c2d2h2s"))) == "four of a kind"
    assert ev.evaluate_one(cards_from_str("2c2d2h2s3c")) > ev.evaluate_one(cards_from_str("2c2d2h2s"))


def test_known_hands() -> None:
    cases = {
        "AsKsQsJsTs": "straight flush",
        "5d4d3d2dAd": "straight flush",
        "9c9d9h9sAc": "four of a kind",
        "KcKdKhQsQc2d3d": "full house",
        "Ah9h7h4h2hKsKd": "flush",
        "5c4d3h2sAcKdKh": "straight",
        "7c7d7h2s3cJdQh": "three of a kind",
        "7c7d2h2s3c3dQh": "two pair",
        "7c7d2h9sJcKdAh": "pair",
        "7c5d2h9sJcKdAh": "high card",
    }
    for hand, name in cases.items():
        assert ev.category_name(ev.evaluate_one(cards_from_str(hand))) == name, hand
    wheel = ev.evaluate_one(cards_from_str("5c4d3h2sAc"))
    six_high = ev.evaluate_one(cards_from_str("6c5c4d3h2s"))
    assert ev.category_name(wheel) == "straight" and wheel < six_high
    assert ev.evaluate_one(cards_from_str("5d4d3d2dAd")) < ev.evaluate_one(cards_from_str("6d5d4d3d2d"))
    # the three-pair kicker rule: KK QQ JJ 2 plays KK QQ J
    assert ev.evaluate_one(cards_from_str("KcKdQcQdJcJd2s")) == ev.evaluate_one(cards_from_str("KcKdQcQdJh"))


# --- The Python API -------------------------------------------------------------------


def test_shapes_dtypes_and_layouts() -> None:
    rng = np.random.default_rng(3)
    hands = random_hands(rng, 1000, 7)
    expected = ev.evaluate(hands)
    assert expected.dtype == np.uint16 and expected.shape == (1000,)
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64):
        assert np.array_equal(ev.evaluate(hands.astype(dtype)), expected)
    assert np.array_equal(ev.evaluate(np.asfortranarray(hands)), expected)
    wide = np.zeros((1000, 14), dtype=np.int64)
    wide[:, ::2] = hands
    assert np.array_equal(ev.evaluate(wide[:, ::2]), expected)  # strided view
    assert np.array_equal(ev.evaluate(hands.tolist()), expected)
    one = ev.evaluate(hands[0])
    assert one.shape == () and int(one) == expected[0] == ev.evaluate_one(hands[0].tolist())
    assert ev.evaluate(np.zeros((0, 5), dtype=np.int64)).shape == (0,)
    assert ev.category(expected).dtype == np.uint8
    assert np.array_equal(ev.category(expected), expected >> 12)


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        (np.array([[0.0, 1.0]]), "integer dtype"),
        (np.array([[True, False]]), "integer dtype"),
        (np.array(["As", "Kd"]), "integer dtype"),
        (np.array([1, None], dtype=object), "integer dtype"),
        (np.zeros((2, 2, 2), dtype=np.int64), "shape"),
        (np.int64(5), "shape"),
        (np.arange(8), "1..7 cards, got 8"),
        (np.zeros((3, 0), dtype=np.int64), "1..7 cards, got 0"),
        ([[1, 2], [3]], "rectangular"),
        (np.array([[0, 1], [2, 52]]), r"row 1: card out of range 0..51 in \[2, 52\]"),
        (np.array([[0, 1], [-1, 5]]), r"row 1: card out of range 0..51 in \[-1, 5\]"),
        (np.array([[0, 256]]), r"row 0: card out of range"),
        (np.array([[0, 1], [2, 52]], dtype=np.uint8), r"row 1: card out of range 0..51 in \[2, 52\]"),
        (np.array([[0, 1, 2], [5, 9, 5]]), r"row 1: repeated card\(s\) \[5\] \(3d\) in \[5, 9, 5\]"),
        (np.array([[0, 1, 2], [7, 7, 9]], dtype=np.uint8), r"row 1: repeated card\(s\) \[7\] \(3s\)"),
    ],
)
def test_bad_input_is_a_clear_value_error(cards: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ev.evaluate(cards)  # type: ignore[arg-type]


def test_bad_row_is_found_far_into_a_big_batch() -> None:
    hands = random_hands(np.random.default_rng(5), 100_000, 7)
    hands[77_777, 3] = hands[77_777, 6]
    with pytest.raises(ValueError, match="row 77777: repeated"):
        ev.evaluate(hands)


def test_enumeration_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError):
        ev.enumerate_category_counts(8)
    with pytest.raises(ValueError):
        ev.distinct_values(0)


def test_concurrent_calls_agree() -> None:
    """cffi releases the GIL during the C call; the tables are read-only after init."""
    hands = random_hands(np.random.default_rng(11), 200_000, 7)
    expected = ev.evaluate(hands)
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(ev.evaluate(hands))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(np.array_equal(r, expected) for r in results)


# --- How the rank keys were found ------------------------------------------------------


def greedy_rank_keys(n_ranks: int) -> list[int]:
    """Re-derive the C evaluator's additive rank keys by the same greedy rule.

    Key 0 is 1; each next key k is the smallest above the previous one such that every
    multiset of <= 7 cards (<= 4 per rank) still has its own key sum. Adding c copies of
    the new rank to multisets A and B collides iff sum(A) - sum(B) = d * k for some
    d = 1..4 with |A| <= 7 and |B| <= 7 - d. All such differences come at once from a
    cross-correlation of the two sets' indicator vectors (an FFT), so no candidate k
    needs its own pass over the multisets.
    """
    keys = [1]
    sums = np.arange(5, dtype=np.int64)  # multisets over rank 0: 0..4 deuces
    sizes = np.arange(5, dtype=np.int64)
    for _ in range(1, n_ranks):
        top = int(sums.max())
        n_fft = 1 << (2 * top + 1).bit_length()
        indicator = np.zeros(n_fft)
        indicator[sums] = 1.0
        spectrum_all = np.fft.rfft(indicator)
        bad = np.zeros(top + 1, dtype=bool)
        for d in range(1, 5):
            indicator[:] = 0.0
            indicator[sums[sizes <= 7 - d]] = 1.0
            corr = np.fft.irfft(spectrum_all * np.conj(np.fft.rfft(indicator)), n_fft)[: top + 1]
            diffs = np.flatnonzero(corr > 0.5)
            diffs = diffs[(diffs > 0) & (diffs % d == 0)] // d
            bad[diffs] = True
        k = keys[-1] + 1
        while k <= top and bad[k]:
            k += 1
        keys.append(k)
        grown = [(sums[sizes + c <= 7] + c * k, sizes[sizes + c <= 7] + c) for c in range(5)]
        sums = np.concatenate([s for s, _ in grown])
        sizes = np.concatenate([z for _, z in grown])
    return keys


def _c_rank_keys() -> list[int]:
    from native._native import ffi, lib

    keys = ffi.new("uint32_t[13]")
    lib.ds_eval_rank_keys(keys)
    return list(keys)


def test_rank_keys_follow_the_greedy_rule_first_eleven() -> None:
    assert _c_rank_keys()[:11] == greedy_rank_keys(11)


@pytest.mark.slow
def test_rank_keys_follow_the_greedy_rule_all() -> None:
    """All 13 keys (about 10 s and 1 GB for the last FFTs of length 2^24)."""
    assert _c_rank_keys() == greedy_rank_keys(13)
