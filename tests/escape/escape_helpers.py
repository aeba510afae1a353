"""Test helpers for the escape kind (the shape every tests/<kind>/<kind>_helpers.py has): ``EXAMPLES`` and
``example(name)`` for the shipped scenarios, ``scenario_data(**over)`` and ``make(**over)`` for small scenarios;
then the escape builders (``character``, ``scenario(*party, **sections)``) and a scripted random source."""

from __future__ import annotations

import copy

from examples import ROOT

from sim.escape.model import Scenario
from sim.escape.params import compile_params
from sim.escape.state import initial_state
from sim.scenario import parse_scenario

EXAMPLES = ROOT / "scenarios" / "escape"
SCORES = {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 10, "cha": 10}


def example(name: str):
    """The shipped example ``scenarios/escape/<name>.toml``."""
    return EXAMPLES / f"{name}.toml"


def character(name="A", cls="fighter", level=1, restraints=None, **scores):
    ch = {"name": name, "class": cls, "level": level, "scores": {**SCORES, **scores}}
    if restraints:
        ch["restraints"] = restraints
    return ch


def scenario(*party, **sections) -> Scenario:
    data = {"kind": "escape", "name": "test", "party": list(party) or [character()]}
    data.update(sections)
    return parse_scenario(data, "test.toml")


def scenario_data(**over) -> dict:
    """An escape scenario as a dict: one level-1 fighter with plain scores, top-level keys replaced by ``over``."""
    data = {"kind": "escape", "name": "test", "party": [character()]}
    data.update(copy.deepcopy(over))
    return data


def make(**over) -> Scenario:
    """A validated escape scenario: :func:`scenario_data` parsed."""
    return parse_scenario(scenario_data(**over), "test.toml")


class Script:
    """A random source answering from lists and recording every call (for rule tests)."""

    def __init__(self, checks=(), searches=(), saves=(), rolls=None, items=(), focus=(), dice=()):
        self.dice = list(dice)  # faces of inspiration dice (R-ESC-14b)
        self.checks = list(checks)
        self.searches = list(searches)
        self.saves = list(saves)
        self.rolls = {k: list(v) for k, v in (rolls or {}).items()}
        self.items = list(items)
        self.focuses = list(focus)
        self.calls: list[tuple] = []

    def check(self, i, net, need, blessed, breath):
        self.calls.append(("check", i, net, need, blessed, breath))
        return self.checks.pop(0)

    def inspiration(self, i, sides):
        self.calls.append(("inspiration", i, sides))
        return self.dice.pop(0)

    def search(self, i, need):
        self.calls.append(("search", i, need))
        return self.searches.pop(0)

    def save(self, i, need):
        self.calls.append(("save", i, need))
        return self.saves.pop(0)

    def focus(self, i):
        self.calls.append(("focus", i))
        return self.focuses.pop(0)

    def item(self, i, weights):
        self.calls.append(("item", i, tuple(weights)))
        return self.items.pop(0)

    def roll(self, i, field, expr):
        self.calls.append(("roll", i, field))
        return self.rolls[field].pop(0)

    def of(self, kind):
        return [c for c in self.calls if c[0] == kind]


def setup(*party, **sections):
    """(params, state) for a scenario."""
    p = compile_params(scenario(*party, **sections))
    return p, initial_state(p)


