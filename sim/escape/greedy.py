"""The built-in escape policies `greedy` (R-ESC-20, R-ESC-31) and `arms_first`, and what every policy
sees (:class:`PolicyView`). The `team` policy (:mod:`sim.escape.team`) builds on `greedy`; policies are
looked up by name in :mod:`sim.escape.policy`.

A policy is called once a round with a :class:`PolicyView` and returns one action per character
(``None`` for a dazed character, whose action is ignored)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sim.dice import CHECK_DENOMINATOR
from sim.escape.actions import is_legal, struggle_abilities
from sim.escape.params import ARMS, FINGERS, HARNESS, N_SLOTS, STR, EscapeParams
from sim.escape.state import (
    BLESS,
    CHANNEL,
    MEDITATE,
    REST,
    SEARCH,
    Action,
    CharState,
    PartyState,
    can_untie_self,
    check_spec,
    has_rage,
    spec_numerator,
)


@dataclass(frozen=True)
class PolicyView:
    """What a policy sees: the state at the start of the round (read-only by convention)."""

    params: EscapeParams
    state: PartyState
    round: int
    dazed: tuple[bool, ...]


# ---------------------------------------------------------------------------------------------
# greedy (R-ESC-20, R-ESC-31)


def _highest(cands: list[tuple[int, int]], tiers_of) -> tuple[int, int] | None:
    """The (char, slot) of highest tier; ties by the given order of ``cands``."""
    best = None
    best_tier = 0
    for ci, s in cands:
        t = tiers_of(ci)[s]
        if t > best_tier:
            best, best_tier = (ci, s), t
    return best


def _item_for(p: EscapeParams, c: CharState, tier: int) -> int:
    """Position in ``c.held`` of the release item covering ``tier`` with the smallest max_tier
    (ties: the lowest item index), or -1 (R-ESC-31)."""
    best, best_key = -1, None
    for k, item in enumerate(c.held):
        m = int(p.item_max_tier[item])
        if tier <= m and (best_key is None or (m, item) < best_key):
            best, best_key = k, (m, item)
    return best


def best_struggle(p: EscapeParams, st: PartyState, i: int, slots: Sequence[int]) -> tuple[int, int, int] | None:
    """R-ESC-20 step 2: (numerator, slot, ability) of the best legal (slot, ability) pair among ``slots``
    (R-ESC-6, :func:`sim.escape.actions.is_legal`).

    Ties: the slot struggled last round, then slot order, then str, dex, int (R-ESC-31)."""
    c = st.chars[i]
    best = None
    best_key = None
    for s in slots:
        for a in struggle_abilities(st, i, s):  # the legal (slot, ability) pairs (sim.escape.actions)
            if p.forbidden and not is_legal(p, st, i, Action("struggle", slot=s, ability=a)):
                continue  # restricted play (the balance audit): a forbidden pair is not a choice
            rage = has_rage(c) and a == STR and (not p.forbidden or is_legal(
                p, st, i, Action("struggle", slot=s, ability=a, rage=True)))
            # R-ESC-31: a barbarian with a rage use counts the rage's bonus die on str (R-ESC-14a); the
            # inspiration die held is counted (check_spec); the favoured-terrain bonus is not
            num = spec_numerator(check_spec(p, i, c, s, a, rage=rage))
            key = (num, s == c.last_slot, -s, -a)
            if best_key is None or key > best_key:
                best, best_key = (num, s, a), key
    return best


def _struggle_action(p: EscapeParams, st: PartyState, i: int, num, slot: int, ability: int) -> Action:
    def may(**spend) -> bool:
        return is_legal(p, st, i, Action("struggle", slot=slot, ability=ability, **spend))

    # R-ESC-14 / R-ESC-31: a monk spends a breath point when the probability is below 1/2
    breath = 2 * num < CHECK_DENOMINATOR and may(breath=True)
    # R-ESC-14a / R-ESC-31: a ranger in favoured terrain spends a use likewise (chosen without its bonus);
    # a barbarian spends a rage use on every str check while it has one
    terrain = 2 * num < CHECK_DENOMINATOR and may(terrain=True)
    rage = may(rage=True)
    return Action("struggle", slot=slot, ability=ability, breath=breath, rage=rage, terrain=terrain)


def declared_numerator(p: EscapeParams, i: int, c: CharState, a: Action):
    """The success numerator of a declared struggle without this round's assists and guides
    (blessing, breath, rage, favoured terrain and a held inspiration die included)."""
    return spec_numerator(check_spec(p, i, c, a.slot, a.ability, breath=a.breath, rage=a.rage, terrain=a.terrain))


def danger(p: EscapeParams, c: CharState, i: int) -> int:
    """R-ESC-20 step 0: the largest composure damage ``i`` can take this round (harness and stimulus at their
    maximum rolls; 0 when it takes none)."""
    return (int(p.danger[i, 0]) if c.tiers[HARNESS] >= 1 else 0) + int(p.danger[i, 1])


def plan_recover(p: EscapeParams, st: PartyState, i: int) -> Action | None:
    """R-ESC-20 step 0 (R-ESC-14b): with a channel or meditate use left and composure at most the largest
    damage of this round, recover."""
    c = st.chars[i]
    if c.composure <= danger(p, c, i):
        for recover in (CHANNEL, MEDITATE):
            if is_legal(p, st, i, recover):
                return recover
    return None


def plan_own(p: EscapeParams, st: PartyState, i: int) -> Action | None:
    """Greedy steps 1-3 (with the item steps) for character ``i``; None means 'help or rest'."""
    c = st.chars[i]
    recover = plan_recover(p, st, i)  # step 0
    if recover is not None:
        return recover
    own_goal = [s for s in range(N_SLOTS) if p.goal[s] and c.tiers[s] > 0]
    # step 1: untie its own highest-tier goal restraint
    if own_goal:
        _, s = _highest([(i, s) for s in own_goal], lambda ci: st.chars[ci].tiers)
        if is_legal(p, st, i, Action("untie", slot=s, target=i)):
            return Action("untie", slot=s, target=i)
    # after step 1: a release item on its own highest-tier covered goal restraint
    if c.held:
        covered = [(i, s) for s in own_goal if _item_for(p, c, c.tiers[s]) >= 0]
        pick = _highest(covered, lambda ci: st.chars[ci].tiers)
        if pick is not None:
            use = Action("use_item", slot=pick[1], target=i, item=_item_for(p, c, c.tiers[pick[1]]))
            if is_legal(p, st, i, use):
                return use
    # step 2: struggle the best pair
    best = best_struggle(p, st, i, own_goal)
    if best is not None:
        return _struggle_action(p, st, i, *best)
    # step 3: untie a teammate's highest-tier restraint (any slot)
    mates = [(j, s) for j in range(p.n_chars) if j != i for s in range(N_SLOTS)]
    pick = _highest(mates, lambda ci: st.chars[ci].tiers)
    if pick is not None and is_legal(p, st, i, Action("untie", slot=pick[1], target=pick[0])):
        return Action("untie", slot=pick[1], target=pick[0])
    # after step 3: a release item on the highest-tier teammate restraint one covers
    if c.held:
        covered = [(j, s) for j, s in mates if st.chars[j].tiers[s] > 0 and _item_for(p, c, st.chars[j].tiers[s]) >= 0]
        pick = _highest(covered, lambda ci: st.chars[ci].tiers)
        if pick is not None:
            j, s = pick
            use = Action("use_item", slot=s, target=j, item=_item_for(p, c, st.chars[j].tiers[s]))
            if is_legal(p, st, i, use):
                return use
    return None


def plan_help(p: EscapeParams, st: PartyState, i: int, plan: list[Action | None]) -> Action:
    """Greedy steps 4-6, once every struggle is declared."""
    strugglers = [j for j in range(p.n_chars) if j != i and plan[j] is not None and plan[j].kind == "struggle"]
    nums = {j: declared_numerator(p, j, st.chars[j], plan[j]) for j in strugglers}

    def lowest(kind, cands):  # the legal target of lowest success probability (ties: party order), or None
        cands = [j for j in cands if is_legal(p, st, i, Action(kind, target=j))]
        return Action(kind, target=min(cands, key=lambda j: (nums[j], j))) if cands else None

    # step 4: assist (R-ESC-7 or mage hand); else guide (R-ESC-9); else inspire a struggling teammate
    # holding no die (R-ESC-14b)
    helped = (lowest("assist", strugglers) or lowest("guide", strugglers)
              or lowest("inspire", [j for j in strugglers if st.chars[j].insp_die == 0]))
    if helped is not None:
        return helped
    if is_legal(p, st, i, BLESS):  # else bless, while another member still has a goal slot above 0
        others_bound = any(
            st.chars[j].tiers[s] > 0 for j in range(p.n_chars) if j != i for s in range(N_SLOTS) if p.goal[s]
        )
        if others_bound:
            return BLESS
    if is_legal(p, st, i, SEARCH):  # step 5
        return SEARCH
    return REST  # step 6


def greedy(view: PolicyView) -> list[Action | None]:
    """R-ESC-20: the reference policy."""
    p, st = view.params, view.state
    plan: list[Action | None] = [None if view.dazed[i] else plan_own(p, st, i) for i in range(p.n_chars)]
    out: list[Action | None] = []
    for i in range(p.n_chars):
        if view.dazed[i]:
            out.append(None)
        elif plan[i] is not None:
            out.append(plan[i])
        else:
            out.append(plan_help(p, st, i, plan))
    return out


def arms_first(view: PolicyView) -> list[Action | None]:
    """`arms_first`: free the arms, then the fingers (to get free hands), then untie.

    Each character not dazed: greedy step 0 first (R-ESC-14b recovery); if it can untie itself, as greedy
    step 1; else it struggles its arms while they are bound and it may, then its fingers; otherwise it plays
    greedy."""
    p, st = view.params, view.state
    plan: list[Action | None] = []
    for i in range(p.n_chars):
        c = st.chars[i]
        action = None
        if not view.dazed[i]:
            action = plan_recover(p, st, i)
        if action is None and not view.dazed[i] and not can_untie_self(p, c):
            for slot in (ARMS, FINGERS):
                best = best_struggle(p, st, i, [slot]) if c.tiers[slot] > 0 else None
                if best is not None:
                    action = _struggle_action(p, st, i, *best)
                    break
        if action is None and not view.dazed[i]:
            action = plan_own(p, st, i)
        plan.append(action)
    return [
        None if view.dazed[i] else (plan[i] if plan[i] is not None else plan_help(p, st, i, plan))
        for i in range(p.n_chars)
    ]
