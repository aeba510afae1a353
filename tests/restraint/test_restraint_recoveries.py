"""Issue 24, the seed's second reading of the restraint rules: R-RST-31 (a druid adds its wis mod only when it
is positive), R-RST-32 (class recoveries in the composure race: channel divinity, ki, absolute focus) and
R-RST-33 (an overload in the duel dazes the target). Each expected number is worked out from RULES.md in the
docstring; the exact chain and both Monte Carlo engines (kernel and scalar reference) are checked."""

from __future__ import annotations

import numpy as np
import pytest
from restraint_helpers import CASES, make

import sim
from sim.restraint.simulate import exact


def both_engines(s, runs=400, seed=3):
    a = sim.simulate(s, runs=runs, seed=seed)
    b = sim.simulate(s, runs=runs, seed=seed, engine="reference")
    assert a.runs.equals(b.runs)
    return a


def within_4se(mc: float, ex: float, runs: int) -> bool:
    se = np.sqrt(ex * (1 - ex) / runs)
    return abs(mc - ex) <= max(4 * se, 1e-12)


# --------------------------------------------------------------------------------------------
# R-RST-31: druid adds its wis mod only when positive


@pytest.mark.parametrize("wis, want", [(16, 6 / 20), (6, 3 / 20), (10, 3 / 20)])
def test_r_rst_31_druid_adds_wis_only_when_positive(wis, want):
    """R-RST-31 (revised): a level-1 druid, str/dex/int 10 (mod 0), arms moderate, nobody binds: its one
    check in round 1 is the action on arms, DC 10 + 4 × 2 = 18 (R-RST-2). wis 16 (+3): d20 >= 15, 6/20;
    wis 6 (−2) adds nothing (the earlier reading subtracted 2: 1/20): d20 >= 18, 3/20; wis 10: 3/20."""
    s = make(binder=None, run={"rounds": 1},
             target={"class": "druid", "condition": "none", "restraints": {"arms": 2},
                     "scores": {"str": 10, "dex": 10, "int": 10, "wis": wis}})
    e = exact(s)
    assert e["level_distribution_by_round"]["arms"][0][1] == pytest.approx(want, abs=1e-12)
    runs = 4000
    mc = both_engines(s, runs=runs).summary["level_distribution_by_round"]["arms"][0][1]
    assert within_4se(mc, want, runs)


# --------------------------------------------------------------------------------------------
# R-RST-32: recoveries in the composure race


def _race(cls, level, composure, stimulus, rounds, recoveries=True, **target):
    return make(binder=None, run={"rounds": 1},
                rules={"recoveries": recoveries, "overload_in_duel": False},
                target={"class": cls, "level": level, "composure": composure, "condition": "none", **target},
                composure={"stimulus": stimulus, "rounds": rounds})


def test_r_rst_32_channel_divinity_at_or_below_half():
    """A level-2 cleric (1 channel divinity use), composure 6, a constant 2 per round; half = 3.
    R1: 6 → 4 (above half, no use). R2: 4 → 2 (<= 3): 1d6, capped at 6: f=1 → 3, 2 → 4, 3 → 5, 4-6 → 6.
    R3: 1, 2, 3, 4. R4: f=1 → 0 and f=2 → 0 overload (damage 2 > 0), else 1, 2. R5: everyone overloads.
    So overload by round: 0, 0, 0, 2/6, 1; one recovery in every run. Without recoveries (the earlier
    tables): 6 → 4 → 2 → 0, overload in round 3."""
    s = _race("cleric", 2, 6, "2", 5)
    e = exact(s)
    assert e["overload_by_round"] == pytest.approx([0, 0, 0, 2 / 6, 1], abs=1e-12)
    assert e["mean_recoveries"] == pytest.approx(1.0)
    assert e["mean_rounds_to_overload"] == pytest.approx(4 + 4 / 6)  # 4 × 2/6 + 5 × 4/6
    mc = both_engines(s, runs=3000).summary
    assert mc["mean_recoveries"] == 1.0
    for k, (m, x) in enumerate(zip(mc["overload_by_round"], e["overload_by_round"], strict=True)):
        assert within_4se(m, x, 3000), k
    off = exact(_race("cleric", 2, 6, "2", 5, recoveries=False))
    assert off["overload_by_round"] == pytest.approx([0, 0, 1, 1, 1])
    assert "mean_recoveries" not in off
    # exactly half: 3 per round, R1 6 → 3 = half (at or below): 1d6 → 4, 5, 6; R2 1..3; R3 0: overload in
    # round 3 (a strict "below half" would overload in round 2: 6 → 3 → 0)
    assert exact(_race("cleric", 2, 6, "3", 3))["overload_by_round"] == pytest.approx([0, 0, 1])


def test_r_rst_32_ki_from_level_2_only():
    """A monk's ki is its level from level 2, 0 at level 1 (R-RST-32): a level-1 monk under the race of the
    test above overloads in round 3 like a pool without recoveries; a level-2 monk (2 ki) does not before
    round 4 (R2 2 → 3..6; its second point can fire in R3 only if it is back at or below 3 with composure > 0)."""
    one = exact(_race("monk", 1, 6, "2", 5))
    assert one["overload_by_round"] == pytest.approx([0, 0, 1, 1, 1])
    two = exact(_race("monk", 2, 6, "2", 5))
    assert two["overload_by_round"][2] == 0 and two["mean_recoveries"] > 1.0


def test_r_rst_32_absolute_focus_and_its_immunity():
    """A wizard with int 16 (+3), composure 4, a constant 4 per round. Each time the damage takes it to 0:
    absolute focus d20 + 3 >= 10 + floor(4 / 2) = 12, d20 >= 9: 12/20 = 0.6; success sets composure to
    min(1d8 + 3, 4) = 4 and no overload happens until the end of the next round (R-ESC-35): in that round it
    drops to 0 without overloading; the round after, focus is tried again.
    P(overload by round) = 0.4, 0.4, 0.4 + 0.6 × 0.4 = 0.64, 0.64, 1 − 0.6³ = 0.784.
    Without recoveries: overload in round 1."""
    s = _race("wizard", 1, 4, "4", 5, scores={"int": 16})
    e = exact(s)
    assert e["overload_by_round"] == pytest.approx([0.4, 0.4, 0.64, 0.64, 0.784], abs=1e-12)
    runs = 4000
    mc = both_engines(s, runs=runs).summary
    for k, (m, x) in enumerate(zip(mc["overload_by_round"], e["overload_by_round"], strict=True)):
        assert within_4se(m, x, runs), k
    assert exact(_race("wizard", 1, 4, "4", 5, recoveries=False, scores={"int": 16}))["overload_by_round"][0] == 1


# --------------------------------------------------------------------------------------------
# R-RST-33: overload in the duel


def _duel(overload_in_duel=True, dazed_rounds=2):
    """Composure 3, a constant 3 per round, dazed 2 rounds; fingers complete (DC 26, the target's mods −5:
    never escaped) block every other slot, so an undazed target makes exactly one escape check a round."""
    return make(binder=None, run={"rounds": 6}, rules={"overload_in_duel": overload_in_duel},
                overload={"dazed_rounds": dazed_rounds},
                target={"class": "fighter", "composure": 3, "condition": "none",
                        "scores": {"str": 1, "dex": 1, "int": 1}, "restraints": {"fingers": 4}},
                composure={"stimulus": "3"})


def test_r_rst_33_overload_dazes_the_target_in_the_duel():
    """R-RST-33: end of R1: 3 → 0, overload 1; dazed in R2 and R3 (no escape check), composure reset to 3 at
    the end of R3; end of R4: overload 2; dazed R5, R6. P(dazed) by round 0, 1, 1, 0, 1, 1; checks by round
    1, 0, 0, 1, 0, 0 (2 a duel); 2 overloads. With overload_in_duel = false: one check every round (6)."""
    s = _duel()
    e = exact(s)
    assert e["dazed_by_round"] == pytest.approx([0, 1, 1, 0, 1, 1])
    assert e["mean_overloads"] == pytest.approx(2)
    assert e["escape_checks_by_round"] == pytest.approx([1, 0, 0, 1, 0, 0])
    mc = both_engines(s, runs=50)
    assert mc.summary["dazed_by_round"] == [0, 1, 1, 0, 1, 1]
    assert (mc.runs["overloads"] == 2).all() and (mc.runs["escape_checks"] == 2).all()
    assert mc.summary["reading"] == {"recoveries": True, "overload_in_duel": True}
    off = both_engines(_duel(overload_in_duel=False), runs=50)
    assert (off.runs["escape_checks"] == 6).all() and "overloads" not in off.runs
    assert "dazed_by_round" not in exact(_duel(overload_in_duel=False))


def test_r_rst_33_zero_dazed_rounds_resets_at_once():
    """dazed_rounds = 0: the overload resets composure at once (R-ESC-34), so the target overloads at the end
    of every round (3 → 0 each time) and is never dazed: 6 overloads, 6 checks."""
    e = exact(_duel(dazed_rounds=0))
    assert e["mean_overloads"] == pytest.approx(6) and e["dazed_by_round"] == pytest.approx([0] * 6)
    assert e["mean_escape_checks"] == pytest.approx(6)


@pytest.mark.parametrize("case", ["recoveries", "craving_duel", "composure"])
def test_r_rst_32_33_monte_carlo_within_4se_of_exact(case):
    """Random stimulus, recoveries of every kind, craving, dazed rounds: the kernel's P(dazed) by round, mean
    overloads and mean recoveries lie within 4 standard errors of the exact chains."""
    s = make(**CASES[case])
    runs = 6000
    res = sim.simulate(s, runs=runs, seed=99)
    mc, e = res.summary, exact(s)
    for k, (m, x) in enumerate(zip(mc["dazed_by_round"], e["dazed_by_round"], strict=True)):
        assert within_4se(m, x, runs), ("dazed", k, m, x)
    se = res.runs["overloads"].std(ddof=1) / np.sqrt(runs)
    assert abs(mc["mean_overloads"] - e["mean_overloads"]) <= 4 * se + 1e-12
    names = ["target", *mc["party_mean_recoveries"]]
    for name in names:
        m = mc["mean_recoveries"] if name == "target" else mc["party_mean_recoveries"][name]
        x = e["mean_recoveries"] if name == "target" else e["party_mean_recoveries"][name]
        col = "recoveries" if name == "target" else f"recoveries_{name}"
        se = res.runs[col].std(ddof=1) / np.sqrt(runs)
        assert abs(m - x) <= 4 * se + 1e-12, (name, m, x)
    for name, series in {"target": mc["overload_by_round"], **mc["party_overload_by_round"]}.items():
        ex = e["overload_by_round"] if name == "target" else e["party_overload_by_round"][name]
        for k, (m, x) in enumerate(zip(series, ex, strict=True)):
            assert within_4se(m, x, runs), (name, k, m, x)


def test_overload_dazed_rounds_is_validated():
    from restraint_helpers import scenario_data

    from sim.errors import ScenarioError
    from sim.scenario import parse_scenario

    with pytest.raises(ScenarioError) as err:
        parse_scenario(scenario_data(overload={"dazed_rounds": -1}), file="bad.toml")
    assert "overload.dazed_rounds" in str(err.value)


def test_report_states_the_reading(tmp_path):
    """The report names the readings used (R-RST-32, R-RST-33) and the duel's overloads."""
    res = sim.simulate(_duel(), runs=50, seed=1)
    html = (sim.restraint.write_report(res, tmp_path)).read_text()
    assert "rules.recoveries = true" in html and "rules.overload_in_duel = true" in html
    assert "overloads 2.00 times" in html
