"""``MATCHSTATE`` lines <-> states of the rules engine.

A line is ``MATCHSTATE:<position>:<hand>:<betting>:<cards>``. Parsing replays the betting
through :class:`protocol.state.HandState`, so an impossible line (an illegal raise, a
round separator in the wrong place, the wrong number of board cards) is refused with a
:class:`MatchStateError` that carries the raw line; a parsed line formats back to the
identical text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from native.cards import CardError, card_from_str, cards_to_str
from protocol.gamedef import Game
from protocol.state import (
    CALL,
    FOLD,
    LIMIT_RAISE,
    Action,
    HandState,
    IllegalActionError,
    raise_to,
)

PREFIX = "MATCHSTATE"
#: The most digits a number of a line may have (position, hand number, raise size): more than
#: any stack or hand count needs, and far below Python's limit on converting digits to an int.
MAX_DIGITS = 18
_NUMBER_RE = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")


class MatchStateError(ValueError):
    """A ``MATCHSTATE`` line that cannot be understood; ``line`` is the raw text."""

    def __init__(self, line: str, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"bad MATCHSTATE line {line!r}: {reason}")


@dataclass(frozen=True, slots=True)
class MatchState:
    """What one player sees: its position this hand and the hand's state.

    ``state.hole_cards`` holds the viewer's cards, and the opponent's only after a
    showdown; ``state.board`` the board cards shown so far.
    """

    position: int
    state: HandState

    @property
    def hand_id(self) -> int:
        """The hand's number in the match (``state.hand_id``; 0-based, as on the wire)."""
        return self.state.hand_id

    @property
    def game(self) -> Game:
        """The match's game (``state.game``)."""
        return self.state.game

    @property
    def is_our_turn(self) -> bool:
        """True when the viewer is the player to act (the dealer waits for a reply)."""
        return self.state.current_player == self.position

    @property
    def our_cards(self) -> tuple[int, ...]:
        """The viewer's hole cards."""
        return self.state.hole_cards[self.position]

    def to_line(self) -> str:
        """The ``MATCHSTATE`` line for this view, as the dealer sends it (without the line end)."""
        return format_matchstate(self.state, self.position)

    def reply(self, action: Action) -> str:
        """The response line for ``action`` (without the line end)."""
        return f"{self.to_line()}:{action}"


_ACTION_RE = re.compile(r"([fc])|(r)([0-9]*)")


def _parse_betting(line: str, text: str, game: Game, hand_id: int) -> HandState:
    """Replay the betting ``text`` through the rules; '/' must fall where rounds end."""
    state = HandState.initial(game, hand_id)
    segments = text.split("/")
    for seg_index, segment in enumerate(segments):
        pos = 0
        while pos < len(segment):
            m = _ACTION_RE.match(segment, pos)
            if m is None:
                raise MatchStateError(line, f"unknown action character {segment[pos]!r} in betting {text!r}")
            pos = m.end()
            if m.group(1) == "f":
                action = FOLD
            elif m.group(1) == "c":
                action = CALL
            elif game.is_nolimit:
                if not m.group(3):
                    raise MatchStateError(line, f"no-limit raise without a size in betting {text!r}")
                if len(m.group(3)) > MAX_DIGITS:
                    raise MatchStateError(line, f"raise size {m.group(3)[:24]}... has more than {MAX_DIGITS} digits")
                action = raise_to(int(m.group(3)))
            else:
                if m.group(3):
                    raise MatchStateError(line, f"limit raise with a size in betting {text!r}")
                action = LIMIT_RAISE
            if state.finished:
                raise MatchStateError(line, f"action {action} after the hand is over")
            if state.round != seg_index:
                raise MatchStateError(
                    line,
                    f"action {action} written in betting round {seg_index + 1}, but the rules are in round {state.round + 1}",
                )
            try:
                state = state.apply(action)
            except IllegalActionError as exc:
                raise MatchStateError(line, f"illegal action {action}: {exc}") from None
    if len(segments) - 1 != state.round:
        raise MatchStateError(line, f"betting shows {len(segments)} rounds, but the rules are in round {state.round + 1}")
    return state


def _parse_cards(line: str, text: str) -> tuple[int, ...]:
    if len(text) % 2:
        raise MatchStateError(line, f"card text {text!r} has an odd length")
    try:
        return tuple(card_from_str(text[i : i + 2]) for i in range(0, len(text), 2))
    except CardError as exc:
        raise MatchStateError(line, str(exc)) from None


def parse_matchstate(line: str, game: Game) -> MatchState:
    """Parse one ``MATCHSTATE`` line (trailing ``\\r\\n`` allowed) for ``game``."""
    raw = line
    text = line.rstrip("\r\n")
    fields = text.split(":")
    if len(fields) != 5 or fields[0] != PREFIX:
        raise MatchStateError(raw, "expected MATCHSTATE:<position>:<hand>:<betting>:<cards>")
    _, pos_text, hand_text, betting_text, cards_text = fields
    # ASCII digits only: str.isdigit() also passes '²', which int() refuses
    if not _NUMBER_RE.fullmatch(pos_text) or int(pos_text) >= game.num_players:
        raise MatchStateError(raw, f"position {pos_text[:24]!r} is not 0..{game.num_players - 1}")
    if not _NUMBER_RE.fullmatch(hand_text):
        raise MatchStateError(raw, f"hand number {hand_text[:24]!r} is not a non-negative integer of at most {MAX_DIGITS} digits")
    position, hand_id = int(pos_text), int(hand_text)
    state = _parse_betting(raw, betting_text, game, hand_id)

    parts = cards_text.split("/")
    holes_text, board_parts = parts[0], parts[1:]
    if len(board_parts) != state.round:
        raise MatchStateError(raw, f"{len(board_parts)} board sections for round {state.round + 1}")
    hole_sections = holes_text.split("|")
    if len(hole_sections) != game.num_players:
        raise MatchStateError(raw, f"{len(hole_sections)} hole-card sections for {game.num_players} players")
    # Round-0 board cards (none in the shipped games) follow the last hole section directly.
    board0 = 2 * game.num_board_cards[0]
    if board0:
        last = hole_sections[-1]
        hole_sections[-1], first_board = last[: len(last) - board0], last[len(last) - board0 :]
        board_parts = [first_board] + board_parts
    holes: list[tuple[int, ...]] = []
    for p, section in enumerate(hole_sections):
        cards = _parse_cards(raw, section)
        if cards and len(cards) != game.num_hole_cards:
            raise MatchStateError(raw, f"position {p} shows {len(cards)} hole cards, the game deals {game.num_hole_cards}")
        holes.append(cards)
    if not holes[position]:
        raise MatchStateError(raw, f"the viewer's own hole cards (position {position}) are missing")
    board: list[int] = []
    rounds_with_board = range(0 if board0 else 1, state.round + 1)
    for r, section in zip(rounds_with_board, board_parts):
        cards = _parse_cards(raw, section)
        if len(cards) != game.num_board_cards[r]:
            raise MatchStateError(raw, f"round {r + 1} shows {len(cards)} board cards, the game deals {game.num_board_cards[r]}")
        board.extend(cards)
    all_cards = [c for h in holes for c in h] + board
    if len(set(all_cards)) != len(all_cards):
        raise MatchStateError(raw, "the same card appears twice")
    if not game.conventions_containing(all_cards):
        raise MatchStateError(raw, f"cards {cards_to_str(all_cards)} are not all in this game's deck")
    shown = [p for p in range(game.num_players) if p != position and holes[p]]
    if shown and not state.is_showdown:
        raise MatchStateError(raw, "opponent hole cards shown before a showdown")
    state = HandState(
        game=game,
        hand_id=hand_id,
        round=state.round,
        actions=state.actions,
        actors=state.actors,
        spent=state.spent,
        max_spent=state.max_spent,
        min_raise_to=state.min_raise_to,
        folded=state.folded,
        finished=state.finished,
        hole_cards=tuple(holes),
        board=tuple(board),
    )
    return MatchState(position=position, state=state)


def visible_hole_cards(state: HandState, viewer: int) -> tuple[tuple[int, ...], ...]:
    """Hole cards as ``viewer`` may see them: its own, others' only at a showdown they reached."""
    out = []
    for p, cards in enumerate(state.hole_cards):
        show = p == viewer or (state.is_showdown and not state.folded[p])
        out.append(cards if show else ())
    return tuple(out)


def _cards_text(state: HandState, holes: tuple[tuple[int, ...], ...]) -> str:
    """``hole|hole`` then the board of each round so far, rounds after the first behind '/'."""
    game = state.game
    text = "|".join(cards_to_str(h) for h in holes)
    pos = 0
    for r in range(state.round + 1):
        n = game.num_board_cards[r]
        if r:
            text += "/"
        text += cards_to_str(state.board[pos : pos + n])
        pos += n
    return text


def format_matchstate(state: HandState, viewer: int) -> str:
    """The ``MATCHSTATE`` line the dealer sends to ``viewer`` (no line end)."""
    cards = _cards_text(state, visible_hole_cards(state, viewer))
    return f"{PREFIX}:{viewer}:{state.hand_id}:{state.betting_string()}:{cards}"


def format_state_line(state: HandState) -> str:
    """The ``STATE:<hand>:<betting>:<all hole cards>/<board>`` part of a dealer log line."""
    return f"STATE:{state.hand_id}:{state.betting_string()}:{_cards_text(state, state.hole_cards)}"


__all__ = [
    "MatchState",
    "MatchStateError",
    "parse_matchstate",
    "format_matchstate",
    "format_state_line",
    "visible_hole_cards",
]
