"""Issue 28, items 3 and 6: stored chunks are bound to their run and index, a compressed chunk is refused
before it is inflated, and a refused run writes nothing (no `.chunks/manifest.json` left behind)."""

from __future__ import annotations

import io
import json
import shutil
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from examples import ROOT

import sim
import sim.batch
from sim.batch import ChunkStore, fingerprint_of

DP = ROOT / "scenarios" / "formation" / "dp_income.toml"
RUNS = 30_000  # three chunks of 10,000 (R-GEN-7)


def _keep_store(monkeypatch):
    """As if every run below were interrupted after its last chunk: the resume store stays."""
    monkeypatch.setattr(ChunkStore, "remove", lambda self: None)


def _runs(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / "runs.parquet")


def test_foreign_and_moved_chunks_are_recomputed(tmp_path, monkeypatch, cli):
    """A chunk of a run with another seed and a chunk copied to another index, staged into an interrupted run's
    store, change nothing: the resumed result equals an uninterrupted run's, run for run."""
    ref, a, b = tmp_path / "ref", tmp_path / "a", tmp_path / "b"
    assert cli("run", DP, "--runs", RUNS, "--seed", 1, "--out", ref, "--quiet").code == 0
    with monkeypatch.context() as m:
        _keep_store(m)
        assert cli("run", DP, "--runs", RUNS, "--seed", 1, "--out", a, "--quiet").code == 0
        assert cli("run", DP, "--runs", RUNS, "--seed", 2, "--out", b, "--quiet").code == 0
    store = a / ".chunks"
    shutil.copy(b / ".chunks" / "chunk-000001.npz", store / "chunk-000001.npz")  # another seed's chunk 1
    shutil.copy(store / "chunk-000000.npz", store / "chunk-000002.npz")  # chunk 0 copied to index 2
    assert cli("run", DP, "--runs", RUNS, "--seed", 1, "--out", a, "--quiet").code == 0
    expected, got = _runs(ref), _runs(a)
    assert got["run"].is_unique and len(got) == RUNS
    pd.testing.assert_frame_equal(got, expected)
    assert json.loads((a / "summary.json").read_text()) == json.loads((ref / "summary.json").read_text())
    assert not store.exists()  # complete: the store is removed


def test_a_chunk_records_its_run_and_index(tmp_path):
    scenario = sim.load_scenario(DP)
    store = ChunkStore(tmp_path / "s", fingerprint_of(scenario, 1, RUNS))
    store.save(0, {"x": np.arange(3)})
    assert store.load(0)["x"].tolist() == [0, 1, 2]
    shutil.copy(tmp_path / "s" / "chunk-000000.npz", tmp_path / "s" / "chunk-000001.npz")
    assert store.load(1) is None  # copied to another index
    other = ChunkStore(tmp_path / "t", fingerprint_of(scenario, 2, RUNS))
    other.save(0, {"x": np.arange(3)})
    shutil.copy(tmp_path / "t" / "chunk-000000.npz", tmp_path / "s" / "chunk-000000.npz")
    assert store.load(0) is None  # another run's


def _bomb(expanded: int) -> bytes:
    """A chunk file whose array member is `expanded` zero bytes, deflated (a few hundred KB on disk)."""
    tree = json.dumps({"t": "dict", "v": {"x": {"t": "array", "v": "a0"}}}).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("a0.npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array_header_1_0(fh, {"descr": "|u1", "fortran_order": False,
                                                      "shape": (expanded,)})
            block = bytes(1 << 20)
            for _ in range(expanded >> 20):
                fh.write(block)
        with zf.open("__tree__.npy", "w") as fh:
            np.lib.format.write_array(fh, np.frombuffer(tree, dtype=np.uint8))
    return buf.getvalue()


def test_a_compressed_chunk_is_refused_before_it_is_inflated(tmp_path):
    expanded = 300 << 20  # 300 MB of zeros in about 300 KB
    data = _bomb(expanded)
    assert len(data) < 2 << 20
    store = ChunkStore(tmp_path / "s", fingerprint_of(sim.load_scenario(DP), 1, RUNS))
    (tmp_path / "s").mkdir(exist_ok=True)
    (tmp_path / "s" / "chunk-000000.npz").write_bytes(data)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        assert store.load(0) is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 5
    assert peak < 32 << 20, f"peak {peak / 2**20:.0f} MB while refusing a {expanded >> 20} MB bomb"
    with pytest.raises(ValueError, match="compressed"):
        sim.batch.check_npz(data)


def test_an_oversized_chunk_file_is_not_read(tmp_path, monkeypatch):
    store = ChunkStore(tmp_path / "s", fingerprint_of(sim.load_scenario(DP), 1, RUNS))
    store.save(0, {"x": np.arange(3)})
    monkeypatch.setattr(sim.batch, "MAX_CHUNK_BYTES", 100)
    read = []
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self) or b"")
    assert store.load(0) is None and read == []  # the size is checked before reading


# --------------------------------------------------------------------------------------------- item 6


CODE_POLICY = """kind = "escape"
name = "custom"
[run]
runs = 1000
[policy]
name = "sim.escape.examples:cautious"
[[party]]
name = "Rogue"
class = "rogue"
level = 3
scores = { str = 10, dex = 16, con = 12, int = 10, wis = 12, cha = 10 }
[party.restraints]
arms = "heavy"
"""


@pytest.mark.parametrize("case", ["too_many_runs", "code_without_opt_in"])
def test_a_refused_run_writes_nothing_into_an_existing_folder(tmp_path, cli, case):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("mine")
    if case == "too_many_runs":
        args = ["run", str(DP), "--runs", "1000000000000", "--out", str(out), "--quiet"]
    else:
        scen = tmp_path / "custom.toml"
        scen.write_text(CODE_POLICY)
        sim.load_scenario(scen)  # a valid scenario: only the opt-in is missing
        args = ["run", str(scen), "--out", str(out), "--quiet"]
    refused = cli(*args)
    assert refused.code == 2
    err = refused.err.strip().splitlines()
    assert len(err) == 1, err
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    assert cli("run", DP, "--runs", 200, "--out", out, "--quiet").code == 0  # the folder still works
