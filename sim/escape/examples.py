"""Example custom escape policies (docs/policies.md): copy one into your own module and edit it.

Load one from a scenario with ``[policy] name = "sim.escape.examples:cautious"`` (and ``--allow-code``),
or on the command line with ``--policy sim.escape.examples:cautious`` or
``python -m sim compare SCENARIO --policies greedy,sim.escape.examples:cautious``.

A policy is called once a round with a :class:`~sim.escape.policy.PolicyView` and returns one
:class:`~sim.escape.state.Action` per character, in party order (``None`` for a dazed character).
Every action it returns is checked (R-ESC-6); an illegal one stops the run with a
:class:`sim.PolicyError` naming the character, the round and the rule.
"""

from __future__ import annotations

from sim.escape.params import N_SLOTS
from sim.escape.policy import PolicyView, greedy
from sim.escape.state import REST, Action, allowed_abilities, attention_drawn, may_struggle


def attention_cost(view: PolicyView, i: int, action: Action | None) -> int:
    """The attention ``action`` of character ``i`` draws (R-ESC-9a, R-ESC-10b, R-ESC-10c)."""
    return attention_drawn(view.params, i, view.state.chars[i], action)


def cautious(view: PolicyView) -> list[Action | None]:
    """Greedy, but never let the watch catch the party: an action that draws attention is kept only
    while the attention so far, this round's draws and the `per_round` growth of every round left
    stay at least 2 below the limit; otherwise that character rests."""
    plan = greedy(view)
    p, st = view.params, view.state
    if not p.attention_limit:
        return plan
    rounds_left = p.max_rounds - view.round + 1  # this round included
    budget = p.attention_limit - 2 - st.attention - p.att_per_round * rounds_left
    out: list[Action | None] = []
    for i, action in enumerate(plan):
        cost = attention_cost(view, i, action)
        if cost > budget:
            out.append(REST)  # resting is always legal
            continue
        budget -= cost
        out.append(action)
    return out


def stubborn(view: PolicyView) -> list[Action | None]:
    """Written from scratch: every character struggles its highest-tier restraint (slot order on
    ties) with the first ability the rules allow, or rests. It never helps anyone."""
    out: list[Action | None] = []
    for i, c in enumerate(view.state.chars):
        if view.dazed[i]:
            out.append(None)
            continue
        slots = [s for s in range(N_SLOTS) if view.params.goal[s] and may_struggle(c, s)]
        if not slots:
            out.append(REST)
            continue
        slot = max(slots, key=lambda s: (c.tiers[s], -s))
        out.append(Action("struggle", slot=slot, ability=allowed_abilities(c, slot)[0]))
    return out
