"""Worker pools stopped by Ctrl-C or SIGTERM: nothing of the pool outlives the interrupt."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from agent.common.workers import worker_pool


@pytest.mark.parametrize("kill_workers", [False, True])
def test_an_interrupt_stops_the_workers_and_the_pools_thread(kill_workers: bool) -> None:
    """The pool's manager thread must be gone when the interrupt leaves the pool: left running,
    the interpreter's exit wakes it through a pipe it may be closing, a traceback after the clean
    message (SIGTERM to the group kills the workers under it: ``kill_workers``)."""
    before = set(threading.enumerate())
    with pytest.raises(KeyboardInterrupt), worker_pool(2) as pool:
        futures = [pool.submit(time.sleep, 30) for _ in range(4)]
        processes = list(pool._processes.values())
        while not any(f.running() for f in futures):
            time.sleep(0.01)
        if kill_workers:
            for process in processes:
                os.kill(process.pid, signal.SIGTERM)
        raise KeyboardInterrupt
    assert not any(process.is_alive() for process in processes)
    assert [t.name for t in set(threading.enumerate()) - before if t.is_alive()] == []


def _mark_and_sleep(path: str) -> None:
    Path(path).touch()
    time.sleep(20)


def test_workers_die_of_sigterm_whatever_handler_the_parent_had(tmp_path: Path) -> None:
    """A library's SIGTERM handler in the parent (ray.init installs one) is inherited by forked
    workers; one that does not exit left them running, and the stop waited for every queued task
    (60 s a test after the Ray test ran in the same process). Workers put SIGTERM's default back."""

    def carry_on(signum: int, frame: object) -> None:
        pass

    previous = signal.signal(signal.SIGTERM, carry_on)
    try:
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt), worker_pool(2) as pool:
            for n in range(6):
                pool.submit(_mark_and_sleep, str(tmp_path / f"task-{n}"))
            processes = list(pool._processes.values())
            while len(list(tmp_path.glob("task-*"))) < 2:  # both workers past their start, in a task
                time.sleep(0.01)
            raise KeyboardInterrupt
        assert time.monotonic() - start < 8  # not a timing claim: a worker that went on takes 20 s or more
        assert [p.exitcode for p in processes] == [-signal.SIGTERM] * 2
    finally:
        signal.signal(signal.SIGTERM, previous)


def _ignored_signals(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return int(line.split()[1], 16)
    raise AssertionError("no SigIgn line")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_spawned_workers_ignore_ctrl_c_from_their_start() -> None:
    """A spawned worker imports the product for seconds before its start function ignores Ctrl-C; a
    Ctrl-C then (a campaign stopped as it starts) printed each worker's import traceback. The workers
    now exist when the pool is handed out, ignoring SIGINT from birth; the parent's handler is back."""
    import multiprocessing

    handler = signal.getsignal(signal.SIGINT)
    with worker_pool(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        processes = list(pool._processes.values())
        assert len(processes) == 2 and signal.getsignal(signal.SIGINT) is handler
        assert all(_ignored_signals(p.pid) & (1 << (signal.SIGINT - 1)) for p in processes)
