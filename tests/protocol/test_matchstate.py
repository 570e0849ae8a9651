"""MATCHSTATE lines: every captured line parses and formats back; malformed lines are refused."""

from __future__ import annotations

import re

import pytest

from native.cards import cards_from_str
from protocol.gamedef import Game, load_game
from protocol.matchstate import MatchStateError, parse_matchstate
from tests.conftest import SAMPLE_MATCHSTATES

_STATE_RE = re.compile(r"(MATCHSTATE:[^\\' \n]*)")


def sample_lines() -> list[tuple[str, str, bool]]:
    """(game name, text, is a client response) for every MATCHSTATE in the capture file."""
    out = []
    game = "hunl"
    for raw in SAMPLE_MATCHSTATES.read_text().splitlines():
        if raw.startswith("#"):
            if raw.startswith("##"):
                game = "leduc-limit" if "Leduc" in raw else "hunl"
            continue
        response = raw.startswith("C->S") or raw.startswith("FROM")
        for m in _STATE_RE.finditer(raw):
            text = m.group(1)
            if text.endswith("\\r\\n"):
                text = text[:-4]
            out.append((game, text.replace("\\r\\n", "").replace("\\n", ""), response))
    return out


SAMPLES = sample_lines()


def test_capture_file_is_read() -> None:
    assert len(SAMPLES) > 250
    assert sum(1 for _, _, r in SAMPLES if r) > 30
    assert {g for g, _, _ in SAMPLES} == {"hunl", "leduc-limit"}


@pytest.mark.parametrize(("game_name", "text", "response"), SAMPLES)
def test_every_captured_line_round_trips(game_name: str, text: str, response: bool) -> None:
    game = load_game(game_name)
    if response:
        fields = text.split(":")
        state_text, action = ":".join(fields[:5]), ":".join(fields[5:])
        assert action  # every captured response carries an action
    else:
        state_text = text
    ms = parse_matchstate(state_text, game)
    assert ms.to_line() == state_text
    assert ms.our_cards  # the viewer always sees its own cards


def test_parsed_meaning(hunl: Game, leduc_limit: Game) -> None:
    ms = parse_matchstate("MATCHSTATE:0:2:cr7802c/cr9943:8d9h|/TsQh8c\r\n", hunl)
    assert ms.position == 0 and ms.hand_id == 2
    assert ms.state.round == 1 and ms.state.spent == (7802, 9943)
    assert ms.our_cards == cards_from_str("8d9h")
    assert ms.state.board == cards_from_str("TsQh8c")
    assert ms.is_our_turn  # position 0 checked, position 1 bet: position 0 must answer
    ms = parse_matchstate("MATCHSTATE:1:21:cc/cc/cc/r10824c:AcJc|QcQs/7cKs5h/Js/Qh", hunl)
    assert ms.state.finished and ms.state.is_showdown
    assert ms.state.payoffs()[1] == 10824.0  # trip queens beat a pair of jacks
    ms = parse_matchstate("MATCHSTATE:1:1:crc/:|Qh/Ks", leduc_limit)
    assert ms.is_our_turn is False and ms.state.current_player == 0


@pytest.mark.parametrize("line", ["MATCHSTATE:0:0::2c|", "MATCHSTATE:1:0:rc/:|3d/4c"])
def test_leduc_low_deck_convention(line: str, leduc_limit: Game) -> None:
    assert parse_matchstate(line, leduc_limit).to_line() == line


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("MATCHSTATE:0:2::8d9h", "hole-card sections"),
        ("MATCHSTATE:0:2:c", "expected MATCHSTATE"),
        ("MATCHSTAT:0:2::8d9h|", "expected MATCHSTATE"),
        ("MATCHSTATE:2:2::8d9h|", "position"),
        ("MATCHSTATE:0:x::8d9h|", "hand number"),
        ("MATCHSTATE:0:2:r150:8d9h|", "illegal action r150"),
        ("MATCHSTATE:0:2:r25000:8d9h|", "illegal action r25000"),
        ("MATCHSTATE:0:2:cc:8d9h|", "betting shows 1 rounds"),
        ("MATCHSTATE:0:2:c/c:8d9h|", "written in betting round 2"),
        ("MATCHSTATE:0:2:ff:8d9h|", "after the hand is over"),
        ("MATCHSTATE:0:2:cx:8d9h|", "unknown action character"),
        ("MATCHSTATE:0:2:cr:8d9h|", "without a size"),
        ("MATCHSTATE:0:2:cc/:8d9h|/TsQh", "shows 2 board cards"),
        ("MATCHSTATE:0:2:cc/:8d9h|", "0 board sections"),
        ("MATCHSTATE:0:2:cc/:8d9h|/Ts8d8c", "same card appears twice"),
        ("MATCHSTATE:0:2:c:8d9h|AhAs", "before a showdown"),
        ("MATCHSTATE:0:2:c:|8d9h", "own hole cards"),
        ("MATCHSTATE:0:2:c:8d9|", "odd length"),
        ("MATCHSTATE:0:2:c:8d9x|", "not a rank"),
        ("MATCHSTATE:0:2:c:8d|", "shows 1 hole cards"),
    ],
)
def test_malformed_hunl_lines(line: str, fragment: str, hunl: Game) -> None:
    with pytest.raises(MatchStateError) as info:
        parse_matchstate(line, hunl)
    assert info.value.line == line
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("MATCHSTATE:0:0:r2:Ks|", "limit raise with a size"),
        ("MATCHSTATE:0:0:rrr:Ks|", "illegal action r"),
        ("MATCHSTATE:0:0::Qs|Ks", "before a showdown"),
        ("MATCHSTATE:0:0:rc/:Ks|/2c", "not all in this game's deck"),
        ("MATCHSTATE:0:0::Ts|", "not all in this game's deck"),
    ],
)
def test_malformed_leduc_lines(line: str, fragment: str, leduc_limit: Game) -> None:
    with pytest.raises(MatchStateError, match=re.escape(fragment)):
        parse_matchstate(line, leduc_limit)
