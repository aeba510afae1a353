"""``CharState.copy`` and ``PartyState.copy`` (sim/escape/state.py): a copy equal to the original in every field
and sharing no list with it, whatever fields the state has (they are found, not listed), so the exact engine and
the optimal policy may play a round on a copy without touching the state they branched from."""

from __future__ import annotations

import dataclasses

import numpy as np
from escape_helpers import character, scenario

from sim.escape.greedy import greedy
from sim.escape.params import compile_params
from sim.escape.reference import DrawSource, play_round
from sim.escape.state import CharState, PartyState, initial_state


def played_state() -> PartyState:
    """A party a few rounds into a challenge, so that the list fields hold more than their initial values."""
    p = compile_params(scenario(character("A", restraints={"arms": "moderate", "legs": "severe"}),
                                character("B", restraints={"arms": "light"}), goal={"slots": ["arms", "legs"]},
                                search={"dc": 5, "items": [{"name": "knife", "kind": "release", "weight": 1.0}]}))
    st = initial_state(p)
    src = DrawSource(p, np.array([3, 4], dtype=np.uint64))
    for r in range(3):
        src.at(0, r + 1)
        play_round(p, st, greedy, src)
    return st


def list_fields(state) -> list[str]:
    return [f.name for f in dataclasses.fields(state) if type(getattr(state, f.name)) is list]


def test_char_copy_equals_and_shares_no_list():
    c = played_state().chars[0]
    d = c.copy()
    assert type(d) is CharState and d == c
    assert list_fields(c) and all(getattr(d, name) is not getattr(c, name) for name in list_fields(c))
    d.tiers[0] += 1
    d.actions_taken[0] += 1
    assert d.tiers != c.tiers and d.actions_taken != c.actions_taken


def test_party_copy_equals_and_shares_no_character_or_list():
    st = played_state()
    cp = st.copy()
    assert type(cp) is PartyState and cp == st and cp.key() == st.key()
    assert all(getattr(cp, name) is not getattr(st, name) for name in list_fields(st))
    assert all(a is not b for a, b in zip(cp.chars, st.chars, strict=True))
    cp.chars[1].held.append(0)
    cp.item_left[0] = 99
    assert cp.chars[1].held != st.chars[1].held and st.item_left[0] != 99
