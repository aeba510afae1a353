"""Monte Carlo driver and the exact summary (SCENARIOS.md output contract, R-RST-13, R-RST-26)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from sim.batch import map_chunks, parquet_bytes, stream_chunks
from sim.errors import ExactUnsupported
from sim.restraint import exact as X
from sim.restraint import rules as R
from sim.restraint.aggregate import RestraintAggregate
from sim.restraint.columns import copy_into, kept_columns, runs_frame
from sim.restraint.kernel import run_kernel
from sim.restraint.model import SLOTS, Scenario
from sim.restraint.reference import run_reference
from sim.restraint.rules import Params, compile_params
from sim.restraint.state import draw_uniforms
from sim.restraint.tables import composure_table
from sim.result import SimulationResult, provenance
from sim.stats import standard_error

ENGINES = {"kernel": run_kernel, "reference": run_reference}


def _chunk(args: tuple[Params, str], n: int, rng: np.random.Generator) -> tuple[RestraintAggregate, dict]:
    """One chunk reduced to (its aggregate, the columns the runs frame shows): its by-round statistics stay here."""
    p, engine = args
    cols = ENGINES[engine](p, draw_uniforms(p, n, rng))
    return RestraintAggregate.empty(p).add(p, cols), kept_columns(p, cols)


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
        cols: dict[str, np.ndarray] = {}  # the whole run's shown columns, filled chunk by chunk
        for chunk, (part_agg, part) in map_chunks(_chunk, (p, engine), runs, seed, n_jobs=n_jobs,
                                                  threads=engine == "kernel"):  # the compiled engine releases the GIL
            agg.merge(part_agg)
            if not cols:
                cols = {k: np.empty((runs, *v.shape[1:]), dtype=v.dtype) for k, v in part.items()}
            copy_into(cols, part, chunk.start)
        df = runs_frame(p, cols)
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
    part_agg, cols = _chunk((p, engine), chunk.n_runs, rng)
    part = None
    if want_runs:
        part = parquet_bytes(runs_frame(p, cols, chunk.start))
    return part_agg, part


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
    work = X.Work()  # one budget for the duel and every pool's chain (sim.restraint.exact.MAX_EXACT_WORK)
    duel = X.duel_exact(p, work)
    level_dist = duel.pop("level_distribution")
    summary = {"kind": "restraint", "name": scenario.name, "runs": None, "seed": None, **duel}
    summary["level_distribution_by_round"] = {
        SLOTS[s]: level_dist[:, s, :].tolist() for s in _relevant_slots(p, level_dist)
    }
    summary.update(_composure_common(scenario, p))
    if p.n_pools:
        comp = X.composure_exact(p, work)
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
