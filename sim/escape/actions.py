"""Every legal action of an escape character in a state (R-ESC-5, R-ESC-6), for optimal play.

Legality is not restated here: candidates are built from the fields of :class:`Action` and the kinds of
:data:`ACTION_KINDS`, and kept when the policy check of R-ESC-6 (:func:`sim.escape.policy.check_action`)
accepts them, so an action kind or a resource the rules gain flows in without edits. For the kinds whose
meaningful fields are known the candidates vary only those fields (an ``Action("rest", slot=3)`` is the
same rest); any other kind gets every combination of the fields, and equal results are kept once.
"""

from __future__ import annotations

import itertools

from sim.errors import PolicyError
from sim.escape.params import ESCAPE_ABILITIES, N_SLOTS, EscapeParams
from sim.escape.policy import check_action
from sim.escape.state import ACTION_KINDS, Action, PartyState

#: the fields each known kind reads (the others stay at their defaults)
FIELDS = {
    "struggle": ("slot", "ability", "breath"),
    "assist": ("target",),
    "guide": ("target",),
    "search": (),
    "rest": (),
    "untie": ("target", "slot"),
    "use_item": ("item", "target", "slot"),
    "bless": (),
}
ALL_FIELDS = ("slot", "ability", "target", "item", "breath")


def _values(field: str, p: EscapeParams, st: PartyState, i: int) -> tuple:
    if field == "slot":
        return tuple(range(N_SLOTS))
    if field == "ability":
        return tuple(range(len(ESCAPE_ABILITIES)))
    if field == "target":
        return tuple(range(p.n_chars))
    if field == "item":
        return tuple(range(len(st.chars[i].held)))
    if field == "breath":
        return (False, True)
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


def legal_actions(p: EscapeParams, st: PartyState, i: int, rnd: int, forbidden=None) -> list[Action]:
    """Every action character ``i`` may declare at the start of round ``rnd`` of state ``st`` (not
    dazed), in :data:`ACTION_KINDS` order, less those ``forbidden`` takes away (:func:`forbids`). Resting is
    always legal, so the list is never empty."""
    out: list[Action] = []
    seen: set[Action] = set()
    for kind in ACTION_KINDS:
        fields = FIELDS.get(kind, ALL_FIELDS)
        for combo in itertools.product(*(_values(f, p, st, i) for f in fields)):
            a = Action(kind, **dict(zip(fields, combo, strict=True)))
            if a in seen:
                continue
            try:
                check_action(p, st, i, a, rnd)
            except PolicyError:
                continue
            if kind == "use_item" and any(  # the same item kind held twice: one choice
                    b.kind == "use_item" and b.target == a.target and b.slot == a.slot
                    and st.chars[i].held[b.item] == st.chars[i].held[a.item] for b in out):
                continue
            seen.add(a)
            out.append(a)
    return [a for a in out if not forbids(forbidden, i, a)]


def joint_actions(p: EscapeParams, st: PartyState, rnd: int, dazed: tuple[bool, ...], forbidden=None) -> list[tuple]:
    """Every combination of the characters' legal actions (``None`` for a dazed character), less the
    ``forbidden`` ones (:func:`forbids`)."""
    per = [[None] if dazed[i] else legal_actions(p, st, i, rnd, forbidden) for i in range(p.n_chars)]
    return list(itertools.product(*per))


def describe(p: EscapeParams, i: int, a: Action | None) -> str:
    """An action in words: "Mei struggles arms (dex)", "Ann assists Bo", ..."""
    from sim.escape.model import SLOTS

    who = p.names[i]
    if a is None:
        return f"{who} is dazed"
    slot = SLOTS[a.slot] if 0 <= a.slot < N_SLOTS else ""
    target = p.names[a.target] if 0 <= a.target < p.n_chars else ""
    if a.kind == "struggle":
        extra = ", spending a breath point" if a.breath else ""
        return f"{who} struggles {slot} ({ESCAPE_ABILITIES[a.ability]}{extra})"
    if a.kind in ("assist", "guide"):
        return f"{who} {a.kind}s {target}"
    if a.kind == "untie":
        return f"{who} unties {'own' if a.target == i else target + chr(39) + 's'} {slot}"
    if a.kind == "use_item":
        return f"{who} uses a release item on {'own' if a.target == i else target + chr(39) + 's'} {slot}"
    if a.kind in ("search", "rest", "bless"):
        return f"{who} {a.kind}{'es' if a.kind == 'search' else 's'}"
    return f"{who}: {a.kind}"
