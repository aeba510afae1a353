"""The one source of legal escape actions (R-ESC-5, R-ESC-6).

Everything that asks "may character ``i`` declare this in this state?" asks this module:

- :func:`action_problem` / :func:`is_legal` / :func:`check_action`: the R-ESC-6 check of one declaration
  (``check_action`` raises the custom-policy error naming the character, round and rule);
- :func:`legal_actions`: every declaration character ``i`` may make at the start of a round, the list optimal
  play (:mod:`sim.escape.optimal`) enumerates;
- the built-in policies (:mod:`sim.escape.greedy`, :mod:`sim.escape.team`) gate each alternative of R-ESC-20 /
  R-ESC-21 on :func:`is_legal`, and the tests check over random states of every class that each built-in
  choice is one of :func:`legal_actions`.

Candidates are built from :data:`FIELDS`: for each kind of :data:`ACTION_KINDS` the :class:`Action` fields it
reads, split into *choices* (a slot, an ability, a target, a held item) and *spends* (breath, rage, favoured
terrain: a resource used on a struggle, which only adds conditions). Every kind and every field of ``Action``
must be listed (checked when the module is imported), so a new action or resource cannot be left out of
optimal play. The fields a kind does not read stay at their defaults in the enumerated actions
(:func:`canonical`); two held release items of the same item kind are one choice.
"""

from __future__ import annotations

import dataclasses
import itertools

from sim.errors import PolicyError
from sim.escape.model import SLOTS
from sim.escape.params import ESCAPE_ABILITIES, N_SLOTS, STR, EscapeParams
from sim.escape.state import (
    ACTION_KINDS,
    Action,
    PartyState,
    action_kinds,
    allowed_abilities,
    can_assist,
    can_be_guided,
    can_bless,
    can_guide,
    can_help_physically,
    can_inspire,
    can_search,
    can_untie_other,
    can_untie_self,
    has_rage,
    may_struggle,
)

#: the fields each kind reads: (choices, spends). Every other field stays at its default.
FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "struggle": (("slot", "ability"), ("breath", "rage", "terrain")),  # R-ESC-4, R-ESC-14, R-ESC-14a
    "assist": (("target",), ()),  # R-ESC-7, R-ESC-8, R-ESC-14 mage hand
    "guide": (("target",), ()),  # R-ESC-9
    "search": ((), ()),  # R-ESC-10
    "rest": ((), ()),  # R-ESC-10a
    "untie": (("target", "slot"), ()),  # R-ESC-10b
    "use_item": (("item", "target", "slot"), ()),  # R-ESC-10
    "bless": ((), ()),  # R-ESC-14
    "channel": ((), ()),  # R-ESC-14b
    "inspire": (("target",), ()),  # R-ESC-14b
    "meditate": ((), ()),  # R-ESC-14b
}


def _check_fields() -> None:
    """Every kind and every Action field is listed in FIELDS (a programming error otherwise)."""
    listed = {f for choices, spends in FIELDS.values() for f in choices + spends}
    fields = {f.name for f in dataclasses.fields(Action)} - {"kind"}
    if set(FIELDS) != set(ACTION_KINDS) or listed != fields:
        raise ImportError(f"sim.escape.actions.FIELDS is out of date: kinds {sorted(set(ACTION_KINDS) ^ set(FIELDS))}, "
                          f"fields {sorted(fields ^ listed)}")


_check_fields()


# ---------------------------------------------------------------------------------------------
# the check of one declaration (R-ESC-6)

#: what makes an action illegal: (rule, why), or None for a legal one
_Problem = tuple[str, str] | None


def struggle_abilities(st: PartyState, i: int, slot: int) -> tuple[int, ...]:
    """R-ESC-2/R-ESC-11: the abilities character ``i`` may struggle ``slot`` with, in ability order (empty: it may
    not struggle that slot). The struggle check below reads this; so does greedy's choice of a pair."""
    c = st.chars[i]
    if not 0 <= slot < N_SLOTS or not may_struggle(c, slot):
        return ()
    return allowed_abilities(c, slot)


def _struggle_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """R-ESC-2/R-ESC-11: a slot that can be struggled, with an allowed ability; R-ESC-14/14a: the resource
    spent (breath, rage, favoured terrain) is there."""
    c = st.chars[i]
    abilities = struggle_abilities(st, i, a.slot)
    if not abilities:
        return "R-ESC-2/R-ESC-11", f"slot {a.slot} cannot be struggled"
    if a.ability not in abilities:
        return "R-ESC-11", f"ability {a.ability} is not allowed on slot {a.slot}"
    if a.breath and not (p.is_monk[i] and c.breath > 0):
        return "R-ESC-14", "no breath point to spend"
    if a.rage and not (has_rage(c) and a.ability == STR):
        return "R-ESC-14a", "rage needs a rage use left and a str check"
    if a.terrain and not c.terrain > 0:
        return "R-ESC-14a", "no favoured-terrain use to spend"
    return None


def _help_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """assist (R-ESC-7, R-ESC-8, R-ESC-14 mage hand) and guide (R-ESC-8, R-ESC-9)."""
    c = st.chars[i]
    if not 0 <= a.target < p.n_chars or a.target == i:
        return "R-ESC-8", "the target must be another party member"
    if a.kind == "assist" and not can_assist(p, i, c):
        return "R-ESC-7", "cannot help physically"
    if a.kind == "guide" and not (can_guide(c) and can_be_guided(st.chars[a.target])):
        return "R-ESC-9", "guide needs gag and blindfold 0 and the target's earplugs 0"
    return None


def _search_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    if not can_search(p, st.chars[i]):
        return "R-ESC-10", "cannot search (no search configured, or blindfold/legs/body)"
    return None


def _untie_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """R-ESC-10b: free arms and no body wrap (R-ESC-7 to untie another), on a slot that is bound."""
    c = st.chars[i]
    if not 0 <= a.target < p.n_chars or not 0 <= a.slot < N_SLOTS:
        return "R-ESC-10b", "no such target or slot"
    if not can_untie_self(p, c) or (a.target != i and not can_untie_other(p, c)):
        return "R-ESC-10b", "needs free arms and no body wrap (and R-ESC-7 to untie another)"
    if st.chars[a.target].tiers[a.slot] == 0:
        return "R-ESC-10b", "that slot is already free"
    return None


def _item_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """R-ESC-10: a held release item that covers the restraint (R-ESC-7 to use it on another)."""
    c = st.chars[i]
    if not 0 <= a.item < len(c.held):
        return "R-ESC-10", "no such held release item"
    if not 0 <= a.target < p.n_chars or not 0 <= a.slot < N_SLOTS:
        return "R-ESC-10", "no such target or slot"
    tier = st.chars[a.target].tiers[a.slot]
    if not 1 <= tier <= int(p.item_max_tier[c.held[a.item]]):
        return "R-ESC-10", "the item does not cover that restraint"
    if a.target != i and not can_help_physically(c):
        return "R-ESC-7", "cannot help physically"
    return None


def _class_action_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """bless (R-ESC-14); channel, meditate and inspire (R-ESC-14b)."""
    c = st.chars[i]
    if a.kind == "bless" and not can_bless(p, i, c):
        return "R-ESC-14", "only a cleric with gag 0 and mask 0 can bless"
    if a.kind == "channel" and not c.channel > 0:
        return "R-ESC-14b", "no channel divinity use left"
    if a.kind == "meditate" and not c.ki > 0:
        return "R-ESC-14b", "no ki point left"
    if a.kind == "inspire":
        if not 0 <= a.target < p.n_chars or a.target == i:
            return "R-ESC-14b", "the target must be another party member"
        if not (can_inspire(p, i, c) and can_be_guided(st.chars[a.target])):
            return "R-ESC-14b", "inspire needs a use left, gag 0 and the target's earplugs 0"
    return None


_ACTION_CHECKS = {
    "struggle": _struggle_problem,
    "assist": _help_problem,
    "guide": _help_problem,
    "search": _search_problem,
    "rest": lambda p, st, i, a: None,  # no condition
    "untie": _untie_problem,
    "use_item": _item_problem,
    "bless": _class_action_problem,
    "channel": _class_action_problem,
    "meditate": _class_action_problem,
    "inspire": _class_action_problem,
}


def action_problem(p: EscapeParams, st: PartyState, i: int, a: object) -> _Problem:
    """R-ESC-6: why character ``i`` may not declare ``a`` at the start of a round of state ``st``, as
    (rule, reason), or None when it may. The class actions of R-ESC-14b exist only with volume-1 features."""
    if not isinstance(a, Action) or a.kind not in action_kinds(p):
        return "R-ESC-5", f"expected an Action, got {a!r}"
    if p.forbidden and forbids(p.forbidden, i, a):  # restricted play (the balance audit): params.forbidden
        return "restricted play", f"{', '.join(options_of(a))} is forbidden in this play (the balance audit)"
    return _ACTION_CHECKS[a.kind](p, st, i, a)


def is_legal(p: EscapeParams, st: PartyState, i: int, a: object) -> bool:
    """Whether character ``i`` may declare ``a`` in state ``st`` (R-ESC-6)."""
    return action_problem(p, st, i, a) is None


def check_action(p: EscapeParams, st: PartyState, i: int, a: object, rnd: int) -> Action:
    """R-ESC-6: validate a custom policy's action; a PolicyError names character, round and rule."""
    problem = action_problem(p, st, i, a)
    if problem is not None:
        rule, why = problem
        raise PolicyError(f"policy: illegal action for {p.names[i]!r} in round {rnd}: {why} ({rule})")
    return a


# ---------------------------------------------------------------------------------------------
# every legal declaration


def canonical(a: Action | None) -> Action | None:
    """``a`` with the fields its kind does not read at their defaults (the form :func:`legal_actions` lists):
    ``Action("rest", slot=3)`` is the same rest as ``Action("rest")``."""
    if a is None or a.kind not in FIELDS:
        return a
    choices, spends = FIELDS[a.kind]
    return Action(a.kind, **{f: getattr(a, f) for f in choices + spends})


def _values(field: str, p: EscapeParams, st: PartyState, i: int) -> tuple:
    if field == "slot":
        return tuple(range(N_SLOTS))
    if field == "ability":
        return tuple(range(len(ESCAPE_ABILITIES)))
    if field == "target":
        return tuple(range(p.n_chars))
    if field == "item":
        return tuple(range(len(st.chars[i].held)))
    raise KeyError(field)


#: the options of play a balance audit can forbid (sim/designer/audit.py): every action kind but rest (the
#: choice that is always there), each ability a struggle may use (``struggle:dex``) and the resources a check
#: may spend (``breath``, ``rage``, ``terrain``)
OPTIONS = (*(k for k in ACTION_KINDS if k != "rest"), *(f"struggle:{a}" for a in ESCAPE_ABILITIES),
           "breath", "rage", "terrain")


def options_of(a: Action) -> tuple[str, ...]:
    """The options of :data:`OPTIONS` an action uses (its kind, a struggle's ability, the resources spent)."""
    used = [a.kind]
    if a.kind == "struggle" and 0 <= a.ability < len(ESCAPE_ABILITIES):
        used.append(f"struggle:{ESCAPE_ABILITIES[a.ability]}")
    used += [name for name, on in (("breath", a.breath), ("rage", a.rage), ("terrain", a.terrain)) if on]
    return tuple(used)


def forbids(forbidden, i: int, a: Action) -> bool:
    """Whether ``forbidden`` (pairs ``(option, character index or None for everyone)``) takes action ``a`` away
    from character ``i``: the one place restricted play (the balance audit) filters the legal actions. Resting
    is never forbidden."""
    return bool(forbidden) and a.kind != "rest" and any(
        (o, None) in forbidden or (o, i) in forbidden for o in options_of(a))


def _same_item(st: PartyState, i: int, a: Action, out: list[Action]) -> bool:
    """A release item of the same kind as one already listed, on the same restraint: the same choice."""
    held = st.chars[i].held
    return any(b.kind == "use_item" and b.target == a.target and b.slot == a.slot and held[b.item] == held[a.item]
               for b in out)


def legal_actions(p: EscapeParams, st: PartyState, i: int, rnd: int | None = None, forbidden=None) -> list[Action]:
    """Every action character ``i`` (not dazed) may declare at the start of a round of state ``st``: the
    R-ESC-6 legal declarations, each once in :func:`canonical` form, in :data:`ACTION_KINDS` order (within a
    kind: the choice fields in their order, then the spends, none first). ``rnd`` is not read (legality
    depends on the state only); it is kept for callers that pass the round. ``forbidden`` takes options away
    (:func:`forbids`: restricted play, for the balance audit). Resting is always legal, so the list is never
    empty."""
    out: list[Action] = []
    for kind in action_kinds(p):
        choices, spends = FIELDS[kind]
        for combo in itertools.product(*(_values(f, p, st, i) for f in choices)):
            base = dict(zip(choices, combo, strict=True))
            if not is_legal(p, st, i, Action(kind, **base)):
                continue  # a spend only adds conditions: no spend makes an illegal choice legal
            for flags in itertools.product((False, True), repeat=len(spends)):
                a = Action(kind, **base, **dict(zip(spends, flags, strict=True)))
                if any(flags) and not is_legal(p, st, i, a):
                    continue
                if kind == "use_item" and _same_item(st, i, a, out):
                    continue
                out.append(a)
    return [a for a in out if not forbids(forbidden, i, a)]


def joint_actions(p: EscapeParams, st: PartyState, rnd: int | None, dazed: tuple[bool, ...],
                  forbidden=None) -> list[tuple]:
    """Every combination of the characters' legal actions (``None`` for a dazed character), less the
    ``forbidden`` ones (:func:`forbids`)."""
    per = [[None] if dazed[i] else legal_actions(p, st, i, rnd, forbidden) for i in range(p.n_chars)]
    return list(itertools.product(*per))


def describe(p: EscapeParams, i: int, a: Action | None) -> str:
    """An action in words: "Mei struggles arms (dex)", "Ann assists Bo", ..."""
    who = p.names[i]
    if a is None:
        return f"{who} is dazed"
    slot = SLOTS[a.slot] if 0 <= a.slot < N_SLOTS else ""
    target = p.names[a.target] if 0 <= a.target < p.n_chars else ""
    if a.kind == "struggle":
        spent = [w for w, on in (("a breath point", a.breath), ("a rage use", a.rage),
                                 ("a favoured-terrain use", a.terrain)) if on]
        extra = ", spending " + " and ".join(spent) if spent else ""
        return f"{who} struggles {slot} ({ESCAPE_ABILITIES[a.ability]}{extra})"
    if a.kind in ("assist", "guide", "inspire"):
        return f"{who} {a.kind}s {target}"
    if a.kind == "untie":
        return f"{who} unties {'own' if a.target == i else target + chr(39) + 's'} {slot}"
    if a.kind == "use_item":
        return f"{who} uses a release item on {'own' if a.target == i else target + chr(39) + 's'} {slot}"
    if a.kind == "search":
        return f"{who} searches"
    if a.kind == "bless":
        return f"{who} blesses"
    if a.kind in ("rest", "meditate"):
        return f"{who} {a.kind}s"
    if a.kind == "channel":
        return f"{who} channels divinity"
    return f"{who}: {a.kind}"
