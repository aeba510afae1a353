"""Seeding and batching (R-GEN-7), parallel backends, resumable chunk stores and progress.

Runs are cut into seed chunks of a fixed size, :data:`CHUNK_RUNS`, whatever the number of jobs.
Chunk ``i`` draws from ``SeedSequence(seed, spawn_key=(i,))``; the last chunk is shorter. Work is
dispatched in tasks of whole chunks with joblib (local processes, or Dask distributed), so per-run
results are identical for any ``n_jobs``, task size or backend (STYLE.md practice 4).

How chunks execute is set by an :func:`execution` context, so every kind gets backends, resumable
runs and progress without knowing about them:

    with execution(backend="dask", scheduler="tcp://...", store=ChunkStore(folder, fingerprint)):
        sim.simulate(...)
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import json
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim import store_key
from sim.errors import ScenarioError, SimError, one_line
from sim.outputs import (  # noqa: F401 - older imports: atomic writes, umask and the manifest live in sim/outputs.py
    OUTPUT_MANIFEST,
    OwnedOutputs,
    atomic_write_bytes,
    file_mode,
    make_folder,
    note_dir,
    note_file,
    process_umask,
    read_output_manifest,
)
from sim.version import __version__

#: what --jobs means, for every command's help (README "Reproducibility": this module runs the compiled engines'
#: chunks in threads, a Python policy's in processes)
JOBS_HELP = ("parallel workers (-1: all cores): threads of one process for the compiled engines, worker processes "
             "for a Python policy")
CHUNK_RUNS = 10_000
MAX_RUNS = 100_000_000
BACKENDS = ("local", "dask")


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
    if not 0 <= int(n_runs) <= MAX_RUNS:
        raise ScenarioError(f"expected runs between 1 and {MAX_RUNS:,}; given {n_runs}", key="run.runs")
    out = []
    for i, start in enumerate(range(0, int(n_runs), CHUNK_RUNS)):
        out.append(Chunk(i, start, min(CHUNK_RUNS, int(n_runs) - start)))
    return out


# --------------------------------------------------------------------------------------------
# resumable chunk store


MAX_CHUNK_BYTES = 256 * 1024 * 1024  # a stored chunk larger than this is not read (recomputed instead)


class ChunkStore:
    """Finished chunks of one run, kept in ``folder`` (``OUT/.chunks``) with a journal naming what made them.

    The fingerprint (scenario hash, seed, runs, kind, engine, package version) must match for a folder to be
    reused: a changed scenario with the same folder is refused, never mixed. Each chunk file carries an HMAC of
    its contents, the run and its index under this user's secret key (:mod:`sim.store_key`), checked before
    anything in it is parsed: a chunk of another run or index, or one edited or forged by whoever shared the
    folder, is computed again, and the console says how many were.

    The store never follows a symbolic link: ``folder`` is opened without following one (a link found there is
    replaced by a folder of the store's own, after saying so) and every file in it is opened relative to that
    folder's descriptor, so no path is resolved again between a check and its use. The journal records each
    file the store put in place with its device, inode, size and modification time (the output manifest's
    signature, each line authenticated like the chunks); :meth:`remove` deletes those files only when they
    still match, then the folder if that leaves it empty: nothing else in it is ever deleted.

    Each chunk is written atomically (write then rename), so an interrupted run (SIGINT, SIGKILL) leaves only
    whole chunks, and the next run continues from them with exactly the same result. Nothing is written until
    the first chunk is finished: a run refused before that leaves no trace."""

    def __init__(self, folder: str | Path, fingerprint: dict[str, Any]):
        self.folder = Path(folder)
        self.fingerprint = {k: fingerprint[k] for k in sorted(fingerprint)}
        self.run_id = fingerprint_hash(self.fingerprint)
        self.rejected = 0  # stored chunks that failed authentication (computed again)
        self._dir_fd: int | None = None
        self._dir_sig: list[int] | None = None
        self._journal_fd: int | None = None
        self._written: dict[str, list[int]] = {}  # file name -> signature of the file this store put there
        self._link_found = False
        self._parts: int | None = None  # descriptor of the staging folder of runs.parquet's parts
        self._open_existing()

    # -- the folder and its journal, never through a link

    def _parent_fd(self, create: bool) -> int | None:
        parent = self.folder.parent
        try:
            return os.open(parent, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        except FileNotFoundError:
            if not create:
                return None
        parent.mkdir(parents=True, exist_ok=True)
        return os.open(parent, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)

    def _open_existing(self) -> None:
        pfd = self._parent_fd(create=False)
        if pfd is None:
            return
        try:
            try:
                st = os.stat(self.folder.name, dir_fd=pfd, follow_symlinks=False)
            except FileNotFoundError:
                return
            if stat.S_ISLNK(st.st_mode):
                self._link_found = True  # never followed: replaced by a folder of our own at the first chunk
                return
            if not stat.S_ISDIR(st.st_mode):
                raise SimError(f"{self.folder}: exists and is not a folder; the resume store needs this name: "
                               "move it or name another --out folder")
            self._adopt(os.open(self.folder.name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC,
                                dir_fd=pfd))
        finally:
            os.close(pfd)
        self._read_journal()

    def _adopt(self, fd: int) -> None:
        st = os.fstat(fd)
        self._dir_fd, self._dir_sig = fd, [st.st_dev, st.st_ino]

    def _read_journal(self) -> None:
        """The journal's fingerprint (another run's: refused) and its authenticated records."""
        try:
            fd = os.open(JOURNAL, os.O_RDWR | os.O_APPEND | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK,
                         dir_fd=self._dir_fd)
        except FileNotFoundError:
            return  # no store here yet: the first chunk starts one
        except OSError:
            raise SimError(f"{self.folder}/{JOURNAL}: not a regular file; delete {self.folder} or name another "
                           "--out folder") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_JOURNAL_BYTES:
            os.close(fd)
            raise SimError(f"{self.folder}/{JOURNAL}: not a resume journal; delete {self.folder} or name another "
                           "--out folder")
        self._journal_fd = fd
        first, *records = _read_all(fd, st.st_size).decode("utf-8", errors="replace").split("\n")
        try:
            old = json.loads(first)
        except ValueError:
            old = None
        if old != self.fingerprint:
            self.close()
            diff = sorted(k for k in set(old if isinstance(old, dict) else {}) | set(self.fingerprint)
                          if (old if isinstance(old, dict) else {}).get(k) != self.fingerprint.get(k))
            raise ScenarioError(
                f"output folder {self.folder.parent} holds chunks of a different run ({', '.join(diff)} "
                "changed); use another --out folder or delete it")
        for line in records:
            fields = line.split(" ")
            if len(fields) == 6 and _RECORD_NAME.fullmatch(fields[0]) and all(f.isdigit() for f in fields[1:5]):
                body = " ".join(fields[:5])
                with contextlib.suppress(ValueError):
                    if store_key.verify(bytes.fromhex(fields[5]), self.run_id, body):
                        self._written[fields[0]] = [int(f) for f in fields[1:5]]

    def _ensure(self) -> int:
        """The store's folder descriptor, creating the folder (and its journal) at the first chunk."""
        if self._dir_fd is not None:
            return self._dir_fd
        pfd = self._parent_fd(create=True)
        name = self.folder.name
        try:
            if self._link_found:
                self._replace_link(pfd)
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=pfd)
            try:
                self._adopt(os.open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=pfd))
            except OSError:
                raise SimError(f"{self.folder}: not a folder of its own (a link or a file took its place); "
                               "delete it or name another --out folder") from None
        finally:
            os.close(pfd)
        return self._dir_fd

    def _replace_link(self, pfd: int) -> None:
        name = self.folder.name
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.stat(name, dir_fd=pfd, follow_symlinks=False).st_mode):
                target = os.readlink(name, dir_fd=pfd)
                os.unlink(name, dir_fd=pfd)  # the link only: its target is never touched
                print(one_line(f"warning: {self.folder} was a symbolic link (to {target}); the resume store is "
                               "never kept behind a link, so it was replaced by a folder of its own (the link's "
                               "target is left as it was)"), file=sys.stderr)

    def _journal(self) -> int:
        if self._journal_fd is None:
            fd = self._ensure()
            self._put(JOURNAL, (json.dumps(self.fingerprint, sort_keys=True) + "\n").encode(), record=False)
            self._journal_fd = os.open(JOURNAL, os.O_WRONLY | os.O_APPEND | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd)
        return self._journal_fd

    def _put(self, name: str, data: bytes, record: bool = True, parts: bool = False) -> None:
        """Write ``name`` in the store's folder (``parts``: its staging folder for ``runs.parquet``) atomically
        (a new temporary file, renamed into place) and record the signature of the file put there."""
        fd_dir = self._parts_fd() if parts else self._ensure()
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        mode = file_mode() if parts else 0o600  # the rows become an output; chunks stay private
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600, dir_fd=fd_dir)
        try:
            try:
                os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
                sig = _file_sig(os.fstat(fd))
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=fd_dir, dst_dir_fd=fd_dir)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd_dir)
            raise
        if record:
            self._record(f"{PARTS}/{name}" if parts else name, sig)

    # -- runs.parquet, staged beside the chunks until the run is complete

    def _parts_fd(self) -> int:
        if self._parts is None:
            fd = self._ensure()
            with contextlib.suppress(FileExistsError):
                os.mkdir(PARTS, 0o700, dir_fd=fd)
            pfd = os.open(PARTS, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd)
            os.fchmod(pfd, 0o777 & ~process_umask())  # it becomes the output folder runs.parquet
            self._parts = pfd
        return self._parts

    def stage_part(self, index: int, data: bytes) -> None:
        """Chunk ``index``'s per-run rows, kept in the store until :meth:`install_parts` moves them into place:
        an interrupted run never leaves its rows beside an earlier run's summary."""
        self._put(f"part-{index:06d}.parquet", data, parts=True)

    def has_parts(self) -> bool:
        return self._parts is not None

    def staged_names(self) -> set[str]:
        """The names of the parts staged so far (``part-000000.parquet``, ...)."""
        return {n[len(PARTS) + 1:] for n in self._written if n.startswith(PARTS + "/")}

    def install_parts(self, runs_dir: Path) -> list[Path]:
        """Move the staged parts to ``runs_dir`` (which must not exist) in one rename; they are reported to the
        command's write log as what it wrote. Returns their paths."""
        staged = {n[len(PARTS) + 1:]: sig for n, sig in self._written.items() if n.startswith(PARTS + "/")}
        parent = os.open(runs_dir.parent, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        try:
            try:
                os.rename(PARTS, runs_dir.name, src_dir_fd=self._ensure(), dst_dir_fd=parent)
                moved = True
            except OSError:  # a folder of that name stays (files no command can prove it wrote, named as ours)
                moved = False
            if not moved:
                dest = os.open(runs_dir.name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC,
                               dir_fd=parent)
                try:
                    for name in sorted(staged):  # one part at a time, each replacing the file of its name
                        os.replace(name, name, src_dir_fd=self._parts, dst_dir_fd=dest)
                finally:
                    os.close(dest)
        finally:
            os.close(parent)
        st = os.fstat(self._parts)
        self._written = {n: sig for n, sig in self._written.items() if not n.startswith(PARTS + "/")}
        if moved:
            os.close(self._parts)
            self._parts = None
            note_dir(runs_dir, [st.st_dev, st.st_ino])
        for name, sig in sorted(staged.items()):
            note_file(runs_dir / name, sig)
        return [runs_dir / name for name in sorted(staged)]

    def _record(self, name: str, sig: list[int]) -> None:
        body = " ".join([name, *map(str, sig)])
        line = f"{body} {store_key.mac(self.run_id, body).hex()}\n".encode()
        os.write(self._journal(), line)
        self._written[name] = sig

    # -- chunks

    @staticmethod
    def _name(index: int) -> str:
        return f"chunk-{index:06d}.npz"

    def load(self, index: int) -> Any | None:
        """The stored result of chunk ``index``, or None when it is missing, or was not written by this user's
        ``sim`` for this run and index (its HMAC fails), or is malformed or too large (then it is recomputed;
        :attr:`rejected` counts those). Chunks are data only (:func:`encode_chunk`): loading one never runs
        code, and nothing of a chunk is parsed before it is authenticated."""
        if self._dir_fd is None:
            return None
        name = self._name(index)
        try:
            fd = os.open(name, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK, dir_fd=self._dir_fd)
        except FileNotFoundError:
            return None
        except OSError:  # a link, or something that cannot be opened: not a chunk of ours
            self.rejected += 1
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CHUNK_BYTES:  # size checked before reading
                self.rejected += 1
                return None
            data = _read_all(fd, st.st_size)
        finally:
            os.close(fd)
        result = self._authentic(index, data)
        if result is None:
            self.rejected += 1
            return None
        if self._written.get(name) != _file_sig(st):  # ours (its HMAC says so) but not yet in the journal
            self._record(name, _file_sig(st))
        return result["result"]

    def _authentic(self, index: int, data: bytes) -> dict | None:
        head = len(CHUNK_MAGIC) + 32
        if len(data) < head or not data.startswith(CHUNK_MAGIC):
            return None
        body = data[head:]
        if not store_key.verify(data[len(CHUNK_MAGIC):head], self.run_id, str(index), body):
            return None
        try:
            stored = decode_chunk(body, max_bytes=MAX_CHUNK_BYTES)
        except Exception:  # noqa: BLE001 - any damage means "recompute"
            return None
        if (not isinstance(stored, dict) or stored.get("run") != self.run_id or stored.get("index") != index
                or "result" not in stored):
            return None
        return stored

    def save(self, index: int, result: Any) -> None:
        body = encode_chunk({"run": self.run_id, "index": index, "result": result})
        self._put(self._name(index), CHUNK_MAGIC + store_key.mac(self.run_id, str(index), body) + body)

    def finished(self) -> int:
        """How many chunk files the store's folder holds."""
        if self._dir_fd is None:
            return 0
        return sum(1 for n in os.listdir(self._dir_fd) if _CHUNK_NAME.fullmatch(n))

    def remove(self) -> None:
        """Delete the files this store recorded putting in place, each only while it still has the recorded
        device, inode, size and time, then the journal and the folder if that leaves it empty."""
        fd = self._dir_fd
        if fd is None:
            return
        parts = None
        with contextlib.suppress(OSError):
            parts = self._parts if self._parts is not None else os.open(
                PARTS, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd)
        for name, sig in self._written.items():
            where, base = (parts, name[len(PARTS) + 1:]) if name.startswith(PARTS + "/") else (fd, name)
            with contextlib.suppress(OSError, TypeError):
                st = os.stat(base, dir_fd=where, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and _file_sig(st) == sig:
                    os.unlink(base, dir_fd=where)
        if parts is not None:
            self._parts = None
            with contextlib.suppress(OSError):
                mine = os.fstat(parts)
                st = os.stat(PARTS, dir_fd=fd, follow_symlinks=False)
                if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
                    os.rmdir(PARTS, dir_fd=fd)  # only if empty
            os.close(parts)
        if self._journal_fd is not None:
            with contextlib.suppress(OSError):
                mine = os.fstat(self._journal_fd)
                st = os.stat(JOURNAL, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
                    os.unlink(JOURNAL, dir_fd=fd)
        sig, self._written = self._dir_sig, {}
        self.close()
        pfd = self._parent_fd(create=False)
        if pfd is not None:
            with contextlib.suppress(OSError):
                st = os.stat(self.folder.name, dir_fd=pfd, follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode) and [st.st_dev, st.st_ino] == sig:
                    os.rmdir(self.folder.name, dir_fd=pfd)  # only if empty: never a recursive delete
            os.close(pfd)

    def close(self) -> None:
        for attr in ("_parts", "_journal_fd", "_dir_fd"):
            fd = getattr(self, attr, None)
            if fd is not None:
                setattr(self, attr, None)
                with contextlib.suppress(OSError):
                    os.close(fd)

    def __del__(self):
        self.close()


CHUNK_MAGIC = b"SIMCHUNK2\n"  # then the 32-byte HMAC, then the .npz
JOURNAL = "journal"
MAX_JOURNAL_BYTES = 16 * 1024 * 1024
PARTS = "runs.parquet"  # the staging folder of the per-run rows, inside the store
_CHUNK_NAME = re.compile(r"chunk-[0-9]{6}\.npz")
_RECORD_NAME = re.compile(r"chunk-[0-9]{6}\.npz|runs\.parquet/part-[0-9]{6}\.parquet")
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _file_sig(st: os.stat_result) -> list[int]:
    """The output manifest's signature of a file: device, inode, size, modification time (sim/outputs.py)."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _read_all(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left > 0:
        block = os.read(fd, min(left, 1 << 24))
        if not block:
            break
        parts.append(block)
        left -= len(block)
    return b"".join(parts)


def check_npz(data: bytes, max_bytes: int = MAX_CHUNK_BYTES) -> None:
    """Refuse, before anything is inflated or allocated, an ``.npz`` that is not what :func:`encode_chunk`
    writes: compressed members (a small file could expand to gigabytes), declared sizes beyond the file's own
    length or ``max_bytes``, or an array header declaring more data than its member holds."""
    import io
    import zipfile

    if len(data) > max_bytes:
        raise ValueError("chunk too large")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        if len(infos) > 100_000:
            raise ValueError("too many members")
        declared = 0
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
                raise ValueError("compressed member")
            declared += info.file_size
        if declared > len(data):
            raise ValueError("declared sizes exceed the file")
        for info in infos:
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(fh, max_header_size=10_000)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(fh, max_header_size=10_000)
                else:
                    raise ValueError(f"array format {version} is not one this package writes")
                if dtype.hasobject:
                    raise ValueError("object array")
                if int(np.prod(shape, dtype=object)) * dtype.itemsize > info.file_size:
                    raise ValueError("array header declares more data than stored")


# --------------------------------------------------------------------------------------------
# data-only chunk format: numpy arrays in an .npz (allow_pickle=False) plus a JSON tree

_TREE = "__tree__"


def encode_chunk(value: Any) -> bytes:
    """``value`` (nested dicts with string keys, lists, tuples, numeric numpy arrays and scalars, str,
    bytes, None, and dataclasses defined in the ``sim`` package) as the bytes of an ``.npz`` file that
    :func:`decode_chunk` reads back without pickle."""
    import io

    arrays: dict[str, np.ndarray] = {}

    def enc(v):
        if v is None or isinstance(v, bool | str):
            return v
        if isinstance(v, int | float):
            return {"t": type(v).__name__, "v": repr(v) if isinstance(v, float) else v}
        if isinstance(v, np.ndarray | np.generic):
            arr = np.asarray(v)
            if arr.dtype.hasobject:
                raise TypeError("object arrays cannot be stored as data")
            name = f"a{len(arrays)}"
            arrays[name] = arr
            return {"t": "scalar" if isinstance(v, np.generic) else "array", "v": name}
        if isinstance(v, bytes):
            return {"t": "bytes", "v": enc(np.frombuffer(v, dtype=np.uint8))}
        if isinstance(v, list | tuple):
            return {"t": type(v).__name__, "v": [enc(x) for x in v]}
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                raise TypeError("dict keys must be strings")
            return {"t": "dict", "v": {k: enc(x) for k, x in v.items()}}
        if dataclasses.is_dataclass(v) and type(v).__module__.startswith("sim."):
            fields = {f.name: enc(getattr(v, f.name)) for f in dataclasses.fields(v)}
            return {"t": "dataclass", "cls": f"{type(v).__module__}:{type(v).__qualname__}", "v": fields}
        raise TypeError(f"cannot store a {type(v).__name__} in a chunk")

    tree = json.dumps(enc(value)).encode()
    buf = io.BytesIO()
    np.savez(buf, **arrays, **{_TREE: np.frombuffer(tree, dtype=np.uint8)})
    return buf.getvalue()


def decode_chunk(data: bytes, max_bytes: int = MAX_CHUNK_BYTES) -> Any:
    """The value :func:`encode_chunk` stored. Checks the file first (:func:`check_npz`), reads arrays with
    ``allow_pickle=False`` and rebuilds dataclasses only of classes already imported from the ``sim``
    package (nothing is imported, nothing is executed); raises on anything else."""
    import io

    check_npz(data, max_bytes)
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    tree = json.loads(arrays.pop(_TREE).tobytes().decode())

    def dec(node):
        if node is None or isinstance(node, bool | str):
            return node
        t, v = node["t"], node["v"]
        if t == "int":
            return int(v)
        if t == "float":
            return float(v)
        if t == "array":
            return arrays[v]
        if t == "scalar":
            return arrays[v][()]
        if t == "bytes":
            return dec(v).astype(np.uint8).tobytes()
        if t == "list":
            return [dec(x) for x in v]
        if t == "tuple":
            return tuple(dec(x) for x in v)
        if t == "dict":
            return {str(k): dec(x) for k, x in v.items()}
        if t == "dataclass":
            module, _, qualname = str(node["cls"]).partition(":")
            cls = getattr(sys.modules.get(module) if module.startswith("sim.") else None, qualname, None)
            if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
                raise ValueError(f"not a known result type: {node['cls']!r}")
            names = [f.name for f in dataclasses.fields(cls)]
            if sorted(v) != sorted(names):
                raise ValueError(f"fields of {qualname} do not match")
            obj = object.__new__(cls)  # no __init__/__post_init__: the stored fields are the state
            for name in names:
                object.__setattr__(obj, name, dec(v[name]))
            return obj
        raise ValueError(f"unknown node type {t!r}")

    return dec(tree)




def fingerprint_of(scenario, seed: int, runs: int, random_layout: str = "1", **extra) -> dict[str, Any]:
    """What identifies a run: scenario hash, seed, runs, kind, random layout (the kind object's ``random_layout``,
    passed by the pipeline: chunks stored under another layout are not reused) and package and numpy versions."""
    fp = {"scenario_hash": scenario.scenario_hash, "seed": int(seed), "runs": int(runs), "kind": scenario.kind,
          "sim_version": __version__, "numpy_version": np.__version__, "chunk_runs": CHUNK_RUNS,
          "random_layout": str(random_layout)}
    fp.update(extra)
    return fp


def fingerprint_hash(fp: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# execution settings


@dataclass(frozen=True)
class Execution:
    backend: str = "local"
    scheduler: str | None = None
    store: ChunkStore | None = None
    progress: bool = False
    allow_code: bool = False  # the user opted in to run a scenario's module:callable policy (--allow-code)


def current_execution() -> Execution:
    return _EXECUTION.get() or _DEFAULT


_DEFAULT = Execution()
_EXECUTION: contextvars.ContextVar[Execution | None] = contextvars.ContextVar("sim_execution", default=None)


@contextlib.contextmanager
def execution(backend: str = "local", scheduler: str | None = None, store: ChunkStore | None = None,
              progress: bool = False, allow_code: bool = False):
    """Set how :func:`map_chunks` executes inside the ``with`` block."""
    if backend not in BACKENDS:
        raise SimError(f"--backend: expected one of {', '.join(BACKENDS)}; given {backend!r}")
    if backend == "dask" and not scheduler:
        raise SimError("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
    if scheduler is not None:
        scheduler = parse_scheduler(scheduler)
    token = _EXECUTION.set(Execution(backend, scheduler, store, progress, allow_code))
    try:
        yield
    finally:
        _EXECUTION.reset(token)


def _run_tasks(fn: Callable[..., Any], params: Any, seed: int, task: list[Chunk]) -> list[Any]:
    if getattr(fn, "wants_chunk", False):  # fn(params, chunk, rng): it needs the chunk's position
        return [fn(params, c, c.generator(seed)) for c in task]
    return [fn(params, c.n_runs, c.generator(seed)) for c in task]


#: seconds for the whole handshake with a Dask scheduler (connect, greet, ask its identity); a service that is not
#: a Dask scheduler (its dashboard's port 8787 for 8786) is refused after this long instead of hanging
DASK_HANDSHAKE_SECONDS = 10.0
SCHEDULER_SCHEMES = ("tcp", "tls")
_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_ADDRESS = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/\[\]]+):(?P<port>[0-9]+)")


def parse_scheduler(address: str) -> str:
    """The Dask scheduler address ``address`` as ``SCHEME://HOST:PORT`` (``HOST:PORT`` means tcp), checked before
    anything is created or connected: scheme tcp or tls (tls with certificates in Dask's configuration), a host name,
    an IPv4 address or a bracketed IPv6 address, a port 1..65535. Anything else: one line (SimError)."""
    given = one_line(repr(address), 120)
    m = _ADDRESS.fullmatch(address.strip()) if len(address) <= 300 else None
    if m is None:
        raise SimError(f"--scheduler: expected an address such as tcp://127.0.0.1:8786 (SCHEME://HOST:PORT), got "
                       f"{given}")
    scheme, host, port = (m["scheme"] or "tcp").lower(), m["host"], int(m["port"])
    if scheme not in SCHEDULER_SCHEMES:
        raise SimError(f"--scheduler: expected the scheme tcp:// or tls://, got {given}")
    if not 1 <= port <= 65535:
        raise SimError(f"--scheduler: expected a port 1..65535, got {given}")
    if not host.startswith("[") and (len(host) > 253 or not all(_HOST_LABEL.fullmatch(x) for x in host.split("."))):
        raise SimError(f"--scheduler: expected a host name (letters, digits, hyphens; labels of at most 63, in all "
                       f"at most 253 characters), an IPv4 address or [IPv6], got {given}")
    if scheme == "tls":
        import dask

        if not (dask.config.get("distributed.comm.tls.ca-file", None)
                and dask.config.get("distributed.comm.tls.client.cert", None)):
            raise SimError("--scheduler: tls:// needs certificates in Dask's configuration "
                           "(distributed.comm.tls.ca-file and distributed.comm.tls.client.cert); none are set")
    return f"{scheme}://{host}:{port}"


def check_scheduler(address: str) -> str:
    """:func:`parse_scheduler`, then one handshake with the scheduler under a single deadline
    (:data:`DASK_HANDSHAKE_SECONDS`): the parsed address, or one line (SimError) for every failure, before any
    output folder is made."""
    address = parse_scheduler(address)
    try:
        import asyncio

        from distributed.core import rpc
        from distributed.security import Security
    except ImportError:
        raise SimError("the dask backend needs the optional extra: pip install 'sim[dask]'") from None

    async def identity():
        async with rpc(address, connection_args=Security().get_connection_args("client")) as scheduler:
            return await scheduler.identity()

    try:
        info = asyncio.run(asyncio.wait_for(identity(), DASK_HANDSHAKE_SECONDS))
    except TimeoutError:
        raise SimError(f"--scheduler: no Dask scheduler answered at {address} within {DASK_HANDSHAKE_SECONDS:.0f} s "
                       "(nothing listens there, or another service does: a scheduler listens on 8786 by default, "
                       "its dashboard on 8787)") from None
    except Exception as exc:  # every failure of the connection is one line
        raise SimError(one_line(f"--scheduler: cannot reach the Dask scheduler at {address}: "
                                f"{type(exc).__name__}: {exc}")) from None
    if not isinstance(info, dict) or info.get("type") != "Scheduler":
        raise SimError(f"--scheduler: the service at {address} is not a Dask scheduler")
    return address


@contextlib.contextmanager
def _dask_client(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise SimError("the dask backend needs the optional extra: pip install 'sim[dask]'") from None
    address = check_scheduler(address)  # one deadline around the handshake; the Client then connects at once
    try:
        client = Client(address, timeout=DASK_HANDSHAKE_SECONDS)
    except Exception as exc:  # every failure of the connection is one line
        raise SimError(one_line(f"--scheduler: cannot reach the Dask scheduler at {address}: {exc}")) from None
    try:
        yield client
    finally:
        client.close()


def map_chunks(
    fn: Callable[[Any, int, np.random.Generator], Any],
    params: Any,
    n_runs: int,
    seed: int,
    n_jobs: int = 1,
    chunks_per_task: int = 1,
    threads: bool = False,
) -> Iterator[tuple[Chunk, Any]]:
    """Apply ``fn(params, n, rng)`` to every chunk and yield ``(chunk, result)`` in chunk order.

    ``n_jobs == 1`` with the local backend runs in this process; otherwise joblib dispatches tasks
    (processes, or the Dask cluster of the :func:`execution` context). ``threads=True`` says that ``fn``
    spends its time in a compiled engine that releases the GIL: local tasks then run in threads of this
    process, which start at once and share the compiled code (processes each import and load it first).
    Chunks already in the context's store are loaded instead of computed. The results depend only on
    ``seed`` and ``n_runs``."""
    ex = current_execution()
    all_chunks = chunks(n_runs)
    done: dict[int, Any] = {}
    if ex.store is not None:
        rejected = ex.store.rejected
        for c in all_chunks:
            res = ex.store.load(c.index)
            if res is not None:
                done[c.index] = res
        _say_rejected(ex.store, ex.store.rejected - rejected)
    todo = [c for c in all_chunks if c.index not in done]
    tasks = [todo[i : i + chunks_per_task] for i in range(0, len(todo), chunks_per_task)]
    bar = _progress(n_runs, sum(c.n_runs for c in all_chunks if c.index in done)) if ex.progress else None
    fresh = _computed(ex, fn, params, seed, tasks, n_jobs, threads)
    try:
        for c in all_chunks:
            if c.index in done:
                res = done.pop(c.index)
            else:
                got, res = next(fresh)
                if got.index != c.index:  # pragma: no cover - order is guaranteed by construction
                    raise RuntimeError("chunks out of order")
                if ex.store is not None:
                    ex.store.save(c.index, res)
                if bar is not None:
                    bar.update(c.n_runs)
            yield c, res
    finally:
        fresh.close()
        if bar is not None:
            bar.close()


def _say_rejected(store: ChunkStore, n: int) -> None:
    """One line when stored chunks failed authentication (edited, forged, of another run or user)."""
    if n:
        print(one_line(f"resume store {store.folder}: {n} stored chunk{'s' if n != 1 else ''} failed "
                       "authentication (not written by your sim for this run and chunk) and "
                       f"{'are' if n != 1 else 'is'} computed again"), file=sys.stderr)


def _computed(ex: Execution, fn, params, seed: int, tasks: list[list[Chunk]], n_jobs: int,
              threads: bool) -> Iterator[tuple[Chunk, Any]]:
    """(chunk, result) of every chunk of ``tasks``, in order: in this process (local, one job or one task),
    on the Dask cluster of ``ex``, or in joblib processes (threads where ``threads``)."""
    if not tasks:
        return
    if ex.backend == "local" and (n_jobs == 1 or len(tasks) <= 1):
        for task in tasks:
            yield from zip(task, _run_tasks(fn, params, seed, task), strict=True)
        return
    from joblib import Parallel, delayed, parallel_config

    if ex.backend == "dask":
        with _dask_client(ex.scheduler), parallel_config(backend="dask"):
            results = Parallel(n_jobs=-1, return_as="generator")(
                delayed(_run_tasks)(fn, params, seed, task) for task in tasks)
            for task, res in zip(tasks, results, strict=True):
                yield from zip(task, res, strict=True)
        return
    results = Parallel(n_jobs=n_jobs, return_as="generator", prefer="threads" if threads else None)(
        delayed(_run_tasks)(fn, params, seed, task) for task in tasks)
    for task, res in zip(tasks, results, strict=True):
        yield from zip(task, res, strict=True)


def stream_chunks(task_fn, task, n_runs: int, seed: int, n_jobs: int, aggregate, runs_sink=None,
                  chunks_per_task: int = 1, threads: bool = False):
    """Fold streamed chunk results ``(chunk aggregate, parquet part or None)`` into ``aggregate`` in
    chunk order, handing each part to ``runs_sink(chunk index, bytes)``; returns the aggregate."""
    for chunk, (part_aggregate, part) in map_chunks(task_fn, task, n_runs, seed, n_jobs, chunks_per_task, threads):
        aggregate.merge(part_aggregate)
        if part is not None and runs_sink is not None:
            runs_sink(chunk.index, part)
    return aggregate


def parquet_bytes(frame) -> bytes:
    """One chunk's per-run rows as parquet bytes (a part of the runs.parquet dataset)."""
    import io

    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def _progress(total: int, initial: int):
    """A progress bar on stderr for runs longer than a second (runs done, runs/s, ETA); silent
    when stderr is not a terminal."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except OSError:
        columns = 0
    # the bar appears after a second, so short runs stay quiet; SIM_PROGRESS_DELAY (seconds) changes
    # that wait (the tests set 0 to see the bar however fast the machine is)
    delay = float(os.environ.get("SIM_PROGRESS_DELAY", "1.0"))
    return tqdm(total=total, initial=initial, unit="run", unit_scale=True, delay=delay, file=sys.stderr,
                leave=False, desc="simulating", ncols=columns if columns > 0 else 100, miniters=1, mininterval=0.2)
