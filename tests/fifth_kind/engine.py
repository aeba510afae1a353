"""The dice race's two engines, a scalar reference (a plain loop per run) and a numpy batch engine, which read the
same dice and agree run for run, and its summary.

Per-run statistics are declared once, in :data:`RUN_STATS` (a row: name, type, how the batch engine computes it from
the dice of a chunk, how the reference computes it from one run's rolls): the frame, the summary (``mean_<name>``
for a row with ``mean=True``) and the report read that list, so a new statistic is one row here."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd

from sim.batch import map_chunks
from sim.errors import ExactUnsupported
from sim.result import SimulationResult, provenance
from sim.stats import Z95, wilson_interval

A, B, DRAW = 0, 1, 2
ENGINES = ("reference", "batch")


class Race(NamedTuple):
    """A chunk's dice as both engines read them: ``rolls[run, round, side]`` with side A's bonus added."""

    rolls: np.ndarray  # (n, max_rounds, 2) int16
    target: int


class RunStat(NamedTuple):
    name: str
    dtype: type
    batch: Callable[[Race, np.ndarray], np.ndarray]  # (race, rounds played per run) -> one value per run
    reference: Callable[[np.ndarray, int], int]  # (one run's rolls (rounds, 2), rounds played) -> its value
    mean: bool = True  # the summary carries ``mean_<name>``


def _played(race: Race, rounds: np.ndarray) -> np.ndarray:
    """(n, max_rounds) mask of the rounds each run played."""
    return np.arange(race.rolls.shape[1])[None, :] < rounds[:, None]


RUN_STATS: list[RunStat] = [
    RunStat("total_a", np.int32, lambda race, rounds: (race.rolls[:, :, A] * _played(race, rounds)).sum(axis=1),
            lambda rolls, rounds: int(rolls[:rounds, A].sum())),
    RunStat("total_b", np.int32, lambda race, rounds: (race.rolls[:, :, B] * _played(race, rounds)).sum(axis=1),
            lambda rolls, rounds: int(rolls[:rounds, B].sum())),
]


def _dice(params, n: int, rng: np.random.Generator) -> Race:
    target, bonus, max_rounds = params
    rolls = rng.integers(1, 7, size=(n, max_rounds, 2)).astype(np.int16)
    rolls[:, :, A] += bonus
    return Race(rolls, target)


def reference_chunk(params, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The rules as a loop: round by round, both sides add their roll; the first to ``target`` wins."""
    race = _dice(params, n, rng)
    max_rounds = race.rolls.shape[1]
    out = {"winner": np.zeros(n, np.int8), "rounds": np.zeros(n, np.int16)}
    out |= {s.name: np.zeros(n, s.dtype) for s in RUN_STATS}
    for j in range(n):
        total_a = total_b = 0
        winner, rounds = DRAW, max_rounds
        for r in range(max_rounds):
            total_a += int(race.rolls[j, r, A])
            total_b += int(race.rolls[j, r, B])
            if total_a >= race.target or total_b >= race.target:
                winner = A if total_a > total_b else B if total_b > total_a else DRAW
                rounds = r + 1
                break
        out["winner"][j], out["rounds"][j] = winner, rounds
        for s in RUN_STATS:
            out[s.name][j] = s.reference(race.rolls[j], rounds)
    return out


def batch_chunk(params, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The same race for a whole chunk at once: running totals, the first round either side reaches the target."""
    race = _dice(params, n, rng)
    max_rounds = race.rolls.shape[1]
    totals = np.cumsum(race.rolls.astype(np.int32), axis=1)  # (n, rounds, 2)
    reached = (totals >= race.target).any(axis=2)
    ended = reached.any(axis=1)
    last = np.where(ended, reached.argmax(axis=1), max_rounds - 1)
    at_end = totals[np.arange(n), last]  # (n, 2)
    winner = np.where(at_end[:, A] > at_end[:, B], A, np.where(at_end[:, B] > at_end[:, A], B, DRAW))
    winner = np.where(ended, winner, DRAW)
    rounds = (last + 1).astype(np.int16)
    out = {"winner": winner.astype(np.int8), "rounds": rounds}
    out |= {s.name: s.batch(race, rounds).astype(s.dtype) for s in RUN_STATS}
    return out


def simulate(scenario, runs: int, seed: int, n_jobs: int = 1, engine: str = "batch", keep_runs: bool = True,
             runs_sink=None, **options) -> SimulationResult:
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}; given {engine!r}")
    bonus = scenario.bonus if scenario.policy.name == "favoured" else 0
    params = (scenario.target, bonus, scenario.run.max_rounds)
    fn = reference_chunk if engine == "reference" else batch_chunk
    parts = [res for _, res in map_chunks(fn, params, runs, seed, n_jobs=n_jobs, threads=True)]
    columns = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    frame = pd.DataFrame(columns)
    frame["winner"] = pd.Categorical.from_codes(frame["winner"], ["a", "b", "draw"])
    return SimulationResult(scenario, frame, summarize(scenario, frame, runs, seed), {"engine": engine})


def summarize(scenario, frame: pd.DataFrame, runs: int, seed: int) -> dict:
    out: dict = {"kind": scenario.kind, "name": scenario.name}
    for key, side in (("a_win_rate", "a"), ("b_win_rate", "b"), ("draw_rate", "draw")):
        k = int((frame["winner"] == side).sum())
        out[key], out[f"{key}_ci"] = k / runs, list(wilson_interval(k, runs))
    rounds = frame["rounds"].to_numpy()
    out["mean_rounds"] = float(rounds.mean())
    out["mean_rounds_se"] = float(rounds.std(ddof=1) / math.sqrt(runs)) if runs > 1 else math.nan
    won_a = frame["winner"].to_numpy() == "a"
    out["a_win_by_round"] = [float(((rounds <= r) & won_a).mean()) for r in range(1, scenario.run.max_rounds + 1)]
    for s in RUN_STATS:
        if s.mean:
            values = frame[s.name].to_numpy(dtype=float)
            out[f"mean_{s.name}"] = float(values.mean())
            half = Z95 * float(values.std(ddof=1)) / math.sqrt(runs) if runs > 1 else math.nan
            out[f"mean_{s.name}_ci"] = [out[f"mean_{s.name}"] - half, out[f"mean_{s.name}"] + half]
    out["reading"] = {"policy": scenario.policy.name}
    out.update(provenance(scenario, seed, runs))
    return out


def supports_exact(scenario) -> bool:
    return False


def exact(scenario, **options) -> dict:
    raise ExactUnsupported("the dice race has no exact analysis")
