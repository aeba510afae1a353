"""Issue 39: a fifth kind that lives only here joins through its one object and ``sim.kinds.register``: validate,
run (with its report), sweep, tune, compare and the contract's checks, with no edit to any shared module.

The race (model.py): two sides add 1d6 a round, the first to ``target`` wins. By hand, for the checks below: a side
needs at least ceil(12 / 7) = 2 rounds to reach 12 with the favoured bonus (7 a round at most), so no race ends in
round 1 and ``a_win_by_round@1`` is 0; with target 1 every race ends in round 1 (any roll reaches 1) and is a draw
(both sides reach it, equal totals) only when the rolls tie."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sim
from fifth_kind import engine
from fifth_kind.kind import KIND
from sim import kinds, labels
from sim.labels import metric_label

RACE = Path(__file__).with_name("race.toml")


@pytest.fixture(autouse=True, scope="module")
def registered():
    kinds.register(KIND)
    yield KIND
    kinds.unregister(KIND.name)


def test_the_kind_is_registered_beside_the_built_in_ones():
    assert kinds.get("dice_race") is KIND
    assert kinds.names()[-1] == "dice_race" and "dice_race" in kinds.NAMES and "dice_race" in kinds.KINDS
    assert kinds.missing(KIND) == []
    assert kinds.register(KIND) is KIND  # the same object again: no error, no second entry
    assert kinds.names().count("dice_race") == 1


def test_validate_and_a_wrong_key(tmp_path, cli):
    ok = cli("validate", RACE)
    assert ok.code == 0 and "dice_race" in ok.out
    bad = tmp_path / "bad.toml"
    bad.write_text(RACE.read_text().replace("target = 12", "target = 12\ntargte = 3"), encoding="utf-8")
    refused = cli("validate", bad)
    assert refused.code == 2 and "targte" in refused.err and "\n" not in refused.err.strip()


def test_both_engines_agree_run_for_run_for_any_number_of_jobs():
    scenario = sim.load_scenario(RACE)
    reference = sim.simulate(scenario, runs=700, seed=3, engine="reference")
    batch = sim.simulate(scenario, runs=700, seed=3, engine="batch")
    two = sim.simulate(scenario, runs=700, seed=3, engine="batch", n_jobs=2)
    pd.testing.assert_frame_equal(reference.runs, batch.runs)
    pd.testing.assert_frame_equal(batch.runs, two.runs)
    assert reference.summary == batch.summary
    assert batch.summary["a_win_by_round"][0] == 0.0  # no side reaches 12 in one round (by hand, above)


def test_target_one_ends_every_race_in_round_one():
    scenario = sim.load_scenario(RACE).model_copy(update={"target": 1})
    scenario._source = str(RACE)
    s = sim.simulate(scenario, runs=3000, seed=1).summary
    assert s["mean_rounds"] == 1.0
    # favoured: A rolls 2..7 against B's 1..6, a tie 5 times in 36, B higher 10 times in 36
    assert abs(s["draw_rate"] - 5 / 36) < 4 * math.sqrt(5 / 36 * 31 / 36 / 3000)
    assert abs(s["b_win_rate"] - 10 / 36) < 4 * math.sqrt(10 / 36 * 26 / 36 / 3000)


def test_run_writes_the_report_and_summary(tmp_path, cli):
    out = tmp_path / "run"
    r = cli("run", RACE, "--runs", "500", "--out", out)
    assert r.code == 0, r.err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "dice_race" and summary["runs"] == 500
    page = (out / "report.html").read_text()
    assert "share of races side A wins" in page  # the kind's own metric names reach the shared label table
    assert (out / "runs.parquet").exists()


def test_sweep_tune_and_compare(tmp_path, cli):
    sweep = cli("sweep", RACE, "--param", "target=8:14:3", "--runs", "400", "--out", tmp_path / "sweep")
    assert sweep.code == 0, sweep.err
    assert "a_win_rate" in (tmp_path / "sweep" / "sweep.csv").read_text()
    tune = cli("tune", RACE, "--param", "bonus", "--target", "0.6", "--lo", "0", "--hi", "3", "--runs", "400",
               "--json")
    assert tune.code in (0, 1), tune.err
    assert json.loads(tune.out)["metric"] == "a_win_rate"  # the kind's main metric, from its object
    compare = cli("compare", RACE, "--runs", "400", "--out", tmp_path / "compare")
    assert compare.code == 0, compare.err
    assert "even" in compare.out and "favoured" in compare.out
    assert (tmp_path / "compare" / "compare.html").exists()


def test_a_per_run_statistic_is_one_row(monkeypatch, tmp_path):
    """Issue 39 item 5: one row (name, type, the batch engine's and the reference's way of counting it) and the
    statistic reaches both engines, the runs frame, the summary (``mean_sixes_b``) and the report."""
    sixes = engine.RunStat(
        "sixes_b", np.int16,
        lambda race, rounds: ((race.rolls[:, :, engine.B] == 6) & engine._played(race, rounds)).sum(axis=1),
        lambda rolls, rounds: int((rolls[:rounds, engine.B] == 6).sum()))
    monkeypatch.setattr(engine, "RUN_STATS", [*engine.RUN_STATS, sixes])
    scenario = sim.load_scenario(RACE)
    reference = sim.simulate(scenario, runs=600, seed=9, engine="reference")
    batch = sim.simulate(scenario, runs=600, seed=9, engine="batch")
    pd.testing.assert_frame_equal(reference.runs, batch.runs)
    assert "sixes_b" in batch.runs
    # each of B's rolls is a six one time in 6: per race rounds / 6 on average
    expected = batch.runs["rounds"].mean() / 6
    assert abs(batch.summary["mean_sixes_b"] - expected) < 0.1
    KIND.write_report(batch, tmp_path)
    assert metric_label("mean_sixes_b") in (tmp_path / "report.html").read_text()


#: shared modules that still name kinds, each for a reason: the registry's one list of packages (docs/limits.md's
#: rows are each kind's ``limit_rows``)
NAMING_KINDS = {"kinds.py": ("PACKAGES",)}


def test_the_shared_modules_name_no_kind():
    """No shared module names a kind or imports a kind package: each kind's facts live in its object
    (sim/<kind>/kind.py). A table keyed by kind name put back into a shared module fails here, and so does a
    kind's metric name put back into the shared label table."""
    root = Path(sim.__file__).parent
    kind_dirs = {k.package.split(".")[-1] for k in kinds.all_kinds() if k.package.startswith("sim.")}
    shared = [p for p in root.rglob("*.py") if p.relative_to(root).parts[0] not in kind_dirs]
    assert len(shared) > 20
    for path in shared:
        text = path.read_text(encoding="utf-8")
        for name in kind_dirs:
            assert f'"{name}":' not in text and f"'{name}':" not in text, f"{path}: a table keyed by {name!r}"
            if path.name in NAMING_KINDS:
                assert all(reason in text for reason in NAMING_KINDS[path.name])
                continue
            for stem in (f"import sim.{name}", f"from sim.{name} import", f"from sim.{name}.", f'"sim.{name}'):
                assert stem not in text, f"{path}: {stem}"
    for kind in kinds.all_kinds():
        assert not set(kind.metrics) & set(labels.METRICS), kind.name  # each kind names its own keys
