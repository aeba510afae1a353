"""Issue 24, the seed's second reading of the formation rules: R-MDK-5 (slaves withdraw with their own
action and are called back by the master's; one summon and one slave in combat), R-MDK-6 (every physical
attacker has melee and ranged), R-MDK-10 (the grapple penalty is on attacks only, none on magic), R-MDK-11
(free movement by default) and R-MDK-13 (service: the service value with the bonus, no success value).

Every hand trace steps the scalar reference and the compiled kernel together (``play`` asserts identical
state after every turn). Dice: every die shows 3 (dark sum 6) unless a test says otherwise."""

from __future__ import annotations

import numpy as np
import pytest
from formation_helpers import PLAIN, always_hits, always_misses, d6, example, hp_after, make, play, rows

import sim
from sim.errors import ScenarioError
from sim.formation import layout as L
from sim.formation.model import compile_params
from sim.formation.rules import hit_probability
from sim.scenario import parse_scenario
from sim.stats import standard_error


def states(trace):
    return {(r, nm): st for r, nm, st in trace}


# --------------------------------------------------------------------------------------------
# R-MDK-6: every physical attacker chooses melee or ranged (rules.attack_types = "both", default)


def test_r_mdk_6_defaults_are_the_seed_reading():
    """R-MDK-6 / R-MDK-11: without a [rules] table or policy.movement the seed's readings apply."""
    s = parse_scenario({"kind": "formation", "name": "t", "units": [
        {"side": "A", "name": "a", "attack": "ranged"}, {"side": "B", "name": "b", "attack": "magic"}]})
    assert s.rules.attack_types == "both" and s.policy.movement == "best"
    p = compile_params(s)
    # a (listed ranged) has melee and ranged (bits 1 + 2) and keeps ranged as its first type; magic stays magic
    assert list(p.attacks) == [3, 4] and list(p.attack) == [1, 2]


def test_r_mdk_6_back_line_melee_unit_shoots_at_the_enemy_front():
    """R-MDK-6 (revised): a back-line unit listed as melee also has ranged. Ranged from the back at the
    enemy front is proper (0): 7 − 6 = 1 > evade 5 − 6 = −1, a hit for 3 (b: 10 → 7). With
    attack_types = "listed" it has only melee, −4 from the back: 7 − 4 − 6 = −3 < −1, a miss (b stays 10).
    Movement is fixed here so that only the attack types differ."""
    units = [{"side": "A", "name": "a", "area": "back", "attack": "melee", "combat": 7, "damage": 3, **PLAIN},
             {"side": "A", "name": "wall", "combat": -50, "damage": 0, **PLAIN},
             {"side": "B", "name": "b", "evade": 5, "combat": -50, **PLAIN}]
    for types, b_hp in (("both", 7), ("listed", 10)):
        p = compile_params(make(units, rules={"attack_types": types}))
        trace, _, _ = play(p, rows(p, 1))
        assert hp_after(trace, 1, "a")[2] == b_hp, types


def test_r_mdk_6_one_round_duel_within_4_se_of_exact():
    """R-MDK-6 exact vs Monte Carlo: a back-line 'melee' unit (combat 8) against a front unit (evade 5) that
    cannot hurt it, one round. Seed reading: it shoots at 0, P(A wins) = hit_probability(8, 0, 5); earlier
    reading: melee from the back at −4, hit_probability(8, 4, 5) (R-MDK-2, R-MDK-14). Movement is fixed (a
    melee unit would otherwise step forward); b acts after a, so only a's attack decides whether A wins."""
    units = [{"side": "A", "name": "a", "area": "back", "attack": "melee", "combat": 8, "hp": 1, **PLAIN},
             {"side": "B", "name": "b", "evade": 5, "combat": -100, "hp": 1, **PLAIN}]
    runs = 20_000
    for types, penalty in (("both", 0), ("listed", 4)):
        s = parse_scenario({"kind": "formation", "name": "t", "units": units, "rules": {"attack_types": types},
                            "policy": {"movement": "fixed"},
                            "skirmish": {"max_rounds": 1, "ambush": False}, "session": {"checks": 0}})
        want = hit_probability(8, penalty, 5)
        got = sim.simulate(s, runs=runs, seed=5).summary["skirmish_win_a"]
        assert abs(got - want) <= 4 * standard_error(want, runs), (types, got, want)


# --------------------------------------------------------------------------------------------
# R-MDK-11: free movement is the default


def test_r_mdk_11_default_movement_steps_forward():
    """R-MDK-11 (revised: movement = "best" by default). A listed-melee unit in the back steps to the front
    (no action) where melee is proper: 7 − 6 = 1 > −1, b: 10 → 7. With movement = "fixed" it attacks from the
    back at −4 and misses."""
    units = [{"side": "A", "name": "f", "combat": -50, "evade": 50, **PLAIN},
             {"side": "A", "name": "m", "area": "back", "combat": 7, "damage": 3, **PLAIN},
             {"side": "B", "name": "b", "evade": 5, "combat": -50, **PLAIN}]
    base = {"kind": "formation", "name": "t", "units": units, "rules": {"attack_types": "listed"},
            "policy": {"choice": "min_penalty"}}
    for policy, area, b_hp in (({}, 0, 7), ({"movement": "fixed"}, 1, 10)):
        p = compile_params(parse_scenario({**base, "policy": {**base["policy"], **policy}}))
        trace, _, _ = play(p, rows(p, 1))
        st = states(trace)[(1, "m")]
        assert st["area"][1] == area and st["hp"][2] == b_hp, policy


# --------------------------------------------------------------------------------------------
# R-MDK-10: the grapple penalty is on attacks only; magic takes none


def test_r_mdk_10_grappled_magic_takes_no_penalty():
    """g (assault) always hits and grapples the front unit x in round 1. x cannot leave (opposed stamina 5 − 6
    against 5 − 6, a tie goes to the grappler). On its turn x attacks its partner g: with magic no −2,
    7 − 6 = 1 > g's evade 6 − 6 = 0, a hit for 3 (g: 10 → 7); with melee 7 − 2 − 6 = −1, a miss (g stays 10)."""
    for attack, g_hp in (("magic", 7), ("melee", 10)):
        units = [{"side": "A", "name": "g", "grapple": "assault", "combat": 7, "evade": 6, "damage": 1, **PLAIN},
                 {"side": "B", "name": "x", "attack": attack, "combat": 7, "evade": 5, "damage": 3, "hp": 50,
                  **PLAIN}]
        p = compile_params(make(units))
        trace, _, _ = play(p, rows(p, 1, {"g": always_hits()}))
        st = states(trace)[(1, "x")]
        assert st["partner"] == [1, 0], attack
        assert st["hp"][0] == g_hp, attack


# --------------------------------------------------------------------------------------------
# R-MDK-13: service recovery = the service value with the 1d4 − 1 bonus, no success value


@pytest.mark.parametrize("model", ["flat", "margin"])
def test_r_mdk_13_service_value_with_the_bonus_only(model):
    """The server (damage 3) rolls a critical (dark sum 0) with the d4 showing 4 (bonus 4 − 1 = 3): total
    7 + 3 − 0 = 10 against evade 5 − 6 = −1, a hit. Service: 3 + 3 = 6 in both damage models (v: 20 → 14);
    the success value 10 − (−1) = 11 is not added. Training, for contrast: flat 3 (20 → 17), margin
    3 + 11 = 14 (20 → 6)."""
    dice = {"s": {**always_hits(), L.ROLEPLAY_D4: (4 - 0.5) / 4}}
    want = {"service": 14, "training": {"flat": 17, "margin": 6}[model]}
    for kind, v_hp in want.items():
        units = [{"side": "A", "name": "s", "grapple": kind, "combat": 7, "damage": 3, **PLAIN},
                 {"side": "B", "name": "v", "evade": 5, "combat": -50, "hp": 20, **PLAIN}]
        p = compile_params(make(units, skirmish={"damage_model": model}))
        trace, _, _ = play(p, rows(p, 1, dice))
        assert hp_after(trace, 1, "s")[1] == v_hp, kind


# --------------------------------------------------------------------------------------------
# R-MDK-5: withdrawal by the slave's action, recall by the master's, one summon and one slave


def _recall_units():
    return [{"side": "A", "name": "slave", "slave": True, "summoner": "master", "hp": 20, "combat": 50,
             "damage": 2, **PLAIN},
            {"side": "A", "name": "master", "hp": 50, "combat": 50, "damage": 1, **PLAIN},
            {"side": "B", "name": "hunter", "attack": "magic", "hp": 100, "evade": -50, "combat": 50, "damage": 6,
             **PLAIN}]


def test_r_mdk_5_withdrawn_slave_is_called_back_by_the_master():
    """withdraw_below 0.5 → a slave withdraws below ceil(10) = 10 hp; recall_above 0.2 → it is called back
    with hp >= floor(4) + 1 = 5. The hunter hits the first listed enemy for 6 (a critical), except in
    round 3 (a fumble).
    R1: master calls the slave (its action); the hunter hits the slave: 20 → 14.
    R2: slave (14, not below 10) and master hit the hunter: 100 − 2 − 1 = 97; hunter: slave 14 → 8.
    R3: slave (8 < 10, hurt since it entered) withdraws with its own action; the master calls it back
        (8 >= 5: its action, no attack; entered 3, entry hp 8); the hunter fumbles. Hunter still 97.
    R4: slave (8 < 10, not hurt since its return) stays and hits, master hits: 94; hunter: slave 8 → 2.
    R5: slave (2, hurt since its return) withdraws; master: 2 < 5, no recall, it hits: 93.
    Without recall_above: R3 the master hits instead (96) and the slave stays in the prison."""
    p = compile_params(make(_recall_units(), policy={"withdraw_below": 0.5, "recall_above": 0.2, "name": "first"}))
    assert list(p.withdraw_hp) == [10, 0, 0] and list(p.recall_hp) == [5, 0, 0]
    rr = rows(p, 5, {"hunter": always_hits()})
    h = p.names.index("hunter") * L.UNIT_COLS
    rr[2][[h + L.ATTACK_DICE[0], h + L.ATTACK_DICE[1]]] = d6(5)  # round 3: the hunter fumbles
    trace, _, _ = play(p, rr)
    s = states(trace)
    assert s[(1, "master")]["present"][0] and s[(1, "hunter")]["hp"][0] == 14
    assert s[(2, "hunter")]["hp"] == [8, 50, 97]
    assert s[(3, "slave")]["withdrawn"][0] and not s[(3, "slave")]["present"][0]
    after = s[(3, "master")]
    assert after["present"][0] and not after["withdrawn"][0] and after["entered"][0] == 3 and after["entry_hp"][0] == 8
    assert s[(3, "hunter")]["hp"] == [8, 50, 97]
    assert s[(4, "slave")]["present"][0] and s[(4, "hunter")]["hp"] == [2, 50, 94]
    assert s[(5, "slave")]["withdrawn"][0] and s[(5, "master")]["hp"][2] == 93 and not s[(5, "master")]["present"][0]
    # the earlier behaviour: no recall, the master attacks in round 3
    p = compile_params(make(_recall_units(), policy={"withdraw_below": 0.5, "name": "first"}))
    trace, _, _ = play(p, rr)
    s = states(trace)
    assert s[(3, "master")]["withdrawn"][0] and s[(3, "master")]["hp"][2] == 96


def test_r_mdk_5_one_summon_and_one_slave_in_combat():
    """R-MDK-5: one summon and, besides it, one slave of a master in combat. R1 the master calls the imp
    (first in file order), R2 the slave (the imp is a summon, not a slave), R3 it has nobody left to call
    and attacks (the dummy, evade 50, is hit only by criticals: the master's dice are 6, 6)."""
    units = [{"side": "A", "name": "master", "combat": 0, "damage": 1, **PLAIN},
             {"side": "A", "name": "imp", "summoner": "master", "summoned": True, "combat": -50, **PLAIN},
             {"side": "A", "name": "slave", "summoner": "master", "slave": True, "combat": -50, **PLAIN},
             {"side": "B", "name": "dummy", "hp": 50, "evade": 50, "combat": -50, **PLAIN}]
    p = compile_params(make(units))
    trace, _, _ = play(p, rows(p, 3, {"master": always_hits(), "imp": always_misses(), "slave": always_misses()}))
    s = states(trace)
    assert s[(1, "master")]["present"] == [True, True, False, True]
    assert s[(2, "master")]["present"] == [True, True, True, True] and s[(2, "master")]["hp"][3] == 50
    assert s[(3, "master")]["hp"][3] == 49


def test_recall_above_is_validated():
    base = {"kind": "formation", "name": "t", "units": [{"side": "A", "name": "a"}, {"side": "B", "name": "b"}]}
    for policy, words in (({"recall_above": 0.2}, "needs policy.withdraw_below"),
                          ({"recall_above": 0.5, "withdraw_below": 0.5}, "below withdraw_below"),
                          ({"recall_above": 1.0, "withdraw_below": 0.5}, "less than 1")):
        with pytest.raises(ScenarioError) as e:
            parse_scenario({**base, "policy": policy}, file="bad.toml")
        assert "policy.recall_above" in str(e.value) and words in str(e.value), str(e.value)


def test_summary_states_the_reading():
    s = sim.load_scenario(example("overflow_front"))
    out = sim.simulate(s, runs=50, seed=1).summary
    assert out["reading"] == {"attack_types": "both", "movement": "best", "recall_above": None,
                              "dismiss_below": None, "grapple_penalty": "area"}
    assert np.isfinite(out["skirmish_win_a"])


def test_report_states_the_reading():
    """The report's inputs name the readings used (R-MDK-6, R-MDK-11, R-MDK-5)."""
    from sim.formation.report import reading_text

    s = sim.load_scenario(example("overflow_front"))
    assert 'attack_types = "both"' in reading_text(s) and 'movement = "best"' in reading_text(s)
    earlier = parse_scenario({"kind": "formation", "name": "t", "rules": {"attack_types": "listed"},
                              "policy": {"movement": "fixed"}})
    assert '"listed"' in reading_text(earlier) and '"fixed"' in reading_text(earlier)
