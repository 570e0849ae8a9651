"""CFR variants: how regrets are floored or discounted and how iterations weigh in the averages
(CFR+, DeepStack's hybrid, Discounted CFR, DCFR+). The solver's tensors are the same for all of
them; a :class:`Variant` is the only difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Algorithm = Literal["cfr+", "hybrid", "dcfr", "dcfr+"]

#: DCFR's alpha and beta: t ** 50 stays a float64 over a million iterations
MAX_EXPONENT = 50.0
#: DCFR's gamma: the averages' weights sum to about T ** (gamma + 1) / (gamma + 1), which for a
#: million iterations stays within float32 up to 5 (at 12, 3000 iterations of Leduc were NaN)
MAX_GAMMA = 5.0


@dataclass(frozen=True)
class Variant:
    """Regret and averaging rules of a CFR variant.

    * ``cfr+``: regret-matching+ (regrets floored at 0), linear averaging after ``skip``.
    * ``hybrid``: DeepStack's choice: regret-matching+, uniform averaging, the first ``skip``
      iterations left out of the averages.
    * ``dcfr``: Discounted CFR (alpha, beta, gamma), averaging weight t^gamma. ``beta = -inf``
      resets negative regrets to 0 after every iteration, as regret-matching+ does.
    * ``dcfr+``: DCFR regrets with linear averaging weight max(0, t - skip) (Supremus).
    """

    algorithm: Algorithm = "dcfr"
    skip: int = 0
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0
    #: update one player per half-iteration (CFR+ as published) instead of both at once
    alternating: bool = False

    def __post_init__(self) -> None:
        if self.algorithm not in ("cfr+", "hybrid", "dcfr", "dcfr+"):
            raise ValueError(f"unknown CFR algorithm {self.algorithm!r}; use cfr+, hybrid, dcfr or dcfr+")
        if self.skip < 0:
            raise ValueError("skip must be >= 0")
        if not 0 <= self.alpha <= MAX_EXPONENT:  # False for nan too
            raise ValueError(f"DCFR alpha must be between 0 and {MAX_EXPONENT}, not {self.alpha}")
        if not (self.beta <= MAX_EXPONENT or self.beta == -math.inf):
            raise ValueError(f"DCFR beta must be a number up to {MAX_EXPONENT} or -inf, not {self.beta}")
        if not 0 <= self.gamma <= MAX_GAMMA:
            raise ValueError(
                f"DCFR gamma must be between 0 and {MAX_GAMMA}, not {self.gamma}: the averages sum t^gamma, "
                "and past that a long solve's float32 sums overflow"
            )

    @property
    def floors_regrets(self) -> bool:
        """True for the regret-matching+ variants (``cfr+``, ``hybrid``): regrets are floored at 0 after
        every update."""
        return self.algorithm in ("cfr+", "hybrid")

    def average_weight(self, t: int) -> float:
        """Weight of iteration ``t`` (1-based) in the averages: 0 for the first ``skip``, then 1 (``hybrid``),
        ``t - skip`` (``cfr+``, ``dcfr+``) or ``t ** gamma`` (``dcfr``)."""
        if self.algorithm == "hybrid":
            return 1.0 if t > self.skip else 0.0
        if self.algorithm in ("cfr+", "dcfr+"):
            return float(max(0, t - self.skip))
        return float(t) ** self.gamma if t > self.skip else 0.0

    def discount(self, t: int) -> tuple[float, float]:
        """Multipliers of positive and negative accumulated regrets after iteration t."""
        if self.algorithm in ("dcfr", "dcfr+"):
            ta = float(t) ** self.alpha
            if self.beta == -math.inf:
                return ta / (ta + 1.0), 0.0
            tb = float(t) ** self.beta
            return ta / (ta + 1.0), tb / (tb + 1.0)
        return 1.0, 1.0
