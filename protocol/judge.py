"""How the dealer reads a reply line of the seat it waits for, as the ACPC dealer does.

Pure (a line and the state sent in, a verdict out), so every odd reply is tested line by line
without a socket: comments, replies echoing another state, unreadable states, actions to correct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from protocol.client import LineTooLong
from protocol.gamedef import Game
from protocol.matchstate import MatchState, MatchStateError, parse_matchstate
from protocol.state import HandState


@dataclass(frozen=True)
class Response:
    """What the dealer makes of one line from the seat it waits for."""

    #: ``comment`` (skipped), ``ignored`` (skipped with ``warning`` printed) or ``action`` (the reply)
    kind: Literal["comment", "ignored", "action"]
    #: the text after the echoed state; None when the reply has none (a format error to correct)
    action_text: str | None = None
    warning: str = ""


def judge_response(line: str | LineTooLong, state: HandState, actor: int) -> Response:
    """Read a line of the acting seat as the ACPC dealer does: comments skipped, a reply whose state
    is unreadable or not the one sent is ignored with a warning, else its action text is the reply
    (corrected by :func:`protocol.actions.correct_action`). Pure, so it is tested line by line.

    Like ``readMatchState``, the echoed state is the longest readable start of the line: cards
    end where a character is not one, and a reply whose state is not followed by ``:`` has no
    action (a format error the dealer turns into a call), rather than an unreadable state."""
    if isinstance(line, LineTooLong):
        return Response("ignored", warning=f"ignoring response: {line}")
    if line[:1] in ("#", ";"):
        return Response("comment")
    fields = line.split(":")
    try:  # the usual reply: STATE:ACTION
        echoed = parse_matchstate(":".join(fields[:5]), state.game)
        rest: str | None = ":".join(fields[5:]) if len(fields) >= 6 else None
    except MatchStateError:
        echoed, rest = _read_state_prefix(fields, state.game)
        if echoed is None:
            return Response("ignored", warning="bad state format in response")
    if not _same_view(echoed.state, state, actor, echoed.position):
        return Response("ignored", warning="ignoring un-requested response")
    return Response("action", rest)


def _read_state_prefix(fields: list[str], game: Game) -> tuple[MatchState | None, str | None]:
    """The echoed state read from the longest start of the cards field that is one, and the
    action after it (None unless a ``:`` follows the cards)."""
    if len(fields) < 5:
        return None, None
    head = ":".join(fields[:4])
    cards = ":".join(fields[4:])
    longest = game.num_players * (2 * game.num_hole_cards + 1) + game.num_rounds + 2 * game.total_board_cards
    for end in range(min(len(cards), longest), -1, -1):
        try:
            echoed = parse_matchstate(f"{head}:{cards[:end]}", game)
        except MatchStateError:
            continue
        return echoed, cards[end + 1 :] if cards[end : end + 1] == ":" else None
    return None, None


def _same_view(echoed: HandState, state: HandState, actor: int, position: int) -> bool:
    """ACPC ``matchStatesEqual``: position, hand, betting, board and the viewer's own cards."""
    return (
        position == actor
        and echoed.hand_id == state.hand_id
        and echoed.betting_string() == state.betting_string()
        and echoed.board == state.board
        and echoed.hole_cards[actor] == state.hole_cards[actor]
    )
