"""The house style (``[tool.ruff]`` in pyproject.toml): ``ruff format`` leaves every file as it
is and ``ruff check`` finds nothing. A failure prints ruff's report; ``ruff format . && ruff check
--fix .`` repairs most of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("ruff")
    if not exe.exists():
        pytest.fail(f"{exe} not found: install the test extra (pip install -e '.[test]')")
    return subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_code_is_formatted() -> None:
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_linter_is_clean() -> None:
    result = _ruff("check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr
