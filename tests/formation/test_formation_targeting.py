"""The targeting engine: R-MDK-6 areas and penalties, R-MDK-7 overflow, R-MDK-8 troops,
R-MDK-9 adjacency, R-MDK-11 movement, R-MDK-14 table; the kernel's array version agrees."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.formation import targeting_table
from sim.formation.kernel import S_ALIVE, S_PRESENT, area_penalty, compile_arrays, init_state
from sim.formation.kernel import is_overflow as k_overflow
from sim.formation.kernel import troop_unblocked as k_troop
from sim.formation.model import BACK, FRONT, compile_params
from sim.formation.rules import hit_probability
from sim.formation.targeting import attack_penalty, can_move, in_contact, is_overflow, troop_unblocked
from sim.scenario import parse_scenario


def make(units, **extra):
    """The tables below list one row per listed attack type (``[rules] attack_types = "listed"``, R-MDK-6)."""
    extra["rules"] = {"attack_types": "listed", **extra.get("rules", {})}
    return parse_scenario({"kind": "formation", "name": "t", "units": units, **extra})


def unit(side, name, area="front", attack="melee", **kw):
    return {"side": side, "name": name, "area": area, "attack": attack, **kw}


def penalty_of(s, attacker, target):
    p = compile_params(s)
    onfield = [True] * p.n_units
    return attack_penalty(p, onfield, p.names.index(attacker), p.names.index(target))[0]


@pytest.mark.parametrize(
    "att_area,attack,tgt_area,expected",
    [
        ("front", "melee", "front", 0),  # proper area
        ("front", "melee", "back", 4),  # melee at a non-adjacent area
        ("back", "melee", "front", 4),
        ("back", "melee", "back", 4),
        ("front", "ranged", "front", 4),  # ranged at an adjacent enemy
        ("front", "ranged", "back", 0),
        ("back", "ranged", "front", 0),  # one area beyond the adjacent one
        ("back", "ranged", "back", 4),  # back-line ranged at the enemy back line
        ("front", "magic", "back", 0),  # magic: any area
        ("back", "magic", "back", 0),
        ("back", "magic", "front", 0),
    ],
)
def test_r_mdk_6_area_penalties(att_area, attack, tgt_area, expected):
    """R-MDK-6: −4 to 戦闘(攻) off the proper area; both sides keep a front so no overflow."""
    s = make([
        unit("A", "x", att_area, attack), unit("A", "xf"), unit("A", "xb", "back"),
        unit("B", "y", tgt_area), unit("B", "yf"), unit("B", "yb", "back"),
    ])
    assert penalty_of(s, "x", "y") == expected


def test_r_mdk_7_overflow_both_directions_first_listed_are_pinned():
    """R-MDK-7: three fronts against one: the first listed is pinned, two overflow to the back."""
    s = make([
        unit("A", "a1"), unit("A", "a2"), unit("A", "a3"), unit("A", "ab", "back"),
        unit("B", "b1"), unit("B", "bb", "back"),
    ])
    p = compile_params(s)
    on = [True] * p.n_units
    assert [is_overflow(p, on, i) for i in range(3)] == [False, True, True]
    assert penalty_of(s, "a1", "bb") == 4 and penalty_of(s, "a2", "bb") == 0
    assert in_contact(p, on, 1, 5) and not in_contact(p, on, 0, 5)
    assert penalty_of(s, "b1", "ab") == 4  # the outnumbered side does not overflow
    # the other direction: B now outnumbers A's front
    s2 = make([unit("A", "a1"), unit("A", "ab", "back"), unit("B", "b1"), unit("B", "b2"), unit("B", "bb", "back")])
    assert penalty_of(s2, "b2", "ab") == 0 and penalty_of(s2, "b1", "ab") == 4
    # a fallen front fighter changes who overflows (only units on the field count)
    p2 = compile_params(s2)
    assert not is_overflow(p2, [True, True, False, True, True], 3)  # b1 fell: 1 against 1, b2 pinned
    assert is_overflow(p2, [False, True, True, True, True], 2)  # a1 fell: no enemy front to pin b1


def test_r_mdk_7_empty_enemy_front_means_everyone_overflows():
    s = make([unit("A", "a1"), unit("B", "bb", "back")])
    assert penalty_of(s, "a1", "bb") == 0


def test_r_mdk_8_troop_reaches_back_line_unless_blocked_by_same_or_larger_troop():
    base = [unit("A", "t", "front", troop=True, troop_size=3), unit("A", "af"),
            unit("B", "bf"), unit("B", "bf2"), unit("B", "bb", "back")]
    s = make(base)
    assert penalty_of(s, "t", "bb") == 0
    p = compile_params(s)
    assert troop_unblocked(p, [True] * p.n_units, 0)
    smaller = make(base[:2] + [unit("B", "bf", troop=True, troop_size=2)] + base[3:])
    assert penalty_of(smaller, "t", "bb") == 0
    same = make(base[:2] + [unit("B", "bf", troop=True, troop_size=3)] + base[3:])
    assert penalty_of(same, "t", "bb") == 4
    larger = make(base[:2] + [unit("B", "bf", troop=True, troop_size=5)] + base[3:])
    assert penalty_of(larger, "t", "bb") == 4
    # a blocking troop in the enemy back does not block
    back_troop = make(base[:4] + [unit("B", "bb", "back", troop=True, troop_size=9)])
    assert penalty_of(back_troop, "t", "bb") == 0


def test_r_mdk_9_contact_needs_adjacency():
    """R-MDK-9: attacks from anywhere (legal), contact actions only at the adjacent front."""
    s = make([unit("A", "af"), unit("A", "ab", "back"), unit("B", "bf"), unit("B", "bb", "back")])
    p = compile_params(s)
    on = [True] * 4
    assert in_contact(p, on, 0, 2)
    assert not in_contact(p, on, 0, 3)
    assert not in_contact(p, on, 1, 2)
    assert not in_contact(p, on, 0, 1)  # never an ally
    table = targeting_table(s)
    assert table["legal"].all()
    assert len(table) == 8  # every attacker–enemy pair, both sides


def test_r_mdk_11_front_cannot_move_back_leaving_no_front():
    s = make([unit("A", "af"), unit("A", "ab", "back"), unit("B", "bf")])
    p = compile_params(s)
    assert not can_move(p, [True] * 3, 0, BACK)
    assert can_move(p, [True] * 3, 1, FRONT)
    s2 = make([unit("A", "af"), unit("A", "af2"), unit("B", "bf")])
    p2 = compile_params(s2)
    assert can_move(p2, [True] * 3, 0, BACK)
    assert not can_move(p2, [True, False, True], 0, BACK)  # the other front fighter has fallen


def test_r_mdk_14_targeting_table_hit_probability_uses_penalty():
    s = make([unit("A", "archer", "front", "ranged", combat=9), unit("B", "bf", evade=6),
              unit("B", "bb", "back", evade=6)])
    t = targeting_table(s).set_index("target")
    assert t.loc["bf", "penalty"] == -4 and t.loc["bb", "penalty"] == 0
    assert t.loc["bf", "hit_probability"] == pytest.approx(hit_probability(9, 4, 6), abs=1e-12)
    assert t.loc["bb", "hit_probability"] == pytest.approx(hit_probability(9, 0, 6), abs=1e-12)
    assert t.loc["bf", "hit_probability"] < t.loc["bb", "hit_probability"]
    assert "R-MDK-6" in t.loc["bf", "reason"]


unit_strategy = st.tuples(
    st.sampled_from(["A", "B"]), st.sampled_from(["front", "back"]),
    st.sampled_from(["melee", "ranged", "magic"]), st.booleans(), st.integers(1, 3),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(unit_strategy, min_size=2, max_size=7), st.lists(st.booleans(), min_size=7, max_size=7))
def test_r_mdk_6_to_9_kernel_penalties_equal_scalar(specs, onfield_bits):
    """The compiled penalties (every attack type) and contacts equal the scalar targeting engine."""
    units = [unit(side, f"u{i}", area, attack, troop=troop, troop_size=size)
             for i, (side, area, attack, troop, size) in enumerate(specs)]
    s = make(units, skirmish={"enabled": False})
    p = compile_params(s)
    onfield = onfield_bits[: p.n_units]
    P = compile_arrays(p)[0]
    S = init_state(p, 1)[0]
    S[S_ALIVE] = onfield
    S[S_PRESENT] = 1
    for j in range(p.n_units):
        if not onfield[j]:
            continue
        overflow, troop_ok = k_overflow(P, S, j, int(p.area[j])), k_troop(P, S, j)
        for k in range(p.n_units):
            if p.side[k] == p.side[j] or not onfield[k]:
                continue
            for t in range(3):
                assert area_penalty(t, int(p.area[j]), int(p.area[k]), overflow, troop_ok) == \
                    attack_penalty(p, onfield, j, k, t)[0]
            contact = (p.area[j] == FRONT) if p.area[k] == FRONT else (overflow or troop_ok)
            assert bool(contact) == in_contact(p, onfield, j, k)
