"""The per-game statistics table of the campus game (issue 23, sim/campus/columns.py; R-CAM-41): both engines give
every declared statistic with its declared type and shape, the engine's record holds each, the runs frame shows
each as declared (and nothing else), and the aggregate keeps each declared sum or fold."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import sim
from sim.campus.aggregate import CampusAggregate
from sim.campus.columns import (
    AXES,
    COLUMN,
    OUTCOME,
    PC,
    PC_STANCE,
    RUN,
    RUN_STATS,
    TURN,
    column_names,
    per_game_shape,
    runs_frame,
)
from sim.campus.kernel import new_record, run_kernel
from sim.campus.params import CAPTURED, CLEARED, GAME_OVER, STATUS_NAMES, compile_params
from sim.campus.reference import games_to_arrays, run_reference

RUNS = 40
# the heavy map (teams, a boss, a mission, rescues) and the one example with a buy list (R-CAM-9a: PC_ITEM cells)
NAMES = ("six_pcs_two_teams", "signature_price")


@pytest.fixture(scope="module", params=NAMES)
def played(request, examples):
    p = compile_params(sim.load_scenario(examples[request.param]))
    kernel = run_kernel(p, RUNS, np.random.default_rng(7))
    reference = games_to_arrays(p, run_reference(p, RUNS, np.random.default_rng(7)))
    return p, kernel, reference


def test_the_table_declares_the_outputs_of_r_cam_41():
    # R-CAM-41: per game, cleared PCs, game overs, captures, rescues tried and won, each PC's status per turn
    names = {s.name for s in RUN_STATS}
    assert {"final_status", "captures_t", "rescues_tried", "rescues_won", "status_by_turn"} <= names
    assert len(names) == len(RUN_STATS)
    for s in RUN_STATS:
        assert s.shape in AXES and s.frame in (COLUMN, OUTCOME, "hidden"), s.name
        assert not s.turn_sum or s.shape == TURN, s.name


def test_both_engines_give_every_declared_statistic(played):
    p, kernel, reference = played
    for cols in (kernel, reference):
        assert set(cols) == {s.name for s in RUN_STATS}
        for s in RUN_STATS:
            assert cols[s.name].dtype == s.dtype, s.name
            assert cols[s.name].shape == (RUNS, *per_game_shape(s, p)), s.name
    for s in RUN_STATS:  # the two engines agree game for game (R-GEN-7), statistic by statistic
        assert np.array_equal(kernel[s.name], reference[s.name]), s.name
    assert p.B == 0 or kernel["bought"].any()  # the buy-list example buys something in 40 games


def test_the_engine_record_holds_every_statistic(played):
    p = played[0]
    rec = new_record(p, 3)
    for s in RUN_STATS:
        x = getattr(rec, s.engine)
        assert x.dtype == s.dtype and x.shape == (3, *per_game_shape(s, p)), s.name


def test_runs_frame_shows_each_statistic_as_declared(played):
    p, a, _ = played
    frame = runs_frame(p, a, start=5)
    assert frame["run"].tolist() == list(range(5, 5 + RUNS))
    expected = {"run"}
    for s in RUN_STATS:
        if s.frame == "hidden":
            continue
        names = column_names(s, p)
        cells = a[s.name].reshape(RUNS, -1)  # cells in C order, as column_names names them
        assert len(names) == cells.shape[1], s.name
        expected.update(names)
        for j, name in enumerate(names):
            col = frame[name]
            if s.frame == OUTCOME:  # each PC's status by name
                assert col.tolist() == [STATUS_NAMES[c] for c in cells[:, j]], name
            else:
                assert col.dtype == s.frame_dtype and np.array_equal(col.to_numpy(), cells[:, j]), name
        if s.frame == OUTCOME:  # the party's counts of PCs cleared, out and captured at the end
            x = a[s.name]
            expected.update(("cleared", "party_cleared", "game_overs", "captured_at_end"))
            assert frame["cleared"].tolist() == (x == CLEARED).sum(1).tolist()
            assert frame["party_cleared"].tolist() == (x == CLEARED).all(1).tolist()
            assert frame["game_overs"].tolist() == (x == GAME_OVER).sum(1).tolist()
            assert frame["captured_at_end"].tolist() == (x == CAPTURED).sum(1).tolist()
        if s.turn_sum:
            expected.add(s.turn_sum)
            assert frame[s.turn_sum].tolist() == a[s.name].sum(1).tolist(), s.name
    assert set(frame.columns) == expected and len(frame.columns) == len(expected)  # nothing undeclared
    # the frame's leading columns: run, then the party's counts, RUN statistics and sums over turns in table order
    lead = ["run"]
    for s in RUN_STATS:
        if s.frame == OUTCOME:
            lead += ["cleared", "party_cleared", "game_overs", "captured_at_end"]
        elif s.shape == RUN:
            lead += column_names(s, p)
        elif s.turn_sum:
            lead.append(s.turn_sum)
    assert list(frame.columns[: len(lead)]) == lead
    # then PC by PC: its PC and PC_STANCE statistics
    per_pc = [s for s in RUN_STATS if s.shape in (PC, PC_STANCE)]
    k = sum(len(column_names(s, p)) // p.P for s in per_pc)
    first_pc = list(frame.columns[len(lead): len(lead) + k])
    assert first_pc == [n for s in per_pc for n in column_names(s, p) if n.startswith("pc0_")]


def test_aggregate_keeps_each_declared_sum(played):
    p, a, _ = played
    agg = CampusAggregate.empty(p).add(a)
    half = CampusAggregate.empty(p).add({k: v[: RUNS // 2] for k, v in a.items()})
    half.merge(CampusAggregate.empty(p).add({k: v[RUNS // 2:] for k, v in a.items()}))
    for s in RUN_STATS:
        if s.total:  # the sum over games, without the game axis (merging two halves: the same sums)
            want = a[s.name].sum(0)
            assert np.array_equal(getattr(agg, s.total), want), s.name
            assert np.array_equal(getattr(half, s.total), want), s.name
            assert isinstance(getattr(agg, s.total), int) == (s.shape == RUN), s.name
    assert {s.name for s in RUN_STATS if s.total} >= {"captures_t", "checks_t", "escapes_t", "rescues_tried"}


@pytest.mark.parametrize("stat", [s for s in RUN_STATS if s.total or s.folded], ids=lambda s: s.name)
def test_aggregate_reads_each_statistic(stat, examples):
    """Changing one game's value of a statistic changes what the aggregate keeps of it (its total or its fold)."""
    p = compile_params(sim.load_scenario(examples["signature_price"]))
    a = run_kernel(p, RUNS, np.random.default_rng(3))
    changed = {k: v.copy() for k, v in a.items()}
    x = changed[stat.name].reshape(RUNS, -1)
    if x.shape[1] == 0:
        pytest.skip(f"{stat.name} has no cells in this scenario")
    x[0] = np.where(x[0] != 0, 0, 1)  # every cell of game 0 changed, zero against non-zero (counted or bought)
    before, after = CampusAggregate.empty(p).add(a), CampusAggregate.empty(p).add(changed)
    for attr in (stat.total, stat.folded):
        if attr:
            assert not np.array_equal(getattr(before, attr), getattr(after, attr)), (stat.name, attr)


def test_only_the_final_abilities_are_not_aggregated():
    # the summary and the report show no final abilities (R-CAM-41 names none); every other statistic is kept
    assert [s.name for s in RUN_STATS if not (s.total or s.folded)] == ["base"]


def test_every_kept_attribute_is_a_field_of_the_aggregate():
    # the chunk store (sim.batch) keeps an aggregate's dataclass fields only: a total set but not declared would be
    # lost when a run resumes from stored chunks
    declared = {f.name for f in dataclasses.fields(CampusAggregate)}
    for s in RUN_STATS:
        for attr in (s.total, s.folded):
            assert not attr or attr in declared, (s.name, attr)
