"""The interval arithmetic of sim.stats against published values (not against itself)."""

from __future__ import annotations

import pytest

from sim.stats import Z95, standard_error, wilson_interval


def test_wilson_interval_published_value():
    # Wilson score interval, 95%, for 8 successes in 10 trials: (0.4902, 0.9433) (Newcombe 1998,
    # Table I, and every textbook table of the Wilson interval). By hand: z^2 = 3.8416,
    # centre (0.8 + 0.19208) / 1.38416 = 0.71674, half 1.96 * sqrt(0.016 + 0.009604) / 1.38416 = 0.22658
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    assert Z95 == pytest.approx(1.959964, abs=1e-6)


def test_wilson_interval_at_the_edges_is_exact_and_not_symmetric():
    # 0 of 10: lower bound 0, upper z^2 / (n + z^2) = 3.8415 / 13.8415 = 0.2775
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(1 - 0.2775, abs=1e-4)


def test_standard_error_by_hand():
    assert standard_error(0.5, 100) == pytest.approx(0.05)  # sqrt(0.25 / 100)
    assert standard_error(0.1, 400) == pytest.approx(0.015)  # sqrt(0.09 / 400)
