"""Issue 27, the escape runs frame and aggregate outside the engine (sim/escape/columns.py, sim/escape/aggregate.py;
R-ESC-15): the frame built from one block per numpy type, chunk by chunk, is the frame a plain dict of columns
gives (names, order, types, values, parquet bytes), and the compiled aggregate keeps what numpy's passes over the
columns keep. The plain builders below are the by-hand references: written from the RUN_STATS table, not from the
code under test."""

from __future__ import annotations

import importlib
from unittest import mock

import numpy as np
import pandas as pd
import pytest

import sim
import sim.frames
from sim.batch import parquet_bytes
from sim.escape import columns as C
from sim.escape import kernel as K
from sim.escape.aggregate import EscapeAggregate
from sim.escape.model import TIER_IDS
from sim.escape.params import compile_params
from sim.escape.state import ACTION_KINDS, action_kinds
from sim.result import DeferredFrame, SimulationResult

S = importlib.import_module("sim.escape.simulate")
TEAMWORK = "scenarios/escape/teamwork.toml"  # five characters, team policy: escaped, caught, timed out, never freed
RUNS = 400


def plain_frame(p, cols, start=0) -> pd.DataFrame:
    """The runs frame as a dict of columns, one column at a time (R-ESC-15: run, the RUN statistics, the party's
    totals by tier, each character's statistics, the party's actions by kind)."""
    data = {"run": np.arange(start, start + len(cols["outcome"]), dtype=np.int64)}
    for s in C.RUN_STATS:
        if s.frame == C.OUTCOME:  # codes 1 escaped, 2 caught, 3 timeout
            data[s.name] = pd.Categorical.from_codes(cols[s.name] - 1, list(C.OUTCOME_NAMES))
        elif s.frame == C.COLUMN:
            data[s.name] = cols[s.name].copy()
    party = [s for s in C.RUN_STATS if s.frame == C.PARTY_TIER]
    for t in range(1, 9):
        for s in party:
            data[f"{s.label}_{TIER_IDS[t]}"] = cols[s.name][:, :, t].sum(axis=1).astype(s.frame_dtype or s.dtype)
    for i, name in enumerate(p.names):
        for s in C.RUN_STATS:
            if s.frame == C.FREED:
                fr = cols[s.name][:, i].astype(np.int64)
                data[f"{name}.{s.name}"] = pd.array([None if v == 0 else v for v in fr], dtype="Int64")
            elif s.frame == C.PER_CHAR:
                data[f"{name}.{s.label or s.name}"] = cols[s.name][:, i].copy()
        for s in C.RUN_STATS:
            if s.frame == C.PER_CHAR_TIER:
                for t in range(1, 9):
                    data[f"{name}.{s.label}_{TIER_IDS[t]}"] = cols[s.name][:, i, t].copy()
    shown = action_kinds(p)
    for s in C.RUN_STATS:
        if s.frame == C.PARTY_KIND:
            for k, kind in enumerate(ACTION_KINDS):
                if kind in shown:
                    data[f"{s.label}_{kind}"] = cols[s.name][:, :, k].sum(axis=1).astype(s.frame_dtype or s.dtype)
    return pd.DataFrame(data)


def assert_same_frame(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.columns) == list(want.columns)
    assert list(got.dtypes) == list(want.dtypes)
    assert got.columns.dtype == want.columns.dtype and type(got.index) is type(want.index)
    assert parquet_bytes(got) == parquet_bytes(want)  # the runs.parquet parts, byte for byte


@pytest.fixture(scope="module")
def played():
    p = compile_params(sim.load_scenario(TEAMWORK))
    cols = S.kernel_chunk(p, RUNS, np.random.default_rng(11), p.policy)
    assert all((cols["outcome"] == code).any() for code in (K.ESCAPED, K.CAUGHT, K.TIMEOUT))
    assert (cols["freed_round"] == 0).any() and (cols["freed_round"] > 0).any()
    return p, cols


def test_runs_frame_is_the_plain_frame(played):
    p, cols = played
    assert_same_frame(C.runs_frame(p, cols, start=30), plain_frame(p, cols, start=30))


def test_runs_frame_from_the_reference_is_the_plain_frame(played):
    p, _ = played
    cols = S.reference_chunk(p, 50, np.random.default_rng(3), p.policy)  # contiguous columns, not engine views
    assert_same_frame(C.runs_frame(p, cols), plain_frame(p, cols))


def test_runs_frame_filled_chunk_by_chunk_is_the_whole_frame(played):
    p, cols = played
    frame = C.RunsFrame(p, RUNS, start=7)
    for lo, hi in ((0, 150), (150, 151), (151, RUNS)):  # uneven parts, one of a single run
        frame.fill({k: v[lo:hi] for k, v in cols.items()}, lo)
    assert_same_frame(frame.frame(), plain_frame(p, cols, start=7))


def test_runs_frame_without_the_blocks_api_is_the_same_frame(played):
    """pandas < 3 has no create_dataframe_from_blocks: the frame is then built from the blocks' rows."""
    p, cols = played
    with mock.patch.object(sim.frames, "_create_from_blocks", None):
        frame = C.runs_frame(p, cols)
    assert_same_frame(frame, plain_frame(p, cols))


def test_runs_frame_has_one_block_per_type(played):
    """The design's point: the numpy columns of each type share one block, as pandas' own consolidation would
    make (so operations over many columns stay fast), without pandas copying them into it."""
    p, cols = played
    frame = C.runs_frame(p, cols)
    lay = C.frame_layout(p)
    n_extension = len(lay.outcome) + len(lay.freed)
    assert frame._mgr.nblocks == len(lay.types) + n_extension
    assert frame._mgr.is_consolidated()


def numpy_aggregate(p, cols) -> dict:
    """What the aggregate keeps, with numpy's passes over the columns (the aggregate before issue 27)."""
    size = p.max_rounds + 1
    outcome, rounds = cols["outcome"], cols["rounds"].astype(np.int64)
    esc, caught = outcome == K.ESCAPED, outcome == K.CAUGHT
    per_tier = cols["rounds_at_tier"][~esc].sum(axis=1)  # (runs not escaped, 9): the party's rounds by tier
    out = {
        "runs": len(outcome),
        "outcomes": np.bincount(outcome, minlength=4)[:4],
        "escaped_at": np.bincount(rounds[esc], minlength=size)[:size],
        "rounds_sum": float(rounds[esc].sum()),
        "rounds_sumsq": float((rounds[esc] ** 2).sum()),
        "rounds_all": np.bincount(rounds, minlength=size)[:size],
        # the tier with the most rounds, the lowest on a tie (argmax keeps the first)
        "failure_tiers": np.bincount(per_tier[:, 1:].argmax(axis=1) + 1, minlength=9)[:9],
        "first_round": np.bincount(cols["first_round"].astype(np.int64) * 2 + esc, minlength=6)[:6].reshape(3, 2),
        "freed": (cols["freed_round"] > 0).sum(axis=0),
        "freed_round_sum": cols["freed_round"].sum(axis=0, dtype=np.int64),
        "attention_sum": float(cols["attention"].sum()),
        "caught_at": np.bincount(rounds[caught], minlength=size)[:size],
        "caught_attention": np.bincount(rounds[caught], weights=cols["attention"][caught], minlength=size)[
            :size].astype(np.int64),
    }
    acts = np.zeros((size, len(ACTION_KINDS)), dtype=np.int64)
    np.add.at(acts, rounds[caught], cols["action_counts"][caught].sum(axis=1))
    out["caught_actions"] = acts
    for s in C.RUN_STATS:
        if s.total:
            out[s.total] = cols[s.name].sum(axis=0, dtype=np.int64)
    return out


def assert_aggregate(agg: EscapeAggregate, want: dict) -> None:
    for name, value in want.items():
        got = getattr(agg, name)
        if isinstance(value, np.ndarray):
            assert got.dtype == np.int64 and np.array_equal(got, value), (name, got, value)
        else:
            assert got == value and type(got) is type(value), (name, got, value)


def test_aggregate_keeps_what_numpy_passes_keep(played):
    p, cols = played
    assert_aggregate(EscapeAggregate.empty(p).add(cols), numpy_aggregate(p, cols))


def test_aggregate_of_chunks_is_the_aggregate_of_the_whole(played):
    p, cols = played
    agg = EscapeAggregate.empty(p)
    for lo, hi in ((0, 1), (1, 200), (200, RUNS)):
        agg.merge(EscapeAggregate.empty(p).add({k: v[lo:hi] for k, v in cols.items()}))
    assert_aggregate(agg, numpy_aggregate(p, cols))
    folded = EscapeAggregate.empty(p)  # runs kept: each chunk folded in as it comes
    for lo, hi in ((0, 123), (123, RUNS)):
        folded.add({k: v[lo:hi] for k, v in cols.items()})
    assert_aggregate(folded, numpy_aggregate(p, cols))


def test_failure_tier_tie_goes_to_the_lowest_tier(played):
    """Two runs that did not escape: the first spends 3 rounds at tier 2 and 3 at tier 5 (a tie: tier 2), the
    second 1 round at tier 1 and 4 at tier 8 (tier 8)."""
    p, cols = played
    two = {k: v[:2].copy() for k, v in cols.items()}
    two["outcome"][:] = K.TIMEOUT
    two["rounds_at_tier"][:] = 0
    two["rounds_at_tier"][0, 0, 2] = 2
    two["rounds_at_tier"][0, 1, 2] = 1
    two["rounds_at_tier"][0, 3, 5] = 3
    two["rounds_at_tier"][1, 2, 1] = 1
    two["rounds_at_tier"][1, 0, 8] = 4
    agg = EscapeAggregate.empty(p).add(two)
    assert agg.failure_tiers.tolist() == [0, 0, 1, 0, 0, 0, 0, 0, 1]


def test_aggregate_without_attention_or_first_round(played):
    """Columns without ``attention`` (or ``first_round``) leave those sums alone and keep no caught actions."""
    p, cols = played
    want = numpy_aggregate(p, cols)
    part = {k: v for k, v in cols.items() if k not in ("attention", "first_round")}
    agg = EscapeAggregate.empty(p).add(part)
    assert agg.attention_sum == 0.0 and agg.caught_actions is None
    assert not agg.caught_at.any() and not agg.first_round.any()
    assert_aggregate(agg, {k: v for k, v in want.items() if k not in (
        "attention_sum", "caught_at", "caught_attention", "caught_actions", "first_round")})


def test_simulate_kept_and_streamed_agree():
    """Runs kept (chunks folded and shown as they come) and streamed give the same aggregate, and the kept frame is
    the plain frame of the kept columns."""
    scenario = sim.load_scenario(TEAMWORK)
    kept = sim.simulate(scenario, runs=25_000, seed=5)  # three chunks, the last one short
    streamed = sim.simulate(scenario, runs=25_000, seed=5, keep_runs=False)
    want = numpy_aggregate(kept.params, kept.columns)
    assert_aggregate(kept.aggregate, want)
    assert_aggregate(streamed.aggregate, want)
    assert_same_frame(kept.runs, plain_frame(kept.params, kept.columns))


def test_kept_runs_frame_is_made_when_first_read_and_kept():
    """A caller of the summary alone never builds the frame; the first read builds it once, from the columns."""
    result = sim.simulate(sim.load_scenario(TEAMWORK), runs=3000, seed=2)
    assert isinstance(result.__dict__["_runs"], DeferredFrame)  # not built by simulate
    frame = result.runs
    assert result.runs is frame and not isinstance(result.__dict__["_runs"], DeferredFrame)
    assert_same_frame(frame, plain_frame(result.params, result.columns))
    for name, column in result.columns.items():  # what the frame is made from cannot change under it
        with pytest.raises(ValueError, match="read-only"):
            column[0] = 0
        assert not column.flags.writeable, name


def test_deferred_frame_is_made_once():
    made = []
    result = SimulationResult(None, DeferredFrame(lambda: made.append(1) or pd.DataFrame({"run": [0, 1]})), {})
    assert made == []
    assert result.runs["run"].tolist() == [0, 1] and result.runs is result.runs
    assert made == [1]
    result.runs = pd.DataFrame({"run": [5]})  # set as before
    assert result.runs["run"].tolist() == [5]
