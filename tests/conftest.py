"""Shared fixtures: paths to the shared material beside the checkout, and the shipped games."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.gamedef import Game, load_game

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SAMPLE_MATCHSTATES = SHARED / "acpc" / "sample_matchstates.txt"


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
