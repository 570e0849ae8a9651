"""The import contract of the layers (``[tool.importlinter]`` in pyproject.toml), checked by
``lint-imports``: inside ``agent`` each package imports only the packages below it
(cli > evaluation | training > bots > resolving > leaves > nets > solver), ``native`` imports
nothing of ours, ``protocol`` never imports ``agent``, and no modules or packages import each
other in a cycle. An upward import or a cycle fails this test with lint-imports' report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_imports_follow_the_layers() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.fail(f"{exe} not found: install the test extra (pip install -e '.[test]')")
    result = subprocess.run([str(exe), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
