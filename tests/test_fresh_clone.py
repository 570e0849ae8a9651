"""The repository stands alone: a fresh clone into an empty folder, with nothing beside it,
installs with the README's command and passes the README's test command. Slow (a clean install
and the whole default suite): ``python -m pytest -m slow -k fresh_clone``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> tuple[str, str]:
    """The README's two commands: install-and-play, then the tests."""
    blocks = re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(), flags=re.S)
    install, test = blocks[0].strip(), blocks[1].strip()
    assert "pip install" in install and "pytest" in test
    return install, test


@pytest.mark.slow
def test_fresh_clone_passes_the_readme_test_command(tmp_path: Path) -> None:
    clone = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo"]  # nothing beside it
    install, test = _readme_commands()
    install = install.split(" && deepstack ")[0]  # the install part; the match is README's main job, not a test
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(Path(sys.executable).parent)))
    run = subprocess.run(
        ["bash", "-c", f"{install} && {test} -x -p no:cacheprovider"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    tail = run.stdout[-6000:] + "\n--- stderr ---\n" + run.stderr[-2000:]
    assert run.returncode == 0, tail
    assert re.search(r"\d+ passed", run.stdout[-2000:]), tail
