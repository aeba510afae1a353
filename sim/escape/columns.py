"""The escape challenge's per-run statistics (R-ESC-15), declared once (issue 23).

:data:`RUN_STATS` lists every per-run column: its name (the engine's field of that name, see
:mod:`sim.escape.kernel`), its type, its shape per run, the reference's attribute holding it, how the runs frame
shows it and which sum over runs the streaming aggregate keeps. The engine's output allocation
(:func:`allocate`, :func:`columns_from_batch`), the reference's columns (:func:`columns_from_states`), the runs
frame (:func:`runs_frame`) and the aggregate (:mod:`sim.escape.aggregate`) all read this table, so a new
statistic is written where the engine counts it, where the reference counts it, and here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from numba import njit

from sim.escape.model import TIER_IDS
from sim.escape.params import EscapeParams
from sim.escape.state import ACTION_KINDS, action_kinds

# shapes per run
RUN, CHAR, CHAR_TIER, CHAR_KIND = "run", "char", "char_tier", "char_kind"
# how the runs frame shows a statistic
COLUMN = "column"  # one column of that name
OUTCOME = "outcome"  # the outcome's name (a categorical column)
HIDDEN = "hidden"  # not in the frame (the aggregate reads it)
PER_CHAR = "per_char"  # "<character>.<name>" (``label`` replaces the name)
FREED = "freed"  # "<character>.<name>", missing (never freed) where 0
PER_CHAR_TIER = "per_char_tier"  # "<character>.<label>_<tier>" for the tiers light (1) .. utter (8)
PARTY_TIER = "party_tier"  # "<label>_<tier>": the party's total by tier
PARTY_KIND = "party_kind"  # "<label>_<kind>": the party's total by action kind (the kinds of the reading)

OUTCOME_NAMES = ("escaped", "caught", "timeout")  # outcome codes 1, 2, 3 (sim.escape.kernel)


class RunStat(NamedTuple):
    name: str  # key of the per-run columns; the engine's field of that name
    dtype: type  # numpy type of the column
    shape: str  # RUN (n,), CHAR (n, C), CHAR_TIER (n, C, 9), CHAR_KIND (n, C, len(ACTION_KINDS))
    reference: str  # attribute of the reference's PartyState (RUN) or CharState (the others)
    frame: str  # how runs_frame shows it (the constants above)
    label: str = ""  # the frame's name stem, when not ``name``
    total: str = ""  # the aggregate's attribute keeping its sum over runs (without the run axis); "" when the
    #                  aggregate folds it its own way (outcome, rounds, attention, first round, freed round)
    frame_dtype: type | None = None  # the frame column's type, when not ``dtype``


RUN_STATS: tuple[RunStat, ...] = (
    RunStat("outcome", np.int8, RUN, "outcome", OUTCOME),
    RunStat("rounds", np.int32, RUN, "round", COLUMN),
    RunStat("attention", np.int64, RUN, "attention", COLUMN),
    # round 1: 0 no check, 1 checks and no success, 2 a success (the first-check advantage of the report)
    RunStat("first_round", np.int8, RUN, "first_round", HIDDEN),
    RunStat("freed_round", np.int32, CHAR, "freed_round", FREED),
    RunStat("checks", np.int32, CHAR, "checks", PER_CHAR, total="checks"),
    RunStat("successes", np.int32, CHAR, "successes", PER_CHAR, total="successes"),
    RunStat("overloads", np.int32, CHAR, "overloads", PER_CHAR, total="overloads"),
    RunStat("items_found", np.int32, CHAR, "items_found", PER_CHAR, total="items_found"),
    RunStat("rounds_at_tier", np.int32, CHAR_TIER, "rounds_at_tier", PER_CHAR_TIER, "rounds", "rounds_at_tier"),
    RunStat("checks_at_tier", np.int32, CHAR_TIER, "checks_at_tier", PARTY_TIER, "checks", "checks_at_tier",
            np.int64),
    RunStat("successes_at_tier", np.int32, CHAR_TIER, "successes_at_tier", PARTY_TIER, "successes",
            "successes_at_tier", np.int64),
    # actions declared while not dazed, in ACTION_KINDS order
    RunStat("action_counts", np.int32, CHAR_KIND, "actions_taken", PARTY_KIND, "actions", "actions"),
)
STATS = {s.name: s for s in RUN_STATS}


def per_run_shape(stat: RunStat, n_chars: int) -> tuple[int, ...]:
    """The shape of one run's value of ``stat``."""
    return {RUN: (), CHAR: (n_chars,), CHAR_TIER: (n_chars, 9), CHAR_KIND: (n_chars, len(ACTION_KINDS))}[stat.shape]


def allocate(p: EscapeParams, n: int) -> dict[str, np.ndarray]:
    """Empty per-run columns for ``n`` runs (the engine's output, and the whole run's when runs are kept)."""
    return {s.name: np.empty((n, *per_run_shape(s, p.n_chars)), dtype=s.dtype) for s in RUN_STATS}


def columns_from_batch(st) -> dict[str, np.ndarray]:
    """The per-run columns of a played engine batch (:class:`sim.escape.kernel.Batch`): views of its arrays where
    the type already fits (copying the per-character and per-tier fields cost a tenth of the engine's time)."""
    return {s.name: (st.action_counts if s.name == "action_counts" else st.field(s.name)).astype(s.dtype, copy=False)
            for s in RUN_STATS}


def columns_from_states(p: EscapeParams, states) -> dict[str, np.ndarray]:
    """The per-run columns of the reference's finished :class:`sim.escape.state.PartyState` list."""
    cols = allocate(p, len(states))
    codes = {name: code for code, name in enumerate(OUTCOME_NAMES, start=1)}
    for j, state in enumerate(states):
        for s in RUN_STATS:
            if s.shape == RUN:
                value = getattr(state, s.reference)
                cols[s.name][j] = codes[value] if s.name == "outcome" else value
            else:
                cols[s.name][j] = [getattr(c, s.reference) for c in state.chars]
    return cols


def copy_into(whole: dict[str, np.ndarray], part: dict[str, np.ndarray], start: int) -> None:
    """One chunk's columns into the whole run's columns (from run ``start``)."""
    for name, out in whole.items():
        block = part[name]
        out[start:start + len(block)] = block


@njit(cache=True, nogil=True)
def _by_char(x, out):
    """``out[i, k, j] = x[j, i, k]``: a statistic of shape (n, C, K) as contiguous rows by character (one pass over
    the runs; numpy's transposing copy reads the runs K * C times)."""
    n, C, K = x.shape
    for j in range(n):
        for i in range(C):
            for k in range(K):
                out[i, k, j] = x[j, i, k]


@njit(cache=True, nogil=True)
def _party_totals(x, out):
    """``out[k, j] = sum over i of x[j, i, k]``: the party's totals as contiguous rows (numpy's sum over the middle
    axis with a wider type took most of the frame's time)."""
    n, C, K = x.shape
    for j in range(n):
        for k in range(K):
            total = 0
            for i in range(C):
                total += x[j, i, k]
            out[k, j] = total


def by_char(x: np.ndarray) -> np.ndarray:
    """A (n, C) or (n, C, K) statistic as (C, n) or (C, K, n), contiguous."""
    x3 = x.reshape(x.shape[0], x.shape[1], -1)
    out = np.empty((x3.shape[1], x3.shape[2], x3.shape[0]), dtype=x.dtype)
    _by_char(x3, out)
    return out.reshape(x.shape[1:] + x.shape[:1])


def party_totals(x: np.ndarray, dtype) -> np.ndarray:
    """A (n, C, K) statistic summed over the party, as (K, n) of ``dtype``, contiguous."""
    out = np.empty((x.shape[2], x.shape[0]), dtype=dtype)
    _party_totals(x, out)
    return out


def runs_frame(p: EscapeParams, cols: dict[str, np.ndarray], start: int = 0) -> pd.DataFrame:
    """Per-run rows (R-ESC-15); ``start`` is the index of the first run (a chunk's position). Columns: run, the
    RUN statistics, the party's totals by tier (tier by tier), each character's statistics, the party's actions
    by kind. Every column is built contiguous in its final type, so pandas copies each once."""
    n = len(cols["outcome"])
    data: dict[str, object] = {"run": np.arange(start, start + n, dtype=np.int64)}
    for s in RUN_STATS:
        if s.frame == OUTCOME:
            data[s.name] = pd.Categorical.from_codes(cols[s.name] - 1, list(OUTCOME_NAMES))
        elif s.frame == COLUMN:
            data[s.name] = cols[s.name]
    party = [(s, party_totals(cols[s.name], s.frame_dtype or s.dtype))
             for s in RUN_STATS if s.frame == PARTY_TIER]  # (9, n) each
    for t in range(1, 9):
        for s, totals in party:
            data[f"{s.label or s.name}_{TIER_IDS[t]}"] = totals[t]
    per_char = {s.name: by_char(cols[s.name])  # (C, ..., n)
                for s in RUN_STATS if s.frame in (PER_CHAR, FREED, PER_CHAR_TIER)}
    for i, name in enumerate(p.names):
        for s in RUN_STATS:
            if s.frame == FREED:
                fr = per_char[s.name][i]
                data[f"{name}.{s.name}"] = pd.arrays.IntegerArray(fr.astype(np.int64), fr == 0)  # 0: never freed
            elif s.frame == PER_CHAR:
                data[f"{name}.{s.label or s.name}"] = per_char[s.name][i]
        for s in RUN_STATS:
            if s.frame == PER_CHAR_TIER:
                for t in range(1, 9):
                    data[f"{name}.{s.label or s.name}_{TIER_IDS[t]}"] = per_char[s.name][i, t]
    shown = action_kinds(p)  # the R-ESC-14b class actions only in the reading that has them
    for s in RUN_STATS:
        if s.frame == PARTY_KIND:
            totals = party_totals(cols[s.name], s.frame_dtype or s.dtype)  # (kinds, n)
            for k, kind in enumerate(ACTION_KINDS):
                if kind in shown:
                    data[f"{s.label or s.name}_{kind}"] = totals[k]
    return pd.DataFrame(data)
