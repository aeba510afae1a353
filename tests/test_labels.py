"""The one metric table and number format (sim/labels.py), shared by console, reports, designer pages and studio."""

from __future__ import annotations

import math

import sim.designer.metrics as designer_metrics
import sim.report as report
from sim import labels
from sim.labels import decimals_for, format_estimate, format_value, is_proportion, metric_label, metric_unit


def test_one_table_serves_every_reader():
    # the designer module and the report helpers use the functions of sim/labels.py, not copies
    assert designer_metrics.metric_label is labels.metric_label
    assert designer_metrics.decimals_for is labels.decimals_for
    assert designer_metrics.format_estimate is labels.format_estimate
    assert report.decimals_for is labels.decimals_for


def test_units_come_from_the_table():
    # counts and means of counts are not shares, whatever their names look like
    assert metric_unit("skirmish_mean_survivors_a") == "count"
    assert not is_proportion("skirmish_mean_survivors_a")
    assert not is_proportion("rescues_tried_per_game")
    assert is_proportion("escape_by_round.3") and is_proportion("capture_hazard_by_turn@2")
    assert metric_unit("composure_max") == "points"
    assert metric_unit("dp_per_session") == "DP"


def test_short_and_long_names():
    assert metric_label("escape_by_round.7") == "escaped by the end of round 8"
    assert metric_label("escape_by_round.7", short=True) == "escaped by round 8"
    assert metric_label("escape_by_round@8", short=True) == "escaped by round 8"
    assert metric_label("incapacitated_by_round.last", short=True) == "incapacitated (end)"
    assert metric_label("escape_rate", short=True) == "escaped"
    assert metric_label("mean_checks", short=True) == "mean escape checks per run (party total)"  # no short name
    assert metric_label("brand_new_key") == "brand new key"


def test_decimals_show_the_first_digit_of_the_half_width():
    # half-width 0.012 as a share = 1.2 percentage points: first significant digit in the units -> 0 decimals
    assert decimals_for(0.012, percent=True) == 0
    # 0.0012 = 0.12 points -> the tenths -> 1 decimal; 0.00012 = 0.012 points -> 2
    assert decimals_for(0.0012, percent=True) == 1
    assert decimals_for(0.00012, percent=True) == 2
    # a plain number: half-width 0.3 -> 1 decimal; 25 -> 0; no half-width -> the most (or the fallback)
    assert decimals_for(0.3) == 1 and decimals_for(25.0) == 0
    assert decimals_for(math.nan) == 4 and decimals_for(0.0, percent=True) == 2
    assert decimals_for(math.nan, most=3, fallback=3) == 3


def test_formats():
    # 0.62 with interval [0.61, 0.63]: half-width 1 point -> 0 decimals
    assert format_estimate(0.62, 0.61, 0.63) == "62% [61, 63]"
    assert format_estimate(0.5) == "50.00%"
    assert format_value("escape_rate", 0.5) == "50.0%"
    assert format_value("mean_rounds", 3.14159) == "3.14"
    assert format_value("dp_per_session", None) == "–"
    assert report.fmt_pct(0.623, (0.614, 0.632)) == "62.3% (61.4–63.2%)"
