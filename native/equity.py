"""Hand equities and equity histograms against a range, by full enumeration of the runouts.

* ``equity(h)`` = P(win) + P(tie) / 2 for hand ``h`` against an opponent hand drawn from
  ``opp_range`` (weights over the same hand list, uniform if ``None``) restricted to the
  hands compatible with ``h`` and the board, the missing board cards being dealt uniformly
  from the rest of the deck (cards in neither hand). Every runout is enumerated: 1081 on a
  hold'em flop, 46 on a turn, 1 on a river; each final board is ranked once and swept in
  O(H) by the C kernel (``ds_runout_equity``), with card removal on both sides.
* Blocked hands (sharing a card with the board) and hands without any compatible opponent
  mass get ``NaN``.
* :func:`equity_histograms` gives, per hand, the distribution over the next card (the turn
  on a flop, the river on a turn) of the hand's equity on the extended board (itself
  enumerated to the river): ``bins`` equal-width bins over [0, 1] (equity 1 in the last bin),
  each next card weighted by its probability given the hand and the opponent range
  (proportional to the opponent mass compatible with hand and card: uniform over the cards
  not in the hand when the range is uniform). Rows sum to 1; blocked hands get all zeros.
  This is the input of the k-means / earth mover's distance bucketing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from native.arrays import exact_integers
from native.board_tables import (
    BoardLike,
    HandList,
    as_hand_list,
    c_error,
    check_board,
    check_deck,
)
from native.evaluator import ffi, lib

#: board size at showdown in hold'em
HOLDEM_FINAL_BOARD = 5


def _opp_range(opp_range: npt.ArrayLike | None, H: int) -> np.ndarray:
    if opp_range is None:
        return np.ones(H, dtype=np.float32)
    r = np.asarray(opp_range)
    if r.shape != (H,):
        raise ValueError(f"opp_range must have shape ({H},), got {r.shape}")
    if r.dtype.kind not in "fiu":
        raise ValueError(f"opp_range must be numeric, got dtype {r.dtype}")
    r = np.ascontiguousarray(r, dtype=np.float32)
    if not np.isfinite(r).all() or (r < 0).any():
        raise ValueError("opp_range must be finite and non-negative")
    return r


def _runouts(
    board: BoardLike,
    opp_range: npt.ArrayLike | None,
    hand_cards: HandList | npt.ArrayLike | None,
    deck: BoardLike | None,
    final_board_size: int,
    per_card: bool,
) -> tuple[HandList, tuple[int, ...], np.ndarray, np.ndarray]:
    hands = as_hand_list(hand_cards)
    cards = check_board(board, hands.k)
    deck_cards = check_deck(deck)
    if not set(cards) <= set(deck_cards):
        raise ValueError("the board has cards that are not in the deck")
    n_draw = final_board_size - len(cards)
    if n_draw < 0:
        raise ValueError(f"the board has {len(cards)} cards, more than final_board_size={final_board_size}")
    if final_board_size + hands.k > 7:
        raise ValueError(f"final_board_size={final_board_size} with {hands.k}-card hands exceeds the 7-card evaluator")
    if per_card and n_draw < 1:
        raise ValueError("the board is complete: there is no next card")
    remaining = tuple(c for c in deck_cards if c not in set(cards))
    if n_draw > len(remaining):
        raise ValueError(f"the deck has {len(remaining)} cards left, {n_draw} are needed")
    r = _opp_range(opp_range, hands.size)
    rows = len(remaining) if per_card else 1
    num = np.zeros((rows, hands.size), dtype=np.float64)
    den = np.zeros((rows, hands.size), dtype=np.float64)
    board_arr = np.asarray(cards, dtype=np.uint8)
    deck_arr = np.asarray(deck_cards, dtype=np.uint8)
    rc = lib.ds_runout_equity(
        hands.size,
        hands.k,
        hands._ptr,
        ffi.from_buffer("uint8_t[]", board_arr),
        len(cards),
        ffi.from_buffer("uint8_t[]", deck_arr),
        len(deck_cards),
        n_draw,
        int(per_card),
        ffi.from_buffer("float[]", r),
        ffi.from_buffer("double[]", num),
        ffi.from_buffer("double[]", den),
    )
    if rc != 0:  # pragma: no cover - everything is checked above
        raise c_error(rc, "runout equity")
    return hands, remaining, num, den


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / (2.0 * np.where(den > 0, den, 1.0)), np.nan)


def hand_equities(
    board: BoardLike,
    opp_range: npt.ArrayLike | None = None,
    *,
    hand_cards: HandList | npt.ArrayLike | None = None,
    deck: BoardLike | None = None,
    final_board_size: int = HOLDEM_FINAL_BOARD,
) -> np.ndarray:
    """Equity (win + tie / 2) of every hand against ``opp_range``: float64 ``[H]``, NaN if blocked.

    Args:
        board: the public cards so far (a flop, turn or river in hold'em).
        opp_range: opponent weights ``[H]`` (need not sum to 1; blocked hands are ignored),
            ``None`` for uniform.
        hand_cards: the hand list (default: the 1326 hold'em hands).
        deck: the cards of the deck (default: all 52).
        final_board_size: board cards at showdown (5 in hold'em).
    """
    _, _, num, den = _runouts(board, opp_range, hand_cards, deck, final_board_size, per_card=False)
    return _ratio(num[0], den[0])


def next_card_equities(
    board: BoardLike,
    opp_range: npt.ArrayLike | None = None,
    *,
    hand_cards: HandList | npt.ArrayLike | None = None,
    deck: BoardLike | None = None,
    final_board_size: int = HOLDEM_FINAL_BOARD,
) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    """Equity of every hand on each one-card extension of ``board``.

    Returns ``(cards, equity, weight)``: the possible next cards (deck order), ``equity[i, h]``
    on ``board + cards[i]`` (NaN where ``h`` is blocked there or has no opponent mass), and
    ``weight[i, h]``, proportional to the probability of ``cards[i]`` given ``h`` and the range
    (zero where ``h`` holds the card).
    """
    _, cards, num, den = _runouts(board, opp_range, hand_cards, deck, final_board_size, per_card=True)
    return cards, _ratio(num, den), den


def equity_histograms(
    board: BoardLike,
    bins: int,
    opp_range: npt.ArrayLike | None = None,
    *,
    hand_cards: HandList | npt.ArrayLike | None = None,
    deck: BoardLike | None = None,
    final_board_size: int = HOLDEM_FINAL_BOARD,
) -> np.ndarray:
    """Per hand, the distribution over the next card of its equity: float64 ``[H, bins]``.

    Rows sum to 1 (all zeros for blocked hands or hands with no compatible opponent mass).
    """
    if not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    _, equity, weight = next_card_equities(board, opp_range, hand_cards=hand_cards, deck=deck, final_board_size=final_board_size)
    H = equity.shape[1]
    ok = weight > 0
    idx = np.clip(np.floor(np.where(ok, equity, 0.0) * bins).astype(np.int64), 0, bins - 1)
    hand = np.broadcast_to(np.arange(H), equity.shape)
    hist = np.bincount((hand * bins + idx)[ok], weights=weight[ok], minlength=H * bins).reshape(H, bins)
    total = hist.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, hist / np.where(total > 0, total, 1.0), 0.0)


def river_equity_deals(cards: npt.ArrayLike) -> np.ndarray:
    """``[n, 2]`` river equity of each position of ``n`` hold'em deals, ``cards`` ``[n, 9]`` (position 0's two
    hole cards, position 1's two, the five board cards): its equity against a hand drawn uniformly from the
    cards the board and its own cards leave (the way it sees the hand, not knowing the opponent's cards)."""
    rows = exact_integers(cards, np.uint8, "deal cards")
    if rows.ndim != 2 or rows.shape[1] != 9:
        raise ValueError(f"deals must be [n, 9] cards, not {rows.shape}")
    out = np.empty((len(rows), 2), dtype=np.float32)
    rc = lib.ds_river_equity_deals(
        len(rows), ffi.cast("uint8_t *", ffi.from_buffer(rows)), ffi.cast("float *", ffi.from_buffer(out))
    )
    if rc >= 0:
        raise ValueError(f"deal {rc} has a card outside 0..51 or a card twice: {rows[rc].tolist()}")
    if rc != -1:
        raise RuntimeError(f"ds_river_equity_deals failed ({rc})")
    return out
