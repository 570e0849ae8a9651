"""Whole matches through our dealer over loopback TCP, via the ``deepstack match`` command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.evaluation.match import run_match
from protocol.gamedef import load_game


@pytest.mark.parametrize("game", ["hunl", "leduc", "leduc-limit", "hul"])
def test_match_2000_hands_call_vs_random(game: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["match", game, "2000", "call", "random", "--seed", "1", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    score = next(l for l in out.splitlines() if l.startswith("SCORE:"))
    a, b = (float(x) for x in score.split(":")[1].split("|"))
    assert a + b == 0
    assert "hands: 2000" in out
    assert "corrected actions 0" in out and "corrected actions 1" not in out
    log = next(tmp_path.glob("*.log")).read_text().splitlines()
    states = [l for l in log if l.startswith("STATE:")]
    assert len(states) == 2000
    assert len({l.split(":")[1] for l in states}) == 2000  # one line per hand
    assert log[-1] == score.replace("call|random", "call|random")


def test_baseline_bots_never_need_a_correction(tmp_path: Path) -> None:
    game = load_game("hunl")
    report = run_match(game, "hunl", 2000, ["raise", "random"], seed=3, log_dir=tmp_path)
    assert report.ok
    assert report.corrections(0) == 0 and report.corrections(1) == 0
    err = next(tmp_path.glob("*.dealer.err")).read_text()
    assert "WARNING" not in err


def test_duplicate_match_and_command_seat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seat = f"cmd:{sys.executable} -m agent.cli play --game leduc --bot random --seed 5 --port {{port}} --host {{host}}"
    code = main(["match", "leduc", "300", "raise", seat, "--duplicate", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("SCORE:") == 2
    assert "raise duplicate:" in out and "over 300 deals" in out
    seat_log = tmp_path / "leduc.raise.vs.python3.11.s0.seat2.log"
    logs = list(tmp_path.glob("*.seat*.log"))
    assert logs and any("hands=300" in p.read_text() for p in logs), [p.read_text()[-500:] for p in logs]
    del seat_log


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["match", "hunl", "10", "call", "nobody"], "unknown bot 'nobody'"),
        (["match", "hunl", "10", "call", "cmd:"], "empty command"),
        (["match", "hunl", "10", "call", "cmd:echo hi"], "{port} placeholder"),
        (["match", "hunl", "0", "call", "call"], "HANDS must be positive"),
    ],
)
def test_match_refuses_bad_seats(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_match_refuses_unknown_game() -> None:
    with pytest.raises(SystemExit, match="no such game file"):
        main(["match", "nonsense-game", "10", "call", "call"])


def test_start_timeout_aborts_a_seat_that_never_connects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sleeper = f"cmd:{sys.executable} -c 'import time; time.sleep(3)' {{port}}"
    main(["match", "leduc", "10", "call", sleeper, "--start-timeout", "1", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "ABORTED: seat 2 did not connect within the start timeout" in out
