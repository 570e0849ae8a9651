"""Time management: budgets from the dealer's rules, and a real match under a tight limit."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from agent.bots.timing import TimeBudget
from agent.cli.main import main


def test_budget_shares_the_banked_time_over_the_decisions_left() -> None:
    holdem = TimeBudget(7.0, 600.0, 600.0, safety=0.5, rounds=4)
    holdem.start_hand()
    assert holdem.budget(0) == pytest.approx(0.5 * (0.5 * 7.0) / 4)  # half the allowance banked, half of a share
    assert holdem.budget(3) == pytest.approx(0.5 * (0.5 * 7.0) / 1)
    leduc = TimeBudget(1.0, 600.0, 600.0, safety=1.0, rounds=2)
    leduc.start_hand()
    assert leduc.budget(0) == pytest.approx(1.0 / 2)  # two rounds: ~2 decisions left pre-flop
    assert leduc.budget(1) == pytest.approx(1.0)
    leduc.spent(0.75)
    assert leduc.budget(1) == pytest.approx(0.25)
    leduc.spent(1.0)  # over the bank: no time, not negative
    assert leduc.budget(1) == 0.0
    tight = TimeBudget(1.0, 600.0, 600.0, safety=1.0, rounds=2)
    tight.start_hand()
    tight.solved(0, 0.6, iterations=60, solve_seconds=0.5)  # set-up 0.1 s, 1/120 s an iteration
    assert tight.playable_cost(0, 20) == pytest.approx(0.1 + 20 / 120)
    assert tight.budget(0) == pytest.approx(0.5) and tight.affordable(0, 20)  # this share pays for 20
    assert not tight.affordable(0, 60)  # not for 60
    tight.spent(0.6)
    assert tight.budget(0) == pytest.approx(0.2) and not tight.affordable(0, 20)  # 0.4 s left: 0.2 s a share
    tight.solved(0, 0.15)  # no split of its time known: the whole of it, at the least
    assert tight.playable_cost(0, 20) == pytest.approx(0.15) and tight.affordable(0, 20)
    slow = TimeBudget(1.0, 600.0, 600.0, safety=0.9, rounds=2)
    slow.start_hand()
    slow.solved(1, 0.5, iterations=1, solve_seconds=0.45)  # one (warming-up) iteration: not extrapolated
    assert slow.playable_cost(1, 20) == pytest.approx(0.5) and slow.affordable(1, 20)
    capped = TimeBudget(100.0, 0.2, 600.0, safety=1.0, rounds=2)
    capped.start_hand()
    assert capped.budget(1) == pytest.approx(0.2)  # the per-reply limit


def test_the_per_hand_limit_caps_what_is_left_of_this_hand() -> None:
    """A generous bank does not let a decision run past the dealer's ``t_hand``: the cap is what
    this hand has left of it, not the whole limit."""
    budget = TimeBudget(100.0, 600.0, t_hand_s=1.0, safety=1.0, rounds=2)
    budget.start_hand()
    budget.spent(0.8)
    assert budget.budget(1) == pytest.approx(0.2)
    budget.start_hand()  # a new hand has the whole limit again
    assert budget.budget(1) == pytest.approx(1.0)


def test_the_cost_of_a_re_solve_is_judged_on_recent_ones_only() -> None:
    """One fast re-solve long ago (a quiet machine, an easy spot) does not make every later
    decision start a re-solve the clock will stop: only the last ten of a street count."""
    budget = TimeBudget(7.0, 600.0, 600.0, safety=1.0, rounds=4)
    budget.solved(1, 0.01)
    for _ in range(10):
        budget.solved(1, 5.0)
    assert budget.playable_cost(1, 1) == pytest.approx(5.0)
    budget.solved(1, 2.0)
    assert budget.playable_cost(1, 1) == pytest.approx(2.0)


def test_spending_every_budget_keeps_a_reserve_of_the_allowance() -> None:
    """A bot that thinks for its whole budget at every decision still leaves (1 - safety) of
    the dealer's allowance unused: the room for what it cannot measure (I/O, other programs)."""
    budget = TimeBudget(7.0, 600.0, 600.0, safety=0.7, rounds=4)
    for hand in range(1, 501):
        budget.start_hand()
        for r in range(4):
            budget.spent(budget.budget(r))
        assert budget.used_s <= 0.7 * 7.0 * hand + 1e-9
    assert budget.used_s >= 0.6 * 7.0 * 500  # and most of what is banked is used


def test_the_round_trip_to_the_dealer_is_charged_per_reply_and_kept_back() -> None:
    """``latency_s`` runs on the dealer's clock for every reply: each reply pays it, and a budget
    leaves it for this reply and each one the hand may still need."""
    far = TimeBudget(1.0, 600.0, 600.0, safety=1.0, rounds=2, latency_s=0.1)
    far.start_hand()
    assert far.budget(0) == pytest.approx((1.0 - 2 * 0.1) / 2)  # two replies expected pre-flop
    assert far.budget(1) == pytest.approx(1.0 - 0.1)
    far.spent(0.2, reply=True)
    assert far.used_s == pytest.approx(0.3) and far.hand_used_s == pytest.approx(0.3)
    far.spent(0.2)  # not a reply (a street's catch-up): no round trip
    assert far.used_s == pytest.approx(0.5)
    capped = TimeBudget(100.0, 0.5, t_hand_s=1.0, safety=1.0, rounds=2, latency_s=0.1)
    capped.start_hand()
    assert capped.budget(1) == pytest.approx(0.4)  # the per-reply limit, less the way there and back
    assert capped.budget(0) == pytest.approx(0.4)  # per hand: 1.0 less two round trips leaves more
    capped.spent(0.5, reply=True)
    assert capped.budget(1) == pytest.approx(0.3)  # what the hand has left (0.4) less this reply's trip
    never = TimeBudget(1.0, 600.0, 600.0, safety=1.0, rounds=2, latency_s=2.0)
    never.start_hand()
    assert never.budget(0) == 0.0 and never.budget(1) == 0.0  # the trips alone use the bank: none, not negative


def test_a_far_dealer_s_round_trips_do_not_run_the_bot_out_of_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A dealer 50 ms away (25 ms each way, through a relay) and 200 ms a hand: with ``--latency 50``
    the bot keeps the round trips out of its thinking (~145 ms a hand on the dealer's clock); without
    it the trips came on top of a bank the bot spent in full, and the dealer aborted the match for
    time after 34 hands (``seat 1 ran out of time``)."""
    proxy = Path(__file__).with_name("delay_proxy.py")
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("bot:\n  time:\n    t_per_hand_ms: 200\n")
    play = f"{sys.executable} -m agent.cli play --game leduc --bot deepstack --config {cfg} --port {{proxy_port}} --latency 50"
    seat = f"cmd:{sys.executable} {proxy} 25 {{host}} {{port}} -- {play}"
    code = main(["match", "leduc", "40", seat, "call", "--t_per_hand", "200", "--seed", "2", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ran out of time" not in out and "hands: 40" in out
    (seat_log,) = tmp_path.glob("*.seat1.log")
    assert "handshake_ms=" in seat_log.read_text()  # the log tells what to set --latency to


def test_match_s_built_in_seats_pay_no_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A config made for a far dealer (``latency_ms: 5000``) run through ``deepstack match``: its
    built-in seats play on loopback and think as usual, not out of time at every re-solve."""
    cfg = tmp_path / "far.yaml"
    cfg.write_text("bot:\n  time:\n    latency_ms: 5000\n")
    code = main(
        ["match", "leduc", "6", "deepstack", "call", "--config", str(cfg), "--seed", "2", "--log-dir", str(tmp_path / "m")]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    (round_2,) = [line for line in out.splitlines() if line.strip().startswith("round 2:")]
    assert " 0 out of time" in round_2 and " 0 re-solved" not in round_2, round_2  # it was: 6 of 6 out of time


def test_the_handshake_time_leaves_out_the_name_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """``handshake_ms`` is offered as the round trip to give ``--latency``: a slow name lookup
    (a dealer given by name) is not part of it."""
    import socket

    from protocol import client

    listener = socket.create_server(("127.0.0.1", 0))
    lookup = socket.getaddrinfo

    def slow_lookup(*args: object, **kwargs: object) -> list:
        time.sleep(0.3)
        return lookup(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    sock, handshake = client._dial("127.0.0.1", listener.getsockname()[1], 5.0)
    sock.close()
    listener.close()
    assert handshake < 0.2


def test_leduc_bot_keeps_to_a_tight_dealer_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """150 ms per hand on average: far less than 300 full iterations need, so the bot must
    stop its re-solves at the deadline; the dealer would abort the match otherwise."""
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("bot:\n  time:\n    t_per_hand_ms: 150\n")
    seat = f"cmd:{sys.executable} -m agent.cli play --game leduc --bot deepstack --config {cfg} --port {{port}} --host {{host}}"
    code = main(["match", "leduc", "30", seat, "call", "--t_per_hand", "150", "--seed", "2", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ran out of time" not in out and "hands: 30" in out
    assert "corrected actions 0" in out and "corrected actions 1" not in out


def test_a_built_in_seat_plans_with_the_match_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``match --t_per_hand`` is the limit the built-in bot budgets from, not the config's 7000 ms:
    with the config's it thought for seconds a hand and the dealer aborted the match."""
    code = main(["match", "leduc", "30", "deepstack", "call", "--t_per_hand", "150", "--seed", "2", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ran out of time" not in out and "hands: 30" in out


def test_play_refuses_a_round_trip_the_limits_leave_no_room_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A round trip as long as the per-reply limit leaves no time for any reply: refused before the
    seat is taken, naming the setting (no dealer needed: the check comes before connecting)."""
    code = main(["play", "--game", "leduc", "--port", "9", "--t_response", "100", "--latency", "100"])
    err = capsys.readouterr().err
    assert code == 2
    assert "bot.time.latency_ms: 100.0 is not in [0, t_response_ms 100)" in err


@pytest.mark.parametrize("flag", ["--t_per_hand", "--t_response", "--t_hand", "--start-timeout"])
def test_match_refuses_a_limit_that_is_not_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    code = main(["match", "leduc", "3", "random", "call", flag, "0", "--log-dir", str(tmp_path / "m")])
    assert code == 2
    assert flag in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
