"""ACPC game definitions (``.game`` files) as immutable :class:`Game` values.

The real dealer skips any line it does not recognise, so a typo such as an indented
``stack`` line silently turns a no-limit game into one with infinite stacks. This parser
refuses such files instead: unknown keys, indented key lines, duplicate keys, wrong value
counts and missing required keys are errors naming the file, the line and the problem; so are
numbers the dealer's 32-bit integers cannot hold and a game where every player is all-in from
the blinds (no one could act). A comment may follow a key's values, as the dealer reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Literal

from native.cards import make_card

#: Stack used by the ACPC dealer when a game file gives none (INT32_MAX).
UNLIMITED_STACK = 2**31 - 1
INT32_MIN = -(2**31)
_INTEGER = re.compile(r"[+-]?[0-9]+")
#: ``maxRaises`` used by the ACPC dealer when a game file gives none (UINT8_MAX).
UNLIMITED_RAISES = 255
MAX_PLAYERS = 10
MAX_ROUNDS = 4
MAX_HOLE_CARDS = 3
MAX_BOARD_CARDS = 7
#: hole + board cards of one hand: the most our evaluator ranks (the ACPC dealer ranks more)
MAX_HAND_CARDS = 7

GAMES_DIR = Path(__file__).resolve().parent / "games"

#: Short names of the shipped games.
SHORT_NAMES: dict[str, str] = {
    "hunl": "holdem.nolimit.2p.reverse_blinds.game",
    "hul": "holdem.limit.2p.reverse_blinds.game",
    "leduc": "leduc.nolimit.2p.game",
    "leduc-limit": "leduc.limit.2p.game",
}


class GameDefError(ValueError):
    """A game definition that cannot be used; the message names file, line and problem."""

    def __init__(self, source: str, problem: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")


class Betting(str, Enum):  # noqa: UP042 (StrEnum would change str() of a member)
    """A game's betting rule (the gamedef's ``limit`` or ``nolimit`` line); a str, so it compares to the text."""

    LIMIT = "limit"
    NOLIMIT = "nolimit"


DeckConvention = Literal["high", "low"]


@dataclass(frozen=True)
class Game:
    """One ACPC game. Per-position tuples are in position order, per-round tuples in round order.

    ``first_player`` is 0-based (the file is 1-based).
    """

    betting: Betting
    num_players: int
    num_rounds: int
    stack: tuple[int, ...]
    blind: tuple[int, ...]
    raise_size: tuple[int, ...]
    first_player: tuple[int, ...]
    max_raises: tuple[int, ...]
    num_suits: int
    num_ranks: int
    num_hole_cards: int
    num_board_cards: tuple[int, ...]
    name: str = "game"

    @property
    def is_limit(self) -> bool:
        """Fixed-size raises (``raise_size`` per round); a raise on the wire carries no size."""
        return self.betting is Betting.LIMIT

    @property
    def is_nolimit(self) -> bool:
        """Raises of any legal size up to the stack; a raise on the wire carries its raise-to amount."""
        return self.betting is Betting.NOLIMIT

    @property
    def big_blind(self) -> int:
        """The largest blind, in chips: the unit of mbb/g."""
        return max(self.blind)

    @property
    def deck_size(self) -> int:
        """Cards in the deck (suits times ranks)."""
        return self.num_suits * self.num_ranks

    @property
    def total_board_cards(self) -> int:
        """Board cards shown by the last street."""
        return sum(self.num_board_cards)

    def board_cards_through(self, round_: int) -> int:
        """Number of board cards visible in round ``round_`` (ACPC ``sumBoardCards``)."""
        return sum(self.num_board_cards[: round_ + 1])

    def deck(self, convention: DeckConvention = "high") -> tuple[int, ...]:
        """The cards of this game's deck.

        Reduced decks differ between dealer copies: the widely used copy deals the top
        ranks and last suits (``"high"``, Leduc = Q/K/A x h/s), the original code the
        lowest ranks and first suits (``"low"``, Leduc = 2/3/4 x c/d). For a full deck both
        are the 52 cards.
        """
        if convention == "high":
            ranks = range(13 - self.num_ranks, 13)
            suits = range(4 - self.num_suits, 4)
        elif convention == "low":
            ranks = range(self.num_ranks)
            suits = range(self.num_suits)
        else:
            raise ValueError(f"deck convention must be 'high' or 'low', not {convention!r}")
        return tuple(sorted(make_card(r, s) for r in ranks for s in suits))

    def conventions_containing(self, cards: Iterable[int]) -> list[DeckConvention]:
        """Deck conventions under which every card of ``cards`` can be dealt."""
        wanted = set(cards)
        conventions: tuple[DeckConvention, ...] = ("high", "low")
        return [c for c in conventions if wanted <= set(self.deck(c))]

    def to_text(self) -> str:
        """The definition in ACPC file syntax (parses back to an equal game)."""
        lines = ["GAMEDEF", self.betting.value]
        lines.append(f"numPlayers = {self.num_players}")
        lines.append(f"numRounds = {self.num_rounds}")
        if any(s != UNLIMITED_STACK for s in self.stack):
            lines.append("stack = " + " ".join(map(str, self.stack)))
        lines.append("blind = " + " ".join(map(str, self.blind)))
        if self.is_limit:
            lines.append("raiseSize = " + " ".join(map(str, self.raise_size)))
        lines.append("firstPlayer = " + " ".join(str(p + 1) for p in self.first_player))
        if any(m != UNLIMITED_RAISES for m in self.max_raises):
            lines.append("maxRaises = " + " ".join(map(str, self.max_raises)))
        lines.append(f"numSuits = {self.num_suits}")
        lines.append(f"numRanks = {self.num_ranks}")
        lines.append(f"numHoleCards = {self.num_hole_cards}")
        lines.append("numBoardCards = " + " ".join(map(str, self.num_board_cards)))
        lines.append("END GAMEDEF")
        return "\n".join(lines) + "\n"


# key (lower case) -> (canonical spelling, how many values: "players" | "rounds" | 1)
_VALUE_KEYS: dict[str, tuple[str, str | int]] = {
    "numplayers": ("numPlayers", 1),
    "numrounds": ("numRounds", 1),
    "stack": ("stack", "players"),
    "blind": ("blind", "players"),
    "raisesize": ("raiseSize", "rounds"),
    "firstplayer": ("firstPlayer", "rounds"),
    "maxraises": ("maxRaises", "rounds"),
    "numsuits": ("numSuits", 1),
    "numranks": ("numRanks", 1),
    "numholecards": ("numHoleCards", 1),
    "numboardcards": ("numBoardCards", "rounds"),
}
_REQUIRED = ("numPlayers", "numRounds", "blind", "numSuits", "numRanks", "numHoleCards", "numBoardCards")


def parse_game(text: str, source: str = "<game>", name: str | None = None) -> Game:
    """Parse the text of an ACPC game definition; ``source`` names it in error messages."""
    values, betting = _read_definition(text, source)
    field = _Fields(values, source)
    num_players = field.single("numPlayers", 2, MAX_PLAYERS)
    num_rounds = field.single("numRounds", 1, MAX_ROUNDS)
    num_suits = field.single("numSuits", 1, 4)
    num_ranks = field.single("numRanks", 1, 13)
    num_hole = field.single("numHoleCards", 1, MAX_HOLE_CARDS)
    stack = field.vector("stack", num_players, "player", UNLIMITED_STACK)
    blind = field.vector("blind", num_players, "player")
    board = field.vector("numBoardCards", num_rounds, "round")
    first = field.vector("firstPlayer", num_rounds, "round", 1)
    max_raises = field.vector("maxRaises", num_rounds, "round", UNLIMITED_RAISES)
    raise_size = field.vector("raiseSize", num_rounds, "round") if "raiseSize" in values else ()
    if betting is Betting.NOLIMIT and "raiseSize" in values:
        raise GameDefError(source, "raiseSize is only meaningful in limit games", values["raiseSize"][0])
    _check_players(field, stack, blind)
    _check_rounds(field, num_players, first, raise_size, max_raises)
    _check_cards(field, num_players, num_hole, board, num_suits * num_ranks)
    return Game(
        betting=betting,
        num_players=num_players,
        num_rounds=num_rounds,
        stack=stack,
        blind=blind,
        raise_size=raise_size,
        first_player=tuple(f - 1 for f in first),
        max_raises=max_raises,
        num_suits=num_suits,
        num_ranks=num_ranks,
        num_hole_cards=num_hole,
        num_board_cards=board,
        name=name or source,
    )


def _read_definition(text: str, source: str) -> tuple[dict[str, tuple[int, list[int]]], Betting]:
    """The definition's lines: each key's line number and integers (by canonical key), and the
    betting type; refused where a line, a key or a value is not what the ACPC dealer reads."""
    values: dict[str, tuple[int, list[int]]] = {}  # canonical key -> (line number, values)
    betting: tuple[int, Betting] | None = None
    seen_begin = False
    ended = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("#"):
            continue
        if ended:
            raise GameDefError(source, f"unexpected content after END GAMEDEF: {_shown(line.strip())}", lineno)
        if line[0].isspace():
            raise GameDefError(
                source,
                f"indented line {_shown(line.strip())}: the ACPC dealer would silently ignore it; remove the leading whitespace",
                lineno,
            )
        lowered = line.strip().lower()
        if lowered == "gamedef":
            if seen_begin or values or betting:
                raise GameDefError(source, "GAMEDEF must be the first line of the definition", lineno)
            seen_begin = True
            continue
        if lowered == "end gamedef":
            ended = True
            continue
        if lowered in ("limit", "nolimit"):
            if betting is not None:
                raise GameDefError(source, f"betting type given twice (first on line {betting[0]})", lineno)
            betting = (lineno, Betting(lowered))
            continue
        canonical, numbers = _value_line(line, source, lineno)
        if canonical in values:
            raise GameDefError(source, f"{canonical} given twice (first on line {values[canonical][0]})", lineno)
        values[canonical] = (lineno, numbers)
    if betting is None:
        raise GameDefError(source, "missing betting type: a line 'limit' or 'nolimit' is required")
    for key in _REQUIRED:
        if key not in values:
            raise GameDefError(source, f"missing required key {key}")
    if betting[1] is Betting.LIMIT and "raiseSize" not in values:
        raise GameDefError(source, "missing required key raiseSize (required in limit games)")
    return values, betting[1]


def _value_line(line: str, source: str, lineno: int) -> tuple[str, list[int]]:
    """A ``key = values`` (or ``key values``) line: the canonical key and its 32-bit integers."""
    key_text, sep, rest = line.partition("=")
    if not sep:
        key_text, _, rest = line.partition(" ")
    key = key_text.strip()
    spec = _VALUE_KEYS.get(key.lower())
    if spec is None:
        raise GameDefError(
            source,
            f"unknown key {_shown(key)}; known keys: limit, nolimit, " + ", ".join(c for c, _ in _VALUE_KEYS.values()),
            lineno,
        )
    canonical, _count = spec
    items = rest.split("#", 1)[0].split()  # a comment may follow the values
    if not items:
        raise GameDefError(source, f"{canonical} has no value", lineno)
    if not all(_INTEGER.fullmatch(v) for v in items):  # int() also takes 1_00 and other scripts' digits
        raise GameDefError(source, f"{canonical} values must be integers, got {_shown(rest.strip())}", lineno)
    # int() refuses strings past 4300 digits with a ValueError of its own; past 10 none fits 32 bits
    huge = next((v for v in items if len(v.lstrip("+-").lstrip("0")) > 10), None)
    if huge is not None:
        raise GameDefError(
            source, f"{canonical} value {_shown(huge)} does not fit the 32-bit integers the ACPC dealer reads", lineno
        )
    numbers = [int(v) for v in items]
    outside = next((n for n in numbers if not INT32_MIN <= n <= UNLIMITED_STACK), None)
    if outside is not None:
        raise GameDefError(source, f"{canonical} value {outside} does not fit the 32-bit integers the ACPC dealer reads", lineno)
    return canonical, numbers


class _Fields:
    """The definition's values read as the game's fields, each refusal naming the key's line."""

    def __init__(self, values: dict[str, tuple[int, list[int]]], source: str) -> None:
        self.values = values
        self.source = source

    def error(self, key: str, problem: str) -> GameDefError:
        """A GameDefError at ``key``'s line."""
        return GameDefError(self.source, problem, self.values[key][0])

    def single(self, key: str, low: int, high: int) -> int:
        """The one value of ``key``, within ``low..high``."""
        _, nums = self.values[key]
        if len(nums) != 1:
            raise self.error(key, f"{key} takes one value, got {len(nums)}")
        if not low <= nums[0] <= high:
            raise self.error(key, f"{key} = {nums[0]} is outside {low}..{high}")
        return nums[0]

    def vector(self, key: str, count: int, what: str, default: int | None = None) -> tuple[int, ...]:
        """``count`` values of ``key`` (one per ``what``), or ``default`` for each where the key is absent."""
        if key not in self.values:
            assert default is not None
            return (default,) * count
        _, nums = self.values[key]
        if len(nums) != count:
            raise self.error(key, f"{key} needs {count} values (one per {what}), got {len(nums)}")
        return tuple(nums)


def _check_players(field: _Fields, stack: tuple[int, ...], blind: tuple[int, ...]) -> None:
    """Positive stacks, blinds within them, and someone left able to act."""
    for p, (s, b) in enumerate(zip(stack, blind)):
        if s <= 0:
            raise field.error("stack", f"stack of player {p + 1} must be positive, got {s}")
        if b < 0:
            raise field.error("blind", f"blind of player {p + 1} must not be negative, got {b}")
        if b > s:
            raise field.error("blind", f"blind of player {p + 1} ({b}) is greater than its stack ({s})")
    if all(b >= s for s, b in zip(stack, blind)):
        raise field.error("blind", "every player's blind is its whole stack: no one could ever act (the ACPC dealer loops)")


def _check_rounds(
    field: _Fields, num_players: int, first: tuple[int, ...], raise_size: tuple[int, ...], max_raises: tuple[int, ...]
) -> None:
    """Each round's first player a seat, its raise size positive, its raise limit 0..255."""
    for r, f in enumerate(first):
        if not 1 <= f <= num_players:
            raise field.error("firstPlayer", f"firstPlayer of round {r + 1} is {f}, must be 1..{num_players}")
    for r, size in enumerate(raise_size):
        if size <= 0:
            raise field.error("raiseSize", f"raiseSize of round {r + 1} must be positive, got {size}")
    for r, m in enumerate(max_raises):
        if not 0 <= m <= UNLIMITED_RAISES:
            raise field.error("maxRaises", f"maxRaises of round {r + 1} must be 0..255, got {m}")


def _check_cards(field: _Fields, num_players: int, num_hole: int, board: tuple[int, ...], deck: int) -> None:
    """Board cards a hand can be ranked with, and hole and board cards the deck can deal."""
    if any(n < 0 for n in board):
        raise field.error("numBoardCards", "numBoardCards values must not be negative")
    if sum(board) > MAX_BOARD_CARDS:
        raise field.error("numBoardCards", f"at most {MAX_BOARD_CARDS} board cards in total, got {sum(board)}")
    if num_hole + sum(board) > MAX_HAND_CARDS:
        raise field.error(
            "numBoardCards",
            f"a hand of {num_hole} hole and {sum(board)} board cards cannot be ranked: at most {MAX_HAND_CARDS} cards in all",
        )
    if num_hole * num_players + sum(board) > deck:
        raise GameDefError(field.source, "too many hole and board cards for the deck (numSuits x numRanks)")


def _shown(text: str, limit: int = 60) -> str:
    """``repr(text)``, its middle cut past ``limit`` characters: a 200,000-digit value is not echoed whole."""
    return repr(text) if len(text) <= limit else repr(text[: limit // 2]) + "..." + repr(text[-limit // 2 :])


def load_game(name_or_path: str | Path) -> Game:
    """Load a shipped game by short name (``hunl``, ``hul``, ``leduc``, ``leduc-limit``) or a file."""
    text_name = str(name_or_path)
    if text_name in SHORT_NAMES:
        path = GAMES_DIR / SHORT_NAMES[text_name]
        return parse_game(path.read_text(), source=str(path), name=text_name)
    path = Path(name_or_path)
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
    except OSError as exc:  # a name too long for the file system, ...
        raise GameDefError(_shown(text_name), f"cannot read the file: {exc.strerror or exc}") from None
    if is_dir:
        raise GameDefError(text_name, "is a folder, not a game file")
    if not is_file:
        raise GameDefError(
            text_name,
            "no such game file, and not a short name (" + ", ".join(SHORT_NAMES) + ")",
        )
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise GameDefError(text_name, f"cannot read the file: {exc}") from None
    return parse_game(text, source=text_name, name=path.stem)
