from __future__ import annotations

from pathlib import Path

import pytest

from protocol.gamedef import (
    SHORT_NAMES,
    UNLIMITED_RAISES,
    UNLIMITED_STACK,
    Betting,
    GameDefError,
    load_game,
    parse_game,
)
from tests.conftest import GAME_FILES

HUNL_TEXT = (GAME_FILES / "holdem.nolimit.2p.reverse_blinds.game").read_text()


@pytest.mark.parametrize("name", sorted(SHORT_NAMES))
def test_every_shipped_game_parses_and_round_trips(name: str) -> None:
    game = load_game(name)
    assert game.num_players == 2
    again = parse_game(game.to_text(), name=name)
    assert again == game


@pytest.mark.parametrize("path", sorted(GAME_FILES.glob("*.game")))
def test_shared_game_files_parse_by_path(path: Path) -> None:
    game = load_game(path)
    assert game.name == path.stem


def test_hunl_fields() -> None:
    g = load_game("hunl")
    assert g.betting is Betting.NOLIMIT
    assert g.stack == (20000, 20000)
    assert g.blind == (100, 50)
    assert g.first_player == (1, 0, 0, 0)
    assert g.num_board_cards == (0, 3, 1, 1)
    assert g.max_raises == (UNLIMITED_RAISES,) * 4
    assert g.deck() == tuple(range(52)) == g.deck("low")


def test_limit_and_leduc_fields() -> None:
    hul = load_game("hul")
    assert hul.is_limit and hul.raise_size == (10, 10, 20, 20) and hul.max_raises == (3, 4, 4, 4)
    assert hul.stack == (UNLIMITED_STACK, UNLIMITED_STACK)
    leduc = load_game("leduc-limit")
    assert leduc.num_rounds == 2 and leduc.num_ranks == 3 and leduc.num_suits == 2
    assert leduc.first_player == (0, 0)
    # the two reduced-deck conventions of the dealer copies
    assert leduc.deck("high") == (42, 43, 46, 47, 50, 51)  # Qh Qs Kh Ks Ah As
    assert leduc.deck("low") == (0, 1, 4, 5, 8, 9)


def _mutate(old: str, new: str, text: str = HUNL_TEXT) -> str:
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (_mutate("stack = 20000 20000", "  stack = 20000 20000"), 5, "indented"),
        (_mutate("numRounds = 4", "numRoundz = 4"), 4, "unknown key 'numRoundz'"),
        (_mutate("blind = 100 50", "blind = 100 fifty"), 6, "must be integers"),
        (_mutate("blind = 100 50", "blind = 100"), 6, "needs 2 values"),
        (_mutate("firstPlayer = 2 1 1 1", "firstPlayer = 3 1 1 1"), 7, "firstPlayer of round 1"),
        (_mutate("blind = 100 50", "blind = 100 50\nblind = 100 50"), 7, "given twice"),
        (_mutate("blind = 100 50", "blind = 30000 50"), 6, "greater than its stack"),
        (_mutate("numBoardCards = 0 3 1 1", "numBoardCards = 0 3 1"), 11, "one per round"),
        (_mutate("numRanks = 13", "numRanks = 14"), 9, "outside 1..13"),
        (_mutate("END GAMEDEF", "END GAMEDEF\nstack = 5 5"), 13, "after END GAMEDEF"),
        (_mutate("nolimit", "nolimit\nraiseSize = 1 1 1 1"), 3, "only meaningful in limit"),
        # a stack the dealer's int32 cannot hold; 20 digits stalled the match (clients refused the raise sizes)
        (_mutate("stack = 20000 20000", "stack = 99999999999999999999 20000"), 5, "does not fit the 32-bit"),
        (_mutate("stack = 20000 20000", "stack = 3000000000 3000000000"), 5, "does not fit the 32-bit"),
        # past 4300 digits int() raised a ValueError of its own: a traceback; the value is not echoed whole
        (_mutate("numRanks = 13", "numRanks = " + "1" * 200_000), 9, "value '111111111111111111111111111111'...'1"),
        (_mutate("numRanks = 13", "numRanks = x" + "y" * 200_000), 9, "must be integers, got 'xyyyyy"),
        (_mutate("blind = 100 50", "blind = 1_00 50"), 6, "must be integers"),  # int() took it as 100
        (_mutate("blind = 100 50", "blind = \uff11\uff10\uff10 50"), 6, "must be integers"),  # full-width digits
        # everyone all-in from the blinds: nobody can act (a traceback in our dealer, a loop in the ACPC one)
        (_mutate("stack = 20000 20000\nblind = 100 50", "stack = 100 50\nblind = 100 50"), 6, "no one could ever act"),
    ],
)
def test_bad_game_files_name_file_line_and_problem(text: str, line: int, fragment: str) -> None:
    with pytest.raises(GameDefError) as info:
        parse_game(text, source="bad.game")
    assert info.value.line == line
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"bad.game:{line}: ")


@pytest.mark.parametrize("key", ["numPlayers", "numRounds", "blind", "numSuits", "numRanks", "numHoleCards", "numBoardCards"])
def test_missing_required_keys(key: str) -> None:
    text = "\n".join(l for l in HUNL_TEXT.splitlines() if not l.lower().startswith(key.lower()))
    with pytest.raises(GameDefError, match=f"missing required key {key}"):
        parse_game(text, source="bad.game")


def test_missing_betting_type_and_limit_raise_size() -> None:
    with pytest.raises(GameDefError, match="missing betting type"):
        parse_game(_mutate("nolimit\n", ""), source="x")
    limit = (GAME_FILES / "holdem.limit.2p.reverse_blinds.game").read_text()
    with pytest.raises(GameDefError, match="raiseSize"):
        parse_game(limit.replace("raiseSize = 10 10 20 20\n", ""), source="x")


def test_too_many_cards_for_the_deck() -> None:
    text = _mutate("numRanks = 13", "numRanks = 2")
    with pytest.raises(GameDefError, match="too many hole and board cards"):
        parse_game(text, source="x")


def test_hands_of_more_than_seven_cards_are_refused_at_load() -> None:
    """Our evaluator ranks hands of at most 7 cards: such a game is refused when read, not at its
    first showdown in the middle of a match."""
    text = _mutate("numHoleCards = 2", "numHoleCards = 3")
    with pytest.raises(GameDefError, match="a hand of 3 hole and 5 board cards cannot be ranked: at most 7"):
        parse_game(text, source="x")


def test_missing_file_and_bad_file(tmp_path: Path) -> None:
    with pytest.raises(GameDefError, match="no such game file, and not a short name"):
        load_game(tmp_path / "nope.game")
    with pytest.raises(GameDefError, match="is a folder, not a game file"):
        load_game(tmp_path)
    with pytest.raises(GameDefError, match=r"^'aaaa.*'\.\.\.'.*aaaa': cannot read the file: File name too long$"):
        load_game("a" * 5000)  # a bare OSError (a traceback in the dealer) before
    binary = tmp_path / "bin.game"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(GameDefError, match="cannot read"):
        load_game(binary)


def test_a_comment_after_the_values_is_read_as_the_dealer_reads_it() -> None:
    """The ACPC dealer reads a key's numbers until one does not parse: a trailing comment is fine."""
    game = parse_game(_mutate("numRounds = 4", "numRounds = 4 # pre-flop, flop, turn, river"), source="c.game")
    assert game.num_rounds == 4 and game == parse_game(HUNL_TEXT, source="c.game")
