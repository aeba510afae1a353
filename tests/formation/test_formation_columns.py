"""The per-run statistics table of a formation play (issue 23, sim/formation/columns.py; R-MDK-14): both engines
give every declared column with its declared type, a step not played keeps its declared value, the runs frame shows
each statistic as declared (and no other), and the aggregate keeps each declared sum."""

from __future__ import annotations

import numpy as np
import pytest
from formation_helpers import example

import sim
from sim.formation.aggregate import FormationAggregate
from sim.formation.columns import (
    AMBUSH,
    NO_SKIRMISH,
    RUN_STATS,
    SKIRMISH,
    WINNER,
    WINNER_LABELS,
    allocate,
    fill,
    runs_frame,
)
from sim.formation.kernel import ambush_kernel, run_chunk_kernel
from sim.formation.model import compile_params
from sim.formation.reference import run_chunk_reference

RUNS = 60
EXAMPLES = ("summoner_vs_horde", "dp_income")  # with a skirmish (R-MDK-5 summons), and the session only


@pytest.fixture(scope="module", params=EXAMPLES)
def played(request):
    p = compile_params(sim.load_scenario(example(request.param)))
    kernel = run_chunk_kernel(p, RUNS, np.random.default_rng(7))
    reference = run_chunk_reference(p, RUNS, np.random.default_rng(7))
    return p, kernel, reference


def test_both_engines_give_every_declared_column(played):
    p, kernel, reference = played
    for cols in (kernel, reference):
        assert list(cols) == [s.name for s in RUN_STATS]
        for s in RUN_STATS:
            assert cols[s.name].dtype == s.dtype and cols[s.name].shape == (RUNS,), s.name
    for s in RUN_STATS:  # the two engines agree run for run (STYLE.md practice 6), column by column
        np.testing.assert_array_equal(kernel[s.name], reference[s.name], err_msg=s.name)
    for s in RUN_STATS:  # a play without a skirmish keeps the skirmish's declared values: no winner, 0 rounds
        if s.step == SKIRMISH and not p.skirmish:
            assert (kernel[s.name] == s.empty).all(), s.name
    assert {s.name: s.empty for s in RUN_STATS if s.empty} == {"skirmish_winner": NO_SKIRMISH}


def test_a_step_must_give_exactly_its_declared_statistics():
    p = compile_params(sim.load_scenario(example("summoner_vs_horde")))
    out = ambush_kernel(p, np.random.default_rng(1).random((5, 4)))
    cols = allocate(5)
    fill(cols, AMBUSH, out)
    assert np.array_equal(cols["ambush_win"], out["ambush_win"])
    with pytest.raises(ValueError, match="declares"):
        fill(cols, AMBUSH, {k: v for k, v in out.items() if k != "ambush_win_by_2"})
    with pytest.raises(ValueError, match="declares"):
        fill(cols, AMBUSH, {**out, "ambush_margin": out["ambush_ambusher_total"]})


def test_runs_frame_shows_each_statistic_as_declared(played):
    p, cols, _ = played
    frame = runs_frame(cols, start=3)
    # the runs frame of a play (R-MDK-14): the ambush check (R-MDK-12, R-MDK-20), the session's DP (R-MDK-3,
    # R-MDK-21), the skirmish's winner and rounds, units on the field and withdrawn (R-MDK-5), enslavement DP
    assert list(frame.columns) == [
        "run", "ambush_ambusher_total", "ambush_defender_total", "ambush_win", "ambush_win_by_2", "dp_rewards",
        "dp_sixes", "dp_session", "skirmish_winner", "skirmish_rounds", "survivors_a", "survivors_b", "withdrawn_a",
        "withdrawn_b", "enslave_dp"]
    assert frame["run"].tolist() == list(range(3, 3 + RUNS))
    for s in RUN_STATS:
        col = frame[s.name]
        if s.frame == WINNER:
            assert list(col.cat.categories) == ["A", "B", "draw", "none"]
            assert col.astype(str).tolist() == [WINNER_LABELS[int(w)] for w in cols[s.name]]
        else:
            assert col.dtype == s.dtype and np.array_equal(col.to_numpy(), cols[s.name]), s.name


def test_aggregate_keeps_each_declared_sum(played):
    p, cols, _ = played
    agg = FormationAggregate.empty(p).add(cols)
    half = FormationAggregate.empty(p).add({k: v[: RUNS // 2] for k, v in cols.items()})
    half.merge(FormationAggregate.empty(p).add({k: v[RUNS // 2:] for k, v in cols.items()}))
    declared = [s for s in RUN_STATS if s.total]
    assert {s.name for s in declared} == {"ambush_win", "ambush_win_by_2", "survivors_a", "survivors_b",
                                          "withdrawn_a", "withdrawn_b", "enslave_dp"}
    for s in declared:
        assert agg.sums[s.name] == half.sums[s.name] == int(cols[s.name].sum()), s.name  # merge: the same sums
    # the statistics folded their own way: the session's DP, the skirmish's winner by rounds
    assert np.array_equal(agg.dp_counts[: cols["dp_session"].max() + 1], np.bincount(cols["dp_session"]))
    for code in (NO_SKIRMISH, 0, 1, 2):
        won = cols["skirmish_winner"] == code
        assert np.array_equal(agg.winner_rounds[code + 1],
                              np.bincount(cols["skirmish_rounds"][won], minlength=p.max_rounds + 1)), code
