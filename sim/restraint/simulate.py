"""Monte Carlo driver and the exact summary (SCENARIOS.md output contract, R-RST-13, R-RST-26)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sim.batch import map_chunks
from sim.errors import ExactUnsupported
from sim.restraint import exact as X
from sim.restraint import rules as R
from sim.restraint.kernel import run_kernel
from sim.restraint.model import SLOTS, Scenario
from sim.restraint.reference import run_reference
from sim.restraint.rules import Params, compile_params
from sim.restraint.state import Trace, draw_uniforms
from sim.restraint.tables import composure_table
from sim.result import SimulationResult, provenance
from sim.stats import standard_error

ENGINES = {"kernel": run_kernel, "reference": run_reference}


@dataclass(frozen=True)
class ChunkResult:
    """What one seed chunk returns: per-run columns and per-round counts."""

    columns: dict[str, np.ndarray]
    level_counts: np.ndarray  # (rounds, 7, 6) runs per slot and level at the end of each round
    incapacitated: np.ndarray  # (rounds,) runs incapacitated at the end of the round (R-RST-26)
    arms_complete: np.ndarray  # (rounds,)
    either: np.ndarray  # (rounds,) incapacitated or arms >= complete (R-RST-13)
    checks: np.ndarray  # (rounds,) escape checks made in the round, summed over runs
    overloaded: np.ndarray  # (pools, composure_rounds) runs overloaded by the end of round k


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
    level_counts = np.stack(
        [np.stack([(levels[:, :, s] == v).sum(axis=0) for v in range(R.N_LEVELS)], axis=-1) for s in range(R.N_SLOTS)],
        axis=1,
    )
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


def simulate(
    scenario: Scenario, runs: int, seed: int, n_jobs: int = 1, engine: str = "kernel", **options
) -> SimulationResult:
    """Monte Carlo over ``runs`` duels; ``engine`` = "kernel" (default) or "reference" (scalar)."""
    if options:
        raise TypeError(f"unknown simulate options: {', '.join(sorted(options))}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    p = compile_params(scenario)
    parts = [res for _, res in map_chunks(_chunk, (p, engine), runs, seed, n_jobs=n_jobs)]
    columns = {k: np.concatenate([c.columns[k] for c in parts]) for k in parts[0].columns}
    df = pd.DataFrame({"run": np.arange(runs, dtype=np.int64), **columns})
    level_counts = sum(c.level_counts for c in parts)
    incap = sum(c.incapacitated for c in parts)
    arms = sum(c.arms_complete for c in parts)
    either = sum(c.either for c in parts)
    checks_by_round = sum(c.checks for c in parts) / runs
    overloaded = sum(c.overloaded for c in parts)
    level_dist = level_counts / runs
    checks = df["escape_checks"].to_numpy(dtype=float)
    summary = {
        "kind": "restraint",
        "name": scenario.name,
        "runs": runs,
        "seed": seed,
        "incapacitated_by_round": (incap / runs).tolist(),
        "arms_complete_by_round": (arms / runs).tolist(),
        "mean_escape_checks": float(checks.mean()),
        "mean_escape_checks_se": float(checks.std(ddof=1) / np.sqrt(runs)) if runs > 1 else None,
        "incapacitated_or_arms_complete_by_round": (either / runs).tolist(),
        "escape_checks_by_round": checks_by_round.tolist(),
        "mean_escape_successes": float(df["escape_successes"].mean()),
        "mean_bindings_won": float(df["bindings_won"].mean()),
        "mean_rages_left": float(df["rages_left"].mean()),
        "mean_ranger_uses_left": float(df["ranger_uses_left"].mean()),
        "level_distribution_by_round": {
            SLOTS[s]: level_dist[:, s, :].tolist() for s in _relevant_slots(p, level_dist)
        },
        **_composure_common(scenario, p),
    }
    if p.n_pools:
        by_round = overloaded / runs
        summary["overload_by_round"] = by_round[0].tolist()
        summary["party_overload_by_round"] = {
            name: by_round[i].tolist() for i, name in enumerate(p.pool_names) if i > 0
        }
        if p.craving:
            summary["mean_craving"] = float(df["craving"].mean())
    summary["incapacitated_by_round_se"] = [standard_error(x, runs) for x in summary["incapacitated_by_round"]]
    summary.update(provenance(scenario, seed, runs))
    return SimulationResult(scenario=scenario, runs=df, summary=summary, extra={"level_distribution": level_dist})


def supports_exact(scenario: Scenario) -> bool:
    """Exact analysis is offered when the duel's reachable state space is small enough."""
    p = compile_params(scenario)
    moving = {s for s in p.bind_slots} | {s for s, v in enumerate(p.initial_levels) if v}
    bound = (R.N_LEVELS ** len(moving)) * (p.rages + 1) * (p.ranger_uses + 1)
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
    summary.update(provenance(scenario, None, None))
    return summary
