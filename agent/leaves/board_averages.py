"""What a network leaf keeps of one re-solve for the hand-over to the next round: its latest
per-(leaf, next board) values and their sums weighted as the solver averages its own values.

Continual re-solving hands the next round these averages (what the re-solve's strategy was made
against), not the network asked again at the average ranges: models/README.md, "Diagnosis".
"""

from __future__ import annotations

import torch


class BoardAverages:
    """Per lookahead: ``rows[r]`` is the leaf index of network row ``r``, ``boards[r]`` its next board."""

    def __init__(self, rows: torch.Tensor, boards: list[tuple[int, ...]]) -> None:
        self.rows = rows
        self.boards = boards
        self.last: torch.Tensor | None = None  # [2, R, H], a reference to the latest values
        self.sums: torch.Tensor | None = None
        self.weight = [0.0, 0.0]

    def record(self, values: torch.Tensor) -> None:
        """Keep a reference to the network's latest ``[2, R, H]`` values (the leaf function calls it every
        iteration); :meth:`add` weighs them in when the solver averages."""
        self.last = values

    def add(self, player: int, weight: float) -> None:
        """The solver's averaging step for ``player``: weigh the latest values of ``player``."""
        if self.last is None:
            return
        if self.sums is None:
            self.sums = torch.zeros_like(self.last)
        self.sums[player].add_(self.last[player], alpha=weight)
        self.weight[player] += weight

    def at_leaf(self, leaf: int) -> dict[tuple[int, ...], torch.Tensor] | None:
        """``{next board: [2, H]}`` averaged at leaf index ``leaf`` (None where nothing was averaged)."""
        if self.sums is None or min(self.weight) <= 0:
            return None
        avg = torch.stack([self.sums[p] / self.weight[p] for p in range(2)])
        where = torch.nonzero(self.rows == leaf).flatten().tolist()
        return {self.boards[j]: avg[:, j] for j in where} or None
