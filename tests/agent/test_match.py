"""Whole matches through our dealer over loopback TCP, via the ``deepstack match`` command."""

from __future__ import annotations

import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.evaluation.match import MatchReport, SeatSpec, _seat_names, new_log_dir, run_match
from protocol.dealer import DealerResult, SeatStats
from protocol.gamedef import Game, load_game


@pytest.mark.parametrize(("game", "hands"), [("hunl", 2000), ("leduc", 500), ("leduc-limit", 500), ("hul", 500)])
def test_match_call_vs_random(game: str, hands: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Whole matches of every shipped game: zero-sum score, one log line per hand, no correction (2000
    hands of no-limit hold'em, where random's sizes vary most; 500 of the others, to keep the suite short)."""
    code = main(["match", game, str(hands), "call", "random", "--seed", "1", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    score = next(l for l in out.splitlines() if l.startswith("SCORE:"))
    a, b = (float(x) for x in score.split(":")[1].split("|"))
    assert a + b == 0
    assert f"hands: {hands}" in out
    assert "corrected actions 0" in out and "corrected actions 1" not in out
    log = next(tmp_path.glob("*.log")).read_text().splitlines()
    states = [l for l in log if l.startswith("STATE:")]
    assert len(states) == hands
    assert len({l.split(":")[1] for l in states}) == hands  # one line per hand
    assert log[-1] == score.replace("call|random", "call|random")


def test_baseline_bots_never_need_a_correction(tmp_path: Path) -> None:
    game = load_game("hunl")
    report = run_match(game, "hunl", 2000, ["raise", "random"], seed=3, log_dir=tmp_path)
    assert report.ok
    assert report.corrections(0) == 0 and report.corrections(1) == 0
    err = next(tmp_path.glob("*.dealer.err")).read_text()
    assert "WARNING" not in err


def test_a_command_seat_plans_with_the_limits_its_play_options_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The dealer never tells a seat its limits: a `deepstack play` seat planned with the config's
    7000 ms per hand and a --t_per_hand 200 match aborted after 7 hands; told --t_per_hand it finishes."""
    seat = f"cmd:{sys.executable} -m agent.cli play --game leduc --port {{port}} --host {{host}} --t_per_hand 300"
    code = main(["match", "leduc", "30", seat, "random", "--t_per_hand", "300", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "over 30 hands" in out, out


def test_duplicate_match_and_command_seat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seat = f"cmd:{sys.executable} -m agent.cli play --game leduc --bot random --seed 5 --port {{port}} --host {{host}}"
    code = main(["match", "leduc", "300", "raise", seat, "--duplicate", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("SCORE:") == 2
    assert "raise duplicate:" in out and "over 300 deals" in out
    # seats named as the dealer names them (eval plot too): raise sits in seat 1, then in seat 2
    lines = out.splitlines()
    assert any(l.startswith("raise (seat 1): ") and l.endswith(" mbb/g (95% CI) over 300 hands") for l in lines), out
    assert any(l.startswith("raise (seat 2, swapped): ") and l.endswith("(95% CI) over 300 hands") for l in lines), out
    assert all("(95% CI)" in l for l in lines if "±" in l)
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
        (["match", "hunl", "10", "call", 'cmd:"unbalanced {port}'], "seat 'cmd:\"unbalanced {port}': No closing quotation"),
        (["match", "hunl", "0", "call", "call"], "HANDS must be positive"),
        (["match", "hunl", str(10**23), "call", "call"], "HANDS must be positive and at most 2147483647"),
    ],
)
def test_match_refuses_bad_seats(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_match_refuses_unknown_game(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["match", "nonsense-game", "10", "call", "call"])
    assert exit_.value.code == 2  # bad arguments, as --help's exit codes say
    assert "deepstack match: error: nonsense-game: no such game file" in capsys.readouterr().err


def test_start_timeout_aborts_a_seat_that_never_connects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sleeper = f"cmd:{sys.executable} -c 'import time; time.sleep(3)' {{port}}"
    main(["match", "leduc", "10", "call", sleeper, "--start-timeout", "1", "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "ABORTED: seat 2 did not connect within the start timeout" in out


def test_a_seat_program_that_fails_before_connecting_ends_the_wait_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A seat program that exits with an error (a wrong flag, a missing file) aborts the match
    when it exits, not after the start timeout (600 s by default)."""
    failing = f"cmd:{sys.executable} -c 'import sys; sys.exit(3)' {{port}}"
    started = time.monotonic()
    assert main(["match", "leduc", "10", "call", failing, "--start-timeout", "120", "--log-dir", str(tmp_path)]) == 1
    assert time.monotonic() - started < 60
    out = capsys.readouterr().out
    assert "ABORTED: the program of seat 2 exited with code 3 before the match started" in out
    assert ".seat2.log)" in out  # where its own error went


def test_a_seat_program_that_exits_cleanly_before_connecting_ends_the_wait_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit status 0 is no excuse: a program that ended without connecting never will."""
    quitter = f"cmd:{sys.executable} -c 'pass' {{port}}"
    started = time.monotonic()
    assert main(["match", "leduc", "10", "call", quitter, "--start-timeout", "120", "--log-dir", str(tmp_path)]) == 1
    assert time.monotonic() - started < 60
    assert "ABORTED: the program of seat 2 exited with code 0 before the match started" in capsys.readouterr().out


def test_a_seat_program_that_does_not_exist_is_refused_before_the_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["match", "leduc", "3", "call", "cmd:/nonexistent/bot {port}", "--log-dir", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "cannot start '/nonexistent/bot': no such program" in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


def test_a_seat_program_that_cannot_be_executed_gives_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found but not runnable (its interpreter is missing): the dealer is stopped and its log
    finished before the log files close (no write to a closed file from the dealer's thread)."""
    script = tmp_path / "bot.sh"
    script.write_text("#!/nonexistent/interpreter\n")
    script.chmod(0o755)
    assert main(["match", "leduc", "3", "call", f"cmd:{script} {{port}}", "--log-dir", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert f"seat 2: cannot start '{script}'" in err and "Exception in thread" not in err
    (dealer_err,) = (tmp_path / "m").glob("*.dealer.err")
    assert f"ERROR: seat 2: cannot start '{script}'" in dealer_err.read_text()  # the dealer's own log says why


def test_seat_names_are_made_fit_for_the_log() -> None:
    """A command's file name may hold what a STATE line cannot (spaces, ':', '|', non-ASCII)."""
    spec = SeatSpec(text="cmd:x", command=("/opt/my bot:v2|\u00e9", "{port}"))
    assert _seat_names([spec, SeatSpec(text="call", bot="call")]) == ("my-bot-v2-", "call")


def test_progress_lines_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A long match is not silent: every 10% of the hands (both seatings counted) a line on stderr
    with the hands done, the first bot's win rate so far with its 95% interval, and think times."""
    assert main(["match", "leduc", "20", "call", "random", "--seed", "3", "--log-dir", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    lines = [l for l in captured.err.splitlines() if l.startswith("match: ")]
    assert [int(l.split()[1].split("/")[0]) for l in lines] == list(range(2, 21, 2))
    pattern = (
        r"match: (\d+)/20 hands \(\d+%\), call [+-]\d+\.\d ± (\d+\.\d|inf) mbb/g \(95% CI\), "
        r"think call \d+\.\d / random \d+\.\d ms per decision, \d+ s"
    )
    assert all(re.fullmatch(pattern, l) for l in lines), lines
    assert "match: " not in captured.out  # stdout keeps the report alone
    # the last line's win rate is the report's (one seating: seat 1's line)
    last = lines[-1].split(", ")[1].removeprefix("call ")
    assert f"call (seat 1): {last} over 20 hands" in captured.out

    code = main(["match", "leduc", "10", "call", "random", "--duplicate", "--progress", "7", "--log-dir", str(tmp_path / "b")])
    assert code == 0
    captured = capsys.readouterr()
    lines = [l for l in captured.err.splitlines() if l.startswith("match: ")]
    assert [l.split()[1] for l in lines] == ["7/20", "14/20", "20/20"]
    # in the second seating, per deal over the deals both have played, as the report at the end
    assert "call duplicate" not in lines[0] and "call duplicate " in lines[1] and "over 4 deals" in lines[1]
    last = lines[-1].split(", ")[1].removeprefix("call duplicate ")
    assert f"call duplicate: {last}" in captured.out
    assert main(["match", "leduc", "10", "call", "random", "--progress", "0", "--log-dir", str(tmp_path / "c")]) == 0
    assert "match: " not in capsys.readouterr().err
    assert main(["match", "leduc", "10", "call", "random", "--progress", "-1", "--log-dir", str(tmp_path / "d")]) == 2
    assert "--progress must be 0 (none) or a number of hands" in capsys.readouterr().err


def test_each_match_gets_a_folder_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --log-dir: a new runs/match-GAME-TIME folder per match, never one shared with another
    match or game; an explicit --log-dir that holds a match's logs is refused, untouched."""
    monkeypatch.chdir(tmp_path)
    folders = []
    for game in ("leduc", "leduc", "hunl"):
        assert main(["match", game, "3", "call", "random", "--progress", "0"]) == 0
        logs = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("logs: "))
        folders.append(Path(logs.removeprefix("logs: ")))
    assert len(set(folders)) == 3 and all(f.parent == tmp_path / "runs" for f in folders)
    for folder, game in zip(folders, ("leduc", "leduc", "hunl")):
        assert re.fullmatch(rf"match-{game}-\d{{8}}T\d{{6}}Z(-\d+)?", folder.name), folder.name
        assert [p.name for p in folder.glob("*.log")] == [f"{game}.call.vs.random.s0.log"]
    before = {p.name: p.read_bytes() for p in folders[0].iterdir()}
    assert main(["match", "hunl", "3", "call", "random", "--log-dir", str(folders[0])]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"deepstack match: error: {folders[0]}: already holds the logs of another match (leduc: "
        "leduc.call.vs.random.s0.log); each match is written to a folder of its own: give a new --log-dir, "
        "or leave it out for a new runs/match-GAME-TIME folder"
    )
    assert {p.name: p.read_bytes() for p in folders[0].iterdir()} == before
    (tmp_path / "empty").mkdir()
    assert main(["match", "leduc", "3", "call", "random", "--progress", "0", "--log-dir", "empty"]) == 0


def test_new_log_dir_never_reuses_a_folder(tmp_path: Path, leduc: Game) -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    first, second = new_log_dir(leduc, tmp_path, now), new_log_dir(leduc, tmp_path, now)
    assert first.name == "match-leduc-20260102T030405Z" and second.name == "match-leduc-20260102T030405Z-2"
    assert first.is_dir() and second.is_dir()


def test_a_failing_per_hand_report_does_not_end_the_match(tmp_path: Path) -> None:
    """The progress report runs in the dealer's thread: if it fails (e.g. stderr is a closed pipe)
    the match still finishes, with a warning in the dealer's log, instead of the dealer dying."""
    from agent.evaluation.match import SeatSpec, run_single

    calls: list[int] = []

    def broken(hand_id: int, values: tuple[float, ...], stats: list) -> None:
        calls.append(hand_id)
        raise BrokenPipeError("stderr closed")

    game = load_game("leduc")
    specs = [SeatSpec("call", bot="call"), SeatSpec("random", bot="random")]
    result, _ = run_single(game, "leduc", 6, specs, ["call", "random"], 1, tmp_path, "m", on_hand=broken)
    assert result.hands_played == 6 and calls == [0]
    assert "the per-hand report failed" in (tmp_path / "m.dealer.err").read_text()


def test_an_aborted_match_still_reports_the_hands_played_before_the_abort() -> None:
    """A seat that dies at hand 522 leaves 521 hands played: the report says how many and what
    they give (and a duplicate's finished first seating keeps its own line)."""
    game = load_game("leduc")
    first = DealerResult(True, None, 4, [SeatStats(), SeatStats()], [(100.0, -100.0), (-50.0, 50.0)] * 2)
    aborted = DealerResult(False, "could not get action from seat 2", 2, [SeatStats(), SeatStats()], [(-30.0, 30.0)] * 2)
    lines = MatchReport(game, ("a", "b"), results=[first, aborted]).summary_lines()
    assert lines[1] == "ABORTED: could not get action from seat 2"
    assert "hands completed before the abort: 6" in lines
    assert "a (seat 1): +250.0 ± " in lines[3] and lines[3].endswith("over 4 hands")
    assert lines[4].startswith("a (seat 2, swapped): +300.0 ± ") and lines[4].endswith("over 2 hands, before the abort")
    none = DealerResult(False, "seat 2 did not connect within the start timeout", 0, [SeatStats(), SeatStats()])
    assert MatchReport(game, ("a", "b"), results=[none]).summary_lines() == [
        "ABORTED: seat 2 did not connect within the start timeout"
    ]


def test_a_log_dir_the_machine_refuses_is_named_with_its_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --log-dir under a file: said as every command says an output it cannot write (the path and
    the reason), before the dealer starts."""
    (tmp_path / "f").write_text("x")
    assert main(["match", "leduc", "2", "random", "call", "--log-dir", str(tmp_path / "f" / "logs")]) == 1
    err = capsys.readouterr().err
    assert f"deepstack match: error: cannot write to {tmp_path / 'f' / 'logs'}: " in err
    assert "is a file, not a folder" in err
