"""Card encoding shared by every layer: one integer per card, ``4 * rank + suit``.

Ranks run 0..12 for ``2..A`` and suits 0..3 for ``c, d, h, s``; this is exactly the
ACPC dealer's ``makeCard(rank, suit)`` with ``MAX_SUITS = 4``, so a card read from a
``MATCHSTATE`` line needs no translation, whatever reduced deck the game uses.

Two-card hands (hold'em) are indexed 0..1325 in the order ``(0,1), (0,2), ..., (50,51)``
(lower card first). Every range, counterfactual-value vector and kernel in the project
uses this order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
NUM_CARDS = 52
NUM_HOLDEM_HANDS = 1326


class CardError(ValueError):
    """A card string or card number that does not denote a card."""


def make_card(rank: int, suit: int) -> int:
    """Card number of ``rank`` (0 = deuce .. 12 = ace) and ``suit`` (0..3 = c, d, h, s)."""
    if not (0 <= rank < 13 and 0 <= suit < 4):
        raise CardError(f"rank {rank} / suit {suit} out of range")
    return 4 * rank + suit


def card_from_str(text: str) -> int:
    """Parse one card such as ``"Ah"`` (rank case-insensitive, as the ACPC dealer reads it)."""
    if len(text) != 2:
        raise CardError(f"card {text!r} must be two characters, rank then suit")
    r = RANK_CHARS.find(text[0].upper())
    s = SUIT_CHARS.find(text[1].lower())
    if r < 0 or s < 0:
        raise CardError(f"card {text!r} is not a rank in {RANK_CHARS} followed by a suit in {SUIT_CHARS}")
    return 4 * r + s


def card_to_str(card: int) -> str:
    """The two-character ACPC name of card number ``card`` (``4 * rank + suit``), e.g. ``"Ah"``."""
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"card number {card} is outside 0..51")
    return RANK_CHARS[card >> 2] + SUIT_CHARS[card & 3]


def cards_from_str(text: str) -> tuple[int, ...]:
    """Parse a run of cards without separators, e.g. ``"AhKs7d"``; spaces are allowed."""
    compact = text.replace(" ", "")
    if len(compact) % 2:
        raise CardError(f"card string {text!r} has an odd number of characters")
    return tuple(card_from_str(compact[i : i + 2]) for i in range(0, len(compact), 2))


def cards_to_str(cards: Iterable[int]) -> str:
    """Cards written as the protocol does: names without separators, e.g. ``"AhKs7d"``."""
    return "".join(card_to_str(c) for c in cards)


@lru_cache(maxsize=1)
def holdem_hand_cards() -> np.ndarray:
    """The 1326 two-card hands as a read-only ``(1326, 2)`` uint8 array, lower card first."""
    first, second = np.triu_indices(NUM_CARDS, k=1)
    hands = np.stack([first, second], axis=1).astype(np.uint8)
    hands.setflags(write=False)
    return hands


@lru_cache(maxsize=1)
def _holdem_index_table() -> np.ndarray:
    table = np.full((NUM_CARDS, NUM_CARDS), -1, dtype=np.int16)
    hands = holdem_hand_cards()
    idx = np.arange(NUM_HOLDEM_HANDS, dtype=np.int16)
    table[hands[:, 0], hands[:, 1]] = idx
    table[hands[:, 1], hands[:, 0]] = idx
    table.setflags(write=False)
    return table


def holdem_hand_index(a: int, b: int) -> int:
    """Index 0..1325 of the two-card hand ``{a, b}`` (order of the cards does not matter)."""
    if a == b or not (0 <= a < NUM_CARDS and 0 <= b < NUM_CARDS):
        raise CardError(f"cards {a}, {b} do not form a two-card hand")
    return int(_holdem_index_table()[a, b])


def hands_blocked_by(board: Sequence[int]) -> np.ndarray:
    """Boolean mask over the 1326 hands: True where the hand shares a card with ``board``."""
    hands = holdem_hand_cards()
    blocked = np.zeros(NUM_CARDS, dtype=bool)
    blocked[list(board)] = True
    return blocked[hands[:, 0]] | blocked[hands[:, 1]]
