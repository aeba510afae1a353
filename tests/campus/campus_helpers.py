"""Test helpers for the campus rules: small scenarios as dicts, hand-built states, chosen uniforms."""

from __future__ import annotations

import copy

import numpy as np

from sim.campus.params import compile_params
from sim.campus.reference import Turn, new_game
from sim.scenario import parse_scenario

BASE = {
    "kind": "campus",
    "name": "unit",
    "rules": {"turns": 12},
    "locations": [{"id": "hall"}, {"id": "cell", "capture_room": True}],
    "adversaries": [],
    "spawns": [],
    "party": [{"name": "A", "abilities": {"fight": 10, "flee": 10, "hide": 10}}],
    "policy": {"stance": "fixed", "stance_value": "fight"},
}


def scenario_dict(**over) -> dict:
    d = copy.deepcopy(BASE)
    for key, value in over.items():
        if key in ("rules", "policy") and isinstance(value, dict):
            d[key] = {**d[key], **value}
        else:
            d[key] = value
    return d


def params_of(**over):
    return compile_params(parse_scenario(scenario_dict(**over)))


def uniforms(p, fill: float = 0.5, **cols) -> list[float]:
    """A per-turn uniform row: ``fill`` everywhere, ``name=[values]`` or ``name={index: value}`` for the
    layout's columns (e.g. pc_move=[0.0, 0.9], adv_stance={(0, 0): 0.1})."""
    u = [fill] * p.layout.K
    for name, values in cols.items():
        idx = getattr(p.layout, name)
        if isinstance(values, dict):
            for k, v in values.items():
                u[int(idx[k])] = v
        else:
            for k, v in enumerate(values):
                u[int(idx[k])] = v
    return u


def play(p, g, t, u):
    Turn(p, g, t, u).play()
    return g


def kernel_matches_reference(p, n: int, seed: int) -> bool:
    from sim.campus.simulate import run_arrays

    a = run_arrays(p, n, seed, engine="kernel")
    b = run_arrays(p, n, seed, engine="reference")
    return all(np.array_equal(a[k], b[k]) for k in a)


__all__ = ["new_game", "params_of", "play", "scenario_dict", "uniforms", "kernel_matches_reference"]
