"""Confidence intervals of per-hand quantities (a bot's winnings per hand): the one rule that
every reported estimate follows (matches, LBR, AIVAT)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Student's t 97.5% quantiles for 1..29 degrees of freedom: below 30 values the normal 1.96
#: gives intervals too narrow to be 95% ones (0.71 of the width at 5 values, 0.46 at 3)
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
)  # fmt: skip


def z95(n: int) -> float:
    """The multiplier of the standard error for a 95% interval over ``n`` values: Student's t
    below 30 values, the normal 1.96 from 30 on (where the two differ by under 4%); infinite
    below two values."""
    if n < 2:
        return math.inf
    return _T975[n - 2] if n - 1 <= len(_T975) else 1.96


@dataclass(frozen=True)
class Estimate:
    """Mean, 95% confidence half-width (``z95(n)`` sample standard deviations over the square
    root of ``n``: Student's t below 30 values, the normal 1.96 from 30 on; infinite below two
    values), sample standard deviation and count of a per-hand quantity, in ``unit``."""

    mean: float
    ci95: float
    std: float
    n: int
    unit: str = "chips"

    def to_dict(self, scale: float = 1.0) -> dict[str, float]:
        """The JSON form: mean, ci95 and std times ``scale`` (e.g. chips to mbb/g), ``n`` as is; the unit
        is left to the caller."""
        return {"mean": self.mean * scale, "ci95": self.ci95 * scale, "std": self.std * scale, "n": self.n}

    def __str__(self) -> str:
        """``+12.3 ± 4.5 mbb/g (95% CI)``: the ± is the half-width of the 95% confidence interval; over
        fewer than two values there is none, and the text says so instead of printing ``± inf``."""
        if self.n < 2:
            return f"{self.mean:+.1f} {self.unit} (no confidence interval from {self.n} value{'' if self.n == 1 else 's'})"
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
    return Estimate(float(arr.mean()) if n else 0.0, z95(n) * std / math.sqrt(n) if n > 1 else math.inf, std, n, unit)
