"""The private hands of a game and what a board does to them (blocking, strength).

Hold'em has 1326 two-card hands (in the order of :func:`native.cards.holdem_hand_cards`),
Leduc has one card per hand, six hands. Every range, counterfactual value vector and
solver tensor is indexed by a :class:`HandSpace`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations

import numpy as np

from native.cards import cards_to_str, holdem_hand_cards
from native.evaluator import evaluate
from protocol.gamedef import DeckConvention, Game


@dataclass(frozen=True, eq=False)
class HandSpace:
    """All private hands of ``game`` dealt from its deck (one convention for reduced decks)."""

    game: Game
    convention: DeckConvention = "high"

    @cached_property
    def deck(self) -> tuple[int, ...]:
        """The game's cards under ``convention`` (one of a reduced deck's namings): hands and boards of
        this space come from these."""
        return self.game.deck(self.convention)

    @cached_property
    def cards(self) -> np.ndarray:
        """``(H, k)`` uint8 array of each hand's cards, ascending within a hand."""
        k = self.game.num_hole_cards
        if self.game.deck_size == 52 and k == 2:
            return holdem_hand_cards()
        hands = np.array(list(combinations(self.deck, k)), dtype=np.uint8).reshape(-1, k)
        hands.setflags(write=False)
        return hands

    @property
    def size(self) -> int:
        """H, the number of hands: the length of every range and value vector over this space."""
        return int(self.cards.shape[0])

    @cached_property
    def _index(self) -> dict[tuple[int, ...], int]:
        return {tuple(int(c) for c in row): i for i, row in enumerate(self.cards)}

    def index(self, hand: Sequence[int]) -> int:
        """Index of the hand made of ``hand``'s cards (in any order)."""
        key = tuple(sorted(int(c) for c in hand))
        try:
            return self._index[key]
        except KeyError:
            raise ValueError(f"{cards_to_str(key)} is not a hand of this game's deck") from None

    def label(self, i: int) -> str:
        """Hand ``i``'s cards as text, for logs and reports."""
        return cards_to_str(int(c) for c in self.cards[i])

    @cached_property
    def card_incidence(self) -> np.ndarray:
        """``(H, 52)`` bool: hand ``h`` holds card ``c``."""
        inc = np.zeros((self.size, 52), dtype=bool)
        rows = np.repeat(np.arange(self.size), self.cards.shape[1])
        inc[rows, self.cards.reshape(-1)] = True
        inc.setflags(write=False)
        return inc

    def blocked(self, board: Sequence[int]) -> np.ndarray:
        """Bool mask: hands sharing a card with ``board`` (impossible given that board)."""
        if len(board) == 0:
            return np.zeros(self.size, dtype=bool)
        return self.card_incidence[:, list(board)].any(axis=1)

    def valid(self, board: Sequence[int]) -> np.ndarray:
        """Bool mask of the hands possible with ``board`` (sharing no card with it): multiply a range by it."""
        return ~self.blocked(board)

    def uniform(self, board: Sequence[int] = ()) -> np.ndarray:
        """The uniform range over hands possible with ``board`` (sums to 1)."""
        r = self.valid(board).astype(np.float64)
        return r / r.sum()

    def strengths(self, board: Sequence[int]) -> np.ndarray:
        """Hand values (higher wins) of every hand with the full ``board``; -1 where blocked."""

        board_arr = np.asarray(board, dtype=np.uint8)
        rows = np.concatenate([self.cards, np.broadcast_to(board_arr, (self.size, len(board_arr)))], axis=1)
        valid = self.valid(board)
        values = np.full(self.size, -1, dtype=np.int64)
        values[valid] = evaluate(rows[valid]).astype(np.int64)
        return values

    def compatible(self) -> np.ndarray:
        """``(H, H)`` bool: the two hands share no card (both can be dealt together)."""
        inc = self.card_incidence.astype(np.int32)
        return (inc @ inc.T) == 0
