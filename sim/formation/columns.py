"""The formation play's per-run statistics (R-MDK-14: the ambush, the session's DP, the skirmish), declared once
(issue 23).

:data:`RUN_STATS` lists every per-run column: its name (the key under which the engine's step and the reference's
run return it), its type, the step of the play that gives it, its value when that step is not played, how the runs
frame shows it and whether the aggregate keeps its sum over runs. The engine's output allocation
(:func:`allocate`, :func:`fill`, read by :func:`sim.formation.kernel.run_chunk_kernel`), the reference's columns
(:func:`columns_from_records`), the runs frame (:func:`runs_frame`) and the aggregate
(:mod:`sim.formation.aggregate`) all read this table, so a new statistic is written where the engine counts it,
where the reference counts it, and here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from sim.formation.model import Params

# the steps of a play (R-MDK-14), in the order the engines play them
AMBUSH, SESSION, SKIRMISH = "ambush", "session", "skirmish"
# how the runs frame shows a statistic
COLUMN = "column"  # one column of that name, in the column's type
WINNER = "winner"  # the skirmish's winner code as a label (WINNER_LABELS), a categorical column

NO_SKIRMISH = -1  # winner code of a play without a skirmish (sim.formation.kernel.NO_SKIRMISH)
WINNER_LABELS = {0: "A", 1: "B", 2: "draw", NO_SKIRMISH: "none"}
WINNER_CATEGORIES = ["A", "B", "draw", "none"]


class RunStat(NamedTuple):
    name: str  # key of the per-run columns; the key of the engine's step output and of the reference's record
    dtype: type  # numpy type of the column
    step: str  # the step of the play that gives it (AMBUSH, SESSION, SKIRMISH)
    frame: str = COLUMN  # how runs_frame shows it (the constants above)
    total: bool = False  # the aggregate keeps its sum over runs (an exact int) in ``sums[name]``; the others it
    #                      folds its own way (the session's DP and the skirmish's winner and rounds as histograms)
    empty: int = 0  # the value when its step is not played (a scenario without a skirmish)


RUN_STATS: tuple[RunStat, ...] = (
    # R-MDK-12, R-MDK-20: the ambush check, its totals and whether the ambushers won (by 2 or more)
    RunStat("ambush_ambusher_total", np.int64, AMBUSH),
    RunStat("ambush_defender_total", np.int64, AMBUSH),
    RunStat("ambush_win", np.bool_, AMBUSH, total=True),
    RunStat("ambush_win_by_2", np.bool_, AMBUSH, total=True),
    # R-MDK-3, R-MDK-21: the session's DP, rewards and sixes
    RunStat("dp_rewards", np.int64, SESSION),
    RunStat("dp_sixes", np.int64, SESSION),
    RunStat("dp_session", np.int64, SESSION),
    # the skirmish: winner (0 A, 1 B, 2 draw), rounds, units left on the field and withdrawn (R-MDK-5) per side,
    # side A's enslavement DP (R-MDK-3)
    RunStat("skirmish_winner", np.int64, SKIRMISH, WINNER, empty=NO_SKIRMISH),
    RunStat("skirmish_rounds", np.int64, SKIRMISH),
    RunStat("survivors_a", np.int64, SKIRMISH, total=True),
    RunStat("survivors_b", np.int64, SKIRMISH, total=True),
    RunStat("withdrawn_a", np.int64, SKIRMISH, total=True),
    RunStat("withdrawn_b", np.int64, SKIRMISH, total=True),
    RunStat("enslave_dp", np.int64, SKIRMISH, total=True),
)
STATS = {s.name: s for s in RUN_STATS}
SUMMED = tuple(s.name for s in RUN_STATS if s.total)


def played(p: Params) -> tuple[str, ...]:
    """The steps a play of ``p`` has (the skirmish only when enabled)."""
    return (AMBUSH, SESSION, SKIRMISH) if p.skirmish else (AMBUSH, SESSION)


def allocate(n: int) -> dict[str, np.ndarray]:
    """Per-run columns for ``n`` plays, each at its value for a step not played (the engine's output)."""
    return {s.name: np.full(n, s.empty, dtype=s.dtype) for s in RUN_STATS}


def step_names(step: str) -> list[str]:
    return [s.name for s in RUN_STATS if s.step == step]


def fill(cols: dict[str, np.ndarray], step: str, out: dict[str, np.ndarray]) -> None:
    """One step's output (the engine's) into the columns; it must give exactly the statistics of that step."""
    names = step_names(step)
    if sorted(out) != sorted(names):
        raise ValueError(f"the {step} step gives {sorted(out)}; sim/formation/columns.py declares {sorted(names)}")
    for name in names:
        cols[name][...] = out[name]


def columns_from_records(p: Params, records: list[dict]) -> dict[str, np.ndarray]:
    """The per-run columns of the reference's records (one dict per play, with the statistics of its steps)."""
    cols = allocate(len(records))
    names = [name for step in played(p) for name in step_names(step)]
    for i, record in enumerate(records):
        if sorted(record) != sorted(names):
            raise ValueError(f"run {i} gives {sorted(record)}; sim/formation/columns.py declares {sorted(names)}")
    for name in names:
        cols[name][...] = [record[name] for record in records]
    return cols


def copy_into(whole: dict[str, np.ndarray], part: dict[str, np.ndarray], start: int) -> None:
    """One chunk's columns into the whole run's columns (from run ``start``)."""
    for name, out in whole.items():
        block = part[name]
        out[start:start + len(block)] = block


def runs_frame(cols: dict[str, np.ndarray], start: int = 0) -> pd.DataFrame:
    """Per-run rows; ``start`` is the index of the first run (a chunk's position). Columns: run, then every
    statistic in table order, each in its type (the winner as a label)."""
    n = len(cols[RUN_STATS[0].name])
    data: dict[str, object] = {"run": np.arange(start, start + n, dtype=np.int64)}
    for s in RUN_STATS:
        x = cols[s.name]
        if s.frame == WINNER:  # codes 0, 1, 2 are the categories' first three; none is the last
            data[s.name] = pd.Categorical.from_codes(np.where(x == NO_SKIRMISH, len(WINNER_CATEGORIES) - 1, x),
                                                     WINNER_CATEGORIES)
        else:
            data[s.name] = x
    return pd.DataFrame(data)
