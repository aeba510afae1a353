"""Distributions against exact answers (STYLE.md practice 8: fixed seed, 4 standard errors)."""

import math

import numpy as np
from campus_helpers import scenario_data

import sim
from sim.scenario import parse_scenario

RUNS = 20_000


def within(p_hat, p, n, k=4.0):
    return abs(p_hat - p) <= k * math.sqrt(p * (1 - p) / n) + 1e-12


def test_r_cam_50_59_capture_clear_and_escape_exact():
    """R-CAM-50 / R-CAM-11 / R-CAM-15 / R-CAM-59: one PC, a hound at the hall with chance 0.6, the PC moves
    uniformly between hall and cell and always loses; its min is 0, so every check fails.
    P(clear) = 0.7^3, P(game over) = 0.3 (captured in turn 1: checks in turns 2 and 3), capture_by_turn[t] =
    0.7^(t-1) * 0.3, escape success 0."""
    d = scenario_data(rules={"turns": 3},
                      adversaries=[{"name": "h", "abilities": {"fight": 50}, "stance": "fight"}],
                      spawns=[{"adversary": "h", "chance": 0.6, "locations": ["hall"]}],
                      party=[{"name": "A", "abilities": {"fight": 10, "flee": 0, "hide": 0}}])
    r = sim.simulate(parse_scenario(d), runs=RUNS, seed=11)
    s = r.summary
    assert within(s["clear_rate"], 0.7**3, RUNS)
    assert within(s["game_over_rate"], 0.3, RUNS)
    for t, c in enumerate(s["capture_by_turn"]):
        assert within(c, 0.7**t * 0.3, RUNS)
    assert s["escape_success_by_turn"][0] is None and s["escape_success_by_turn"][1] == 0.0


def test_r_cam_21_stance_weights_win_rate():
    """R-CAM-21: weights fight 1, flee 2, hide 1; a PC in hide wins only against flee: P(win) = 1/2."""
    d = scenario_data(
        rules={"turns": 1}, policy={"stance": "fixed", "stance_value": "hide", "move": "avoid"},
        locations=[{"id": "hall"}, {"id": "cell", "capture_room": True}],
        adversaries=[{"name": "h", "abilities": {"fight": 15, "flee": 15, "hide": 15},
                      "stance": {"fight": 1, "flee": 2, "hide": 1}}],
        spawns=[{"adversary": "h", "locations": ["hall"]}],
        party=[{"name": "A", "abilities": {"fight": 0, "flee": 0, "hide": 10}}])
    r = sim.simulate(parse_scenario(d), runs=RUNS, seed=12)
    assert r.summary["duels_per_game_by_adversary"]["h"] == 1.0
    assert within(r.summary["win_rate_by_adversary"]["h"], 0.5, RUNS)
    assert within(r.summary["clear_rate"], 0.5, RUNS)


def test_r_cam_50_options_subset_uniform():
    """R-CAM-50: options = 2 of 4 locations; a random mover visits each location with probability 1/4."""
    d = scenario_data(rules={"turns": 1, "options": 2},
                      locations=[{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "cell", "capture_room": True}],
                      missions=[{"location": "a", "stance": "hide", "target": 0, "reward": 1}])
    r = sim.simulate(parse_scenario(d), runs=RUNS, seed=13)
    visited_a = float((r.runs["pc0_gp"] == 2).mean())
    assert within(visited_a, 0.25, RUNS)
    assert np.isclose(r.summary["clear_rate"], 1.0)


def test_r_cam_6_until_cleared_against_exact():
    """R-CAM-6: one PC (fight 10, fixed stance fight, always at the hall: `avoid` without ears) and two ordinary
    adversaries (8 in every stance, uniform stance) for one turn. A confrontation is won with probability 2/3:
    against fight 10 > 8; against hide fight beats hide, 20 > 8; against flee, flee beats fight, 16 > 10
    (R-CAM-2..4). until_cleared: the PC must beat both, P(clear) = (2/3)^2 = 4/9, and the second duel happens
    only after a win: E[duels] = 1 + 2/3 (variance 2/9). once: P(clear) = 2/3, exactly one duel."""
    for fights, clear, duels in (("until_cleared", 4 / 9, 1 + 2 / 3), ("once", 2 / 3, 1.0)):
        d = scenario_data(rules={"turns": 1, "fights": fights}, policy={"move": "avoid"},
                          adversaries=[{"name": "h", "abilities": {"fight": 8, "flee": 8, "hide": 8}}],
                          spawns=[{"adversary": "h", "locations": ["hall"], "count": 2}])
        s = sim.simulate(parse_scenario(d), runs=RUNS, seed=14).summary
        assert within(s["clear_rate"], clear, RUNS)
        assert abs(s["duels_per_game_by_adversary"]["h"] - duels) <= 4 * math.sqrt(2 / 9 / RUNS)
