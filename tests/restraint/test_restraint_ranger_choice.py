"""R-RST-31 (settled 2026-12-05): a ranger in favoured terrain chooses its escape ability without the terrain bonus,
spends a use when that probability is below 1/2, and keeps the ability it chose (as R-ESC-31), in the reference, the
kernel and the exact engine."""

from __future__ import annotations

import numpy as np
from restraint_helpers import make

import sim
from sim.restraint import kernel as K
from sim.restraint import reference as ref
from sim.restraint.rules import compile_params
from sim.restraint.state import draw_uniforms

# A level-1 ranger (proficiency 2: terrain bonus 2 × 2 = 4, two uses) with arms heavy and nothing else; condition
# "none", so the binder cannot bind it (R-RST-9) and only the escape acts. Arms heavy: DC 10 + 4 × 3 = 22 (R-RST-2).
# str 28 − 6 (arms heavy, R-RST-5) = 22, mod +6, with the penalty die of arms heavy: P = ((21 − 16) / 20)² = 25/400.
# dex 18 − 4 = 14, mod +2, no die: P = (21 − 20) / 20 = 20/400. int 10, mod 0: P = 0 (needs 22).
# Without the bonus str is best (0.0625 < 1/2, so a use is spent). With the +4 str needs 12: (9/20)² = 81/400 =
# 0.2025; dex would need 16: 5/20 = 0.25, better, but the ranger keeps str (R-RST-31).
RANGER = {"run": {"rounds": 1},
          "target": {"class": "ranger", "level": 1, "favoured_terrain": True, "condition": "none",
                     "scores": {"str": 28, "dex": 18, "int": 10}, "restraints": {"arms": 3}}}
ARMS = 0


def test_r_rst_31_ranger_keeps_the_ability_chosen_without_the_bonus_exact():
    """The exact P(arms heavy → moderate in round 1) is str's with the bonus, 81/400, not dex's 100/400."""
    s = make(**RANGER)
    arms = sim.exact(s)["level_distribution_by_round"]["arms"][0]
    assert np.isclose(arms[2], 81 / 400) and np.isclose(arms[3], 319 / 400), arms


def test_r_rst_31_ranger_keeps_the_ability_chosen_without_the_bonus_both_engines():
    """Every d20 shows 12. str (kept with the ranger): 12 + 6 + 4 = 22 >= 22, a success (arms 3 → 2, one use spent).
    dex, had the ranger switched to it with the bonus: 12 + 2 + 4 = 18, a failure."""
    p = compile_params(make(**RANGER))
    assert (p.ranger_bonus, p.ranger_uses) == (4, 2)
    row = np.full(draw_uniforms(p, 1, np.random.default_rng(1)).shape[-1], (12 - 0.5) / 20)
    t = ref.new_target(p)
    ref.target_turn(p, t, ref.faces_from_uniform(row[: ref.R.COL_STIMULUS], 20))
    k_const, *_ = K.compile_arrays(p)
    T = np.zeros(K.N_T, dtype=np.int64)
    T[: K.N_SLOTS] = p.initial_levels
    T[K.T_RAGES], T[K.T_RANGER] = p.rages, p.ranger_uses
    K.target_turn(k_const, K.check_table(), T, row, *K.work_arrays())
    assert t.levels[ARMS] == 2 and t.ranger == 1 and t.successes == 1
    assert T[ARMS] == 2 and T[K.T_RANGER] == 1 and T[K.T_SUCCESSES] == 1
