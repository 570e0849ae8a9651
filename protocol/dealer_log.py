"""Reading the dealer's log: one ``STATE`` line per hand, as :class:`protocol.dealer.Dealer` writes it
(:func:`protocol.matchstate.format_state_line`, then the payoffs and the players' names in that
hand's seat order) and as the ACPC dealer does.

``STATE:<hand>:<betting>:<hole|hole/board...>:<payoff|payoff>:<name|name>``

A log begins with the header ``# name/game/hands/seed NAME GAME HANDS SEED``; a folder's logs
are found by it (a seat's own ``.log`` has none), and a folder whose logs are of several games
is refused by the tools that read them as one sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from native.cards import cards_from_str

#: the first line of a dealer log starts with this, then the match name, game, hands and seed
HEADER = "# name/game/hands/seed"


@dataclass(frozen=True)
class LogHeader:
    """The first line of a dealer log."""

    match_name: str
    game: str
    hands: str
    seed: str


def read_header(path: Path) -> LogHeader | None:
    """The header of the dealer log at ``path``; None when the file is not a dealer log."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            first = f.readline()
    except (OSError, UnicodeError):
        return None
    if not first.startswith(HEADER):
        return None
    fields = first[len(HEADER) :].split() + ["", "", "", ""]
    return LogHeader(*fields[:4])


def dealer_logs(folder: Path) -> list[tuple[Path, LogHeader]]:
    """The dealer logs in ``folder`` (``*.log`` files with the dealer's header), by name."""
    found = []
    for path in sorted(folder.glob("*.log")):
        header = read_header(path)
        if header is not None:
            found.append((path, header))
    return found


def describe_games(logs: list[tuple[Path, LogHeader]]) -> str:
    """``leduc: a.log, b.log; hunl: c.log`` (each game's logs, in the order found)."""
    by_game: dict[str, list[str]] = {}
    for path, header in logs:
        by_game.setdefault(header.game or "(no game named)", []).append(path.name)
    return "; ".join(f"{game}: {', '.join(names)}" for game, names in by_game.items())


def one_game(folder: Path, logs: list[tuple[Path, LogHeader]]) -> str:
    """The game of all the dealer logs of ``folder``; ValueError naming the folder and the games
    found when they are of several games (pooling them would average different games)."""
    games = {header.game for _, header in logs}
    if games == {""}:
        raise ValueError(f"{folder}: the header of {logs[0][0].name} names no game ({HEADER} NAME GAME HANDS SEED)")
    if len(games) > 1:
        raise ValueError(
            f"{folder}: its dealer logs are of {len(games)} games ({describe_games(logs)}); give a folder holding one game's logs"
        )
    return games.pop() if games else ""


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
        # float() reads nan and inf: a damaged log drew a plot of them without a word
        if not all(math.isfinite(p) for p in payoffs):
            raise ValueError("a payoff is not a finite number")
        if abs(sum(payoffs)) > 1e-6 * max(1.0, *map(abs, payoffs)):
            raise ValueError("the payoffs do not sum to 0")
        return LoggedHand(int(fields[1]), fields[2], holes, board, payoffs, tuple(fields[5].split("|")))
    except ValueError as exc:
        raise ValueError(f"{where}: not a dealer STATE line ({exc}): {line[:80]!r}") from None


def read_hands(path: Path) -> list[LoggedHand]:
    """Every hand of a dealer log, one :class:`LoggedHand` per ``STATE`` line in order; a log with none is a ValueError."""
    hands = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        if line.startswith("STATE:"):
            hands.append(parse_state_line(line, f"{path}:{number}"))
    if not hands:
        raise ValueError(f"{path}: no STATE lines (not a dealer log?)")
    return hands


def read_dealer_log(path: Path) -> tuple[str, tuple[str, ...], list[int], np.ndarray]:
    """``(game, players, hand ids, values [hands, players])`` of an ACPC dealer log.

    The dealer lists the values and names of each hand in that hand's seat order, which
    alternates between hands; here every column is one player (named in ``players``, the order
    of the first hand) on every row."""
    header = read_header(path)
    game = header.game if header is not None else ""
    players: tuple[str, ...] = ()
    hands: list[int] = []
    values: list[list[float]] = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        if not line.startswith("STATE:"):
            continue
        logged = parse_state_line(line, f"{path}:{number}")
        hand, by_seat, names = logged.hand_id, logged.payoffs, logged.names
        if len(names) != len(by_seat) or len(set(names)) != len(names):
            raise ValueError(f"{path}:{number}: not a dealer STATE line: {line[:80]!r}")
        players = players or names
        if set(names) != set(players):
            raise ValueError(f"{path}:{number}: players {', '.join(names)} (the log began with {', '.join(players)})")
        hands.append(hand)
        values.append([by_seat[names.index(p)] for p in players])
    if not values and not game:
        raise ValueError(f"{path}: no STATE lines (not a dealer log?)")
    return game, players, hands, np.array(values)  # a dealer's header and no hands: a match that never began


def dealer_limit_ms(logs: list[Path], default: float = 7000.0) -> float:
    """The ``--t_per_hand`` the dealer recorded in the first log's header (``#--t_per_hand N``)."""
    for path in logs[:1]:
        for line in path.read_text(errors="replace").splitlines()[:10]:
            if line.startswith("#--t_per_hand "):
                try:
                    return float(line.split()[1])
                except (IndexError, ValueError):
                    break
    return default
