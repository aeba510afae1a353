"""`sim audit` (issue 36): restricted play per option, flags derived from the rules, exact deltas equal to two
exact runs done by hand, the class spread, what decided it, the --json shape and bad input."""

from __future__ import annotations

import json
import math

import pytest
from browser_check import assert_clean, needs_browser, open_pages

import sim
from sim.designer.audit import audit, flag_rows
from sim.designer.params import scenario_data
from sim.errors import ScenarioError
from sim.scenario import parse_scenario

ARMS_ONLY = """kind = "escape"
name = "Arms only"
[run]
max_rounds = 4
[[party]]
name = "Ann"
class = "fighter"
level = 3
scores = { str = 14, dex = 14, con = 12, int = 8, wis = 10, cha = 10 }
[party.restraints]
arms = "heavy"
"""

SEARCH = """
[search]
dc = 10
"""

KEY = """
[[search.items]]
name = "small key"
kind = "release"
max_tier = "severe"
weight = 1
"""


def _load(tmp_path, text: str, name: str = "s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return sim.load_scenario(path)


def _row(result, option: str, scope: str = "party") -> dict:
    return next(r for r in result.options if r["option"] == option and r["scope"] == scope)


def test_R_ESC_10b_struggle_is_must_pick_when_only_the_arms_are_bound(tmp_path):
    """Arms bound, nothing else: untying oneself needs the arms at 0 (R-ESC-10b), nobody else is there to help
    (R-ESC-7) and nothing can be searched (no [search]: nobody searches, R-ESC-10), so without struggling the
    arms never come free: the value without struggle is 0 and the whole baseline is lost (> 15 points)."""
    result = audit(_load(tmp_path, ARMS_ONLY), classes=False)
    row = _row(result, "struggle")
    assert row["value_without"] == 0.0
    assert row["delta"] == result.baseline > 0.15
    assert row["flag"] == "must_pick" and result.method == "exact"
    assert "struggle is mandatory" in result.verdicts()[0]
    # search, assist, guide ... are not legal anywhere: they never arise and are not flagged dead
    assert "search" in result.never_arises and "assist" in result.never_arises
    assert all(r["option"] not in ("search", "assist") for r in result.options)


def test_R_ESC_6_equal_modifiers_replace_each_other_and_a_worse_ability_is_dead(tmp_path):
    """str 14 and dex 14 give the same arms check (+2, R-ESC-6: the struggle names its ability); int 8 (-1) is
    worse than either. Forbidding str alone loses nothing (dex replaces every use) but forbidding it beside dex
    leaves only int: str is dominated by dex, and dex by str. int gains nothing even without str or without dex
    (the other is still there): dead."""
    result = audit(_load(tmp_path, ARMS_ONLY), classes=False)
    assert (_row(result, "struggle:str")["flag"], _row(result, "struggle:str")["replaced_by"]) == \
        ("dominated", "struggle:dex")
    assert (_row(result, "struggle:dex")["flag"], _row(result, "struggle:dex")["replaced_by"]) == \
        ("dominated", "struggle:str")
    assert _row(result, "struggle:int")["flag"] == "dead"
    assert abs(_row(result, "struggle:int")["delta"]) < 1e-12


def test_R_ESC_10_search_is_dead_when_the_pool_is_empty(tmp_path):
    """An empty pool finds nothing (R-ESC-10) and no attention limit makes searching cost anything: search is legal
    (it arises) and gains exactly nothing."""
    result = audit(_load(tmp_path, ARMS_ONLY + SEARCH), classes=False)
    row = _row(result, "search")
    assert row["flag"] == "dead" and abs(row["delta"]) < 1e-12
    assert "search is dead: it gains 0.0 points" in result.verdicts()


def test_exact_delta_equals_two_exact_runs_by_hand(tmp_path):
    """Forbidding search is the same scenario with [search] left out ("left out: nobody searches", R-ESC-10): the
    audit's delta equals sim.exact(policy="optimal") of the scenario minus that of the copy, to 1e-12."""
    scenario = _load(tmp_path, ARMS_ONLY + SEARCH + KEY)
    data = scenario_data(scenario)
    del data["search"]
    copy = parse_scenario(data, "copy.toml")
    by_hand = (sim.exact(scenario, policy="optimal")["optimal"]["value"]
               - sim.exact(copy, policy="optimal")["optimal"]["value"])
    result = audit(scenario, classes=False)
    row = _row(result, "search")
    assert by_hand > 0.005  # a key releases the arms (R-ESC-10): searching is worth something here
    assert abs(row["delta"] - by_hand) < 1e-12
    assert row["se"] == 0.0


def test_R_ESC_2_what_decided_it_is_exact_and_adds_up(tmp_path):
    """One heavy arm restraint: round 1's struggle either fails (a streak, R-ESC-3) or lowers the tier, so the two
    events are complements; heavy DC 18 (R-ESC-2) with str or dex +2 succeeds on 16..20: 5/20. The metric given an
    event and given its complement average back to the baseline (total probability)."""
    result = audit(_load(tmp_path, ARMS_ONLY), classes=False)
    failed, succeeded = result.decided_by
    assert failed["share"] == pytest.approx(15 / 20, abs=1e-12)
    assert succeeded["share"] == pytest.approx(5 / 20, abs=1e-12)
    assert failed["rate_given"] == pytest.approx(succeeded["rate_otherwise"], abs=1e-12)
    for row in result.decided_by:
        total = row["share"] * row["rate_given"] + (1 - row["share"]) * row["rate_otherwise"]
        assert total == pytest.approx(result.baseline, abs=1e-12)


ONE_ROUND = """kind = "escape"
name = "One check"
[run]
max_rounds = 1
[[party]]
name = "Probe"
class = "fighter"
level = 1
scores = { str = 10, dex = 10, con = 10, int = 10, wis = 10, cha = 10 }
[party.restraints]
arms = "light"
"""


def test_class_spread_matches_the_matrix_hand_values(tmp_path):
    """One round, one light arm restraint (the matrix test's derivation, tests/designer/test_designer_matrix.py):
    11/20 for the +2 classes, 10/20 for the +1 classes, 13/20 rogue and ranger (escape artist), druid 12/20,
    barbarian 1 - (9/20)^2 with a rage; optimal play does at least as well as greedy (the monk may spend breath).
    The median is 11/20. (Optimal play does not enumerate the rage yet, issue 41: the barbarian is then a +2
    class at 11/20; either value is accepted until that lands, and the outliers are checked against the values.)"""
    result = audit(_load(tmp_path, ONE_ROUND), options=["struggle"])
    values = {r["class"]: r["value"] for r in result.classes}
    assert len(values) == 13
    hand = {c: 11 / 20 for c in ("bard", "fighter", "paladin", "wizard", "artificer")}
    hand |= {c: 10 / 20 for c in ("cleric", "sorcerer", "warlock")}
    hand |= {"rogue": 13 / 20, "ranger": 13 / 20, "druid": 12 / 20}
    for c, v in hand.items():
        assert values[c] == pytest.approx(v, abs=1e-12), c
    assert values["monk"] >= 11 / 20 - 1e-12
    assert min(abs(values["barbarian"] - v) for v in (11 / 20, 1 - (9 / 20) ** 2)) < 1e-12
    median = sorted(values.values())[6]
    assert median == pytest.approx(11 / 20, abs=1e-12)
    assert {r["class"] for r in result.classes if r["outlier"]} == {c for c, v in values.items()
                                                                   if abs(v - median) > 0.10}
    assert result.classes[0]["se"] == 0.0


def test_flags_of_monte_carlo_deltas_need_3_se_beyond_the_threshold():
    rows = [{"option": "a", "delta": 0.004, "se": 0.001}, {"option": "b", "delta": 0.001, "se": 0.001},
            {"option": "c", "delta": 0.16, "se": 0.005}, {"option": "d", "delta": 0.2, "se": 0.01},
            {"option": "e", "delta": 0.004, "se": 0.0}]
    for r in rows:
        r.update(flag=None, replaced_by=None)
    flag_rows(rows, lambda row: (None, 0.0), 0.005, 0.15)
    # a: 0.004 is not below 0.005 - 3 x 0.001; b is; c: 0.16 is not above 0.15 + 0.015; d is; e is exact
    assert [r["flag"] for r in rows] == [None, "dead", None, "must_pick", "dead"]


def test_monte_carlo_delta_is_the_difference_of_two_simulations_on_common_random_numbers(examples):
    """formation: withdrawal forbidden = the scenario without policy.withdraw_below (R-MDK-5: left out, never);
    the audit's value without it is that copy simulated with the same runs and seed, and the delta is the
    ambushing side's skirmish wins lost, with the paired standard error."""
    scenario = sim.load_scenario(examples["formation/summoner_vs_horde"])
    result = audit(scenario, options=["withdrawal"], runs=400, seed=3)
    assert result.method == "monte_carlo" and result.metric == f"skirmish_win_{scenario.ambush.side.lower()}"
    data = scenario_data(scenario)
    del data["policy"]["withdraw_below"]
    copy = parse_scenario(data, "copy.toml")
    metric = result.metric
    base = sim.simulate(scenario, runs=400, seed=3).summary[metric]
    without = sim.simulate(copy, runs=400, seed=3).summary[metric]
    row = _row(result, "withdrawal")
    assert result.baseline == pytest.approx(base, abs=1e-12)
    assert row["value_without"] == pytest.approx(without, abs=1e-12)
    assert 0 < row["se"] < 0.05
    assert result.decided_by[0]["event"] == "the ambush lost"


def test_json_has_the_issue_shape(tmp_path, cli, scratch):
    path = tmp_path / "a.toml"
    path.write_text(ARMS_ONLY + SEARCH)
    res = cli("audit", path, "--json", "--no-classes", "--out", scratch, "--quiet")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert list(data) == ["metric", "method", "baseline", "options", "classes", "decided_by"]
    assert data["metric"] == "escape_rate" and data["method"] == "exact"
    for row in data["options"]:
        assert list(row) == ["option", "scope", "value_without", "delta", "se", "flag", "replaced_by"]
        assert row["flag"] in (None, "dead", "must_pick", "dominated")
    for row in data["decided_by"]:
        assert list(row) == ["event", "share", "rate_given", "rate_otherwise"]
    page = (scratch / "report.html").read_text()
    assert "struggle is mandatory" in page and (scratch / "audit.json").exists()


def test_param_sets_a_value_first(tmp_path, cli, scratch):
    path = tmp_path / "a.toml"
    path.write_text(ARMS_ONLY)
    res = cli("audit", path, "--json", "--no-classes", "--param", "run.max_rounds=2", "--out", scratch, "--quiet")
    two = json.loads(res.out)["baseline"]
    # two rounds: heavy (DC 18) becomes light on a success, light (DC 12) becomes free (R-ESC-2); +2 succeeds on
    # 16..20 then 10..20 (the streak restarts at the new tier, R-ESC-3): 5/20 x 11/20
    assert two == pytest.approx(5 / 20 * 11 / 20, abs=1e-12)
    assert not math.isclose(two, audit(sim.load_scenario(path), classes=False).baseline)


@pytest.mark.parametrize("flags, key", [
    (["--option", "teleport"], "--option"),
    (["--dead", "2"], "--dead"),
    (["--must-pick", "-0.1"], "--must-pick"),
    (["--dead", "0.2", "--must-pick", "0.1"], "--dead"),
    (["--param", "run.max_rounds=1:3"], "--param"),
    (["--objective", "caught_twice"], "objective"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, cli, scratch, flags, key):
    path = tmp_path / "a.toml"
    path.write_text(ARMS_ONLY)
    res = cli("audit", path, "--out", scratch, *flags)
    assert res.code == 2
    assert res.err.count("\n") == 1 and key in res.err, res.err
    assert not scratch.exists()


def test_unknown_option_names_the_options_of_the_kind(tmp_path):
    with pytest.raises(ScenarioError, match="struggle"):
        audit(_load(tmp_path, ARMS_ONLY), options=["teleport"], classes=False)


def test_escape_beyond_optimal_play_falls_back_to_the_restricted_policy(tmp_path):
    """A state budget of 1 leaves optimal play out: the audit simulates the scenario's greedy policy (the scalar
    reference, which agrees run for run with sim.simulate) with each party-wide option removed. Without struggling
    the arms never come free (R-ESC-10b, as above): every run is lost, so struggle is must_pick far beyond 3 SE."""
    scenario = _load(tmp_path, ARMS_ONLY)
    result = audit(scenario, max_states=1, runs=300, seed=5, classes=False)
    assert result.method == "monte_carlo" and "optimal play does not fit" in result.engine
    assert result.baseline == sim.simulate(scenario, runs=300, seed=5).summary["escape_rate"]
    row = _row(result, "struggle")
    assert row["value_without"] == 0.0 and row["flag"] == "must_pick" and row["se"] > 0
    assert {r["scope"] for r in result.options} == {"party"}
    shares = [r["share"] for r in result.decided_by]
    assert sum(shares) == pytest.approx(1.0)  # one character, one check in round 1: failed or succeeded


@pytest.mark.parametrize("name", ["campus/seed_trio_vs_hounds", "formation/summoner_vs_horde",
                                  "restraint/raging_barbarian"])
def test_the_metric_per_run_averages_to_the_summary(examples, name):
    """The Monte Carlo audit reads its metric per run (``audit_runs``): its mean is the summary's value exactly
    (campus: cleared PCs over the party per game; formation: the ambushing side won the skirmish; restraint:
    incapacitated or arms complete by the last round)."""
    from sim import kinds
    from sim.designer.metrics import metric_value

    scenario = sim.load_scenario(examples[name])
    kind = kinds.get(scenario.kind)
    metric = kind.audit_metric(scenario) or {"campus": "clear_rate",
                                             "restraint": "incapacitated_or_arms_complete_by_round.last"}[scenario.kind]
    result = sim.simulate(scenario, runs=500, seed=2)
    outcome, events = kind.audit_runs(scenario, result.runs, metric)
    assert float(outcome.mean()) == pytest.approx(metric_value(result.summary, metric), abs=1e-12)
    for mask in events.values():
        assert len(mask) == 500


@pytest.mark.slow
def test_monte_carlo_delta_is_within_4_se_of_a_long_run(examples):
    """campus rescue (R-CAM-8): the delta from 2,000 games lies within 4 SE (both runs' paired SE) of the delta
    from 40,000 games on other dice."""
    scenario = sim.load_scenario(examples["campus/seed_trio_vs_hounds"])
    short = _row(audit(scenario, options=["rescue"], runs=2000, seed=11), "rescue")
    long = _row(audit(scenario, options=["rescue"], runs=40000, seed=12), "rescue")
    assert abs(short["delta"] - long["delta"]) <= 4 * math.hypot(short["se"], long["se"])


@needs_browser
@pytest.mark.slow
def test_audit_pages_render_cleanly_in_a_browser(examples, cli, tmp_path):
    """The audit page of an exact (escape) and a Monte Carlo (campus) audit: every image loads, nothing is logged,
    a Content-Security-Policy is set, and the answer comes first."""
    pages = []
    for name in ("escape/lone_rogue", "campus/seed_trio_vs_hounds"):
        out = tmp_path / name.replace("/", "_")
        assert cli("audit", examples[name], "--runs", "200", "--out", out, "--quiet").code == 0
        pages.append(out / "report.html")
    for page, r in open_pages(pages).items():
        assert_clean(page, r)
        assert r["images"] and r["csp"], page
        assert r["visible"].index("Is any option of play") < r["visible"].index("Each option forbidden in turn")
