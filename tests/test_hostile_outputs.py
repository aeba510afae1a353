"""Issue 28, items 1, 4 and 7: a crafted `.sim-outputs.json` deletes nothing the project did not write, one
writer per output folder, and output-folder faults end with one line (exit 2), not a traceback."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from examples import ROOT

from sim.cli import main
from sim.outputs import OUTPUT_MANIFEST, FolderLock, OwnedOutputs

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"
DP = ROOT / "scenarios" / "formation" / "dp_income.toml"


def _sig(path: Path) -> list[int]:
    st = os.lstat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def test_the_issues_shell_recipe_deletes_nothing(tmp_path):
    """mkdir -p V/src; echo x > V/README.md; echo x > V/src/main.py;
    echo '{"outputs":{"run":["README.md","src/main.py"]}}' > V/.sim-outputs.json;
    python -m sim run scenarios/escape/lone_rogue.toml --out V   -> both files survive."""
    v = tmp_path / "V"
    (v / "src").mkdir(parents=True)
    (v / "README.md").write_text("x\n")
    (v / "src" / "main.py").write_text("x\n")
    (v / OUTPUT_MANIFEST).write_text('{"outputs":{"run":["README.md","src/main.py"]}}\n')
    proc = subprocess.run([sys.executable, "-m", "sim", "run", str(ROGUE), "--out", str(v), "--runs", "2000",
                           "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert (v / "README.md").read_text() == "x\n"
    assert (v / "src" / "main.py").read_text() == "x\n"
    assert (v / "report.html").is_file()


def _run_into(folder: Path, runs: int = 200) -> None:
    assert main(["run", str(DP), "--out", str(folder), "--runs", str(runs), "--quiet"]) == 0


def test_forged_signatures_do_not_reach_the_users_files(tmp_path):
    """A manifest with the exact device/inode/size/time of the user's files still deletes nothing when the
    path goes into a sub-folder the project did not create, through a symbolic link, or when the manifest is
    writable by others (a shared folder)."""
    out = tmp_path / "o"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("keep")
    out.mkdir()
    (out / "src").mkdir()
    (out / "src" / "main.py").write_text("keep")
    (out / "notes.md").write_text("keep")
    (out / "link").symlink_to(outside, target_is_directory=True)
    _run_into(out)
    manifest = json.loads((out / OUTPUT_MANIFEST).read_text())
    st_src, st_out = os.lstat(out / "src"), os.lstat(outside)
    manifest["files"]["run"].update({
        "src/main.py": _sig(out / "src" / "main.py"),     # a sub-folder the user made
        "link/secret.txt": _sig(outside / "secret.txt"),  # through a link, out of the folder
    })
    manifest["dirs"] = {"run": {"link": [st_out.st_dev, st_out.st_ino]}}  # claims the link's target as ours
    (out / OUTPUT_MANIFEST).write_text(json.dumps(manifest))
    _run_into(out)
    assert (out / "src" / "main.py").read_text() == "keep" and (outside / "secret.txt").read_text() == "keep"
    # the sub-folder claimed outright with its true inode: only a trusted manifest could do that, so make the
    # manifest writable by the group (what another user of a shared folder could edit): it is not acted on
    manifest = json.loads((out / OUTPUT_MANIFEST).read_text())
    manifest["files"]["run"]["src/main.py"] = _sig(out / "src" / "main.py")
    manifest["files"]["run"]["notes.md"] = _sig(out / "notes.md")
    manifest["dirs"]["run"] = {"src": [st_src.st_dev, st_src.st_ino]}
    (out / OUTPUT_MANIFEST).write_text(json.dumps(manifest))
    os.chmod(out / OUTPUT_MANIFEST, 0o664)
    _run_into(out)
    assert (out / "src" / "main.py").read_text() == "keep" and (out / "notes.md").read_text() == "keep"


def test_a_file_changed_since_it_was_written_is_kept(tmp_path):
    """The project's own stale file, edited by the user since, is no longer provably the project's."""
    from sim.report import atomic_write_text as write  # the project's writer: it reports what it put in place

    out = tmp_path / "o"
    out.mkdir()
    owned = OwnedOutputs(out, "run")
    write(out / "a.txt", "ours")
    write(out / "b.txt", "ours")
    owned.commit()
    (out / "b.txt").write_text("edited by the user")
    owned = OwnedOutputs(out, "run")
    write(out / "c.txt", "ours")
    removed = owned.commit()
    assert removed == ["a.txt"]  # stale and unchanged: deleted
    assert (out / "b.txt").read_text() == "edited by the user"


def test_stale_outputs_in_the_commands_own_subfolders_are_still_replaced(tmp_path):
    from sim.report import atomic_write_text as write  # it creates the sub-folders and reports them

    out = tmp_path / "o"
    out.mkdir()
    owned = OwnedOutputs(out, "run")
    write(out / "sub" / "deep" / "x.txt", "ours")
    owned.commit()
    owned = OwnedOutputs(out, "run")
    write(out / "y.txt", "ours")
    assert owned.commit() == ["sub/deep/x.txt"]
    assert not (out / "sub").exists()  # the sub-folders it made, left empty, go too


# --------------------------------------------------------------------------------------------- item 4


def test_a_second_writer_is_refused_with_one_line(tmp_path, cli):
    out = tmp_path / "o"
    out.mkdir()
    lock = FolderLock(out)
    lock.acquire()  # another command holds the folder
    try:
        (out / "theirs.txt").write_text("in progress")
        refused = cli("run", DP, "--out", out, "--runs", 200, "--quiet")
    finally:
        lock.release()
    assert "another sim command is writing into this folder" in _refusal(refused)
    assert sorted(p.name for p in out.iterdir()) == ["theirs.txt"]


def test_a_failing_run_does_not_delete_a_concurrent_runs_output(tmp_path, monkeypatch, capsys):
    """Run A holds a new folder; run B into it (refused) must not remove it when it fails."""
    out = tmp_path / "new"
    started, release = threading.Event(), threading.Event()
    import sim.pipeline as sc

    real = sc.run

    def slow(*args, **kwargs):
        result = real(*args, **kwargs)
        started.set()
        release.wait(60)
        return result

    monkeypatch.setattr(sc, "run", slow)
    codes = []
    a = threading.Thread(target=lambda: codes.append(main(["run", str(DP), "--out", str(out), "--runs", "200",
                                                            "--quiet"])))
    a.start()
    assert started.wait(120)
    monkeypatch.setattr(sc, "run", real)
    assert main(["run", str(DP), "--out", str(out), "--runs", "100", "--quiet"]) == 2
    release.set()
    a.join(120)
    assert codes == [0]
    assert json.loads((out / "summary.json").read_text())["runs"] == 200


# --------------------------------------------------------------------------------------------- item 7


def _refusal(r) -> str:
    """The one line of a refusal: exit 2, exactly one line on stderr, no traceback."""
    assert r.code == 2, r
    err = r.err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


def test_out_naming_a_regular_file(tmp_path, cli):
    f = tmp_path / "file.txt"
    f.write_text("mine")
    assert "not a folder" in _refusal(cli("run", DP, "--out", f, "--runs", 100, "--quiet"))
    assert f.read_text() == "mine"
    _refusal(cli("exact", ROGUE, "--out", f / "sub"))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_naming_a_read_only_folder(tmp_path, cli):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert "not writable" in _refusal(cli("run", DP, "--out", ro, "--runs", 100, "--quiet"))
    finally:
        ro.chmod(0o755)


def test_out_in_a_read_only_folder_as_root_too(tmp_path, cli, monkeypatch):
    """The same refusal where the system says so (root ignores modes, so the check is simulated)."""
    import sim.outputs

    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setattr(sim.outputs.os, "access", lambda *a, **k: False)
    assert "not writable" in _refusal(cli("run", DP, "--out", ro, "--runs", 100, "--quiet"))
    assert list(ro.iterdir()) == []


def test_a_full_disk_ends_with_one_line(tmp_path, cli, monkeypatch):
    import sim.batch

    real = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, name):
            return getattr(self.fh, name)

    monkeypatch.setattr(sim.batch.os, "fdopen", lambda fd, *a, **k: Full(real(fd, *a, **k)))
    out = tmp_path / "o"
    line = _refusal(cli("run", DP, "--out", out, "--runs", 100, "--quiet"))
    assert "No space left on device" in line
    assert not out.exists()  # the folder it created is removed again
