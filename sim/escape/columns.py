"""The escape challenge's per-run statistics (R-ESC-15), declared once (issue 23).

:data:`RUN_STATS` lists every per-run column: its name (the engine's field of that name, see
:mod:`sim.escape.kernel`), its type, its shape per run, the reference's attribute holding it, how the runs frame
shows it and which sum over runs the streaming aggregate keeps. The engine's output allocation
(:func:`allocate`, :func:`columns_from_batch`), the reference's columns (:func:`columns_from_states`), the runs
frame (:func:`runs_frame`) and the aggregate (:mod:`sim.escape.aggregate`) all read this table, so a new
statistic is written where the engine counts it, where the reference counts it, and here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pandas as pd
from numba import njit

from sim.escape.model import TIER_IDS
from sim.escape.params import EscapeParams
from sim.escape.state import ACTION_KINDS, action_kinds
from sim.frames import frame_from_blocks

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


def stat_names(shape: str) -> tuple[str, ...]:
    """The names of the statistics of ``shape``, in declaration order: the batch engine's columns of that shape
    (:mod:`sim.escape.kernel` numbers its fields from these, by name)."""
    return tuple(s.name for s in RUN_STATS if s.shape == shape)


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
def _scatter(x, rows, out):
    """``out[rows[i, k], j] = x[j, i, k]`` where ``rows[i, k] >= 0``: a statistic of shape (n, C, K) into rows of a
    frame block, in one pass over the runs (a transposing copy per column reads the runs once per column)."""
    n, C, K = x.shape
    for j in range(n):
        for i in range(C):
            for k in range(K):
                r = rows[i, k]
                if r >= 0:
                    out[r, j] = x[j, i, k]


@njit(cache=True, nogil=True)
def _scatter_party(x, rows, out):
    """``out[rows[k], j] = sum over i of x[j, i, k]`` where ``rows[k] >= 0``: the party's totals into rows of a
    frame block, in one pass over the runs (numpy's sum over the middle axis with a wider type was slow)."""
    n, C, K = x.shape
    for j in range(n):
        for k in range(K):
            r = rows[k]
            if r >= 0:
                total = 0
                for i in range(C):
                    total += x[j, i, k]
                out[r, j] = total


class FrameLayout(NamedTuple):
    """Where each column of the runs frame comes from. The columns of one numpy type share one block (a row per
    column, in frame order), filled in place and handed to pandas as it is: the frame is built without copying any
    column twice (from a dict of columns pandas stacks those of each type into such a block, a second copy)."""

    names: tuple[str, ...]  # the frame's columns, in order
    types: tuple[np.dtype, ...]  # the numpy type of each block
    positions: tuple[np.ndarray, ...]  # per block, the frame position of each of its rows
    run: tuple[int, int]  # (block, row) of the column "run"
    plain: tuple[tuple[str, int, int], ...]  # COLUMN statistics: (statistic, block, row)
    per_char: tuple[tuple[str, int, np.ndarray], ...]  # (statistic, block, rows (C, K), -1 where not shown)
    party: tuple[tuple[str, int, np.ndarray], ...]  # (statistic, block, rows (K,), -1 where not shown)
    outcome: tuple[tuple[str, int], ...]  # (statistic, frame position): categorical
    freed: tuple[tuple[str, int, int], ...]  # (statistic, character, frame position): nullable, missing where 0


def frame_layout(p: EscapeParams) -> FrameLayout:
    """The runs frame's columns (R-ESC-15): run, the RUN statistics, the party's totals by tier (tier by tier), each
    character's statistics, the party's actions by kind (the R-ESC-14b class actions only in the reading that has
    them)."""
    return _frame_layout(tuple(p.names), tuple(action_kinds(p)))


@lru_cache(maxsize=64)
def _frame_layout(names: tuple[str, ...], shown: tuple[str, ...]) -> FrameLayout:
    columns: list[tuple[str, type | None, tuple]] = [("run", np.int64, ("run",))]  # (name, numpy type, source)
    for s in RUN_STATS:
        if s.frame == OUTCOME:
            columns.append((s.name, None, ("outcome", s)))
        elif s.frame == COLUMN:
            columns.append((s.name, s.dtype, ("plain", s)))
    party = [s for s in RUN_STATS if s.frame == PARTY_TIER]
    for t in range(1, 9):
        for s in party:
            columns.append((f"{s.label or s.name}_{TIER_IDS[t]}", s.frame_dtype or s.dtype, ("party", s, t)))
    for i, name in enumerate(names):
        for s in RUN_STATS:
            if s.frame == FREED:
                columns.append((f"{name}.{s.name}", None, ("freed", s, i)))
            elif s.frame == PER_CHAR:
                columns.append((f"{name}.{s.label or s.name}", s.dtype, ("per_char", s, i, 0)))
        for s in RUN_STATS:
            if s.frame == PER_CHAR_TIER:
                for t in range(1, 9):
                    columns.append((f"{name}.{s.label or s.name}_{TIER_IDS[t]}", s.dtype, ("per_char", s, i, t)))
    for s in RUN_STATS:
        if s.frame == PARTY_KIND:
            for k, kind in enumerate(ACTION_KINDS):
                if kind in shown:
                    columns.append((f"{s.label or s.name}_{kind}", s.frame_dtype or s.dtype, ("party", s, k)))

    C = len(names)
    types = list(dict.fromkeys(np.dtype(t) for _, t, _ in columns if t is not None))
    positions: list[list[int]] = [[] for _ in types]
    run, plain, outcome, freed = (0, 0), [], [], []
    per_char: dict[str, tuple[int, np.ndarray]] = {}
    party_rows: dict[str, tuple[int, np.ndarray]] = {}
    for pos, (_, dtype, src) in enumerate(columns):
        kind, s = src[0], src[1] if len(src) > 1 else None
        if kind == "outcome":
            outcome.append((s.name, pos))
            continue
        if kind == "freed":
            freed.append((s.name, src[2], pos))
            continue
        b = types.index(np.dtype(dtype))
        row = len(positions[b])
        positions[b].append(pos)
        if kind == "run":
            run = (b, row)
        elif kind == "plain":
            plain.append((s.name, b, row))
        elif kind == "per_char":
            width = int(np.prod(per_run_shape(s, C)[1:]))
            per_char.setdefault(s.name, (b, np.full((C, width), -1, dtype=np.int64)))[1][src[2], src[3]] = row
        else:
            width = per_run_shape(s, C)[-1]
            party_rows.setdefault(s.name, (b, np.full(width, -1, dtype=np.int64)))[1][src[2]] = row
    return FrameLayout(tuple(n for n, _, _ in columns), tuple(types),
                       tuple(np.array(x, dtype=np.int64) for x in positions), run, tuple(plain),
                       tuple((k, b, r) for k, (b, r) in per_char.items()),
                       tuple((k, b, r) for k, (b, r) in party_rows.items()), tuple(outcome), tuple(freed))


class RunsFrame:
    """The runs frame of ``n`` runs from run ``start`` (R-ESC-15), filled chunk by chunk (:meth:`fill`, each chunk
    while it is fresh in the cache) and made once (:meth:`frame`). Each block of the frame is written once, in one
    pass over the runs per statistic, and handed to pandas without a copy."""

    def __init__(self, p: EscapeParams, n: int, start: int = 0):
        self.lay = lay = frame_layout(p)
        self.n, self.n_chars = n, p.n_chars
        self.blocks = [np.empty((len(pos), n), dtype=t) for t, pos in zip(lay.types, lay.positions, strict=True)]
        b, row = lay.run
        self.blocks[b][row] = np.arange(start, start + n, dtype=np.int64)
        self.codes = {name: np.empty(n, dtype=np.int8) for name, _ in lay.outcome}  # categorical codes
        # (C, n): each character's freed round as a contiguous row
        self.freed = {name: np.empty((p.n_chars, n), dtype=np.int64) for name, _, _ in lay.freed}
        self.char_rows = np.arange(p.n_chars, dtype=np.int64).reshape(-1, 1)  # character i to row i

    def fill(self, cols: dict[str, np.ndarray], at: int = 0) -> RunsFrame:
        """The rows of the runs ``at`` .. ``at + len(cols)`` from their per-run columns."""
        m = len(cols["outcome"])
        runs = slice(at, at + m)
        blocks, C = self.blocks, self.n_chars
        for name, b, row in self.lay.plain:
            blocks[b][row, runs] = cols[name]
        for name, b, rows in self.lay.per_char:
            _scatter(cols[name].reshape(m, C, -1), rows, blocks[b][:, runs])
        for name, b, rows in self.lay.party:
            _scatter_party(cols[name], rows, blocks[b][:, runs])
        for name, codes in self.codes.items():
            np.subtract(cols[name], 1, out=codes[runs])  # outcome code 1 is the first category
        for name, out in self.freed.items():
            _scatter(cols[name].reshape(m, C, 1), self.char_rows, out[:, runs])
        return self

    def frame(self) -> pd.DataFrame:
        extension = []  # (array, frame position)
        for name, pos in self.lay.outcome:
            extension.append((pd.Categorical.from_codes(self.codes[name], list(OUTCOME_NAMES)), pos))
        for name, i, pos in self.lay.freed:
            fr = self.freed[name][i]
            extension.append((pd.arrays.IntegerArray(fr, fr == 0), pos))  # 0: never freed (missing)
        return _frame_from_blocks(self.lay, self.blocks, extension, self.n)


def runs_frame(p: EscapeParams, cols: dict[str, np.ndarray], start: int = 0) -> pd.DataFrame:
    """Per-run rows (R-ESC-15); ``start`` is the index of the first run (a chunk's position). Columns as
    :func:`frame_layout` lists them."""
    return RunsFrame(p, len(cols["outcome"]), start).fill(cols).frame()


def _frame_from_blocks(lay: FrameLayout, blocks: list[np.ndarray], extension: list, n: int) -> pd.DataFrame:
    """The frame of ``blocks`` (rows placed at ``lay.positions``) and the extension columns ``(array, position)``,
    sharing their memory (:func:`sim.frames.frame_from_blocks`)."""
    parts = [(block, pos) for block, pos in zip(blocks, lay.positions, strict=True) if len(pos)]
    parts += [(array, np.array([pos], dtype=np.int64)) for array, pos in extension]
    return frame_from_blocks(parts, lay.names, n)
