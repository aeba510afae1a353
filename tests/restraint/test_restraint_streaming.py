"""Streamed restraint simulation (keep_runs=False): chunk by chunk into an aggregate, the runs handed
over as one parquet part per chunk; the same summary, runs, report and balance metrics as in memory."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from examples import ROOT
from restraint_helpers import CASES, make

import sim
from sim.designer.balance import balance_metrics
from sim.restraint import STREAMS, write_report
from sim.restraint.aggregate import RestraintAggregate

SCENARIO_DIR = ROOT / "scenarios" / "restraint"
RUNS = 23_456  # three chunks, the last one short


def _streamed(scenario, runs, seed, **kw):
    parts: dict[int, bytes] = {}

    def sink(index: int, data: bytes) -> None:
        assert index not in parts
        parts[index] = data

    result = sim.simulate(scenario, runs=runs, seed=seed, keep_runs=False, runs_sink=sink, **kw)
    return result, parts


@pytest.fixture(scope="module")
def composure_pair():
    """A scenario with party pools and craving: in memory and streamed, same seed and runs."""
    s = make(**CASES["composure"])
    memory = sim.simulate(s, runs=RUNS, seed=11)
    streamed, parts = _streamed(s, RUNS, 11)
    return s, memory, streamed, parts


def test_kind_declares_streaming():
    assert STREAMS is True


def test_streamed_summary_equals_in_memory_summary(composure_pair):
    _, memory, streamed, _ = composure_pair
    assert streamed.summary == memory.summary  # exactly, every key
    assert "mean_craving" in streamed.summary and streamed.summary["party_overload_by_round"]


@pytest.mark.parametrize("case", ["plain", "barbarian_pool", "ranger", "body_only"])
def test_streamed_summary_equals_in_memory_other_cases(case):
    s = make(**CASES[case])
    memory = sim.simulate(s, runs=12_001, seed=3)
    streamed = sim.simulate(s, runs=12_001, seed=3, keep_runs=False)
    assert streamed.summary == memory.summary
    np.testing.assert_array_equal(streamed.extra["level_distribution"], memory.extra["level_distribution"])


def test_streamed_reference_engine_equals_kernel():
    s = make(**CASES["flank_penalty"])
    kernel = sim.simulate(s, runs=250, seed=8)
    ref, parts = _streamed(s, 250, 8, engine="reference")
    assert ref.summary == kernel.summary and ref.extra["engine"] == "reference"
    pd.testing.assert_frame_equal(pd.read_parquet(io.BytesIO(parts[0])), kernel.runs)


def test_streamed_result_keeps_no_runs_but_the_aggregate(composure_pair):
    _, memory, streamed, _ = composure_pair
    assert streamed.runs.empty
    agg, mem_agg = streamed.extra["aggregate"], memory.extra["aggregate"]
    assert isinstance(agg, RestraintAggregate) and agg.runs == RUNS == mem_agg.runs
    for name in ("level_counts", "incapacitated", "arms_complete", "either", "checks_by_round", "final_levels",
                 "first_incapacitated", "first_arms_complete", "taken_out", "overload_at", "craving_sum"):
        np.testing.assert_array_equal(getattr(agg, name), getattr(mem_agg, name), err_msg=name)
    assert agg.sums == mem_agg.sums and agg.checks_sumsq == mem_agg.checks_sumsq
    # the aggregate agrees with the per-run rows it summarises
    runs = memory.runs
    assert agg.sums["escape_checks"] == runs["escape_checks"].sum()
    assert agg.sums["bindings_won"] == runs["bindings_won"].sum()
    assert agg.craving_sum[0] == runs["craving"].sum()
    np.testing.assert_array_equal(agg.first_incapacitated,
                                  np.bincount(runs["first_incapacitated_round"], minlength=agg.rounds + 1))
    np.testing.assert_array_equal(agg.final_levels[0], np.bincount(runs["arms_final"], minlength=6))
    assert memory.summary["mean_escape_checks_se"] == pytest.approx(
        runs["escape_checks"].std(ddof=1) / np.sqrt(RUNS), rel=1e-12)


def test_parquet_parts_concatenated_equal_in_memory_runs(composure_pair):
    _, memory, _, parts = composure_pair
    assert sorted(parts) == [0, 1, 2]
    frames = [pd.read_parquet(io.BytesIO(parts[i])) for i in sorted(parts)]
    assert [len(f) for f in frames] == [10_000, 10_000, 3_456]
    assert frames[1]["run"].iloc[0] == 10_000  # the global run index
    pd.testing.assert_frame_equal(pd.concat(frames, ignore_index=True), memory.runs)


def test_streaming_without_a_sink_and_with_jobs():
    s = make(**CASES["flank_extra"])
    one = sim.simulate(s, runs=20_500, seed=9, keep_runs=False)
    two, parts = _streamed(s, 20_500, 9, n_jobs=2)
    assert one.summary == two.summary and len(parts) == 3


def test_report_from_a_streamed_result(composure_pair, tmp_path):
    s, memory, streamed, _ = composure_pair
    exact = sim.exact(s) if sim.kind_module("restraint").supports_exact(s) else None
    write_report(streamed, tmp_path / "streamed", exact_summary=exact)
    write_report(memory, tmp_path / "memory", exact_summary=exact)
    html = (tmp_path / "streamed" / "report.html").read_text()
    for png in ("levels_by_round.png", "bound_by_round.png", "escape_heat.png", "effect_heat.png",
                "composure_heat.png", "overload_heat.png", "overload_by_round.png"):
        assert (tmp_path / "streamed" / png).stat().st_size > 1000 and png in html
    assert "Combat effect table" in html
    assert html == (tmp_path / "memory" / "report.html").read_text()


def test_balance_metrics_of_a_streamed_result(composure_pair):
    _, memory, streamed, _ = composure_pair
    a, b = balance_metrics(memory, replay=False), balance_metrics(streamed, replay=False)
    assert a.keys() == b.keys() and a["failure_round"] == b["failure_round"]
    for key in ("mean", "sd", "min", "p10", "p50", "p90", "max", "iqr"):
        assert b["taken_out_round"][key] == pytest.approx(a["taken_out_round"][key], rel=1e-12)


def test_cli_run_writes_a_partitioned_runs_dataset(tmp_path):
    """`python -m sim run SCENARIO --runs 25000 --out DIR` streams: runs.parquet is one part per chunk."""
    out = tmp_path / "out"
    path = SCENARIO_DIR / "flank_penalty.toml"
    proc = subprocess.run([sys.executable, "-m", "sim", "run", str(path), "--runs", "25000", "--out", str(out),
                           "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    dataset = out / "runs.parquet"
    assert dataset.is_dir() and len(list(dataset.glob("part-*.parquet"))) == 3
    runs = pd.read_parquet(dataset)
    assert len(runs) == 25_000
    np.testing.assert_array_equal(np.sort(runs["run"].to_numpy()), np.arange(25_000))
    summary = json.loads((out / "summary.json").read_text())
    expected = sim.simulate(sim.load_scenario(path), runs=25_000, seed=summary["seed"], keep_runs=False).summary
    assert summary["runs"] == 25_000 and summary["kind"] == "restraint"
    for key in ("incapacitated_or_arms_complete_by_round", "arms_complete_by_round", "mean_escape_checks"):
        assert summary[key] == pytest.approx(expected[key], rel=1e-12)
    assert (out / "report.html").is_file() and not (out / ".chunks").exists()
