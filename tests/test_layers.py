"""The import contract of the layers (``[tool.importlinter]`` in pyproject.toml), checked by
``lint-imports``: inside ``agent`` each package imports only the packages below it
(cli > evaluation | training > bots > resolving | blueprint > leaves > nets > solver > common), ``native`` imports
nothing of ours, ``protocol`` never imports ``agent``, and no modules or packages import each
other in a cycle. An upward import or a cycle fails this test with lint-imports' report. The pages
that map the code for a newcomer stay current: docs/layers.md is the import graph's output and
docs/parts.md names every module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import run_venv_tool

ROOT = Path(__file__).resolve().parent.parent


def test_imports_follow_the_layers() -> None:
    result = run_venv_tool("lint-imports", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_layers_page_is_the_import_graph_of_the_code() -> None:
    out = subprocess.run([sys.executable, "scripts/import_graph.py"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (ROOT / "docs" / "layers.md").read_text(), (
        "docs/layers.md is stale: python scripts/import_graph.py > docs/layers.md"
    )


def test_parts_page_names_every_module() -> None:
    page = (ROOT / "docs" / "parts.md").read_text()
    modules = [
        p.relative_to(ROOT).as_posix()
        for top in ("agent", "protocol", "native", "models")
        for p in sorted((ROOT / top).rglob("*.py"))
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    ]
    missing = [m for m in modules if f"`{m}`" not in page]
    assert not missing, f"docs/parts.md does not name: {', '.join(missing)}"
