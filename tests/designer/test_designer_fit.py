"""`sim fit`: several integer parameters fitted to several targets (issue 14).

Oracles: brute force over the whole feasible integer box (every point evaluated), and, for the
ladder dynamic programme, brute force over random one-parameter tables.
"""

from __future__ import annotations

import itertools
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest
from examples import ROOT

import sim
from sim.designer.fit import (
    brute_force,
    count_feasible,
    feasible_points,
    fit,
    fitted_toml,
    load_fit,
    separable_optimum,
)
from sim.errors import ScenarioError

PROBES = ROOT / "scenarios" / "fit" / "probes"


def _write_fit(tmp_path: Path, fit_table: str, targets: str) -> Path:
    path = tmp_path / "fit.toml"
    path.write_text(f"[fit]\n{fit_table}\n{targets}", encoding="utf-8")
    return path


def _target(scenario: str, metric: str, value: float, weight: float = 1.0) -> str:
    return f'[[target]]\nscenario = "{PROBES / scenario}"\nmetric = "{metric}"\nvalue = {value}\nweight = {weight}\n'


def test_separable_optimum_matches_brute_force_on_random_tables():
    """The ladder DP (best_k(v) = g_k(v) + min_{u<v} best_{k-1}(u)) against every increasing vector."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 4))
        lo = [int(v) for v in rng.integers(0, 4, n)]
        hi = [a + int(rng.integers(0, 5)) for a in lo]
        for increasing in (False, True):
            if increasing and count_feasible(lo, hi, True) == 0:
                continue
            tables = [{v: float(rng.integers(0, 6)) for v in range(lo[k], hi[k] + 1)} for k in range(n)]
            got = separable_optimum(tables, lo, hi, increasing)
            best = min(sum(tables[k][x[k]] for k in range(n)) for x in feasible_points(lo, hi, increasing))
            assert sum(tables[k][got[k]] for k in range(n)) == best
            assert all(lo[k] <= got[k] <= hi[k] for k in range(n))
            if increasing:
                assert all(got[k] < got[k + 1] for k in range(n - 1))


def test_count_feasible_counts_ladders():
    # 4 strictly increasing values in 8..30: C(23, 4) = 8855 ladders; without the ladder 23^4.
    assert count_feasible([8] * 4, [30] * 4, True) == math.comb(23, 4)
    assert count_feasible([8] * 4, [30] * 4, False) == 23 ** 4
    lo, hi = [1, 2, 2], [3, 4, 5]
    assert count_feasible(lo, hi, True) == len(feasible_points(lo, hi, True))
    assert count_feasible(lo, hi, True) == sum(
        1 for x in itertools.product(range(1, 4), range(2, 5), range(2, 6)) if x[0] < x[1] < x[2])


def test_separable_ladder_finds_the_brute_force_optimum(tmp_path):
    """light and moderate probes each depend on one DC (light -> free, moderate -> simple, R-ESC-2).
    The targets pull against the ladder: the light probe wants a high DC (few escapes in round 1), the
    moderate probe (free by round 2: moderate -> simple -> free) a low one, so the constraint
    light < moderate binds and the DP must handle it."""
    path = _write_fit(tmp_path, 'params = ["rules.tiers.light.dc", "rules.tiers.moderate.dc"]\n'
                                "increasing = true\nlo = 8\nhi = 20\n",
                      _target("light.toml", "escape_by_round.0", 0.30)
                      + _target("moderate.toml", "escape_by_round.1", 0.60))
    spec = load_fit(path)
    result = fit(spec)
    assert result.search.startswith("separable")
    assert result.dependencies == [["rules.tiers.light.dc"], ["rules.tiers.moderate.dc"]]
    x, loss = brute_force(spec)
    assert tuple(result.values.values()) == x
    assert result.loss == pytest.approx(loss, abs=1e-12)
    # the constraint binds: alone, the light DC would be above the moderate one
    assert result.values["rules.tiers.light.dc"] + 1 == result.values["rules.tiers.moderate.dc"]
    assert all(t["method"] == "exact" for t in result.targets)


def test_single_check_probe_hits_its_target_exactly(tmp_path):
    """Round 1 of the light probe is one check d20 + 2 (str 15 -> +2, R-GEN-2; fighter, no escape artist)
    against the light DC: P = (21 - (DC - 2)) / 20 = (23 - DC) / 20. A target of 0.55 is met exactly by DC 12."""
    path = _write_fit(tmp_path, 'params = ["rules.tiers.light.dc"]\nlo = 5\nhi = 25\n',
                      _target("light.toml", "escape_by_round.0", 0.55))
    result = fit(load_fit(path))
    assert result.values == {"rules.tiers.light.dc": 12}
    assert result.targets[0]["achieved"] == pytest.approx(0.55, abs=1e-12)
    assert result.loss == pytest.approx(0.0, abs=1e-20)


def test_coordinate_descent_reaches_the_brute_force_optimum(tmp_path):
    """The heavy probe depends on the heavy DC and on the light DC (heavy becomes light), so the objective
    does not separate; coordinate descent with restarts must still reach the optimum of this small box."""
    path = _write_fit(tmp_path, 'params = ["rules.tiers.light.dc", "rules.tiers.heavy.dc"]\n'
                                'increasing = true\nlo = 9\nhi = 22\nmethod = "coordinate"\n',
                      _target("light.toml", "escape_by_round.0", 0.45)
                      + _target("heavy.toml", "escape_rate", 0.70, 2.0))
    spec = load_fit(path)
    result = fit(spec)
    assert result.search.startswith("coordinate descent")
    assert "rules.tiers.light.dc" in result.dependencies[1] and "rules.tiers.heavy.dc" in result.dependencies[1]
    _, loss = brute_force(spec)
    assert result.loss == pytest.approx(loss, abs=1e-12)


def test_exhaustive_method_equals_brute_force(tmp_path):
    path = _write_fit(tmp_path, 'params = ["rules.tiers.light.dc", "rules.tiers.heavy.dc"]\n'
                                'increasing = true\nlo = 10\nhi = 16\nmethod = "exhaustive"\n',
                      _target("heavy.toml", "escape_rate", 0.9))
    spec = load_fit(path)
    result = fit(spec)
    x, loss = brute_force(spec)
    assert tuple(result.values.values()) == x and result.loss == pytest.approx(loss)
    assert result.search == f"exhaustive over {math.comb(7, 2)} feasible points"


def test_simulated_targets_use_common_random_numbers(tmp_path):
    """Campus has no exact analysis: every variant is simulated with the same runs and seed, so the search
    still equals brute force over the box (both read the same simulated numbers)."""
    campus = ROOT / "scenarios" / "campus" / "seed_trio_vs_hounds.toml"
    path = tmp_path / "fit.toml"
    path.write_text('[fit]\nparams = ["rules.vitality"]\nlo = 1\nhi = 5\nruns = 1000\nseed = 4\n'
                    f'[[target]]\nscenario = "{campus}"\nmetric = "clear_rate"\nvalue = 0.6\n', encoding="utf-8")
    result = fit(load_fit(path))
    method = result.targets[0]["method"]
    assert method.startswith("simulation (1,000 runs, seed 4")
    x, loss = brute_force(load_fit(path))
    assert tuple(result.values.values()) == x and result.loss == pytest.approx(loss)
    lo, hi = result.targets[0]["interval"]
    assert lo < result.targets[0]["achieved"] < hi


def test_fitted_toml_reproduces_the_achieved_values(tmp_path, cli):
    out = tmp_path / "out"
    assert cli("fit", ROOT / "scenarios" / "fit" / "ladder.toml", "--out", out, "--quiet").code == 0
    data = json.loads((out / "fit.json").read_text())
    assert set(data) >= {"values", "targets", "loss", "evaluations", "search", "seconds"}
    for t in data["targets"]:
        fitted = out / f"{Path(t['scenario']).stem}.fitted.toml"
        text = fitted.read_text(encoding="utf-8")
        directive, header = text.splitlines()[:2]
        assert header.startswith("# Fitted by")
        # the editor's schema directive stays first and still finds the schema from the output folder
        assert directive.startswith("#:schema ") and (fitted.parent / directive.split(" ", 1)[1]).is_file()
        scenario = sim.load_scenario(fitted)
        base, _, index = t["metric"].partition(".")
        value = sim.exact(scenario)[base]
        value = value[int(index)] if index else value
        assert value == pytest.approx(t["achieved"], abs=1e-12)
        for key, v in data["values"].items():
            tier = key.split(".")[2]
            assert tomllib.loads(text)["rules"]["tiers"][tier]["dc"] == v
    assert (out / "report.html").is_file() and (out / "fit.png").is_file()


def test_fitted_toml_keeps_comments_and_existing_tables(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text('# my notes\nkind = "escape"\n[rules.tiers.light]\ndc = 9  # hard\n'
                        '[[party]]\nname = "A"\nclass = "rogue"\nscores = { str = 10, dex = 10, con = 10, int = 10, '
                        'wis = 10, cha = 10 }\n[party.restraints]\narms = "light"\n', encoding="utf-8")
    text = fitted_toml(scenario, {"rules.tiers.light.dc": 13, "rules.tiers.heavy.dc": 19}, "f.toml")
    assert "# my notes" in text
    data = tomllib.loads(text)
    assert data["rules"]["tiers"]["light"]["dc"] == 13 and data["rules"]["tiers"]["heavy"]["dc"] == 19


@pytest.mark.parametrize(("fit_table", "target", "message"), [
    ('params = ["rules.tiers.light.dc"]\nlo = 8\nhi = 20\ncolour = 1\n', None, "fit.colour: unknown key"),
    ('params = ["rules.tiers.light.dc"]\nlo = 20\nhi = 8\n', None, "fit.lo: lo 20 > hi 8"),
    ('params = ["rules.tiers.light.dc", "rules.tiers.heavy.dc", "rules.tiers.severe.dc"]\n'
     "increasing = true\nlo = 8\nhi = 9\n", None, "fit.increasing: an increasing ladder of 3 values"),
    ('params = ["rules.tiers.light.dc"]\nlo = 8\nhi = 20\n', ("light.toml", "no_such_metric"),
     "target.0.metric: no metric 'no_such_metric'"),
    ('params = ["rules.tiers.light.dc"]\nlo = 8\nhi = 20\n', ("light.toml", "escape_by_round.99"),
     "target.0.metric: index 99 out of range"),
    ('params = ["run.max_rounds.x"]\nlo = 8\nhi = 20\n', None, "fit.params: 'run.max_rounds.x' is not a valid"),
    ('params = ["rules.tiers.light.dc"]\nlo = -500\nhi = 20\n', None, "fit.lo: lo -500 is below"),
])
def test_bad_fit_files_exit_2_with_one_line_and_write_nothing(tmp_path, cli, fit_table, target, message):
    scenario, metric = target or ("light.toml", "escape_rate")
    path = _write_fit(tmp_path, fit_table, _target(scenario, metric, 0.5))
    out = tmp_path / "out"
    r = cli("fit", path, "--out", out)
    assert r.code == 2
    err = r.err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and message in err, err
    assert not out.exists()


def test_a_param_of_another_kind_is_refused(tmp_path, cli):
    campus = ROOT / "scenarios" / "campus" / "seed_trio_vs_hounds.toml"
    path = tmp_path / "fit.toml"
    path.write_text(f'[fit]\nparams = ["rules.tiers.light.dc"]\nlo = 8\nhi = 20\n[[target]]\nscenario = "{campus}"\n'
                    'metric = "clear_rate"\nvalue = 0.5\n', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"fit\.params: 'rules\.tiers\.light\.dc' is not a valid .*campus"):
        load_fit(path)
    assert cli("fit", path, "--out", tmp_path / "o").code == 2
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("text", ["x = " + "[" * 5000, "x = " + "{ a = " * 3000])
def test_a_fit_file_nested_too_deep_is_one_error_line(tmp_path, text):
    """The fit file goes through the scenario files' TOML guard: nesting deeper than the parser's recursion gives
    the one error line naming the file, never a RecursionError."""
    path = tmp_path / "deep.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError, match="nested more than|nesting too deep") as err:
        load_fit(path)
    assert err.value.file == str(path)
