"""Test helpers for the formation kind (the shape every tests/<kind>/<kind>_helpers.py has): ``EXAMPLES`` and
``example(name)`` for the shipped scenarios, ``scenario_data(**over)`` and ``make(**over)`` for small scenarios;
then the skirmish's chosen dice (``rows``, ``d6``, ``always_hits``) and the reference and kernel stepped side by
side (``play``)."""

from __future__ import annotations

import copy

import numpy as np
from examples import ROOT

from sim.dice import faces_from_uniform
from sim.formation import layout as L
from sim.formation.kernel import STATE_FIELDS, compile_arrays, init_state
from sim.formation.kernel import turn as kernel_turn
from sim.formation.reference import _Field
from sim.formation.reference import unit_turn as reference_turn
from sim.scenario import parse_scenario

EXAMPLES = ROOT / "scenarios" / "formation"

#: one plain melee unit a side
DEFAULT_UNITS = [{"side": "A", "name": "a", "combat": 10, "stamina": 5, "damage": 1, "monster": False},
                 {"side": "B", "name": "b", "combat": 10, "stamina": 5, "damage": 1, "monster": False}]


def example(name: str):
    """The shipped example ``scenarios/formation/<name>.toml``."""
    return EXAMPLES / f"{name}.toml"


def scenario_data(units=None, **over) -> dict:
    """A formation scenario as a dict: ``units`` (default: one plain unit a side) and top-level overrides. The hand
    traces of the skirmish tests were written for the smallest-penalty target choice, fixed areas and the listed
    attack types (the readings before issue 24); they keep them unless the test names another."""
    over["policy"] = {"choice": "min_penalty", "movement": "fixed", **over.get("policy", {})}
    over["rules"] = {"attack_types": "listed", **over.get("rules", {})}
    return {"kind": "formation", "name": "t", "units": copy.deepcopy(DEFAULT_UNITS if units is None else units),
            **over}


def make(units=None, **over):
    """A validated formation scenario: :func:`scenario_data` parsed."""
    return parse_scenario(scenario_data(units, **over))


def d6(face: int) -> float:
    return (face - 0.5) / 6


def rows(p, rounds: int, dice: dict[str, dict[int, float]] | None = None) -> list[np.ndarray]:
    """Round rows; every die shows 3 unless ``dice[name][column]`` says otherwise (a uniform)."""
    out = []
    for _ in range(rounds):
        row = np.full(L.round_cols(p.n_units), d6(3))
        row[[j * L.UNIT_COLS + L.VICTIM_PICK for j in range(p.n_units)]] = 0.25
        row[[j * L.UNIT_COLS + L.TARGET_PICK for j in range(p.n_units)]] = 0.0
        for name, cols in (dice or {}).items():
            j = p.names.index(name)
            for c, v in cols.items():
                row[j * L.UNIT_COLS + c] = v
        out.append(row)
    return out


def always_hits():
    return {L.ATTACK_DICE[0]: d6(6), L.ATTACK_DICE[1]: d6(6)}  # critical (R-MDK-2)


def always_misses():
    return {L.ATTACK_DICE[0]: d6(5), L.ATTACK_DICE[1]: d6(5)}  # fumble (R-MDK-2)


FLAGS = ("alive", "present", "initiator", "withdrawn", "dismissed")


def state_of(field: _Field) -> dict:
    return {name: [bool(v) if name in FLAGS else int(v) for v in getattr(field, name)] for name in STATE_FIELDS}


def kstate_of(S) -> dict:
    return {name: [bool(v) if name in FLAGS else int(v) for v in S[i]] for i, name in enumerate(STATE_FIELDS)}


def play(p, round_rows, won=False, by2=False):
    """Step reference and kernel together; return the trace (round, unit, state) and the winner."""
    field = _Field(p)
    arrays = compile_arrays(p)
    S = init_state(p, 1)[0]
    trace = []
    winner = -1
    for r, row in enumerate(round_rows, start=1):
        f6, f4 = faces_from_uniform(row, 6).tolist(), faces_from_uniform(row, 4).tolist()
        free = won and r == 1
        for j in p.order:
            reference_turn(p, field, j, r, f6, f4, row, free, won and by2)
            w = kernel_turn(p, arrays, S, row, j, r, free, won and by2)
            winner = w if w != -1 else winner
            assert kstate_of(S) == state_of(field), f"round {r} unit {p.names[j]}"
            assert winner == field.winner
            trace.append((r, p.names[j], state_of(field)))
            if field.winner != -1:
                return trace, field.winner, r
    return trace, None, len(round_rows)


def hp_after(trace, r, name):
    """hp of every unit right after unit ``name`` acted in round ``r``."""
    for rr, nm, state in trace:
        if rr == r and nm == name:
            return state["hp"]
    raise AssertionError("no such turn")


PLAIN = {"monster": False}
