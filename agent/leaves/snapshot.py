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
