"""Freed heap memory goes back to the system (glibc), so long matches keep a flat footprint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.bots.heap import _malloc_trim, release_free_memory


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS line")


@pytest.mark.skipif(_malloc_trim() is None or not Path("/proc/self/status").exists(), reason="glibc on Linux only")
def test_trim_returns_the_holes_of_a_fragmented_heap() -> None:
    """Blocks below glibc's mmap threshold come from the heap; freeing every other one leaves
    holes the heap cannot shrink past, until malloc_trim gives their pages back."""
    rng = np.random.default_rng(0)
    blocks = [np.ones(int(n)) for n in rng.integers(2_000, 12_000, size=6_000)]  # 16-96 KB each, ~330 MB
    del blocks[::2]
    before = _rss_kb()
    assert release_free_memory() is True
    after = _rss_kb()
    assert before - after > 50_000  # more than 50 MB of the ~165 MB freed came back
    del blocks


def test_release_is_safe_to_call_any_time() -> None:
    release_free_memory()
    assert isinstance(release_free_memory(), bool)
