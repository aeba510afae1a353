"""Monte Carlo driver and the exact summary (SCENARIOS.md output contract, R-RST-13, R-RST-26)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from sim.batch import map_chunks, parquet_bytes, stream_chunks
from sim.errors import ExactUnsupported
from sim.restraint import exact as X
from sim.restraint import rules as R
from sim.restraint.aggregate import ChunkResult, RestraintAggregate
from sim.restraint.kernel import run_kernel
from sim.restraint.model import SLOTS, Scenario
from sim.restraint.reference import run_reference
from sim.restraint.rules import Params, compile_params
from sim.restraint.state import Trace, draw_uniforms
from sim.restraint.tables import composure_table
from sim.result import SimulationResult, provenance
from sim.stats import standard_error

ENGINES = {"kernel": run_kernel, "reference": run_reference}


def incapacitated_mask(p: Params, levels: np.ndarray) -> np.ndarray:
    """R-RST-26 over a trace: body >= 1, or the scenario's condition is incapacitated."""
    return (levels[..., R.BODY] >= R.LIGHT) | p.incapacitated_condition


def _first_round(mask: np.ndarray) -> np.ndarray:
    """1-based first round where ``mask`` (n, rounds) holds, 0 if never."""
    return np.where(mask.any(axis=1), mask.argmax(axis=1) + 1, 0).astype(np.int16)


def summarize_trace(p: Params, trace: Trace) -> ChunkResult:
    levels = trace.levels
    incap = incapacitated_mask(p, levels)
    arms = levels[..., R.ARMS] >= R.COMPLETE
    f = trace.final
    columns: dict[str, np.ndarray] = {f"{slot}_final": f.levels[:, i] for i, slot in enumerate(SLOTS)}
    columns.update(
        escape_checks=f.checks,
        escape_successes=f.successes,
        bindings_won=f.bindings,
        rages_left=f.rages,
        ranger_uses_left=f.ranger,
        first_incapacitated_round=_first_round(incap),
        first_arms_complete_round=_first_round(arms),
    )
    for pool, name in enumerate(p.pool_names):
        suffix = "" if pool == 0 else f"_{name}"
        columns[f"overload_round{suffix}"] = f.overload_round[:, pool]
        if p.craving:
            columns[f"craving{suffix}"] = f.craving[:, pool]
        if p.recoveries:  # R-RST-32: recoveries made in the race (only with the switch on)
            columns[f"recoveries{suffix}"] = f.recoveries[:, pool]
    if p.duel_overload:  # R-RST-33: the target's overloads in the duel (only with the switch on)
        columns["overloads"] = f.overloads
    # runs per (round, slot, level) in one counting pass
    cell = (np.arange(p.rounds)[:, None] * R.N_SLOTS + np.arange(R.N_SLOTS)[None, :]) * R.N_LEVELS
    level_counts = np.bincount((cell[None, :, :] + levels).ravel(),
                               minlength=p.rounds * R.N_SLOTS * R.N_LEVELS).reshape(p.rounds, R.N_SLOTS, R.N_LEVELS)
    rounds = np.arange(1, p.composure_rounds + 1)
    o = f.overload_round.astype(np.int32)
    overloaded = ((o[:, :, None] >= 1) & (o[:, :, None] <= rounds[None, None, :])).sum(axis=0)
    return ChunkResult(
        columns=columns,
        level_counts=level_counts.astype(np.int64),
        incapacitated=incap.sum(axis=0).astype(np.int64),
        arms_complete=arms.sum(axis=0).astype(np.int64),
        either=(incap | arms).sum(axis=0).astype(np.int64),
        checks=trace.checks_by_round.sum(axis=0, dtype=np.int64),
        overloaded=overloaded.reshape(p.n_pools, p.composure_rounds).astype(np.int64),
        dazed=trace.dazed.sum(axis=0).astype(np.int64),
    )


def _chunk(args: tuple[Params, str], n: int, rng: np.random.Generator) -> ChunkResult:
    p, engine = args
    return summarize_trace(p, ENGINES[engine](p, draw_uniforms(p, n, rng)))


def _relevant_slots(p: Params, level_dist: np.ndarray) -> list[int]:
    """Slots that are ever above 0 (bound or starting restrained)."""
    return [s for s in range(R.N_SLOTS) if level_dist[:, s, 1:].sum() > 0 or s in p.bind_slots]


def _composure_common(s: Scenario, p: Params) -> dict:
    t = s.target
    party = [
        {
            "name": m.name,
            "class": m.class_,
            "level": m.level,
            "composure_max": R.character_composure(
                m.class_, m.level, m.scores.as_dict(), m.composure_ability, m.composure
            ),
        }
        for m in s.composure.party
    ]
    table = composure_table(t.scores.as_dict())
    return {
        "composure_max": p.composure_max,  # R-RST-25
        "party_composure": party,
        "composure_table": {cls: [int(v) for v in row] for cls, row in table.iterrows()},
    }


def reading(scenario: Scenario) -> dict:
    """The rule readings used (issue 24): R-RST-32 recoveries, R-RST-33 overload in the duel."""
    return {"recoveries": scenario.rules.recoveries, "overload_in_duel": scenario.rules.overload_in_duel}


def runs_frame(columns: dict[str, np.ndarray], start: int = 0) -> pd.DataFrame:
    """Per-run rows; ``start`` is the index of the first run (a chunk's position)."""
    n = len(columns["escape_checks"])
    return pd.DataFrame({"run": np.arange(start, start + n, dtype=np.int64), **columns})


def summarize(scenario: Scenario, p: Params, agg: RestraintAggregate, runs: int, seed: int) -> dict:
    """The SCENARIOS.md summary with provenance, from the streaming aggregate."""
    level_dist = agg.level_counts / runs
    summary = {
        "kind": "restraint",
        "name": scenario.name,
        "runs": runs,
        "seed": seed,
        "incapacitated_by_round": (agg.incapacitated / runs).tolist(),
        "arms_complete_by_round": (agg.arms_complete / runs).tolist(),
        "mean_escape_checks": float(agg.mean("escape_checks")),
        "mean_escape_checks_se": agg.mean_escape_checks_se(),
        "incapacitated_or_arms_complete_by_round": (agg.either / runs).tolist(),
        "escape_checks_by_round": (agg.checks_by_round / runs).tolist(),
        "mean_escape_successes": float(agg.mean("escape_successes")),
        "mean_bindings_won": float(agg.mean("bindings_won")),
        "mean_rages_left": float(agg.mean("rages_left")),
        "mean_ranger_uses_left": float(agg.mean("ranger_uses_left")),
        "level_distribution_by_round": {
            SLOTS[s]: level_dist[:, s, :].tolist() for s in _relevant_slots(p, level_dist)
        },
        **_composure_common(scenario, p),
    }
    if p.n_pools:
        by_round = agg.overloaded() / runs
        summary["overload_by_round"] = by_round[0].tolist()
        summary["party_overload_by_round"] = {
            name: by_round[i].tolist() for i, name in enumerate(p.pool_names) if i > 0
        }
        if p.craving:
            summary["mean_craving"] = agg.mean_craving(0)
        if p.recoveries:  # R-RST-32
            summary["mean_recoveries"] = float(agg.recoveries_sum[0] / runs)
            summary["party_mean_recoveries"] = {
                name: float(agg.recoveries_sum[i] / runs) for i, name in enumerate(p.pool_names) if i > 0
            }
        if p.duel_overload:  # R-RST-33
            summary["mean_overloads"] = float(agg.overloads_sum / runs)
            summary["dazed_by_round"] = (agg.dazed / runs).tolist()
    summary["reading"] = reading(scenario)
    summary["incapacitated_by_round_se"] = [standard_error(x, runs) for x in summary["incapacitated_by_round"]]
    summary.update(provenance(scenario, seed, runs))
    return summary


def simulate(
    scenario: Scenario,
    runs: int,
    seed: int,
    n_jobs: int = 1,
    engine: str = "kernel",
    keep_runs: bool = True,
    runs_sink: Callable[[int, bytes], None] | None = None,
    **options,
) -> SimulationResult:
    """Monte Carlo over ``runs`` duels; ``engine`` = "kernel" (default) or "reference" (scalar).

    ``keep_runs=False`` streams: each chunk is folded into the aggregate (summary and report need
    nothing else) and, with ``runs_sink``, handed over as one parquet part ``runs_sink(chunk index,
    parquet bytes)``; ``result.runs`` is then empty and the memory stays that of a few chunks.
    Either way ``result.extra["aggregate"]`` holds the :class:`RestraintAggregate` and the summary is
    computed from it, so both modes give the same summary."""
    if options:
        raise TypeError(f"unknown simulate options: {', '.join(sorted(options))}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    p = compile_params(scenario)
    agg = RestraintAggregate.empty(p)
    if keep_runs:
        parts = [res for _, res in map_chunks(_chunk, (p, engine), runs, seed, n_jobs=n_jobs,
                                              threads=engine == "kernel")]  # the compiled engine releases the GIL
        for part in parts:
            agg.add(p, part)
        columns = {k: np.concatenate([c.columns[k] for c in parts]) for k in parts[0].columns}
        df = runs_frame(columns)
    else:
        task = (p, engine, runs_sink is not None)
        stream_chunks(_stream_task, task, runs, seed, n_jobs, agg, runs_sink, threads=engine == "kernel")
        df = pd.DataFrame()
    summary = summarize(scenario, p, agg, runs, seed)
    extra = {"level_distribution": agg.level_counts / runs, "aggregate": agg, "params": p, "engine": engine}
    return SimulationResult(scenario=scenario, runs=df, summary=summary, extra=extra)


def _stream_task(args: tuple[Params, str, bool], chunk, rng: np.random.Generator):
    """One chunk reduced to (its aggregate, its runs as parquet bytes or None): small to store and send."""
    p, engine, want_runs = args
    res = _chunk((p, engine), chunk.n_runs, rng)
    part = None
    if want_runs:
        part = parquet_bytes(runs_frame(res.columns, chunk.start))
    return RestraintAggregate.empty(p).add(p, res), part


_stream_task.wants_chunk = True


def supports_exact(scenario: Scenario) -> bool:
    """Exact analysis is offered when the duel's reachable state space is small enough."""
    p = compile_params(scenario)
    moving = {s for s in p.bind_slots} | {s for s, v in enumerate(p.initial_levels) if v}
    bound = (R.N_LEVELS ** len(moving)) * (p.rages + 1) * (p.ranger_uses + 1)
    if p.duel_overload:  # R-RST-33: the duel pool's composure, dazed rounds, uses and craving join the state
        uses = p.pool_uses[0] + 1
        bound *= (p.pool_max[0] + 1) * (p.dazed_rounds + 1) * uses * (p.pool_max[0] + 1 if p.craving else 1) * 2
    return bound <= X.MAX_EXACT_STATES and p.rounds <= 200


def exact(scenario: Scenario) -> dict:
    """The summary keys, exactly (``runs`` and ``seed`` are None)."""
    p = compile_params(scenario)
    if not supports_exact(scenario):
        raise ExactUnsupported("the duel's state space is too large for exact analysis; use simulation")
    duel = X.duel_exact(p)
    level_dist = duel.pop("level_distribution")
    summary = {"kind": "restraint", "name": scenario.name, "runs": None, "seed": None, **duel}
    summary["level_distribution_by_round"] = {
        SLOTS[s]: level_dist[:, s, :].tolist() for s in _relevant_slots(p, level_dist)
    }
    summary.update(_composure_common(scenario, p))
    if p.n_pools:
        comp = X.composure_exact(p)
        target = comp[p.pool_names[0]]
        summary["overload_by_round"] = target["overload_by_round"]
        summary["mean_rounds_to_overload"] = target["mean_rounds_to_overload"]
        summary["party_overload_by_round"] = {
            name: comp[name]["overload_by_round"] for name in p.pool_names[1:]
        }
        summary["party_mean_rounds_to_overload"] = {
            name: comp[name]["mean_rounds_to_overload"] for name in p.pool_names[1:]
        }
        if p.craving:
            summary["mean_craving"] = target["mean_craving"]
        if p.recoveries:  # R-RST-32
            summary["mean_recoveries"] = target["mean_recoveries"]
            summary["party_mean_recoveries"] = {name: comp[name]["mean_recoveries"] for name in p.pool_names[1:]}
    summary["reading"] = reading(scenario)
    summary.update(provenance(scenario, None, None))
    return summary
