"""Monte Carlo driver of the escape challenge: chunks (R-GEN-7), engines, per-run rows (R-ESC-15)
and the summary of SCENARIOS.md."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd

from sim.batch import current_execution, map_chunks, parquet_bytes, stream_chunks
from sim.errors import ScenarioError
from sim.escape import kernel as K
from sim.escape.aggregate import EscapeAggregate
from sim.escape.columns import allocate, columns_from_batch, columns_from_states, copy_into, runs_frame
from sim.escape.model import OPTIMAL_POLICY, Scenario
from sim.escape.optimal import decision_table, table_policy
from sim.escape.params import EscapeParams, compile_params
from sim.escape.policy import load_policy, require_code_opt_in
from sim.escape.reference import DrawSource, play_round
from sim.escape.state import initial_state
from sim.result import DeferredFrame, SimulationResult, provenance
from sim.stats import wilson_interval

KERNEL_POLICIES = tuple(K.POLICY_CODES)  # the built-in policies the engine runs; custom ones run on the reference
ENGINES = ("auto", "kernel", "reference")


def kernel_chunk(p: EscapeParams, n: int, rng: np.random.Generator, policy: str = "greedy") -> dict:
    """One chunk with the compiled engine (sim.escape.kernel)."""
    return columns_from_batch(K.run_batch(p, n, rng, policy))


def reference_chunk(p: EscapeParams, n: int, rng: np.random.Generator, policy: Callable | str = "greedy",
                    validate: bool = False) -> dict:
    """One chunk with the scalar reference: one run at a time, each random event drawing only what it
    needs (the engine's random layout, so both agree run for run)."""
    fn = load_policy(policy) if isinstance(policy, str) else policy
    src = DrawSource(p, K.chunk_key(rng))
    states = [initial_state(p) for _ in range(n)]
    for j, state in enumerate(states):
        while not state.outcome:
            src.at(j, state.round + 1)
            play_round(p, state, fn, src, validate)
    return columns_from_states(p, states)


def reading(scenario: Scenario) -> dict:
    """The rule switches in effect (R-ESC-14a, R-ESC-10b): stated in every summary and report."""
    return {"volume1_features": scenario.rules.volume1_features, "self_untie": scenario.rules.self_untie}


def summarize(scenario: Scenario, p: EscapeParams, agg: EscapeAggregate, runs: int, seed: int) -> dict:
    """The SCENARIOS.md summary with Wilson intervals and provenance, from the streaming aggregate."""
    o = agg.outcomes
    n_esc, n_caught, n_timeout = int(o[K.ESCAPED]), int(o[K.CAUGHT]), int(o[K.TIMEOUT])
    summary = {
        "kind": "escape",
        "name": scenario.name,
        "runs": runs,
        "seed": seed,
        "policy": p.policy,
        "escape_rate": n_esc / runs,
        "escape_rate_ci": wilson_interval(n_esc, runs),
        "caught_rate": n_caught / runs,
        "caught_rate_ci": wilson_interval(n_caught, runs),
        "timeout_rate": n_timeout / runs,
        "timeout_rate_ci": wilson_interval(n_timeout, runs),
        "mean_rounds": agg.mean_rounds(),
        "mean_rounds_se": agg.mean_rounds_se(),
        "escape_by_round": agg.escape_by_round(),
        "mean_checks": float(agg.checks.sum() / runs),
        "mean_overloads": float(agg.overloads.sum() / runs),
        "reading": reading(scenario),
    }
    made = provenance(scenario, seed, runs, K.RANDOM_LAYOUT)
    summary.update({k: v for k, v in made.items() if k not in ("seed", "runs")})
    return summary


def resolve_engine(p: EscapeParams, engine: str) -> str:
    if engine not in ENGINES:
        raise ScenarioError(f"expected engine one of {', '.join(ENGINES)}; given {engine!r}")
    if engine == "auto":
        return "kernel" if p.policy in KERNEL_POLICIES else "reference"
    if engine == "kernel" and p.policy not in KERNEL_POLICIES:
        raise ScenarioError(f"the kernel runs the built-in policies {', '.join(KERNEL_POLICIES)}; "
                            f"policy {p.policy!r} runs on the reference engine", key="policy.name")
    return engine


def simulate(scenario: Scenario, runs: int, seed: int, n_jobs: int = 1, engine: str = "auto",
             chunks_per_task: int = 1, allow_code: bool = False, keep_runs: bool = True,
             runs_sink: Callable[[int, bytes], None] | None = None) -> SimulationResult:
    """Simulate ``runs`` escape challenges (R-GEN-7: identical for any n_jobs / engine).

    A ``"package.module:callable"`` policy named by the scenario runs only with ``allow_code=True``
    (the CLI's ``--allow-code``): importing it runs code (docs/policies.md).

    ``keep_runs=False`` streams: each chunk is folded into the aggregate (summary and report need
    nothing else) and, with ``runs_sink``, handed over as one parquet part ``runs_sink(chunk index,
    parquet bytes)``; ``result.runs`` is then empty and the memory stays that of a few chunks."""
    p = compile_params(scenario)
    require_code_opt_in(p.policy, allow_code or current_execution().allow_code)
    engine = resolve_engine(p, engine)
    policy = p.policy
    if policy == OPTIMAL_POLICY:  # solved once here (or refused in one line), its table sent to every chunk

        policy = decision_table(p)  # on the compiled exact engine where it covers the scenario
    elif engine == "reference":
        load_policy(p.policy)  # fail early on a bad custom policy
    agg = EscapeAggregate.empty(p)
    result = SimulationResult(scenario, pd.DataFrame(), {})
    if keep_runs:
        fn = _kernel_task if engine == "kernel" else _reference_task
        cols = allocate(p, runs)  # the whole run's columns, filled chunk by chunk (no list of parts to join)
        for chunk, part in map_chunks(fn, (p, policy), runs, seed, n_jobs, chunks_per_task,
                                      threads=engine == "kernel"):
            copy_into(cols, part, chunk.start)
            agg.add(part)  # each chunk folded while it is fresh in the cache
        for column in cols.values():  # the runs frame is made from them when first read: they stay as played
            column.flags.writeable = False
        result.runs = DeferredFrame(partial(runs_frame, p, cols))  # callers of the summary alone never build it
        result.extra["columns"] = cols
    else:
        task = (p, policy, engine, runs_sink is not None)
        stream_chunks(_stream_task, task, runs, seed, n_jobs, agg, runs_sink, chunks_per_task=chunks_per_task,
                      threads=engine == "kernel")  # the compiled engine releases the GIL
    result.summary = summarize(scenario, p, agg, runs, seed)
    result.extra["aggregate"] = agg
    result.extra["params"] = p
    result.extra["engine"] = engine
    return result


def _kernel_task(params, n, rng):
    p, policy = params
    return kernel_chunk(p, n, rng, policy)


def _reference_task(params, n, rng):
    p, policy = params
    if not isinstance(policy, str):  # policy "optimal": the solved decision table, every declaration checked

        return reference_chunk(p, n, rng, table_policy(policy), validate=True)
    custom = policy not in ("greedy", "arms_first", "team")
    return reference_chunk(p, n, rng, policy, validate=custom)


def _stream_task(params, chunk, rng):
    """One chunk reduced to (its aggregate, its runs as parquet bytes or None): small to store and send."""
    p, policy, engine, want_runs = params
    cols = _kernel_task((p, policy), chunk.n_runs, rng) if engine == "kernel" else \
        _reference_task((p, policy), chunk.n_runs, rng)
    part = None
    if want_runs:
        part = parquet_bytes(runs_frame(p, cols, chunk.start))
    return EscapeAggregate.empty(p).add(cols), part


_stream_task.wants_chunk = True
