"""The scalar reference and the compiled kernel agree run for run and step by step on the same draws
(STYLE.md practice 6), and results do not depend on n_jobs (R-GEN-7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from examples import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from restraint_helpers import CASES, make, scenario_data

import sim
from sim.restraint import kernel as K
from sim.restraint import reference as ref
from sim.restraint.columns import RUN_STATS
from sim.restraint.kernel import run_kernel
from sim.restraint.model import SLOTS
from sim.restraint.reference import run_reference
from sim.restraint.rules import compile_params
from sim.restraint.state import draw_uniforms
from sim.scenario import parse_scenario

SCENARIO_DIR = ROOT / "scenarios" / "restraint"



def assert_traces_equal(a, b):
    """Every per-run statistic of sim/restraint/columns.py, by-round ones included, with the same type."""
    assert set(a) == set(b) == {s.name for s in RUN_STATS}
    for s in RUN_STATS:
        x, y = a[s.name], b[s.name]
        assert x.dtype == y.dtype == s.dtype, s.name
        np.testing.assert_array_equal(x, y, err_msg=s.name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_equals_kernel_on_same_draws(case):
    """STYLE 6 (R-RST-3 … R-RST-31): identical per-run traces from the same uniform block."""
    p = compile_params(make(**CASES[case]))
    u = draw_uniforms(p, 400, np.random.default_rng(2024))
    assert_traces_equal(run_kernel(p, u), run_reference(p, u))


@pytest.mark.parametrize("path", sorted(SCENARIO_DIR.glob("*.toml")), ids=lambda q: q.stem)
def test_reference_equals_kernel_example_scenarios(path):
    """Every example scenario: reference == kernel on the same draws."""
    p = compile_params(sim.load_scenario(path))
    u = draw_uniforms(p, 300, np.random.default_rng(7))
    assert_traces_equal(run_kernel(p, u), run_reference(p, u))


@pytest.mark.parametrize("value", [0.0, 0.999999])
def test_reference_equals_kernel_extreme_draws(value):
    """All ones and all twenties: both engines read the same faces from the same columns."""
    p = compile_params(make(**CASES["barbarian_pool"]))
    u = np.full((p.horizon, 5, p.n_cols), value)
    assert_traces_equal(run_kernel(p, u), run_reference(p, u))


level = st.integers(0, 5)
scores = st.fixed_dictionaries({a: st.integers(1, 22) for a in ("str", "dex", "con", "int", "wis", "cha")})


@st.composite
def random_scenarios(draw):
    cls = draw(st.sampled_from(["barbarian", "ranger", "rogue", "druid", "fighter", "wizard"]))
    restraints = draw(st.fixed_dictionaries({s: level for s in SLOTS}))
    slots = draw(st.lists(st.sampled_from(SLOTS), unique=True, max_size=4))
    over = {
        "run": {"rounds": draw(st.integers(1, 6))},
        "rules": {"dice_stacking": draw(st.sampled_from(["cancel", "pool"]))},
        "binder": {
            "scores": draw(scores),
            "method": draw(st.sampled_from(["action", "other"])),
            "flanking": draw(st.booleans()),
            "flank_choice": draw(st.sampled_from(["penalty", "extra_level"])),
            "slots": slots,
        },
        "target": {
            "class": cls,
            "level": draw(st.integers(1, 20)),
            "scores": draw(scores),
            "condition": draw(st.sampled_from(["incapacitated", "grappled", "restrained", "prone", "none"])),
            "favoured_terrain": cls == "ranger" and draw(st.booleans()),
            "initiative": draw(st.sampled_from(["binder", "target"])),
            "restraints": restraints,
        },
    }
    return parse_scenario(scenario_data(**over))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=random_scenarios(), seed=st.integers(0, 2**32 - 1))
def test_reference_equals_kernel_random_scenarios(scenario, seed):
    """Property: for any valid duel, reference == kernel on the same draws."""
    p = compile_params(scenario)
    u = draw_uniforms(p, 60, np.random.default_rng(seed))
    assert_traces_equal(run_kernel(p, u), run_reference(p, u))


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_equals_kernel_step_by_step(case):
    """Every step of the round (R-RST-13: binder turn, target turn, stimulus) leaves the compiled
    kernel's state equal to the reference's, on random draws."""
    p = compile_params(make(**CASES[case]))
    u = draw_uniforms(p, 40, np.random.default_rng(17))
    arrays = K.compile_arrays(p)
    k_const, bind_slots, initial, pool_max, pool_constant, die_sides, die_signs, focus, focus_mod, uses = arrays
    if not p.n_pools:
        focus = focus_mod = uses = pool_max = np.zeros(1, dtype=np.int64)
    table = K.check_table()
    fields = ("composure", "craving", "uses", "immune_until", "dazed_left", "overloads", "recoveries")
    for i in range(u.shape[1]):
        t = ref.new_target(p)
        T = np.zeros(K.N_T, dtype=np.int64)
        T[: K.N_SLOTS] = initial
        T[K.T_RAGES], T[K.T_RANGER] = p.rages, p.ranger_uses
        pools = np.zeros((p.n_pools + 1, K.N_PS), dtype=np.int64)
        K.init_pools(k_const, pool_max, uses, pools)
        over = np.zeros(p.n_pools, dtype=np.int16)

        def same(where, t=t, T=T, pools=pools, over=over):
            assert T.tolist() == [*t.levels, t.rages, t.ranger, t.checks, t.successes, t.bindings], where
            assert over.tolist() == t.overload_round, where
            for k, pool_state in enumerate(t.pools):
                assert pools[k].tolist() == [getattr(pool_state, f) for f in fields], (where, k)
            if t.duel is not None:  # R-RST-33: the duel pool
                assert pools[p.n_pools].tolist() == [getattr(t.duel, f) for f in fields], where

        for r in range(p.horizon):
            row = u[r, i]
            if r < p.rounds:
                d20 = ref.faces_from_uniform(row[: ref.R.COL_STIMULUS], 20)
                ref.binder_turn(p, t, d20)
                K.binder_turn(k_const, bind_slots, T, row)
                same((i, r, "binder"))
                if t.duel is None or t.duel.dazed_left == 0:  # R-RST-33: a dazed target makes no attempt
                    assert ref.target_turn(p, t, d20) == K.target_turn(k_const, table, T, row, *K.work_arrays())
                same((i, r, "target"))
            ref.composure_round(p, t, row, r + 1)
            K.composure_round(k_const, pool_max, pool_constant, die_sides, die_signs, focus, focus_mod, pools, over,
                              row, r + 1)
            same((i, r, "stimulus"))


def test_simulate_engines_give_identical_runs():
    """simulate(engine="reference") and the kernel give identical per-run rows and summaries."""
    s = make(**CASES["ranger"])
    a = sim.simulate(s, runs=300, seed=5)
    b = sim.simulate(s, runs=300, seed=5, engine="reference")
    pd.testing.assert_frame_equal(a.runs, b.runs)
    assert a.summary == b.summary


def test_simulate_same_seed_same_runs_and_seed_matters():
    """R-GEN-7: the same seed reproduces the runs; another seed does not."""
    s = make(**CASES["flank_penalty"])
    a = sim.simulate(s, runs=500, seed=1)
    b = sim.simulate(s, runs=500, seed=1)
    c = sim.simulate(s, runs=500, seed=2)
    pd.testing.assert_frame_equal(a.runs, b.runs)
    assert not a.runs.equals(c.runs)


@pytest.mark.slow
def test_n_jobs_does_not_change_results():
    """R-GEN-7: per-run results are identical for n_jobs = 1 and 2 (chunks are seeded, not workers)."""
    s = make(**CASES["composure"])
    a = sim.simulate(s, runs=20_500, seed=9, n_jobs=1)
    b = sim.simulate(s, runs=20_500, seed=9, n_jobs=2)
    pd.testing.assert_frame_equal(a.runs, b.runs)
