"""Our dealer against scripted raw-socket clients: corrections, time limits, aborts, logs."""

from __future__ import annotations

import io
import re
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from native.cards import cards_from_str
from protocol.actions import WARN_CAP, WARN_INVALID, Correction, correct_action
from protocol.dealer import Dealer, DealerConfig, deal_hand, format_value
from protocol.dealer_cli import main as dealer_main
from protocol.gamedef import Game
from protocol.judge import judge_response
from protocol.matchstate import MatchState
from protocol.state import CALL, HandState, raise_to
from protocol.transactions import read_transactions
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
    assert run.warnings[0] == f"{warning} (seat 1, hand 0)"  # the ACPC dealer's text, then who and when
    assert run.result.seats[0].corrections == 1
    assert run.result.seats[1].corrections == 0


def test_raise_after_max_raises_in_limit_leduc(leduc_limit: Game, tmp_path: Path) -> None:
    # Leduc: position 0 (Alice in hand 0) acts first in both rounds
    run = run_dealer(leduc_limit, [ScriptedSeat(script("r", "r")), ScriptedSeat(script("r"))], tmp_path)
    assert "rrc/" in betting_seen(run)
    assert run.warnings == ["WARNING: invalid action, changed to call (seat 1, hand 0)"]


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
    assert run.warnings[:2] == [f"{cap} (seat 1, hand 0)", "WARNING: invalid action, changed to call (seat 1, hand 0)"]


def test_a_raise_two_actions_from_the_cap_is_still_a_raise(hunl: Game) -> None:
    """The ACPC dealer refuses a raise only when the round's actions plus the players would pass 64:
    at 62 actions a legal all-in stands (no cap warning), at 63 it becomes a call; a raise
    against an all-in at 62 is only invalid, not capped."""
    state = HandState.initial(hunl)
    while len(state.round_actions) < 61:
        state = state.apply(raise_to(state.raise_bounds()[0]))
    assert correct_action(state.apply(raise_to(20000)), "r20000").warnings == (WARN_INVALID,)
    state = state.apply(raise_to(state.raise_bounds()[0]))
    assert correct_action(state, "r20000") == Correction(raise_to(20000))
    state = state.apply(raise_to(state.raise_bounds()[0]))
    assert correct_action(state, "r20000").warnings == (WARN_CAP, WARN_INVALID)


def test_comments_unrequested_and_garbage_responses(hunl: Game, tmp_path: Path) -> None:
    def noisy(line: str, view: MatchState) -> list[str]:
        if not view.is_our_turn:
            return []
        wrong_hand = line.replace("MATCHSTATE:0:0:", "MATCHSTATE:0:5:")
        return ["# a comment", "; another", f"{wrong_hand}:r5000", "garbage line", f"{line}:c"]

    run = run_dealer(hunl, [ScriptedSeat(noisy), ScriptedSeat(calls())], tmp_path)
    assert run.result.ok
    assert run.warnings[:2] == [
        "WARNING: ignoring un-requested response (seat 1, hand 0)",
        "WARNING: bad state format in response (seat 1, hand 0)",
    ]
    assert run.result.seats[0].ignored == 2 * run.result.seats[0].decisions
    assert "cc/" in betting_seen(run)  # the proper reply (c), not the ignored r5000
    assert run.result.seats[0].corrections == 0


def test_a_reply_echoing_other_hole_cards_is_ignored(hunl: Game) -> None:
    """As ``matchStatesEqual``: a reply whose echoed hole cards are not the acting seat's own is un-requested."""
    state = HandState.initial(hunl, 7, hole_cards=[cards_from_str("AsKs"), cards_from_str("AcKd")])
    assert state.current_player == 1
    assert judge_response("MATCHSTATE:1:7::|AcKd:c", state, 1).kind == "action"
    wrong = judge_response("MATCHSTATE:1:7::|2c2d:c", state, 1)
    assert wrong.kind == "ignored" and wrong.warning == "ignoring un-requested response"


def test_a_reply_echoing_another_board_is_ignored(hunl: Game) -> None:
    """A reply whose echoed board differs from the one dealt is un-requested, even with the right betting and cards."""
    state = HandState.initial(hunl, 7, hole_cards=[cards_from_str("AsKs"), cards_from_str("AcKd")]).apply(CALL).apply(CALL)
    state = state.with_board(tuple(cards_from_str("2h3h4h")))
    assert judge_response("MATCHSTATE:0:7:cc/:AsKs|/2h3h4h:c", state, 0).action_text == "c"
    wrong = judge_response("MATCHSTATE:0:7:cc/:AsKs|/2h3h5h:c", state, 0)
    assert wrong.kind == "ignored" and wrong.warning == "ignoring un-requested response"


def test_reply_without_action_is_a_format_error(hunl: Game, tmp_path: Path) -> None:
    bare: Policy = lambda line, view: [line] if view.is_our_turn else []
    run = run_dealer(hunl, [ScriptedSeat(bare), ScriptedSeat(calls())], tmp_path)
    assert "WARNING: bad action format in response, changed to call (seat 1, hand 0)" in run.warnings


@pytest.mark.parametrize("after_cards", ["r7802", "c", " :c", "r"])
def test_state_not_followed_by_a_colon_is_an_action_format_error(after_cards: str, hunl: Game, tmp_path: Path) -> None:
    """As the ACPC dealer's ``readMatchState``: the echoed state ends where the cards end; without
    a ``:`` after it the reply has no action, which is a call with a warning (not an ignored
    line the dealer would wait past until the seat's time ran out)."""
    glued: Policy = lambda line, view: [line + after_cards] if view.is_our_turn else []
    run = run_dealer(hunl, [ScriptedSeat(glued), ScriptedSeat(calls())], tmp_path)
    assert run.result.ok, run.err
    assert run.warnings[0] == "WARNING: bad action format in response, changed to call (seat 1, hand 0)"
    assert run.result.seats[0].ignored == 0 and run.result.seats[0].corrections == run.result.seats[0].decisions


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


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        (b"HELLO", False),
        (b"VERSION:2.0", False),
        (b" VERSION:2.0.0", False),
        (b"VERSION:2.0.0 extra", True),
        (b"VERSION:2.0.0.1", True),
    ],
)
def test_version_line_is_read_as_the_acpc_dealer_reads_it(version: bytes, ok: bool, hunl: Game, tmp_path: Path) -> None:
    """Three numbers after ``VERSION:``, whatever follows them (its ``sscanf``); anything else
    aborts the match."""
    run = run_dealer(hunl, [ScriptedSeat(calls(), version=version + b"\r\n"), ScriptedSeat(calls())], tmp_path)
    assert run.result.ok == ok, run.err
    if not ok:
        assert f"ERROR: invalid version string {version.decode()}" in run.err


@pytest.mark.parametrize(
    ("names", "match_name", "seed", "message"),
    [
        (("b\u00f8", "b"), "m", 1, "bad player name 'b\\xf8': '\\xf8' is not allowed"),
        (("a b", "b"), "m", 1, "bad player name 'a b': ' ' is not allowed"),
        (("a|b", "b"), "m", 1, "bad player name 'a|b': '|' is not allowed"),
        (("a", ""), "m", 1, "bad player name: it is empty"),
        (("a", "b"), "my match", 1, "bad match name 'my match'"),
        (("a", "b"), "m", -1, "invalid seed -1"),
        (("a", "b"), "m", 2**32, "invalid seed 4294967296"),
    ],
)
def test_names_and_seeds_the_log_cannot_hold_are_refused_before_the_match(
    names: tuple[str, str], match_name: str, seed: int, message: str, leduc: Game
) -> None:
    """Player names are fields of STATE and SCORE lines and the log is ASCII: a name that would
    break them (or crash the log's write after the first hand) is refused up front, as is a seed
    that would deal the same cards as another."""
    with pytest.raises(ValueError, match=re.escape(message)):
        Dealer(DealerConfig(match_name, leduc, "leduc", 1, seed, names, log_dir=None))


def test_dealer_command_refuses_a_bad_name_with_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert dealer_main(["m", "leduc", "3", "1", "a:b", "c", "--log-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "ERROR: bad player name 'a:b': ':' is not allowed (printable ASCII, no spaces, no ':', no '|')"
    assert not (tmp_path / "m.log").exists()
    assert dealer_main(["m", "leduc", str(10**23), "1", "a", "b", "--log-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == f"ERROR: invalid number of hands {10**23} (1..2147483647)"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--t_response", "-5"], "ERROR: --t_response -5 is negative"),
        # a traceback (select()'s timeout overflowing time_t) before limits had a ceiling
        (["--start_timeout", "10000000000000"], "ERROR: --start_timeout 10000000000000 is more than 10000000000 ms"),
        (["--t_hand", "10000000000000"], "ERROR: --t_hand 10000000000000 is more than 10000000000 ms"),
        (["--log-dir", "{file}/sub"], "ERROR: cannot write the logs in {file}/sub: {file} is a file, not a folder"),
        (["-T", "--log-dir", "{file}/sub"], "ERROR: cannot write the logs in {file}/sub: {file} is a file, not a folder"),
    ],
)
def test_dealer_refuses_bad_limits_and_log_folders_before_printing_its_ports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str], message: str
) -> None:
    """A harness reads the port line and starts its clients: a dealer that cannot log (or whose
    limits end every match at once) says so before that line, in one line, not after it in a
    traceback."""
    file = tmp_path / "a-file"
    file.write_text("")
    argv = ["m", "leduc", "3", "1", "a", "b", *(a.replace("{file}", str(file)) for a in extra)]
    assert dealer_main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(message.replace("{file}", str(file)))
    assert len(captured.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "extra", "message"),
    [
        ("a/b", [], "ERROR: bad match name 'a/b'"),  # no folder a
        ("..", [], "ERROR: bad match name '..'"),
        ("sub/", [], "ERROR: bad match name 'sub/'"),
        ("m", [], "ERROR: cannot write {dir}/m.log: it is a folder"),
        ("t", ["-T", "-l"], "ERROR: cannot write {dir}/t.tlog: it is a folder"),
    ],
)
def test_dealer_refuses_a_match_name_it_cannot_log_under_before_printing_its_ports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, extra: list[str], message: str
) -> None:
    """It printed its ports, took the seats, then died with a traceback opening NAME.log."""
    (tmp_path / "m.log").mkdir()
    (tmp_path / "t.tlog").mkdir()
    assert dealer_main([name, "leduc", "3", "1", "a", "b", "--log-dir", str(tmp_path), *extra]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(message.replace("{dir}", str(tmp_path)))


def test_a_taken_seat_port_refuses_a_second_client(leduc: Game, tmp_path: Path) -> None:
    """Once a seat is taken its port is closed, as the ACPC dealer does: a second bot started on
    it by mistake is refused at once instead of hanging until the match ends."""
    seats = [ScriptedSeat(calls(), delay_s=0.05), ScriptedSeat(calls())]
    config = DealerConfig("test", leduc, "leduc", 20, 1, ("A", "B"), log_dir=tmp_path, start_timeout_ms=20000)
    dealer = Dealer(config, out=io.StringIO(), err=io.StringIO())
    ports = dealer.open()
    box: list = []
    runner = threading.Thread(target=lambda: box.append(dealer.run()), daemon=True)
    runner.start()
    threads = [threading.Thread(target=s.run, args=(leduc, p), daemon=True) for s, p in zip(seats, ports)]
    for t in threads:
        t.start()
    while dealer.listeners and dealer.listeners[0].fileno() != -1:
        time.sleep(0.01)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", ports[0]), timeout=5)
    runner.join(timeout=60)
    assert box and box[0].ok


def test_an_unexpected_error_ends_the_match_with_an_error_line(
    leduc: Game, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug of ours in the middle of a match (here: the payoff of a hand fails) still ends it as
    an abort: an ERROR line, a failed result, the hands before it in the log, no traceback thrown
    at the caller (a local match reads the result from the dealer's thread)."""
    real = HandState.payoffs

    def payoffs_failing_on_hand_2(self: HandState) -> list[float]:
        if self.hand_id == 2:
            raise RuntimeError("boom")
        return real(self)

    monkeypatch.setattr(HandState, "payoffs", payoffs_failing_on_hand_2)
    run = run_dealer(leduc, [ScriptedSeat(calls()), ScriptedSeat(calls())], tmp_path, hands=5)
    assert not run.result.ok and run.result.hands_played == 2
    assert "ERROR: internal error after 2 hands: RuntimeError('boom')" in run.err
    assert len([l for l in run.log.splitlines() if l.startswith("STATE:")]) == 2 and "SCORE" not in run.log


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


def _one_raise_a_round(line: str, view: MatchState) -> list[str]:
    """Deterministic and varied: bet or raise once per round on even-length betting, else call."""
    if not view.is_our_turn:
        return []
    betting = line.split(":")[3]
    return [f"{line}:{'r' if betting.split('/')[-1].count('r') < 1 and len(betting) % 2 == 0 else 'c'}"]


def test_transaction_file_resumes_an_interrupted_match(leduc_limit: Game, tmp_path: Path) -> None:
    """``-T`` writes every action; ``-T -a`` replays them (a last line cut short is dropped) and
    plays on live from the middle of the hand: the resumed match ends with the score of the
    uninterrupted one, and logs only the hands it played."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    seats = [ScriptedSeat(_one_raise_a_round), ScriptedSeat(_one_raise_a_round)]
    whole = run_dealer(leduc_limit, seats, a, hands=6, transactions=a / "test.tlog")
    assert whole.result.ok
    lines = (a / "test.tlog").read_text().splitlines()
    assert all(re.fullmatch(r"(r|c|f) [0-5] \d+\.\d{6} \d+\.\d{6}", line) for line in lines)
    cut = [int(line.split()[1]) for line in lines].index(3) + 1  # one action into hand 3
    (b / "test.tlog").write_text("\n".join(lines[:cut]) + "\n" + lines[cut][:5])
    seats = [ScriptedSeat(_one_raise_a_round), ScriptedSeat(_one_raise_a_round)]
    resumed = run_dealer(leduc_limit, seats, b, hands=6, transactions=b / "test.tlog", append=True)
    assert resumed.result.ok, resumed.err
    assert resumed.out == whole.out and resumed.out.startswith("SCORE:")
    assert f"# replaying {cut} actions of {b / 'test.tlog'}" in resumed.err
    assert [line.split()[:2] for line in (b / "test.tlog").read_text().splitlines()] == [line.split()[:2] for line in lines]
    assert len(read_transactions(b / "test.tlog")) == len(lines)  # every line whole: it can be resumed again
    states = [line for line in whole.log.splitlines() if line.startswith("STATE:")]
    assert [line for line in resumed.log.splitlines() if line.startswith("STATE:")] == states[3:]
    assert seats[0].received[0].split(":")[2] == "3"  # the first state sent: hand 3, one action in
    assert resumed.result.seats[0].decisions + resumed.result.seats[1].decisions == len(lines)


def test_a_later_minor_version_is_played_with_an_error_line(hunl: Game, tmp_path: Path) -> None:
    """``VERSION:2.1.0`` is accepted, as by the ACPC dealer, after the line saying the server speaks 2.0.0."""
    run = run_dealer(hunl, [ScriptedSeat(calls(), version=b"VERSION:2.1.0\r\n"), ScriptedSeat(calls())], tmp_path)
    assert run.result.ok, run.err
    assert "ERROR: this server is currently using version 2.0.0" in run.err.splitlines()
    plain = run_dealer(hunl, [ScriptedSeat(calls()), ScriptedSeat(calls())], tmp_path / "plain")
    assert "version" not in plain.err


@pytest.mark.parametrize(
    ("tlog", "error"),
    [
        ("c 0 1.000000 1.000001\nhello\n", "cannot resume from the transaction file: {path}:2: not a transaction line"),
        ("f 0 1.000000 1.000001\n", "invalid action in the transaction file: {path}:1: f"),
        ("c 1 1.000000 1.000001\n", "hand mismatch in the transaction file: {path}:1 is of hand 1, not 0"),
        ("c 0 1.000000 1.000001\nc 7 1.000000 1.000001\n", "{path}:2 is of hand 7, the match has 2"),
        ("c 0 1.000000 1.000001\nc 2 1.000000 1.000001\n", "{path}:2 is of hand 2, the match has 2"),
        ("c 0 1.000000 901.000000\n", "seat 1 ran out of time in the transaction file ({path}:1)"),
    ],
    ids=["garbage", "illegal", "hand-mismatch", "beyond-the-match", "just-past-the-last-hand", "out-of-time"],
)
def test_a_transaction_file_that_cannot_be_replayed_ends_the_match_naming_the_line(
    tlog: str, error: str, leduc_limit: Game, tmp_path: Path
) -> None:
    path = tmp_path / "test.tlog"
    path.write_text(tlog)
    seats = [ScriptedSeat(calls()), ScriptedSeat(calls())]
    run = run_dealer(leduc_limit, seats, tmp_path, hands=2, transactions=path, append=True, t_response_ms=600_000)
    assert not run.result.ok
    assert error.format(path=path) in run.err, run.err


def test_a_match_name_may_hold_a_folder_that_exists(leduc: Game, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As the ACPC dealer writes NAME.log as given: ``sub/m1`` with ``sub/`` there is a match."""
    (tmp_path / "sub").mkdir()
    argv = ["sub/m1", "leduc", "1", "1", "a", "b", "--log-dir", str(tmp_path), "--start_timeout", "1"]
    dealer_main(argv)  # nobody connects: the match ends, but only after the name was accepted
    assert "bad match name" not in capsys.readouterr().err
    run = run_dealer(leduc, [ScriptedSeat(calls()), ScriptedSeat(calls())], tmp_path, match_name="sub/m1")
    assert run.result.ok and run.log.startswith("# name/game/hands/seed sub/m1 ")


def test_a_start_that_fails_leaves_the_earlier_log_of_the_name_whole(
    leduc: Game, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log was opened (emptied) before the seats connected: a dealer started again under a
    finished match's name, whose seats never came, wiped that match's log."""
    for name in ("m.log", "m.tlog"):
        (tmp_path / name).write_text("an earlier match\n")
    argv = ["m", "leduc", "1", "1", "a", "b", "--log-dir", str(tmp_path), "--start_timeout", "0", "-T"]
    assert dealer_main(argv) == 1
    assert "did not connect within the start timeout" in capsys.readouterr().err
    assert (tmp_path / "m.log").read_text() == (tmp_path / "m.tlog").read_text() == "an earlier match\n"
