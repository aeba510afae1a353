"""Campus exact analysis and optimal play (issue 37): sim.campus.exact and sim.campus.optimal.

Hand-derived values from RULES.md section 3; agreement with Monte Carlo (the kernel) within 4 SE on the one-PC
example and on generated small games; optimal play >= every built-in policy; refusals before the work."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import pytest
from campus_helpers import example, make
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim
from sim.campus.exact import CampusExactRefused, Rules, exact
from sim.campus.optimal import OptimalPolicy, compare, optimal_exact, solve
from sim.campus.params import compile_params

HOUND = {"name": "hound", "abilities": {"fight": 8, "flee": 8, "hide": 8}, "stance": {"fight": 1, "flee": 1, "hide": 1},
         "reward": 1}
PC = {"name": "A", "abilities": {"fight": 10, "flee": 5, "hide": 5}}


def two_turns(offset: int):
    """Two turns; the hall and the cell (capture room); a hound at the hall with chance 1/2; A fights (fixed)."""
    return make(rules={"turns": 2, "escape_offset": offset}, adversaries=[HOUND], party=[PC],
                spawns=[{"adversary": "hound", "turns": [1, 2], "locations": ["hall"], "chance": 0.5}],
                policy={"move": "random", "stance": "fixed", "stance_value": "fight"})


def test_R_CAM_exact_two_turns_by_hand():
    """R-CAM-2..4: A's fight 10 beats the hound's fight 8 and (x2, fight beats hide) its hide 8 -> 20, and loses to
    its flee (x2 -> 16 > 10): it loses 1 time in 3. R-CAM-40 move random: the hall 1/2 of the time; R-CAM-50 the
    hound is there 1/2: a capture 1/2 x 1/2 x 1/3 = 1/12 a turn. R-CAM-11/13: a PC captured in turn 1 checks in
    turn 2 against 2 + offset with min(10, 5, 5) = 5. Offset 0: target 2 <= 5, it escapes and, free after turn 2,
    clears: clear = 11/12 x 11/12 + 1/12 = 133/144; offset 3: target 5 <= 5, the same; offset 4: target 6 > 5, it
    stays: clear 121/144."""
    for offset, clear, esc in ((0, Fraction(133, 144), 1.0), (3, Fraction(133, 144), 1.0),
                               (4, Fraction(121, 144), 0.0)):
        e = exact(two_turns(offset))
        assert e["clear_rate"] == pytest.approx(float(clear), abs=1e-12)
        assert e["capture_by_turn"] == pytest.approx([1 / 12, 11 / 144], abs=1e-12)
        assert e["escape_success_by_turn"][0] is None and e["escape_success_by_turn"][1] == esc
        assert e["escape_checks_by_turn"] == pytest.approx([0, 1 / 12], abs=1e-12)
        assert e["game_over_rate"] == 0  # vitality 3 - 1 (capture) - 1 (a failed check) = 1 > 0
        # R-CAM-8 reward 1 per win: duels per game 1/4 a turn, won 2/3 of them
        assert e["win_rate_by_adversary"]["hound"] == pytest.approx(2 / 3)


def test_R_CAM_optimal_two_turns_by_hand():
    """Optimal play in the same game: going to the cell (no hound is ever placed there, R-CAM-20) is safe, and a
    free PC in a capture room with nobody checking does nothing (R-CAM-53): clear rate 1."""
    _, v, _ = solve(two_turns(4))
    assert v == pytest.approx(1.0)


def test_R_CAM_14_exact_game_over_by_hand():
    """Vitality 1 (R-CAM-15): the first capture (1/12 a turn) ends the game at once: game over 1 - (11/12)^2."""
    s = make(rules={"turns": 2, "vitality": 1}, adversaries=[HOUND], party=[PC],
             spawns=[{"adversary": "hound", "turns": [1, 2], "locations": ["hall"], "chance": 0.5}],
             policy={"move": "random", "stance": "fixed", "stance_value": "fight"})
    e = exact(s)
    assert e["game_over_rate"] == pytest.approx(1 - (11 / 12) ** 2)
    assert e["game_over_by_turn"] == pytest.approx([1 / 12, 11 / 144])


# ------------------------------------------------------------------------------------------ Monte Carlo
def assert_agrees(scenario, runs: int, seed: int = 7) -> dict:
    """Exact within 4 SE of Monte Carlo (the batch kernel): clear and game over rates, captures per turn."""
    e = exact(scenario)
    s = sim.simulate(scenario, runs=runs, seed=seed).summary
    for key in ("clear_rate", "game_over_rate", "captured_at_end_rate"):
        se = math.sqrt(max(e[key] * (1 - e[key]), 1 / runs) / runs)
        assert abs(s[key] - e[key]) <= 4 * se, (key, e[key], s[key])
    for t, (x, y) in enumerate(zip(e["capture_by_turn"], s["capture_by_turn"], strict=True)):
        se = math.sqrt(max(x * (1 - x), 1 / runs) / runs)
        assert abs(x - y) <= 4 * se, ("capture_by_turn", t + 1, x, y)
    return e


def test_exact_agrees_with_monte_carlo_on_the_one_pc_example():
    assert_agrees(sim.load_scenario(example("solo_pc_small_map")), runs=20_000)


@st.composite
def small_games(draw):
    """A one-PC campus game: 2 to 4 locations (one capture room, maybe an exit), 1 or 2 adversary templates
    (a boss maybe), spawns with chances, 2 to 6 turns, options all or 2, any built-in policy, maybe a mission."""
    n_loc = draw(st.integers(2, 4))
    locs = [{"id": f"l{i}"} for i in range(n_loc - 1)] + [{"id": "cell", "capture_room": True,
                                                            "escape_offset": draw(st.integers(0, 3))}]
    if draw(st.booleans()):
        locs[0] = {"id": "l0", "exit": True, "opens_on": draw(st.integers(1, 4))}
    ab = st.integers(1, 12)
    advs = []
    for k in range(draw(st.integers(1, 2))):
        advs.append({"name": f"a{k}", "abilities": {"fight": draw(ab), "flee": draw(ab), "hide": draw(ab)},
                     "stance": {"fight": draw(st.integers(0, 2)), "flee": draw(st.integers(0, 2)), "hide": 1},
                     "reward": draw(st.integers(0, 3)), "boss": draw(st.booleans())})
    turns = draw(st.integers(2, 6))
    spawns = [{"adversary": a["name"], "turns": [1, turns], "locations": "any", "count": draw(st.integers(1, 2)),
               "chance": draw(st.sampled_from([0.25, 0.5, 1.0]))} for a in advs]
    pc = {"name": "A", "abilities": {"fight": draw(ab), "flee": draw(ab), "hide": draw(ab)}}
    if draw(st.booleans()):
        pc["skills"] = [{"kind": "multiplier", "stances": [draw(st.sampled_from(["fight", "flee", "hide"]))],
                         "value": 2, "when": draw(st.sampled_from(["always", "advantage"]))},
                        {"kind": "early_ears"}][: draw(st.integers(1, 2))]
    missions = []
    if draw(st.booleans()):
        missions = [{"location": "l0", "turns": [1, turns], "stance": "hide", "target": draw(st.integers(3, 12)),
                     "reward": 1, "penalty": {"vitality": 1}, "chance": 0.5}]
    policy = {"move": draw(st.sampled_from(["random", "avoid"])),
              "stance": draw(st.sampled_from(["fixed", "random", "best", "counter", "equilibrium"])),
              "stance_value": "flee", "growth": draw(st.sampled_from(["none", "lowest", "best"]))}
    rules = {"turns": turns, "vitality": draw(st.integers(1, 3)), "options": draw(st.sampled_from(["all", 2])),
             "fights": draw(st.sampled_from(["until_cleared", "once"]))}
    return make(rules=rules,
                locations=locs, adversaries=advs, spawns=spawns, party=[pc], missions=missions, policy=policy)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_games())
def test_exact_agrees_with_monte_carlo_on_generated_small_games(scenario):
    assert_agrees(scenario, runs=4_000)


# ------------------------------------------------------------------------------------------ optimal play
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_games())
def test_optimal_is_at_least_the_built_in_policy_and_its_own_exact_value(scenario):
    """Optimal play >= the scenario's built-in policy (exact); the forward pass of the solved table gives its
    value back."""
    _, v, _ = solve(scenario)
    assert v >= exact(scenario)["clear_rate"] - 1e-9
    assert optimal_exact(scenario)["clear_rate"] == pytest.approx(v, abs=1e-9)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_games())
def test_optimal_spending_reduction_equals_every_split(scenario):
    """The optimal solver tries only spendings up to duel, mission and escape thresholds and clips gp it cannot
    use (sim.campus.optimal): the value equals the one over every split of the gp up to the caps."""
    pol, v, _ = solve(scenario)
    r = Rules(compile_params(scenario))
    full = OptimalPolicy(r, pol.turn)
    full.penalised, full.gp_clip = True, False  # every split, no clip
    assert full.value(1, (False, r.vit0, 0, full.clip(r.base0), -1)) == pytest.approx(v, abs=1e-9)


def test_optimal_beats_every_built_in_policy_on_the_example():
    res = compare(sim.load_scenario(example("solo_pc_small_map")))
    assert all(row["gap_points"] >= -1e-7 for row in res["policies"])
    assert res["optimal_value"] > res["policies"][0]["value"]  # the scenario's policy leaves points


# ------------------------------------------------------------------------------------------ refusals
def test_two_pcs_are_refused_before_the_work_naming_the_party_size():
    start = time.process_time()
    with pytest.raises(CampusExactRefused) as exc:
        exact(sim.load_scenario(example("seed_trio_vs_hounds")))
    assert exc.value.binds == "party" and "3 PCs" in str(exc.value)
    assert time.process_time() - start < 5


def test_the_state_budget_refuses_naming_the_flag():
    with pytest.raises(CampusExactRefused) as exc:
        exact(sim.load_scenario(example("solo_pc_small_map")), max_states=50)
    assert exc.value.binds == "states" and "--max-states" in str(exc.value)


def test_growth_purchases_are_refused():
    s = make(growth={"costs": {"skills": [{"name": "x", "cost": 1, "kind": "early_ears"}]}},
             policy={"buy": ["x"]})
    with pytest.raises(CampusExactRefused) as exc:
        exact(s)
    assert exc.value.binds == "purchases"
