"""Hold'em range notation and the 13x13 grid of starting-hand classes.

Notation (comma separated, each item with an optional ``:weight`` in [0, 1]):
``AA`` (6 combos), ``AKs`` (4 suited), ``AKo`` (12 offsuit), ``AK`` (all 16), ``AhKh``
(one combo), ``TT+`` (TT..AA), ``ATs+`` (AT..AK suited), ``22-55`` and ``A2s-A5s`` (spans),
``random`` (every hand). Later items override earlier ones.
"""

from __future__ import annotations

import re

import numpy as np

from native.cards import RANK_CHARS, CardError, cards_from_str, holdem_hand_cards, holdem_hand_index

RANKS_DESC = RANK_CHARS[::-1]  # "AKQJT98765432": grid rows and columns


class RangeError(ValueError):
    """A range string that cannot be read; the message names the offending item."""


def _rank(ch: str, item: str) -> int:
    r = RANK_CHARS.find(ch.upper())
    if r < 0:
        raise RangeError(f"range item {item!r}: {ch!r} is not a rank")
    return r


def _class_combos(r1: int, r2: int, kind: str) -> list[int]:
    """Hand indices of the class (r1 >= r2): kind '' (all), 's' or 'o'."""
    out = []
    for s1 in range(4):
        for s2 in range(4):
            a, b = 4 * r1 + s1, 4 * r2 + s2
            if a == b or (r1 == r2 and s1 >= s2):
                continue
            if kind == "s" and s1 != s2:
                continue
            if kind == "o" and s1 == s2:
                continue
            out.append(holdem_hand_index(a, b))
    return out


_CLASS_RE = re.compile(r"^([2-9TJQKAtjqka])([2-9TJQKAtjqka])([so]?)(\+?)$")
_SPAN_RE = re.compile(r"^([2-9TJQKAtjqka])([2-9TJQKAtjqka])([so]?)-([2-9TJQKAtjqka])([2-9TJQKAtjqka])([so]?)$")


def _item_hands(body: str, item: str) -> list[int]:
    if body.lower() in ("random", "any", "uniform"):
        return list(range(1326))
    if len(body) == 4 and body[1].lower() in "cdhs" and body[3].lower() in "cdhs":
        try:
            a, b = cards_from_str(body)
        except CardError as exc:
            raise RangeError(f"range item {item!r}: {exc}") from None
        if a == b:
            raise RangeError(f"range item {item!r}: the same card twice")
        return [holdem_hand_index(a, b)]
    m = _CLASS_RE.match(body)
    if m:
        hi, lo = _rank(m.group(1), item), _rank(m.group(2), item)
        kind, plus = m.group(3).lower(), m.group(4)
        if hi < lo:
            hi, lo = lo, hi
        if hi == lo and kind:
            raise RangeError(f"range item {item!r}: a pair cannot be suited or offsuit")
        if not plus:
            return _class_combos(hi, lo, kind)
        if hi == lo:  # TT+ = TT..AA
            return [h for r in range(hi, 13) for h in _class_combos(r, r, "")]
        return [h for r in range(lo, hi) for h in _class_combos(hi, r, kind)]  # ATs+ = AT..AK
    m = _SPAN_RE.match(body)
    if m:
        a_hi, a_lo, a_kind = _rank(m.group(1), item), _rank(m.group(2), item), m.group(3).lower()
        b_hi, b_lo, b_kind = _rank(m.group(4), item), _rank(m.group(5), item), m.group(6).lower()
        if a_kind != b_kind:
            raise RangeError(f"range item {item!r}: both ends must have the same suitedness")
        if a_hi == a_lo and b_hi == b_lo:
            lo, hi = sorted((a_hi, b_hi))
            return [h for r in range(lo, hi + 1) for h in _class_combos(r, r, "")]
        if a_hi != b_hi or a_hi in (a_lo, b_lo):
            raise RangeError(f"range item {item!r}: a span keeps its first rank fixed, e.g. A2s-A5s")
        lo, hi = sorted((a_lo, b_lo))
        return [h for r in range(lo, hi + 1) for h in _class_combos(a_hi, r, a_kind)]
    raise RangeError(f"range item {item!r} is not a hand class (AKs, AKo, AK, TT, TT+, ATs+, A2s-A5s) or combo (AhKh)")


def parse_range(text: str) -> np.ndarray:
    """Weights (1326,) in [0, 1] of the hands in ``text``; blocked combos are not removed here."""
    weights = np.zeros(1326, dtype=np.float64)
    items = [t.strip() for t in text.split(",")]
    if not any(items):
        raise RangeError("empty range")
    for item in items:
        if not item:
            raise RangeError(f"empty item in range {text!r}")
        body, _, w_text = item.partition(":")
        weight = 1.0
        if w_text:
            try:
                weight = float(w_text)
            except ValueError:
                raise RangeError(f"range item {item!r}: weight {w_text!r} is not a number") from None
            if not 0.0 <= weight <= 1.0:
                raise RangeError(f"range item {item!r}: weight must be in [0, 1]")
        weights[_item_hands(body.strip(), item)] = weight
    return weights


def hand_class_cell(hand_index: int) -> tuple[int, int]:
    """Grid cell (row, column) of a hand: pairs on the diagonal, suited above, offsuit below."""
    a, b = (int(c) for c in holdem_hand_cards()[hand_index])
    ra, rb = 12 - (a >> 2), 12 - (b >> 2)  # 0 = ace
    hi, lo = min(ra, rb), max(ra, rb)
    if (a & 3) == (b & 3):
        return hi, lo
    return lo, hi


def class_label(row: int, col: int) -> str:
    """The starting-hand class of grid cell (row, col), ranks from ace down: ``AA`` on the diagonal,
    suited above it (``AKs``), offsuit below (``AKo``)."""
    if row == col:
        return RANKS_DESC[row] * 2
    if row < col:
        return RANKS_DESC[row] + RANKS_DESC[col] + "s"
    return RANKS_DESC[col] + RANKS_DESC[row] + "o"


_CELLS = None


def _cells() -> np.ndarray:
    global _CELLS
    if _CELLS is None:
        _CELLS = np.array([hand_class_cell(h) for h in range(1326)], dtype=np.int64)
    return _CELLS


def grid(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """13x13 weighted mean of per-hand ``values`` (NaN where a class has no weight)."""
    values = np.asarray(values, dtype=np.float64)
    w = np.ones(1326) if weights is None else np.asarray(weights, dtype=np.float64)
    cells = _cells()
    num = np.zeros((13, 13))
    den = np.zeros((13, 13))
    np.add.at(num, (cells[:, 0], cells[:, 1]), values * w)
    np.add.at(den, (cells[:, 0], cells[:, 1]), w)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
