"""How the ACPC dealer reads a client's action and corrects a bad one.

The dealer never aborts for a bad action: it reads the action text like ``readAction``
(first letter ``f``/``c``/``k``/``r``/``b`` in either case, a no-limit raise needs an
integer size) and then fixes what it can (``isValidAction`` with fixing on). Our dealer
uses :func:`correct_action` so that it behaves the same, and it logs each warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from protocol.state import CALL, MAX_ACTIONS_PER_ROUND, Action, ActionKind, HandState

_KINDS = {
    "f": ActionKind.FOLD,
    "c": ActionKind.CALL,
    "k": ActionKind.CALL,
    "r": ActionKind.RAISE,
    "b": ActionKind.RAISE,
}
_SIZE_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?)0*([0-9]+)")
#: A raise size with more digits reads as 10**18 (clamped to the legal range like any other):
#: converting thousands of digits to an int is refused by Python and pointless here.
MAX_SIZE_DIGITS = 18

WARN_FORMAT = "bad action format in response, changed to call"
WARN_INVALID = "invalid action, changed to call"
WARN_CAP = "#actions in round is too close to MAX_NUM_ACTIONS, forcing call/fold"


@dataclass(frozen=True)
class Correction:
    """The action the dealer applies, and the warnings it printed on the way (empty if none)."""

    action: Action
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def corrected(self) -> bool:
        """True when the dealer changed the action text (it counts in the seat's ``corrections``)."""
        return bool(self.warnings)


def correct_action(state: HandState, text: str | None) -> Correction:
    """Turn the action text of a response into the action the ACPC dealer would apply.

    ``text`` is None when the response has no ``:action`` part at all.
    """
    game = state.game
    if text is None:
        return Correction(CALL, (WARN_FORMAT,))
    kind = _KINDS.get(text[:1].lower()) if text else None
    if kind is None:
        return Correction(CALL, (WARN_INVALID,))
    size = 0
    if kind is ActionKind.RAISE and game.is_nolimit:
        m = _SIZE_RE.match(text, 1)
        if m is None:
            return Correction(CALL, (WARN_FORMAT,))
        digits = m.group(2)
        size = int(digits) if len(digits) <= MAX_SIZE_DIGITS else 10**MAX_SIZE_DIGITS
        size = -size if m.group(1) == "-" else size
    if kind is ActionKind.FOLD:
        if state.can_fold():
            return Correction(Action(ActionKind.FOLD))
        return Correction(CALL, (WARN_INVALID,))
    if kind is ActionKind.CALL:
        return Correction(CALL)
    warnings: list[str] = []
    if state.num_raises() < game.max_raises[state.round] and len(state.round_actions) + game.num_players > MAX_ACTIONS_PER_ROUND:
        warnings.append(WARN_CAP)
    bounds = state.raise_bounds()
    if bounds is None:
        return Correction(CALL, tuple(warnings) + (WARN_INVALID,))
    if game.is_limit:
        return Correction(Action(ActionKind.RAISE))
    low, high = bounds
    if size < low:
        return Correction(Action(ActionKind.RAISE, low), (f"raise of {size} increased to {low}",))
    if size > high:
        return Correction(Action(ActionKind.RAISE, high), (f"raise of {size} decreased to {high}",))
    return Correction(Action(ActionKind.RAISE, size))
