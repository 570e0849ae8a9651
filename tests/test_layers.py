"""The import contract of the layers (``[tool.importlinter]`` in pyproject.toml), checked by
``lint-imports``: inside ``agent`` each package imports only the packages below it
(cli > evaluation | training > bots > resolving > leaves > nets > solver), ``native`` imports
nothing of ours, ``protocol`` never imports ``agent``, and no modules or packages import each
other in a cycle. An upward import or a cycle fails this test with lint-imports' report."""

from __future__ import annotations

from tests.conftest import run_venv_tool


def test_imports_follow_the_layers() -> None:
    result = run_venv_tool("lint-imports", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
