"""Reference = engine from random mid-challenge states: the plan, and one round with the random numbers
of the same chunk key.

Random states reach corners the example scenarios rarely visit (held release items, blessings,
dazed characters, high accumulation, monks out of breath), so the plan and the round resolution of
both implementations are compared rule for rule (STYLE.md practice 6)."""

from __future__ import annotations

import numpy as np
import pytest
from escape_helpers import character, scenario

from sim.escape import kernel as K
from sim.escape.params import N_SLOTS, compile_params
from sim.escape.policy import PolicyView, load_policy
from sim.escape.reference import DrawSource, play_round
from sim.escape.state import Action, CharState, PartyState

KIND_NAMES = {K.STRUGGLE: "struggle", K.ASSIST: "assist", K.GUIDE: "guide", K.SEARCH: "search", K.REST: "rest",
              K.UNTIE: "untie", K.USE_ITEM: "use_item", K.BLESS: "bless", K.CHANNEL: "channel",
              K.INSPIRE: "inspire", K.MEDITATE: "meditate"}


def random_batch(p, n, rng) -> K.Batch:
    st = K.initial_batch(p, n)
    f = st.field
    C, I = p.n_chars, p.n_items
    init = p.init_tiers.astype(np.int64)
    # tiers only fall: draw each between 0 and its starting tier
    st.tiers[:] = np.floor(rng.random((n, C, N_SLOTS)) * (init[None] + 1)).astype(np.int64)
    u = rng.random((n, C, N_SLOTS))
    st.tiers[:] = np.where(u < 0.35, 0, np.where(u < 0.6, init[None], st.tiers))
    st.acc[:] = rng.integers(0, 7, (n, C, N_SLOTS)) * (st.tiers > 0)
    st.streak[:] = rng.integers(0, 3, (n, C, N_SLOTS)) * (st.tiers > 0)
    f("last_slot")[:] = rng.integers(-1, N_SLOTS, (n, C))
    f("composure")[:] = rng.integers(0, 12, (n, C))
    f("craving")[:] = rng.integers(0, 3, (n, C))
    f("dazed_left")[:] = (rng.random((n, C)) < 0.15) * rng.integers(1, 3, (n, C))
    f("breath")[:] = rng.integers(0, 3, (n, C)) * p.is_monk[None, :]
    f("save_bonus")[:] = rng.integers(0, 3, (n, C)) * 2
    f("immune_until")[:] = rng.integers(0, 3, (n, C))
    f("item_bonus")[:] = rng.integers(0, 3, (n, C))
    if I:
        st.held[:] = (rng.random((n, C, I)) < 0.3) * (p.item_kind[None, None, :] == 1)
        st.item_left[:] = np.where(p.item_count[None, :] < 0, -1, rng.integers(0, 2, (n, I)))
    f("blessed")[:] = rng.random((n, C)) < 0.3
    f("attention")[:] = rng.integers(0, 5, n)
    f("rounds")[:] = 1
    # R-ESC-14a / R-ESC-14b resources: anywhere from none to the starting uses; an inspiration die held
    for name, start in (("rage", p.rage_uses), ("terrain", p.terrain_uses), ("channel", p.channel_uses),
                        ("ki", p.ki), ("inspire", p.inspire_uses)):
        start = np.asarray(start)
        f(name)[:] = np.where(start[None, :] < 0, -1, np.floor(rng.random((n, C)) * (np.abs(start)[None] + 1)))
    f("insp_die")[:] = (rng.random((n, C)) < 0.25) * rng.choice([6, 8, 10, 12], (n, C))
    return st


def to_party(p, st: K.Batch, j: int) -> PartyState:
    def g(name, i):
        return int(st.field(name)[j, i])

    chars = []
    for i in range(p.n_chars):
        held = [k for k in range(p.n_items) for _ in range(int(st.held[j, i, k]))]
        chars.append(CharState(
            tiers=st.tiers[j, i].tolist(), acc=st.acc[j, i].tolist(), streak=st.streak[j, i].tolist(),
            last_slot=g("last_slot", i), composure=g("composure", i), craving=g("craving", i),
            dazed_left=g("dazed_left", i), breath=g("breath", i), save_bonus=g("save_bonus", i),
            immune_until=g("immune_until", i), item_bonus=g("item_bonus", i), held=held,
            blessed=bool(g("blessed", i)), rage=g("rage", i), terrain=g("terrain", i), channel=g("channel", i),
            ki=g("ki", i), inspire=g("inspire", i), insp_die=g("insp_die", i),
        ))
    runs = st.runs[j]
    return PartyState(chars, int(runs[K.ATTENTION]), st.item_left[j].tolist(), round=int(runs[K.ROUNDS]),
                      outcome=K.OUTCOME_NAMES[int(runs[K.OUTCOME])])


def kernel_action(plan, j, i) -> Action | None:
    kind, slot, ability, target, item, breath, rage, terrain = (int(x) for x in plan[j, i])
    if kind == K.NONE:
        return None
    name = KIND_NAMES[kind]
    if name == "struggle":
        return Action("struggle", slot=slot, ability=ability, breath=bool(breath), rage=bool(rage),
                      terrain=bool(terrain))
    if name in ("assist", "guide", "inspire"):
        return Action(name, target=target)
    if name == "untie":
        return Action("untie", slot=slot, target=target)
    if name == "use_item":
        return Action("use_item", slot=slot, target=target, item=item)
    return Action(name)


PARTY = scenario(
    dict(character("M", cls="monk", level=5, wis=15, restraints={"arms": "complete", "fingers": "light",
                                                                   "harness": "moderate", "gag": "utter"}),
         composure=9),
    character("W", cls="wizard", level=5, int=17, restraints={"legs": "heavy", "body": "light", "mask": "simple"}),
    # C's legs: R-ESC-10c (a moving action with bound legs: search DC, items needing free legs, attention.legs)
    character("C", cls="cleric", level=3, restraints={"arms": "light", "gag": "moderate", "earplugs": "light",
                                                       "legs": "light"}),
    character("P", cls="paladin", level=4, cha=16, restraints={"fingers": "moderate", "blindfold": "severe",
                                                                "legs": "despair"}),
    search={"dc": 12, "items": [
        {"name": "key", "kind": "release", "max_tier": "utter", "weight": 1, "count": 1},
        {"name": "shard", "kind": "release", "max_tier": "moderate", "weight": 2},
        {"name": "pin", "kind": "release", "max_tier": "moderate", "weight": 1},
        {"name": "nail", "value": 2, "needs_free_legs": True}]},
    stimulus={"damage": "1d4"}, attention={"limit": 30, "per_round": 1, "legs": 2},
    goal={"slots": ["arms", "legs", "gag", "body", "fingers"]},
)


# R-ESC-14a / R-ESC-14b: every volume-1 feature (rage, favoured terrain, druid, rogue, inspire, channel, meditate)
PARTY_V1 = scenario(
    dict(character("B", cls="barbarian", level=3, str=16, restraints={"arms": "heavy", "fingers": "simple",
                                                                       "mask": "light", "harness": "light"}),
         composure=7),
    character("D", cls="bard", level=5, cha=16, restraints={"arms": "complete", "legs": "heavy",
                                                              "blindfold": "light", "gag": "simple"}),
    dict(character("R", cls="ranger", level=5, dex=14, restraints={"arms": "severe", "earplugs": "light",
                                                                   "body": "simple"}), favoured_terrain=True),
    dict(character("U", cls="druid", level=2, wis=16, restraints={"legs": "complete", "arms": "moderate"}),
         composure=5),
    dict(character("K", cls="monk", level=4, wis=14, restraints={"arms": "complete", "harness": "moderate"}),
         composure=6),
    dict(character("C", cls="cleric", level=2, restraints={"arms": "light", "mask": "simple", "gag": "light"}),
         composure=4),
    stimulus={"damage": "1d3"}, attention={"limit": 30, "per_round": 1},
    goal={"slots": ["arms", "legs", "gag", "body", "fingers"]},
)


def _variant(stacking, goal, party="classic"):
    from sim.scenario import parse_scenario

    data = (PARTY if party == "classic" else PARTY_V1).model_dump(by_alias=True, exclude_none=True)
    # the classic party in the reading before 2026-12 (its coverage as it was); the volume-1 party with the
    # features on and both readings of R-ESC-10b (pool stacking: hands_free)
    classic = party == "classic"
    data["rules"] = {"dice_stacking": stacking, "volume1_features": not classic,
                     "self_untie": "hands_free" if classic or stacking == "pool" else "arms_free"}
    data["goal"] = {"slots": goal}
    return compile_params(parse_scenario(data))


GOALS = [["arms", "legs", "gag", "body", "fingers"], ["legs", "gag"], ["legs"], ["body", "mask"]]


POLICIES = ["greedy", "team", "arms_first"]


@pytest.mark.parametrize("which", ["classic", "volume1"])
@pytest.mark.parametrize("policy", POLICIES)
def test_plan_matches_reference_on_random_states(policy, which):
    """R-ESC-20, R-ESC-21, R-ESC-31, R-ESC-37 and arms_first: the engine's plan equals the scalar one
    (volume1: R-ESC-14a / R-ESC-14b resources, steps 0 and 4, rage and terrain spends)."""
    ref_policy = load_policy(policy)
    kinds = set()
    spends = set()
    for v, (stacking, goal) in enumerate([(s, g) for s in ("cancel", "pool") for g in GOALS]):
        p = _variant(stacking, goal, which)
        rng = np.random.default_rng(11 + v)
        n = 300
        st = random_batch(p, n, rng)
        plan = K.plan(p, st, policy)
        for j in range(n):
            party = to_party(p, st, j)
            ref = ref_policy(PolicyView(p, party, 1, tuple(c.dazed_left > 0 for c in party.chars)))
            for i in range(p.n_chars):
                got = kernel_action(plan, j, i)
                want = ref[i]
                if want is not None and want.kind == "use_item":
                    want = Action("use_item", slot=want.slot, target=want.target, item=party.chars[i].held[want.item])
                assert got == want, (goal, j, i, got, want)
                kinds.add(None if want is None else want.kind)
                if want is not None and want.kind == "struggle":
                    spends.update(k for k in ("rage", "terrain", "breath") if getattr(want, k))
    if which == "volume1":
        assert {"struggle", "channel", "meditate", "untie", None} <= kinds
        if policy != "arms_first":  # there the bard struggles its complete arms instead
            assert "inspire" in kinds
        assert spends == {"rage", "terrain", "breath"}
        return
    assert {"struggle", "assist", "guide", "untie", "rest", None} <= kinds
    if policy != "arms_first":
        assert "search" in kinds


@pytest.mark.parametrize("which", ["classic", "volume1"])
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("variant", range(len(GOALS) * 2))
def test_one_round_matches_reference_on_random_states(variant, policy, which):
    """R-ESC-5: one round from random states, every run drawing the numbers of the same chunk key."""
    p = _variant(("cancel", "pool")[variant % 2], GOALS[variant // 2], which)
    rng = np.random.default_rng(5 + variant)
    n = 300
    st = random_batch(p, n, rng)
    parties = [to_party(p, st, j) for j in range(n)]
    key = K.chunk_key(rng)
    K.step(p, st, key, policy)
    src = DrawSource(p, key)
    ref_policy = load_policy(policy)
    for j in range(n):
        src.at(j, parties[j].round + 1)
        play_round(p, parties[j], ref_policy, src)
        got = to_party(p, st, j)
        got.round = parties[j].round
        assert got.key() == parties[j].key(), j
        assert [c.checks for c in parties[j].chars] == st.field("checks")[j].tolist()
        assert [c.overloads for c in parties[j].chars] == st.field("overloads")[j].tolist()
        assert [c.freed_round for c in parties[j].chars] == st.field("freed_round")[j].tolist()
        assert [c.actions_taken for c in parties[j].chars] == st.action_counts[j].tolist()
        assert parties[j].outcome == K.OUTCOME_NAMES[int(st.runs[j, K.OUTCOME])]
