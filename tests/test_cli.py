"""The installed ``deepstack`` entry point, its subcommands' help, and the dealer as a process."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SUBCOMMANDS = ["play", "match", "dealer"]


def deepstack() -> list[str]:
    exe = shutil.which("deepstack") or str(Path(sys.executable).parent / "deepstack")
    return [exe] if Path(exe).exists() else [sys.executable, "-m", "agent.cli"]


def test_top_level_help_lists_subcommands() -> None:
    out = subprocess.run(deepstack() + ["--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for name in SUBCOMMANDS:
        assert name in out.stdout


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommand_has_help(name: str) -> None:
    out = subprocess.run(deepstack() + [name, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "usage:" in out.stdout


def test_dealer_process_with_two_play_processes(tmp_path: Path) -> None:
    dealer = subprocess.Popen(
        deepstack() + ["dealer", "m", "leduc-limit", "50", "9", "A", "B", "-q", "--log-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert dealer.stdout is not None
    ports = dealer.stdout.readline().split()
    assert len(ports) == 2 and all(p.isdigit() for p in ports)
    players = [
        subprocess.Popen(
            deepstack() + ["play", "--game", "leduc-limit", "--bot", bot, "--port", port],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for bot, port in zip(["random", "call"], ports)
    ]
    outs = [p.communicate(timeout=60) for p in players]
    out, err = dealer.communicate(timeout=60)
    assert dealer.returncode == 0, err
    assert out.startswith("SCORE:") and out.strip().endswith(":A|B")
    for p, (o, e) in zip(players, outs):
        assert p.returncode == 0, e
        assert "hands=50" in o
    log = (tmp_path / "m.log").read_text().splitlines()
    assert len([l for l in log if l.startswith("STATE:")]) == 50


def test_dealer_refuses_bad_arguments(tmp_path: Path) -> None:
    out = subprocess.run(deepstack() + ["dealer", "m", "nope.game", "10", "1", "A", "B"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "ERROR: could not read game nope.game" in out.stderr
    out = subprocess.run(deepstack() + ["dealer", "m", "hunl", "10", "1", "A"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "2 player names needed" in out.stderr
    out = subprocess.run(deepstack() + ["dealer", "m", "hunl", "10", "1", "A", "B", "-p", "1,x"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "bad port string" in out.stderr


def test_play_reports_connection_failure() -> None:
    out = subprocess.run(
        deepstack() + ["play", "--game", "hunl", "--bot", "call", "--port", "1", "--config", "/nonexistent.yaml"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "no such config file" in out.stderr
