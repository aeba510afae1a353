"""R-ESC-10c bound legs hinder search and stealth, and R-ESC-14 mage hand's bonus needs the mouth free (issue 44
items 2 and 3), worked by hand from RULES.md.

The reference round runs with a scripted random source that reports the ``need`` of every search and the item
weights of every draw; the batch engine is compared with it on the same states (team's attention guard) and the
exact engine on a case whose answer is a single search."""

from __future__ import annotations

import numpy as np
import pytest
from escape_helpers import Script, character, scenario, setup

import sim
from sim.escape import kernel as K
from sim.escape.actions import is_legal
from sim.escape.params import ARMS, COMPLETE, LEGS, compile_params
from sim.escape.policy import PolicyView, load_policy
from sim.escape.reference import play_round
from sim.escape.state import Action, initial_state

LADDER = {"simple": 1, "light": 2, "moderate": 3, "heavy": 4, "severe": 5}
STRUGGLE_ARMS_STR = Action("struggle", slot=ARMS, ability=0)


def fixed(actions):
    def policy(view):
        return list(actions)

    return policy


def _rules(hinder: bool) -> dict:
    return {"legs_hinder": hinder}


@pytest.mark.parametrize("tier", sorted(LADDER, key=LADDER.get))
def test_R_ESC_10c_search_dc_rises_by_the_legs_tier(tier):
    # search.dc 14, legs_dc 3, wis 14 (+2): legs at tier t search against 14 + 3t, so the d20 must reach
    # 14 + 3t - 2; with legs_hinder = false 14 - 2 = 12 whatever the legs.
    t = LADDER[tier]
    for hinder, want in ((True, 14 + 3 * t - 2), (False, 12)):
        p, st = setup(character("A", wis=14, restraints={"legs": tier}), search={"dc": 14, "legs_dc": 3},
                      goal={"slots": ["arms"]}, rules=_rules(hinder))
        src = Script(searches=[False])
        play_round(p, st, fixed([Action("search")]), src, validate=True)
        assert src.of("search")[0][2] == want


def test_R_ESC_10c_default_legs_dc_is_one_and_complete_legs_cannot_search():
    # default legs_dc 1: legs heavy (tier 4) need 14 + 4 - 0 (wis 10); legs complete: no search (R-ESC-11)
    p, st = setup(character("A", restraints={"legs": "heavy"}), search={}, goal={"slots": ["arms"]})
    src = Script(searches=[False])
    play_round(p, st, fixed([Action("search")]), src)
    assert src.of("search")[0][2] == 18
    st.chars[0].tiers[LEGS] = COMPLETE
    assert not is_legal(p, st, 0, Action("search"))


def test_R_ESC_10c_an_item_needing_free_legs_is_never_found_with_bound_legs():
    # items: rope (needs_free_legs, weight 3) and pin (weight 1). Legs light: the draw is among the pin only
    # (weights 0, 1); free legs: both (3, 1); legs_hinder = false: both whatever the legs.
    items = [{"name": "rope", "weight": 3, "needs_free_legs": True, "count": 1}, {"name": "pin", "count": 1}]
    for legs, hinder, want in (("light", True, (0.0, 1.0)), (None, True, (3.0, 1.0)), ("light", False, (3.0, 1.0))):
        p, st = setup(character("A", restraints={"legs": legs} if legs else {}), search={"items": items},
                      goal={"slots": ["arms"]}, rules=_rules(hinder))
        src = Script(searches=[True], items=[1])
        play_round(p, st, fixed([Action("search")]), src)
        assert src.of("item")[0][2] == want
    # only the rope left and legs bound: a successful search finds nothing and the rope stays in the pool
    p, st = setup(character("A", restraints={"legs": "light"}), search={"items": items}, goal={"slots": ["arms"]})
    st.item_left = [1, 0]
    src = Script(searches=[True])
    play_round(p, st, fixed([Action("search")]), src)
    assert src.of("item") == [] and st.item_left == [1, 0] and st.chars[0].items_found == 0


def _attention_of(actions, party, hinder=True, **sections):
    p, st = setup(*party, attention={"assist": 2, "guide": 1, "search": 0, "legs": 4},
                  goal={"slots": ["arms"]}, rules=_rules(hinder), **sections)
    play_round(p, st, fixed(actions), Script(checks=[False] * 3, searches=[False] * 3, rolls={"rest": [0] * 3}),
               validate=True)
    return st.attention


def test_R_ESC_10c_moving_actions_with_bound_legs_draw_attention_legs():
    # attention.assist 2, guide 1, search 0, legs 4; A's legs light. B struggles its heavy arms (no attention).
    a_legs = character("A", restraints={"legs": "light"})
    b = character("B", restraints={"arms": "heavy"})
    struggle_b = STRUGGLE_ARMS_STR
    # a search: 0 + 4 (even with attention.search 0)
    assert _attention_of([Action("search"), struggle_b], [a_legs, b], search={}) == 4
    # an assist under R-ESC-7: 2 + 4; an untie of another: 2 + 4
    assert _attention_of([Action("assist", target=1), struggle_b], [a_legs, b]) == 6
    assert _attention_of([Action("untie", target=1, slot=ARMS), Action("rest")], [a_legs, b]) == 6
    # guiding needs no movement: 1
    assert _attention_of([Action("guide", target=1), struggle_b], [a_legs, b]) == 1
    # free legs: the R-ESC-9a amounts alone (2); legs_hinder = false: 2 with bound legs too
    assert _attention_of([Action("assist", target=1), struggle_b], [character("A"), b]) == 2
    assert _attention_of([Action("assist", target=1), struggle_b], [a_legs, b], hinder=False) == 2


def test_R_ESC_10c_a_mage_hand_assist_and_an_item_handed_over_need_no_movement():
    # a wizard with arms and fingers 0 assists by mage hand whenever it may, even where R-ESC-7 would allow the
    # physical assist too: 2, not 2 + 4. With arms light it has no mage hand: a physical assist, 2 + 4.
    b = character("B", restraints={"arms": "heavy"})
    wizard = character("W", "wizard", 5, {"legs": "light"}, int=16)
    assert _attention_of([Action("assist", target=1), STRUGGLE_ARMS_STR], [wizard, b]) == 2
    wizard_arms = character("W", "wizard", 5, {"legs": "light", "arms": "light"}, int=16)
    assert _attention_of([Action("assist", target=1), STRUGGLE_ARMS_STR], [wizard_arms, b]) == 6
    # a release item used on a teammate is not one of the three moving actions: attention.assist only (2)
    p, st = setup(character("A", restraints={"legs": "light"}), b, attention={"legs": 4}, goal={"slots": ["arms"]},
                  search={"items": [{"name": "key", "kind": "release", "max_tier": "heavy"}]})
    st.chars[0].held = [0]
    play_round(p, st, fixed([Action("use_item", item=0, target=1, slot=ARMS), Action("rest")]),
               Script(rolls={"rest": [0]}))
    assert st.attention == 2 and st.chars[1].tiers[ARMS] == 0


def test_R_ESC_10c_legs_are_read_when_the_action_resolves():
    # C (first in party order) unties A's light legs in step 3, before A's own action resolves:
    # A's untie of B (step 3, after C's) then draws 2, not 2 + 4: attention 2 (C's untie) + 2 = 4.
    c = character("C")
    a_legs = character("A", restraints={"legs": "light"})
    b = character("B", restraints={"arms": "heavy"})
    assert _attention_of([Action("untie", target=1, slot=LEGS), Action("untie", target=2, slot=ARMS), Action("rest")],
                         [c, a_legs, b]) == 4
    # A's search (step 4) after C freed its legs: DC 14 - wis 0, no legs attention; attention 2 (C's untie)
    p, st = setup(c, a_legs, search={}, attention={"legs": 4}, goal={"slots": ["arms"]})
    src = Script(searches=[False])
    play_round(p, st, fixed([Action("untie", target=1, slot=LEGS), Action("search")]), src)
    assert src.of("search")[0][2] == 14 and st.attention == 2


def _team_pair(hinder: bool):
    # The goal is the legs; both have light arms (no untying, R-ESC-10b). I: legs severe (DC 21, str 10:
    # p_i = 0); J: legs heavy, str 10. An assist from I (R-ESC-7: fingers 0, arms and legs below complete)
    # raises J's chance (a bonus die): gain > 0 = p_i, so team switches I to assist J if the attention guard
    # allows: 0 so far + 0 planned + 0 per round + cost < limit 3. The cost of I's assist is attention.assist 2,
    # + attention.legs 1 with its legs bound: 3 < 3 fails, so I keeps its struggle; with legs_hinder = false
    # 2 < 3 and I assists.
    return compile_params(scenario(character("I", restraints={"legs": "severe", "arms": "light"}),
                                   character("J", restraints={"legs": "heavy", "arms": "light"}),
                                   attention={"limit": 3}, goal={"slots": ["legs"]}, rules=_rules(hinder)))


@pytest.mark.parametrize("hinder", [True, False])
def test_R_ESC_10c_team_attention_guard_counts_the_legs(hinder):
    p = _team_pair(hinder)
    st = initial_state(p)
    plan = load_policy("team")(PolicyView(p, st, 1, (False, False)))
    want = Action("struggle", slot=LEGS, ability=0) if hinder else Action("assist", target=1)
    assert plan[0] == want
    batch = K.initial_batch(p, 1)
    kplan = K.plan(p, batch, "team")
    assert int(kplan[0, 0, K.P_KIND]) == (K.STRUGGLE if hinder else K.ASSIST)


@pytest.mark.parametrize("hinder", [True, False])
def test_R_ESC_10c_exact_and_simulated_single_search(hinder):
    # A's arms are utter (no struggle, no untie); legs light (tier 2), not a goal. Greedy searches in round 1
    # (step 5); a success draws the key (release up to utter), used in round 2: escaped. max_rounds 2, so
    # P(escape) = P(d20 >= 14 + 2 x legs_dc) = P(d20 >= 16) = 5/20 with the legs hindering, P(d20 >= 14) = 7/20
    # without.
    s = scenario(character("A", restraints={"arms": "utter", "legs": "light"}),
                 search={"items": [{"name": "key", "kind": "release", "max_tier": "utter"}]},
                 goal={"slots": ["arms"]}, run={"max_rounds": 2}, rules=_rules(hinder))
    want = 5 / 20 if hinder else 7 / 20
    assert sim.exact(s)["escape_rate"] == pytest.approx(want, abs=1e-12)
    n = 20000
    rate = sim.simulate(s, runs=n, seed=3).summary["escape_rate"]
    assert abs(rate - want) <= 4 * np.sqrt(want * (1 - want) / n)
    # the key marked needs_free_legs: never found with the legs bound (0); found as before without the switch
    s2 = scenario(character("A", restraints={"arms": "utter", "legs": "light"}),
                  search={"items": [{"name": "key", "kind": "release", "max_tier": "utter", "needs_free_legs": True}]},
                  goal={"slots": ["arms"]}, run={"max_rounds": 2}, rules=_rules(hinder))
    assert sim.exact(s2)["escape_rate"] == pytest.approx(0.0 if hinder else 7 / 20, abs=1e-12)


@pytest.mark.parametrize("mouth", ["mask", "gag"])
def test_R_ESC_14_mage_hand_bonus_needs_gag_and_mask_free(mouth):
    # a level-5 wizard, int 16 (+3, prof 3), arms and fingers 0: its assist adds 6 with the mouth free; with a
    # simple mask (or gag) on it still assists by mage hand (a bonus die) but adds nothing: need 18, not 12.
    b = character("B", restraints={"arms": "heavy"})
    for restraints, need in (({}, 18 - 6), ({mouth: "simple"}, 18)):
        p, st = setup(character("W", "wizard", 5, restraints, int=16), b, goal={"slots": ["arms"]})
        src = Script(checks=[False])
        play_round(p, st, fixed([Action("assist", target=1), STRUGGLE_ARMS_STR]), src, validate=True)
        assert src.of("check")[0][2:4] == (1, need)
