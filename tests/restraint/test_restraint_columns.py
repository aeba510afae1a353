"""The per-run statistics table of the duel (issue 23, sim/restraint/columns.py; R-RST-13, R-RST-26): both engines
give every declared column with its declared type and shape, the runs frame shows each as declared (and no other),
and the aggregate keeps each declared sum."""

from __future__ import annotations

import numpy as np
import pytest
from restraint_helpers import CASES, make, merge

from sim.restraint.aggregate import RestraintAggregate
from sim.restraint.columns import (
    COLUMN,
    HIDDEN,
    PER_POOL,
    PER_SLOT,
    RUN,
    RUN_STATS,
    per_run_shape,
    runs_frame,
    shown,
)
from sim.restraint.kernel import run_kernel
from sim.restraint.model import SLOTS
from sim.restraint.reference import run_reference
from sim.restraint.rules import compile_params
from sim.restraint.state import draw_uniforms

RUNS = 80
# "recoveries": four race pools (the target's, then C, M, S), R-RST-32 recoveries and R-RST-33 the duel's overloads
# on, no craving; "composure": two pools (the target's, then W) with craving (R-RST-22); "plain": no stimulus at all
FEATURES = ("recoveries", "composure", "plain")


@pytest.fixture(scope="module", params=FEATURES)
def played(request):
    p = compile_params(make(**CASES[request.param]))
    u = draw_uniforms(p, RUNS, np.random.default_rng(5))
    return request.param, p, run_kernel(p, u), run_reference(p, u)


def test_both_engines_give_every_declared_column(played):
    _, p, kernel, reference = played
    for cols in (kernel, reference):
        assert set(cols) == {s.name for s in RUN_STATS}
        for s in RUN_STATS:
            assert cols[s.name].dtype == s.dtype, s.name
            assert cols[s.name].shape == (RUNS, *per_run_shape(s, p.n_pools, p.rounds)), s.name
    for s in RUN_STATS:  # the two engines agree run for run (STYLE.md practice 6), column by column
        np.testing.assert_array_equal(kernel[s.name], reference[s.name], err_msg=s.name)


def test_engines_fill_the_columns_they_keep():
    """Over duels with rages, pools, recoveries, craving and overloads (R-RST-12, R-RST-21, R-RST-22, R-RST-32,
    R-RST-33), every statistic is non-zero in some run: a row the engine left unfilled (zeros) shows here."""
    filled = set()
    for kind in ("damage", "craving"):  # craving wears every pool's maximum down to 0: composure left is 0 there
        over = merge(CASES["recoveries"], {"target": {"class": "barbarian"}, "composure": {"kind": kind}})
        p = compile_params(make(**over))
        cols = run_kernel(p, draw_uniforms(p, 400, np.random.default_rng(3)))
        filled |= {name for name, x in cols.items() if x.any()}
    # no ranger uses (R-RST-12: rangers only) and nothing on the body (R-RST-26: never incapacitated)
    assert filled == {s.name for s in RUN_STATS} - {"ranger_uses_left", "first_incapacitated_round"}


def _expected_frame_columns(p) -> list[str]:
    """The runs frame's columns (SCENARIOS.md, restraint): run, each slot's final level, the duel's counts, the first
    rounds incapacitated (R-RST-26) and arms complete (R-RST-13), then pool by pool the round of the first overload
    (R-RST-21), the craving (R-RST-22) and the recoveries (R-RST-32) when on, then the duel's overloads (R-RST-33)."""
    names = ["run", *(f"{slot}_final" for slot in SLOTS), "escape_checks", "escape_successes", "bindings_won",
             "rages_left", "ranger_uses_left", "first_incapacitated_round", "first_arms_complete_round"]
    for pool, member in enumerate(p.pool_names):
        suffix = "" if pool == 0 else f"_{member}"
        names.append(f"overload_round{suffix}")
        if p.craving:
            names.append(f"craving{suffix}")
        if p.recoveries:
            names.append(f"recoveries{suffix}")
    if p.duel_overload:
        names.append("overloads")
    return names


def test_runs_frame_shows_each_statistic_as_declared(played):
    name, p, cols, _ = played
    frame = runs_frame(p, cols, start=5)
    assert list(frame.columns) == _expected_frame_columns(p)
    assert frame["run"].tolist() == list(range(5, 5 + RUNS))
    for s in RUN_STATS:
        x = cols[s.name]
        stem = s.label or s.name
        if not shown(p, s):
            assert s.frame == HIDDEN or not getattr(p, s.when), s.name
            assert not any(c == stem or c.startswith(f"{stem}_") for c in frame.columns), s.name
        elif s.frame == COLUMN:
            assert frame[stem].dtype == s.dtype and np.array_equal(frame[stem].to_numpy(), x), s.name
        elif s.frame == PER_SLOT:
            for i, slot in enumerate(SLOTS):
                assert np.array_equal(frame[f"{slot}_{stem}"].to_numpy(), x[:, i]), (s.name, slot)
        elif s.frame == PER_POOL:
            for pool, member in enumerate(p.pool_names):
                col = frame[stem if pool == 0 else f"{stem}_{member}"]
                assert col.dtype == s.dtype and np.array_equal(col.to_numpy(), x[:, pool]), (s.name, member)
    if name == "recoveries":  # the switches of this duel are on, so every PER_POOL row shows but craving
        assert {s.name for s in RUN_STATS if s.frame == PER_POOL and shown(p, s)} == {"overload_round",
                                                                                      "recoveries"}


def test_aggregate_keeps_each_declared_sum(played):
    _, p, cols, _ = played
    agg = RestraintAggregate.empty(p).add(p, cols)
    half = RestraintAggregate.empty(p).add(p, {k: v[: RUNS // 2] for k, v in cols.items()})
    half.merge(RestraintAggregate.empty(p).add(p, {k: v[RUNS // 2:] for k, v in cols.items()}))
    declared = [s for s in RUN_STATS if s.total]
    assert {s.name for s in declared} >= {"escape_checks", "escape_successes", "bindings_won", "rages_left",
                                          "ranger_uses_left", "overloads", "craving", "recoveries",
                                          "checks_by_round", "dazed"}
    for s in declared:
        want = cols[s.name].sum(axis=0, dtype=np.int64)
        for a in (agg, half):  # merge: the same sums
            got = a.sums[s.name] if s.shape == RUN else a.totals[s.name]
            assert np.array_equal(got, want), s.name
    # the sums the summary reads under their own names
    assert agg.overloads_sum == cols["overloads"].sum()
    assert np.array_equal(agg.craving_sum, cols["craving"].sum(axis=0))
    assert np.array_equal(agg.recoveries_sum, cols["recoveries"].sum(axis=0))
    assert np.array_equal(agg.checks_by_round, cols["checks_by_round"].sum(axis=0))
    assert np.array_equal(agg.dazed, cols["dazed"].sum(axis=0))
    # the statistics folded their own way: final levels and first overloads as histograms
    for i in range(len(SLOTS)):
        assert np.array_equal(agg.final_levels[i], np.bincount(cols["levels"][:, i], minlength=6))
    for pool in range(p.n_pools):
        assert np.array_equal(agg.overload_at[pool],
                              np.bincount(cols["overload_round"][:, pool], minlength=p.composure_rounds + 1))
    assert [s.shape for s in RUN_STATS if s.name == "escape_checks"] == [RUN]
