"""policy.forbid = ["rage"] (issue 36, the balance audit's restricted play; docs/decisions.md "Forbidden class
actions"): a barbarian that may not rage checks as R-RST-30 would without rages; both engines and the exact
engine honour it alike."""

from __future__ import annotations

import numpy as np
import pytest
from restraint_helpers import CASES, make
from test_restraint_engines import assert_traces_equal

import sim
from sim.restraint.kernel import run_kernel
from sim.restraint.reference import run_reference
from sim.restraint.rules import compile_params
from sim.restraint.state import draw_uniforms

BARBARIANS = ("barbarian_pool", "barbarian_cancel")


def _no_rage(case: str):
    return make(**CASES[case], policy={"forbid": ["rage"]})


@pytest.mark.parametrize("case", BARBARIANS)
def test_R_RST_31_forbidden_rage_reference_equals_kernel_on_same_draws(case):
    p = compile_params(_no_rage(case))
    assert p.rages == 0 and compile_params(make(**CASES[case])).rages > 0
    u = draw_uniforms(p, 400, np.random.default_rng(2024))
    assert_traces_equal(run_kernel(p, u), run_reference(p, u))


@pytest.mark.parametrize("case", BARBARIANS)
def test_R_RST_12_a_barbarian_that_may_not_rage_escapes_as_a_fighter(case):
    """R-RST-12 gives a fighter nothing on escape checks (its feature is a weapon attack) and a barbarian only its
    rage; the duel has no composure stimulus, so the class changes nothing else: the barbarian without rage and a
    fighter with the same scores and level have the same exact duel, and it differs from the raging one."""
    data = {**CASES[case], "policy": {"forbid": ["rage"]}}
    fighter = make(**{**CASES[case], "target": {**CASES[case]["target"], "class": "fighter"}})
    without = sim.exact(make(**data))
    assert without["incapacitated_or_arms_complete_by_round"] == fighter_exact(fighter)
    assert without["incapacitated_or_arms_complete_by_round"] != \
        sim.exact(make(**CASES[case]))["incapacitated_or_arms_complete_by_round"]
    assert without["mean_rages_left"] == 0


def fighter_exact(s):
    return sim.exact(s)["incapacitated_or_arms_complete_by_round"]


def test_nothing_forbidden_is_the_unrestricted_play():
    a, b = make(**CASES["barbarian_cancel"]), make(**CASES["barbarian_cancel"], policy={"forbid": []})
    assert compile_params(a).rages == compile_params(b).rages == 6  # R-RST-12: 6 rages at level 17
    assert sim.exact(a) == sim.exact(b)
