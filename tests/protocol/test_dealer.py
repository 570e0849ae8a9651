"""Our dealer against scripted raw-socket clients: corrections, time limits, aborts, logs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from protocol.dealer import deal_hand, format_value
from protocol.gamedef import Game
from protocol.matchstate import MatchState
from tests.protocol.harness import Policy, ScriptedSeat, calls, run_dealer


def script(*actions: str) -> Policy:
    """Send ``actions`` in order on our turns, then call."""
    queue = list(actions)

    def policy(line: str, view: MatchState) -> list[str]:
        if not view.is_our_turn:
            return []
        return [f"{line}:{queue.pop(0) if queue else 'c'}"]

    return policy


def betting_seen(run, seat: int = 0) -> list[str]:
    return [line.split(":")[3] for line in run.states(seat)]


# Hand 0: seat 1 (Alice) is position 0 = big blind; seat 2 (Bob) is the button and acts first.
@pytest.mark.parametrize(
    ("alice", "bob", "expected_betting", "warning"),
    [
        (["r1"], ["c"], "cr200", "WARNING: raise of 1 increased to 200"),
        (["r999999"], ["r8295"], "r8295r20000", "WARNING: raise of 999999 decreased to 20000"),
        (["c", "f"], ["r3147"], "r3147c/c", "WARNING: invalid action, changed to call"),
        (["r"], ["c"], "cc/", "WARNING: bad action format in response, changed to call"),
        (["x"], ["c"], "cc/", "WARNING: invalid action, changed to call"),
        ([""], ["c"], "cc/", "WARNING: invalid action, changed to call"),
        (["r20000"], ["r20000"], "r20000c///", "WARNING: invalid action, changed to call"),
    ],
    ids=["raise_small", "raise_big", "fold_free", "raise_nosize", "garbage", "empty", "raise_vs_allin"],
)
def test_bad_actions_are_corrected_like_the_acpc_dealer(
    alice: list[str], bob: list[str], expected_betting: str, warning: str, hunl: Game, tmp_path: Path
) -> None:
    run = run_dealer(hunl, [ScriptedSeat(script(*alice)), ScriptedSeat(script(*bob))], tmp_path)
    assert run.result.ok, run.err
    assert expected_betting in betting_seen(run)
    assert run.warnings[0] == warning
    assert run.result.seats[0].corrections == 1
    assert run.result.seats[1].corrections == 0


def test_raise_after_max_raises_in_limit_leduc(leduc_limit: Game, tmp_path: Path) -> None:
    # Leduc: position 0 (Alice in hand 0) acts first in both rounds
    run = run_dealer(leduc_limit, [ScriptedSeat(script("r", "r")), ScriptedSeat(script("r"))], tmp_path)
    assert "rrc/" in betting_seen(run)
    assert run.warnings == ["WARNING: invalid action, changed to call"]


def test_64_action_round_cap_forces_call(hunl: Game, tmp_path: Path) -> None:
    def min_raiser(line: str, view: MatchState) -> list[str]:
        if not view.is_our_turn:
            return []
        bounds = view.state.raise_bounds()
        return [f"{line}:r{bounds[0] if bounds else 99999}"]

    run = run_dealer(hunl, [ScriptedSeat(min_raiser), ScriptedSeat(min_raiser)], tmp_path)
    assert run.result.ok
    first_round = [b for b in betting_seen(run) if "/" in b][0].split("/")[0]
    assert first_round.count("r") == 63 and first_round.endswith("c")
    cap = "WARNING: #actions in round is too close to MAX_NUM_ACTIONS, forcing call/fold"
    assert run.warnings[:2] == [cap, "WARNING: invalid action, changed to call"]


def test_comments_unrequested_and_garbage_responses(hunl: Game, tmp_path: Path) -> None:
    def noisy(line: str, view: MatchState) -> list[str]:
        if not view.is_our_turn:
            return []
        wrong_hand = line.replace("MATCHSTATE:0:0:", "MATCHSTATE:0:5:")
        return ["# a comment", "; another", f"{wrong_hand}:r5000", "garbage line", f"{line}:c"]

    run = run_dealer(hunl, [ScriptedSeat(noisy), ScriptedSeat(calls())], tmp_path)
    assert run.result.ok
    assert run.warnings[:2] == ["WARNING: ignoring un-requested response", "WARNING: bad state format in response"]
    assert "cc/" in betting_seen(run)  # the proper reply (c), not the ignored r5000
    assert run.result.seats[0].corrections == 0


def test_reply_without_action_is_a_format_error(hunl: Game, tmp_path: Path) -> None:
    bare: Policy = lambda line, view: [line] if view.is_our_turn else []
    run = run_dealer(hunl, [ScriptedSeat(bare), ScriptedSeat(calls())], tmp_path)
    assert "WARNING: bad action format in response, changed to call" in run.warnings


def test_log_format_score_and_zero_sum(hunl: Game, tmp_path: Path) -> None:
    run = run_dealer(hunl, [ScriptedSeat(script("r300", "r900")), ScriptedSeat(calls())], tmp_path, hands=6)
    assert run.result.ok
    lines = run.log.splitlines()
    assert lines[0] == "# name/game/hands/seed test hunl 6 7"
    assert lines[1:4] == ["#--t_response 600000", "#--t_hand 600000", "#--t_per_hand 7000"]
    states = [l for l in lines if l.startswith("STATE:")]
    assert len(states) == 6
    assert [int(s.split(":")[1]) for s in states] == list(range(6))
    names = [s.rsplit(":", 1)[1] for s in states]
    assert names[:2] == ["Alice|Bob", "Bob|Alice"]  # seats alternate positions
    for s in states:
        a, b = (float(x) for x in s.split(":")[4].split("|"))
        assert a + b == 0
    score = lines[-1]
    assert score.startswith("SCORE:") and score.endswith(":Alice|Bob")
    assert run.out.strip() == score
    totals = [float(x) for x in score.split(":")[1].split("|")]
    assert totals[0] == -totals[1] == pytest.approx(sum(v[0] for v in run.result.hand_values))


def test_disconnect_aborts_and_keeps_the_log(hunl: Game, tmp_path: Path) -> None:
    quitter = ScriptedSeat(calls(), disconnect_after=3)
    run = run_dealer(hunl, [quitter, ScriptedSeat(calls())], tmp_path, hands=5)
    assert not run.result.ok
    assert "ERROR:" in run.err and "SCORE" not in run.err
    assert run.log.startswith("# name/game/hands/seed test hunl 5 7")
    assert "SCORE" not in run.log


@pytest.mark.parametrize(
    ("limits", "hands"),
    [({"t_response_ms": 100}, 1), ({"t_hand_ms": 150}, 1), ({"t_per_hand_ms": 50}, 3)],
    ids=["t_response", "t_hand", "t_per_hand"],
)
def test_time_limits_abort_the_match(limits: dict, hands: int, hunl: Game, tmp_path: Path) -> None:
    slow = ScriptedSeat(calls(), delay_s=0.09 if "t_response_ms" not in limits else 0.3)
    run = run_dealer(hunl, [slow, ScriptedSeat(calls())], tmp_path, hands=hands, **limits)
    assert not run.result.ok
    assert "ERROR: seat 1 ran out of time" in run.err
    assert "SCORE" not in run.log


def test_bad_version_line_aborts(hunl: Game, tmp_path: Path) -> None:
    run = run_dealer(hunl, [ScriptedSeat(calls(), version=b"HELLO\r\n"), ScriptedSeat(calls())], tmp_path)
    assert not run.result.ok
    assert "ERROR: invalid version string HELLO" in run.err


def test_deal_depends_on_seed_and_hand_only(hunl: Game, leduc: Game) -> None:
    deck = hunl.deck()
    a = deal_hand(hunl, deck, 11, 5)
    assert a == deal_hand(hunl, deck, 11, 5)
    assert a != deal_hand(hunl, deck, 12, 5) and a != deal_hand(hunl, deck, 11, 6)
    cards = [c for h in a.hole_cards for c in h] + list(a.board)
    assert len(set(cards)) == 9
    low = deal_hand(leduc, leduc.deck("low"), 3, 0)
    assert all(c in leduc.deck("low") for c in low.hole_cards[0] + low.board)


def test_swapping_names_gives_a_duplicate_deal(hunl: Game, tmp_path: Path) -> None:
    run_a = run_dealer(hunl, [ScriptedSeat(calls()), ScriptedSeat(calls())], tmp_path / "a", hands=4)
    run_b = run_dealer(hunl, [ScriptedSeat(calls()), ScriptedSeat(calls())], tmp_path / "b", hands=4, names=("Bob", "Alice"))
    strip: Callable[[str], str] = lambda l: l.rsplit(":", 1)[0]
    a = [strip(l) for l in run_a.log.splitlines() if l.startswith("STATE")]
    b = [strip(l) for l in run_b.log.splitlines() if l.startswith("STATE")]
    assert a == b  # same cards per (hand, position) whoever sits where


def test_format_value_matches_acpc() -> None:
    assert format_value(500.0) == "500"
    assert format_value(-12.5) == "-12.5"
    assert format_value(0.0) == "0"
