"""The `team` escape policy (R-ESC-21, R-ESC-37): greedy, except that helping is weighed against
struggling.

First the whole greedy plan (R-ESC-20 steps 1-6, every character). Then one pass in party order:
each character whose plan is a struggle, and for whom no help is planned yet, compares its own
success probability ``p_i`` with the largest exact gain it could give a struggling teammate by
assisting or guiding it, and switches to that help when the gain is strictly larger and the
attention guard allows it. Probabilities are integer numerators over
:data:`sim.dice.CHECK_DENOMINATOR`, so every comparison is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.escape.actions import is_legal
from sim.escape.greedy import PolicyView, declared_numerator, greedy
from sim.escape.params import EscapeParams
from sim.escape.state import (
    Action,
    PartyState,
    attention_drawn,
    check_spec,
    mage_hand_bonus,
    spec_numerator,
)


@dataclass(frozen=True)
class Help:
    """The help attached to one character's check this round, combined as the round does (R-ESC-8,
    R-ESC-9, R-ESC-33): any assist gives the bonus die once; the largest guide and the largest
    mage-hand bonus count."""

    assisted: bool = False
    guide: int = 0
    mage: int = 0


def is_struggle(a: Action | None) -> bool:
    return a is not None and a.kind == "struggle"


def planned_help(p: EscapeParams, st: PartyState, plan: list[Action | None], j: int) -> Help:
    """Every assist and guide planned for ``j`` so far, combined."""
    h = Help()
    for k, a in enumerate(plan):
        if a is None or a.target != j or k == j:
            continue
        if a.kind == "assist":
            h = Help(True, h.guide, max(h.mage, mage_hand_bonus(p, k, st.chars[k])))
        elif a.kind == "guide":
            h = Help(h.assisted, max(h.guide, int(p.guide_bonus[k])), h.mage)
    return h


def has_help(plan: list[Action | None], j: int) -> bool:
    return any(a is not None and a.kind in ("assist", "guide") and a.target == j for a in plan)


def helped_numerator(p: EscapeParams, st: PartyState, j: int, a: Action, h: Help) -> int:
    """P(j's declared check meets its DC with help ``h``), over CHECK_DENOMINATOR; j keeps its
    slot, ability and breath, rage and terrain spends. A `*` auto-release counts as 1, so its gain is 0 (R-ESC-37)."""
    spec = check_spec(p, j, st.chars[j], a.slot, a.ability, assisted=h.assisted, guide=h.guide, mage=h.mage,
                      breath=a.breath, rage=a.rage, terrain=a.terrain)
    return spec_numerator(spec)


def plan_attention(p: EscapeParams, st: PartyState, plan: list[Action | None]) -> int:
    """The attention the plan as it stands draws this round, `per_round` excluded (R-ESC-9a, R-ESC-10b; R-ESC-10c
    with the legs as they stand at the start of the round)."""
    return sum(attention_drawn(p, i, st.chars[i], a) for i, a in enumerate(plan))


def attention_allows(p: EscapeParams, st: PartyState, plan: list[Action | None], rnd: int, cost: int) -> bool:
    """R-ESC-37 attention guard: attention so far + every draw of the plan as it stands +
    `per_round` + this help's cost + `per_round` x the rounds still to come after this one must
    stay below the limit. No limit: always allowed."""
    if not p.attention_limit:
        return True
    projected = (st.attention + plan_attention(p, st, plan) + p.att_per_round + cost
                 + p.att_per_round * max(0, p.max_rounds - rnd))
    return projected < p.attention_limit


def best_help(p: EscapeParams, st: PartyState, plan: list[Action | None], i: int) -> tuple[int, Action | None]:
    """(gain numerator, help action) of the best help ``i`` could give, or (-1, None) if it can help
    no one. Candidates: teammates planned to struggle; assist (R-ESC-7 or mage hand) and guide
    (R-ESC-9). Ties: party order of the target, then assist before guide (R-ESC-21)."""
    c = st.chars[i]
    best_gain, best = -1, None
    for j, a in enumerate(plan):
        if j == i or not is_struggle(a):
            continue
        h = planned_help(p, st, plan, j)
        before = helped_numerator(p, st, j, a, h)
        options = []
        if is_legal(p, st, i, Action("assist", target=j)):  # R-ESC-7 or mage hand (R-ESC-6)
            options.append(("assist", Help(True, h.guide, max(h.mage, mage_hand_bonus(p, i, c)))))
        if is_legal(p, st, i, Action("guide", target=j)):  # R-ESC-9
            options.append(("guide", Help(h.assisted, max(h.guide, int(p.guide_bonus[i])), h.mage)))
        for kind, with_i in options:
            gain = helped_numerator(p, st, j, a, with_i) - before
            if gain > best_gain:  # strict: earlier target, then assist, wins ties
                best_gain, best = gain, Action(kind, target=j)
    return best_gain, best


def team(view: PolicyView) -> list[Action | None]:
    """R-ESC-21 / R-ESC-37: the `team` policy."""
    p, st = view.params, view.state
    plan = greedy(view)  # steps 1-6 for every character; dazed characters have None
    for i in range(p.n_chars):
        a = plan[i]
        if not is_struggle(a):
            continue  # a non-struggler keeps its greedy plan (a helper keeps its target)
        if has_help(plan, i):
            continue  # a struggler that already has help planned for it keeps its struggle
        p_i = declared_numerator(p, i, st.chars[i], a)  # as greedy planned it: breath and blessing, no help
        gain, help_action = best_help(p, st, plan, i)
        if help_action is None or gain <= p_i:
            continue  # the gain must strictly exceed p_i
        cost = attention_drawn(p, i, st.chars[i], help_action)  # R-ESC-10c: an assist with bound legs draws more
        if not attention_allows(p, st, plan, view.round, cost):
            continue  # no cheaper fallback
        plan[i] = help_action  # the switcher's streak breaks; a monk spends no breath, nor a ranger or barbarian a use
    return plan
