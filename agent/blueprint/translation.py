"""Action translation between the real game and the blueprint's betting tree.

An opponent's bet the tree does not hold is mapped to one of the two tree sizes around it by the
randomized pseudo-harmonic mapping (Ganzfried & Sandholm 2013); sizes are pot fractions, so a bet
x between tree sizes A < x < B goes to A with probability (B - x)(1 + A) / ((B - A)(1 + x)).
Bets below the smallest tree bet go to it, above the largest to the largest (a raise is never
mapped to a call: the tree's turn order would then differ from the game's). Our own tree bets are
played as the same pot fraction of the real pot, clamped to the legal raise-to amounts."""

from __future__ import annotations

import numpy as np

from protocol.state import CALL, Action, ActionKind, HandState, raise_to


def pot_fraction(state: HandState, raise_to: int) -> float:
    """A raise to ``raise_to`` at ``state`` as a fraction of the pot after calling."""
    p = state.current_player
    assert p is not None
    to_call = min(state.max_spent, state.game.stack[p]) - state.spent[p]
    return (raise_to - state.max_spent) / max(state.pot + to_call, 1)


def pseudo_harmonic(x: float, a: float, b: float) -> float:
    """The probability of mapping bet ``x`` to the smaller size ``a`` (``a <= x <= b``)."""
    if b <= a:
        return 1.0
    return float(np.clip((b - x) * (1 + a) / ((b - a) * (1 + x)), 0.0, 1.0))


def translate_bet(x: float, sizes: list[float], rng: np.random.Generator) -> int:
    """The index in ``sizes`` (ascending pot fractions) that bet ``x`` is mapped to."""
    if x <= sizes[0]:
        return 0
    if x >= sizes[-1]:
        return len(sizes) - 1
    hi = int(np.searchsorted(sizes, x))
    lo = hi - 1
    return lo if rng.random() < pseudo_harmonic(x, sizes[lo], sizes[hi]) else hi


def real_action(tree_state: HandState, tree_action: Action, state: HandState) -> Action:
    """The legal action at the real ``state`` that plays ``tree_action`` of ``tree_state``: fold
    (a check where folding is not legal), call, or a raise of the same pot fraction (all-in for
    the tree's all-in), clamped to the legal amounts; a call where no raise is legal."""
    if tree_action.kind is ActionKind.FOLD:
        return tree_action if state.can_fold() else CALL
    if tree_action.kind is ActionKind.CALL:
        return tree_action
    bounds = state.raise_bounds()
    if bounds is None:
        return CALL
    if state.game.is_limit:
        return tree_action
    tree_bounds = tree_state.raise_bounds()
    low, high = bounds
    if tree_bounds is not None and tree_action.size >= tree_bounds[1]:
        return raise_to(high)
    f = pot_fraction(tree_state, tree_action.size)
    p = state.current_player
    assert p is not None
    to_call = min(state.max_spent, state.game.stack[p]) - state.spent[p]
    target = state.max_spent + int(round(f * (state.pot + to_call)))
    return raise_to(min(max(target, low), high))
