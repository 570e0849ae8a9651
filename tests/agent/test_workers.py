"""Worker pools stopped by Ctrl-C or SIGTERM: nothing of the pool outlives the interrupt."""

from __future__ import annotations

import os
import signal
import threading
import time

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
