"""simulate / exact for kind = "formation" (R-MDK-14)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from sim.batch import map_chunks, parquet_bytes, stream_chunks
from sim.dice import DARK_DICE_EXPECTED_DP, dark_dice_distribution
from sim.formation.aggregate import FormationAggregate
from sim.formation.columns import WINNER_LABELS, allocate, copy_into, runs_frame
from sim.formation.kernel import run_chunk_kernel
from sim.formation.model import Scenario, compile_params
from sim.formation.reference import run_chunk_reference
from sim.formation.rules import ambush_exact, dp_per_session_exact, dp_variance_per_roll
from sim.formation.targeting import targeting_table
from sim.result import SimulationResult, provenance
from sim.stats import Z95, wilson_interval

ENGINES = {"kernel": run_chunk_kernel, "reference": run_chunk_reference}


def _chunk(args, n, rng):
    params, engine = args
    return ENGINES[engine](params, n, rng)


def simulate(scenario: Scenario, runs: int, seed: int, n_jobs: int = 1, engine: str = "kernel",
             keep_runs: bool = True, runs_sink: Callable[[int, bytes], None] | None = None,
             **options) -> SimulationResult:
    """``runs`` plays: per run the ambush check, the session's DP and the skirmish (R-MDK-14).

    ``engine="reference"`` plays the same runs with the scalar reference (identical results).

    ``keep_runs=False`` streams: each chunk is folded into the aggregate (summary and report need
    nothing else) and, with ``runs_sink``, handed over as one parquet part ``runs_sink(chunk index,
    parquet bytes)``; ``result.runs`` is then empty and the memory stays that of a few chunks. The
    summary is computed from the aggregate (``result.extra["aggregate"]``) in both modes."""
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}; given {engine!r}")
    if options:
        raise TypeError(f"unknown simulate option(s): {', '.join(sorted(options))}")
    params = compile_params(scenario)
    agg = FormationAggregate.empty(params)
    result = SimulationResult(scenario=scenario, runs=pd.DataFrame(), summary={}, extra={"engine": engine})
    if keep_runs:
        data = allocate(runs)  # the whole run's columns, filled chunk by chunk
        for chunk, res in map_chunks(_chunk, (params, engine), runs, seed, n_jobs=n_jobs, threads=engine == "kernel"):
            copy_into(data, res, chunk.start)
        agg.add(data)
        result.runs = runs_frame(data)
    else:
        task = (params, engine, runs_sink is not None)
        stream_chunks(_stream_task, task, runs, seed, n_jobs, agg, runs_sink, threads=engine == "kernel")
    result.summary = summarize(scenario, agg, seed)
    result.extra["aggregate"] = agg
    return result


def _stream_task(args, chunk, rng):
    """One chunk reduced to (its aggregate, its runs as parquet bytes or None): small to store and send."""
    params, engine, want_runs = args
    cols = _chunk((params, engine), chunk.n_runs, rng)
    part = None
    if want_runs:
        part = parquet_bytes(runs_frame(cols, chunk.start))
    return FormationAggregate.empty(params).add(cols), part


_stream_task.wants_chunk = True


def _rate(k: int, n: int, key: str, out: dict) -> None:
    out[key] = k / n
    out[key + "_ci"] = wilson_interval(k, n)


def summarize(scenario: Scenario, agg: FormationAggregate | pd.DataFrame, seed: int) -> dict:
    """The SCENARIOS.md keys, with intervals, skirmish outcomes and provenance, from the aggregate
    (a per-run frame is folded into one first)."""
    if isinstance(agg, pd.DataFrame):
        df = agg.assign(skirmish_winner=agg["skirmish_winner"].astype(str).map(
            {v: k for k, v in WINNER_LABELS.items()}))
        agg = FormationAggregate.empty(compile_params(scenario)).add({c: df[c].to_numpy() for c in df})
    n = agg.runs
    out: dict = {"kind": "formation", "name": scenario.name}
    _rate(agg.sums["ambush_win"], n, "ambush_win", out)
    _rate(agg.sums["ambush_win_by_2"], n, "ambush_win_by_2", out)
    mean, sd = agg.dp_mean_sd()
    half = Z95 * sd / math.sqrt(n)
    out["dp_per_session"] = mean
    out["dp_per_session_ci"] = [mean - half, mean + half]  # normal interval of the mean
    out["dp_per_session_sd"] = sd
    if compile_params(scenario).skirmish:
        _rate(agg.winner_count(0), n, "skirmish_win_a", out)
        _rate(agg.winner_count(1), n, "skirmish_win_b", out)
        _rate(agg.winner_count(2), n, "skirmish_draw", out)
        out["skirmish_mean_rounds"] = agg.mean_rounds()
        out["skirmish_mean_survivors_a"] = agg.sums["survivors_a"] / n
        out["skirmish_mean_survivors_b"] = agg.sums["survivors_b"] / n
        out["enslave_dp_mean"] = agg.sums["enslave_dp"] / n
        out["skirmish_mean_withdrawn_a"] = agg.sums["withdrawn_a"] / n  # R-MDK-5 withdrawals per run
        out["skirmish_mean_withdrawn_b"] = agg.sums["withdrawn_b"] / n
    # the readings used (issues 24, 44): R-MDK-6 attack types, R-MDK-11 movement, R-MDK-5 recall and dismissal,
    # R-MDK-10 grapple penalty
    out["reading"] = {"attack_types": scenario.rules.attack_types, "movement": scenario.policy.movement,
                      "recall_above": scenario.policy.recall_above, "dismiss_below": scenario.policy.dismiss_below,
                      "grapple_penalty": scenario.rules.grapple_penalty}
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


__all__ = ["exact", "runs_frame", "simulate", "summarize", "supports_exact"]
