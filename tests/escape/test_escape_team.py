"""Decision tests of the `team` policy (R-ESC-21, R-ESC-37) on hand-built states, and the action
counts of the scalar reference.

Probabilities are written as plain d20 fractions (need k on a d20: (21 - k) / 20; a bonus die:
1 - (1 - p)^2) and compared with the exact numerators over CHECK_DENOMINATOR.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from escape_helpers import Script, character, setup
from examples import ROOT

import sim
from sim.dice import CHECK_DENOMINATOR
from sim.escape.params import ARMS, BODY, LEGS, STR
from sim.escape.policy import PolicyView, greedy, load_policy
from sim.escape.policy_comparison import with_policy
from sim.escape.reference import play_round
from sim.escape.simulate import reference_chunk
from sim.escape.state import ACTION_KINDS, Action
from sim.escape.team import Help, best_help, helped_numerator, team

TEAMWORK = ROOT / "scenarios" / "escape" / "teamwork.toml"
STRUGGLE_ARMS = Action("struggle", slot=ARMS, ability=STR)
STRUGGLE_LEGS = Action("struggle", slot=LEGS, ability=STR)


def d20(need: int) -> Fraction:
    return Fraction(min(20, max(0, 21 - need)), 20)


def adv(need: int) -> Fraction:
    return 1 - (1 - d20(need)) ** 2


def frac(numerator: int) -> Fraction:
    return Fraction(numerator, CHECK_DENOMINATOR)


def view(p, st, rnd=1, dazed=None):
    return PolicyView(p, st, rnd, tuple(dazed) if dazed else tuple(c.dazed_left > 0 for c in st.chars))


def plans(p, st, rnd=1, dazed=None):
    v = view(p, st, rnd, dazed)
    return greedy(v), team(v)


HOPELESS = {"tiers": {"severe": {"dc": 30}}}  # a severe restraint nobody with mods <= +5 can struggle off


# --- R-ESC-21 who helps whom ----------------------------------------------------------------------


def test_R_ESC_21_load_policy_team_is_the_team_function():
    assert load_policy("team") is team


def test_R_ESC_21_hopeless_struggler_assists_the_teammate_with_the_largest_gain():
    """A (p_i = 0 on a tuned severe) can assist; B (need 15) gains more from a bonus die than C
    (need 18), so A assists B and stops struggling; B and C keep their struggles."""
    p, st = setup(character("A", restraints={"arms": "severe"}),
                  character("B", restraints={"arms": "moderate"}),
                  character("C", restraints={"arms": "heavy"}), rules=HOPELESS)
    g, t = plans(p, st)
    assert g == [STRUGGLE_ARMS] * 3  # greedy: everyone struggles its own arms
    assert t == [Action("assist", target=1), STRUGGLE_ARMS, STRUGGLE_ARMS]
    gain, act = best_help(p, st, g, 0)
    assert frac(gain) == adv(15) - d20(15) and act == Action("assist", target=1)


def test_R_ESC_21_equal_gains_go_to_the_earlier_teammate():
    p, st = setup(character("A", restraints={"arms": "severe"}),
                  character("B", restraints={"arms": "heavy"}),
                  character("C", restraints={"arms": "heavy"}), rules=HOPELESS)
    assert plans(p, st)[1][0] == Action("assist", target=1)


def test_R_ESC_21_guide_chosen_when_its_gain_is_larger():
    """A (int 18: guide +4) on B (need 18): assist gains 1-.85^2-.15 = .1275, guide gains
    P(need 14) - P(need 18) = .20, so A guides."""
    p, st = setup(character("A", restraints={"arms": "severe"}, int=18),
                  character("B", restraints={"arms": "heavy"}), rules=HOPELESS)
    t = plans(p, st)[1]
    assert t[0] == Action("guide", target=1)
    assert frac(best_help(p, st, greedy(view(p, st)), 0)[0]) == d20(14) - d20(18)


def test_R_ESC_21_assist_before_guide_on_equal_gain():
    """B needs 11 (p = 1/2): a bonus die gains 1/4, a guide of +5 gains P(need 6) - 1/2 = 1/4: a tie,
    which goes to assist."""
    p, st = setup(character("A", restraints={"arms": "severe"}, int=20),
                  character("B", restraints={"arms": "moderate"}, str=18), rules=HOPELESS)
    g = greedy(view(p, st))
    c_b = st.chars[1]
    before = helped_numerator(p, st, 1, g[1], Help())
    assert frac(helped_numerator(p, st, 1, g[1], Help(assisted=True)) - before) == Fraction(1, 4)
    assert frac(helped_numerator(p, st, 1, g[1], Help(guide=5)) - before) == Fraction(1, 4)
    assert c_b.tiers[ARMS] > 0
    assert plans(p, st)[1][0] == Action("assist", target=1)


def test_R_ESC_37_gain_must_strictly_exceed_p_i():
    """A needs 16 (p_i = 1/4); B needs 11 (assist gain exactly 1/4): A keeps its struggle. With every
    escape ability at 8 A needs 17 (p_i = 1/5 < 1/4) and switches."""
    tiers = {"tiers": {"moderate": {"dc": 16}}}
    p, st = setup(character("A", restraints={"arms": "moderate"}),
                  character("B", restraints={"arms": "moderate"}, str=20), rules=tiers)
    assert plans(p, st)[1] == [STRUGGLE_ARMS, STRUGGLE_ARMS]
    p, st = setup(character("A", restraints={"arms": "moderate"}, str=8, dex=8, int=8),
                  character("B", restraints={"arms": "moderate"}, str=20), rules=tiers)
    assert plans(p, st)[1] == [Action("assist", target=1), STRUGGLE_ARMS]


def test_R_ESC_37_zero_gain_never_switches_even_from_p_zero():
    """Only candidates the helper cannot improve (B already certain, need <= 1): gain 0 is not > 0."""
    p, st = setup(character("A", restraints={"arms": "severe"}),
                  character("B", restraints={"arms": "simple"}, str=30), rules=HOPELESS)
    assert plans(p, st)[1][0] == STRUGGLE_ARMS


def test_R_ESC_37_star_auto_release_round_has_gain_zero():
    """B's light arms are in their second consecutive round of struggle (auto-release): no gain."""
    p, st = setup(character("A", restraints={"arms": "severe"}),
                  character("B", restraints={"arms": "light"}), rules=HOPELESS)
    assert plans(p, st)[1][0] == Action("assist", target=1)  # first round: a real gain
    b = st.chars[1]
    b.streak[ARMS], b.last_slot = 1, ARMS
    g, t = plans(p, st)
    assert g[1].slot == ARMS and best_help(p, st, g, 0)[0] == 0
    assert t[0] == STRUGGLE_ARMS


def test_R_ESC_37_a_struggler_with_help_planned_keeps_its_struggle():
    """Goal: legs; bound arms (not a goal slot) keep everyone from untying. D has no goal restraint,
    so greedy has it assist the weakest struggler, B (p 0). B would otherwise switch to assist C;
    with D's help planned it keeps its struggle. D keeps its greedy target."""
    goal = {"slots": ["legs"]}
    party = (character("B", restraints={"legs": "severe", "arms": "simple"}),
             character("C", restraints={"legs": "moderate", "arms": "simple"}),
             character("D", restraints={"arms": "simple"}))
    p, st = setup(*party, goal=goal, rules=HOPELESS)
    g, t = plans(p, st)
    assert g == [STRUGGLE_LEGS, STRUGGLE_LEGS, Action("assist", target=0)]
    assert t == g
    # D dazed: no help for B, which now switches to assist C
    g, t = plans(p, st, dazed=(False, False, True))
    assert t == [Action("assist", target=1), STRUGGLE_LEGS, None]


def test_R_ESC_37_greedy_helper_keeps_its_target_and_candidates_follow_the_pass():
    """D (greedy helper) assists the weakest struggler A. A has help, keeps its struggle. B
    (hopeless) assists C. C now has help and keeps its struggle. D's target is unchanged."""
    goal = {"slots": ["legs"]}
    p, st = setup(character("A", restraints={"legs": "severe", "arms": "simple"}),
                  character("B", restraints={"legs": "severe", "arms": "simple"}),
                  character("C", restraints={"legs": "moderate", "arms": "simple"}),
                  character("D", restraints={"arms": "simple"}), goal=goal, rules=HOPELESS)
    g, t = plans(p, st)
    assert g[3] == Action("assist", target=0) and t[3] == g[3]
    assert t[:3] == [STRUGGLE_LEGS, Action("assist", target=2), STRUGGLE_LEGS]


def test_R_ESC_37_gain_counts_help_already_planned_for_the_target():
    """A assists C first; for B a second assist on C gains nothing (assistants count once), but a
    guide of +3 on top of A's assist still gains, and B's own p is 0: B guides C."""
    p, st = setup(character("A", restraints={"arms": "severe"}),
                  character("B", restraints={"arms": "severe"}, int=16),
                  character("C", restraints={"arms": "heavy"}), rules=HOPELESS)
    g, t = plans(p, st)
    assert t == [Action("assist", target=2), Action("guide", target=2), STRUGGLE_ARMS]
    plan_after_a = [Action("assist", target=2), g[1], g[2]]
    gain, act = best_help(p, st, plan_after_a, 1)
    assert act == Action("guide", target=2) and frac(gain) == adv(15) - adv(18)


def test_R_ESC_21_earplugs_and_gag_limit_the_options():
    """R-ESC-9 / R-ESC-11: a gagged helper cannot guide; a target with earplugs cannot be guided."""
    p, st = setup(character("A", restraints={"arms": "severe", "fingers": "simple", "gag": "simple"}, int=18),
                  character("B", restraints={"arms": "heavy"}), rules=HOPELESS, goal={"slots": ["arms"]})
    assert plans(p, st)[1][0] == STRUGGLE_ARMS  # fingers bound: no assist; gag: no guide
    p, st = setup(character("A", restraints={"arms": "severe", "fingers": "simple"}, int=18),
                  character("B", restraints={"arms": "heavy", "earplugs": "simple"}), rules=HOPELESS,
                  goal={"slots": ["arms"]})
    assert plans(p, st)[1][0] == STRUGGLE_ARMS
    p, st = setup(character("A", restraints={"arms": "severe", "fingers": "simple"}, int=18),
                  character("B", restraints={"arms": "heavy"}), rules=HOPELESS, goal={"slots": ["arms"]})
    assert plans(p, st)[1][0] == Action("guide", target=1)


def test_R_ESC_37_mage_hand_bonus_counts_in_the_gain():
    """A wizard in a body wrap (arms, fingers 0) struggles its body (need 15, p .3). Its mage-hand
    assist adds int + prof = 5 and a bonus die to B (need 18): gain P2(13) - P(18) = .64 - .15 > .3,
    so it assists. Gagged, the mage hand adds no bonus: gain .1275 < .3, it keeps struggling."""
    goal = {"slots": ["body", "legs"]}
    p, st = setup(character("A", cls="wizard", restraints={"body": "moderate"}, int=16),
                  character("B", restraints={"legs": "heavy", "arms": "simple"}), goal=goal)
    g, t = plans(p, st)
    assert g[0] == Action("struggle", slot=BODY, ability=STR)
    assert t[0] == Action("assist", target=1)
    assert frac(best_help(p, st, g, 0)[0]) == adv(13) - d20(18)
    p, st = setup(character("A", cls="wizard", restraints={"body": "moderate", "gag": "light"}, int=16),
                  character("B", restraints={"legs": "heavy", "arms": "simple"}), goal=goal)
    g, t = plans(p, st)
    assert frac(best_help(p, st, g, 0)[0]) == adv(18) - d20(18)
    assert t[0] == g[0]


def test_R_ESC_37_monk_switcher_spends_no_breath_and_p_i_includes_its_breath():
    """A monk whose pair has probability 0 without breath: greedy spends a point. Its p_i is the
    declared check (with the wis d20), here large, so it keeps struggling; with wis 1 (mod -5) the
    breath check barely helps, it switches to assist, and the point is not spent."""
    rules = HOPELESS
    p, st = setup(character("A", cls="monk", level=2, restraints={"arms": "severe"}, wis=20),
                  character("B", restraints={"arms": "moderate"}), rules=rules)
    g, t = plans(p, st)
    assert g[0].breath and t[0] == g[0]
    p, st = setup(character("A", cls="monk", level=2, restraints={"arms": "severe"}, wis=1),
                  character("B", restraints={"arms": "moderate"}), rules=rules)
    g, t = plans(p, st)
    assert g[0].breath and t[0] == Action("assist", target=1) and not t[0].breath
    play_round(p, st, team, Script(checks=[False]))
    assert st.chars[0].breath == 1  # level 2: one point, unspent
    assert st.chars[0].streak[ARMS] == 0 and st.chars[1].acc[ARMS] == 4  # assisted `+` failure: 2 + 2


def test_R_ESC_37_non_strugglers_keep_their_greedy_plan():
    """An untier and a rester are not reconsidered (greedy steps 3-6)."""
    goal = {"slots": ["arms"]}
    p, st = setup(character("A", restraints={"arms": "severe"}), character("U"),
                  character("R", restraints={"fingers": "simple", "blindfold": "simple"}), goal=goal, rules=HOPELESS)
    g, t = plans(p, st)
    assert g[1] == Action("untie", slot=ARMS, target=0) and g[2] == Action("rest")
    assert t == g


# --- R-ESC-37 attention guard ---------------------------------------------------------------------


@pytest.mark.parametrize(("limit", "rnd", "switches"), [
    # projection: attention 3 + plan 0 + per_round 1 + assist 2 + 1 x (12 - rnd)
    (14, 5, True),  # 3 + 1 + 2 + 7 = 13 < 14
    (13, 5, False),  # 13 is not below 13
    (8, 11, True),  # 3 + 1 + 2 + 1 = 7 < 8
    (7, 12, True),  # 3 + 1 + 2 + 0 = 6 < 7
    (6, 12, False),
])
def test_R_ESC_37_attention_guard_projects_per_round_over_the_rounds_left(limit, rnd, switches):
    p, st = setup(character("A", restraints={"arms": "severe"}), character("B", restraints={"arms": "moderate"}),
                  rules=HOPELESS, attention={"limit": limit, "per_round": 1, "assist": 2},
                  run={"max_rounds": 12})
    st.attention = 3
    t = team(view(p, st, rnd))
    assert t[0] == (Action("assist", target=1) if switches else STRUGGLE_ARMS)


def test_R_ESC_37_attention_guard_counts_the_plan_as_it_stands_and_has_no_cheaper_fallback():
    """Goal: legs. U unties C's utter legs (a teammate: draws attention.assist, 3 here). A's best help
    is an assist on B (cost 3); a guide (cost 1) would fit under the limit but is not tried."""
    goal = {"slots": ["legs"]}
    party = (character("A", restraints={"legs": "severe", "arms": "simple"}, int=12),
             character("B", restraints={"legs": "moderate", "arms": "simple"}),
             character("U"), character("C", restraints={"arms": "simple", "legs": "utter", "blindfold": "simple"}))
    p, st = setup(*party, goal=goal, rules=HOPELESS, attention={"limit": 6, "assist": 3, "guide": 1})
    g, t = plans(p, st)
    assert g[2] == Action("untie", slot=LEGS, target=3) and g[3] == Action("rest")
    # projection of A's assist: 0 + 3 (U's untie) + 0 + 3 + 1 (attention.legs: A's legs are bound, R-ESC-10c)
    # = 7, not below 6 or 7: A keeps struggling; below 8 it assists
    assert t[0] == STRUGGLE_LEGS
    p, st = setup(*party, goal=goal, rules=HOPELESS, attention={"limit": 7, "assist": 3, "guide": 1})
    assert team(view(p, st))[0] == STRUGGLE_LEGS
    p, st = setup(*party, goal=goal, rules=HOPELESS, attention={"limit": 8, "assist": 3, "guide": 1})
    assert team(view(p, st))[0] == Action("assist", target=1)
    # legs_hinder = false (the reading before): 0 + 3 + 0 + 3 = 6, below 7: A assists
    p, st = setup(*party, goal=goal, rules={**HOPELESS, "legs_hinder": False},
                  attention={"limit": 7, "assist": 3, "guide": 1})
    assert team(view(p, st))[0] == Action("assist", target=1)


# --- action counts (issue 8) ----------------------------------------------------------------------


def test_action_counts_per_declared_action_of_non_dazed_characters():
    p, st = setup(character("A", restraints={"arms": "moderate"}), character("B"), character("C"),
                  goal={"slots": ["arms"]})
    st.chars[2].dazed_left = 1
    actions = [STRUGGLE_ARMS, Action("assist", target=0), Action("rest")]
    play_round(p, st, lambda v: list(actions), Script(checks=[False], rolls={"rest": []}))
    counts = [c.actions_taken for c in st.chars]
    assert counts[0][ACTION_KINDS.index("struggle")] == 1 and sum(counts[0]) == 1
    assert counts[1][ACTION_KINDS.index("assist")] == 1 and sum(counts[1]) == 1
    assert sum(counts[2]) == 0  # dazed: no action
    assert st.chars[0].copy().actions_taken == counts[0]
    assert st.chars[0].key() == st.chars[0].copy().key()


def test_action_counts_in_the_reference_chunk_sum_to_the_character_rounds():
    s = with_policy(sim.load_scenario(TEAMWORK), "team")
    from sim.escape.params import compile_params

    p = compile_params(s)
    cols = reference_chunk(p, 200, np.random.default_rng(3), "team")
    counts = cols["action_counts"]
    assert counts.shape == (200, p.n_chars, len(ACTION_KINDS)) and counts.dtype == np.int32
    # no stimulus or harness in this scenario: nobody is ever dazed
    np.testing.assert_array_equal(counts.sum(axis=(1, 2)), cols["rounds"] * p.n_chars)


def test_R_ESC_21_team_assists_and_guides_on_the_teamwork_scenario():
    s = sim.load_scenario(TEAMWORK)
    team_runs = sim.simulate(s, runs=400, seed=2).runs
    greedy_runs = sim.simulate(with_policy(s, "greedy"), runs=400, seed=2, engine="reference").runs
    assert team_runs["actions_assist"].mean() > 1 and team_runs["actions_guide"].mean() > 2
    assert team_runs["actions_assist"].mean() + team_runs["actions_guide"].mean() > 5 * (
        greedy_runs["actions_assist"].mean() + greedy_runs["actions_guide"].mean() + 0.1)
