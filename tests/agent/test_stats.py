"""The one confidence-interval rule of every reported estimate (agent/evaluation/stats.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent.evaluation.stats import estimate, z95


def test_small_samples_get_students_t_and_large_ones_the_normal() -> None:
    values = [3.0, -1.0, 4.0, 1.0, -5.0]
    est = estimate(values)
    assert est.ci95 == pytest.approx(2.776 * np.std(values, ddof=1) / math.sqrt(5))  # t(4), not 1.96
    assert z95(2) == 12.706 and z95(30) == 2.045 and z95(31) == 1.96 and z95(1000) == 1.96
    assert math.isinf(estimate([1.0]).ci95) and math.isinf(z95(1))


def test_one_value_reads_as_no_interval_not_plus_minus_infinity() -> None:
    """``eval lbr --hands 1`` printed "+1500.0 ± inf mbb/g (95% CI)"."""
    assert str(estimate([3.0], big_blind=2.0)) == "+1500.0 mbb/g (no confidence interval from 1 value)"
    assert str(estimate([])) == "+0.0 chips (no confidence interval from 0 values)"
    assert str(estimate([1.0, 3.0])) == "+2.0 ± 12.7 chips (95% CI)"
    assert "no confidence interval" not in str(
        estimate([1.0, math.inf])
    )  # the count is not what is wrong  # t(1) = 12.706 times sd/sqrt(n) = 1


def test_the_t_intervals_cover_the_mean_95_percent_of_the_time() -> None:
    """Seeded check of what the table is for: 4000 samples of 5 normal values; the normal 1.96
    covers ~88%, Student's t 95%."""
    rng = np.random.default_rng(7)
    samples = rng.normal(size=(4000, 5))
    covered = [abs(e.mean) <= e.ci95 for e in map(estimate, samples)]
    assert 0.94 <= float(np.mean(covered)) <= 0.96
