"""Baseline opponents: always call, always raise the pot, and uniformly random.

They exist to test the protocol end to end and as the yardstick every real bot must
beat with confidence. Raise sizes are always legal raise-to amounts.
"""

from __future__ import annotations

import random

from protocol.bot import BaseBot
from protocol.matchstate import MatchState
from protocol.state import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, HandState, raise_to


def pot_raise_to(state: HandState, fraction: float = 1.0) -> int:
    """Raise-to amount of a bet of ``fraction`` x the pot after calling, clamped to the legal range."""
    bounds = state.raise_bounds()
    if bounds is None:
        raise ValueError("no raise is legal here")
    p = state.current_player
    assert p is not None
    to_call = min(state.max_spent, state.game.stack[p]) - state.spent[p]
    target = state.max_spent + int(round(fraction * (state.pot + to_call)))
    return min(max(target, bounds[0]), bounds[1])


def _raise(state: HandState, amount: int) -> Action:
    return raise_to(amount) if state.game.is_nolimit else LIMIT_RAISE


class CallBot(BaseBot):
    """Checks or calls every time."""

    name = "call"

    def act(self, view: MatchState) -> Action:
        return CALL


class RaiseBot(BaseBot):
    """Raises the size of the pot whenever it may (all-in when that is all that is legal), else calls."""

    name = "raise"

    def act(self, view: MatchState) -> Action:
        state = view.state
        if state.raise_bounds() is None:
            return CALL
        return _raise(state, pot_raise_to(state))


def random_actions(state: HandState) -> list[Action]:
    """What the ``random`` baseline chooses from, each with the same probability: fold (only when
    facing a bet), call, and several legal raise sizes (min, ½ pot, pot, 2 pot, all-in)."""
    actions: list[Action] = []
    for kind in state.legal_kinds():
        if kind is ActionKind.FOLD:
            actions.append(FOLD)
        elif kind is ActionKind.CALL:
            actions.append(CALL)
        elif state.game.is_limit:
            actions.append(LIMIT_RAISE)
        else:
            low, high = state.raise_bounds() or (0, 0)
            sizes = sorted({low, high, *(pot_raise_to(state, f) for f in RandomBot.FRACTIONS)})
            actions.extend(raise_to(s) for s in sizes)
    return actions


class RandomBot(BaseBot):
    """Uniform over fold (only when facing a bet), call and several legal raise sizes."""

    name = "random"
    FRACTIONS = (0.5, 1.0, 2.0)

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, view: MatchState) -> Action:
        return self.rng.choice(random_actions(view.state))
