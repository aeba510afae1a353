"""Issue 40 (hostile inputs, third round) and issue 45 items 1-2 (fourth round): the resume store never follows a
link and deletes only what it wrote, chunks are authenticated with a per-user key, a 5,000-digit integer, a pipe
as the scenario and a long name end in one line or run, a command records what each write put in place, and an
interrupted run never leaves one run's rows beside another run's summary."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from examples import ROOT

import sim
import sim.batch
from sim.batch import ChunkStore, encode_chunk, fingerprint_of

DP = ROOT / "scenarios" / "formation" / "dp_income.toml"


def _refusal(r) -> str:
    """The one line of a refusal: exit 2, exactly one line on stderr, no traceback."""
    assert r.code == 2, r
    err = r.err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


def _with_name(tmp_path: Path, name: str, file: str = "s.toml") -> Path:
    text = re.sub(r"^name = .*$", f"name = {name!r}".replace("'", '"'), DP.read_text(), count=1, flags=re.M)
    path = tmp_path / file
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- issue 40, item 2


@pytest.mark.parametrize("command", ["validate", "run", "exact"])
def test_a_5000_digit_integer_is_one_line_naming_file_and_key(tmp_path, cli, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    text = DP.read_text()
    assert re.search(r"^runs = \d+$", text, flags=re.M)
    path = tmp_path / "big.toml"
    path.write_text(re.sub(r"^runs = \d+$", "runs = " + "7" * 5000, text, count=1, flags=re.M))
    line = _refusal(cli(command, path))
    assert line.startswith(f"error: {path}: run.runs: ") and "5,000 digits" in line
    assert not (tmp_path / "reports").exists()


def test_a_5000_digit_integer_in_an_inline_table_names_its_dotted_key(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text('kind = "escape"\n[[party]]\nname = "A"\nscores = { str = 10, dex = ' + "1" * 5000 + " }\n")
    with pytest.raises(sim.ScenarioError) as info:
        sim.load_scenario(path)
    assert info.value.key == "party.scores.dex" and info.value.file == str(path)


# --------------------------------------------------------------------------------------------- issue 40, item 5


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_fifo_as_the_scenario_is_not_a_regular_file(tmp_path, cli, command, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # never opened: opening a FIFO without a writer would block
    line = _refusal(cli(command, fifo))
    assert f"{fifo}: not a regular file" in line and "no such" not in line


def test_a_device_as_the_scenario_is_not_a_regular_file(cli):
    assert "/dev/null: not a regular file" in _refusal(cli("validate", "/dev/null"))


# --------------------------------------------------------------------------------------------- issue 40, item 4


def test_a_valid_name_of_100_four_byte_letters_runs(tmp_path, cli, monkeypatch):
    """100 characters is a valid name; as UTF-8 it is 400 bytes, beyond a file system's 255 for one name."""
    from sim.limits import MAX_FOLDER_NAME_BYTES

    monkeypatch.chdir(tmp_path)
    name = "\U0001d49c" * 100  # MATHEMATICAL SCRIPT CAPITAL A: a letter, 4 bytes in UTF-8
    path = _with_name(tmp_path, name)
    assert cli("validate", path).code == 0
    assert cli("run", path, "--runs", 100, "--quiet").code == 0
    (folder,) = (tmp_path / "reports").iterdir()
    assert (folder / "summary.json").is_file()
    assert len(os.fsencode(folder.name)) <= MAX_FOLDER_NAME_BYTES
    assert folder.name.startswith("\U0001d49c" * 27) and re.fullmatch(r"\U0001d49c+-[0-9a-f]{8}", folder.name)


def test_two_long_names_with_the_same_start_get_two_folders(tmp_path):
    a = sim.load_scenario(_with_name(tmp_path, "\u00e9" * 99 + "a", "a.toml"))
    b = sim.load_scenario(_with_name(tmp_path, "\u00e9" * 99 + "b", "b.toml"))
    assert a.slug != b.slug
    assert len(a.slug.encode()) <= 120 and len(b.slug.encode()) <= 120
    short = sim.load_scenario(_with_name(tmp_path, "Short name", "c.toml"))
    assert short.slug == "short_name"  # names that fit are unchanged


# --------------------------------------------------------------------------------------------- issue 40, item 1

RUNS = 30_000  # three chunks of 10,000 (R-GEN-7)


def _keep_store(monkeypatch):
    """As if every run below were interrupted after its last chunk: the resume store stays."""
    monkeypatch.setattr(ChunkStore, "remove", lambda self: None)


def _run(cli, out, seed=1, runs=RUNS, *extra):
    return cli("run", DP, "--runs", runs, "--seed", seed, "--out", out, "--quiet", *extra)


def test_a_chunks_link_is_never_followed_and_its_target_is_untouched(tmp_path, cli):
    """`out/.chunks -> elsewhere`: nothing is written into or deleted from the link's target (today's code wrote
    its chunks there and then deleted every chunk-*.npz in it, the user's chunk-important.npz too)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "chunk-important.npz").write_bytes(b"the user's")
    (elsewhere / "chunk-000000.npz").write_bytes(b"also the user's")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".chunks").symlink_to(elsewhere, target_is_directory=True)
    ref = tmp_path / "ref"
    assert _run(cli, ref).code == 0
    r = _run(cli, out)
    assert r.code == 0, r.err
    assert "symbolic link" in r.err and "replaced by a folder of its own" in r.err
    assert sorted(p.name for p in elsewhere.iterdir()) == ["chunk-000000.npz", "chunk-important.npz"]
    assert (elsewhere / "chunk-important.npz").read_bytes() == b"the user's"
    assert (elsewhere / "chunk-000000.npz").read_bytes() == b"also the user's"
    assert not (out / ".chunks").exists() and not (out / ".chunks").is_symlink()  # complete: removed
    pd.testing.assert_frame_equal(pd.read_parquet(out / "runs.parquet"), pd.read_parquet(ref / "runs.parquet"))


def test_the_store_deletes_only_the_files_it_recorded_writing(tmp_path, cli):
    """A real `.chunks` folder holding the user's files: the run uses it and, complete, deletes its own chunks
    and journal only; the folder stays because the user's files are in it."""
    out = tmp_path / "out"
    (out / ".chunks").mkdir(parents=True)
    (out / ".chunks" / "chunk-important.npz").write_bytes(b"the user's")
    (out / ".chunks" / ".chunk-notes.tmp").write_bytes(b"the user's too")
    assert _run(cli, out).code == 0
    assert sorted(p.name for p in (out / ".chunks").iterdir()) == [".chunk-notes.tmp", "chunk-important.npz"]


def test_a_chunk_replaced_after_it_was_written_is_not_deleted(tmp_path):
    """The store deletes a file it wrote only while it still has the recorded device, inode, size and time."""
    scenario = sim.load_scenario(DP)
    folder = tmp_path / "s"
    store = ChunkStore(folder, fingerprint_of(scenario, 1, RUNS))
    store.save(0, {"x": 1})
    store.save(1, {"x": 2})
    (folder / "chunk-000001.npz").unlink()
    (folder / "chunk-000001.npz").write_bytes(b"the user's file of that name, made since")
    store.remove()
    assert sorted(p.name for p in folder.iterdir()) == ["chunk-000001.npz"]


def test_a_runs_parquet_folder_keeps_the_users_files(tmp_path, cli):
    """An earlier `runs.parquet/` holding a file no command wrote (today's code deleted every part-*.parquet in
    it): refused with one line before any work, the file kept; the parts of an earlier run are replaced."""
    out = tmp_path / "out"
    assert _run(cli, out, 1, 20_000).code == 0
    mine = out / "runs.parquet" / "part-important.parquet"
    mine.write_bytes(b"the user's")
    line = _refusal(_run(cli, out, 2))
    assert "part-important.parquet" in line and "did not write" in line
    assert mine.read_bytes() == b"the user's" and not (out / ".chunks").exists()
    mine.unlink()
    assert _run(cli, out, 2).code == 0
    assert sorted(p.name for p in (out / "runs.parquet").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet", "part-000002.parquet"]


def test_a_runs_parquet_link_is_replaced_and_its_target_untouched(tmp_path, cli):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "part-000000.parquet").write_bytes(b"the user's")
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs.parquet").symlink_to(elsewhere, target_is_directory=True)
    r = _run(cli, out)
    assert r.code == 0 and "symbolic link" in r.err
    assert not (out / "runs.parquet").is_symlink() and len(pd.read_parquet(out / "runs.parquet")) == RUNS
    assert [p.name for p in elsewhere.iterdir()] == ["part-000000.parquet"]
    assert (elsewhere / "part-000000.parquet").read_bytes() == b"the user's"


# --------------------------------------------------------------------------------------------- issue 40, item 3


def test_a_forged_chunk_is_recomputed_and_the_console_says_so(tmp_path, monkeypatch, cli):
    """Whoever holds the scenario can compute the old per-chunk check (a hash of the run's fingerprint). A chunk
    forged that way (chunk 0's counts stored as chunk 1), or one in the new format with an HMAC under another
    key, is computed again, and the summary is the uninterrupted run's."""
    ref, out = tmp_path / "ref", tmp_path / "out"
    assert _run(cli, ref).code == 0
    with monkeypatch.context() as m:
        _keep_store(m)
        assert _run(cli, out).code == 0
    scenario = sim.load_scenario(DP)
    fp = fingerprint_of(scenario, 1, RUNS, streamed=True, runs_written=True)
    store = ChunkStore(out / ".chunks", fp)
    stolen = store.load(0)
    assert stolen is not None  # the folder's own chunk, written by this user's sim: accepted
    body = encode_chunk({"run": store.run_id, "index": 1, "result": stolen})
    (out / ".chunks" / "chunk-000001.npz").write_bytes(body)  # the old format, with the computable check
    magic = getattr(sim.batch, "CHUNK_MAGIC", b"")
    (out / ".chunks" / "chunk-000002.npz").write_bytes(magic + os.urandom(32) + body)  # another key's HMAC
    del store  # its folder descriptor closes
    r = _run(cli, out)
    assert r.code == 0
    assert json.loads((out / "summary.json").read_text()) == json.loads((ref / "summary.json").read_text())
    pd.testing.assert_frame_equal(pd.read_parquet(out / "runs.parquet"), pd.read_parquet(ref / "runs.parquet"))
    assert "2 stored chunks failed authentication" in r.err and "computed again" in r.err


def test_the_key_is_private_and_kept_where_XDG_CONFIG_HOME_says(tmp_path, monkeypatch):
    from sim import store_key

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    store_key.user_key.cache_clear()
    try:
        key = store_key.user_key()
        path = tmp_path / "cfg" / "sim" / "resume-key"
        assert path.is_file() and (path.stat().st_mode & 0o777) == 0o600
        store_key.user_key.cache_clear()
        assert store_key.user_key() == key  # kept: a later process resumes
        path.chmod(0o644)
        store_key.user_key.cache_clear()
        assert store_key.user_key() == key and (path.stat().st_mode & 0o777) == 0o600
    finally:
        store_key.user_key.cache_clear()


def test_a_store_of_another_user_key_is_recomputed_to_the_same_result(tmp_path, monkeypatch, cli):
    """Chunks written under another key (another user, or a key deleted since): all recomputed, same result."""
    from sim import store_key

    ref, out = tmp_path / "ref", tmp_path / "out"
    assert _run(cli, ref).code == 0
    with monkeypatch.context() as m:
        _keep_store(m)
        m.setattr(store_key, "user_key", lambda: b"k" * 32)
        assert _run(cli, out).code == 0
    r = _run(cli, out)
    assert r.code == 0 and "3 stored chunks failed authentication" in r.err
    assert json.loads((out / "summary.json").read_text()) == json.loads((ref / "summary.json").read_text())


# --------------------------------------------------------------------------------------------- issue 45, item 1


def _while_running(monkeypatch, action):
    """Run ``action()`` in the middle of every `run` below: after the simulation, before the outputs."""
    import sim.pipeline as pipeline

    real = pipeline._exact_beside

    def meanwhile(*args, **kwargs):
        action()
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "_exact_beside", meanwhile)


def test_a_note_saved_during_a_run_is_not_taken_as_the_runs_output(tmp_path, monkeypatch, cli):
    """Today's code diffed snapshots of the folder, so a note saved meanwhile was recorded as the run's own and
    deleted by the next run of the same command; a folder the user made meanwhile likewise."""
    out = tmp_path / "out"
    out.mkdir()

    def save_note():
        (out / "note.txt").write_text("the user's")
        (out / "mine").mkdir(exist_ok=True)
        (out / "mine" / "draft.md").write_text("the user's")

    with monkeypatch.context() as m:
        _while_running(m, save_note)
        assert _run(cli, out, 1, 200).code == 0
    manifest = json.loads((out / ".sim-outputs.json").read_text())
    assert "note.txt" not in manifest["files"]["run"] and "mine/draft.md" not in manifest["files"]["run"]
    assert "mine" not in manifest["dirs"].get("run", {})
    assert "summary.json" in manifest["files"]["run"]
    assert _run(cli, out, 2, 200, "--no-runs").code == 0
    assert (out / "note.txt").read_text() == "the user's"
    assert (out / "mine" / "draft.md").read_text() == "the user's"
    assert not (out / "runs.parquet").exists()  # the run's own earlier output, not written again: replaced


def test_a_failing_run_removes_only_what_it_wrote(tmp_path, monkeypatch, cli):
    """A run into a new folder fails after another command wrote its report into a sub-folder meanwhile (the
    studio, a sweep): today's code removed the whole folder. Now: only the run's own files go, and the folders
    it made only when that leaves them empty."""
    import errno

    from sim import outputs  # summary.json is written by sim.outputs.atomic_write_text

    out = tmp_path / "new"

    def other_command():
        (out / "sweep").mkdir()
        (out / "sweep" / "report.html").write_text("the sweep's report")

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    _while_running(monkeypatch, other_command)
    real_write = outputs.atomic_write_bytes

    def write_then_fail(path, data, mode=None):
        real_write(path, data, mode)
        if Path(path).name == "summary.json":  # the last output: everything else of the run is written
            full_disk()

    monkeypatch.setattr(outputs, "atomic_write_bytes", write_then_fail)
    assert "No space left" in _refusal(_run(cli, out))
    assert (out / "sweep" / "report.html").read_text() == "the sweep's report"
    # the run's report, charts, rows and resume store are gone; the folder stays (it is not empty)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["sweep", "sweep/report.html"]


def test_a_refused_run_removes_the_folder_it_made_when_empty(tmp_path, cli):
    out = tmp_path / "new"
    assert _refusal(cli("run", DP, "--runs", "1000000000000", "--out", out, "--quiet"))
    assert not out.exists()


# --------------------------------------------------------------------------------------------- issue 45, item 2


def _rows_match_summary(out: Path) -> None:
    """Whatever an interruption left: rows and summary of one run, or rows without a summary."""
    if (out / "summary.json").exists():
        summary = json.loads((out / "summary.json").read_text())
        assert (out / "runs.parquet").exists()
        assert len(pd.read_parquet(out / "runs.parquet")) == summary["runs"]
        assert (out / "report.html").exists()


def test_an_interrupted_run_never_leaves_its_rows_beside_another_runs_summary(tmp_path, monkeypatch, cli):
    """Run A (20,000 runs, seed 3) completes; run B (50,000 runs, seed 11) into the same folder is interrupted
    after its fourth chunk. Today's code had cleared A's rows and written B's first parts beside A's summary and
    report. Now A's outputs stay whole, B's rows are staged in the resume store, and B resumed gives exactly the
    uninterrupted B."""
    out, ref = tmp_path / "out", tmp_path / "ref"
    assert _run(cli, out, 3, 20_000).code == 0
    a_summary = (out / "summary.json").read_text()
    real_save = ChunkStore.save

    def interrupted(self, index, result):
        real_save(self, index, result)
        if index == 3:  # B's fourth chunk: 40,000 of its rows exist, A had 20,000
            raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(ChunkStore, "save", interrupted)
        assert _run(cli, out, 11, 50_000).code == 130
    _rows_match_summary(out)
    assert (out / "summary.json").read_text() == a_summary
    assert len(pd.read_parquet(out / "runs.parquet")) == 20_000
    assert _run(cli, out, 11, 50_000).code == 0  # resumed
    assert _run(cli, ref, 11, 50_000).code == 0  # uninterrupted
    assert json.loads((out / "summary.json").read_text()) == json.loads((ref / "summary.json").read_text())
    pd.testing.assert_frame_equal(pd.read_parquet(out / "runs.parquet"), pd.read_parquet(ref / "runs.parquet"))
    assert not (out / ".chunks").exists()


def test_an_interruption_while_the_outputs_are_written_leaves_no_old_summary(tmp_path, monkeypatch, cli):
    """Interrupted after B's rows are in place, before its summary: A's summary and report are gone already."""
    out = tmp_path / "out"
    assert _run(cli, out, 3, 20_000).code == 0
    import sim.pipeline as pipeline

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(pipeline, "_paths", stop)  # right after the kind's report is written
        assert _run(cli, out, 11, 50_000).code == 130
    assert not (out / "summary.json").exists()
    assert len(pd.read_parquet(out / "runs.parquet")) == 50_000
    _rows_match_summary(out)
