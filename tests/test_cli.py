"""The installed ``deepstack`` entry point, its subcommands' help, and the dealer as a process."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SUBCOMMANDS = ["play", "match", "dealer"]
ROOT = Path(__file__).resolve().parent.parent


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


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, path + (name,))


def test_every_command_and_subcommand_formats_its_help() -> None:
    """All of them, nested ones included (``eval lbr``, ``eval plot``, ...): a stray ``%`` in a
    help string makes ``--help`` crash, for the parent command too."""
    from agent.cli.main import build_parser

    names = []
    for name, parser in _parsers(build_parser()):
        assert "usage:" in parser.format_help(), name
        names.append(name)
    assert {"eval", "eval lbr", "eval plot", "generate", "train", "bench"} <= set(names)


@pytest.mark.parametrize("suite", ["solver", "native", "generate", "resolve"])
def test_each_bench_suite_has_help(suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    from agent.cli.main import BENCHES, main

    assert suite in BENCHES
    with pytest.raises(SystemExit) as exit_:
        main(["bench", suite, "--help"])
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["match", "leduc", "4", "random", "call", "--log-dir", "{file}"],
        ["eval", "lbr", "--game", "leduc", "--bot", "random", "--setting", "fc/fc", "--hands", "4", "--out", "{file}"],
        [
            "generate",
            "--game",
            "leduc",
            "--round",
            "1",
            "--situations",
            "2",
            "--shard-size",
            "2",
            "--iterations",
            "2",
            "--out",
            "{file}",
        ],
    ],
)
def test_an_output_path_that_is_a_file_is_one_line_and_exit_1(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.main import main

    file = tmp_path / "a-file"
    file.write_text("kept")
    assert main([a.replace("{file}", str(file)) for a in argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"deepstack {argv[0]}") and str(file) in err[0]
    assert file.read_text() == "kept"


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
    out = subprocess.run(
        deepstack() + ["dealer", "m", "nope.game", "10", "1", "A", "B"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 1 and "ERROR: could not read game nope.game" in out.stderr
    out = subprocess.run(deepstack() + ["dealer", "m", "hunl", "10", "1", "A"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "2 player names needed" in out.stderr
    out = subprocess.run(
        deepstack() + ["dealer", "m", "hunl", "10", "1", "A", "B", "-p", "1,x"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 1 and "bad port string" in out.stderr


def test_play_reports_connection_failure() -> None:
    out = subprocess.run(
        deepstack() + ["play", "--game", "hunl", "--bot", "call", "--port", "1", "--config", "/nonexistent.yaml"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "no such config file" in out.stderr


def test_container_entrypoint_plays_hunl_with_host_and_port_only(tmp_path: Path) -> None:
    """What `docker run IMAGE --host H --port P` runs: the Dockerfile's entry point with only
    --host/--port, configured through DEEPSTACK_CONFIG as in the image (fast settings here)."""
    import json
    import os

    dockerfile = (ROOT / "Dockerfile").read_text()
    entry = next(l for l in dockerfile.splitlines() if l.startswith("ENTRYPOINT"))
    argv = json.loads(entry.split(None, 1)[1])
    assert argv == ["deepstack", "play"]
    for line in dockerfile.splitlines():  # every file the image copies exists
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src
    cfg = tmp_path / "fast.yaml"
    cfg.write_text(
        "bot:\n  hunl:\n    preflop: {iterations: 3}\n    flop: {iterations: 3}\n"
        "    turn: {iterations: 3}\n    river: {iterations: 3}\n"
    )
    dealer = subprocess.Popen(
        deepstack() + ["dealer", "m", "hunl", "4", "3", "DS", "C", "-q", "--log-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert dealer.stdout is not None
    ports = dealer.stdout.readline().split()
    env = {**os.environ, "DEEPSTACK_CONFIG": str(cfg)}
    bot = subprocess.Popen(
        deepstack() + ["play", "--host", "127.0.0.1", "--port", ports[0]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    caller = subprocess.Popen(
        deepstack() + ["play", "--bot", "call", "--port", ports[1]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = bot.communicate(timeout=300)
    caller.communicate(timeout=60)
    score, _ = dealer.communicate(timeout=60)
    assert bot.returncode == 0, err
    assert "hands=4" in out and score.startswith("SCORE:")
    refused = subprocess.run(
        deepstack() + ["play", "--port", "1", "--device", "cuda"], capture_output=True, text=True, timeout=120, env=env
    )
    if not __import__("torch").cuda.is_available():
        assert refused.returncode == 2 and "no CUDA device" in refused.stderr
