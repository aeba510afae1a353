"""Exact analysis (R-RST-13 duel chain, R-RST-24 rounds until overload) against hand computations,
brute-force enumeration, and Monte Carlo within 4 standard errors."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from examples import ROOT
from restraint_helpers import CASES, make

import sim
from sim.restraint.exact import damage_distribution, expected_rounds_to_overload, overload_by_round
from sim.restraint.kernel import run_kernel
from sim.restraint.rules import compile_params
from sim.restraint.simulate import exact, supports_exact

SCENARIO_DIR = ROOT / "scenarios" / "restraint"


def test_r_rst_13_duel_two_rounds_by_hand():
    """R-RST-13 / R-RST-26: the duel's first two rounds, worked by hand.

    Binder str 16 (+3) binds arms by action; fighter target str 12, dex 12, int 10; binder first.
    Round 1: the binder wins w = 229/400 (b - t >= -1), arms 0 -> moderate; the action check on
    moderate arms (DC 18) is best with dex 10 (+0): s = 3/20. Round 2 from light arms: the contest
    modifier is still +1 (dex 12); a lost contest leaves a bonus-action check at DC 14 with dex +1
    (8/20) and, if it fails, the action check again. From moderate arms: target modifier 0 (str 8,
    dex 10), w' = 247/400; a win makes arms heavy, where no check can succeed (but one is made)."""
    w, w2 = Fraction(229, 400), Fraction(247, 400)
    s, q = Fraction(3, 20), Fraction(8, 20)
    a, b, c = 1 - w, w * s, w * (1 - s)  # arms 0, 1, 2 after round 1
    p0 = a * (1 - w) + b * (1 - w) * (q + (1 - q) * q)
    p1 = a * w * s + b * w * s + b * (1 - w) * (1 - q) * (1 - q) + c * (1 - w2) * s
    p2 = a * w * (1 - s) + b * w * (1 - s) + c * (1 - w2) * (1 - s)
    p3 = c * w2
    checks = w + (a * w + b * (w + (1 - w) * (1 + (1 - q))) + c)
    e = exact(make(run={"rounds": 2}))
    arms = np.asarray(e["level_distribution_by_round"]["arms"])
    assert arms[0].tolist() == pytest.approx([float(a), float(b), float(c), 0, 0, 0], abs=1e-12)
    assert arms[1].tolist() == pytest.approx([float(p0), float(p1), float(p2), float(p3), 0, 0], abs=1e-12)
    assert float(p0 + p1 + p2 + p3) == pytest.approx(1.0)
    assert e["mean_escape_checks"] == pytest.approx(float(checks), abs=1e-12)
    assert e["arms_complete_by_round"] == [0.0, 0.0]
    assert e["incapacitated_by_round"] == [0.0, 0.0]


def _enumerated_round_one(scenario) -> dict:
    """Every one of the 20^4 equally likely faces of the columns round one can use (binder, target,
    first bonus die, first action die), run through the kernel."""
    p = compile_params(scenario)
    faces = np.array(list(itertools.product(range(20), repeat=4)), dtype=float)
    u = np.full((p.horizon, len(faces), p.n_cols), 0.5)
    u[0, :, [0, 1, 3, 6]] = ((faces + 0.5) / 20).T
    return run_kernel(p, u)


@pytest.mark.parametrize("initiative", ["binder", "target"])
def test_r_rst_13_exact_equals_enumeration_of_round_one(initiative):
    """R-RST-13: the exact chain equals a full enumeration of round one's dice (a bf_ check).

    Rogue (+2 on escapes) with light arms and moderate legs, binder on legs then arms: a binding,
    a bonus-action check and an action check, all with plain d20s."""
    s = make(
        run={"rounds": 1},
        binder={"slots": ["legs", "arms"]},
        target={"class": "rogue", "level": 1, "initiative": initiative, "restraints": {"arms": 1, "legs": 2}},
    )
    cols = _enumerated_round_one(s)
    levels = cols["levels_by_round"]
    e = exact(s)
    for slot in ("arms", "legs"):
        idx = ("arms", "legs").index(slot)
        counts = np.bincount(levels[:, 0, idx], minlength=6) / levels.shape[0]
        np.testing.assert_allclose(counts, e["level_distribution_by_round"][slot][0], atol=1e-12)
    assert cols["checks_by_round"][:, 0].mean() == pytest.approx(e["mean_escape_checks"], abs=1e-12)


def bf_overload_by_round(maximum: int, sides: int, offset: int, rounds: int) -> list[float]:
    """Brute force: enumerate every sequence of ``rounds`` rolls of 1d<sides> + offset."""
    hit = np.zeros(rounds)
    total = sides**rounds
    for seq in itertools.product(range(1, sides + 1), repeat=rounds):
        c = maximum
        for k, f in enumerate(seq):
            d = max(0, f + offset)
            c = max(0, c - d)
            if d > 0 and c == 0:
                hit[k:] += 1
                break
    return (hit / total).tolist()


@pytest.mark.parametrize("maximum, sides, offset", [(5, 4, 0), (7, 6, -2), (3, 3, -1), (1, 2, -1)])
def test_r_rst_24_overload_distribution_brute_force(maximum, sides, offset):
    """R-RST-24 / R-RST-21: P(first overload by round k) equals enumeration of all roll sequences;
    rolls below 0 count as 0."""
    damage = {}
    for f in range(1, sides + 1):
        damage[max(0, f + offset)] = damage.get(max(0, f + offset), 0) + 1 / sides
    rounds = 6
    assert overload_by_round(maximum, damage, rounds) == pytest.approx(
        bf_overload_by_round(maximum, sides, offset, rounds), abs=1e-12
    )


def test_r_rst_24_expected_rounds_matches_tail_sum():
    """R-RST-24: E[rounds until overload] = sum_k P(T > k), with a long horizon."""
    damage = {0: 0.25, 1: 0.25, 2: 0.25, 3: 0.25}  # 1d4 - 1
    for maximum in (1, 4, 9):
        by_round = overload_by_round(maximum, damage, 400)
        tail = 1 + sum(1 - x for x in by_round)
        assert expected_rounds_to_overload(maximum, damage)[maximum] == pytest.approx(tail, rel=1e-9)
    # a roll of 1d4 - 1 on 1 composure: each round 3/4 to overload -> mean 4/3
    assert expected_rounds_to_overload(1, damage)[1] == pytest.approx(4 / 3)
    assert np.isinf(expected_rounds_to_overload(3, {0: 1.0})[3])


def test_r_rst_21_overload_at_zero_deterministic():
    """R-RST-21: a fixed 5 per round on 10 composure overloads exactly in round 2."""
    s = make(target={"composure": 10}, composure={"stimulus": "5", "rounds": 4})
    e = exact(s)
    assert e["overload_by_round"] == [0.0, 1.0, 1.0, 1.0]
    assert e["mean_rounds_to_overload"] == pytest.approx(2.0)
    r = sim.simulate(s, runs=50, seed=0)
    assert (r.runs["overload_round"] == 2).all()
    assert r.summary["overload_by_round"] == [0.0, 1.0, 1.0, 1.0]


def test_r_rst_22_craving_lowers_the_maximum():
    """R-RST-22: a craving stimulus of 3 a round on 10 composure: rolls in rounds 1-4 (overload in 4)
    take 12 off the maximum; the first overload comes as with damage."""
    s = make(target={"composure": 10}, composure={"stimulus": "3", "kind": "craving", "rounds": 6})
    e = exact(s)
    assert e["mean_craving"] == pytest.approx(12.0)
    assert e["overload_by_round"] == [0, 0, 0, 1, 1, 1]
    r = sim.simulate(s, runs=20, seed=0)
    assert (r.runs["craving"] == 12).all()
    assert r.summary["mean_craving"] == 12.0


def test_r_rst_24_stimulus_ability_uses_each_pool_modifier():
    """R-RST-24: an ability name in the stimulus is that character's modifier."""
    s = make(
        target={"scores": {"con": 14}},
        composure={"stimulus": "1d4+con", "party": [{"name": "X", "class": "monk", "level": 1,
                                                     "scores": {"str": 10, "dex": 10, "con": 6, "int": 10,
                                                                "wis": 10, "cha": 10}}]},
    )
    p = compile_params(s)
    assert damage_distribution(p, 0) == pytest.approx({3: 0.25, 4: 0.25, 5: 0.25, 6: 0.25})
    assert damage_distribution(p, 1) == pytest.approx({0: 0.5, 1: 0.25, 2: 0.25})  # 1d4 - 2


def assert_within_4se(mc: dict, ex: dict, runs: int):
    for key in ("incapacitated_by_round", "arms_complete_by_round", "incapacitated_or_arms_complete_by_round",
                "overload_by_round"):
        if key not in ex:
            continue
        for k, (m, e) in enumerate(zip(mc[key], ex[key], strict=True)):
            se = np.sqrt(e * (1 - e) / runs)
            if se < 1e-12:
                assert m == pytest.approx(e, abs=1e-9), (key, k)
            else:
                assert abs(m - e) <= 4 * se, (key, k, m, e, (m - e) / se)
    assert abs(mc["mean_escape_checks"] - ex["mean_escape_checks"]) <= 4 * mc["mean_escape_checks_se"]
    for k, (m, e) in enumerate(zip(mc["escape_checks_by_round"], ex["escape_checks_by_round"], strict=True)):
        assert abs(m - e) <= 4 * np.sqrt(2.0 / runs) + 1e-12, ("escape_checks_by_round", k)  # checks <= 2 a round


@pytest.mark.parametrize("case", ["flank_penalty", "barbarian_pool"])
def test_monte_carlo_within_4se_of_exact(case):
    """R-RST-13 / R-RST-24: the kernel's frequencies lie within 4 standard errors of the exact chain."""
    s = make(**CASES[case])
    assert supports_exact(s)
    runs = 20_000
    assert_within_4se(sim.simulate(s, runs=runs, seed=123).summary, exact(s), runs)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(set(CASES) - {"flank_penalty", "barbarian_pool"}))
def test_monte_carlo_within_4se_of_exact_all_cases(case):
    """R-RST-13 / R-RST-24 for every engine test case."""
    s = make(**CASES[case])
    runs = 20_000
    assert_within_4se(sim.simulate(s, runs=runs, seed=321).summary, exact(s), runs)


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(SCENARIO_DIR.glob("*.toml")), ids=lambda q: q.stem)
def test_monte_carlo_within_4se_of_exact_example_scenarios(path):
    """Every example scenario: Monte Carlo within 4 SE of exact."""
    s = sim.load_scenario(path)
    runs = 20_000
    assert_within_4se(sim.simulate(s, runs=runs, seed=77).summary, exact(s), runs)


def test_exact_summary_contract():
    """SCENARIOS.md: the exact summary has the restraint keys, runs and seed None."""
    s = make(composure={"stimulus": "1d6"})
    e = sim.exact(s)
    for key in ("kind", "name", "runs", "seed", "incapacitated_by_round", "arms_complete_by_round",
                "mean_escape_checks", "composure_max"):
        assert key in e
    assert e["runs"] is None and e["seed"] is None and e["kind"] == "restraint"
    assert len(e["incapacitated_by_round"]) == s.run.rounds


def test_r_rst_26_condition_incapacitated_counts_every_round():
    """R-RST-26: with condition "incapacitated" P(incapacitated) is 1 every round."""
    s = make(target={"condition": "incapacitated"})
    assert exact(s)["incapacitated_by_round"] == pytest.approx([1.0] * s.run.rounds, abs=1e-12)
    assert sim.simulate(s, runs=100, seed=1).summary["incapacitated_by_round"] == [1.0] * s.run.rounds


def test_r_rst_9_condition_none_is_never_bound():
    """R-RST-9: a target in no binding condition (and body 0) is never bound."""
    s = make(target={"condition": "none"}, binder={"slots": ["arms", "body"]})
    e = exact(s)
    assert e["mean_escape_checks"] == 0.0
    assert e["level_distribution_by_round"]["arms"][-1] == [1.0, 0, 0, 0, 0, 0]
    assert sim.simulate(s, runs=100, seed=1).runs["bindings_won"].sum() == 0


def test_r_rst_27_binder_level_changes_nothing():
    """R-RST-27: the binder's level gives it nothing."""
    a = exact(make(binder={"level": 1}))
    b = exact(make(binder={"level": 20}))
    assert a["level_distribution_by_round"] == b["level_distribution_by_round"]
