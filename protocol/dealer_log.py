"""Reading the dealer's log: one ``STATE`` line per hand, as :class:`protocol.dealer.Dealer` writes it
(:func:`protocol.matchstate.format_state_line`, then the payoffs and the players' names in that
hand's seat order) and as the ACPC dealer does.

``STATE:<hand>:<betting>:<hole|hole/board...>:<payoff|payoff>:<name|name>``
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from native.cards import cards_from_str


@dataclass(frozen=True)
class LoggedHand:
    """One ``STATE`` line of a dealer log."""

    hand_id: int
    betting: str
    holes: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]
    payoffs: tuple[float, ...]
    names: tuple[str, ...]


def parse_state_line(line: str, where: str) -> LoggedHand:
    """``STATE:<hand>:<betting>:<hole|hole/board...>:<payoff|payoff>:<name|name>``."""
    fields = line.rstrip("\r\n").split(":")
    if len(fields) != 6 or fields[0] != "STATE":
        raise ValueError(f"{where}: not a dealer STATE line: {line[:80]!r}")
    try:
        groups = fields[3].split("/")
        holes = tuple(cards_from_str(h) for h in groups[0].split("|"))
        board = tuple(c for g in groups[1:] for c in cards_from_str(g))
        payoffs = tuple(float(x) for x in fields[4].split("|"))
        return LoggedHand(int(fields[1]), fields[2], holes, board, payoffs, tuple(fields[5].split("|")))
    except ValueError as exc:
        raise ValueError(f"{where}: not a dealer STATE line ({exc}): {line[:80]!r}") from None


def read_hands(path: Path) -> list[LoggedHand]:
    hands = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        if line.startswith("STATE:"):
            hands.append(parse_state_line(line, f"{path}:{number}"))
    if not hands:
        raise ValueError(f"{path}: no STATE lines (not a dealer log?)")
    return hands
