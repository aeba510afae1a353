"""``simulate``: run the campus game in seed chunks and build per-game rows and the summary
(R-CAM-41, R-CAM-59, SCENARIOS.md summary keys). The summary is computed from the streaming
:class:`~sim.campus.aggregate.CampusAggregate`, whether the games are kept in memory or streamed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from sim.batch import map_chunks, parquet_bytes, stream_chunks
from sim.campus.aggregate import CampusAggregate
from sim.campus.columns import allocate, copy_into, fill_rows, frame_from_rows, frame_rows, runs_frame
from sim.campus.exact import CampusExactRefused
from sim.campus.kernel import run_kernel
from sim.campus.model import OPTIMAL, STANCES, Scenario
from sim.campus.optimal import TablePolicy, solve
from sim.campus.params import CAPTURED, CLEARED, GAME_OVER, RANDOM_LAYOUT, Params, compile_params
from sim.campus.reference import games_to_arrays, run_reference
from sim.errors import ScenarioError
from sim.result import SimulationResult, provenance
from sim.stats import wilson_interval

ENGINES = ("kernel", "reference")


def _run_chunk(job: tuple, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    params, engine = job[:2]
    if engine == "kernel":
        return run_kernel(params, n, rng)
    table = job[2] if len(job) > 2 else None
    return games_to_arrays(params, run_reference(params, n, rng, table))


def _check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {ENGINES}; given {engine!r}")


def resolve_engine(scenario: Scenario, engine: str | None) -> str:
    """The engine that plays the scenario: the batch kernel by default; ``policy.name = "optimal"`` (the solved
    table, sim.campus.optimal) is played by the scalar reference only, and asking the kernel for it is refused."""
    optimal = scenario.policy.name == OPTIMAL
    if engine is None:
        return "reference" if optimal else "kernel"
    _check_engine(engine)
    if optimal and engine == "kernel":
        raise ScenarioError("the kernel plays the built-in policies; policy 'optimal' (the solved table) runs on "
                            "the reference engine", key="policy.name")
    return engine


def table_of(scenario: Scenario):
    """The solved table of optimal play for ``policy.name = "optimal"`` (solved once, refused in one line where
    the exact engine does not take the game on), else None."""
    if scenario.policy.name != OPTIMAL:
        return None
    try:
        return TablePolicy(solve(scenario)[0])
    except CampusExactRefused as exc:  # one line: why the table cannot be solved, what to run instead
        why = str(exc).split("; use Monte Carlo")[0]
        raise CampusExactRefused(f"policy 'optimal' plays the solved table of optimal play, and {why}; run the "
                                 "built-in policies (policy.name = \"builtin\")", exc.binds, exc.flag,
                                 exc.estimate) from None


def _warm_up(params: Params, n_jobs: int, engine: str) -> None:
    """Compile the kernel (or load it from numba's cache) once, before the parallel tasks start, so that on a
    fresh install they do not each compile it (time and memory)."""
    if engine == "kernel" and n_jobs != 1:
        run_kernel(params, 1, np.random.default_rng(0))


def run_arrays(params: Params, runs: int, seed: int, n_jobs: int = 1, engine: str = "kernel") -> dict:
    """Per-game arrays for ``runs`` games, chunked by :func:`sim.batch.map_chunks` (R-GEN-7): the arrays of
    :mod:`sim.campus.columns`, allocated once and filled chunk by chunk (no list of parts to join)."""
    _check_engine(engine)
    _warm_up(params, n_jobs, engine)
    whole = allocate(params, runs)
    for chunk, part in map_chunks(_run_chunk, (params, engine), runs, seed, n_jobs,
                                  threads=engine == "kernel"):  # the compiled engine releases the GIL
        copy_into(whole, part, chunk.start)
    return whole


def _ratio(num: float, den: float) -> float | None:
    return float(num / den) if den > 0 else None


def summarize(params: Params, agg: CampusAggregate, runs: int, seed: int) -> dict[str, Any]:
    """The SCENARIOS.md campus keys plus the report's aggregates and provenance, from the aggregate."""
    s = params.scenario
    n, P = agg.runs, agg.P
    fc = agg.final_counts
    clear_rate = float(fc[:, CLEARED].sum() / (n * P))
    party = float(agg.party_cleared / n)
    checks, escapes, captures, free = agg.checks_t, agg.escapes_t, agg.captures_t, agg.free_t
    duels_t, wins_t, duels_s, wins_s = agg.duels_tmpl, agg.wins_tmpl, agg.duels_stance, agg.wins_stance
    tried, won = int(agg.rescues_tried), int(agg.rescues_won)
    names = list(params.pc_names)
    summary: dict[str, Any] = {
        "kind": "campus",
        "name": s.name,
        "runs": int(runs),
        "seed": int(seed),
        "clear_rate": clear_rate,
        # the per-game cleared fraction lies in [0, 1], so a Wilson interval on `runs` games is conservative
        "clear_rate_ci": wilson_interval(clear_rate * runs, runs),
        "party_clear_rate": party,
        "party_clear_rate_ci": wilson_interval(party * runs, runs),
        "game_over_rate": float(fc[:, GAME_OVER].sum() / (n * P)),
        "capture_by_turn": [float(x / n) for x in captures],
        # R-CAM-59: all escape checks of turn t pooled over runs; null where none happened
        "escape_success_by_turn": [_ratio(e, c) for e, c in zip(escapes, checks, strict=True)],
        "escape_checks_by_turn": [float(x / n) for x in checks],
        "capture_hazard_by_turn": [_ratio(c, f) for c, f in zip(captures, free, strict=True)],
        "captured_at_end_rate": float(fc[:, CAPTURED].sum() / (n * P)),
        "pc_names": names,
        "clear_rate_by_pc": {nm: float(fc[i, CLEARED] / n) for i, nm in enumerate(names)},
        "game_over_rate_by_pc": {nm: float(fc[i, GAME_OVER] / n) for i, nm in enumerate(names)},
        "mean_vitality_end_by_pc": {nm: float(agg.vitality_sum[i] / n) for i, nm in enumerate(names)},
        "mean_gp_end_by_pc": {nm: float(agg.gp_sum[i] / n) for i, nm in enumerate(names)},
        "win_rate_by_adversary": {
            nm: _ratio(wins_t[k], duels_t[k]) for k, nm in enumerate(params.template_names)
        },
        "duels_per_game_by_adversary": {
            nm: float(duels_t[k] / runs) for k, nm in enumerate(params.template_names)
        },
        "win_rate_by_stance": {st: _ratio(wins_s[k], duels_s[k]) for k, st in enumerate(STANCES)},
        "duels_per_game_by_stance": {st: float(duels_s[k] / runs) for k, st in enumerate(STANCES)},
        "rescues_tried_per_game": tried / runs,
        "rescue_success_rate": _ratio(won, tried),
        "mean_turns": params.T,
    }
    if params.B:  # R-CAM-9a: per buy-list item, the share of PCs (over games) that bought it and the mean turn
        summary["bought_rate_by_item"] = {
            item: float(agg.bought_count[b] / (n * P)) for b, item in enumerate(params.buy_names)}
        summary["bought_turn_by_item"] = {
            item: _ratio(agg.bought_turn_sum[b], agg.bought_count[b]) for b, item in enumerate(params.buy_names)}
    summary.update(provenance(s, seed, runs))
    # which uniform decides what (sim.campus.params): a new layout changes every per-run result once
    summary["random_layout"] = RANDOM_LAYOUT
    summary["reading"] = {"miso_in_missions": bool(params.miso_in_missions)}  # R-CAM-25a: the rule reading in effect
    if s.policy.name == OPTIMAL:
        summary["policy"] = OPTIMAL  # the solved table of optimal play (sim.campus.optimal.TablePolicy)
    return summary


def simulate(scenario: Scenario, runs: int, seed: int, n_jobs: int = 1, engine: str | None = None,
             keep_runs: bool = True, runs_sink: Callable[[int, bytes], None] | None = None,
             **options) -> SimulationResult:
    """Simulate ``runs`` campus games (R-CAM-41). ``engine`` selects the compiled batch kernel (default) or
    the scalar reference; both give identical per-game results for the same seed. None: the kernel, or the
    reference for ``policy.name = "optimal"`` (the solved table of optimal play, played by the reference only).

    ``keep_runs=False`` streams: each chunk is folded into the aggregate (summary and report need
    nothing else) and, with ``runs_sink``, handed over as one parquet part ``runs_sink(chunk index,
    parquet bytes)``; ``result.runs`` is then empty and the memory stays that of a few chunks. Either
    way ``result.extra["aggregate"]`` holds the :class:`CampusAggregate` the summary is computed from."""
    if options:
        raise TypeError(f"unknown simulate option(s) for campus: {', '.join(sorted(options))}")
    engine = resolve_engine(scenario, engine)
    params = compile_params(scenario)
    table = table_of(scenario)
    runs, seed = int(runs), int(seed)
    agg = CampusAggregate.empty(params)
    result = SimulationResult(scenario=scenario, runs=pd.DataFrame(), summary={}, extra={"engine": engine})
    if keep_runs:
        _warm_up(params, n_jobs, engine)
        rows = frame_rows(params, runs)  # each chunk goes into the frame's rows as it comes (no joined copy)
        for chunk, part in map_chunks(_run_chunk, (params, engine, table), runs, seed, n_jobs,
                                      threads=engine == "kernel"):
            agg.add(part)
            fill_rows(rows, part, chunk.start)
        result.runs = frame_from_rows(params, rows)
    else:
        job = (params, engine, runs_sink is not None, table)
        _warm_up(params, n_jobs, engine)
        stream_chunks(_stream_task, job, runs, seed, n_jobs, agg, runs_sink, threads=engine == "kernel")
    result.summary = summarize(params, agg, runs, seed)
    result.extra["aggregate"] = agg
    return result


def _stream_task(job, chunk, rng):
    """One chunk reduced to (its aggregate, its games as parquet bytes or None): small to store and send."""
    params, engine, want_runs, table = job
    arrays = _run_chunk((params, engine, table), chunk.n_runs, rng)
    part = None
    if want_runs:
        part = parquet_bytes(runs_frame(params, arrays, chunk.start))
    return CampusAggregate.empty(params).add(arrays), part


_stream_task.wants_chunk = True
