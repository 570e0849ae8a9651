"""Shared fixtures: the test data inside the repository (``tests/data``) and the shipped games."""

from __future__ import annotations

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
