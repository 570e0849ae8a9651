"""Board tables and terminal values (``native.showdown``) against a dense reference.

The reference builds, per board, the hand x hand matrix ``sign(s_i - s_j)`` (compatible,
unblocked pairs only) from the evaluator's strengths in numpy; the C kernels must agree with
it to float tolerance on random boards and ranges, including zeros in the ranges, reach on
blocked hands, hand-list subsets and 1-card hands.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest

from native.board_tables import BoardTable, HandList, as_hand_list, holdem_board_table, holdem_hands
from native.cards import holdem_hand_cards
from native.evaluator import evaluate
from native.showdown import (
    ChanceShowdownKernel,
    ShowdownKernel,
    fold_values,
    showdown_chance_average,
    showdown_values,
)

LEDUC_DECK = (36, 37, 40, 41, 44, 45)  # J, Q, K in two suits


# --------------------------------------------------------------------------- reference
def ref_strength(cards: np.ndarray, board: tuple[int, ...]) -> np.ndarray:
    """Evaluator value of every hand + board, -1 where the hand shares a card with the board."""
    blocked = np.isin(cards, board).any(axis=1)
    s = np.full(len(cards), -1, dtype=np.int64)
    rows = np.concatenate([cards, np.broadcast_to(np.asarray(board, dtype=np.uint8), (len(cards), len(board)))], axis=1)
    if (~blocked).any():
        s[~blocked] = evaluate(rows[~blocked])
    return s


@lru_cache(maxsize=4)
def _compat_cached(key: bytes, k: int) -> np.ndarray:
    cards = np.frombuffer(key, dtype=np.uint8).reshape(-1, k)
    inc = np.zeros((len(cards), 52), dtype=np.float32)
    inc[np.repeat(np.arange(len(cards)), k), cards.reshape(-1)] = 1
    return (inc @ inc.T) == 0


def compatible(cards: np.ndarray) -> np.ndarray:
    return _compat_cached(np.ascontiguousarray(cards, dtype=np.uint8).tobytes(), cards.shape[1])


def dense(cards: np.ndarray, board: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(showdown matrix, fold matrix) for one board: value = matrix @ reach."""
    s = ref_strength(cards, board)
    v = s >= 0
    pair = compatible(cards) & v[:, None] & v[None, :]
    return (np.sign(s[:, None] - s[None, :]) * pair).astype(np.float64), pair.astype(np.float64)


def random_reach(rng: np.random.Generator, rows: int, H: int) -> np.ndarray:
    r = rng.random((rows, H)).astype(np.float32)
    r[rng.random((rows, H)) < 0.3] = 0.0  # zeros, on blocked hands too
    return r


def random_board(rng: np.random.Generator, size: int, deck: tuple[int, ...] | None = None) -> tuple[int, ...]:
    pool = np.arange(52) if deck is None else np.asarray(deck)
    return tuple(int(c) for c in rng.choice(pool, size, replace=False))


def assert_close(got: np.ndarray, want: np.ndarray, reach: np.ndarray) -> None:
    tol = 2e-6 * (1.0 + float(np.abs(reach).sum(axis=-1).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


# --------------------------------------------------------------------------- board tables
def test_board_table_matches_evaluator_on_random_boards() -> None:
    rng = np.random.default_rng(1)
    cards = holdem_hand_cards()
    for i in range(60):
        board = random_board(rng, 3 + i % 3)
        t = BoardTable(board)
        want = ref_strength(cards, board)
        np.testing.assert_array_equal(t.strength, want)
        assert sorted(t.order.tolist()) == list(range(1326))
        n_blocked = int((want < 0).sum())
        assert (t.strength[t.order[:n_blocked]] == -1).all()
        assert (np.diff(t.strength[t.order]) >= 0).all()
        assert t.n_valid == 1326 - n_blocked == int(t.valid.sum())
        assert t.table.shape == (2 * 1326 + 2,) and int(t.table[0]) == t.n_valid


def test_board_table_cache_is_keyed_by_the_sorted_board() -> None:
    a = holdem_board_table((51, 3, 17, 30, 8))
    b = BoardTable((3, 8, 17, 30, 51))
    assert a.strength is b.strength and a.table is b.table
    assert a.board == (51, 3, 17, 30, 8)
    with pytest.raises(ValueError):
        a.strength[0] = 5  # read-only


def test_board_table_of_one_card_hands_and_from_strength() -> None:
    leduc = HandList(np.asarray(LEDUC_DECK).reshape(-1, 1))
    for card in LEDUC_DECK:
        t = BoardTable((card,), leduc)
        np.testing.assert_array_equal(t.strength, ref_strength(leduc.cards, (card,)))
        assert t.n_valid == 5
    custom = BoardTable.from_strength((36,), np.array([-1, 3, 3, 7, 1, 0]), leduc)
    assert custom.order[0] == 0 and (np.diff(custom.strength[custom.order]) >= 0).all()


# --------------------------------------------------------------------------- terminal values
def test_holdem_showdown_and_fold_match_dense_reference() -> None:
    rng = np.random.default_rng(2)
    cards = holdem_hand_cards()
    boards = [random_board(rng, 5) for _ in range(12)] + [random_board(rng, 3), random_board(rng, 4)]
    # a board on which every hand ties (royal flush) and one with a four-flush
    boards += [(35, 39, 43, 47, 51), (3, 7, 19, 27, 40)]
    kernel = ShowdownKernel(None, boards)
    reach = random_reach(rng, 40 * len(boards), 1326)
    rows = np.repeat(np.arange(len(boards)), 40).astype(np.int32)
    rng.shuffle(rows)
    scale = rng.random(len(rows)).astype(np.float32) * 4
    sd = kernel.showdown(reach, rows, scale=scale)
    fd = kernel.fold(reach, rows)
    for b, board in enumerate(boards):
        m_sd, m_fold = dense(cards, board)
        sel = rows == b
        r = reach[sel].astype(np.float64)
        assert_close(sd[sel], (r @ m_sd.T) * scale[sel, None], r * 4)
        assert_close(fd[sel], r @ m_fold.T, r)
        blocked = kernel.tables[b].strength < 0
        assert (sd[sel][:, blocked] == 0).all() and (fd[sel][:, blocked] == 0).all()


def test_hand_list_subsets_on_many_boards() -> None:
    """Thousands of (board, range) pairs on random subsets of the hold'em hands."""
    rng = np.random.default_rng(3)
    all_cards = holdem_hand_cards()
    checked = 0
    for _ in range(600):  # 2400 boards, 14400 ranges
        subset = np.sort(rng.choice(1326, size=int(rng.integers(2, 300)), replace=False))
        hands = HandList(all_cards[subset])
        boards = [random_board(rng, 5 - (j % 3)) for j in range(4)]
        kernel = ShowdownKernel(hands, boards)
        reach = random_reach(rng, 24, hands.size)
        rows = rng.integers(0, len(boards), 24)
        sd, fd = kernel.showdown(reach, rows), kernel.fold(reach, rows)
        for b, board in enumerate(boards):
            m_sd, m_fold = dense(hands.cards, board)
            sel = rows == b
            r = reach[sel].astype(np.float64)
            assert_close(sd[sel], r @ m_sd.T, r)
            assert_close(fd[sel], r @ m_fold.T, r)
            checked += int(sel.sum())
    assert checked == 600 * 24


@pytest.mark.parametrize("deck", [LEDUC_DECK, tuple(range(52))], ids=["leduc", "52-singles"])
def test_one_card_hands_match_dense_reference(deck: tuple[int, ...]) -> None:
    rng = np.random.default_rng(4)
    hands = HandList(np.asarray(deck).reshape(-1, 1))
    for size in (0, 1, 2, 5):
        if size >= len(deck):
            continue
        boards = [random_board(rng, size, deck) for _ in range(6)]
        kernel = ShowdownKernel(hands, boards)
        reach = random_reach(rng, 60, hands.size)
        rows = rng.integers(0, len(boards), 60)
        sd, fd = kernel.showdown(reach, rows), kernel.fold(reach, rows)
        for b, board in enumerate(boards):
            m_sd, m_fold = dense(hands.cards, board)
            sel = rows == b
            r = reach[sel].astype(np.float64)
            assert_close(sd[sel], r @ m_sd.T, r)
            assert_close(fd[sel], r @ m_fold.T, r)


def test_batched_rows_equal_rows_one_at_a_time() -> None:
    """Rows sharing a board go through the multi-range sweep; results equal single rows."""
    rng = np.random.default_rng(5)
    boards = [random_board(rng, 5) for _ in range(3)]
    kernel = ShowdownKernel(None, boards)
    for n_rows in (1, 2, 7, 8, 9, 17, 64):
        reach = random_reach(rng, n_rows, 1326)
        rows = rng.integers(0, 3, n_rows).astype(np.int32)
        for method in (kernel.showdown, kernel.fold):
            batch = method(reach, rows)
            single = np.stack([method(reach[i], int(rows[i])) for i in range(n_rows)])
            np.testing.assert_allclose(batch, single, rtol=0, atol=1e-6 * (1 + np.abs(single).max()))


def test_convenience_functions_and_zero_copy_from_torch() -> None:
    torch = pytest.importorskip("torch")
    board = (0, 13, 26, 39, 51)
    t = torch.rand(3, 1326)
    r = t.numpy()  # shares memory with the tensor
    m_sd, m_fold = dense(holdem_hand_cards(), board)
    assert_close(showdown_values(board, r), r.astype(np.float64) @ m_sd.T, r)
    assert_close(fold_values(board, r), r.astype(np.float64) @ m_fold.T, r)
    assert_close(showdown_values(BoardTable(board), r[0]), r[0].astype(np.float64) @ m_sd.T, r[0])
    out = np.empty_like(r)
    assert showdown_values([board, board[::-1]], r, [0, 1, 1], out=out) is out
    assert_close(out, r.astype(np.float64) @ m_sd.T, r)


def test_turn_average_matches_brute_force() -> None:
    """sum over the 48 rivers of the river showdown / 44, checked pair by pair."""
    rng = np.random.default_rng(6)
    cards = holdem_hand_cards()
    turns = [random_board(rng, 4) for _ in range(2)]
    kernel = ChanceShowdownKernel(None, turns)
    reach = random_reach(rng, 3, 1326)
    rows = np.array([0, 0, 1])
    got = kernel.showdown(reach, rows, scale=2.0)
    want = np.zeros((2, 1326))
    for c in range(52):
        if c not in turns[0]:
            want += reach[:2].astype(np.float64) @ dense(cards, turns[0] + (c,))[0].T
    assert_close(got[:2], 2.0 * want / 44.0, reach[:2])
    assert_close(got[2], kernel.showdown(reach[2], 1) * 2.0, reach[2])
    # pair by pair: the average is the expectation over the 44 cards left given both hands
    turn, r = turns[0], reach[0].astype(np.float64)
    h = int(np.flatnonzero(~np.isin(cards, turn).any(axis=1))[17])
    expect = 0.0
    for o in np.flatnonzero(r > 0):
        if np.isin(cards[o], turn).any() or np.isin(cards[o], cards[h]).any():
            continue
        rivers = [c for c in range(52) if c not in turn and c not in cards[h] and c not in cards[o]]
        assert len(rivers) == 44
        rows7 = lambda hand: np.array([list(hand) + list(turn) + [c] for c in rivers], dtype=np.uint8)  # noqa: E731
        mine, theirs = evaluate(rows7(cards[h])).astype(int), evaluate(rows7(cards[o])).astype(int)
        expect += r[o] * np.sign(mine - theirs).mean()
    assert abs(got[0, h] / 2.0 - expect) < 1e-5 * (1 + r.sum())


def test_leduc_chance_average_matches_brute_force() -> None:
    """Pre-flop Leduc: the board card is uniform over the 4 cards left given both hands."""
    hands = HandList(np.asarray(LEDUC_DECK).reshape(-1, 1))
    r = np.array([0.1, 0.3, 0.0, 0.2, 0.25, 0.15], dtype=np.float32)
    got = showdown_chance_average((), r, hand_cards=hands, deck=LEDUC_DECK)
    assert ChanceShowdownKernel(hands, [()], LEDUC_DECK).num_boards == 1
    want = np.zeros(6)
    for h, o in combinations(range(6), 2):
        for a, b in ((h, o), (o, h)):
            boards = [c for c in LEDUC_DECK if c not in (LEDUC_DECK[a], LEDUC_DECK[b])]
            signs = [np.sign(int(evaluate([LEDUC_DECK[a], c])) - int(evaluate([LEDUC_DECK[b], c]))) for c in boards]
            want[a] += r[b] * np.mean(signs)
    np.testing.assert_allclose(got, want, atol=1e-6)


# --------------------------------------------------------------------------- bad inputs
def test_bad_inputs_raise_clear_value_errors() -> None:
    kernel = ShowdownKernel(None, [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9)])
    good = np.zeros((2, 1326), dtype=np.float32)
    rows = np.array([0, 1], dtype=np.int32)
    cases = [
        (lambda: kernel.showdown(good.astype(np.float64), rows), "float32"),
        (lambda: kernel.showdown(np.zeros((2, 100), np.float32), rows), "shape"),
        (lambda: kernel.showdown(np.zeros((1326, 2), np.float32).T, rows), "contiguous"),
        (lambda: kernel.showdown(good.tolist(), rows), "numpy"),
        (lambda: kernel.showdown(good), "row_board is required"),
        (lambda: kernel.showdown(good, np.array([0, 2])), "out of range"),
        (lambda: kernel.showdown(good, np.array([0, 2], dtype=np.int32)), "out of range"),
        (lambda: kernel.fold(good, np.array([-1, 0], dtype=np.int32)), "out of range"),
        (lambda: kernel.showdown(good, np.array([0.0, 1.0])), "integers"),
        (lambda: kernel.showdown(good, np.array([0])), "shape"),
        (lambda: kernel.showdown(good, rows, out=good), "overlap"),
        (lambda: kernel.showdown(good, rows, out=np.empty((2, 1326))), "float32"),
        (lambda: kernel.showdown(good, rows, out=np.empty((3, 1326), np.float32)), "shape"),
        (lambda: kernel.showdown(good, rows, scale=np.ones(3)), "scale"),
        (lambda: kernel.showdown(good, rows, out=_read_only(good.copy())), "writeable"),
        (lambda: kernel.fold(good, rows, out=_read_only(good.copy())), "writeable"),
        (lambda: kernel.showdown(good[0], 0, out=np.frombuffer(bytes(1326 * 4), np.float32)), "writeable"),
        (lambda: ChanceShowdownKernel(None, [(0, 1, 2, 3)]).showdown(good[0], out=_read_only(good[0].copy())), "writeable"),
        (lambda: BoardTable((0, 1, 2, 3, 0)), "repeats"),
        (lambda: BoardTable((0, 1, 2, 3, 52)), "out of range"),
        (lambda: BoardTable((0, 1, -1)), "out of range"),
        (lambda: BoardTable((0, 1, 2, 3, 4, 5)), "at most 5"),
        (lambda: BoardTable([[0, 1]]), "1-D"),
        (lambda: BoardTable((0.0, 1.0)), "integers"),
        (lambda: HandList(np.array([[0, 1], [2, 2]])), "twice"),
        (lambda: HandList(np.array([[0, 1], [1, 0]])), "repeats an earlier hand"),
        (lambda: HandList(np.array([[0, 60]])), "out of range"),
        (lambda: HandList(np.array([[0, 1, 2]])), "shape"),
        (lambda: HandList(np.array([[0.0, 1.0]])), "integers"),
        (lambda: ShowdownKernel(None, []), "at least one board"),
        (lambda: ShowdownKernel(HandList(np.array([[0, 1]])), [BoardTable((5, 6, 7))]), "another hand list"),
        (lambda: ChanceShowdownKernel(None, [(0, 1, 2, 3, 4)]), "at most 4"),
        (lambda: ChanceShowdownKernel(None, [(0, 1, 2, 3)], deck=(0, 1, 2, 3, 4, 4)), "repeats"),
    ]
    for i, (call, message) in enumerate(cases):
        with pytest.raises(ValueError, match=message):
            call()
            pytest.fail(f"case {i} did not raise")
    assert kernel.showdown(good, rows).shape == (2, 1326)  # the kernel still works


def _read_only(a: np.ndarray) -> np.ndarray:
    """An array C must not write into (as a read-only memory map is: that write was a crash)."""
    a.setflags(write=False)
    return a


def test_hand_list_holdem_is_shared() -> None:
    assert holdem_hands() is holdem_hands()
    assert BoardTable((0, 1, 2), holdem_hand_cards()).hands is holdem_hands()


def test_a_board_card_blocks_every_hand_holding_it() -> None:
    """One card blocks the 51 hold'em hands holding it; two cards block 51 + 51 - 1 (their common hand once)."""
    hands = holdem_hands()
    assert hands.blocked([0]).sum() == 51
    assert hands.blocked([0, 1]).sum() == 101
    assert hands.blocked([]).sum() == 0


def test_a_reordered_holdem_hand_list_is_kept_in_its_own_order() -> None:
    """A (1326, 2) array that is not the hold'em list in its order (reversed) is checked as given, not
    swapped for the shared hold'em list."""
    reversed_hands = np.ascontiguousarray(holdem_hand_cards()[::-1])
    hands = as_hand_list(reversed_hands)
    assert hands is not holdem_hands()
    assert np.array_equal(hands.cards, reversed_hands)
    assert as_hand_list(holdem_hand_cards().copy()) is holdem_hands()


def test_indexed_terminal_rows_read_and_write_in_place() -> None:
    """The solver's path: rows gathered from a larger reach matrix and written, scaled, into
    chosen rows of a larger output, the same as the plain kernels; bad rows are refused."""
    from native.showdown import IndexedTerminalRows

    rng = np.random.default_rng(11)
    boards = [random_board(rng, 5) for _ in range(3)]
    kernel = ShowdownKernel(None, boards)
    H = kernel.size
    reach = random_reach(rng, 10, H)
    in_rows = np.array([7, 2, 2, 9, 0])
    out_rows = np.array([1, 4, 0, 8, 6])
    row_board = np.array([0, 2, 1, 1, 0])
    scale = rng.random(5).astype(np.float32)
    for fold, plain in ((False, kernel.showdown), (True, kernel.fold)):
        out = np.full((9, H), 5.0, dtype=np.float32)
        IndexedTerminalRows(kernel, fold, row_board, in_rows, out_rows, scale)(reach, out)
        want = plain(np.ascontiguousarray(reach[in_rows]), row_board.astype(np.int32)) * scale[:, None]
        np.testing.assert_allclose(out[out_rows], want, rtol=1e-6, atol=1e-5)
        untouched = np.setdiff1d(np.arange(9), out_rows)
        assert (out[untouched] == 5.0).all()
    with pytest.raises(ValueError, match="reach row 12 out of range"):
        IndexedTerminalRows(kernel, False, [0], [12], [0], None)(reach, np.zeros((9, H), np.float32))
    with pytest.raises(ValueError, match="output row 9 out of range"):
        IndexedTerminalRows(kernel, True, [0], [1], [9], None)(reach, np.zeros((9, H), np.float32))
    with pytest.raises(ValueError, match="must not repeat"):
        IndexedTerminalRows(kernel, True, [0, 1], [1, 2], [3, 3], None)
    with pytest.raises(ValueError, match="float32"):
        IndexedTerminalRows(kernel, True, [0], [1], [2], None)(reach.astype(np.float64), np.zeros((9, H), np.float32))
    with pytest.raises(ValueError, match="overlap"):
        IndexedTerminalRows(kernel, True, [0], [1], [2], None)(reach, reach)
    # with multiplier rows: row i's range is reach[in_rows[i]] * mult[mult_rows[i]], bit for bit
    # the kernel on that product stored (the forward pass's product, formed as it is read)
    mult = rng.random((4, H)).astype(np.float32)
    mult_rows = np.array([3, 0, 1, 1, 2])
    for fold in (False, True):
        got = np.full((9, H), 5.0, dtype=np.float32)
        IndexedTerminalRows(kernel, fold, row_board, in_rows, out_rows, scale, mult_rows=mult_rows)(reach, got, mult)
        product = reach[in_rows] * mult[mult_rows]
        want = np.zeros((9, H), dtype=np.float32)
        IndexedTerminalRows(kernel, fold, row_board, np.arange(5), out_rows, scale)(product, want)
        assert np.array_equal(got[out_rows], want[out_rows])
    bound = IndexedTerminalRows(kernel, True, [0], [1], [2], None, mult_rows=[4])
    with pytest.raises(ValueError, match="mult row 4 out of range"):
        bound(reach, np.zeros((9, H), np.float32), mult)
    with pytest.raises(ValueError, match="mult must be given"):
        bound(reach, np.zeros((9, H), np.float32))
