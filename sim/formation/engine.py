"""simulate / exact for kind = "formation" (R-MDK-14)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sim.batch import map_chunks
from sim.dice import DARK_DICE_EXPECTED_DP, dark_dice_distribution
from sim.formation.kernel import run_chunk_kernel
from sim.formation.model import Scenario, compile_params
from sim.formation.reference import run_chunk_reference
from sim.formation.rules import ambush_exact, dp_per_session_exact, dp_variance_per_roll
from sim.formation.targeting import targeting_table
from sim.result import SimulationResult, provenance
from sim.stats import Z95, wilson_interval

ENGINES = {"kernel": run_chunk_kernel, "reference": run_chunk_reference}
WINNER_LABELS = {0: "A", 1: "B", 2: "draw", -1: "none"}


def _chunk(args, n, rng):
    params, engine = args
    return ENGINES[engine](params, n, rng)


def simulate(scenario: Scenario, runs: int, seed: int, n_jobs: int = 1, engine: str = "kernel",
             **options) -> SimulationResult:
    """``runs`` plays: per run the ambush check, the session's DP and the skirmish (R-MDK-14).

    ``engine="reference"`` plays the same runs with the scalar reference (identical results)."""
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}; given {engine!r}")
    if options:
        raise TypeError(f"unknown simulate option(s): {', '.join(sorted(options))}")
    params = compile_params(scenario)
    parts: dict[str, list[np.ndarray]] = {}
    for _, res in map_chunks(_chunk, (params, engine), runs, seed, n_jobs=n_jobs):
        for k, v in res.items():
            parts.setdefault(k, []).append(np.asarray(v))
    data = {k: np.concatenate(v) for k, v in parts.items()}
    df = pd.DataFrame({"run": np.arange(runs, dtype=np.int64), **data})
    for col in ("ambush_win", "ambush_win_by_2"):
        df[col] = df[col].astype(bool)
    df["skirmish_winner"] = pd.Categorical(df["skirmish_winner"].map(WINNER_LABELS),
                                           categories=["A", "B", "draw", "none"])
    return SimulationResult(scenario=scenario, runs=df, summary=summarize(scenario, df, seed),
                            extra={"engine": engine})


def _rate(df: pd.DataFrame, mask, key: str, out: dict) -> None:
    k = int(np.count_nonzero(mask))
    out[key] = k / len(df)
    out[key + "_ci"] = wilson_interval(k, len(df))


def summarize(scenario: Scenario, df: pd.DataFrame, seed: int) -> dict:
    """The SCENARIOS.md keys, with intervals, skirmish outcomes and provenance."""
    n = len(df)
    out: dict = {"kind": "formation", "name": scenario.name}
    _rate(df, df["ambush_win"], "ambush_win", out)
    _rate(df, df["ambush_win_by_2"], "ambush_win_by_2", out)
    dp = df["dp_session"].to_numpy(dtype=float)
    mean = float(dp.mean())
    sd = float(dp.std(ddof=1)) if n > 1 else 0.0
    half = Z95 * sd / math.sqrt(n)
    out["dp_per_session"] = mean
    out["dp_per_session_ci"] = [mean - half, mean + half]  # normal interval of the mean
    out["dp_per_session_sd"] = sd
    if compile_params(scenario).skirmish:
        winner = df["skirmish_winner"].astype(str)
        _rate(df, winner == "A", "skirmish_win_a", out)
        _rate(df, winner == "B", "skirmish_win_b", out)
        _rate(df, winner == "draw", "skirmish_draw", out)
        out["skirmish_mean_rounds"] = float(df["skirmish_rounds"].mean())
        out["skirmish_mean_survivors_a"] = float(df["survivors_a"].mean())
        out["skirmish_mean_survivors_b"] = float(df["survivors_b"].mean())
        out["enslave_dp_mean"] = float(df["enslave_dp"].mean())
    out.update(provenance(scenario, seed, n))
    return out


def supports_exact(scenario: Scenario) -> bool:
    """Ambush and DP are exact for every formation scenario (the skirmish is simulated only)."""
    return True


def exact(scenario: Scenario) -> dict:
    """R-MDK-20, R-MDK-21 exact values, the dark dice distribution and the targeting table."""
    out: dict = {"kind": "formation", "name": scenario.name}
    out.update(ambush_exact(scenario.ambush))
    out["dp_per_session"] = dp_per_session_exact(scenario.session)
    out["dp_per_session_sd"] = math.sqrt(scenario.session.checks * dp_variance_per_roll())
    out["dp_per_roll"] = DARK_DICE_EXPECTED_DP
    out["dark_dice_distribution"] = {str(k): v for k, v in dark_dice_distribution().items()}
    table = targeting_table(scenario)
    out["targeting"] = table.to_dict(orient="records")
    out.update(provenance(scenario, None, None))
    return out


__all__ = ["exact", "simulate", "summarize", "supports_exact"]
