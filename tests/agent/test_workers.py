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


def _sigint_in(pid: int, field: str) -> bool:
    """Whether SIGINT is in a process's ``SigIgn`` / ``SigBlk`` set (its main thread's, for the mask)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    raise AssertionError(f"no {field} line")


def _sigint_ignored(_: int) -> bool:
    return _sigint_in(os.getpid(), "SigIgn") and not _sigint_in(os.getpid(), "SigBlk")


def _sigint_blocked(_: int) -> bool:
    return _sigint_in(os.getpid(), "SigBlk")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("method", ["spawn", "fork", "forkserver"])
def test_workers_hold_back_ctrl_c_from_their_start_then_ignore_it(method: str) -> None:
    """A spawned worker imports the product for seconds before its start function ignores Ctrl-C; a
    Ctrl-C then (a campaign stopped as it starts) printed each worker's import traceback. The workers
    now exist when the pool is handed out, SIGINT held back (blocked) or ignored from birth, then
    ignored and no longer blocked; the parent's handler and mask are as they were."""
    import multiprocessing

    handler = signal.getsignal(signal.SIGINT)
    with worker_pool(2, mp_context=multiprocessing.get_context(method)) as pool:
        processes = list(pool._processes.values())
        assert len(processes) == 2 and signal.getsignal(signal.SIGINT) is handler
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
        if method != "forkserver":  # (its children are the server's forks: this process's mask is not theirs)
            assert all(_sigint_in(p.pid, "SigIgn") or _sigint_in(p.pid, "SigBlk") for p in processes)
        assert list(pool.map(_sigint_ignored, range(8))) == [True] * 8
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, multiprocessing.get_context(method)) as plain:  # a forkserver started in the
        assert not plain.submit(_sigint_blocked, 0).result()  # window passed the block to every later child


@pytest.mark.parametrize("method", ["spawn", "fork"])
@pytest.mark.parametrize("to", ["this thread", "the process"])
def test_a_ctrl_c_while_the_workers_start_stops_the_pool(method: str, to: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C was ignored in the parent while its workers were started: one pressed then was lost and
    the run went on. It is held back now, and raised once they all exist: the pool stops, nothing left.
    A terminal's Ctrl-C goes to the process, and the kernel gives it to a thread that does not block it
    (a progress bar's monitor): raised there inside ``submit``, it could orphan a worker being started."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from agent.common import workers

    made: list[ProcessPoolExecutor] = []
    started: list[multiprocessing.process.BaseProcess] = []

    class CtrlCAtTheFirstWorker(ProcessPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            if fn is workers._ready and not made:
                made.append(self)
                if to == "this thread":
                    signal.raise_signal(signal.SIGINT)
                else:  # as the terminal's: another thread, which does not block it, takes it at once
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.2)
            future = super().submit(fn, *args, **kwargs)
            started.extend(p for p in self._processes.values() if p not in started)
            return future

    monkeypatch.setattr(workers, "ProcessPoolExecutor", CtrlCAtTheFirstWorker)
    # Python's own handler, as in a terminal: a suite started in the background (`pytest &` from a script)
    # inherits SIGINT ignored, and a Ctrl-C the caller ignores is dropped by design
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = set(threading.enumerate())
    done = threading.Event()
    other = threading.Thread(target=done.wait, name="not blocking SIGINT")
    other.start()
    handed_out = False
    try:
        with pytest.raises(KeyboardInterrupt), worker_pool(2, mp_context=multiprocessing.get_context(method)):
            handed_out = True
    finally:
        done.set()
        other.join()
        signal.signal(signal.SIGINT, previous)
    assert made and not handed_out  # raised, not lost
    assert len(started) == 2  # once both workers existed, not inside a submit
    assert not any(process.is_alive() for process in started)
    assert [t.name for t in set(threading.enumerate()) - before if t.is_alive()] == []


def test_workers_stopped_mid_task_leave_no_semaphore_warning(tmp_path: Path) -> None:
    """Each worker's (disabled) progress bar made tqdm's lock, a named semaphore; the workers stopped by
    SIGTERM never released theirs, and at exit the resource tracker printed "There appear to be 2 leaked
    semaphore objects" under a campaign's clean "interrupted" line."""
    import subprocess
    import sys

    script = tmp_path / "stopped.py"
    script.write_text(
        "import multiprocessing, time\n"
        "from tqdm import tqdm\n"
        "from agent.common.workers import stop_workers, worker_pool\n"
        "def task(path):\n"
        "    tqdm(disable=True)\n"
        "    open(path, 'w').close()\n"
        "    time.sleep(30)\n"
        "if __name__ == '__main__':\n"
        "    with worker_pool(2, mp_context=multiprocessing.get_context('spawn')) as pool:\n"
        f"        for n in range(2): pool.submit(task, {str(tmp_path)!r} + f'/task-{{n}}')\n"
        f"        while len(list(__import__('pathlib').Path({str(tmp_path)!r}).glob('task-*'))) < 2: time.sleep(0.05)\n"
        "        stop_workers(pool)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0 and len(list(tmp_path.glob("task-*"))) == 2, run.stderr
    assert "leaked" not in run.stderr, run.stderr
