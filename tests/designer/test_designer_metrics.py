"""Metrics by name and their intervals."""

from __future__ import annotations

import math

import pytest

import sim
from sim.designer.metrics import half_width, metric_interval, metric_value, scalar_metrics
from sim.stats import Z95, wilson_interval

SUMMARY = {
    "kind": "escape", "runs": 1000, "seed": 1, "escape_rate": 0.25, "escape_rate_ci": [0.2, 0.3],
    "mean_rounds": 4.0, "mean_rounds_se": 0.1, "mean_checks": 3.0, "escape_by_round": [0.1, 0.2, 0.25],
    "caught_rate": None, "scenario_hash": "x",
}


def test_values_by_key_and_index():
    assert metric_value(SUMMARY, "escape_rate") == 0.25
    assert metric_value(SUMMARY, "escape_by_round.1") == 0.2
    assert metric_value(SUMMARY, "escape_by_round.last") == 0.25
    assert metric_value(SUMMARY, "escape_by_round.-1") == 0.25
    assert math.isnan(metric_value(SUMMARY, "caught_rate"))


@pytest.mark.parametrize("metric, expected", [
    ("nope", "no metric 'nope'"), ("escape_by_round", "address one element"),
    ("escape_by_round.3", "out of range"), ("escape_rate.0", "not a list"), ("bad metric", "expected a summary key"),
])
def test_unknown_metrics_are_clean_errors(metric, expected):
    with pytest.raises(sim.ScenarioError, match=expected):
        metric_value(SUMMARY, metric)


def test_intervals_from_ci_se_and_wilson():
    assert metric_interval(SUMMARY, "escape_rate") == (0.2, 0.3)
    lo, hi = metric_interval(SUMMARY, "mean_rounds")
    assert lo == pytest.approx(4.0 - Z95 * 0.1) and hi == pytest.approx(4.0 + Z95 * 0.1)
    assert metric_interval(SUMMARY, "escape_by_round.0") == tuple(wilson_interval(100, 1000))
    assert all(math.isnan(v) for v in metric_interval(SUMMARY, "mean_checks"))
    exact = dict(SUMMARY, runs=None)
    assert metric_interval(exact, "mean_checks") == (3.0, 3.0)


def test_half_width_is_at_least_both_usual_definitions():
    s = {"kind": "escape", "runs": 400, "escape_rate": 0.5, "escape_rate_ci": wilson_interval(200, 400)}
    lo, hi = s["escape_rate_ci"]
    w = half_width(s, "escape_rate")
    assert w >= (hi - lo) / 2 and w >= max(0.5 - lo, hi - 0.5)
    assert w >= Z95 * math.sqrt(0.25 / 400) - 1e-15


def test_scalar_metrics_skip_provenance_and_intervals():
    assert scalar_metrics(SUMMARY) == ["escape_rate", "mean_rounds", "mean_checks", "caught_rate"]
