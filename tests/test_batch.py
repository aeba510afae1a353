"""R-GEN-7 seeding and batching."""

from __future__ import annotations

import numpy as np
from examples import ROOT

from sim.batch import CHUNK_RUNS, chunks, map_chunks


def _draw(params, n, rng):
    return rng.random(n)


def test_R_GEN_7_fixed_chunks_and_spawn_keys():
    cs = chunks(2 * CHUNK_RUNS + 5)
    assert [c.n_runs for c in cs] == [CHUNK_RUNS, CHUNK_RUNS, 5]
    expected = np.random.default_rng(np.random.SeedSequence(42, spawn_key=(1,))).random(3)
    assert np.array_equal(cs[1].generator(42).random(3), expected)


def test_R_GEN_7_results_independent_of_jobs_and_task_size():
    n = 3 * CHUNK_RUNS + 17
    one = np.concatenate([r for _, r in map_chunks(_draw, None, n, 5, n_jobs=1)])
    two = np.concatenate([r for _, r in map_chunks(_draw, None, n, 5, n_jobs=2)])
    grouped = np.concatenate([r for _, r in map_chunks(_draw, None, n, 5, n_jobs=2, chunks_per_task=2)])
    assert len(one) == n and np.array_equal(one, two) and np.array_equal(one, grouped)


def _where(params, n, rng):
    import os
    import threading

    return np.array([os.getpid(), threading.get_ident()]), rng.random(n)


def test_threads_run_chunks_in_this_process_with_the_same_results():
    """``threads=True`` (the compiled escape and campus engines, which release the GIL): tasks run in threads of
    this process, not in worker processes that must first import the package; the chunks' numbers are those of
    ``n_jobs=1``."""
    import os

    n = 4 * CHUNK_RUNS
    one = [r for _, (_, r) in map_chunks(_where, None, n, 5, n_jobs=1)]
    got = [res for _, res in map_chunks(_where, None, n, 5, n_jobs=2, threads=True)]
    assert {int(w[0]) for w, _ in got} == {os.getpid()}
    assert all(np.array_equal(a, b) for a, (_, b) in zip(one, got, strict=True))
    procs = [res for _, res in map_chunks(_where, None, n, 5, n_jobs=2)]  # without: worker processes
    assert os.getpid() not in {int(w[0]) for w, _ in procs}


def test_the_compiled_engines_run_their_chunks_in_threads(monkeypatch):
    """sim.simulate of every kind asks for threads when the compiled engine runs, and not for the reference
    engine (a custom escape policy's Python code)."""

    import sim
    import sim.batch as batch

    asked = []
    real = batch.map_chunks

    def spy(*args, **kwargs):
        asked.append(kwargs.get("threads", args[6] if len(args) > 6 else False))
        return real(*args, **kwargs)

    monkeypatch.setattr(batch, "map_chunks", spy)
    root = ROOT / "scenarios"
    for kind, name in (("escape", "lone_rogue.toml"), ("campus", "seed_trio_vs_hounds.toml"),
                       ("formation", "dp_income.toml"), ("restraint", "flank_penalty.toml")):
        s = sim.load_scenario(root / kind / name)
        sim.simulate(s, runs=200, seed=1, n_jobs=2, keep_runs=False)
    s = sim.load_scenario(root / "escape" / "lone_rogue.toml")
    sim.simulate(s, runs=50, seed=1, n_jobs=2, keep_runs=False, engine="reference")
    assert asked == [True, True, True, True, False]


def test_the_random_layout_is_part_of_a_runs_fingerprint():
    """Chunks stored under another random layout are never mixed into a run (issue 11 changed two layouts)."""

    import sim
    from sim.batch import fingerprint_hash
    from sim.pipeline import run_fingerprint as fingerprint_of  # the run's fingerprint, with its kind's layout

    root = ROOT / "scenarios"
    escape = sim.load_scenario(root / "escape" / "lone_rogue.toml")
    campus = sim.load_scenario(root / "campus" / "seed_trio_vs_hounds.toml")
    formation = sim.load_scenario(root / "formation" / "dp_income.toml")
    assert fingerprint_of(escape, 1, 100)["random_layout"] == "escape-keyed-2"
    assert fingerprint_of(campus, 1, 100)["random_layout"] == "campus-stream-2"
    assert fingerprint_of(formation, 1, 100)["random_layout"] == "1"
    older = {**fingerprint_of(escape, 1, 100), "random_layout": "1"}
    assert fingerprint_hash(older) != fingerprint_hash(fingerprint_of(escape, 1, 100))
