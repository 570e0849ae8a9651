"""Process pools whose workers leave Ctrl-C to their parent.

LBR's chunks and the campaign's solves run in worker processes for hours. A terminal's Ctrl-C
reaches every process of the group: left alone, each worker would print a traceback of its own
and the parent would wait for the work in flight (minutes per chunk). Here the workers ignore
it and the parent stops them at once; their unfinished work is redone when the run resumes."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.context import BaseContext
from typing import Any


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool now, dropping the work in flight (``shutdown`` alone waits for it)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public way before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()


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
            yield pool
        except KeyboardInterrupt:
            stop_workers(pool)
            raise
