"""``simulate``: run the campus game in seed chunks and build per-game rows and the summary
(R-CAM-41, R-CAM-59, SCENARIOS.md summary keys)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sim.batch import map_chunks
from sim.campus.kernel import run_kernel
from sim.campus.model import STANCES, Scenario
from sim.campus.params import CAPTURED, CLEARED, GAME_OVER, STATUS_NAMES, Params, compile_params
from sim.campus.reference import games_to_arrays, run_reference
from sim.result import SimulationResult, provenance
from sim.stats import wilson_interval

ENGINES = ("kernel", "reference")


def _run_chunk(job: tuple[Params, str], n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    params, engine = job
    if engine == "kernel":
        return run_kernel(params, n, rng)
    return games_to_arrays(params, run_reference(params, n, rng))


def run_arrays(params: Params, runs: int, seed: int, n_jobs: int = 1, engine: str = "kernel") -> dict:
    """Per-game arrays for ``runs`` games, chunked by :func:`sim.batch.map_chunks` (R-GEN-7)."""
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {ENGINES}; given {engine!r}")
    parts = [res for _, res in map_chunks(_run_chunk, (params, engine), runs, seed, n_jobs)]
    return {k: np.concatenate([part[k] for part in parts]) for k in parts[0]}


def runs_frame(params: Params, a: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per game (R-CAM-41). PC columns are ``pc{i}_...`` in party order (names in the
    summary's ``pc_names``); statuses are codes 0 free, 1 captured, 2 cleared, 3 game over."""
    n = a["final_status"].shape[0]
    final = a["final_status"]
    cols: dict[str, Any] = {"run": np.arange(n, dtype=np.int64)}
    cleared = final == CLEARED
    cols["cleared"] = cleared.sum(1).astype(np.int16)
    cols["party_cleared"] = cleared.all(1)
    cols["game_overs"] = (final == GAME_OVER).sum(1).astype(np.int16)
    cols["captured_at_end"] = (final == CAPTURED).sum(1).astype(np.int16)
    cols["captures"] = a["captures_t"].sum(1).astype(np.int32)
    cols["rescues_tried"] = a["rescues_tried"].astype(np.int32)
    cols["rescues_won"] = a["rescues_won"].astype(np.int32)
    cols["escape_checks"] = a["checks_t"].sum(1).astype(np.int32)
    cols["escapes"] = a["escapes_t"].sum(1).astype(np.int32)
    cats = pd.CategoricalDtype(list(STATUS_NAMES))
    for i in range(params.P):
        cols[f"pc{i}_outcome"] = pd.Categorical.from_codes(final[:, i].astype(np.int64), dtype=cats)
        cols[f"pc{i}_end_turn"] = a["end_turn"][:, i].astype(np.int16)
        cols[f"pc{i}_vitality"] = a["vitality"][:, i].astype(np.int32)
        cols[f"pc{i}_gp"] = a["gp"][:, i].astype(np.int32)
        for k, s in enumerate(STANCES):
            cols[f"pc{i}_{s}"] = a["base"][:, i, k].astype(np.int32)
    for t in range(params.T):
        for i in range(params.P):
            cols[f"pc{i}_t{t + 1}"] = a["status_by_turn"][:, t, i].astype(np.int8)
    for key in ("captures_t", "checks_t", "escapes_t", "free_t"):
        stem = key[:-2]
        for t in range(params.T):
            cols[f"{stem}_t{t + 1}"] = a[key][:, t].astype(np.int16)
    for k, name in enumerate(params.template_names):
        cols[f"duels_{name}"] = a["duels_tmpl"][:, k].astype(np.int16)
        cols[f"wins_{name}"] = a["wins_tmpl"][:, k].astype(np.int16)
    for k, s in enumerate(STANCES):
        cols[f"duels_stance_{s}"] = a["duels_stance"][:, k].astype(np.int16)
        cols[f"wins_stance_{s}"] = a["wins_stance"][:, k].astype(np.int16)
    return pd.DataFrame(cols)


def _ratio(num: float, den: float) -> float | None:
    return float(num / den) if den > 0 else None


def summarize(params: Params, a: dict[str, np.ndarray], runs: int, seed: int) -> dict[str, Any]:
    """The SCENARIOS.md campus keys plus the report's aggregates and provenance."""
    s = params.scenario
    final = a["final_status"]
    cleared = final == CLEARED
    over = final == GAME_OVER
    clear_rate = float(cleared.mean())
    party = float(cleared.all(1).mean())
    checks = a["checks_t"].sum(0)
    escapes = a["escapes_t"].sum(0)
    captures = a["captures_t"].sum(0)
    free = a["free_t"].sum(0)
    duels_t = a["duels_tmpl"].sum(0)
    wins_t = a["wins_tmpl"].sum(0)
    duels_s = a["duels_stance"].sum(0)
    wins_s = a["wins_stance"].sum(0)
    tried = int(a["rescues_tried"].sum())
    won = int(a["rescues_won"].sum())
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
        "game_over_rate": float(over.mean()),
        "capture_by_turn": [float(x) for x in a["captures_t"].mean(0)],
        # R-CAM-59: all escape checks of turn t pooled over runs; null where none happened
        "escape_success_by_turn": [_ratio(e, c) for e, c in zip(escapes, checks, strict=True)],
        "escape_checks_by_turn": [float(x) for x in a["checks_t"].mean(0)],
        "capture_hazard_by_turn": [_ratio(c, f) for c, f in zip(captures, free, strict=True)],
        "captured_at_end_rate": float((final == CAPTURED).mean()),
        "pc_names": names,
        "clear_rate_by_pc": {nm: float(cleared[:, i].mean()) for i, nm in enumerate(names)},
        "game_over_rate_by_pc": {nm: float(over[:, i].mean()) for i, nm in enumerate(names)},
        "mean_vitality_end_by_pc": {nm: float(a["vitality"][:, i].mean()) for i, nm in enumerate(names)},
        "mean_gp_end_by_pc": {nm: float(a["gp"][:, i].mean()) for i, nm in enumerate(names)},
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
    summary.update(provenance(s, seed, runs))
    return summary


def simulate(scenario: Scenario, runs: int, seed: int, n_jobs: int = 1, engine: str = "kernel",
             **options) -> SimulationResult:
    """Simulate ``runs`` campus games (R-CAM-41). ``engine`` selects the vectorized kernel (default) or
    the scalar reference; both give identical per-game results for the same seed."""
    if options:
        raise TypeError(f"unknown simulate option(s) for campus: {', '.join(sorted(options))}")
    params = compile_params(scenario)
    arrays = run_arrays(params, int(runs), int(seed), n_jobs=n_jobs, engine=engine)
    frame = runs_frame(params, arrays)
    summary = summarize(params, arrays, int(runs), int(seed))
    return SimulationResult(scenario=scenario, runs=frame, summary=summary, extra={"engine": engine})
