"""Shared fixtures: the test data inside the repository (``tests/data``) and the shipped games."""

from __future__ import annotations

import subprocess
import sys
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
