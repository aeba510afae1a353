"""The per-run statistics table of the escape challenge (issue 23, sim/escape/columns.py; R-ESC-15): both engines
give every declared column with its declared type and shape, the runs frame shows each as declared, and the
aggregate keeps each declared sum."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import sim
from sim.escape.aggregate import EscapeAggregate
from sim.escape.columns import (
    CHAR,
    FREED,
    PARTY_KIND,
    PARTY_TIER,
    PER_CHAR,
    PER_CHAR_TIER,
    RUN_STATS,
    per_run_shape,
    runs_frame,
)
from sim.escape.model import TIER_IDS
from sim.escape.params import compile_params
from sim.escape.state import ACTION_KINDS, action_kinds

S = importlib.import_module("sim.escape.simulate")
SCENARIO = "bench/escape_heavy.toml"
RUNS = 60


@pytest.fixture(scope="module")
def played():
    p = compile_params(sim.load_scenario(SCENARIO))
    kernel = S.kernel_chunk(p, RUNS, np.random.default_rng(7))
    reference = S.reference_chunk(p, RUNS, np.random.default_rng(7))
    return p, kernel, reference


def test_both_engines_give_every_declared_column(played):
    p, kernel, reference = played
    for cols in (kernel, reference):
        assert set(cols) == {s.name for s in RUN_STATS}
        for s in RUN_STATS:
            assert cols[s.name].dtype == s.dtype, s.name
            assert cols[s.name].shape == (RUNS, *per_run_shape(s, p.n_chars)), s.name
    for s in RUN_STATS:  # the two engines agree run for run (R-GEN-7), column by column
        assert np.array_equal(kernel[s.name], reference[s.name]), s.name


def test_runs_frame_shows_each_statistic_as_declared(played):
    p, cols, _ = played
    frame = runs_frame(p, cols, start=5)
    assert frame["run"].tolist() == list(range(5, 5 + RUNS))
    for s in RUN_STATS:
        stem = s.label or s.name
        x = cols[s.name]
        if s.frame == PER_CHAR:
            for i, name in enumerate(p.names):
                assert np.array_equal(frame[f"{name}.{stem}"].to_numpy(), x[:, i]), (s.name, name)
        elif s.frame == FREED:  # never freed (0) is missing
            for i, name in enumerate(p.names):
                col = frame[f"{name}.{stem}"]
                assert col.isna().tolist() == (x[:, i] == 0).tolist()
                assert col.fillna(0).astype(np.int64).tolist() == x[:, i].tolist()
        elif s.frame == PER_CHAR_TIER:
            for i, name in enumerate(p.names):
                for t in range(1, 9):
                    assert np.array_equal(frame[f"{name}.{stem}_{TIER_IDS[t]}"].to_numpy(), x[:, i, t])
        elif s.frame == PARTY_TIER:
            for t in range(1, 9):
                assert np.array_equal(frame[f"{stem}_{TIER_IDS[t]}"].to_numpy(), x[:, :, t].sum(axis=1))
        elif s.frame == PARTY_KIND:
            shown = action_kinds(p)
            for k, kind in enumerate(ACTION_KINDS):
                assert (f"{stem}_{kind}" in frame) == (kind in shown)
                if kind in shown:
                    assert np.array_equal(frame[f"{stem}_{kind}"].to_numpy(), x[:, :, k].sum(axis=1))


def test_aggregate_keeps_each_declared_sum(played):
    p, cols, _ = played
    agg = EscapeAggregate.empty(p).add(cols)
    half = EscapeAggregate.empty(p).add({k: v[: RUNS // 2] for k, v in cols.items()})
    half.merge(EscapeAggregate.empty(p).add({k: v[RUNS // 2:] for k, v in cols.items()}))
    declared = [s for s in RUN_STATS if s.total]
    assert {s.name for s in declared} >= {"checks", "successes", "overloads", "items_found", "action_counts"}
    for s in declared:
        assert np.array_equal(getattr(agg, s.total), cols[s.name].sum(axis=0)), s.name
        assert np.array_equal(getattr(half, s.total), cols[s.name].sum(axis=0)), s.name  # merge: same sums
    fr = cols["freed_round"]
    assert np.array_equal(agg.freed, (fr > 0).sum(axis=0))
    assert [s.shape for s in RUN_STATS if s.name == "freed_round"] == [CHAR]


def test_the_kernel_numbers_its_statistics_from_the_declaration():
    """Issue 39 item 5: the batch engine's statistic fields are the declared rows' names in their order (a new row
    gets its column), each index looked up by name (no hand-numbered tuple)."""
    from sim.escape import kernel as K
    from sim.escape.columns import CHAR, CHAR_TIER, RUN, stat_names

    assert K.CHAR_FIELDS == K.CHAR_STATE + stat_names(CHAR)
    assert K.RUN_FIELDS == stat_names(RUN) and K.TIER_STATS == stat_names(CHAR_TIER)
    for fields, names in ((K.CHAR_FIELDS, stat_names(CHAR)), (K.RUN_FIELDS, stat_names(RUN)),
                          (K.TIER_STATS, stat_names(CHAR_TIER))):
        for name in names:
            assert getattr(K, name.upper()) == fields.index(name), name
