"""Confidence intervals of per-hand quantities (a bot's winnings per hand): the one rule that
every reported estimate follows (matches, LBR, AIVAT)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """Mean, 95% confidence half-width (normal approximation: 1.96 sample standard deviations
    over the square root of ``n``; infinite below two values), sample standard deviation and
    count of a per-hand quantity, in ``unit``."""

    mean: float
    ci95: float
    std: float
    n: int
    unit: str = "chips"

    def to_dict(self, scale: float = 1.0) -> dict[str, float]:
        return {"mean": self.mean * scale, "ci95": self.ci95 * scale, "std": self.std * scale, "n": self.n}

    def __str__(self) -> str:
        """``+12.3 ± 4.5 mbb/g (95% CI)``: the ± is the half-width of the 95% confidence interval."""
        return f"{self.mean:+.1f} ± {self.ci95:.1f} {self.unit} (95% CI)"


def estimate(values: Sequence[float], big_blind: float | None = None) -> Estimate:
    """In chips; given ``big_blind`` (the chips of one big blind), in mbb/g (thousandths of a big
    blind per hand)."""
    arr = np.asarray(values, dtype=np.float64)
    unit = "chips"
    if big_blind is not None:
        arr = 1000.0 * arr / big_blind
        unit = "mbb/g"
    n = len(arr)
    std = float(arr.std(ddof=1)) if n > 1 else 0.0
    return Estimate(float(arr.mean()) if n else 0.0, 1.96 * std / math.sqrt(n) if n > 1 else math.inf, std, n, unit)
