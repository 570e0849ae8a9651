"""Fold and showdown values against a range in O(H) per range (C kernels in ``terminal.c``).

Conventions (hands are rows of ``k`` = 1 or 2 cards, numbered as in :mod:`native.cards`;
the default hand list is the 1326 hold'em hands of :func:`native.cards.holdem_hand_cards`):

* A hand is **blocked** on a board when it shares a card with it. Blocked hands get value 0,
  and a blocked opponent hand never counts, whatever its reach.
* ``fold(h)`` is the opponent's reach mass over the unblocked hands sharing no card with
  ``h``; ``showdown(h)`` is that mass weighted by ``sign(strength(h) - strength(h'))``
  (win minus lose, ties neutral). Both are float32, optionally multiplied by a per-row
  ``scale`` (e.g. the amount at stake).
* :class:`BoardTable` ranks the hands of one board once (strength -1 for blocked hands; the
  order lists the blocked hands first, then the valid ones by ascending strength, ties in a
  fixed but unspecified order). Tables of the hold'em hand list are kept in an LRU cache
  keyed by the sorted board.
* :class:`ShowdownKernel` holds the tables of several boards; one call evaluates many rows
  (ranges), each on its own board. Everything is checked when the kernel is built, so a
  call only checks array types and shapes: this is the fast path for a solver. Inputs are
  C-contiguous float32 numpy arrays (``tensor.numpy()`` of a contiguous CPU tensor works
  without a copy); anything else raises ``ValueError`` rather than being copied silently.
* :class:`ChanceShowdownKernel` averages river showdowns over the next card (e.g. the value of
  each hand on the turn). Normalisation: the next card is uniform over the deck cards that are
  neither on the board nor in either player's hand, so ``value(h) = sum_c showdown_{board+c}(h)
  / (len(deck) - len(board) - 2k)`` (1/44 on a hold'em turn), which is exactly
  ``sum_h' r(h') * E_c[sign(...)]`` for every pair of compatible hands.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from threading import Lock
from typing import Any

import numpy as np
import numpy.typing as npt

from native.board_tables import (
    BoardLike,
    BoardTable,
    HandList,
    as_hand_list,
    c_error,
    check_board,
    check_deck,
)
from native.cards import cards_to_str
from native.evaluator import ffi, lib

if not hasattr(lib, "ds_showdown_rows_packed"):  # pragma: no cover - stale extension
    raise ImportError("native._native predates the terminal kernels; rebuild it with `python native/build_ffi.py`")

_F32 = np.dtype(np.float32)


def _is_single_board(x: Any) -> bool:
    """A non-empty flat sequence of card numbers (rather than a list of boards or tables).

    An empty sequence is an empty list of boards: pass the empty board as ``[()]``.
    """
    if isinstance(x, np.ndarray):
        return x.ndim == 1 and x.size > 0
    return isinstance(x, (tuple, list)) and len(x) > 0 and all(isinstance(c, (int, np.integer)) for c in x)


# --------------------------------------------------------------------------- argument checks
def _float_rows(x: Any, H: int, what: str) -> tuple[np.ndarray, bool]:
    """``x`` as a C-contiguous float32 ``(R, H)`` array (view, no copy); True if it was 1-D."""
    if type(x) is not np.ndarray:
        raise ValueError(f"{what} must be a numpy float32 array, got {type(x).__name__}")
    if x.dtype != np.float32:
        raise ValueError(f"{what} must have dtype float32, got {x.dtype}")
    if not x.flags.c_contiguous:
        raise ValueError(f"{what} must be C-contiguous")
    if x.ndim == 2 and x.shape[1] == H:
        return x, False
    if x.ndim == 1 and x.shape[0] == H:
        return x.reshape(1, H), True
    raise ValueError(f"{what} must have shape (R, {H}) or ({H},), got {x.shape}")


def _row_boards(row_board: Any, R: int, B: int) -> np.ndarray:
    if row_board is None:
        if B != 1:
            raise ValueError(f"row_board is required: the kernel has {B} boards")
        return np.zeros(R, dtype=np.int32)
    if isinstance(row_board, (int, np.integer)):
        rb = np.full(R, int(row_board), dtype=np.int64)
    else:
        rb = np.asarray(row_board)
    if rb.dtype.kind not in "iu":
        raise ValueError(f"row_board must hold integers, got dtype {rb.dtype}")
    if rb.shape != (R,):
        raise ValueError(f"row_board must have shape ({R},) (one board index per row), got {rb.shape}")
    if rb.dtype != np.int32 or not rb.flags.c_contiguous:
        if R and (rb.min() < 0 or rb.max() >= B):
            row = int(np.flatnonzero((rb < 0) | (rb >= B))[0])
            raise ValueError(f"row {row}: board index {int(rb[row])} out of range 0..{B - 1}")
        rb = np.ascontiguousarray(rb, dtype=np.int32)
    return rb


def _scales(scale: Any, R: int) -> Any:
    if scale is None:
        return ffi.NULL
    if isinstance(scale, (int, float, np.floating, np.integer)):
        arr = np.full(R, scale, dtype=np.float32)
    else:
        arr = scale
        if type(arr) is not np.ndarray or arr.dtype != np.float32 or not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(np.asarray(scale, dtype=np.float32))
        if arr.shape != (R,):
            raise ValueError(f"scale must be a number or have shape ({R},), got {arr.shape}")
    return ffi.from_buffer("float[]", arr)


def _output(out: Any, reach: np.ndarray, single: bool, H: int) -> tuple[np.ndarray, np.ndarray]:
    """(out as returned, out as (R, H))."""
    if out is None:
        res = np.empty(reach.shape[0] * H if single else reach.shape, dtype=np.float32)
        return res, res.reshape(reach.shape)
    rows, out_single = _float_rows(out, H, "out")
    if rows.shape != reach.shape:
        raise ValueError(f"out has shape {out.shape}, the reach {reach.shape}")
    if np.may_share_memory(rows, reach):
        raise ValueError("out must not overlap the reach array")
    if not rows.flags.writeable:  # C would write into a read-only buffer (a memory map: a crash)
        raise ValueError("out must be writeable")
    return out, rows


# --------------------------------------------------------------------------- kernels
class ShowdownKernel:
    """Fold and showdown values for rows of ranges, each on one of a fixed list of boards.

    Args:
        hand_cards: the hand list (``None`` = the 1326 hold'em hands), or a :class:`HandList`.
        boards: boards (sequences of card numbers) and/or :class:`BoardTable` objects of the
            same hand list; a single board is accepted too.

    Calls take ``reach`` float32 ``(R, H)`` (or ``(H,)``), ``row_board`` int ``(R,)`` (may be
    omitted with one board), optional ``out`` (float32, same shape, not overlapping ``reach``)
    and optional ``scale`` (a number or float32 ``(R,)``). Rows on the same board are
    evaluated together (several ranges per sweep), so batching rows is much faster.
    """

    def __init__(self, hand_cards: HandList | npt.ArrayLike | None, boards: Any) -> None:
        self.hands = as_hand_list(hand_cards)
        if isinstance(boards, BoardTable) or _is_single_board(boards):
            boards = [boards]
        tables = [b if isinstance(b, BoardTable) else BoardTable(b, self.hands) for b in boards]
        if not tables:
            raise ValueError("a ShowdownKernel needs at least one board")
        for t in tables:
            if t.hands is not self.hands and not np.array_equal(t.hands.cards, self.hands.cards):
                raise ValueError(f"{t!r} was built for another hand list")
        self.tables = tables
        self.boards = [t.board for t in tables]
        self.size = self.hands.size
        self.num_boards = len(tables)
        packed = np.stack([t.table for t in tables])
        packed.setflags(write=False)
        self._packed = packed
        self._packed_ptr = ffi.from_buffer("uint32_t[]", packed)
        valid = np.stack([t.valid for t in tables])
        valid.setflags(write=False)
        self.valid = valid
        self._zeros = np.zeros(64, dtype=np.int32)

    def showdown(self, reach: np.ndarray, row_board: Any = None, out: np.ndarray | None = None, scale: Any = None) -> np.ndarray:
        """``scale[i] * showdown`` of every hand of row ``i`` against ``reach[i]`` on board ``row_board[i]``."""
        return self._run(lib.ds_showdown_rows_packed, reach, row_board, out, scale)

    def fold(self, reach: np.ndarray, row_board: Any = None, out: np.ndarray | None = None, scale: Any = None) -> np.ndarray:
        """``scale[i] * fold mass`` of every hand of row ``i`` (compatible opponent reach)."""
        return self._run(lib.ds_fold_rows_packed, reach, row_board, out, scale)

    def _run(self, fn: Any, reach: np.ndarray, row_board: Any, out: Any, scale: Any) -> np.ndarray:
        H = self.size
        # the common case first, checked inline (this is called thousands of times a second)
        if (
            type(reach) is np.ndarray
            and reach.dtype == _F32
            and reach.flags.c_contiguous
            and 1 <= reach.ndim <= 2
            and reach.shape[-1] == H
        ):
            rows = reach if reach.ndim == 2 else reach.reshape(1, H)
        else:
            rows, _ = _float_rows(reach, H, "reach")
        R = rows.shape[0]
        if row_board is None and self.num_boards == 1:
            if R > len(self._zeros):
                self._zeros = np.zeros(max(R, 2 * len(self._zeros)), dtype=np.int32)
            rb = self._zeros
        elif (
            type(row_board) is np.ndarray
            and row_board.dtype == np.int32
            and row_board.shape == (R,)
            and row_board.flags.c_contiguous
        ):
            rb = row_board
        else:
            rb = _row_boards(row_board, R, self.num_boards)
        if out is None:
            result = np.empty(reach.shape, dtype=np.float32)
            out_rows = result
        elif (
            type(out) is np.ndarray
            and out.dtype == _F32
            and out.shape == reach.shape
            and out.flags.c_contiguous
            and out.flags.writeable
        ):
            if np.may_share_memory(out, reach):
                raise ValueError("out must not overlap the reach array")
            result = out_rows = out
        else:
            result, out_rows = _output(out, rows, reach.ndim == 1, H)
        rc = fn(
            H,
            self.num_boards,
            self._packed_ptr,
            R,
            ffi.from_buffer("int32_t[]", rb),
            ffi.from_buffer("float[]", rows),
            ffi.NULL if scale is None else _scales(scale, R),
            ffi.from_buffer("float[]", out_rows),
        )
        if rc != -1:
            if rc >= 0:
                raise ValueError(f"row {rc}: board index {int(rb[rc])} out of range 0..{self.num_boards - 1}")
            raise c_error(rc, "showdown kernel")  # pragma: no cover - tables are checked at build
        return result


class IndexedTerminalRows:
    """Fold or showdown values for fixed rows of a larger reach matrix, written straight into
    fixed rows of a larger output matrix (no gather or scatter copies): row ``i`` reads
    ``reach[in_rows[i]]`` on board ``row_board[i]`` and writes ``scale[i] *`` its values to
    ``out[out_rows[i]]``. With ``mult_rows``, row ``i``'s range is ``reach[in_rows[i]] *
    mult[mult_rows[i]]`` (a parent's reach times a row of a multiplier table: the reach one
    step down the tree, formed as it is read instead of stored), ``mult`` given at each call.
    Everything but the matrices is checked and pinned here, once; the matrices are checked on
    every call (float32, C-contiguous, width H, out not overlapping the others). ``threads`` > 1
    shares large calls with the native worker pool (the same results).
    """

    def __init__(
        self,
        kernel: ShowdownKernel,
        fold: bool,
        row_board: Any,
        in_rows: Any,
        out_rows: Any,
        scale: Any,
        mult_rows: Any = None,
        threads: int = 1,
    ) -> None:
        R = len(np.asarray(in_rows))
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads must be an int >= 1, got {threads!r}")
        self.threads = threads
        self.kernel = kernel
        self.fold = int(bool(fold))
        self.R = R
        self._rb = _row_boards(row_board, R, kernel.num_boards)
        self._in = np.ascontiguousarray(np.asarray(in_rows, dtype=np.int64).reshape(R))
        self._out = np.ascontiguousarray(np.asarray(out_rows, dtype=np.int64).reshape(R))
        self._mult = None if mult_rows is None else np.ascontiguousarray(np.asarray(mult_rows, dtype=np.int64).reshape(R))
        if len(np.unique(self._out)) != R:
            raise ValueError("out_rows must not repeat a row")
        self._scale = None if scale is None else _scales(scale, R)
        self._keep = (self._rb, self._in, self._out, self._mult)

    def program_op(self, reach: np.ndarray, out: np.ndarray) -> tuple[tuple[int, ...], tuple[Any, ...]]:
        """The integer arguments and pointers of this call on ``reach`` and ``out`` as a
        ``DS_OP_TERMINAL`` op of ``ds_cfr_program`` (native/src/native.h): the arrays checked
        now, once, for a program that replays the call every iteration (without ``mult``).
        The caller keeps ``reach``, ``out`` and this object alive while the op is in use."""
        if self._mult is not None:
            raise ValueError("rows bound with mult_rows cannot be a program op")
        self._check_arrays(reach, out, None)
        ints = (self.fold, self.kernel.size, self.kernel.num_boards, self.R, reach.shape[0], out.shape[0])
        ptrs = (
            self.kernel._packed_ptr,
            ffi.from_buffer("int32_t[]", self._rb),
            ffi.from_buffer("float[]", reach),
            ffi.from_buffer("int64_t[]", self._in),
            ffi.NULL if self._scale is None else self._scale,
            ffi.from_buffer("float[]", out),
            ffi.from_buffer("int64_t[]", self._out),
        )
        return ints, ptrs

    def raise_code(self, rc: int, n_reach: int, n_out: int, n_mult: int = 0) -> None:
        """The error of the kernel's return code ``rc`` (nothing for -1, done)."""
        if rc == -1:
            return
        if 0 <= rc < self.R:
            raise ValueError(f"row {rc}: board index out of range")
        if self.R <= rc < 2 * self.R:
            raise ValueError(f"row {rc - self.R}: reach row {int(self._in[rc - self.R])} out of range 0..{n_reach - 1}")
        if 2 * self.R <= rc < 3 * self.R:
            i = rc - 2 * self.R
            raise ValueError(f"row {i}: output row {int(self._out[i])} out of range 0..{n_out - 1}")
        if self._mult is not None and 3 * self.R <= rc < 4 * self.R:
            i = rc - 3 * self.R
            raise ValueError(f"row {i}: mult row {int(self._mult[i])} out of range 0..{n_mult - 1}")
        raise c_error(rc, "terminal kernel")

    def _check_arrays(self, reach: np.ndarray, out: np.ndarray, mult: np.ndarray | None) -> None:
        H = self.kernel.size
        if (mult is None) != (self._mult is None):
            raise ValueError("mult must be given exactly when the rows were bound with mult_rows")
        arrays = [("reach", reach), ("out", out)] + ([] if mult is None else [("mult", mult)])
        for name, a in arrays:
            if type(a) is not np.ndarray or a.dtype != _F32 or a.ndim != 2 or a.shape[1] != H or not a.flags.c_contiguous:
                raise ValueError(f"{name} must be a C-contiguous float32 array of shape (N, {H})")
        if np.may_share_memory(out, reach) or (mult is not None and np.may_share_memory(out, mult)):
            raise ValueError("out must not overlap the reach or mult array")
        if not out.flags.writeable:
            raise ValueError("out must be writeable")

    def __call__(self, reach: np.ndarray, out: np.ndarray, mult: np.ndarray | None = None) -> None:
        """Write every row's values into ``out`` in place (``mult`` exactly when bound with ``mult_rows``);
        a ValueError for arrays of the wrong kind, before the kernel runs."""
        self._check_arrays(reach, out, mult)
        H = self.kernel.size
        rc = lib.ds_terminal_rows_product(
            self.fold,
            H,
            self.kernel.num_boards,
            self.kernel._packed_ptr,
            self.R,
            ffi.from_buffer("int32_t[]", self._rb),
            ffi.from_buffer("float[]", reach),
            ffi.from_buffer("int64_t[]", self._in),
            reach.shape[0],
            ffi.NULL if mult is None else ffi.from_buffer("float[]", mult),
            ffi.NULL if self._mult is None else ffi.from_buffer("int64_t[]", self._mult),
            0 if mult is None else mult.shape[0],
            ffi.NULL if self._scale is None else self._scale,
            ffi.from_buffer("float[]", out),
            ffi.from_buffer("int64_t[]", self._out),
            out.shape[0],
            self.threads,
        )
        if rc != -1:
            self.raise_code(rc, reach.shape[0], out.shape[0], 0 if mult is None else mult.shape[0])


def _next_cards(board: tuple[int, ...], deck: Sequence[int]) -> list[int]:
    on_board = set(board)
    return [c for c in deck if c not in on_board]


class ChanceShowdownKernel:
    """Showdown values averaged over the next board card, for rows on a list of boards.

    For a board ``b`` (e.g. a hold'em turn) the next card ``c`` runs over ``deck`` minus ``b``;
    each ``b + c`` is ranked once here. A call returns, for each row,
    ``scale * sum_c showdown_{b+c}(h) / (len(deck) - len(b) - 2k)``: the expected showdown
    value when the next card is dealt uniformly from the cards neither on the board nor in
    either hand (a hand holding ``c`` is blocked on ``b + c`` and contributes nothing there).
    """

    def __init__(self, hand_cards: HandList | npt.ArrayLike | None, boards: Any, deck: BoardLike | None = None) -> None:
        self.hands = as_hand_list(hand_cards)
        if _is_single_board(boards):
            boards = [boards]
        self.deck = check_deck(deck)
        k = self.hands.k
        self.boards = [check_board(b, k + 1) for b in boards]
        if not self.boards:
            raise ValueError("a ChanceShowdownKernel needs at least one board")
        deck_set = set(self.deck)
        river_boards: list[tuple[int, ...]] = []
        starts = [0]
        divisors = []
        for b in self.boards:
            if not set(b) <= deck_set:
                raise ValueError(f"board {cards_to_str(b)} has cards outside the deck")
            nxt = _next_cards(b, self.deck)
            divisor = len(self.deck) - len(b) - 2 * k
            if divisor <= 0:
                raise ValueError(f"board {cards_to_str(b)}: no next card is left for two {k}-card hands")
            river_boards.extend(b + (c,) for c in nxt)
            starts.append(len(river_boards))
            divisors.append(divisor)
        self.river = ShowdownKernel(self.hands, river_boards)
        self.num_boards = len(self.boards)
        self.size = self.hands.size
        self._starts = np.asarray(starts, dtype=np.int32)
        self._members = np.arange(len(river_boards), dtype=np.int32)
        self._inv_divisor = (1.0 / np.asarray(divisors, dtype=np.float64)).astype(np.float32)
        self._starts_ptr = ffi.from_buffer("int32_t[]", self._starts)
        self._members_ptr = ffi.from_buffer("int32_t[]", self._members)

    def showdown(self, reach: np.ndarray, row_board: Any = None, out: np.ndarray | None = None, scale: Any = None) -> np.ndarray:
        """``scale[i] *`` the expected showdown value of every hand of row ``i`` against ``reach[i]`` over
        the next card of board ``row_board[i]``; arguments as :meth:`ShowdownKernel.showdown`."""
        H = self.size
        rows, single = _float_rows(reach, H, "reach")
        R = rows.shape[0]
        rb = _row_boards(row_board, R, self.num_boards)
        if R and (int(rb.min()) < 0 or int(rb.max()) >= self.num_boards):
            row = int(np.flatnonzero((rb < 0) | (rb >= self.num_boards))[0])
            raise ValueError(f"row {row}: board index {int(rb[row])} out of range 0..{self.num_boards - 1}")
        result, out_rows = _output(out, rows, single, H)
        factor = self._inv_divisor[rb]
        if scale is not None:
            factor = factor * (np.float32(scale) if np.ndim(scale) == 0 else np.asarray(scale, dtype=np.float32))
            if factor.shape != (R,):
                raise ValueError(f"scale must be a number or have shape ({R},), got {np.shape(scale)}")
        factor = np.ascontiguousarray(factor, dtype=np.float32)
        rc = lib.ds_showdown_avg_rows(
            H,
            self.river.num_boards,
            self.river._packed_ptr,
            self.num_boards,
            self._starts_ptr,
            self._members_ptr,
            R,
            ffi.from_buffer("int32_t[]", rb),
            ffi.from_buffer("float[]", rows),
            ffi.from_buffer("float[]", factor),
            ffi.from_buffer("float[]", out_rows),
        )
        if rc != -1:
            if rc >= 0:
                raise ValueError(f"row {rc}: board index {int(rb[rc])} out of range 0..{self.num_boards - 1}")
            raise c_error(rc, "chance showdown kernel")  # pragma: no cover
        return result


# --------------------------------------------------------------------------- convenience
_KERNELS: OrderedDict[tuple, ShowdownKernel] = OrderedDict()
_KERNELS_LOCK = Lock()
_KERNEL_CACHE_SIZE = 256


def _kernel_for(tables_or_board: Any, hand_cards: Any) -> ShowdownKernel:
    if isinstance(tables_or_board, ShowdownKernel):
        return tables_or_board
    if isinstance(tables_or_board, BoardTable):
        return ShowdownKernel(tables_or_board.hands, [tables_or_board])
    hands = as_hand_list(hand_cards)
    items = [tables_or_board] if _is_single_board(tables_or_board) else list(tables_or_board)
    if any(isinstance(b, BoardTable) for b in items):
        return ShowdownKernel(hands, items)
    key = (id(hands), tuple(check_board(b, hands.k) for b in items))
    with _KERNELS_LOCK:
        kernel = _KERNELS.get(key)
        if kernel is not None:
            _KERNELS.move_to_end(key)
            return kernel
    kernel = ShowdownKernel(hands, list(key[1]))
    with _KERNELS_LOCK:
        _KERNELS[key] = kernel
        while len(_KERNELS) > _KERNEL_CACHE_SIZE:
            _KERNELS.popitem(last=False)
    return kernel


def showdown_values(
    tables_or_board: Any,
    opp_reach: np.ndarray,
    row_board: Any = None,
    out: np.ndarray | None = None,
    *,
    scale: Any = None,
    hand_cards: HandList | npt.ArrayLike | None = None,
) -> np.ndarray:
    """Showdown values (win minus lose mass) of every hand against ``opp_reach``.

    ``tables_or_board`` is a board, a list of boards, a :class:`BoardTable`, a list of them,
    or a :class:`ShowdownKernel` (the fast path; kernels for board lists are cached here).
    """
    return _kernel_for(tables_or_board, hand_cards).showdown(opp_reach, row_board, out, scale)


def fold_values(
    tables_or_board: Any,
    opp_reach: np.ndarray,
    row_board: Any = None,
    out: np.ndarray | None = None,
    *,
    scale: Any = None,
    hand_cards: HandList | npt.ArrayLike | None = None,
) -> np.ndarray:
    """Fold values (compatible opponent mass) of every hand; arguments as :func:`showdown_values`."""
    return _kernel_for(tables_or_board, hand_cards).fold(opp_reach, row_board, out, scale)


def showdown_chance_average(
    board: BoardLike,
    opp_reach: np.ndarray,
    *,
    hand_cards: HandList | npt.ArrayLike | None = None,
    deck: BoardLike | None = None,
) -> np.ndarray:
    """Showdown value of every hand averaged over the next card (see :class:`ChanceShowdownKernel`)."""
    return ChanceShowdownKernel(hand_cards, [board], deck).showdown(opp_reach)
