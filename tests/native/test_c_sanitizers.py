"""Run the C test driver of the native kernels under AddressSanitizer + UBSan.

Python tests cannot see an out-of-bounds read that happens to return plausible data, or
signed overflow; the sanitizers can. The driver (``native/tests_c``) walks every five-card
hand, random batches of 1..7 cards, invalid and junk rows, and both 7-card enumerations.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "native" / "src"
TESTS_C = ROOT / "native" / "tests_c"
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
CFLAGS = ["-std=c11", "-O1", "-g", "-pthread", "-Wall", "-Wextra"]


def _gcc() -> str:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed, so the C sanitizer build cannot run")
    return gcc


def _can_sanitize(gcc: str, tmp_path: Path) -> bool:
    """Whether this gcc links sanitized programs (libasan / libubsan may be missing)."""
    probe = tmp_path / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    result = subprocess.run(
        [gcc, *SANITIZE, str(probe), "-o", str(tmp_path / "probe")], check=False, capture_output=True, text=True
    )
    return result.returncode == 0


def test_c_driver_under_address_and_undefined_sanitizers(tmp_path: Path) -> None:
    gcc = _gcc()
    if not _can_sanitize(gcc, tmp_path):
        pytest.skip("gcc cannot link -fsanitize=address,undefined here (libasan/libubsan missing)")
    sources = sorted(TESTS_C.glob("*.c")) + sorted(SRC.glob("*.c"))
    exe = tmp_path / "test_native_c"
    build = subprocess.run(
        [gcc, *CFLAGS, *SANITIZE, f"-I{SRC}", *map(str, sources), "-o", str(exe), "-lm"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, f"sanitizer build failed:\n{build.stderr}"
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    run = subprocess.run([str(exe)], check=False, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, f"C checks failed (exit {run.returncode}):\n{run.stdout}\n{run.stderr}"
    assert "passed" in run.stdout
