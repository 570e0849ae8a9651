"""``deepstack eval plot``: pictures from real match logs and LBR outputs; bad input is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli.eval_plot import match_series
from agent.cli.main import main
from protocol.dealer_log import dealer_limit_ms, read_dealer_log


def test_plot_of_a_duplicate_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs, out = tmp_path / "logs", tmp_path / "png"
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("bot:\n  leduc:\n    iterations: 30\n")
    argv = [
        "match",
        "leduc",
        "30",
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
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["eval", "plot", str(logs), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(out / "winnings.png"), str(out / "think.png")]
    for name in printed:
        assert Path(name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_of_lbr_chunks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "lbr-0000000.json").write_text(json.dumps([1.0, -2.0, 3.0, 0.5] * 10))
    (tmp_path / "result.json").write_text(json.dumps({"game": "leduc-limit", "bot": "call"}))
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path / "png")]) == 0
    assert (tmp_path / "png" / "winnings.png").stat().st_size > 0
    (tmp_path / "expected-0000000.json").write_text(json.dumps([1.0, -1.0, 2.0, 0.5] * 10))
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path / "png2")]) == 0
    assert (tmp_path / "png2" / "winnings.png").stat().st_size > (tmp_path / "png" / "winnings.png").stat().st_size
    blocker = tmp_path / "a-file"
    blocker.write_text("kept")  # an --out below a file cannot be made: was a bare OSError naming no option
    assert main(["eval", "plot", str(tmp_path), "--out", str(blocker / "png")]) == 2
    assert f"--out {blocker / 'png'}: cannot make the folder ({blocker} is a file, not a folder)" in capsys.readouterr().err
    (tmp_path / "expected-0000000.json").write_text("[NaN" + ", 1.0" * 39 + "]")  # drawn as a gap before
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path / "png3")]) == 2
    assert "expected-0000000.json: not an LBR chunk (a value is nan)" in capsys.readouterr().err


def test_plot_of_a_stopped_lbr_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run stopped before its end has no result.json: its run.json names the game; with
    neither, the message says to give --game."""
    (tmp_path / "lbr-0000000.json").write_text(json.dumps([1.0, -2.0, 3.0, 0.5] * 10))
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path / "png")]) == 2
    assert "neither result.json nor run.json names the game: give --game" in capsys.readouterr().err
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path / "png"), "--game", "leduc"]) == 0
    (tmp_path / "run.json").write_text(json.dumps({"game": "leduc-limit", "bot": "call", "setting": "fc/fc"}))
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path / "png2")]) == 0
    assert (tmp_path / "png2" / "winnings.png").stat().st_size > 0


def test_plot_refuses_bad_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "plot", str(tmp_path / "nope"), "--out", str(tmp_path)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "no dealer logs" in capsys.readouterr().err
    (tmp_path / "x.log").write_text("# name/game/hands/seed x leduc 2 0\nSTATE:0:cc/cc:Kh|Qh/As:oops:a|b\n")
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "x.log:2: not a dealer STATE line" in capsys.readouterr().err
    # payoffs float() reads but no dealer writes: plotted without a word before
    for payoffs, problem in (("nan|nan", "a payoff is not a finite number"), ("inf|-inf", "a payoff is not a finite number"),
                             ("100|100", "the payoffs do not sum to 0")):  # fmt: skip
        (tmp_path / "x.log").write_text(f"# name/game/hands/seed x leduc 2 0\nSTATE:0:cc/cc:Kh|Qh/As:{payoffs}:a|b\n")
        assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path)]) == 2
        assert f"x.log:2: not a dealer STATE line ({problem})" in capsys.readouterr().err


def test_strategy_grids_of_the_hunl_bot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.agent.test_hunl_bot import FAST

    (tmp_path / "logs").mkdir()
    assert main(["match", "hunl", "3", "call", "random", "--seed", "1", "--log-dir", str(tmp_path / "logs")]) == 0
    cfg = tmp_path / "fast.yaml"
    cfg.write_text(FAST)
    capsys.readouterr()
    code = main(["eval", "plot", str(tmp_path / "logs"), "--out", str(tmp_path / "png"), "--grid", "r300", "--config", str(cfg)])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "png" / "grid-r300.png").read_bytes()[:4] == b"\x89PNG"
    assert (
        main(["eval", "plot", str(tmp_path / "logs"), "--out", str(tmp_path / "png"), "--grid", "cc/", "--config", str(cfg)]) == 2
    )
    assert "pre-flop lines only" in capsys.readouterr().err


def test_strategy_grids_of_the_blueprint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "logs").mkdir()
    assert main(["match", "hunl", "2", "call", "random", "--seed", "1", "--log-dir", str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    for line in ("", "cr300"):  # the first decision; the small blind after its own limp (its range by Bayes' rule)
        argv = ["eval", "plot", str(tmp_path / "logs"), "--out", str(tmp_path / "png"), "--grid", line, "--grid-bot", "blueprint"]
        assert main(argv) == 0, capsys.readouterr().err
        name = f"grid-{line or 'first'}.png"
        assert (tmp_path / "png" / name).read_bytes()[:4] == b"\x89PNG"


def _log(path: Path, lines: list[str]) -> Path:
    path.write_text("# name/game/hands/seed x leduc 2 0\n" + "\n".join(lines) + "\n")
    return path


def test_dealer_log_values_follow_each_hands_seat_order(tmp_path: Path) -> None:
    # the dealer lists values and names in each hand's seat order, which alternates
    log = _log(tmp_path / "m.log", ["STATE:0:f:Kh|Qh:-50|50:bot|call", "STATE:1:cc/r300f:Kh|Qh:300|-300:call|bot"])
    game, players, hands, values = read_dealer_log(log)
    assert (game, players, hands) == ("leduc", ("bot", "call"), [0, 1])
    assert values.tolist() == [[-50, 50], [-300, 300]]
    _log(log, ["STATE:0:f:Kh|Qh:-50|50:bot|call", "STATE:1:f:Kh|Qh:-50|50:bot|other"])
    with pytest.raises(ValueError, match="m.log:3: players bot, other"):
        read_dealer_log(log)


def test_pooled_matches_are_plotted_per_seating_and_duplicate(tmp_path: Path) -> None:
    logs = [
        _log(tmp_path / "a.log", ["STATE:0:f:Kh|Qh:-50|50:bot|call", "STATE:1:f:Kh|Qh:-50|50:call|bot"]),
        _log(tmp_path / "a.swapped.log", ["STATE:0:f:Kh|Qh:-50|50:call|bot", "STATE:1:f:Kh|Qh:-50|50:bot|call"]),
        _log(tmp_path / "b.log", ["STATE:0:f:Kh|Qh:-100|100:bot|call"]),
        _log(tmp_path / "b.swapped.log", ["STATE:0:f:Kh|Qh:400|-400:call|bot"]),
    ]
    game, series, matches = match_series(logs)
    assert (game, matches) == ("leduc", 2)
    assert series["bot (seat 1)"].tolist() == [-50, 50, -100]
    assert series["bot (seat 2, swapped)"].tolist() == [50, -50, -400]
    assert series["bot duplicate"].tolist() == [0, 0, -250]
    assert match_series(logs, "call")[1]["call (seat 2)"].tolist() == [50, -50, 100]
    with pytest.raises(ValueError, match="no player named 'nobody'"):
        match_series(logs, "nobody")


def test_a_folder_mixing_games_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Leduc match's logs and a hold'em match's in one folder are not one sample: eval plot and
    eval aivat-log refuse it, naming the folder and each game's logs."""
    import shutil

    for game in ("leduc", "hunl"):
        assert main(["match", game, "3", "call", "random", "--progress", "0", "--log-dir", str(tmp_path / game)]) == 0
    pool = tmp_path / "pool"
    pool.mkdir()
    for game in ("leduc", "hunl"):
        shutil.copy(tmp_path / game / f"{game}.call.vs.random.s0.log", pool)
    capsys.readouterr()
    expected = (
        f"{pool}: its dealer logs are of 2 games (hunl: hunl.call.vs.random.s0.log; leduc: leduc.call.vs.random.s0.log); "
        "give a folder holding one game's logs"
    )
    assert main(["eval", "plot", str(pool), "--out", str(tmp_path / "png")]) == 2
    assert capsys.readouterr().err.strip() == f"deepstack eval plot: error: {expected}"
    assert not (tmp_path / "png").exists()
    assert main(["eval", "aivat-log", str(pool), "--player", "call"]) == 2
    assert capsys.readouterr().err.strip() == f"deepstack eval aivat-log: error: {expected}"
    assert main(["eval", "aivat-log", str(tmp_path / "hunl"), "--player", "call"]) == 0  # one game: fine
    assert "(95% CI" in capsys.readouterr().out


def test_a_duplicate_whose_second_half_never_began_is_still_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The second seating aborted before its first hand leaves a header-only log: the first
    seating is drawn, the empty log named and left out; the dealer's limit is read from the log."""
    logs = tmp_path / "logs"
    argv = ["match", "leduc", "6", "random", "call", "--duplicate", "--t_per_hand", "5000", "--log-dir", str(logs)]
    assert main(argv) == 0
    (swapped,) = logs.glob("*.swapped.log")
    swapped.write_text("".join(line for line in swapped.read_text().splitlines(keepends=True) if line.startswith("#")))
    capsys.readouterr()
    assert main(["eval", "plot", str(logs), "--out", str(tmp_path / "png")]) == 0
    assert f"{swapped}: no hands played, left out" in capsys.readouterr().err
    assert dealer_limit_ms(sorted(logs.glob("*.log"))) == 5000.0
    swapped.unlink()
    (first,) = logs.glob("*.log")
    first.write_text("".join(line for line in first.read_text().splitlines(keepends=True) if line.startswith("#")))
    assert main(["eval", "plot", str(logs), "--out", str(tmp_path / "png2")]) == 2
    assert "no hands played" in capsys.readouterr().err


@pytest.mark.parametrize("values", [[], [125.0]])
def test_lbr_chunks_with_fewer_than_two_hands_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], values: list[float]
) -> None:
    """No interval from one hand (the legend would say ± 0), nothing at all from none."""
    (tmp_path / "lbr-0000000.json").write_text(json.dumps(values))
    (tmp_path / "run.json").write_text(json.dumps({"game": "leduc", "bot": "call"}))
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path / "png")]) == 2
    err = capsys.readouterr().err
    assert "fewer than 2 hands to draw" in err and "Traceback" not in err
    assert not (tmp_path / "png" / "winnings.png").exists()


def test_a_grid_that_cannot_be_drawn_is_refused_before_any_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--grid on a Leduc match wrote winnings.png and think.png, then exited 2 with '13x13 grids are for
    hold'em': the line is checked with the game before anything is written (here a match and an LBR folder)."""
    logs, lbr = tmp_path / "logs", tmp_path / "lbr"
    assert main(["match", "leduc", "2", "call", "random", "--seed", "1", "--log-dir", str(logs)]) == 0
    lbr.mkdir()
    (lbr / "lbr-0000000.json").write_text(json.dumps([1.0, -2.0, 3.0, 0.5]))
    (lbr / "run.json").write_text(json.dumps({"game": "leduc", "bot": "call", "setting": "fcp/fcp"}))
    for source in (logs, lbr):
        capsys.readouterr()
        out = tmp_path / f"png-{source.name}"
        assert main(["eval", "plot", str(source), "--out", str(out), "--grid", "cr300"]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [
            "deepstack eval plot: error: grid for 'cr300': 13x13 grids are for hold'em"
        ]
        assert not out.exists()


def test_think_time_labels_keep_a_fraction_below_10_ms() -> None:
    """A cached pre-flop answer's p95 of 0.3 ms was labelled "p95 0 ms" under its box."""
    from agent.evaluation.plots import _ms

    assert _ms(0.3) == "0.3 ms" and _ms(4.96) == "5.0 ms" and _ms(1197.5) == "1198 ms"
