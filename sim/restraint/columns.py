"""The duel's per-run statistics (R-RST-13, R-RST-26), declared once (issue 23).

:data:`RUN_STATS` lists every per-run column: its name, its type, its shape per run, where the compiled engine
keeps it (:mod:`sim.restraint.kernel`), the reference's attribute holding it (:class:`sim.restraint.reference.Target`),
how the runs frame shows it and whether the aggregate keeps its sum over runs. The engine's output allocation
(:func:`allocate`, read by :func:`sim.restraint.kernel.run_kernel`), the reference's columns
(:func:`columns_from_targets`), the runs frame (:func:`runs_frame`) and the aggregate
(:mod:`sim.restraint.aggregate`) all read this table, so a new statistic is written where the engine counts it,
where the reference counts it, and here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd
from numba import njit

from sim.restraint import rules as R
from sim.restraint.model import SLOTS
from sim.restraint.rules import Params

# shapes per run
RUN, SLOT, POOL, ROUND, ROUND_SLOT = "run", "slot", "pool", "round", "round_slot"
# how the runs frame shows a statistic
COLUMN = "column"  # one column of that name (``label`` replaces the name)
PER_SLOT = "per_slot"  # "<slot>_<label>" for the seven slots
PER_POOL = "per_pool"  # "<label>" for the target's pool, "<label>_<member>" for each party member's; the pools
#                        one after another, each with every PER_POOL statistic in table order
HIDDEN = "hidden"  # not in the frame (the aggregate reads it, or the engines' agreement tests)


class RunStat(NamedTuple):
    name: str  # key of the per-run columns
    dtype: type  # numpy type of the column
    shape: str  # RUN (n,), SLOT (n, 7), POOL (n, pools), ROUND (n, rounds), ROUND_SLOT (n, rounds, 7)
    engine: str  # where the compiled engine keeps it: a T_* entry of the duel's state (T_LEVELS its seven
    #              levels), a PS_* entry of each race pool's state (POOL) or of the duel pool's (RUN), or "" when
    #              the engine writes the column itself (or for a derived statistic)
    reference: str  # attribute of the reference's Target ("" for a derived statistic)
    frame: str  # how runs_frame shows it (the constants above)
    label: str = ""  # the frame's name (stem), when not ``name``
    total: bool = False  # the aggregate keeps its sum over runs in ``sums[name]`` (an exact int for RUN, an int64
    #                      array of the per-run shape otherwise); the other statistics it folds its own way
    when: str = ""  # the Params switch without which the frame leaves it out
    derive: Callable[[Params, dict[str, np.ndarray]], np.ndarray] | None = None  # a statistic of the others


@njit(cache=True, nogil=True)
def _first_round_at(levels, slot, at_least, always, out):
    """``out[j]``: the 1-based first round of run ``j`` with ``levels[j, r, slot] >= at_least`` (every round when
    ``always``), 0 if never; one pass over the runs (numpy's mask, any and argmax took three)."""
    n, rounds, _ = levels.shape
    for j in range(n):
        out[j] = 0
        for r in range(rounds):
            if always or levels[j, r, slot] >= at_least:
                out[j] = r + 1
                break


def first_round_at(levels: np.ndarray, slot: int, at_least: int, always: bool = False) -> np.ndarray:
    """(n,) int16: the first round each run has ``slot`` at ``at_least`` or above (or any round when ``always``),
    0 if never, from levels by round (n, rounds, 7)."""
    out = np.empty(levels.shape[0], dtype=np.int16)
    _first_round_at(np.ascontiguousarray(levels), slot, at_least, bool(always), out)
    return out


def _first_incapacitated(p: Params, cols: dict[str, np.ndarray]) -> np.ndarray:
    """R-RST-26: body >= 1, or the scenario's condition is incapacitated (every round)."""
    return first_round_at(cols["levels_by_round"], R.BODY, R.LIGHT, p.incapacitated_condition)


def _first_arms_complete(p: Params, cols: dict[str, np.ndarray]) -> np.ndarray:
    """R-RST-13: arms at complete or above."""
    return first_round_at(cols["levels_by_round"], R.ARMS, R.COMPLETE)


RUN_STATS: tuple[RunStat, ...] = (
    RunStat("levels", np.int8, SLOT, "T_LEVELS", "levels", PER_SLOT, "final"),  # R-RST-1 at the end of the duel
    RunStat("escape_checks", np.int16, RUN, "T_CHECKS", "checks", COLUMN, total=True),
    RunStat("escape_successes", np.int16, RUN, "T_SUCCESSES", "successes", COLUMN, total=True),
    RunStat("bindings_won", np.int16, RUN, "T_BINDINGS", "bindings", COLUMN, total=True),
    RunStat("rages_left", np.int8, RUN, "T_RAGES", "rages", COLUMN, total=True),  # R-RST-12
    RunStat("ranger_uses_left", np.int8, RUN, "T_RANGER", "ranger", COLUMN, total=True),  # R-RST-12
    RunStat("first_incapacitated_round", np.int16, RUN, "", "", COLUMN, derive=_first_incapacitated),  # R-RST-26
    RunStat("first_arms_complete_round", np.int16, RUN, "", "", COLUMN, derive=_first_arms_complete),
    # R-RST-21 / R-RST-24: the round of each race pool's first overload, 0 = none
    RunStat("overload_round", np.int16, POOL, "", "overload_round", PER_POOL),
    RunStat("craving", np.int32, POOL, "PS_CRAVING", "craving", PER_POOL, total=True, when="craving"),  # R-RST-22
    # R-RST-32: recoveries made in the race (only with the switch on)
    RunStat("recoveries", np.int16, POOL, "PS_RECOVERIES", "recoveries", PER_POOL, total=True, when="recoveries"),
    # R-RST-33: the target's overloads in the duel (only with the switch on)
    RunStat("overloads", np.int16, RUN, "PS_OVERLOADS", "overloads", COLUMN, total=True, when="duel_overload"),
    RunStat("composure", np.int32, POOL, "PS_COMPOSURE", "composure", HIDDEN),  # R-RST-21: composure left
    # by round: levels after both sides acted (R-RST-26), escape checks made, the target dazed (R-RST-33)
    RunStat("levels_by_round", np.int8, ROUND_SLOT, "", "levels_by_round", HIDDEN),
    RunStat("checks_by_round", np.int8, ROUND, "", "checks_by_round", HIDDEN, total=True),
    RunStat("dazed", np.bool_, ROUND, "", "dazed", HIDDEN, total=True),
)
STATS = {s.name: s for s in RUN_STATS}
TOTALS = tuple(s for s in RUN_STATS if s.total)


def per_run_shape(stat: RunStat, n_pools: int, rounds: int) -> tuple[int, ...]:
    """The shape of one run's value of ``stat`` (``n_pools`` race pools, ``rounds`` duel rounds)."""
    return {RUN: (), SLOT: (R.N_SLOTS,), POOL: (n_pools,), ROUND: (rounds,),
            ROUND_SLOT: (rounds, R.N_SLOTS)}[stat.shape]


def allocate(p: Params, n: int) -> dict[str, np.ndarray]:
    """Zeroed per-run columns for ``n`` duels (the engine's output)."""
    return {s.name: np.zeros((n, *per_run_shape(s, p.n_pools, p.rounds)), dtype=s.dtype) for s in RUN_STATS}


def derive(p: Params, cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Fill the derived statistics of ``cols`` from the others (both engines end with it); returns ``cols``."""
    for s in RUN_STATS:
        if s.derive is not None:
            cols[s.name][...] = s.derive(p, cols)
    return cols


def columns_from_targets(p: Params, targets) -> dict[str, np.ndarray]:
    """The per-run columns of the reference's finished :class:`sim.restraint.reference.Target` list."""
    cols = allocate(p, len(targets))
    for s in RUN_STATS:
        if s.reference:
            out = cols[s.name]
            for i, t in enumerate(targets):
                out[i] = getattr(t, s.reference)
    return derive(p, cols)


def shown(p: Params, stat: RunStat) -> bool:
    """Whether the runs frame shows ``stat`` under ``p`` (its switch on, not hidden)."""
    return stat.frame != HIDDEN and (not stat.when or bool(getattr(p, stat.when)))


def kept_columns(p: Params, cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The columns the runs frame shows (what a kept run keeps of a chunk)."""
    return {s.name: cols[s.name] for s in RUN_STATS if shown(p, s)}


def copy_into(whole: dict[str, np.ndarray], part: dict[str, np.ndarray], start: int) -> None:
    """One chunk's columns into the whole run's columns (from run ``start``)."""
    for name, out in whole.items():
        block = part[name]
        out[start:start + len(block)] = block


def runs_frame(p: Params, cols: dict[str, np.ndarray], start: int = 0) -> pd.DataFrame:
    """Per-run rows; ``start`` is the index of the first run (a chunk's position). Columns: run, then the shown
    statistics in table order (the PER_POOL ones together, pool by pool, where the first of them stands). Every
    column is made contiguous in its final type here, so the frame is built in one go."""
    stats = [s for s in RUN_STATS if shown(p, s)]
    n = len(cols[stats[0].name])
    data: dict[str, np.ndarray] = {"run": np.arange(start, start + n, dtype=np.int64)}
    pools_done = False
    for s in stats:
        stem = s.label or s.name
        x = cols[s.name]
        if s.frame == COLUMN:
            data[stem] = x
        elif s.frame == PER_SLOT:
            by_slot = np.ascontiguousarray(x.T)  # one transposing copy, then each slot's row is contiguous
            for i, slot in enumerate(SLOTS):
                data[f"{slot}_{stem}"] = by_slot[i]
        elif s.frame == PER_POOL and not pools_done:
            pools_done = True
            per_pool = [(q, np.ascontiguousarray(cols[q.name].T)) for q in stats if q.frame == PER_POOL]
            for pool, member in enumerate(p.pool_names):
                suffix = "" if pool == 0 else f"_{member}"
                for q, by_pool in per_pool:
                    data[f"{q.label or q.name}{suffix}"] = by_pool[pool]
    return pd.DataFrame(data)
