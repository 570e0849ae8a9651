"""Poker hand values for hands of 1..7 cards, computed by the C evaluator (``hand_eval.c``).

A value is a ``uint16``: higher is better, equal is a tie, and values of hands of different
sizes compare too (hold'em showdowns use 7 cards, Leduc hold'em 2). The layout is
``category << 12 | index`` with the categories of :data:`CATEGORY_NAMES`; the index is dense
within its category. Hands of 5..7 cards are worth their best five cards; hands of fewer
than five have no straights or flushes and compare by rank multiplicities, then by the
kickers present (a missing kicker is lower than any card), as the ACPC dealer does.

Cards are numbered as in :mod:`native.cards` (``4 * rank + suit``). Arrays are checked
here and in C, so a bad card gives a ``ValueError``, never a crash or a wrong answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from native.cards import NUM_CARDS, cards_to_str

try:
    from native._native import ffi, lib
except ImportError as exc:  # pragma: no cover - depends on the local build
    raise ImportError("native._native is not built; run `python native/build_ffi.py` (or pip install -e .)") from exc

if not hasattr(lib, "ds_eval_batch"):  # pragma: no cover - stale extension
    raise ImportError("native._native predates the hand evaluator; rebuild it with `python native/build_ffi.py`")

CATEGORY_NAMES: tuple[str, ...] = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)
"""Name of each category, indexed by ``value >> 12``."""

MAX_CARDS = 7
NUM_7CARD_HANDS = 133_784_560

# Build the tables now (about 10 ms) rather than inside the first timed call.
if lib.ds_eval_init() != 0:  # pragma: no cover - would mean a broken build
    raise RuntimeError("the hand evaluator could not build its tables (ds_eval_init failed)")


def _as_card_rows(cards: npt.ArrayLike) -> tuple[np.ndarray, bool]:
    """Validated ``(N, k)`` C-contiguous uint8 copy or view of ``cards``; True if it was 1-D.

    Range checks happen before the cast to uint8 so that e.g. 256 or -1 cannot wrap onto
    a real card.
    """
    try:
        arr = np.asarray(cards)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise ValueError(f"cards must be a rectangular array of integers: {exc}") from exc
    if arr.ndim not in (1, 2):
        raise ValueError(f"cards must have shape (k,) or (N, k), got shape {arr.shape}")
    single = arr.ndim == 1
    rows = arr.reshape(1, -1) if single else arr
    k = rows.shape[1]
    if not 1 <= k <= MAX_CARDS:
        raise ValueError(f"a hand must have 1..{MAX_CARDS} cards, got {k} (shape {arr.shape})")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"cards must have an integer dtype, got {arr.dtype}")
    if arr.dtype != np.uint8 and rows.size and (rows.min() < 0 or rows.max() >= NUM_CARDS):
        row = int(np.flatnonzero(((rows < 0) | (rows >= NUM_CARDS)).any(axis=1))[0])
        raise ValueError(f"row {row}: card out of range 0..{NUM_CARDS - 1} in {rows[row].tolist()}")
    return np.ascontiguousarray(rows, dtype=np.uint8), single


def _describe_bad_row(rows: np.ndarray, row: int) -> str:
    """Why the C side refused ``rows[row]``: a card >= 52 or a repeated card."""
    cards = rows[row].tolist()
    out_of_range = [c for c in cards if c >= NUM_CARDS]
    if out_of_range:
        return f"row {row}: card out of range 0..{NUM_CARDS - 1} in {cards}"
    repeated = sorted({c for c in cards if cards.count(c) > 1})
    return f"row {row}: repeated card(s) {repeated} ({cards_to_str(repeated)}) in {cards}"


def evaluate(cards: npt.ArrayLike) -> np.ndarray:
    """Values of hands given as an integer array of shape ``(N, k)`` (or one hand, ``(k,)``).

    Returns a uint16 array of shape ``(N,)``, or shape ``()`` for a single 1-D hand. The
    whole batch is one C call, so this is the way to evaluate many hands from Python; a
    C-contiguous uint8 array is used as is, any other integer array is range-checked and
    converted first (several times slower for big batches).

    Raises:
        ValueError: non-integer dtype, shape not ``(k,)``/``(N, k)`` with ``1 <= k <= 7``,
            a card outside 0..51, or a card repeated within a hand (the message names the
            first bad row and its cards).
    """
    rows, single = _as_card_rows(cards)
    n_hands, k = rows.shape
    out = np.empty(n_hands, dtype=np.uint16)
    if n_hands:
        bad = lib.ds_eval_batch(ffi.from_buffer("uint8_t[]", rows), n_hands, k, ffi.from_buffer("uint16_t[]", out))
        if bad >= 0:
            raise ValueError(_describe_bad_row(rows, int(bad)))
        if bad != -1:  # pragma: no cover - arguments are checked above
            raise RuntimeError(f"ds_eval_batch refused its arguments (code {bad})")
    return out.reshape(()) if single else out


def evaluate_one(cards: Sequence[int]) -> int:
    """Value of one hand given as a sequence of 1..7 card numbers."""
    return int(evaluate(np.asarray(cards)))


def category(values: npt.ArrayLike) -> np.ndarray:
    """Category index (0 high card .. 8 straight flush) of each value; names in CATEGORY_NAMES."""
    return (np.asarray(values, dtype=np.uint16) >> 12).astype(np.uint8)


def category_name(value: int) -> str:
    """Name of the category of one value, e.g. ``"full house"``."""
    return CATEGORY_NAMES[int(value) >> 12]


def _counts_dict(counts: Any) -> dict[str, int]:
    return {name: int(counts[i]) for i, name in enumerate(CATEGORY_NAMES)}


def enumerate7_category_counts() -> dict[str, int]:
    """Number of 7-card hands in each category, over all C(52, 7) of them (fast C loops)."""
    counts = ffi.new("uint64_t[9]")
    lib.ds_enumerate7_category_counts(counts)
    return _counts_dict(counts)


def enumerate7_checksum() -> int:
    """Sum of the values of all C(52, 7) hands: a fingerprint of the tables and a benchmark."""
    return int(lib.ds_enumerate7_checksum())


def enumerate_category_counts(n_cards: int) -> dict[str, int]:
    """Number of ``n_cards``-card hands (1..7) in each category, over all of them."""
    counts = ffi.new("uint64_t[9]")
    if lib.ds_enumerate_category_counts(int(n_cards), counts) != 0:
        raise ValueError(f"n_cards must be 1..{MAX_CARDS}, got {n_cards}")
    return _counts_dict(counts)


def distinct_values(n_cards: int) -> np.ndarray:
    """Sorted distinct values over all ``n_cards``-card hands (7462 of them for 5 cards)."""
    seen = np.zeros(1024, dtype=np.uint64)
    if lib.ds_enumerate_value_set(int(n_cards), ffi.from_buffer("uint64_t[]", seen)) != 0:
        raise ValueError(f"n_cards must be 1..{MAX_CARDS}, got {n_cards}")
    bits = np.unpackbits(seen.view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).astype(np.uint16)
