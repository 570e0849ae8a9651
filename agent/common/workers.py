"""Process pools whose workers leave Ctrl-C to their parent.

LBR's chunks and the campaign's solves run in worker processes for hours. A terminal's Ctrl-C
reaches every process of the group: left alone, each worker would print a traceback of its own
and the parent would wait for the work in flight (minutes per chunk). Here the workers ignore it
(held back until they can) and the parent stops them at once; their unfinished work is redone
when the run resumes."""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import forkserver, resource_tracker
from multiprocessing.context import BaseContext
from types import FrameType
from typing import Any

from tqdm import tqdm


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # held back since birth: ignored now, a Ctrl-C held back is dropped
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    # SIGTERM kills a worker, whatever handler the parent had when it forked (with Ray's, once ray.init
    # ran in the process, the workers lived on after terminate(): each stop waited for their tasks)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # a worker's progress bars (off) share no lock with other processes: tqdm's default is a named
    # semaphore, which a worker stopped by SIGTERM left behind, and the resource tracker then warned
    # "There appear to be N leaked semaphore objects" under the clean "interrupted" line
    tqdm.set_lock(threading.RLock())
    if initializer is not None:
        initializer(*initargs)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool now, dropping the work in flight (``shutdown`` alone waits for it).

    The pool's manager thread is joined too: left running, it races the interpreter's exit, which
    wakes it through a pipe it may be closing (SIGTERM to the group kills the workers under it),
    a "Bad file descriptor" traceback after the clean message (CPython gh-125451: 3.11's wake-up pipe has no lock)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public way before 3.14
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown(wait=False) forgets it
    try:
        pool.shutdown(wait=False, cancel_futures=True)
    except OSError:  # the same race: the manager closed its wake-up pipe as the workers died
        pass
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=10)
        if process.is_alive():  # a worker that outlives SIGTERM (a handler of its own) does not outlive this
            process.kill()
            process.join()
    if manager is not None:
        manager.join(timeout=30)  # it ends once it sees the workers gone


def _ready() -> None:
    """A worker's first task: none (submitted to start the worker)."""


def _start_holding_ctrl_c(pool: ProcessPoolExecutor, workers: int, mp_context: BaseContext | None) -> None:
    """Start every worker now with Ctrl-C held back from its birth: a spawned worker imports the product
    for seconds before :func:`_start_worker` runs, and a Ctrl-C then printed an import traceback.

    SIGINT is blocked in this thread meanwhile (a blocked signal stays blocked across the exec), and
    a Ctrl-C of those instants, whichever thread the kernel gives it to (a progress bar's, torch's),
    is only recorded, then acted on once the workers all exist: ignoring it, as before, lost it, and
    raising it inside ``submit`` could leave a started worker the pool did not know of yet. (A
    forkserver's workers are the server's forks: this mask is not theirs, only kept from the server.)"""
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may set handlers; such pools start their workers on demand
    if not hasattr(signal, "pthread_sigmask"):  # no signal masks (Windows): ignored there while they start
        ignoring = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            _start_all(pool, workers)
        finally:
            signal.signal(signal.SIGINT, ignoring)
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the caller's own
    method = (mp_context or multiprocessing.get_context()).get_start_method()
    if method == "forkserver":  # started inside the window, the server would pass the block to every later child
        forkserver.ensure_running()
    elif method == "spawn":  # the stdlib's resource tracker unblocks SIGINT the first time it starts
        resource_tracker.ensure_running()
    previous = signal.getsignal(signal.SIGINT)  # None: a handler not set from Python, left as it is
    pressed: list[FrameType | None] = []
    if previous is not None:
        signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(frame))
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        _start_all(pool, workers)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C held back is recorded as the block lifts
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if pressed:  # what the caller's handler would have done with it
        if callable(previous):
            previous(signal.SIGINT, pressed[0])  # Python's default raises KeyboardInterrupt
        elif previous == signal.SIG_DFL:
            stop_workers(pool)  # dying of it next: no worker left behind
            signal.raise_signal(signal.SIGINT)


def _start_all(pool: ProcessPoolExecutor, workers: int) -> None:
    for _ in range(workers):  # a pool starts a worker per task while none is idle
        pool.submit(_ready)


@contextmanager
def worker_pool(
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    mp_context: BaseContext | None = None,
) -> Iterator[ProcessPoolExecutor]:
    """A :class:`ProcessPoolExecutor` of ``workers`` processes (``initializer`` runs in each, as
    there) that a KeyboardInterrupt in the parent stops without waiting; the interrupt goes on."""
    with ProcessPoolExecutor(workers, mp_context, _start_worker, (initializer, initargs)) as pool:
        try:
            _start_holding_ctrl_c(pool, workers, mp_context)
            yield pool
        except KeyboardInterrupt:
            stop_workers(pool)
            raise
