"""Run the C test driver of the native kernels under AddressSanitizer + UBSan.

Python tests cannot see an out-of-bounds read that happens to return plausible data, or
signed overflow; the sanitizers can. Each driver in ``native/tests_c`` is its own program:
``test_hand_eval.c`` walks every five-card hand, random batches of 1..7 cards, invalid and
junk rows, and both 7-card enumerations; ``test_terminal.c`` checks the terminal-value
kernels (``terminal.c``) against slow references; ``test_cfr_kernels.c`` the fused CFR
kernels (``cfr_kernels.c``); ``test_mccfr.c`` the blueprint's MCCFR (``mccfr.c``). They share
``check.h``.
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


def _build_and_run(driver: Path, tmp_path: Path, extra_flags: tuple[str, ...] = (), args: tuple[str, ...] = ()) -> str:
    """Compile one driver (each has its own main) with every kernel source, run it, return stdout."""
    gcc = _gcc()
    if not _can_sanitize(gcc, tmp_path):
        pytest.skip("gcc cannot link -fsanitize=address,undefined here (libasan/libubsan missing)")
    sources = [driver, *sorted(SRC.glob("*.c"))]
    exe = tmp_path / driver.stem
    build = subprocess.run(
        [gcc, *CFLAGS, *SANITIZE, *extra_flags, f"-I{SRC}", *map(str, sources), "-o", str(exe), "-lm"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, f"sanitizer build of {driver.name} failed:\n{build.stderr}"
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    run = subprocess.run([str(exe), *args], check=False, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, f"{driver.name} checks failed (exit {run.returncode}):\n{run.stdout}\n{run.stderr}"
    assert "passed" in run.stdout
    return run.stdout


def test_c_driver_under_address_and_undefined_sanitizers(tmp_path: Path) -> None:
    _build_and_run(TESTS_C / "test_hand_eval.c", tmp_path)


@pytest.mark.parametrize(
    ("flags", "args"),
    [((), ()), (("-DDS_NO_CLONES",), ("--quick",))],
    ids=["dispatched", "baseline-x86-64"],
)
def test_terminal_c_driver_under_address_and_undefined_sanitizers(
    tmp_path: Path, flags: tuple[str, ...], args: tuple[str, ...]
) -> None:
    """Board ranking, fold / showdown / chance-average kernels (scalar and batched) and runout
    equities against O(H^2) references, plus every documented error code. The batched
    kernels exist in an AVX2 and a baseline version; the second run forces the baseline."""
    _build_and_run(TESTS_C / "test_terminal.c", tmp_path, flags, args)


def test_cfr_kernels_c_driver_under_address_and_undefined_sanitizers(tmp_path: Path) -> None:
    """The fused CFR kernels against reference loops (1 and 3 threads, H from 1 to 3000) and
    every out-of-range index they must refuse."""
    out = _build_and_run(TESTS_C / "test_cfr_kernels.c", tmp_path)
    assert "cfr kernels: all checks passed" in out


def test_mccfr_c_driver_under_address_and_undefined_sanitizers(tmp_path: Path) -> None:
    """MCCFR on a three-card game whose answer is known (the best card bets and calls, the worst
    folds), evaluation that leaves the regrets alone, and every malformed tree (a slot whose block
    would overflow the check included) and deal refused before anything runs."""
    out = _build_and_run(TESTS_C / "test_mccfr.c", tmp_path)
    assert "mccfr: all checks passed" in out
