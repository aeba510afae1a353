"""The targeting engine (R-MDK-6 .. R-MDK-9, R-MDK-11, R-MDK-14): for a formation, the penalty,
legality and contact of every attacker–target pair, with the exact hit probability.

Scalar functions over :class:`~sim.formation.model.Params` and a list ``onfield`` (unit alive and
present) and optional current areas (R-MDK-11 movement); the scalar reference uses them turn by
turn, the kernel has compiled versions of the same logic (``sim.formation.kernel.area_penalty``,
``is_overflow``, ``troop_unblocked``) and a test compares the two.
"""

from __future__ import annotations

import pandas as pd

from sim.formation.model import (
    AREAS,
    ATTACKS,
    BACK,
    FRONT,
    MAGIC,
    MELEE,
    RANGED,
    SIDES,
    Params,
    Scenario,
    compile_params,
)
from sim.formation.rules import AREA_PENALTY, hit_probability


def _areas(p: Params, area) -> list[int]:
    """The units' current areas (R-MDK-11 movement changes them); the starting areas by default."""
    return [int(a) for a in (p.area if area is None else area)]


def front_count(p: Params, onfield, side: int, area=None) -> int:
    area = _areas(p, area)
    return sum(1 for k in range(p.n_units) if onfield[k] and p.side[k] == side and area[k] == FRONT)


def is_overflow(p: Params, onfield, j: int, area=None) -> bool:
    """R-MDK-7: if a side's front outnumbers the enemy front, as many front fighters as the enemy
    has are pinned (the first listed ones, decision) and the rest overflow."""
    area = _areas(p, area)
    if area[j] != FRONT or not onfield[j]:
        return False
    enemy_front = front_count(p, onfield, 1 - p.side[j], area)
    rank = sum(1 for k in range(j) if onfield[k] and p.side[k] == p.side[j] and area[k] == FRONT)
    return rank >= enemy_front


def troop_unblocked(p: Params, onfield, j: int, area=None) -> bool:
    """R-MDK-8: a troop reaches the enemy back line unless the enemy front holds a troop of the
    same size or larger."""
    area = _areas(p, area)
    if not p.troop[j]:
        return False
    for k in range(p.n_units):
        if (onfield[k] and p.side[k] != p.side[j] and area[k] == FRONT and p.troop[k]
                and p.troop_size[k] >= p.troop_size[j]):
            return False
    return True


def attack_types(p: Params, j: int) -> list[int]:
    """R-MDK-6: the attack types unit ``j`` has (MELEE, RANGED, MAGIC order)."""
    return [t for t in (MELEE, RANGED, MAGIC) if int(p.attacks[j]) >> t & 1]


def attack_penalty(p: Params, onfield, j: int, k: int, attack: int | None = None, area=None) -> tuple[int, str]:
    """R-MDK-6/7/8: (penalty to 戦闘(攻), reason) for unit ``j`` attacking enemy unit ``k`` with
    ``attack`` (default: its first attack type), everyone standing in ``area``.

    Penalties do not stack: a penalized attack is −4 (decision)."""
    area = _areas(p, area)
    attack = int(p.attack[j]) if attack is None else attack
    own, tgt = area[j], area[k]
    if attack == MAGIC:
        return 0, "magic: any area (R-MDK-6)"
    if tgt == BACK and troop_unblocked(p, onfield, j, area):
        return 0, "troop reaches the back line (R-MDK-8)"
    if attack == MELEE:
        if tgt == FRONT:
            if own == FRONT:
                return 0, "melee at the adjacent enemy front (R-MDK-6)"
            return AREA_PENALTY, "melee from the back at a non-adjacent area (R-MDK-6)"
        if is_overflow(p, onfield, j, area):
            return 0, "overflow fighter at the back line (R-MDK-7)"
        return AREA_PENALTY, "melee at a non-adjacent area (R-MDK-6)"
    # ranged: the proper area is one beyond the adjacent one
    if own == FRONT:
        if tgt == FRONT:
            return AREA_PENALTY, "ranged at an adjacent enemy (R-MDK-6)"
        return 0, "ranged from the front at the enemy back (R-MDK-6)"
    if tgt == FRONT:
        return 0, "ranged from the back at the enemy front (R-MDK-6)"
    return AREA_PENALTY, "back-line ranged at the enemy back line (R-MDK-6)"


def in_contact(p: Params, onfield, j: int, k: int, area=None) -> bool:
    """R-MDK-9: contact actions (melee actions, charm, service, assault, training) need adjacency:
    own front and enemy front are adjacent; an overflow fighter (R-MDK-7) and an unblocked troop
    (R-MDK-8) also reach the enemy back line."""
    area = _areas(p, area)
    if p.side[j] == p.side[k]:
        return False
    if area[k] == FRONT:
        return area[j] == FRONT
    return is_overflow(p, onfield, j, area) or troop_unblocked(p, onfield, j, area)


def can_move(p: Params, onfield, j: int, to_area: int, area=None) -> bool:
    """R-MDK-11: moving between areas costs no action, but a side's front cannot move back if
    that would leave the side with no front."""
    area = _areas(p, area)
    if to_area == area[j] or to_area == FRONT:
        return True
    return front_count(p, onfield, p.side[j], area) > 1


def starting_onfield(p: Params) -> list[bool]:
    """Units on the field at the start: everyone not waiting to be summoned or called (R-MDK-5)."""
    return [bool(p.master[k] < 0) for k in range(p.n_units)]


def targeting_rows(p: Params, onfield=None) -> list[dict]:
    """Every attacker–enemy pair of the formation (R-MDK-14)."""
    onfield = starting_onfield(p) if onfield is None else list(onfield)
    rows = []
    for j in range(p.n_units):
        if not onfield[j]:
            continue
        for k in range(p.n_units):
            if not onfield[k] or p.side[k] == p.side[j]:
                continue
            for t in attack_types(p, j):  # R-MDK-6: one row per attack type the unit has
                rows.append(_row(p, onfield, j, k, t))
    return rows


def _row(p: Params, onfield, j: int, k: int, t: int) -> dict:
    penalty, reason = attack_penalty(p, onfield, j, k, t)
    return {
        "attacker": p.names[j],
        "attacker_side": SIDES[p.side[j]],
        "attacker_area": AREAS[p.area[j]],
        "attack": ATTACKS[t],
        "target": p.names[k],
        "target_area": AREAS[p.area[k]],
        "legal": True,  # R-MDK-9: attacks are possible from anywhere
        "contact": in_contact(p, onfield, j, k),
        "penalty": -penalty,
        "reason": reason,
        "hit_probability": hit_probability(int(p.combat[j]), penalty, int(p.evade[k])),
    }


def targeting_table(scenario: Scenario) -> pd.DataFrame:
    """The targeting table of the starting formation: attacker, target, legal, contact
    (adjacency for contact actions, R-MDK-9), penalty (as a signed modifier), reason and the exact
    hit probability (R-MDK-2 opposed 戦闘 − penalty against evade, R-MDK-14)."""
    cols = ["attacker", "attacker_side", "attacker_area", "attack", "target", "target_area", "legal",
            "contact", "penalty", "reason", "hit_probability"]
    return pd.DataFrame(targeting_rows(compile_params(scenario)), columns=cols)
