"""A solver iteration's kernel calls recorded once and replayed by one C call per iteration.

The ~50 Python calls of an alternating iteration were half of a river spot's solve time
(docs/benchmarks.md): :class:`IterationProgram` records the calls once, their pointers fixed,
and ``ds_cfr_program`` (native/src/cfr_program.c) runs them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from native.kernel_args import OK, ffi, lib, thread_count

__all__ = ["IterationProgram"]


class IterationProgram:
    """A list of kernel calls replayed by one C call (``ds_cfr_program``, native/src/cfr_program.c).

    Built by :meth:`native.solver_kernels.SolverKernels.iteration_program`; :meth:`run` takes the iteration's
    averaging weight and regret discounts. The pointers are fixed when the ops are added:
    the program holds whatever they point into."""

    def __init__(self, threads: int) -> None:
        self.threads = thread_count(threads)
        self._ops: list[tuple[int, tuple[int, ...], tuple[Any, ...]]] = []
        self._names: list[str] = []
        self._keep: list[Any] = []
        self._array: Any = None
        self._failed = ffi.new("int64_t *")
        self._marks: dict[Any, int] = {}

    def hold(self, x: Any) -> Any:
        """Keep ``x`` alive as long as the program (its pointers may point into it); returns ``x``."""
        self._keep.append(x)
        return x

    def keep(self, x: Any) -> None:
        """Keep ``x`` alive as long as the program: an owner of memory the ops point into."""
        self._keep.append(x)

    def add(self, name: str, op: int, ints: Sequence[int], ptrs: Sequence[Any], keep: Any = None) -> None:
        """Append one kernel call (``lib.DS_OP_*``, its sizes and pointers); ``name`` labels its errors."""
        if len(ints) > 6 or len(ptrs) > 8:
            raise ValueError(f"{name}: an op has at most 6 integers and 8 pointers")
        self._ops.append((op, tuple(int(i) for i in ints), tuple(ptrs)))
        self._names.append(name)
        if keep is not None:
            self._keep.append(keep)
        self._array = None

    def mark(self, key: Any) -> None:
        """Name the point after the ops added so far (see :meth:`segments`)."""
        self._marks[key] = len(self._ops)

    def segments(self, hooks: dict[Any, Callable[[float], None]]) -> list[tuple[int, int, Callable[[float], None] | None]]:
        """The program cut at the marks that have hooks: ``(first op, end, hook or None)`` in
        order, for :meth:`run` over each range followed by its hook."""
        cuts = sorted((self._marks[key], i, hook) for i, (key, hook) in enumerate(hooks.items()))
        out: list[tuple[int, int, Callable[[float], None] | None]] = []
        lo = 0
        for at, _, hook in cuts:
            out.append((lo, at, hook))
            lo = at
        out.append((lo, len(self._ops), None))
        return out

    def __len__(self) -> int:
        return len(self._ops)

    def _built(self) -> Any:
        if self._array is None:
            arr = ffi.new("ds_op[]", max(1, len(self._ops)))
            for i, (op, ints, ptrs) in enumerate(self._ops):
                arr[i].op = op
                for k, v in enumerate(ints):
                    arr[i].n[k] = v
                for k, v in enumerate(ptrs):
                    arr[i].p[k] = ffi.cast("void *", v)
            self._array = arr
        return self._array

    def run(self, w: float = 0.0, pos: float = 1.0, neg: float = 1.0, lo: int = 0, hi: int | None = None) -> None:
        """Ops ``lo`` to ``hi`` (default: all) once, in order (AVERAGE and ADD_ROWS with weight
        ``w``, skipped when it is not positive; REGRETS_STRATEGY discounting by ``pos`` / ``neg``)."""
        hi = len(self._ops) if hi is None else hi
        if not 0 <= lo <= hi <= len(self._ops):
            raise ValueError(f"ops {lo}..{hi} out of range 0..{len(self._ops)}")
        if lo == hi:
            return
        code = lib.ds_cfr_program(self._built() + lo, hi - lo, float(w), float(pos), float(neg), self.threads, self._failed)
        if code != OK:
            i = lo + int(self._failed[0])
            what = self._names[i] if 0 <= i < len(self._names) else "program"
            raise ValueError(f"{what} (op {i}): C kernel returned {code} (index out of range or bad sizes)")
