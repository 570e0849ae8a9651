"""Shared fixtures: the test data inside the repository (``tests/data``) and the shipped games."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from protocol.gamedef import Game, load_game

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
#: MATCHSTATE lines captured from the real ACPC dealer.
SAMPLE_MATCHSTATES = DATA / "sample_matchstates.txt"
#: The ACPC game files as the ACPC distribution ships them (``protocol/games`` holds them verbatim).
GAME_FILES = ROOT / "protocol" / "games"
#: The standard solver benchmark spots (the copy the CLI uses by default).
SPOTS = ROOT / "agent" / "cli" / "spots.yaml"


@pytest.fixture(scope="session")
def hunl() -> Game:
    return load_game("hunl")


@pytest.fixture(scope="session")
def hul() -> Game:
    return load_game("hul")


@pytest.fixture(scope="session")
def leduc() -> Game:
    return load_game("leduc")


@pytest.fixture(scope="session")
def leduc_limit() -> Game:
    return load_game("leduc-limit")


def run_venv_tool(name: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a console script of the test environment (``lint-imports``, ``ruff``) in the repository
    root; fail with how to install it when it is missing."""
    exe = Path(sys.executable).with_name(name)
    if not exe.exists():
        pytest.fail(f"{exe} not found: install the test extra (pip install -e '.[test]')")
    return subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def interrupt_when(
    argv: list[str], ready: Callable[[], bool], timeout: float = 120, sig: int = signal.SIGINT
) -> tuple[int, str, bool]:
    """Start ``argv`` in a process group of its own, and once ``ready()`` holds send SIGINT to the
    whole group, as a terminal's Ctrl-C does (or ``sig``); its exit status, its stderr, and whether any process
    of the group (a worker) outlived it by more than a few seconds.

    The child gets SIGINT's default disposition back: a test run started in the background (``nohup
    pytest &``) ignores SIGINT, and children inherit that, so the Ctrl-C would never arrive."""
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()[1]
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
        left = True
        deadline = time.monotonic() + 10  # multiprocessing's resource tracker ends just after its parent
        while left and time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
                time.sleep(0.1)
            except ProcessLookupError:
                left = False
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return proc.returncode, err, left
