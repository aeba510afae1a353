"""Exact analysis of escape parties (2-4 characters, every built-in policy): a hand-derived case,
Monte Carlo within 4 standard errors of exact, the memoized engine against a plain forward DP, and
the state budget (API and CLI)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from escape_helpers import character, scenario
from examples import ROOT

import sim
from sim.errors import ExactUnsupported
from sim.escape.exact import BranchSource, ExactBudgetExceeded, supports_exact
from sim.escape.params import compile_params
from sim.escape.policy import load_policy
from sim.escape.reference import play_round
from sim.escape.state import initial_state
from sim.stats import standard_error

POLICIES = ("greedy", "arms_first", "team")


def with_policy(s, name):
    return s.model_copy(update={"policy": s.policy.model_copy(update={"name": name})})


@pytest.mark.parametrize("policy", POLICIES)
def test_hand_derived_two_characters_one_round(policy):
    """Two fighters, one light restraint each, one round; the checks are independent.

    R-ESC-2: light has DC 12 and becomes free on a success. R-ESC-4: d20 + ability mod.
    A: arms light, dex 16 (+3), its best ability: success on d20 >= 9, P = 12/20.
    B: fingers light, str 14 (+2), its best ability: success on d20 >= 10, P = 11/20.
    Under `self_untie = "hands_free"` (the earlier reading of R-ESC-10b: arms, fingers and body at 0)
    neither has free hands, so neither unties (tests/escape/test_escape_volume1.py has the default); greedy and
    arms_first struggle their own restraint (R-ESC-20). Under team (R-ESC-21) only A may assist
    (R-ESC-7: B's fingers are bound); a bonus die would add 1 - (9/20)^2 - 11/20 = 0.2475 to B,
    less than A's own 12/20, so both struggle.
    R-ESC-5 (7): escaped when both are free after round 1, so P(escape) = 12/20 * 11/20 = 0.33;
    otherwise the one round runs out: timeout = 1 - 0.33; no attention limit, so caught = 0."""
    s = scenario(character("A", restraints={"arms": "light"}, dex=16),
                 character("B", restraints={"fingers": "light"}, str=14),
                 run={"max_rounds": 1}, policy={"name": policy}, rules={"self_untie": "hands_free"})
    e = sim.exact(s)
    p_a, p_b = 12 / 20, 11 / 20
    assert e["escape_rate"] == pytest.approx(p_a * p_b, abs=1e-12)
    assert e["escape_by_round"] == [pytest.approx(p_a * p_b, abs=1e-12)]
    assert e["timeout_rate"] == pytest.approx(1 - p_a * p_b, abs=1e-12)
    assert e["caught_rate"] == 0.0 and e["mean_rounds"] == pytest.approx(1.0)
    assert e["policy"] == policy and e["runs"] is None


def test_hand_derived_two_characters_two_rounds():
    """As above with two rounds. Round 2 (R-ESC-3): a light (`*`) restraint that failed in round 1
    is released in its second consecutive round of struggle, whatever the roll; a character already
    free in round 1 helps the other (greedy R-ESC-20) but a release is certain anyway.
    So everyone is free by round 2: escape_by_round = [0.33, 1.0], mean rounds = 0.33 + 2 * 0.67."""
    s = scenario(character("A", restraints={"arms": "light"}, dex=16),
                 character("B", restraints={"fingers": "light"}, str=14), run={"max_rounds": 2},
                 rules={"self_untie": "hands_free"})
    e = sim.exact(s)
    assert e["escape_by_round"] == [pytest.approx(0.33, abs=1e-12), pytest.approx(1.0, abs=1e-12)]
    assert e["mean_rounds"] == pytest.approx(0.33 + 2 * 0.67, abs=1e-12)


PARTIES = {
    "duo_untie": scenario(
        character("A", "fighter", 1, {"legs": "moderate", "arms": "light"}, str=12),
        character("B", "rogue", 1, {"arms": "severe", "legs": "heavy"}, dex=14),
        attention={"limit": 6, "assist": 2, "per_round": 1}, run={"max_rounds": 8}),
    "trio_cleric": scenario(
        character("A", "fighter", 1, {"arms": "heavy", "fingers": "moderate"}, str=14),
        character("B", "rogue", 1, {"arms": "severe", "legs": "light"}, dex=15),
        character("C", "cleric", 1, {"gag": "moderate", "arms": "light"}, wis=15),
        attention={"limit": 14, "assist": 2, "guide": 1, "per_round": 1}, run={"max_rounds": 8}),
    "trio_watch": scenario(
        character("A", "rogue", 1, {"arms": "complete"}, dex=14),
        character("B", "fighter", 1, {"legs": "heavy", "arms": "moderate"}, str=14),
        character("C", "wizard", 1, {"gag": "light", "blindfold": "moderate"}, int=16),
        attention={"limit": 14, "assist": 2, "guide": 1, "per_round": 1}, run={"max_rounds": 6}),
    "duo_stimulus": scenario(
        dict(character("A", "monk", 1, {"arms": "severe"}, wis=15, dex=14), composure=4),
        dict(character("B", "paladin", 1, {"arms": "moderate", "legs": "heavy"}, str=13, cha=14), composure=5),
        stimulus={"damage": "1d3"}, run={"max_rounds": 4}),
    "quartet": scenario(
        character("A", "fighter", 1, {"arms": "heavy"}, str=12),
        character("B", "rogue", 1, {"arms": "moderate", "legs": "light"}, dex=13),
        character("C", "monk", 1, {"legs": "moderate"}, dex=12),
        character("D", "bard", 1, {"blindfold": "light", "fingers": "moderate"}, int=12),
        attention={"limit": 11, "assist": 2, "per_round": 1}, run={"max_rounds": 6}),
}


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(PARTIES))
def test_party_monte_carlo_within_4_standard_errors_of_exact(name, policy):
    s = with_policy(PARTIES[name], policy)
    e = sim.exact(s)
    assert e["escape_rate"] + e["caught_rate"] + e["timeout_rate"] == pytest.approx(1.0, abs=1e-12)
    n = 20_000
    r = sim.simulate(s, runs=n, seed=31).summary
    for key in ("escape_rate", "caught_rate", "timeout_rate"):
        se = max(standard_error(e[key], n), 1 / n)
        assert abs(r[key] - e[key]) <= 4 * se, (key, r[key], e[key])
    for k, (got, want) in enumerate(zip(r["escape_by_round"], e["escape_by_round"], strict=True)):
        se = max(standard_error(want, n), 1 / n)
        assert abs(got - want) <= 4 * se, (k, got, want)


def test_policies_differ_on_parties():
    """The parties above tell the policies apart, so the agreement test covers each one's rules."""
    rates = {pol: sim.exact(with_policy(PARTIES["trio_watch"], pol))["escape_rate"] for pol in POLICIES}
    assert rates["team"] != pytest.approx(rates["greedy"])
    rates = {pol: sim.exact(with_policy(PARTIES["duo_untie"], pol))["escape_rate"] for pol in POLICIES}
    assert rates["arms_first"] != pytest.approx(rates["greedy"])


def plain_forward_dp(s) -> list[float]:
    """Escape-by-round from a forward DP without memoized transitions, merging on the full
    :meth:`PartyState.key` plus the round (no shared keys across rounds, the policy asked on every
    branch). Guards the engine's compact keys and reused transitions."""
    p = compile_params(s)
    policy = load_policy(s.policy.name)
    dist = {(initial_state(p).key(), 0): (initial_state(p), 1.0)}
    escaped, by_round = 0.0, []
    for _ in range(p.max_rounds):
        nxt = {}
        for st, q in dist.values():
            stack = [()]
            while stack:
                src = BranchSource(p, stack.pop())
                s2 = st.copy()
                play_round(p, s2, policy, src)
                stack.extend(src.pending)
                w = q * src.prob
                if s2.outcome == "escaped":
                    escaped += w
                elif s2.outcome == "":
                    k = (s2.key(), s2.round)
                    nxt[k] = (nxt[k][0], nxt[k][1] + w) if k in nxt else (s2, w)
        by_round.append(escaped)
        dist = nxt
    return by_round


FOCUS = scenario(  # R-ESC-14 absolute focus: composure often back to 0 in the round after a focus
    dict(character("B", "wizard", 3, {"arms": "severe"}, int=10, wis=10), composure=2),
    stimulus={"damage": "1d6"}, run={"max_rounds": 6})


@pytest.mark.parametrize("name", ["duo_untie", "trio_watch", "focus"])
@pytest.mark.parametrize("policy", POLICIES)
def test_memoized_engine_equals_plain_forward_dp(name, policy):
    """Reused transitions are sound: with the focus immunity of a wizard (R-ESC-14, counted from the
    round) and with the team attention guard (R-ESC-37, which reads the round number)."""
    s = with_policy(FOCUS if name == "focus" else PARTIES[name], policy)
    got = sim.exact(s)["escape_by_round"]
    assert got == pytest.approx(plain_forward_dp(s), abs=1e-12)


def test_summary_reports_states_time_and_budget():
    e = sim.exact(PARTIES["trio_cleric"], max_states=5_000)
    engine = e["exact_engine"]
    assert engine["max_states"] == 5_000 and 1 <= engine["peak_states"] <= engine["states"] <= 5_000
    assert engine["seconds"] >= 0


def test_budget_refusal_names_the_count_and_suggests_monte_carlo():
    with pytest.raises(ExactBudgetExceeded) as info:
        sim.exact(PARTIES["trio_cleric"], max_states=10, engine="reference")
    # the states of the next round are known before it is played: the refusal comes with more than 10 in view
    assert info.value.states > 10 and info.value.budget == 10 and info.value.binds == "states"
    msg = str(info.value)
    assert f"{info.value.states} states" in msg and "--max-states 10" in msg and "Monte Carlo" in msg
    assert "\n" not in msg
    assert isinstance(info.value, ExactUnsupported)


def test_scope_five_characters_and_custom_policies():
    five = scenario(*[character(n, restraints={"arms": "light"}) for n in "ABCDE"])
    assert not supports_exact(five)
    with pytest.raises(ExactUnsupported, match="1 to 4 characters"):
        sim.exact(five)
    custom = scenario(character(), policy={"name": "mypkg.policies:mine"})
    assert not supports_exact(custom)
    with pytest.raises(ExactUnsupported, match="built-in policies"):
        sim.exact(custom)
    assert supports_exact(PARTIES["quartet"])


PARTY_TOML = """kind = "escape"
name = "duo"
[run]
max_rounds = 8
[attention]
limit = 14
assist = 2
guide = 1
per_round = 1
[[party]]
name = "A"
class = "fighter"
level = 1
scores = { str = 14, dex = 10, con = 10, int = 10, wis = 10, cha = 10 }
restraints = { arms = "heavy", fingers = "moderate" }
[[party]]
name = "B"
class = "rogue"
level = 1
scores = { str = 10, dex = 15, con = 10, int = 10, wis = 10, cha = 10 }
restraints = { arms = "severe", legs = "light" }
"""


def test_cli_exact_party_and_budget(tmp_path):
    path = tmp_path / "duo.toml"
    path.write_text(PARTY_TOML)
    ok = subprocess.run([sys.executable, "-m", "sim", "exact", str(path), "--max-states", "5000", "--json",
                         "--out", str(tmp_path / "page")], capture_output=True, text=True, cwd=ROOT)  # not reports/
    assert ok.returncode == 0, ok.stderr
    e = json.loads(ok.stdout)
    assert 0 < e["escape_rate"] < 1 and e["exact_engine"]["max_states"] == 5000
    assert "states" in ok.stderr and "budget 5,000" in ok.stderr
    over = subprocess.run([sys.executable, "-m", "sim", "exact", str(path), "--max-states", "3",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT)
    assert over.returncode == 2 and over.stdout == ""
    lines = over.stderr.strip().splitlines()
    assert len(lines) == 1 and "duo.toml" in lines[0] and "state budget binds" in lines[0]
    assert "--max-states 3" in lines[0] and "Monte Carlo" in lines[0]
    assert "Traceback" not in over.stderr and not (tmp_path / "out").exists()


def test_designer_tools_use_exact_for_parties_within_the_budget(monkeypatch):
    """The single 'exact available' path (sim.designer.evaluate) answers for a party within the smaller
    budget it uses next to a simulation, and gives None (simulation alone) for one over it; tune then
    bisects exactly on a party."""
    import sim.escape.exact
    from sim.designer.evaluate import exact_summary
    from sim.designer.tune import tune

    party = PARTIES["trio_cleric"]
    e = exact_summary(party)
    # the compiled engine answers, with its own budget beside a simulation (issue 35)
    from sim.escape.exact_fast import FAST_AUTO_MAX_STATES

    assert e is not None and e["exact_engine"]["max_states"] == FAST_AUTO_MAX_STATES
    assert e["exact_engine"]["engine"] == "compiled"
    assert e["escape_rate"] == pytest.approx(sim.exact(party)["escape_rate"], abs=1e-12)
    res = tune(party, "rules.tiers.heavy.dc", 0.5, metric="escape_rate", lo=12, hi=30)
    assert res.method == "exact" and res.ci == [res.achieved, res.achieved]
    monkeypatch.setattr(sim.escape.exact, "AUTO_MAX_STATES", 10)  # the kind object reads it there (sim/escape/kind.py)
    assert exact_summary(party) is None


def test_run_report_overlays_exact_for_a_party(tmp_path, cli):
    path = tmp_path / "duo.toml"
    path.write_text(PARTY_TOML)
    out = tmp_path / "rep"
    assert cli("run", path, "--runs", 2000, "--seed", 3, "--out", out, "--quiet", "--no-runs").code == 0
    html = (out / "report.html").read_text()
    assert "exact" in html
    plain = tmp_path / "plain"
    five = PARTY_TOML + "".join(PARTY_TOML[PARTY_TOML.index("[[party]]"):PARTY_TOML.index("[[party]]", 200)]
                                .replace('name = "A"', f'name = "{n}"') for n in "CDE")
    path.write_text(five)
    assert cli("run", path, "--runs", 2000, "--seed", 3, "--out", plain, "--quiet", "--no-runs").code == 0
    assert "exact" not in (plain / "report.html").read_text().lower().replace("exactly", "")


def test_budget_also_caps_the_branches_of_a_huge_round():
    """Four characters with harness and composure damage, saves and searches: one state's round has
    far more outcome combinations than 25 x the budget, so the analysis stops inside it."""
    s = sim.load_scenario(ROOT / "scenarios/escape/party_under_watch.toml")
    with pytest.raises(ExactBudgetExceeded) as info:
        sim.exact(s, max_states=40, engine="reference")
    assert info.value.branches == 25 * 40 + 1 and info.value.states <= 40
    assert "branches" in str(info.value) and "Monte Carlo" in str(info.value)
