"""Issue 45, items 4-6: a --scheduler that is not Dask or not an address, file names with terminal escapes, and the
low ones (huge numbers in arguments, refusals naming flags the command takes, a read-only package, SIGTERM with
--jobs workers, a flood of unknown keys, error texts that say "expected" twice)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

import sim.batch

# --------------------------------------------------------------------------------------------
# item 4: --scheduler


@contextmanager
def listening(reply: bytes | None):
    """A TCP service on a free port of 127.0.0.1 that is not a Dask scheduler: it accepts and then says nothing
    (``reply`` None) or sends ``reply`` (an HTTP answer, as the dashboard's port would)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if reply is not None:
                try:
                    conn.sendall(reply)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def _run_dask(cli, examples, out, address):
    return cli("run", examples["restraint/flank_penalty"], "--runs", 100, "--backend", "dask", "--scheduler",
               address, "--out", out)


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" * 3])
def test_a_service_that_is_not_dask_is_refused_within_the_handshake_deadline(cli, examples, scratch, monkeypatch,
                                                                              reply):
    monkeypatch.setattr(sim.batch, "DASK_HANDSHAKE_SECONDS", 1.0)
    with listening(reply) as address:
        started = time.perf_counter()
        res = _run_dask(cli, examples, scratch, address)
        seconds = time.perf_counter() - started
    assert res.code == 2 and seconds < 8, res.err
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --scheduler:") and address in lines[0]
    assert not scratch.exists()  # nothing created: the handshake comes before the output folder


@pytest.mark.parametrize("address", [
    "garbage", "xyz://", "xyz://127.0.0.1:8786", "tls://127.0.0.1:8786", "tcp://" + "a" * 300 + ":8786",
    "tcp://" + "a" * 70 + ".example:8786", "tcp://127.0.0.1:99999", "tcp://127.0.0.1:0", "tcp://127.0.0.1:",
    "tcp://exa mple:8786", "tcp://[::1:8786", "tcp://host:8786/path", "\x1b]0;title\x07:1",
])
def test_malformed_scheduler_addresses_are_one_line_before_anything_is_created(cli, examples, scratch, address):
    started = time.perf_counter()
    res = _run_dask(cli, examples, scratch, address)
    assert res.code == 2 and time.perf_counter() - started < 3, res.err
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --scheduler:"), res.err
    assert "\x1b" not in res.err and "Traceback" not in res.err
    assert not scratch.exists()


def test_scheduler_addresses_that_parse():
    assert sim.batch.parse_scheduler("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert sim.batch.parse_scheduler("TCP://dask-head.local:8786") == "tcp://dask-head.local:8786"
    assert sim.batch.parse_scheduler("tcp://[::1]:8786") == "tcp://[::1]:8786"


# --------------------------------------------------------------------------------------------
# item 5: file names with terminal escape sequences

HOSTILE_NAME = "a\x1b]0;pwned\x07\x9bb"  # OSC "set title", BEL, C1 CSI


def _hostile_folder(tmp_path, examples):
    folder = tmp_path / f"shared{HOSTILE_NAME}"
    folder.mkdir()
    text = examples["restraint/flank_penalty"].read_text()
    (folder / f"{HOSTILE_NAME}.toml").write_text(text.replace('name = "', 'name = "" # "', 1))
    return folder


def _raw_control(text: str) -> bool:
    return any(ch in text for ch in "\x1b\x07\x9b")


def test_validate_and_run_of_a_folder_escape_every_printed_path(cli, examples, scratch, tmp_path):
    folder = _hostile_folder(tmp_path, examples)
    res = cli("validate", folder)
    assert res.code == 0 and not _raw_control(res.out + res.err) and "\\x1b]0;pwned\\x07" in res.out
    res = cli("run", folder, "--runs", 50, "--out", scratch)
    assert res.code == 0, res.err
    assert not _raw_control(res.out + res.err) and "\\x1b" in res.err


def test_single_file_commands_and_refusals_escape_paths(cli, examples, scratch, tmp_path):
    folder = _hostile_folder(tmp_path, examples)
    res = cli("run", folder / f"{HOSTILE_NAME}.toml", "--runs", 50, "--out", scratch)
    assert res.code == 0 and not _raw_control(res.out + res.err)
    res = cli("sweep", folder, "--param", "run.rounds=1:2:1")  # a folder: refused, naming it
    assert res.code == 2 and not _raw_control(res.err) and "is a folder" in res.err
    (folder / "bad.toml").write_text('kind = "restraint"\n')
    res = cli("validate", folder)
    assert res.code == 2 and not _raw_control(res.out + res.err)


# --------------------------------------------------------------------------------------------
# item 6: huge numbers in arguments

BIG = "9" * 400


@pytest.mark.parametrize("args", [
    ("sweep", "{f}", "--param", f"run.max_rounds=1:{BIG}:1"),
    ("sweep", "{f}", "--param", f"run.max_rounds=1,{BIG}"),
    ("tune", "{f}", "--param", "run.max_rounds", "--target", "0.5", "--hi", BIG),
    ("tune", "{f}", "--param", "run.max_rounds", "--target", "0.5", "--lo", "-" + "9" * 5000),
    ("run", "{f}", "--seed", BIG),
    ("run", "{f}", "--runs", BIG),
])
def test_huge_integers_in_arguments_are_one_line(capsys, examples, scratch, args):
    from sim.cli import main

    try:
        code = main([a.format(f=examples["escape/lone_rogue"]) for a in args])
    except SystemExit as stop:  # argparse's own refusal (the number is bounded where the argument is parsed)
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "2^63" in err, err
    assert "Traceback" not in err and not scratch.exists()


# --------------------------------------------------------------------------------------------
# item 6: a refusal names only flags the command takes

CODE_POLICY = '\n[policy]\nname = "sim.escape.examples:cautious"\n'


@pytest.mark.parametrize("command", [("sweep", "--param", "run.max_rounds=2:3:1"), ("sensitivity",), ("matrix",)])
def test_commands_without_allow_code_do_not_tell_the_user_to_pass_it(cli, examples, tmp_path, scratch, command):
    path = tmp_path / "code.toml"
    path.write_text(examples["escape/lone_rogue"].read_text() + CODE_POLICY)
    res = cli(command[0], path, *command[1:], "--runs", 100)
    assert res.code == 2, res.err
    assert "takes no --allow-code" in res.err and "pass --allow-code" not in res.err
    assert "run, tune or compare" in res.err  # where the opt-in is


def test_fit_over_a_code_policy_says_what_fit_takes(cli, examples, tmp_path, scratch):
    path = tmp_path / "code.toml"
    path.write_text(examples["escape/lone_rogue"].read_text() + CODE_POLICY)
    (tmp_path / "fit.toml").write_text(f"""
[fit]
params = ["rules.tiers.light.dc"]
lo = 10
hi = 12

[[target]]
scenario = {str(path)!r}
metric = "escape_rate"
value = 0.5
""")
    res = cli("fit", tmp_path / "fit.toml", "--runs", 100)
    assert res.code == 2 and "fit runs the built-in policies only" in res.err, res.err
    assert "pass --allow-code" not in res.err


def test_run_still_tells_how_to_opt_in(cli, examples, tmp_path, scratch):
    path = tmp_path / "code.toml"
    path.write_text(examples["escape/lone_rogue"].read_text() + CODE_POLICY)
    res = cli("run", path, "--runs", 100, "--out", scratch)
    assert res.code == 2 and "pass --allow-code" in res.err


# --------------------------------------------------------------------------------------------
# item 6: a read-only install without a writable numba cache


def test_a_read_only_install_gives_numba_a_private_cache_folder(monkeypatch, tmp_path):
    from sim import numba_cache

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba_cache.tempfile, "gettempdir", lambda: str(tmp_path))
    writable_everywhere = numba_cache.choose_cache_dir(writable=lambda folder: True)
    assert writable_everywhere is None  # numba's own places will do: nothing changes
    folder = numba_cache.choose_cache_dir(writable=lambda folder: False)
    assert folder is not None and folder.parent == tmp_path and folder.is_dir()
    assert folder.stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert numba_cache.choose_cache_dir(writable=lambda folder: False) is None  # the user's choice stands


def test_a_private_cache_folder_that_others_can_write_is_not_used(monkeypatch, tmp_path):
    from sim import numba_cache

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba_cache.tempfile, "gettempdir", lambda: str(tmp_path))
    planted = tmp_path / f"sim-numba-{numba_cache.os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)
    assert numba_cache.choose_cache_dir(writable=lambda folder: False) is None


def _read_only_run(tmp_path, package_root) -> subprocess.CompletedProcess:
    """``python -m sim run`` from a copy of the package on a read-only mount with a read-only home (a mount
    namespace: root only, where unshare exists)."""
    import shutil

    ro, home = tmp_path / "ro", tmp_path / "home"
    shutil.copytree(package_root / "sim", ro / "sim", ignore=shutil.ignore_patterns("__pycache__"))
    home.mkdir()
    script = (f"mount --bind {ro} {ro} && mount -o remount,ro,bind {ro} && mount --bind {home} {home} && "
              f"mount -o remount,ro,bind {home} && cd {home} && exec {sys.executable} -m sim run "
              f"{package_root / 'scenarios/restraint/flank_penalty.toml'} --runs 100 --out {tmp_path / 'out'}")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), PYTHONPATH=str(ro), TMPDIR=str(tmp_path))
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env,
                          timeout=600)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="needs root and unshare for a read-only mount")
def test_a_read_only_install_runs_end_to_end(tmp_path):
    from examples import ROOT

    res = _read_only_run(tmp_path, ROOT)
    if "MOUNT" in res.stderr.upper() and res.returncode != 0 and "sim" not in res.stderr:
        pytest.skip(f"no mount namespace here: {res.stderr.strip()[:200]}")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Traceback" not in res.stderr and (tmp_path / "out" / "summary.json").is_file()
    assert (tmp_path / f"sim-numba-{os.getuid()}").is_dir()


# --------------------------------------------------------------------------------------------
# item 6: SIGTERM stops the --jobs worker processes as Ctrl-C does


def _children(pid: int) -> set[int]:
    found = set()
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat_file.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_sigterm_ends_the_jobs_worker_processes(tmp_path, examples):
    from examples import ROOT

    path = tmp_path / "code.toml"  # a code policy: the scalar engine, in worker processes (--jobs 2)
    path.write_text(examples["escape/lone_rogue"].read_text() + CODE_POLICY)
    proc = subprocess.Popen([sys.executable, "-m", "sim", "run", str(path), "--allow-code", "--runs", "5000000",
                             "--jobs", "2", "--quiet", "--out", str(tmp_path / "out")], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.5)
            workers = _children(proc.pid)
            assert proc.poll() is None, proc.stderr.read().decode()
        assert len(workers) >= 2, "the workers never started"
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143 and "terminated" in err.decode()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.5)
        assert not any(_alive(p) for p in workers), "worker processes outlived the command"
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in workers | _children(proc.pid):  # never leave a worker behind, even when the test fails
            if _alive(p):
                os.kill(p, signal.SIGKILL)


# --------------------------------------------------------------------------------------------
# item 6: a flood of unknown keys


def test_a_file_of_many_unknown_keys_prints_the_first_problems_and_how_many_more(cli, examples, tmp_path):
    from sim.limits import MAX_PROBLEMS

    flood = "".join(f"unknown_key_number_{i:06d} = 1\n" for i in range(32_274))
    path = tmp_path / "flood.toml"
    path.write_text(flood + examples["restraint/flank_penalty"].read_text())
    started = time.perf_counter()
    res = cli("validate", path)
    seconds = time.perf_counter() - started
    lines = res.err.strip().splitlines()
    assert res.code == 2 and len(lines) == MAX_PROBLEMS + 1 and seconds < 10
    assert "unknown_key_number_000000" in lines[0] and "unknown_key_number_000019" in lines[MAX_PROBLEMS - 1]
    assert f"and {32_274 - MAX_PROBLEMS:,} more problems" in lines[-1]
    assert len(res.err) < 10_000


# --------------------------------------------------------------------------------------------
# item 6: error texts say once what was expected and what was given


@pytest.mark.parametrize("stimulus", ["TRUE", "", "1d6+", "xd"])
def test_dice_errors_say_expected_once(cli, examples, tmp_path, stimulus):
    text = examples["restraint/party_composure"].read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace('stimulus = "1d6"', f'stimulus = "{stimulus}"'))
    res = cli("validate", path)
    assert res.code == 2 and "composure.stimulus: expected a dice expression" in res.err, res.err
    assert "expected expected" not in res.err and "expected unknown" not in res.err
    message = res.err.split("composure.stimulus:")[1]  # (the file's path may hold the word too)
    assert message.count("expected") == 1 and "; given" not in message  # the text given is quoted once


def test_mission_penalty_and_skill_errors_say_expected_once(cli, examples, tmp_path):
    text = examples["campus/six_pcs_two_teams"].read_text()
    path = tmp_path / "m.toml"
    path.write_text(text.replace('penalty = { ability = "hide", amount = 3 }',
                                 'penalty = { vitality = 2, ability = "hide", amount = 3 }'))
    res = cli("validate", path)
    assert res.code == 2 and "missions.0.penalty: expected either" in res.err, res.err
    assert "expected expected" not in res.err
