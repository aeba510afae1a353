"""Seeding and batching (R-GEN-7).

Runs are cut into seed chunks of a fixed size, :data:`CHUNK_RUNS`, whatever the number of jobs.
Chunk ``i`` draws from ``SeedSequence(seed, spawn_key=(i,))``; the last chunk is shorter. Work is
dispatched in tasks of whole chunks with joblib, so per-run results are identical for any
``n_jobs``, task size or backend (STYLE.md practice 4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

CHUNK_RUNS = 10_000
MAX_RUNS = 100_000_000


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    n_runs: int

    def generator(self, seed: int) -> np.random.Generator:
        """The chunk's own stream: SeedSequence(seed, spawn_key=(index,)) (R-GEN-7)."""
        return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(self.index,)))


def chunks(n_runs: int) -> list[Chunk]:
    """The fixed chunking of ``n_runs`` runs (R-GEN-7)."""
    out = []
    for i, start in enumerate(range(0, int(n_runs), CHUNK_RUNS)):
        out.append(Chunk(i, start, min(CHUNK_RUNS, int(n_runs) - start)))
    return out


def _run_tasks(fn: Callable[..., Any], params: Any, seed: int, task: list[Chunk]) -> list[Any]:
    return [fn(params, c.n_runs, c.generator(seed)) for c in task]


def map_chunks(
    fn: Callable[[Any, int, np.random.Generator], Any],
    params: Any,
    n_runs: int,
    seed: int,
    n_jobs: int = 1,
    chunks_per_task: int = 1,
) -> Iterator[tuple[Chunk, Any]]:
    """Apply ``fn(params, n, rng)`` to every chunk and yield ``(chunk, result)`` in chunk order.

    ``n_jobs == 1`` runs in this process; otherwise joblib's process backend does the work.
    The results depend only on ``seed`` and ``n_runs``."""
    all_chunks = chunks(n_runs)
    tasks = [all_chunks[i : i + chunks_per_task] for i in range(0, len(all_chunks), chunks_per_task)]
    if n_jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            yield from zip(task, _run_tasks(fn, params, seed, task), strict=True)
        return
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, return_as="generator")
    results = parallel(delayed(_run_tasks)(fn, params, seed, task) for task in tasks)
    for task, res in zip(tasks, results, strict=True):
        yield from zip(task, res, strict=True)
