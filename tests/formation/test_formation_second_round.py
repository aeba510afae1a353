"""Issue 44, the second round of the 2026-12 revision of the formation rules: R-MDK-5 (dismissal of a hurt summon,
one masterless slave a side), R-MDK-10 (inside a grapple the -2 adds to the attack type's R-MDK-6 penalty at the
partner) and R-MDK-11 ("best" movement weighs a grapple attempt).

Every hand trace steps the scalar reference and the compiled kernel together (``play`` asserts identical state after
every turn). Dice: every die shows 3 (dark sum 6) unless a test says otherwise; the d4 read from the same uniform
shows 2 (R-MDK-13 bonus 1)."""

from __future__ import annotations

import pytest
from formation_helpers import PLAIN, always_hits, hp_after, make, play, rows

from sim.errors import ScenarioError
from sim.formation.model import compile_params
from sim.scenario import parse_scenario


def states(trace):
    return {(r, nm): st for r, nm, st in trace}


# --------------------------------------------------------------------------------------------
# R-MDK-10: the -2 adds to the R-MDK-6 penalty of the attack type used at the partner


@pytest.mark.parametrize(("reading", "attacks", "g_hp"), [
    ("area", ["ranged"], 10),          # ranged at the adjacent enemy: 9 − 4 − 2 − 6 = −3, not above 0: a miss
    ("grapple_only", ["ranged"], 7),   # the earlier reading: 9 − 2 − 6 = 1 > 0, a hit for 3
    ("area", ["melee", "ranged"], 7),  # it picks melee at its partner: 9 − 0 − 2 − 6 = 1 > 0, a hit for 3
])
def test_r_mdk_10_ranged_unit_held_by_an_adjacent_enemy(reading, attacks, g_hp):
    """R-MDK-10 (second round): g (front, assault) always hits (a critical) and grapples x, a front-line unit.
    x cannot leave: stamina 5 − 6 against g's 5 − 6, a tie goes to the grappler. On its turn x attacks its
    partner g (evade 6 − 6 = 0). Ranged at the adjacent enemy front is −4 (R-MDK-6) and the −2 adds to it:
    combat 9 − 6 − 6 = −3, a miss (g stays at 10). The earlier reading (grapple_penalty = "grapple_only") took only
    the −2: 9 − 2 − 6 = 1, a hit for 3 (g 10 → 7). With melee and ranged, x picks melee at its partner (0 − 2):
    a hit for 3 as well."""
    units = [{"side": "A", "name": "g", "grapple": "assault", "combat": 7, "evade": 6, "damage": 1, **PLAIN},
             {"side": "B", "name": "x", "attacks": attacks, "combat": 9, "evade": 5, "damage": 3, "hp": 50, **PLAIN}]
    p = compile_params(make(units, rules={"grapple_penalty": reading}))
    trace, _, _ = play(p, rows(p, 1, {"g": always_hits()}))
    st = states(trace)[(1, "x")]
    assert st["partner"] == [1, 0]
    assert st["hp"] == [g_hp, 49]


def test_r_mdk_10_back_line_unit_held_by_an_overflow_fighter_shoots_without_area_penalty():
    """R-MDK-10 with R-MDK-7: A's front (f, g) outnumbers B's (w), so g, listed second, overflows and grapples
    the back-line unit x (always a critical; greedy picks x, 50 hp, over w, 60 hp). x, held, attacks its partner
    g in A's front: melee from the back at a front is −4, ranged from the back at the enemy front is proper (0).
    With melee and ranged it shoots: 9 − 0 − 2 − 6 = 1 > g's evade 6 − 6 = 0, a hit for 3 (g 10 → 7); melee
    only: 9 − 4 − 2 − 6 = −3, a miss."""
    for attacks, g_hp in ((["melee", "ranged"], 7), (["melee"], 10)):
        units = [{"side": "A", "name": "f", "combat": -50, "evade": 50, "damage": 0, **PLAIN},
                 {"side": "A", "name": "g", "grapple": "assault", "combat": 7, "evade": 6, "damage": 1, **PLAIN},
                 {"side": "B", "name": "w", "combat": -50, "evade": 50, "hp": 60, **PLAIN},
                 {"side": "B", "name": "x", "area": "back", "attacks": attacks, "combat": 9, "evade": 5, "damage": 3,
                  "hp": 50, **PLAIN}]
        p = compile_params(make(units))
        trace, _, _ = play(p, rows(p, 1, {"g": always_hits()}))
        st = states(trace)[(1, "x")]
        assert st["partner"][1] == 3 and st["hp"][1] == g_hp, attacks


# --------------------------------------------------------------------------------------------
# R-MDK-11: "best" movement weighs a grapple attempt


@pytest.mark.parametrize("choice", ["expected_damage", "min_penalty"])
def test_r_mdk_11_grappler_in_the_back_steps_up_to_grapple(choice):
    """R-MDK-11 (second round). s (training, melee and ranged) stands in the back behind a wall; b is in B's front.
    From the back its best attack is ranged at b (proper, 0); from the front melee at b (0): the same score, so
    weighing attacks only (movement = "best_attack", the first round's reading) it stays and shoots:
    7 − 6 = 1 > b's evade 5 − 6 = −1, a hit for 3 (b 20 → 17, no grapple). From the front it may also try a
    training grapple on b (contact, R-MDK-9) with the R-MDK-13 bonus 1d4 − 1: expected_damage scores the mean over
    the d4 of the expected damage with combat 7 + bonus, above the attack's (bonus 0) because more combat never
    deals less; min_penalty scores it 0 penalty + the mean bonus 1.5 against the attack's 0. So with "best" it
    steps up and grapples: 7 + 1 (the d4 shows 2) − 6 = 2 > −1, a hit for 3 (b 17) and the pair is formed."""
    units = [{"side": "A", "name": "wall", "combat": -50, "evade": 50, "damage": 0, **PLAIN},
             {"side": "A", "name": "s", "area": "back", "grapple": "training", "combat": 7, "damage": 3, **PLAIN},
             {"side": "B", "name": "b", "evade": 5, "combat": -50, "hp": 20, **PLAIN}]
    for movement, area, partner in (("best", 0, 2), ("best_attack", 1, -1)):
        p = compile_params(make(units, policy={"choice": choice, "movement": movement},
                                rules={"attack_types": "both"}))
        trace, _, _ = play(p, rows(p, 1))
        st = states(trace)[(1, "s")]
        assert st["area"][1] == area and st["partner"][1] == partner and st["hp"][2] == 17, movement


# --------------------------------------------------------------------------------------------
# R-MDK-5: dismissal of a hurt summon, one masterless slave a side


def _summon_units():
    return [{"side": "A", "name": "imp1", "summoner": "master", "summoned": True, "hp": 10, "combat": -50,
             "evade": -50, **PLAIN},
            {"side": "A", "name": "imp2", "summoner": "master", "summoned": True, "hp": 10, "combat": -50,
             "evade": -50, **PLAIN},
            {"side": "A", "name": "master", "hp": 50, "combat": -50, "evade": -50, **PLAIN},
            {"side": "B", "name": "hunter", "attack": "magic", "hp": 100, "evade": 50, "combat": 50, "damage": 6,
             **PLAIN}]


def test_r_mdk_5_hurt_summon_is_dismissed_and_the_next_called():
    """dismiss_below 0.5 on 10-hp summons: dismissed below ceil(5) = 5 hp. The hunter's magic always hits (a
    critical) the first listed enemy on the field for 6; nobody on side A ever hits the hunter (evade 50).
    R1: the master calls imp1 (its action); the hunter hits imp1: 10 → 4.
    R2: imp1 misses. The master has imp2 waiting and imp1 is below 5: imp1 is dismissed (no action), and the
        master calls imp2 (its action; imp2 acts from round 3). The hunter hits imp2 (imp1 is gone): 10 → 4.
    R3: imp2 misses. Nothing waits (imp1 is gone for the combat): imp2 stays; the master, with no one to call,
        attacks and misses. The hunter hits imp2: 4 − 6, it falls.
    R4: the master attacks; imp1 is not called back. The hunter hits the master: 50 → 44.
    Without dismiss_below, in R2 imp1 stays (the master attacks) and the hunter's hit fells it (4 − 6)."""
    p = compile_params(make(_summon_units(), policy={"dismiss_below": 0.5, "name": "first"}))
    assert list(p.dismiss_hp) == [5, 5, 0, 0]
    trace, _, _ = play(p, rows(p, 4, {"hunter": always_hits()}))
    s = states(trace)
    assert s[(1, "hunter")]["hp"][0] == 4 and s[(1, "hunter")]["present"][:2] == [True, False]
    r2 = s[(2, "hunter")]
    assert r2["dismissed"] == [True, False, False, False] and r2["present"][:2] == [False, True]
    assert r2["entered"][1] == 2 and r2["hp"][:2] == [4, 4] and r2["alive"][0]
    assert not s[(3, "hunter")]["alive"][1]
    r4 = s[(4, "hunter")]
    assert r4["present"][0] is False and r4["dismissed"][0] and r4["hp"][2] == 44
    # the earlier behaviour (no dismissal): imp1 stays and falls in round 2
    p = compile_params(make(_summon_units(), policy={"name": "first"}))
    trace, _, _ = play(p, rows(p, 2, {"hunter": always_hits()}))
    r2 = states(trace)[(2, "hunter")]
    assert not r2["alive"][0] and r2["present"][1] is False and not any(r2["dismissed"])


def test_r_mdk_5_no_dismissal_without_another_summon_waiting():
    """R-MDK-5: dismissal needs another summon waiting. With imp2 removed, imp1 at 4 hp (< 5) stays in round 2 and
    the hunter's hit fells it; the master is left alone."""
    units = [u for u in _summon_units() if u["name"] != "imp2"]
    p = compile_params(make(units, policy={"dismiss_below": 0.5, "name": "first"}))
    trace, _, _ = play(p, rows(p, 2, {"hunter": always_hits()}))
    r2 = states(trace)[(2, "hunter")]
    assert not r2["alive"][0] and not any(r2["dismissed"])
    assert hp_after(trace, 2, "hunter")[1] == 50


def test_r_mdk_5_two_masterless_slaves_on_a_side_are_refused():
    """R-MDK-5: a slave with no master in the scenario belongs to its side, at most one such slave a side (one
    slave in the combat). One a side is valid; a second on side A is refused at its key; a slave with a summoner
    does not count."""
    def units(*extra):
        return [{"side": "A", "name": "a"}, {"side": "B", "name": "b", "slave": True},
                {"side": "A", "name": "s1", "slave": True}, *extra]
    parse_scenario({"kind": "formation", "name": "t", "units": units()})
    parse_scenario({"kind": "formation", "name": "t",
                    "units": units({"side": "A", "name": "s2", "slave": True, "summoner": "a"})})
    with pytest.raises(ScenarioError) as e:
        parse_scenario({"kind": "formation", "name": "t", "units": units({"side": "A", "name": "s2", "slave": True})},
                       file="bad.toml")
    msg = str(e.value)
    assert "units.3.slave" in msg and "bad.toml" in msg and "\n" not in msg.strip(), msg


def test_dismiss_below_is_validated():
    base = {"kind": "formation", "name": "t", "units": [{"side": "A", "name": "a"}, {"side": "B", "name": "b"}]}
    for value in (0, 1.5):
        with pytest.raises(ScenarioError) as e:
            parse_scenario({**base, "policy": {"dismiss_below": value}}, file="bad.toml")
        assert "policy.dismiss_below" in str(e.value)


def test_r_mdk_10_one_round_within_4_se_of_exact():
    """R-MDK-10, Monte Carlo against the exact opposed checks (R-MDK-2), one round, order g then x. g (A, assault,
    combat 100, damage 0) tries to grapple the ranged-only front unit x (B): it wins with pg = P(100 beats evade 5).
    Held, x leaves with pl = P(stamina 5 beats g's 5) and then shoots g without the grapple; otherwise it shoots its
    partner. Ranged at the adjacent front is −4 (R-MDK-6): held, −4 − 2 (the seed) or −2 (grapple_only); free, −4.
    One hit (damage 5) fells g (hp 1): P(B wins) = pg (1 − pl) h(held) + (pg pl + 1 − pg) h(4), h(penalty) =
    P(9 − penalty beats evade 5)."""
    import sim
    from sim.formation.rules import hit_probability, opposed_win_probability
    from sim.stats import standard_error

    pg, pl = opposed_win_probability(100, 5), opposed_win_probability(5, 5)
    units = [{"side": "A", "name": "g", "grapple": "assault", "combat": 100, "evade": 5, "damage": 0, "hp": 1,
              **PLAIN},
             {"side": "B", "name": "x", "attacks": ["ranged"], "combat": 9, "evade": 5, "damage": 5, "hp": 1, **PLAIN}]
    runs = 20_000
    for reading, held in (("area", 6), ("grapple_only", 2)):
        want = pg * (1 - pl) * hit_probability(9, held, 5) + (pg * pl + 1 - pg) * hit_probability(9, 4, 5)
        s = parse_scenario({"kind": "formation", "name": "t", "units": units, "rules": {"grapple_penalty": reading},
                            "policy": {"movement": "fixed"}, "session": {"checks": 0},
                            "skirmish": {"max_rounds": 1, "ambush": False, "min_damage": 0}})
        got = sim.simulate(s, runs=runs, seed=9).summary["skirmish_win_b"]
        assert abs(got - want) <= 4 * standard_error(want, runs), (reading, got, want)
