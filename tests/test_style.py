"""The house style (``[tool.ruff]`` in pyproject.toml): ``ruff format`` leaves every file as it
is and ``ruff check`` finds nothing. A failure prints ruff's report; ``ruff format . && ruff check
--fix .`` repairs most of it."""

from __future__ import annotations

from tests.conftest import run_venv_tool


def test_code_is_formatted() -> None:
    result = run_venv_tool("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_linter_is_clean() -> None:
    result = run_venv_tool("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr
