"""R-GEN-7 seeding and batching."""

from __future__ import annotations

import numpy as np

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


def test_the_random_layout_is_part_of_a_runs_fingerprint():
    """Chunks stored under another random layout are never mixed into a run (issue 11 changed two layouts)."""
    from pathlib import Path

    import sim
    from sim.batch import fingerprint_hash, fingerprint_of

    root = Path(__file__).resolve().parents[1] / "scenarios"
    escape = sim.load_scenario(root / "escape" / "lone_rogue.toml")
    campus = sim.load_scenario(root / "campus" / "seed_trio_vs_hounds.toml")
    formation = sim.load_scenario(root / "formation" / "dp_income.toml")
    assert fingerprint_of(escape, 1, 100)["random_layout"] == "escape-keyed-2"
    assert fingerprint_of(campus, 1, 100)["random_layout"] == "campus-stream-2"
    assert fingerprint_of(formation, 1, 100)["random_layout"] == "1"
    older = {**fingerprint_of(escape, 1, 100), "random_layout": "1"}
    assert fingerprint_hash(older) != fingerprint_hash(fingerprint_of(escape, 1, 100))
