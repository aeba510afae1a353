"""Streaming campus runs (``keep_runs=False``): the summary, the per-game parquet parts, the report and the
balance metrics match the in-memory run exactly; the CLI writes runs.parquet as a partitioned dataset."""

import io
import json
import pickle

import numpy as np
import pandas as pd
import pytest
from examples import ROOT

import sim
from sim.campus.aggregate import CampusAggregate
from sim.campus.params import compile_params
from sim.campus.simulate import run_arrays
from sim.designer.balance import balance_metrics, spread

SCEN = ROOT / "scenarios" / "campus"
RUNS = 21_500  # three chunks, the last one short


@pytest.fixture(scope="module")
def scenario():
    return sim.load_scenario(SCEN / "specialists_late_capture.toml")  # vitality can end below zero


@pytest.fixture(scope="module")
def both(scenario):
    parts: dict[int, bytes] = {}
    streamed = sim.simulate(scenario, runs=RUNS, seed=11, keep_runs=False, runs_sink=parts.__setitem__)
    kept = sim.simulate(scenario, runs=RUNS, seed=11)
    return kept, streamed, parts


def test_streamed_summary_equals_in_memory_summary(both):
    kept, streamed, _ = both
    assert streamed.summary == kept.summary
    assert streamed.runs.empty and len(kept.runs) == RUNS
    assert streamed.extra["aggregate"].runs == kept.extra["aggregate"].runs == RUNS


@pytest.mark.parametrize("name", sorted(p.name for p in SCEN.glob("*.toml")))
def test_streamed_summary_equals_in_memory_every_scenario(name):
    s = sim.load_scenario(SCEN / name)
    kept = sim.simulate(s, runs=10_500, seed=4)
    streamed = sim.simulate(s, runs=10_500, seed=4, keep_runs=False)
    assert streamed.summary == kept.summary


def test_parquet_parts_concatenated_equal_the_runs_frame(both):
    kept, _, parts = both
    assert sorted(parts) == [0, 1, 2]
    frames = [pd.read_parquet(io.BytesIO(parts[i])) for i in sorted(parts)]
    assert [len(f) for f in frames] == [10_000, 10_000, 1_500]
    joined = pd.concat(frames, ignore_index=True)
    pd.testing.assert_frame_equal(joined, kept.runs)


def test_no_sink_writes_nothing_and_n_jobs_agree(scenario):
    one = sim.simulate(scenario, runs=RUNS, seed=11, keep_runs=False)
    two = sim.simulate(scenario, runs=RUNS, seed=11, keep_runs=False, n_jobs=2)
    assert one.summary == two.summary


def test_reference_engine_streams_the_same(scenario):
    kept = sim.simulate(scenario, runs=300, seed=2, engine="reference")
    streamed = sim.simulate(scenario, runs=300, seed=2, engine="reference", keep_runs=False)
    kernel = sim.simulate(scenario, runs=300, seed=2, keep_runs=False)
    assert streamed.summary == kept.summary == kernel.summary


def test_aggregate_matches_the_arrays_and_merges_in_any_grouping(scenario):
    p = compile_params(scenario)
    a = run_arrays(p, 3000, 9)
    whole = CampusAggregate.empty(p).add(a)
    halves = [CampusAggregate.empty(p).add({k: v[s] for k, v in a.items()})
              for s in (slice(0, 1200), slice(1200, 3000))]
    merged = CampusAggregate.empty(p).merge(halves[1]).merge(halves[0])
    merged = pickle.loads(pickle.dumps(merged))  # chunk stores and workers pickle it
    for agg in (whole, merged):
        assert agg.runs == 3000
        vit = a["vitality"]
        assert agg.vitality_lo == vit.min()
        for i in range(p.P):
            expect = np.bincount(vit[:, i] - vit.min(), minlength=vit.max() - vit.min() + 1)
            assert np.array_equal(agg.vitality_counts[i], expect)
            assert np.array_equal(agg.end_turn_counts[i], np.bincount(a["end_turn"][:, i], minlength=p.T + 1))
        assert np.array_equal(agg.status_by_turn[:, :, 1], (a["status_by_turn"] == 1).sum(0))
        assert np.array_equal(agg.checks_t, a["checks_t"].sum(0))
    for name in ("final_counts", "status_by_turn", "end_turn_counts", "vitality_counts", "checks_t", "wins_tmpl"):
        assert np.array_equal(getattr(whole, name), getattr(merged, name))


def test_report_from_a_streamed_result(both, tmp_path):
    kept, streamed, _ = both
    page = sim.kind_module("campus").write_report(streamed, tmp_path / "s").read_text()
    assert "Stance analysis" in page and page.count("<img") >= 6
    for png in ("outcome_by_pc.png", "status_by_turn.png", "vitality_end.png", "stance_game_value.png"):
        assert (tmp_path / "s" / png).stat().st_size > 0
    kept_page = sim.kind_module("campus").write_report(kept, tmp_path / "k").read_text()
    assert page == kept_page  # built from the same aggregate, summary and scenario


def test_balance_metrics_of_a_streamed_result(both):
    kept, streamed, _ = both
    a, b = balance_metrics(kept), balance_metrics(streamed)
    assert a["failure_turn"] == b["failure_turn"]
    assert b["run_length"] == pytest.approx(a["run_length"], rel=1e-12, abs=1e-12)
    ends = kept.runs[[c for c in kept.runs if c.endswith("_end_turn")]].to_numpy().ravel()
    assert b["run_length"] == pytest.approx(spread(ends), rel=1e-12, abs=1e-12)


def test_cli_run_streams_a_partitioned_runs_dataset(tmp_path, cli):
    out = tmp_path / "out"
    assert cli("run", SCEN / "seed_trio_vs_hounds.toml", "--runs", 25000, "--out", out, "--quiet").code == 0
    dataset = out / "runs.parquet"
    assert dataset.is_dir() and len(list(dataset.glob("part-*.parquet"))) == 3
    runs = pd.read_parquet(dataset)
    assert len(runs) == 25_000
    assert sorted(runs["run"].to_numpy()) == list(range(25_000))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "campus" and summary["runs"] == 25_000
    assert summary["clear_rate"] == pytest.approx(float(runs["cleared"].sum() / (25_000 * 3)))
    assert (out / "report.html").exists() and not (out / ".chunks").exists()
