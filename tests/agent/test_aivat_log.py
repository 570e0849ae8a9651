"""AIVAT from recorded matches: replays against the rules engine, the check-down value's
chance identity, and a real HUNL match through our dealer evaluated from its logs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.cli.main import main
from agent.evaluation.aivat_log import CheckdownValue, LogAivat, LoggedDecision, hand_aivat, log_aivat, replay
from agent.solver.handspace import HandSpace
from native.cards import cards_from_str
from protocol.dealer_log import parse_state_line, read_dealer_log
from protocol.gamedef import Game
from protocol.state import CALL, HandState, raise_to
from tests.agent.test_hunl_bot import FAST


def test_replay_of_an_all_in_run_out(hunl: Game) -> None:
    hand = parse_state_line("STATE:7:r300r20000c///:AsAd|KcKh/2c3d9h/Ts/7c:20000|-20000:a|b", "log:1")
    rep = replay(hunl, hand)
    assert [len(after.board) for _, after in rep.chance] == [5] and rep.final is not None and rep.final.finished
    with pytest.raises(ValueError, match="differ from the logged"):
        replay(hunl, parse_state_line("STATE:7:r300r20000c///:AsAd|KcKh/2c3d9h/Ts/7c:-20000|20000:a|b", "log:1"))
    with pytest.raises(ValueError, match="not a dealer STATE line"):
        parse_state_line("STATE:1:cc", "log:2")


@pytest.mark.parametrize("board", ["QsJh2h8d", "QsJh2h"])  # the river to come, the turn (and river) to come
def test_check_down_value_is_its_own_mean_over_the_next_card(hunl: Game, board: str) -> None:
    """Why a chance correction is V(before) - V(after): the mean of V over the cards that can
    come equals V before them (the matched amount does not change at a chance event)."""
    holes = (cards_from_str("AhKh"), cards_from_str("9c9d"))
    cards = cards_from_str(board)
    state = HandState.initial(hunl, hole_cards=holes).apply(raise_to(300)).apply(CALL).with_board(cards[:3])
    while len(state.board) < len(cards):
        state = state.apply(CALL).apply(CALL).with_board(cards[: len(state.board) + 1])
    state = state.apply(CALL).apply(CALL)  # checked through: waiting for the next card
    assert state.board_cards_needed == 1
    value = CheckdownValue(hunl, tuple(range(52)))
    used = set(holes[0] + holes[1] + state.board)
    after = [value(state.with_board(state.board + (c,)), 0) for c in range(52) if c not in used]
    assert np.mean(after) == pytest.approx(value(state, 0), abs=1e-9)
    assert value(state, 0) == pytest.approx(-value(state, 1))


def test_check_down_value_in_leduc(leduc: Game) -> None:
    deck = tuple(HandSpace(leduc).deck)
    holes = ((deck[0],), (deck[3],))
    state = HandState.initial(leduc, hole_cards=holes).apply(CALL).apply(CALL)
    value = CheckdownValue(leduc, deck)
    after = [value(state.with_board((c,)), 0) for c in deck if c not in holes[0] + holes[1]]
    assert np.mean(after) == pytest.approx(value(state, 0))


def test_action_correction_uses_the_bots_own_values_when_logged(hunl: Game) -> None:
    """The small blind folds; the bot had folded with probability 0.5 and valued folding -50
    and calling +10 chips: the correction is 0.5 * -50 + 0.5 * 10 - (-50) = +30. Without
    logged values the check-down value is used (folding: -50 exactly; calling: 100 chips
    matched times the pre-flop check-down result of AhAd against 7c2d)."""
    hand = parse_state_line("STATE:0:f:7c2d|AhAd/2c3c4c/5h/6h:50|-50:other|bot", "test")  # seat 1 is the small blind
    value = CheckdownValue(hunl, tuple(range(52)))
    key = (0, "AhAd", "")
    logged = LoggedDecision({"f": 0.5, "c": 0.5}, "f", {"f": -50.0, "c": 10.0})
    tally = LogAivat()
    assert hand_aivat(hunl, hand, 1, value, {key: logged}, tally, "bot") == (-50.0, -20.0)
    assert tally.bot_value_events == 1 and tally.action_events == 1
    called = value(HandState.initial(hunl, 0, hole_cards=hand.holes).apply(CALL), 1)
    assert 50 < called < 100  # aces against seven-deuce
    for decisions, mode in (({key: LoggedDecision(logged.strategy, "f")}, "bot"), ({key: logged}, "checkdown")):
        tally = LogAivat()
        raw, corrected = hand_aivat(hunl, hand, 1, value, decisions, tally, mode)
        assert tally.bot_value_events == 0
        assert corrected == pytest.approx(-50 + 0.5 * (-50) + 0.5 * called + 50)


def test_an_unknown_value_function_is_refused(hunl: Game, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'checkdown' or 'bot'"):
        log_aivat(hunl, [], "deepstack", None, "exact")


def test_aivat_from_the_logs_of_a_real_hunl_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "fast.yaml"
    cfg.write_text(FAST)
    logs = tmp_path / "logs"
    assert (
        main(
            [
                "match",
                "hunl",
                "3",
                "deepstack",
                "random",
                "--duplicate",
                "--seed",
                "4",
                "--log-dir",
                str(logs),
                "--config",
                str(cfg),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["eval", "aivat-log", str(logs), "--json", "--action-values", "bot"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    raw = []
    for path in sorted(logs.glob("*.log")):
        if path.read_text().startswith("# name/game/hands/seed"):
            _, names, _, values = read_dealer_log(path)
            raw += list(values[:, names.index("deepstack")])
    assert out["raw"]["n"] == 6 and out["duplicate"]["n"] == 3
    assert out["raw"]["mean"] == pytest.approx(np.mean(raw) * 10.0)  # mbb/g of a 100-chip big blind
    assert out["action_corrections"] > 0 and out["decisions_not_corrected"] == 0
    # every decision logged what the re-solve expected of each action: those are the control variates
    assert out["action_corrections_bot_values"] == out["action_corrections"]
    assert np.isfinite(out["aivat"]["mean"]) and np.isfinite(out["aivat"]["ci95"])
    # per deal, the AIVAT values of the two seatings are averaged: same total as per hand
    assert out["aivat_duplicate"]["n"] == 3
    assert out["aivat_duplicate"]["mean"] == pytest.approx(out["aivat"]["mean"])
    assert main(["eval", "aivat-log", str(logs), "--json"]) == 0  # check-down values everywhere
    check = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert check["action_corrections_bot_values"] == 0 and check["raw"] == out["raw"]
    assert main(["eval", "aivat-log", str(tmp_path / "nothing")]) == 2
    assert "not a folder" in capsys.readouterr().err


_DECISION = {"event": "decision", "hand": 3, "cards": "AhKd", "betting": "", "strategy": {"call": 1.0}, "action": "call"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"strategy": [1]}, "strategy [1]: expected a mapping"),
        ({"strategy": {"call": "x"}}, "strategy {'call': 'x'}: expected a mapping"),
        ({"hand": "x"}, "hand 'x': expected a hand number"),
        ({"values": 5}, "values 5: expected a mapping"),
        ({"action": None}, "action None"),
        ({"strategy": {"call": -0.5, "fold": 1.5}}, "strategy {'call': -0.5, 'fold': 1.5}: expected probabilities"),
        ({"strategy": {"call": float("nan")}}, "strategy {'call': nan}: expected probabilities"),
        ({"strategy": {"call": 0.0}}, "strategy {'call': 0.0}: expected probabilities"),
        ({"values": {"call": float("inf")}}, "values {'call': inf}: expected finite numbers"),
    ],
)
def test_a_bad_decision_line_is_named_by_file_and_line(change: dict, message: str, tmp_path: Path) -> None:
    from agent.evaluation.aivat_log import read_decisions

    path = tmp_path / "bots.jsonl"
    path.write_text("5\n[1]\n" + json.dumps(_DECISION) + "\n" + json.dumps({**_DECISION, **change}) + "\n")
    with pytest.raises(ValueError, match=f"^{path}:4: a decision line with {message}".replace("[", r"\[").replace("{", r"\{")):
        read_decisions(path)


def test_lines_that_are_not_objects_are_skipped(tmp_path: Path) -> None:
    from agent.evaluation.aivat_log import read_decisions

    path = tmp_path / "bots.jsonl"
    path.write_text('5\n"text"\n[1]\nnull\n' + json.dumps(_DECISION) + "\n")
    decisions, dropped = read_decisions(path)
    assert list(decisions) == [(3, "AhKd", "")] and dropped == 0
    path.write_text(json.dumps(_DECISION) + "\n" + json.dumps(_DECISION)[:20])  # a bot killed mid-line
    decisions, dropped = read_decisions(path)
    assert list(decisions) == [(3, "AhKd", "")] and dropped == 1  # counted among the decisions left out


def test_a_decisions_file_given_but_missing_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Left out silently before: the estimate ran without the action corrections asked for."""
    missing = tmp_path / "nope.jsonl"
    assert main(["eval", "aivat-log", str(tmp_path), "--decisions", str(missing)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"deepstack eval aivat-log: error: --decisions {missing}: no such file"
    ]


def test_a_hand_logged_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A duplicated STATE line counted as one more hand of the sample."""
    logs = tmp_path / "m"
    assert main(["match", "leduc", "3", "call", "call", "--log-dir", str(logs), "--seed", "1"]) == 0
    log = next(p for p in logs.glob("*.log") if "swapped" not in p.name)
    lines = log.read_text().splitlines()
    first_state = next(i for i, line in enumerate(lines) if line.startswith("STATE:"))
    log.write_text("\n".join(lines[: first_state + 1] + lines[first_state:]) + "\n")
    capsys.readouterr()
    assert main(["eval", "aivat-log", str(logs), "--player", "call-1"]) == 2
    assert "is logged twice; a log holds each hand once" in capsys.readouterr().err


def test_a_log_whose_header_names_no_game_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said 'error: : no such game file', naming neither the log nor its header."""
    logs = tmp_path / "m"
    assert main(["match", "leduc", "2", "call", "call", "--log-dir", str(logs), "--seed", "1"]) == 0
    for log in logs.glob("*.log"):
        lines = log.read_text().splitlines()
        log.write_text("\n".join(["# name/game/hands/seed m"] + lines[1:]) + "\n")
    capsys.readouterr()
    assert main(["eval", "aivat-log", str(logs), "--player", "call-1"]) == 2
    assert "names no game (# name/game/hands/seed NAME GAME HANDS SEED)" in capsys.readouterr().err


def test_lines_that_are_no_decisions_are_not_counted_as_decisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--decisions naming a console output file exited 0 and counted each of its lines as a decision without a
    logged strategy; a decision line cut short was counted twice (left out of the log, and unmatched in the
    dealer log). A file without a single decision line is refused, naming it."""
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("bot:\n  leduc:\n    iterations: 30\n")
    logs = tmp_path / "logs"
    assert main(["match", "leduc", "6", "deepstack", "random", "--seed", "1", "--log-dir", str(logs), "--config", str(cfg)]) == 0
    capsys.readouterr()

    def counts(*extra: str) -> tuple[int, int]:
        assert main(["eval", "aivat-log", str(logs), "--json", *extra]) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        return out["action_corrections"], out["decisions_not_corrected"]

    corrected, uncorrected = counts()
    assert corrected > 0 and uncorrected == 0
    console = tmp_path / "console.txt"
    console.write_text("deepstack match: leduc, 6 hands\nSCORE:-200|200:deepstack|random\n\n(done)\n")
    assert main(["eval", "aivat-log", str(logs), "--decisions", str(console)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"deepstack eval aivat-log: error: {console}: not a decision log: none of its 3 lines is a JSON log event (a line "
        "with an \"event\", as the bots.jsonl of 'deepstack match --log-dir' or 'deepstack play --log-json' holds)"
    ]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(console.read_text() + (logs / "bots.jsonl").read_text())
    assert counts("--decisions", str(mixed)) == (corrected, 0)
    lines = (logs / "bots.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"event": "decision"' in line)
    lines[cut] = lines[cut][:60]  # a bot killed mid-line
    mixed.write_text("\n".join(lines) + "\n")
    assert counts("--decisions", str(mixed)) == (corrected - 1, 1)
    plain = tmp_path / "plain"  # call and random seats: a bots.jsonl of events but no decision, given by name
    assert main(["match", "leduc", "4", "call", "random", "--seed", "1", "--log-dir", str(plain)]) == 0
    capsys.readouterr()
    assert main(["eval", "aivat-log", str(plain), "--player", "call", "--decisions", str(plain / "bots.jsonl")]) == 0
