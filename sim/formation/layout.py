"""The fixed layout of uniform draws shared by the reference and the kernel (STYLE.md practice 6).

A chunk of ``n`` runs draws, in this order, from its own Generator (R-GEN-7):

1. ``rng.random((n, AMBUSH_COLS))``: the ambush check (R-MDK-12, R-MDK-20): columns 0, 1 the
   ambushers' two dark dice, columns 2, 3 the defenders'.
2. ``rng.random((n, 2 * session.checks))``: the session's 2DR rolls (R-MDK-21), die pairs.
3. only if the skirmish is enabled, one block per round ``rng.random((n, UNIT_COLS * n_units))``;
   unit ``j`` reads columns ``j * UNIT_COLS + offset`` with the offsets below. The kernel stops
   drawing once every run has finished (nothing is drawn after the skirmish), the reference draws
   all ``max_rounds`` blocks up front: the runs read identical numbers either way.

Every column is read as a die with :func:`sim.dice.faces_from_uniform`, except the victim column,
which is compared with 0.5, and the random-target column (floor(u × number of candidates)).
"""

from __future__ import annotations

AMBUSH_COLS = 4

UNIT_COLS = 11
ATTACK_DICE = (0, 1)  # the acting unit's 2DR (attack or grapple check), R-MDK-1
DEFENSE_DICE = (2, 3)  # the victim's 2DR (evade), R-MDK-2
TARGET_PICK = 4  # the "random" target policy
VICTIM_PICK = 5  # R-MDK-10: an attack at a grappled pair picks its victim at random
ROLEPLAY_D4 = 6  # R-MDK-13: 1d4 − 1 for training and service checks
LEAVE_DICE = (7, 8)  # R-MDK-10: the grappled unit's 2DR to leave (体力 or 自尊 focus)
HOLD_DICE = (9, 10)  # R-MDK-10: the grappler's 2DR (体力) resisting an assault leave


def session_cols(checks: int) -> int:
    return 2 * int(checks)


def round_cols(n_units: int) -> int:
    return UNIT_COLS * int(n_units)
