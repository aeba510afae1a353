"""The campus game's per-game statistics (R-CAM-41), declared once (issue 23).

:data:`RUN_STATS` lists every per-game column: its name (the key of both engines' per-game arrays), its type, its
shape per game, the engine's :class:`~sim.campus.kernel.Record` field and the reference's
:class:`~sim.campus.reference.Game` attribute holding it, how the runs frame shows it, and which sum over games the
streaming aggregate keeps. The engine's record (:func:`allocate`, :func:`columns_from_record`), the reference's
columns (:func:`columns_from_games`), the runs frame (:func:`runs_frame`) and the aggregate
(:mod:`sim.campus.aggregate`) all read this table, so a new statistic is written where the engine counts it, where
the reference counts it, and here.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np
import pandas as pd

from sim.campus.model import STANCES
from sim.campus.params import CAPTURED, CLEARED, GAME_OVER, STATUS_NAMES, Params
from sim.frames import frame_from_blocks

# shapes per game, by the axes after the game axis (pc: party order; turn: 1 .. T; stance: fight, flee, hide;
# template: the adversary templates of Params.template_names; item: the buy list of Params.buy_names)
RUN, PC, PC_STANCE, TURN_PC, TURN, TEMPLATE, STANCE, PC_ITEM = (
    "run", "pc", "pc_stance", "turn_pc", "turn", "template", "stance", "pc_item")
AXES = {RUN: (), PC: ("pc",), PC_STANCE: ("pc", "stance"), TURN_PC: ("turn", "pc"), TURN: ("turn",),
        TEMPLATE: ("template",), STANCE: ("stance",), PC_ITEM: ("pc", "item")}
# how the runs frame shows a statistic
COLUMN = "column"  # a column per cell, named by ``column`` (a format over the shape's axes, below)
OUTCOME = "outcome"  # a PC status (codes of STATUS_NAMES): a categorical column per PC, and the party's counts
HIDDEN = "hidden"  # not in the frame

#: the party's counts an OUTCOME statistic adds to the frame: (column, status code or None for "every PC cleared")
OUTCOME_COUNTS = (("cleared", CLEARED), ("party_cleared", None), ("game_overs", GAME_OVER),
                  ("captured_at_end", CAPTURED))


class RunStat(NamedTuple):
    name: str  # key of the per-game arrays of both engines
    dtype: type  # numpy type of the arrays (both engines)
    shape: str  # per game: RUN (), PC (P,), PC_STANCE (P, 3), TURN_PC (T, P), TURN (T,), TEMPLATE (templates,),
    #             STANCE (3,), PC_ITEM (P, B)
    engine: str  # field of the engine's Record (sim.campus.kernel)
    reference: str  # attribute of the reference's Game (sim.campus.reference)
    frame: str  # how runs_frame shows it (COLUMN, OUTCOME, HIDDEN)
    column: str  # the frame's column name: a format over the shape's axes, {pc} (0, 1, ..), {turn} (1 .. T),
    #              {stance}, {template}, {item} (names)
    frame_dtype: type  # the frame column's type (OUTCOME: the party's counts)
    turn_sum: str = ""  # TURN: the frame's column of the sum over turns ("" none), after the RUN columns before it
    total: str = ""  # the aggregate's attribute keeping its sum over games (without the game axis); "" when the
    #                  aggregate folds it its own way (``folded``) or not at all
    folded: str = ""  # the aggregate's attribute it folds its own way (counts by value: sim.campus.aggregate)


RUN_STATS: tuple[RunStat, ...] = (
    # statuses at the end (0 free, 1 captured, 2 cleared, 3 game over)
    RunStat("final_status", np.int8, PC, "status", "status", OUTCOME, "pc{pc}_outcome", np.int16,
            folded="final_counts"),
    RunStat("end_turn", np.int16, PC, "end_turn", "end_turn", COLUMN, "pc{pc}_end_turn", np.int16,
            folded="end_turn_counts"),  # the turn a PC cleared or was out (0: captured at the end)
    RunStat("vitality", np.int64, PC, "vit", "vit", COLUMN, "pc{pc}_vitality", np.int32, total="vitality_sum",
            folded="vitality_counts"),
    RunStat("gp", np.int64, PC, "gp", "gp", COLUMN, "pc{pc}_gp", np.int32, total="gp_sum"),
    RunStat("base", np.int64, PC_STANCE, "base", "base", COLUMN, "pc{pc}_{stance}", np.int32),  # final abilities
    RunStat("status_by_turn", np.int8, TURN_PC, "status_by_turn", "status_by_turn", COLUMN, "pc{pc}_t{turn}",
            np.int8, folded="status_by_turn"),
    RunStat("captures_t", np.int64, TURN, "captures_t", "captures_t", COLUMN, "captures_t{turn}", np.int16,
            turn_sum="captures", total="captures_t"),
    RunStat("rescues_tried", np.int64, RUN, "rescues_tried", "rescues_tried", COLUMN, "rescues_tried", np.int32,
            total="rescues_tried"),
    RunStat("rescues_won", np.int64, RUN, "rescues_won", "rescues_won", COLUMN, "rescues_won", np.int32,
            total="rescues_won"),
    # escape checks made and won in turn t (R-CAM-59 pools them over games)
    RunStat("checks_t", np.int64, TURN, "checks_t", "checks_t", COLUMN, "checks_t{turn}", np.int16,
            turn_sum="escape_checks", total="checks_t"),
    RunStat("escapes_t", np.int64, TURN, "escapes_t", "escapes_t", COLUMN, "escapes_t{turn}", np.int16,
            turn_sum="escapes", total="escapes_t"),
    RunStat("free_t", np.int64, TURN, "free_t", "free_t", COLUMN, "free_t{turn}", np.int16,
            total="free_t"),  # PCs free at the start of turn t
    # confrontations and wins by adversary template and by PC stance
    RunStat("duels_tmpl", np.int64, TEMPLATE, "duels_tmpl", "duels_tmpl", COLUMN, "duels_{template}", np.int16,
            total="duels_tmpl"),
    RunStat("wins_tmpl", np.int64, TEMPLATE, "wins_tmpl", "wins_tmpl", COLUMN, "wins_{template}", np.int16,
            total="wins_tmpl"),
    RunStat("duels_stance", np.int64, STANCE, "duels_stance", "duels_stance", COLUMN, "duels_stance_{stance}",
            np.int16, total="duels_stance"),
    RunStat("wins_stance", np.int64, STANCE, "wins_stance", "wins_stance", COLUMN, "wins_stance_{stance}",
            np.int16, total="wins_stance"),
    # R-CAM-9a: the turn each buy-list item was bought (0: never)
    RunStat("bought", np.int16, PC_ITEM, "bought", "bought", COLUMN, "pc{pc}_bought_{item}", np.int16,
            folded="bought_count"),
)
STATS = {s.name: s for s in RUN_STATS}


def axis_labels(p: Params) -> dict[str, list]:
    """What each axis's cells are called in a column name."""
    return {"pc": list(range(p.P)), "turn": list(range(1, p.T + 1)), "stance": list(STANCES),
            "template": list(p.template_names), "item": list(p.buy_names)}


def per_game_shape(stat: RunStat, p: Params) -> tuple[int, ...]:
    """The shape of one game's value of ``stat``."""
    return tuple(len(axis_labels(p)[axis]) for axis in AXES[stat.shape])


def column_names(stat: RunStat, p: Params) -> list[str]:
    """The frame's column of each cell of ``stat``, cells in C order (the order of :func:`by_column`'s rows)."""
    axes, labels = AXES[stat.shape], axis_labels(p)
    cells = np.ndindex(*(len(labels[a]) for a in axes)) if axes else [()]
    return [stat.column.format(**{a: labels[a][k] for a, k in zip(axes, cell, strict=True)}) for cell in cells]


def allocate(p: Params, n: int, key: str = "name") -> dict[str, np.ndarray]:
    """Zeroed per-game arrays for ``n`` games, keyed by the statistics' ``key`` (``"engine"``: the engine's
    Record fields)."""
    return {getattr(s, key): np.zeros((n, *per_game_shape(s, p)), dtype=s.dtype) for s in RUN_STATS}


def columns_from_record(rec) -> dict[str, np.ndarray]:
    """The per-game arrays of the engine's played :class:`~sim.campus.kernel.Record` (its arrays, not copies)."""
    return {s.name: getattr(rec, s.engine) for s in RUN_STATS}


def columns_from_games(p: Params, games) -> dict[str, np.ndarray]:
    """The per-game arrays of the reference's finished :class:`~sim.campus.reference.Game` list (same keys, types
    and shapes as the engine's)."""
    return {s.name: np.array([getattr(g, s.reference) for g in games], s.dtype).reshape(len(games),
                                                                                        *per_game_shape(s, p))
            for s in RUN_STATS}


def copy_into(whole: dict[str, np.ndarray], part: dict[str, np.ndarray], start: int) -> None:
    """One chunk's arrays into the whole run's arrays (from game ``start``)."""
    for name, out in whole.items():
        block = part[name]
        out[start:start + len(block)] = block


@nb.njit(cache=True, nogil=True)
def _transpose_into(x, out, at):
    """out[c, at + r] = x[r, c] in tiles of 256 rows (a cache-friendly transposed copy with conversion)."""
    n, m = x.shape
    for r0 in range(0, n, 256):
        r1 = min(r0 + 256, n)
        for c in range(m):
            for r in range(r0, r1):
                out[c, at + r] = x[r, c]


def frame_rows(p: Params, n: int) -> dict[str, np.ndarray]:
    """Empty frame rows for ``n`` games: per statistic shown, one row per cell (cells, n) of the frame's type (an
    OUTCOME statistic: its codes, int8). :func:`fill_rows` fills them, chunk by chunk when the games come in
    chunks; :func:`frame_from_rows` makes them the frame."""
    return {s.name: np.empty((math.prod(per_game_shape(s, p)), n), s.frame_dtype if s.frame == COLUMN else np.int8)
            for s in RUN_STATS if s.frame != HIDDEN}


def fill_rows(rows: dict[str, np.ndarray], a: dict[str, np.ndarray], at: int = 0) -> None:
    """The per-game arrays ``a`` (games ``at`` .. of the rows) into the frame rows, transposed and converted in one
    pass: each frame column is then a contiguous row, not a strided gather (issue 27)."""
    for name, out in rows.items():
        x = a[name]
        _transpose_into(np.ascontiguousarray(x).reshape(x.shape[0], out.shape[0]), out, at)


def runs_frame(p: Params, a: dict[str, np.ndarray], start: int = 0) -> pd.DataFrame:
    """One row per game (R-CAM-41); ``start`` is the index of the first game (a chunk's position)."""
    rows = frame_rows(p, a["final_status"].shape[0])
    fill_rows(rows, a)
    return frame_from_rows(p, rows, start)


def frame_from_rows(p: Params, rows: dict[str, np.ndarray], start: int = 0) -> pd.DataFrame:
    """The runs frame of the filled frame rows (:func:`frame_rows`); ``start`` is the index of the first game. PC
    columns are ``pc{i}_...`` in party order (names in the summary's ``pc_names``); statuses are codes 0 free,
    1 captured, 2 cleared, 3 game over.

    Columns, each section reading RUN_STATS in order: run; the party's counts of each OUTCOME statistic, the RUN
    statistics and the sums over turns (``turn_sum``); by PC, its PC and PC_STANCE statistics; the TURN_PC
    statistics (turn by turn, PC by PC); the TURN statistics (turn by turn); by template, then by stance, the
    TEMPLATE and STANCE statistics side by side; by PC and buy-list item, the PC_ITEM statistics.

    The frame is built in one go (issue 27): each statistic's rows are the frame's block for its columns as they
    are (``pandas.api.internals.create_dataframe_from_blocks``): no copy per column, nothing consolidated."""
    n = rows["final_status"].shape[1]
    shown = [s for s in RUN_STATS if s.name in rows]
    names = {s.name: column_names(s, p) for s in shown}
    blocks: list = []  # the frame's blocks: 2-D arrays (one row per column) and categorical columns
    where: dict[str, tuple[int, int]] = {}  # column -> (block, row); a name given twice: first place, last value

    def block(x) -> int:
        blocks.append(x)
        return len(blocks) - 1

    def put(name: str, b: int, row: int = 0) -> None:
        where[name] = (b, row)

    put("run", block(np.arange(start, start + n, dtype=np.int64)[None]))
    for s in shown:  # the party's counts, the RUN statistics, the sums over turns
        x = rows[s.name]
        if s.frame == OUTCOME:
            for name, code in OUTCOME_COUNTS:
                put(name, block(((x == CLEARED).all(0) if code is None else
                                 (x == code).sum(0, dtype=s.frame_dtype))[None]))
        elif s.shape == RUN:
            put(names[s.name][0], block(x))
        elif s.shape == TURN and s.turn_sum:
            put(s.turn_sum, block(x.sum(0, dtype=np.int32)[None]))
    cats = pd.CategoricalDtype(list(STATUS_NAMES))
    ids = {s.name: block(rows[s.name]) for s in shown if s.frame == COLUMN}
    for i in range(p.P):  # by PC
        for s in shown:
            if s.shape in (PC, PC_STANCE):
                k = len(rows[s.name]) // p.P  # cells per PC
                for j in range(i * k, (i + 1) * k):
                    if s.frame == OUTCOME:
                        put(names[s.name][j], block(pd.Categorical.from_codes(rows[s.name][j], dtype=cats)))
                    else:
                        put(names[s.name][j], ids[s.name], j)
    for shape in (TURN_PC, TURN):  # statistic by statistic, in C order
        for s in shown:
            if s.shape == shape:
                for j, name in enumerate(names[s.name]):
                    put(name, ids[s.name], j)
    for shape in (TEMPLATE, STANCE, PC_ITEM):  # cell by cell, the statistics of a cell side by side
        group = [s for s in shown if s.shape == shape]
        for j in range(len(rows[group[0].name]) if group else 0):
            for s in group:
                put(names[s.name][j], ids[s.name], j)
    return _frame(blocks, where, n)


def _frame(blocks: list, where: dict[str, tuple[int, int]], n: int) -> pd.DataFrame:
    """The DataFrame of ``blocks`` with the columns of ``where`` in its order (a block's rows that no column
    names are left out)."""
    placed: list[list[tuple[int, int]]] = [[] for _ in blocks]  # per block: (row, position in the frame)
    for pos, (b, row) in enumerate(where.values()):
        placed[b].append((row, pos))
    out = []
    for x, rows in zip(blocks, placed, strict=True):
        if not rows:
            continue
        rows.sort()
        if isinstance(x, np.ndarray) and [r for r, _ in rows] != list(range(len(x))):
            x = x[[r for r, _ in rows]]  # only when a column name was given twice (a copy of the rows kept)
        out.append((x, np.array([pos for _, pos in rows], dtype=np.intp)))
    return frame_from_blocks(out, list(where), n)
