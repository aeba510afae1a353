"""Streaming (keep_runs=False): the summary from the chunk aggregates equals the in-memory one, the
parquet parts are the in-memory runs frame, the report needs no runs, and the CLI writes runs.parquet
as a partitioned dataset."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from formation_helpers import example

import sim
from sim.batch import map_chunks
from sim.designer.balance import balance_metrics, spread
from sim.formation import STREAMS, write_report
from sim.formation.aggregate import FormationAggregate
from sim.formation.engine import _chunk
from sim.formation.model import compile_params
from sim.scenario import parse_scenario

HORDE = example("summoner_vs_horde")


def _stream(scenario, runs, seed, **kw):
    parts: dict[int, bytes] = {}

    def sink(index: int, part: bytes) -> None:
        assert index not in parts
        parts[index] = part

    result = sim.simulate(scenario, runs=runs, seed=seed, keep_runs=False, runs_sink=sink, **kw)
    return result, parts


@pytest.fixture(scope="module")
def pair():
    """The same 23 456 runs (three chunks, the last one short) in memory and streamed."""
    s = sim.load_scenario(HORDE)
    whole = sim.simulate(s, runs=23_456, seed=31)
    streamed, parts = _stream(s, 23_456, 31)
    return s, whole, streamed, parts


def test_the_kind_streams():
    assert STREAMS is True


def test_streamed_summary_equals_the_in_memory_summary_exactly(pair):
    _, whole, streamed, _ = pair
    assert streamed.summary == whole.summary
    assert "skirmish_win_a" in streamed.summary and streamed.summary["runs"] == 23_456
    assert streamed.runs.empty and len(whole.runs) == 23_456
    assert streamed.extra["aggregate"].runs == whole.extra["aggregate"].runs == 23_456


@pytest.mark.parametrize("name", ["ambush_powered_armor", "dp_income", "overflow_front"])
def test_streamed_summary_equals_in_memory_for_every_example(name):
    s = sim.load_scenario(example(name))
    whole = sim.simulate(s, runs=12_345, seed=5)
    streamed = sim.simulate(s, runs=12_345, seed=5, keep_runs=False)  # no sink: nothing written
    assert streamed.summary == whole.summary


def test_reference_engine_streams_the_same_summary():
    s = sim.load_scenario(HORDE)
    whole = sim.simulate(s, runs=400, seed=2, engine="kernel")
    streamed, parts = _stream(s, 400, 2, engine="reference")
    assert streamed.summary == whole.summary and streamed.extra["engine"] == "reference"
    pd.testing.assert_frame_equal(pd.read_parquet(io.BytesIO(parts[0])), whole.runs)


def test_summary_matches_the_runs_frame(pair):
    """The aggregate's summary against the statistics of the per-run columns themselves."""
    _, whole, streamed, _ = pair
    df, s = whole.runs, streamed.summary
    assert s["ambush_win"] == df["ambush_win"].mean()
    assert s["dp_per_session"] == pytest.approx(df["dp_session"].mean(), rel=1e-14)
    assert s["dp_per_session_sd"] == pytest.approx(df["dp_session"].std(ddof=1), rel=1e-12)
    assert s["skirmish_win_b"] == (df["skirmish_winner"] == "B").mean()
    for key, col in (("skirmish_mean_rounds", "skirmish_rounds"), ("skirmish_mean_survivors_a", "survivors_a"),
                     ("skirmish_mean_survivors_b", "survivors_b"), ("enslave_dp_mean", "enslave_dp")):
        assert s[key] == pytest.approx(df[col].mean(), rel=1e-14), key


def test_parquet_parts_concatenated_are_the_in_memory_runs_frame(pair):
    _, whole, _, parts = pair
    assert sorted(parts) == [0, 1, 2]
    frames = [pd.read_parquet(io.BytesIO(parts[i])) for i in sorted(parts)]
    assert [len(f) for f in frames] == [10_000, 10_000, 3_456]
    assert frames[1]["run"].iloc[0] == 10_000  # the global run index
    pd.testing.assert_frame_equal(pd.concat(frames, ignore_index=True), whole.runs)


def test_aggregate_does_not_depend_on_how_chunks_are_merged():
    s = sim.load_scenario(HORDE)
    p = compile_params(s)
    cols = [{k: np.asarray(v) for k, v in res.items()} for _, res in map_chunks(_chunk, (p, "kernel"), 25_000, 4)]
    one = FormationAggregate.empty(p).add({k: np.concatenate([c[k] for c in cols]) for k in cols[0]})
    merged = FormationAggregate.empty(p)
    for c in reversed(cols):
        merged.merge(FormationAggregate.empty(p).add(c))
    assert one.runs == merged.runs
    assert one.sums == merged.sums  # ambushes won, survivors, withdrawn, enslavement DP (sim/formation/columns.py)
    assert np.array_equal(one.dp_counts, merged.dp_counts)
    assert np.array_equal(one.winner_rounds, merged.winner_rounds)
    assert one.dp_mean_sd() == merged.dp_mean_sd()


def test_report_is_written_from_a_streamed_result(pair, tmp_path):
    s, whole, streamed, _ = pair
    exact_summary = sim.exact(s)
    write_report(streamed, tmp_path / "streamed", exact_summary=exact_summary)
    write_report(whole, tmp_path / "whole", exact_summary=exact_summary)
    for f in ("report.html", "ambush_heatmap.png", "dp_income.png", "skirmish_rounds.png"):
        assert (tmp_path / "streamed" / f).is_file(), f
    html = (tmp_path / "streamed" / "report.html").read_text()
    assert "Skirmish outcomes" in html and "Targeting table" in html
    assert html == (tmp_path / "whole" / "report.html").read_text()


def test_report_of_a_streamed_result_without_a_skirmish(tmp_path):
    s = parse_scenario({"kind": "formation", "name": "dp only", "skirmish": {"enabled": False}})
    result = sim.simulate(s, runs=3000, seed=1, keep_runs=False)
    write_report(result, tmp_path)
    assert (tmp_path / "dp_income.png").is_file() and not (tmp_path / "skirmish_rounds.png").exists()
    assert balance_metrics(result)["run_length"]["max"] == 0.0


def test_balance_run_length_of_a_streamed_result_from_the_rounds_histogram(pair):
    _, whole, streamed, _ = pair
    got = balance_metrics(streamed)["run_length"]
    want = spread(whole.runs["skirmish_rounds"].to_numpy())
    assert balance_metrics(whole)["run_length"] == want
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-12), key


def test_cli_run_writes_a_partitioned_runs_dataset(cli, scratch, examples):
    out = scratch
    scenario = examples["overflow_front"]
    assert cli("run", scenario, "--runs", "25000", "--seed", "7", "--out", out).code == 0
    runs_dir = out / "runs.parquet"
    assert runs_dir.is_dir()
    assert sorted(p.name for p in runs_dir.iterdir()) == [f"part-{i:06d}.parquet" for i in range(3)]
    df = pd.read_parquet(runs_dir)
    assert len(df) == 25_000
    assert np.array_equal(np.sort(df["run"].to_numpy()), np.arange(25_000))
    assert not (out / ".chunks").exists()
    for f in ("summary.json", "report.html", "dp_income.png", "skirmish_rounds.png"):
        assert (out / f).is_file(), f
    summary = json.loads((out / "summary.json").read_text())
    whole = sim.simulate(sim.load_scenario(scenario), runs=25_000, seed=7)
    assert summary["runs"] == 25_000
    for key in ("ambush_win", "ambush_win_by_2", "dp_per_session", "skirmish_win_a", "skirmish_mean_rounds"):
        assert summary[key] == pytest.approx(whole.summary[key], rel=1e-15), key
    by_run = df.sort_values("run", ignore_index=True)
    assert np.array_equal(by_run["dp_session"].to_numpy(), whole.runs["dp_session"].to_numpy())


@pytest.mark.slow
def test_streaming_with_two_jobs_gives_the_same_summary_and_parts(pair):
    s, whole, _, _ = pair
    streamed, parts = _stream(s, 23_456, 31, n_jobs=2)
    assert streamed.summary == whole.summary
    frames = [pd.read_parquet(io.BytesIO(parts[i])) for i in sorted(parts)]
    pd.testing.assert_frame_equal(pd.concat(frames, ignore_index=True), whole.runs)
