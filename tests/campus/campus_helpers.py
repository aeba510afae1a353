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


def kernel_turn(p, g, t, u):
    """The kernel's view of one turn from a reference game's state (a one-row batch)."""
    from sim.campus.kernel import initial_state, step

    s = initial_state(p, 1)
    s = s.__class__(**{**s.__dict__,
                       "base": np.array([g.base], np.int64), "gp": np.array([g.gp], np.int64),
                       "vit": np.array([g.vit], np.int64), "status": np.array([g.status], np.int8),
                       "room": np.array([g.room], np.int64), "cap_turn": np.array([g.cap_turn], np.int64)})
    return step(s, p, t, np.array([u]))


def play_both(p, g, t, u):
    """Play turn t on the reference game ``g`` and require the kernel to reach the same state."""
    ks = kernel_turn(p, g, t, u)
    play(p, g, t, u)
    assert ks.status[0].tolist() == g.status
    assert ks.vit[0].tolist() == g.vit
    assert ks.gp[0].tolist() == g.gp
    assert ks.base[0].tolist() == g.base
    assert ks.duels_stance[0].tolist() == g.duels_stance
    return g


__all__ = ["new_game", "params_of", "play", "scenario_dict", "uniforms", "kernel_matches_reference", "kernel_turn",
           "play_both"]
