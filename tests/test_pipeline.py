"""The one run pipeline (sim/pipeline.py, issue 23): the command line, the designer tools and the studio go
through :func:`sim.pipeline.run`; its result is typed; summaries come out of the engines with every interval
containing its estimate; one metric-row builder; no import cycle back into the command line; shared modules ask
the Kind contract instead of comparing kind names."""

from __future__ import annotations

import ast
import dataclasses
import json
import math
from pathlib import Path

import pytest
from examples import ROOT, example_scenarios

import sim
from sim import kinds, pipeline
from sim.cli import main
from sim.errors import ScenarioError, SimError
from sim.stats import wilson_interval

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"
DP = ROOT / "scenarios" / "formation" / "dp_income.toml"
CAMPUS = ROOT / "scenarios" / "campus" / "signature_price.toml"
SIM = ROOT / "sim"


# ------------------------------------------------------------------ intervals contain their estimates


def _pairs(summary: dict):
    """(key, estimate, [lo, hi]) for every ``<key>_ci`` of a summary, list-valued keys element by element."""
    for key, ci in summary.items():
        if not key.endswith("_ci") or key[:-3] not in summary:
            continue
        value = summary[key[:-3]]
        if isinstance(value, list):
            for i, (v, c) in enumerate(zip(value, ci, strict=True)):
                yield f"{key[:-3]}.{i}", v, c
        else:
            yield key[:-3], value, ci


@pytest.mark.parametrize("path", example_scenarios(), ids=lambda p: p.relative_to(ROOT / "scenarios").as_posix())
def test_every_engine_summary_already_contains_its_estimates(path):
    """The run pipeline no longer patches intervals after the fact: each kind's summary must come out with
    lo <= estimate <= hi for every ``<key>_ci`` (a chart's error bar is never negative)."""
    scenario = sim.load_scenario(path)
    summary = sim.simulate(scenario, runs=300, seed=4).summary
    for key, v, (lo, hi) in _pairs(summary):
        if v is not None:
            assert lo <= v <= hi, (key, v, lo, hi)


def test_wilson_interval_contains_the_estimate_at_every_count():
    """Every count 0..n, with the count given as an integer and as ``(k/n)*n`` (how campus passes a rate back):
    the interval holds k/n; at 0 and n it ends exactly at 0 and 1 (the Wilson formula alone ends a rounding
    error (~1e-20) past them, sim/stats.py)."""
    for n in (1, 2, 3, 7, 10, 49, 100, 333, 1000, 4096, 30_000):
        for k in sorted({0, 1, 2, n // 3, n // 2, n - 2, n - 1, n} & set(range(n + 1))):
            p = k / n
            for successes in (k, p * n):
                lo, hi = wilson_interval(successes, n)
                assert 0.0 <= lo <= p <= hi <= 1.0, (k, n, successes, lo, hi)
        assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0


# ------------------------------------------------------------------ the typed result


def test_run_returns_a_frozen_typed_result_and_writes_what_it_lists(tmp_path):
    scenario = sim.load_scenario(ROGUE)
    res = pipeline.run(scenario, tmp_path / "o", runs=2_000, seed=3)
    assert isinstance(res, pipeline.PipelineResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.summary = {}  # type: ignore[misc]
    assert res.summary["runs"] == 2_000 and res.summary["seed"] == 3
    assert res.runs is None  # escape streams its runs into runs.parquet/ (one part per chunk)
    assert res.params is not None and res.params is res.simulation.params  # escape's engine parameters
    assert res.exact is not None and res.exact["escape_rate"] == sim.exact(scenario)["escape_rate"]
    names = {p.relative_to(tmp_path / "o").parts[0] for p in res.written}
    assert {"summary.json", "report.html", "runs.parquet"} <= names
    assert all(p.exists() for p in res.written)
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["escape_rate"] == res.summary["escape_rate"]
    assert not (tmp_path / "o" / ".chunks").exists()
    t = res.timings
    assert min(t.simulate, t.exact, t.write) >= 0 and t.total == t.simulate + t.exact + t.write


def test_without_a_folder_nothing_is_written_and_the_answer_is_simulate_s(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenario = sim.load_scenario(DP)
    res = pipeline.run(scenario, runs=1_500, seed=9)
    direct = sim.simulate(scenario, runs=1_500, seed=9)
    assert res.summary == direct.summary
    assert res.runs.equals(direct.runs)
    assert res.out is None and res.written == () and list(tmp_path.iterdir()) == []
    only_exact = pipeline.run(scenario, simulate=False)
    assert only_exact.summary is None and only_exact.exact == sim.exact(scenario)


def test_the_command_line_and_the_designer_tools_call_the_pipeline(tmp_path, monkeypatch, cli):
    calls = []
    real = pipeline.run

    def spy(scenario, out=None, **kw):
        calls.append((scenario.kind, out))
        return real(scenario, out, **kw)

    monkeypatch.setattr(pipeline, "run", spy)
    assert cli("run", DP, "--runs", 1000, "--out", tmp_path / "r", "--quiet").code == 0
    assert calls == [("formation", tmp_path / "r")]
    from sim.designer.sweep import sweep

    sweep(sim.load_scenario(DP), ["run.seed=1,2"], runs=500, exact=False)
    assert calls[1:] == [("formation", None), ("formation", None)]


def test_sim_simulate_is_a_thin_wrapper_over_the_pipeline(monkeypatch):
    """Issue 39 item 4: ``sim.simulate`` is ``pipeline.run(..., exact=False).simulation``, so every run of the public
    API, the designer tools and the studio goes through the one pipeline."""
    calls = []
    real = pipeline.run

    def spy(scenario, out=None, **kw):
        calls.append((out, kw.get("runs"), kw.get("seed"), kw.get("exact")))
        return real(scenario, out, **kw)

    monkeypatch.setattr(pipeline, "run", spy)
    result = sim.simulate(sim.load_scenario(DP), runs=800, seed=4)
    assert calls == [(None, 800, 4, False)]
    assert result.summary["runs"] == 800


def test_the_pipeline_writes_into_no_dict_it_has_handed_out(monkeypatch):
    """Issue 39 item 4: the page's note on a refused exact analysis and the ``--target-error`` outcome go into a new
    summary dict (the kind's summary, which its result already holds, stays as the kind made it)."""
    from sim.designer import precision

    scenario = sim.load_scenario(DP)
    kind_summaries = []
    real = precision.simulation.simulate

    def keep(*args, **kw):
        result = real(*args, **kw)
        kind_summaries.append((result.summary, dict(result.summary)))
        return result

    monkeypatch.setattr(precision.simulation, "simulate", keep)
    result, info = precision.simulate_to_error(scenario, 0.05, seed=2)
    assert result.summary["target_error"] == info.as_dict()
    assert all(held == as_made and "target_error" not in held for held, as_made in kind_summaries)

    def refused(scen, notes=None):
        notes.append("exact analysis refused (a planted note)")
        return None

    monkeypatch.setattr(pipeline, "exact_summary", refused)
    made = sim.simulate(scenario, runs=500, seed=1)
    before = dict(made.summary)
    noted, exact, notes = pipeline._exact_beside(scenario, kinds.get(scenario.kind), made, True)
    assert exact is None and noted.summary["exact_note"] == notes[0]
    assert made.summary == before and "exact_note" not in made.summary


def test_the_studio_report_is_written_in_process(tmp_path, monkeypatch):
    """Report no longer starts the command line: it writes what ``run variant.toml --no-runs`` writes."""
    pytest.importorskip("panel")
    import sim.cli
    from sim.studio.model import Studio

    def refuse(*_a, **_k):
        raise AssertionError("the studio called the command line")

    monkeypatch.setattr(sim.cli, "main", refuse)
    studio = Studio(sim.load_scenario(DP))
    values = {c.key: c.value for c in studio.controls}
    key = next(k for k in values if k.endswith(".dc") or isinstance(values[k], int))
    values[key] += 1
    path = studio.report(values, tmp_path / "variant", runs=1_000)
    assert path == tmp_path / "variant" / "report" / "report.html" and path.exists()
    assert not (tmp_path / "variant" / "report" / "runs.parquet").exists()  # --no-runs
    written = json.loads((tmp_path / "variant" / "report" / "summary.json").read_text())
    variant = sim.load_scenario(tmp_path / "variant" / "variant.toml")
    assert written == json.loads(json.dumps(sim.simulate(variant, runs=1_000).summary))


def test_the_studio_report_folder_stays_inside_the_output_folder(tmp_path):
    pytest.importorskip("panel")
    from sim.studio.app import report_folder

    out = tmp_path / "studio"
    elsewhere = tmp_path / "elsewhere"
    (out / "variant").mkdir(parents=True)
    elsewhere.mkdir()
    assert report_folder(out) == (out / "variant").absolute()
    (out / "variant" / "report").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SimError, match="outside the studio's output folder"):
        report_folder(out)


# ------------------------------------------------------------------ one metric-row builder


def test_one_metric_row_builder_marks_a_metric_the_exact_summary_lacks_as_nan():
    summary = {"kind": "formation", "runs": 100, "seed": 1, "ambush_win": 0.25, "ambush_win_ci": [0.2, 0.3],
               "dp_per_session": 2.0, "dp_per_session_ci": [1.5, 2.5]}
    exact = {"kind": "formation", "runs": None, "ambush_win": 0.3}
    row = pipeline.metric_row(summary, exact, ["ambush_win", "dp_per_session"])
    assert (row["ambush_win"], row["ambush_win_lo"], row["ambush_win_hi"], row["ambush_win_exact"]) == (
        0.25, 0.2, 0.3, 0.3)
    assert math.isnan(row["dp_per_session_exact"])  # the column is there, the cell is empty
    assert "ambush_win_exact" not in pipeline.metric_row(summary, None, ["ambush_win"])
    with pytest.raises(ScenarioError, match="no metric 'nope'"):
        pipeline.metric_row(summary, exact, ["nope"])
    # the comparison index and the sweep build their rows with it: the same cells
    from sim.designer.scenario_comparison import index_frame

    df = index_frame([{"name": "a", "file": "a.toml", "report": "a/report.html", "summary": summary,
                       "exact": exact}])
    assert math.isnan(df["dp_per_session_exact"].iloc[0]) and df["ambush_win_exact"].iloc[0] == 0.3


# ------------------------------------------------------------------ structure


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


@pytest.mark.parametrize("module", ["designer/commands.py", "studio/model.py", "studio/app.py", "pipeline.py",
                                    "designer/evaluate.py", "designer/scenario_comparison.py"])
def test_nothing_the_command_line_imports_imports_it_back(module):
    assert not {m for m in _imports(SIM / module) if m == "sim.cli" or m.startswith("sim.cli.")}


STUDIO = sorted(p.relative_to(SIM).as_posix() for p in (SIM / "studio").glob("*.py"))  # every studio module


@pytest.mark.parametrize("module", ["cli.py", *STUDIO])
def test_shared_modules_ask_the_kind_contract_instead_of_comparing_kind_names(module):
    text = (SIM / module).read_text(encoding="utf-8")
    assert "kind ==" not in text and "kind !=" not in text


@pytest.mark.parametrize("module", STUDIO)
def test_the_studio_imports_no_kind_package(module):
    """Issue 23: the studio reaches a kind only through sim/kinds.py (its facts and OPTIONAL hooks such as
    ``rule_default`` and ``tier_ladder``), never ``sim.escape`` or another kind's package, at the top or inside
    a function."""
    packages = {f"sim.{name}" for name in kinds.NAMES}
    found = {m for m in _imports(SIM / module) if ".".join(m.split(".")[:2]) in packages}
    assert not found, f"sim/{module} imports {sorted(found)}"


def test_the_kind_facts_the_command_line_and_studio_ask():
    info = kinds.KINDS
    # RULES.md: escape and restraint count rounds; the campus game counts its 12 turns
    assert {n: i.time_unit for n, i in info.items()} == {"escape": "round", "restraint": "round",
                                                         "campus": "turn", "formation": "round"}
    assert [n for n, i in info.items() if i.named_policies] == ["escape"]  # greedy, arms_first, team
    assert kinds.get("escape").builtin_policies == ("greedy", "arms_first", "team")
    assert kinds.get("campus").builtin_policies == ()


def test_a_flag_for_another_kind_is_refused_with_the_kinds_that_take_it(tmp_path, cli):
    policy = cli("run", CAMPUS, "--policy", "greedy", "--out", tmp_path / "c")
    assert policy.code == 2 and "--policy applies to escape scenarios; this one is 'campus'" in policy.err
    optimal = cli("optimal", DP)
    assert optimal.code == 2
    assert "optimal play applies to escape and campus scenarios; this one is 'formation'" in optimal.err
    budget = cli("exact", DP, "--max-states", 100, "--out", tmp_path / "x")
    assert budget.code == 2 and "--max-states applies to escape and campus scenarios" in budget.err
    assert not (tmp_path / "c").exists() and not (tmp_path / "x").exists()


@pytest.mark.parametrize(("flag", "given", "message"), [
    ("--runs", "0", "expected an integer >= 1, got '0'"),
    ("--runs", "x", "expected an integer, got 'x'"),
    ("--seed", "-1", "expected a seed >= 0, got '-1'"),
    ("--seed", "1.5", "expected an integer seed, got '1.5'"),
    ("--target-error", "0", "expected a number > 0, got '0'"),
    ("--target-error", "inf", "expected a number > 0, got 'inf'"),
    ("--target-error", "a", "expected a number, got 'a'"),
])
def test_the_flag_converters_name_what_they_expect(flag, given, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", str(DP), flag, given])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--jobs", "0"], "expected -1 or an integer >= 1, got '0'"),
    (["--target", "nan"], "expected a finite number, got 'nan'"),
])
def test_the_tune_converters_name_what_they_expect(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["tune", str(DP), "--param", "run.seed", "--target", "0.5", *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
