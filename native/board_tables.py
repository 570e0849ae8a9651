"""Hand lists and board tables: the hands of a game (rows of 1 or 2 cards) and their ranking on one
board, computed once by the C evaluator and shared read-only by the showdown kernels
(:mod:`native.showdown`) and the equity code (:mod:`native.equity`).

Tables of the hold'em hand list are kept in an LRU cache keyed by the sorted board.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from native.cards import NUM_CARDS, cards_to_str, holdem_hand_cards
from native.evaluator import MAX_CARDS, ffi, lib

BoardLike = Sequence[int] | npt.ArrayLike

_ERRORS = {
    -2: "bad sizes or arguments",
    -3: "a hand has a card outside 0..51 or the same card twice",
    -4: "a board table is inconsistent (strength / order)",
    -5: "bad board (card outside 0..51 or repeated)",
    -6: "bad deck (card outside 0..51 or repeated)",
    -7: "out of memory",
    -8: "the hand evaluator could not build its tables",
}

#: boards of the hold'em hand list kept by :func:`holdem_board_table`
BOARD_CACHE_SIZE = 8192


def c_error(code: int, what: str) -> ValueError:
    """The ValueError for a C kernel's error ``code``, prefixed with ``what`` was refused."""
    return ValueError(f"{what}: {_ERRORS.get(code, f'error code {code}')}")


# --------------------------------------------------------------------------- hand lists
class HandList:
    """A checked list of private hands: ``(H, k)`` uint8, k = 1 or 2, distinct hands.

    Raises:
        ValueError: wrong shape or dtype, a card outside 0..51, a card repeated within a
            hand, or the same hand twice (in any card order).
    """

    __slots__ = ("cards", "k", "size", "_ptr", "__weakref__")

    def __init__(self, hand_cards: npt.ArrayLike) -> None:
        arr = np.asarray(hand_cards)
        if arr.ndim != 2 or arr.shape[1] not in (1, 2):
            raise ValueError(f"hand_cards must have shape (H, 1) or (H, 2), got {arr.shape}")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"hand_cards must be integers, got dtype {arr.dtype}")
        H, k = arr.shape
        limit = NUM_CARDS if k == 1 else NUM_CARDS * (NUM_CARDS - 1) // 2
        if not 1 <= H <= limit:
            raise ValueError(f"a list of {k}-card hands must hold 1..{limit} hands, got {H}")
        if arr.min() < 0 or arr.max() >= NUM_CARDS:
            row = int(np.flatnonzero(((arr < 0) | (arr >= NUM_CARDS)).any(axis=1))[0])
            raise ValueError(f"hand {row}: card out of range 0..{NUM_CARDS - 1} in {arr[row].tolist()}")
        cards = np.ascontiguousarray(arr, dtype=np.uint8)
        bad = lib.ds_hand_list_check(H, k, ffi.from_buffer("uint8_t[]", cards))
        if bad >= 0:
            row = cards[bad].tolist()
            if k == 2 and row[0] == row[1]:
                raise ValueError(f"hand {bad}: card {cards_to_str(row[:1])} appears twice in {row}")
            raise ValueError(f"hand {bad} ({cards_to_str(row)}) repeats an earlier hand")
        if bad != -1:  # pragma: no cover - sizes are checked above
            raise c_error(bad, "hand_cards")
        cards.setflags(write=False)
        self.cards = cards
        self.k = int(k)
        self.size = int(H)
        self._ptr = ffi.from_buffer("uint8_t[]", cards)

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"HandList({self.size} hands of {self.k} card{'s' if self.k > 1 else ''})"

    def blocked(self, board: Iterable[int]) -> np.ndarray:
        """Bool mask of the hands sharing a card with ``board``."""
        mask = np.zeros(NUM_CARDS, dtype=bool)
        mask[list(board)] = True
        return mask[self.cards].any(axis=1)


@lru_cache(maxsize=1)
def holdem_hands() -> HandList:
    """The 1326 hold'em hands (shared instance)."""
    return HandList(holdem_hand_cards())


def as_hand_list(hand_cards: HandList | npt.ArrayLike | None) -> HandList:
    """``None`` -> the hold'em hands; a :class:`HandList` as is; anything else is checked."""
    if hand_cards is None:
        return holdem_hands()
    if isinstance(hand_cards, HandList):
        return hand_cards
    if isinstance(hand_cards, np.ndarray) and hand_cards.shape == (1326, 2):
        if hand_cards is holdem_hand_cards() or np.array_equal(hand_cards, holdem_hand_cards()):
            return holdem_hands()
    return HandList(hand_cards)


def _card_tuple(cards: Any, what: str) -> tuple[int, ...]:
    arr = np.asarray(cards)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be a 1-D sequence of card numbers, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{what} cards must be integers, got dtype {arr.dtype}")
    out = tuple(int(c) for c in arr)
    bad = [c for c in out if not 0 <= c < NUM_CARDS]
    if bad:
        raise ValueError(f"{what} card(s) {bad} out of range 0..{NUM_CARDS - 1}")
    if len(set(out)) != len(out):
        repeated = sorted({c for c in out if out.count(c) > 1})
        raise ValueError(f"{what} repeats card(s) {cards_to_str(repeated)} in {cards_to_str(out)}")
    return out


def check_board(board: BoardLike, k: int = 2, *, what: str = "board") -> tuple[int, ...]:
    """The board as a tuple of ints, checked: cards in 0..51, no repeats, at most 7 - k cards."""
    cards = _card_tuple(board, what)
    if len(cards) + k > MAX_CARDS:
        raise ValueError(f"{what} has {len(cards)} cards: with {k}-card hands at most {MAX_CARDS - k} fit the evaluator")
    return cards


def check_deck(deck: BoardLike | None) -> tuple[int, ...]:
    """The deck (default: all 52 cards in order), checked: cards in 0..51, no repeats."""
    return tuple(range(NUM_CARDS)) if deck is None else _card_tuple(deck, "deck")


# --------------------------------------------------------------------------- board tables
class BoardTable:
    """The hands of a hand list ranked on one board (computed once, read-only arrays).

    Attributes:
        board: the board's cards, as given.
        hands: the :class:`HandList`.
        strength: int32 ``[H]``, evaluator value of hand + board (higher wins), -1 if blocked.
        order: int32 ``[H]``, blocked hands first, then valid hands by ascending strength.
        valid: bool ``[H]``, hand not blocked.
        n_valid: number of valid hands.
        table: uint32 ``[2 H + 2]``, the packed form the C kernels read.
    """

    __slots__ = ("board", "hands", "strength", "order", "valid", "n_valid", "table")

    def __init__(self, board: BoardLike, hand_cards: HandList | npt.ArrayLike | None = None) -> None:
        hands = as_hand_list(hand_cards)
        cards = check_board(board, hands.k)
        if hands is holdem_hands():
            strength, order, table, n_valid = _holdem_ranked(tuple(sorted(cards)))
        else:
            strength, order, table, n_valid = _rank(hands, cards)
        self.board = cards
        self.hands = hands
        self.strength = strength
        self.order = order
        self.table = table
        self.n_valid = n_valid
        self.valid = strength >= 0
        self.valid.setflags(write=False)

    @classmethod
    def from_strength(
        cls, board: BoardLike, strength: npt.ArrayLike, hand_cards: HandList | npt.ArrayLike | None = None
    ) -> BoardTable:
        """A table from given strengths (negative = blocked), e.g. for a game with its own ranking."""
        hands = as_hand_list(hand_cards)
        cards = check_board(board, hands.k)
        s = np.asarray(strength)
        if s.shape != (hands.size,) or s.dtype.kind not in "iu":
            raise ValueError(f"strength must be an integer array of shape ({hands.size},), got {s.dtype} {s.shape}")
        if s.size and int(s.max()) > np.iinfo(np.int32).max:
            raise ValueError("strength values must fit in int32")
        s32 = np.where(s < 0, -1, s).astype(np.int32)
        order = np.argsort(s32, kind="stable").astype(np.int32)
        table = np.empty(2 * hands.size + 2, dtype=np.uint32)
        n_valid = lib.ds_table_pack(
            hands.size,
            hands.k,
            hands._ptr,
            ffi.from_buffer("int32_t[]", s32),
            ffi.from_buffer("int32_t[]", order),
            ffi.from_buffer("uint32_t[]", table),
        )
        if n_valid < 0:  # pragma: no cover - the order is sorted above
            raise c_error(n_valid, "strength")
        self = cls.__new__(cls)
        for arr in (s32, order, table):
            arr.setflags(write=False)
        self.board, self.hands, self.strength, self.order = cards, hands, s32, order
        self.table, self.n_valid = table, int(n_valid)
        self.valid = s32 >= 0
        self.valid.setflags(write=False)
        return self

    def __repr__(self) -> str:
        return f"BoardTable({cards_to_str(self.board)!r}, {self.hands!r}, {self.n_valid} valid)"


def _rank(hands: HandList, board: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    H = hands.size
    strength = np.empty(H, dtype=np.int32)
    order = np.empty(H, dtype=np.int32)
    table = np.empty(2 * H + 2, dtype=np.uint32)
    board_arr = np.asarray(board, dtype=np.uint8)
    n_valid = lib.ds_board_rank(
        H,
        hands.k,
        hands._ptr,
        ffi.from_buffer("uint8_t[]", board_arr),
        len(board),
        ffi.from_buffer("int32_t[]", strength),
        ffi.from_buffer("int32_t[]", order),
        ffi.from_buffer("uint32_t[]", table),
    )
    if n_valid < 0:  # pragma: no cover - everything is checked before
        raise c_error(n_valid, f"board {cards_to_str(board)}")
    for arr in (strength, order, table):
        arr.setflags(write=False)
    return strength, order, table, int(n_valid)


@lru_cache(maxsize=BOARD_CACHE_SIZE)
def _holdem_ranked(sorted_board: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    return _rank(holdem_hands(), sorted_board)


def holdem_board_table(board: BoardLike) -> BoardTable:
    """:class:`BoardTable` of the hold'em hands (the arrays come from the LRU cache)."""
    return BoardTable(board)
