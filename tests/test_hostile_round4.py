"""Issue 45, items 4-6: a --scheduler that is not Dask or not an address, file names with terminal escapes, and the
low ones (huge numbers in arguments, refusals naming flags the command takes, a read-only package, SIGTERM with
--jobs workers, a flood of unknown keys, error texts that say "expected" twice)."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

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
