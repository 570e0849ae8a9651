"""Fold and showdown values on torch tensors (CPU or CUDA), batched over rows with different boards.

Same definitions and conventions as :mod:`native.showdown` (blocked hands 0, blocked
opponent hands ignored, optional per-row scale). Everything per board is turned into index
tensors once, at construction; a call is a fixed handful of tensor operations whatever the
number of rows and boards (no Python loop over rows, no hand x hand matrix):

showdown, for each row (board ``b``, opponent reach ``r``), on one "extended" vector::

    ext = [0, r of the valid hands by ascending strength (zero padded to H),
           for each card c: r of the valid hands holding c by ascending strength (padded to L)]
    cs  = cumsum(ext)

Every quantity of the O(H) method is a difference of two entries of ``cs``: the mass of the
valid hands strictly weaker than ``h`` is ``cs[lt(h)]``, not stronger ``cs[le(h)]``, the total
``cs[H]``; the same inside card ``c``'s segment gives the mass held by hands containing ``c``.
With card removal (the only hand holding both of ``h``'s cards is ``h``, which ties itself)::

    showdown(h) = cs[lt] + cs[le] - cs[H]
                  - sum over h's cards c of (cs[c_lt] + cs[c_le] - cs[c_end] - cs[c_start])

so each hand gathers ``2 + 2k`` entries to add and ``1 + 2k`` to subtract: one gather of
``[R, H, 2 (2 + 2k)]`` indices (blocked hands point at ``cs[0] = 0``). Fold values are two
small matrix products with the card incidence matrix.

``backend="auto"`` runs float32 CPU tensors through the C kernels of
:mod:`native.showdown` (zero-copy; several times faster than tensor operations on a CPU) and
everything else (CUDA, float64) through the tensor code; ``backend="torch"`` forces the
tensor code (the tests check both agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import torch

from native.board_tables import BoardTable, HandList
from native.showdown import ShowdownKernel

Backend = Literal["auto", "torch", "c"]


def _segment_length(tables: Sequence[BoardTable]) -> int:
    """Longest list of valid hands holding one card, over all boards (at least 1)."""
    L = 1
    for t in tables:
        cards = t.hands.cards[t.valid].reshape(-1)
        if cards.size:
            L = max(L, int(np.bincount(cards, minlength=52).max()))
    return L


def _board_indices(t: BoardTable, L: int) -> tuple[np.ndarray, np.ndarray]:
    """(ext_idx [M], term_idx [Q, H]) of one board, Q = 2 + 2k.

    ``ext_idx`` indexes the reach padded with one zero (index H); ``term_idx`` indexes ``cs``:
    rows ``lt, le`` then ``c_lt, c_le`` for each of the hand's cards (all 0 for blocked hands).
    """
    H, k = t.hands.size, t.hands.k
    M = 1 + H + 52 * L
    s = t.strength.astype(np.int64)
    vh = np.flatnonzero(t.valid)
    ext = np.full(M, H, dtype=np.int64)
    terms = np.zeros((2 + 2 * k, H), dtype=np.int64)
    if vh.size == 0:
        return ext, terms
    # main segment: the valid hands by strength at positions 1..n
    sorted_hands = vh[np.argsort(s[vh], kind="stable")]
    ext[1 : 1 + vh.size] = sorted_hands
    ss = s[sorted_hands]
    terms[0, vh] = np.searchsorted(ss, s[vh], side="left")
    terms[1, vh] = np.searchsorted(ss, s[vh], side="right")
    # card segments: (card, hand) incidences of the valid hands sorted by (card, strength)
    inc_card = t.hands.cards[vh].astype(np.int64).reshape(-1)  # incidence i*k + j: card j of vh[i]
    inc_hand = np.repeat(vh, k)
    key = inc_card * (int(s.max()) + 2) + s[inc_hand]
    sort = np.argsort(key, kind="stable")
    sorted_key = key[sort]
    card_start = np.searchsorted(inc_card[sort], np.arange(53), side="left")
    rank_in_card = np.arange(sort.size) - card_start[inc_card[sort]]
    ext[H + inc_card[sort] * L + 1 + rank_in_card] = inc_hand[sort]
    base = H + inc_card * L - card_start[inc_card]
    c_lt = (base + np.searchsorted(sorted_key, key, side="left")).reshape(-1, k)
    c_le = (base + np.searchsorted(sorted_key, key, side="right")).reshape(-1, k)
    for j in range(k):
        terms[2 + 2 * j, vh] = c_lt[:, j]
        terms[3 + 2 * j, vh] = c_le[:, j]
    return ext, terms


def canonical_device(device: torch.device | str, current_index: int | None = None) -> torch.device:
    """``device`` with its index: ``cuda`` becomes ``cuda:N`` (N the current CUDA device).

    Tensors always carry an index (``cuda:0``) and ``torch.device("cuda") != torch.device("cuda:0")``,
    so a device kept without one never compares equal to its own tensors' device.
    """
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        index = torch.cuda.current_device() if current_index is None else current_index
        return torch.device("cuda", index)
    return dev


class TorchShowdown:
    """Showdown and fold values of a hand list on a fixed list of boards, on torch tensors.

    Args:
        hand_cards: the hand list (``None`` = the 1326 hold'em hands) or a :class:`HandList`.
        boards: boards and/or :class:`BoardTable` objects (a single board is accepted too).
        device, dtype: where and in which precision the values are computed.
        backend: ``"auto"`` (C kernels for float32 CPU tensors, tensor ops otherwise),
            ``"torch"`` (always tensor ops) or ``"c"`` (float32 CPU only).

    ``showdown(reach, row_board=None, scale=None)`` / ``fold(...)``: ``reach`` ``[R, H]`` (or
    ``[H]``) on ``device`` in ``dtype``, ``row_board`` ``[R]`` integer tensor (may be omitted
    with one board), ``scale`` a number or ``[R]`` tensor. :meth:`prepare` fixes the rows'
    boards once for repeated calls.
    """

    def __init__(
        self,
        hand_cards: HandList | npt.ArrayLike | None,
        boards: Any,
        device: torch.device | str = "cpu",
        dtype: torch.dtype = torch.float32,
        backend: Backend = "auto",
    ) -> None:
        if backend not in ("auto", "torch", "c"):
            raise ValueError(f"backend must be 'auto', 'torch' or 'c', got {backend!r}")
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        self.kernel = ShowdownKernel(hand_cards, boards)  # checks and ranks every board
        self.hands = self.kernel.hands
        self.size = self.hands.size
        self.k = self.hands.k
        self.num_boards = self.kernel.num_boards
        self.device = canonical_device(device)
        self.dtype = dtype
        use_c = self.device.type == "cpu" and dtype == torch.float32
        if backend == "c" and not use_c:
            raise ValueError("backend='c' needs device='cpu' and dtype=torch.float32")
        self.backend: Backend = "c" if (backend == "c" or (backend == "auto" and use_c)) else "torch"
        dev = self.device
        self.valid = torch.as_tensor(self.kernel.valid.astype(np.float64), dtype=dtype, device=dev)  # [B, H]
        inc = np.zeros((self.size, 52), dtype=np.float64)
        inc[np.repeat(np.arange(self.size), self.k), self.hands.cards.reshape(-1)] = 1.0
        self.incidence = torch.as_tensor(inc, dtype=dtype, device=dev)  # [H, 52]
        if self.backend == "torch":
            self.L = _segment_length(self.kernel.tables)
            ext, terms = zip(*(_board_indices(t, self.L) for t in self.kernel.tables))
            self.ext_index = torch.as_tensor(np.stack(ext), device=dev)  # [B, M]
            self.term_index = torch.as_tensor(np.stack(terms).reshape(self.num_boards, -1), device=dev)  # [B, Q*H]
            self.Q = 2 + 2 * self.k
            starts = self.size + np.arange(52) * self.L
            self.seg_start = torch.as_tensor(starts, device=dev)
            self.seg_end = torch.as_tensor(starts + self.L, device=dev)
            self.hand_card = [torch.as_tensor(self.hands.cards[:, j].astype(np.int64), device=dev) for j in range(self.k)]

    # ------------------------------------------------------------------ public API
    def prepare(self, row_board: torch.Tensor | Sequence[int] | None, rows: int | None = None) -> PreparedRows:
        """Fixed rows: their boards' index tensors are gathered once (for repeated calls)."""
        return PreparedRows(self, self._row_boards(row_board, rows))

    def showdown(self, reach: torch.Tensor, row_board: Any = None, scale: Any = None) -> torch.Tensor:
        """``scale * (win - lose)`` opponent mass for every hand of every row: ``[R, H]``."""
        reach2, single = self._rows(reach)
        rb = self._row_boards(row_board, reach2.shape[0])
        return self._finish(self._showdown(reach2, rb), scale, single)

    def fold(self, reach: torch.Tensor, row_board: Any = None, scale: Any = None) -> torch.Tensor:
        """``scale *`` compatible opponent mass for every hand of every row: ``[R, H]``."""
        reach2, single = self._rows(reach)
        rb = self._row_boards(row_board, reach2.shape[0])
        return self._finish(self._fold(reach2, rb), scale, single)

    # ------------------------------------------------------------------ internals
    def _rows(self, reach: torch.Tensor) -> tuple[torch.Tensor, bool]:
        if not isinstance(reach, torch.Tensor):
            raise ValueError(f"reach must be a torch.Tensor, got {type(reach).__name__}")
        if reach.dtype != self.dtype or reach.device != self.device:
            raise ValueError(f"reach must be {self.dtype} on {self.device}, got {reach.dtype} on {reach.device}")
        if reach.ndim == 1 and reach.shape[0] == self.size:
            return reach.unsqueeze(0), True
        if reach.ndim == 2 and reach.shape[1] == self.size:
            return reach, False
        raise ValueError(f"reach must have shape (R, {self.size}) or ({self.size},), got {tuple(reach.shape)}")

    def _row_boards(self, row_board: Any, rows: int | None) -> torch.Tensor:
        if row_board is None:
            if self.num_boards != 1:
                raise ValueError(f"row_board is required: there are {self.num_boards} boards")
            if rows is None:
                raise ValueError("the number of rows is needed when row_board is omitted")
            return torch.zeros(rows, dtype=torch.long, device=self.device)
        rb = torch.as_tensor(row_board, device=self.device)
        if rb.dtype.is_floating_point or rb.dtype == torch.bool or rb.is_complex():
            raise ValueError(f"row_board must be an integer tensor, got {rb.dtype}")
        if rb.ndim != 1 or (rows is not None and rb.shape[0] != rows):
            raise ValueError(f"row_board must have shape ({rows if rows is not None else 'R'},), got {tuple(rb.shape)}")
        if rb.numel() and (int(rb.min()) < 0 or int(rb.max()) >= self.num_boards):
            bad = int(torch.nonzero((rb < 0) | (rb >= self.num_boards))[0, 0])
            raise ValueError(f"row {bad}: board index {int(rb[bad])} out of range 0..{self.num_boards - 1}")
        return rb.long()

    def _finish(self, values: torch.Tensor, scale: Any, single: bool) -> torch.Tensor:
        if scale is not None:
            s = torch.as_tensor(scale, dtype=self.dtype, device=self.device)
            if s.ndim == 1:
                if s.shape[0] != values.shape[0]:
                    raise ValueError(f"scale must be a number or have shape ({values.shape[0]},), got {tuple(s.shape)}")
                s = s.unsqueeze(1)
            elif s.ndim != 0:
                raise ValueError(f"scale must be a number or a 1-D tensor, got shape {tuple(s.shape)}")
            values = values * s
        return values[0] if single else values

    def _showdown(
        self,
        reach: torch.Tensor,
        rb: torch.Tensor,
        idx: tuple[torch.Tensor, torch.Tensor] | None = None,
        valid: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if self.backend == "c":
            r = reach.detach().contiguous()
            return torch.from_numpy(self.kernel.showdown(r.numpy(), rb.to(torch.int32).numpy()))
        R, H = reach.shape
        ext_idx, term_idx = idx if idx is not None else (self.ext_index[rb], self.term_index[rb])
        valid = valid if valid is not None else self.valid[rb]
        padded = torch.cat([reach, reach.new_zeros(R, 1)], dim=1)
        cs = padded.gather(1, ext_idx).cumsum_(dim=1)
        g = cs.gather(1, term_idx).view(R, self.Q, H)
        # per card: segment end + start (the "- total held" and base terms of both prefixes)
        ends = cs.index_select(1, self.seg_end).add_(cs.index_select(1, self.seg_start))  # [R, 52]
        values = g[:, 0] + g[:, 1] - g[:, 2:].sum(dim=1) - cs[:, H : H + 1]
        for cards in self.hand_card:
            values += ends.index_select(1, cards)
        return values.mul_(valid)

    def _fold(self, reach: torch.Tensor, rb: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        if self.backend == "c":
            r = reach.detach().contiguous()
            return torch.from_numpy(self.kernel.fold(r.numpy(), rb.to(torch.int32).numpy()))
        v = valid if valid is not None else self.valid[rb]
        masked = reach * v
        card_mass = masked @ self.incidence  # [R, 52]
        total = masked.sum(dim=1, keepdim=True)
        return (total - card_mass @ self.incidence.T + (self.k - 1) * masked) * v


class PreparedRows:
    """Rows whose boards are fixed: the per-row index tensors are built once."""

    def __init__(self, owner: TorchShowdown, row_board: torch.Tensor) -> None:
        self.owner = owner
        self.row_board = row_board
        self.rows = int(row_board.shape[0])
        self._rb32 = row_board.to(torch.int32).cpu() if owner.backend == "c" else None
        if owner.backend == "torch":
            self._index = (owner.ext_index[row_board], owner.term_index[row_board])
            self._valid = owner.valid[row_board]

    def _check(self, reach: torch.Tensor) -> tuple[torch.Tensor, bool]:
        reach2, single = self.owner._rows(reach)
        if reach2.shape[0] != self.rows:
            raise ValueError(f"these prepared rows expect {self.rows} rows, got {reach2.shape[0]}")
        return reach2, single

    def showdown(self, reach: torch.Tensor, scale: Any = None) -> torch.Tensor:
        """As :meth:`TorchShowdown.showdown` on these rows' boards; ``reach`` must have exactly their rows."""
        reach2, single = self._check(reach)
        o = self.owner
        if o.backend == "c":
            assert self._rb32 is not None
            values = torch.from_numpy(o.kernel.showdown(reach2.detach().contiguous().numpy(), self._rb32.numpy()))
        else:
            values = o._showdown(reach2, self.row_board, self._index, self._valid)
        return o._finish(values, scale, single)

    def fold(self, reach: torch.Tensor, scale: Any = None) -> torch.Tensor:
        """As :meth:`TorchShowdown.fold` on these rows' boards; ``reach`` must have exactly their rows."""
        reach2, single = self._check(reach)
        o = self.owner
        if o.backend == "c":
            assert self._rb32 is not None
            values = torch.from_numpy(o.kernel.fold(reach2.detach().contiguous().numpy(), self._rb32.numpy()))
        else:
            values = o._fold(reach2, self.row_board, self._valid)
        return o._finish(values, scale, single)
