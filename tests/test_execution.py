"""Backends, resumable chunk stores and progress (R-GEN-7 across backends; issue: scale and robustness)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from examples import ROOT

import sim
from sim.batch import ChunkStore, execution, fingerprint_of

ESCAPE = ROOT / "scenarios" / "escape" / "party_under_watch.toml"


def _example(kind: str) -> Path:
    return sorted((ROOT / "scenarios" / kind).glob("*.toml"))[0]


@pytest.fixture(scope="module")
def dask_scheduler():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["escape", "restraint", "campus", "formation"])
def test_R_GEN_7_dask_cluster_gives_identical_results(kind, dask_scheduler):
    scenario = sim.load_scenario(_example(kind))
    runs = 25_000 if kind in ("escape", "restraint", "formation") else 12_000
    local = sim.simulate(scenario, runs=runs, seed=17, n_jobs=1)
    with execution(backend="dask", scheduler=dask_scheduler):
        remote = sim.simulate(scenario, runs=runs, seed=17)
    assert local.runs.equals(remote.runs)


@pytest.mark.slow
def test_a_real_scheduler_passes_the_handshake_and_the_cli_runs_on_it(dask_scheduler, cli, scratch):
    from sim.batch import check_scheduler

    assert check_scheduler(dask_scheduler) == dask_scheduler  # issue 45 item 4: one deadline, then the Client
    res = cli("run", _example("restraint"), "--runs", 20_000, "--backend", "dask", "--scheduler", dask_scheduler,
              "--out", scratch, "--quiet")
    assert res.code == 0 and (scratch / "summary.json").is_file(), res.err


def test_store_resumes_to_the_identical_result(tmp_path):
    scenario = sim.load_scenario(ESCAPE)
    whole = sim.simulate(scenario, runs=30_000, seed=5)
    store = ChunkStore(tmp_path / "chunks", fingerprint_of(scenario, 5, 30_000))
    with execution(store=store):
        first = sim.simulate(scenario, runs=30_000, seed=5)
    assert store.finished() == 3 and first.runs.equals(whole.runs)
    (tmp_path / "chunks" / "chunk-000001.npz").unlink()  # as if interrupted before chunk 1 finished
    with execution(store=ChunkStore(tmp_path / "chunks", fingerprint_of(scenario, 5, 30_000))):
        resumed = sim.simulate(scenario, runs=30_000, seed=5)
    assert resumed.runs.equals(whole.runs) and resumed.summary["escape_rate"] == whole.summary["escape_rate"]


def test_store_is_data_only_and_treats_crafted_or_damaged_chunks_as_missing(tmp_path):
    """A chunk store in a shared folder must never run code: a pickle (or any other file) in a chunk's
    place is treated as missing and recomputed, to the same result as an uninterrupted run."""
    import pickle

    scenario = sim.load_scenario(ESCAPE)
    whole = sim.simulate(scenario, runs=30_000, seed=5)
    folder = tmp_path / "chunks"
    with execution(store=ChunkStore(folder, fingerprint_of(scenario, 5, 30_000))):
        sim.simulate(scenario, runs=30_000, seed=5)
    marker = tmp_path / "ran"
    payload = pickle.dumps(type("P", (), {"__reduce__": lambda self: (exec, (
        f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')",))})())
    (folder / "chunk-000000.npz").write_bytes(payload)  # crafted: a pickle where a chunk belongs
    good = (folder / "chunk-000001.npz").read_bytes()
    (folder / "chunk-000001.npz").write_bytes(good[: len(good) // 2])  # truncated
    import io

    import numpy as np

    buf = io.BytesIO()  # a valid npz holding an object array: refused by allow_pickle=False
    np.savez(buf, __tree__=np.array([{"x": 1}], dtype=object))
    (folder / "chunk-000002.npz").write_bytes(buf.getvalue())
    store = ChunkStore(folder, fingerprint_of(scenario, 5, 30_000))
    assert [store.load(i) for i in range(3)] == [None, None, None]
    with execution(store=store):
        resumed = sim.simulate(scenario, runs=30_000, seed=5)
    assert not marker.exists()
    assert resumed.runs.equals(whole.runs)
    assert store.load(0) is not None  # recomputed chunks were stored again


def test_chunk_format_refuses_classes_outside_the_package():
    import json

    from sim.batch import decode_chunk, encode_chunk

    data = encode_chunk({"a": 1})
    import io
    import zipfile

    import numpy as np

    tree = {"t": "dataclass", "cls": "subprocess:Popen", "v": {}}
    buf = io.BytesIO()
    np.savez(buf, __tree__=np.frombuffer(json.dumps(tree).encode(), dtype=np.uint8))
    with pytest.raises(ValueError, match="not a known result type"):
        decode_chunk(buf.getvalue())
    assert decode_chunk(data) == {"a": 1} and zipfile.is_zipfile(io.BytesIO(data))
    with pytest.raises(TypeError):
        encode_chunk({"f": lambda: 0})


@pytest.mark.parametrize("kind", ["escape", "restraint", "campus", "formation"])
def test_every_kinds_chunks_round_trip_through_the_store(kind, tmp_path):
    """Streamed aggregates and per-run chunk results are stored as data and read back to the same run."""
    import sim.batch as B
    from sim.batch import decode_chunk, encode_chunk
    from sim.pipeline import run

    scenario = sim.load_scenario(_example(kind))
    seen = []
    orig = B.ChunkStore.save

    def save(self, index, result):
        back = decode_chunk(encode_chunk(result))
        seen.append(type(back))
        assert encode_chunk(back) == encode_chunk(result)
        orig(self, index, result)

    B.ChunkStore.save = save
    try:
        run(scenario, tmp_path / "o", runs=12_000, seed=2)
    finally:
        B.ChunkStore.save = orig
    assert len(seen) == 2


def test_store_refuses_a_changed_scenario(tmp_path):
    scenario = sim.load_scenario(ESCAPE)
    ChunkStore(tmp_path / "chunks", fingerprint_of(scenario, 5, 30_000)).save(0, {"x": 1})  # the store exists
    with pytest.raises(sim.ScenarioError, match="different run.*seed"):
        ChunkStore(tmp_path / "chunks", fingerprint_of(scenario, 6, 30_000))
    other = sim.load_scenario(ROOT / "scenarios" / "escape" / "lone_rogue.toml")
    with pytest.raises(sim.ScenarioError, match="scenario_hash"):
        ChunkStore(tmp_path / "chunks", fingerprint_of(other, 5, 30_000))


# Run Python code (argv[1]) after patching ChunkStore.save to stop after the chunk whose number is
# $SIM_TEST_STOP_AFTER: it creates the file $SIM_TEST_READY, then waits there for the test's signal.
# The tests wait on that file (an event), not on a count of chunks at some moment.
STOP_AFTER_CHUNKS = """
import os, runpy, sys, time
import sim.batch as B
orig = B.ChunkStore.save
def save(self, index, result):
    orig(self, index, result)
    if index + 1 >= int(os.environ["SIM_TEST_STOP_AFTER"]):
        open(os.environ["SIM_TEST_READY"], "w").close()
        time.sleep(3600)
B.ChunkStore.save = save
code = sys.argv.pop(1)
if code == "-m":  # the sim CLI, with the remaining arguments
    runpy.run_module("sim", run_name="__main__", alter_sys=True)
else:
    exec(code)
"""

KILL_SCRIPT = """
import sys
import sim
from sim.batch import ChunkStore, execution, fingerprint_of
s = sim.load_scenario(sys.argv[1])
store = ChunkStore(sys.argv[2], fingerprint_of(s, 9, 60_000))
with execution(store=store):
    sim.simulate(s, runs=60_000, seed=9)
"""


def _stopping(args, ready: Path, after: int, **kw) -> subprocess.Popen:
    env = {**os.environ, "SIM_TEST_STOP_AFTER": str(after), "SIM_TEST_READY": str(ready)}
    return subprocess.Popen([sys.executable, "-c", STOP_AFTER_CHUNKS, *args], cwd=ROOT, env=env, **kw)


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while not path.exists():
        assert proc.poll() is None, "the run ended before it reached the chunk to stop after"
        assert time.time() < deadline, f"{path.name} did not appear"
        time.sleep(0.02)


def test_sigkill_mid_run_then_resume_gives_the_uninterrupted_result(tmp_path):
    folder = tmp_path / "chunks"
    ready = tmp_path / "ready"
    proc = _stopping([KILL_SCRIPT, str(ESCAPE), str(folder)], ready, after=2)
    _wait_for(ready, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(list(folder.glob("chunk-*.npz")))
    assert finished == 2, finished
    scenario = sim.load_scenario(ESCAPE)
    store = ChunkStore(folder, fingerprint_of(scenario, 9, 60_000))
    assert all(store.load(i) is not None for i in range(finished))  # only whole chunks (atomic writes)
    with execution(store=ChunkStore(folder, fingerprint_of(scenario, 9, 60_000))):
        resumed = sim.simulate(scenario, runs=60_000, seed=9)
    whole = sim.simulate(scenario, runs=60_000, seed=9)
    assert resumed.runs.equals(whole.runs)


def test_bad_backend_settings_are_clear_errors():
    with pytest.raises(sim.SimError, match="--backend"):
        with execution(backend="spark"):
            pass
    with pytest.raises(sim.SimError, match="--scheduler"):
        with execution(backend="dask"):
            pass


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "sim", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_cli_run_interrupted_then_rerun_gives_the_uninterrupted_result(tmp_path, sig):
    """`python -m sim run` killed mid-run continues from its finished chunks to the identical result."""
    import json

    import pandas as pd

    out = tmp_path / "out"
    args = ("run", str(ESCAPE), "--runs", "60000", "--seed", "3", "--out", str(out), "--quiet")
    ready = tmp_path / "ready"
    proc = _stopping(["-m", *args], ready, after=3, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for(ready, proc)  # chunk 3 of 6 is written and the run waits: interrupt it there
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL)
    done = len(list((out / ".chunks").glob("chunk-*.npz")))
    assert done == 3 and not (out / "summary.json").exists()
    assert _cli(*args).wait(timeout=300) == 0
    assert not (out / ".chunks").exists()  # removed once complete
    whole = tmp_path / "whole"
    assert _cli("run", str(ESCAPE), "--runs", "60000", "--seed", "3", "--out", str(whole), "--quiet").wait(300) == 0
    resumed, fresh = json.loads((out / "summary.json").read_text()), json.loads((whole / "summary.json").read_text())
    assert resumed == fresh
    assert pd.read_parquet(out / "runs.parquet").equals(pd.read_parquet(whole / "runs.parquet"))


def test_cli_refuses_a_changed_scenario_in_an_interrupted_folder(tmp_path, cli):
    scenario = sim.load_scenario(ESCAPE)
    out = tmp_path / "out"
    ChunkStore(out / ".chunks", fingerprint_of(scenario, 99, 1000, streamed=True, runs_written=True)).save(0, {})
    refused = cli("run", ESCAPE, "--runs", 1000, "--seed", 3, "--out", out, "--quiet")
    assert refused.code == 2 and "different run" in refused.err


def _stderr_of_run(tmp_path, tty: bool, quiet: bool, columns: int = 120) -> str:
    import pty

    args = [sys.executable, "-m", "sim", "run", str(ESCAPE), "--runs", "20000", "--seed", "1", "--no-runs",
            "--out", str(tmp_path / f"o{int(tty)}{int(quiet)}")] + (["--quiet"] if quiet else [])
    env = {**os.environ, "SIM_PROGRESS_DELAY": "0"}  # show the bar at once: no dependence on the run's speed
    if not tty:
        return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env).stderr
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))  # the terminal's size
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.slow
def test_progress_bar_on_a_terminal_and_silent_otherwise(tmp_path):
    """Progress on stderr (runs done, runs/s, ETA), silent with --quiet or off a tty. The bar normally waits a
    second before it appears; SIM_PROGRESS_DELAY=0 shows it at once, so the run's speed does not matter."""
    on_tty = _stderr_of_run(tmp_path, tty=True, quiet=False)
    assert "simulating" in on_tty and "run/s" in on_tty
    assert "simulating" not in _stderr_of_run(tmp_path, tty=True, quiet=True)
    assert "simulating" not in _stderr_of_run(tmp_path, tty=False, quiet=False)
    zero = _stderr_of_run(tmp_path, tty=True, quiet=False, columns=0)  # some terminals report 0 columns
    assert "simulating" in zero and "run/s" in zero
