"""Test helpers for the campus kind (the shape every tests/<kind>/<kind>_helpers.py has): ``EXAMPLES`` and
``example(name)`` for the shipped scenarios, ``scenario_data(**over)`` and ``make(**over)`` for small scenarios;
then compiled parameters, hand-built states and chosen uniforms."""

from __future__ import annotations

import copy

import numpy as np
from examples import ROOT

from sim.campus.params import compile_params
from sim.campus.reference import Turn, new_game
from sim.scenario import parse_scenario

EXAMPLES = ROOT / "scenarios" / "campus"

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


def scenario_data(**over) -> dict:
    d = copy.deepcopy(BASE)
    for key, value in over.items():
        if key in ("rules", "policy") and isinstance(value, dict):
            d[key] = {**d[key], **value}
        else:
            d[key] = value
    return d


def example(name: str):
    """The shipped example ``scenarios/campus/<name>.toml``."""
    return EXAMPLES / f"{name}.toml"


def make(**over):
    """A validated campus scenario: :func:`scenario_data` parsed."""
    return parse_scenario(scenario_data(**over))


def params_of(**over):
    return compile_params(make(**over))


class Scripted:
    """A stream that answers each draw by its label (``fill`` when the test did not choose it) and records
    what it gave, in order, so the kernel can be fed the same numbers."""

    def __init__(self, values: dict, fill: float):
        self.values, self.fill = values, fill
        self.drawn: list[float] = []
        self.labels: list = []

    def u(self, label=None) -> float:
        x = self.values.get(label, self.fill)
        self.drawn.append(x)
        self.labels.append(label)
        return x


def uniforms(p, fill: float = 0.5, draws: dict | None = None, **cols) -> Scripted:
    """Chosen draws by label: ``name=[values]`` (labels (name, 0), (name, 1), ...) or ``name={key: value}``
    (labels (name, key)), e.g. pc_move=[0.0, 0.9], adv_stance={(0, 0): 0.1}; ``draws`` gives whole labels
    (a shuffle's draw j is ((name, key), j)); every other draw is ``fill``."""
    values = dict(draws or {})
    for name, vals in cols.items():
        items = vals.items() if isinstance(vals, dict) else enumerate(vals)
        for k, v in items:
            values[(name, k)] = v
    return Scripted(values, fill)


def play(p, g, t, u):
    Turn(p, g, t, u).play()
    return g


def kernel_matches_reference(p, n: int, seed: int) -> bool:
    from sim.campus.simulate import run_arrays

    a = run_arrays(p, n, seed, engine="kernel")
    b = run_arrays(p, n, seed, engine="reference")
    return all(np.array_equal(a[k], b[k]) for k in a)


def kernel_turn(p, g, t, drawn):
    """The kernel's turn t from a reference game's state (a one-game record) on the numbers ``drawn``;
    returns the record and how many numbers it drew."""
    from sim.campus.kernel import new_record, play_turn

    rec = new_record(p, 1)
    rec.base[0] = g.base
    rec.gp[0] = g.gp
    rec.vit[0] = g.vit
    rec.status[0] = g.status
    rec.room[0] = g.room
    rec.cap_turn[0] = g.cap_turn
    if p.B:
        rec.bought[0] = g.bought  # R-CAM-9a: what the PCs bought so far
    used = play_turn(p, rec, 0, t, drawn)
    return rec, used


def play_both(p, g, t, u):
    """Play turn t on the reference game ``g`` and require the kernel, fed the same numbers in the same
    order, to draw exactly as many and reach the same state."""
    before = copy.deepcopy(g)
    play(p, g, t, u)
    rec, used = kernel_turn(p, before, t, u.drawn)
    assert used == len(u.drawn)
    assert rec.status[0].tolist() == g.status
    assert rec.vit[0].tolist() == g.vit
    assert rec.gp[0].tolist() == g.gp
    assert rec.base[0].tolist() == g.base
    assert rec.room[0].tolist() == g.room
    assert rec.duels_stance[0].tolist() == g.duels_stance
    assert rec.duels_tmpl[0].tolist() == g.duels_tmpl
    assert rec.captures_t[0].tolist() == g.captures_t
    assert rec.bought[0].tolist() == [list(row) for row in g.bought]
    return g


__all__ = ["Scripted", "new_game", "params_of", "play", "scenario_data", "uniforms", "kernel_matches_reference",
           "kernel_turn", "play_both"]
