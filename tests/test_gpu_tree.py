"""The working tree a GPU window sends must fit the device's 64 MiB once ``scripts/gpu-tree.sh
aside`` has moved ``scripts/gpu-aside.txt``'s paths out, and those paths must not be what the
window runs on (the HUNL bot's networks, the campaign's starting networks, the CUDA tests' ones)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 64 * 2**20
#: cffi, pycparser, structlog and eval7 as wheels (.whl/) travel beside the tree: 1.0 MiB for the
#: device's Python 3.12 (`pip download --only-binary=:all: --python-version 3.12 ...`, 2026-12-02),
#: twice that allowed
WHEELS = 2 * 2**20


def _aside() -> list[str]:
    lines = (ROOT / "scripts" / "gpu-aside.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the device sends a checkout's tracked files")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def test_the_tree_without_the_aside_paths_fits_the_device() -> None:
    aside = _aside()
    tracked = _tracked()
    for prefix in aside:
        assert any(_under(p, prefix) for p in tracked), f"scripts/gpu-aside.txt: {prefix} is not tracked (stale line)"
    kept = sum((ROOT / p).stat().st_size for p in tracked if (ROOT / p).exists() and not any(_under(p, a) for a in aside))
    assert kept + WHEELS <= LIMIT, f"{kept / 2**20:.1f} MiB would travel (+ wheels): over the device's 64 MiB"


def test_the_aside_paths_are_not_what_a_gpu_window_runs_on() -> None:
    from agent.bots.config import HoldemBotConfig
    from agent.training.campaign import SHIPPED

    needed = [f.default for f in dataclasses.fields(HoldemBotConfig) if f.metadata.get("path") == "model"]
    # the CUDA tests' Leduc network (agent/cli/bench_parity.py), the bot's start cache, the manifest
    needed += list(SHIPPED.values()) + ["models/leduc/leduc-limit.pt", "models/start/hunl.pkl", "models/manifest.json"]
    for path in needed:
        assert isinstance(path, str)
        assert not any(_under(path, a) for a in _aside()), f"{path} is needed on the device but listed aside"
