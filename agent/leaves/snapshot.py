"""What a depth-limit leaf hands to the leaf values after a re-solve (made by continual re-solving)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LeafSnapshot:
    """A depth-limit leaf after a re-solve: average reaches and what the leaf needs to be valued."""

    reach: np.ndarray  # [2, hands] (hand space)
    spent: tuple[int, ...]
    board: tuple[int, ...]
    next_round: int
    #: ``{next board: [2, hands]}``: the leaf function's per-board values averaged over the re-solve's
    #: iterations with the solver's weights, where it keeps them (None: it does not). A leaf's own
    #: ``chance_values`` answers with these: they are what the re-solve's strategy was made against
    board_values: dict[tuple[int, ...], np.ndarray] | None = None
