"""``deepstack eval plot``: pictures from real match logs and LBR outputs; bad input is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main


def test_plot_of_a_duplicate_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs, out = tmp_path / "logs", tmp_path / "png"
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("bot:\n  leduc:\n    iterations: 30\n")
    argv = ["match", "leduc", "30", "deepstack", "random", "--duplicate", "--seed", "4", "--log-dir", str(logs), "--config", str(cfg)]
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


def test_plot_refuses_bad_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "plot", str(tmp_path / "nope"), "--out", str(tmp_path)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "no dealer logs" in capsys.readouterr().err
    (tmp_path / "x.log").write_text("# name/game/hands/seed x leduc 2 0\nSTATE:0:cc/cc:Kh|Qh/As:oops:a|b\n")
    assert main(["eval", "plot", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "x.log:2: not a dealer STATE line" in capsys.readouterr().err


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
    assert main(["eval", "plot", str(tmp_path / "logs"), "--out", str(tmp_path / "png"), "--grid", "cc/", "--config", str(cfg)]) == 2
    assert "pre-flop lines only" in capsys.readouterr().err
