"""The files a command owns in an output folder, and the lock that gives one command the folder at a time.

An output folder may hold the user's own files, files of other commands, and a ``.sim-outputs.json`` that
anybody could have written (a shared folder, a cloned repository). So the manifest is never trusted to say
what may be deleted: a stale file is deleted only when

- the manifest is a regular file owned by the user running the command and writable by nobody else,
- its entry for that file records the file's device, inode, size and modification time, and the file on disk
  has exactly those (a file the user made or changed, or a copy, has another inode or time), and
- the path stays inside the folder (relative, no ``..``, no symbolic link on the way) and every sub-folder on
  the way is one this command created (recorded the same way, by device and inode).

Anything else is left in place: a stale file left behind is harmless, a user's file deleted is not.

What a command wrote is what its writes report, never a comparison of the folder before and after: every
writer (:func:`sim.batch.atomic_write_bytes`, charts, the resume store installing ``runs.parquet``) calls
:func:`note_file` with the path and the signature of the file it put in place, and :func:`make_folder` notes
each folder it created; a :class:`WriteLog` (opened by :func:`recording` or :class:`OwnedOutputs`) collects
those under its folder. A note the user saved in the folder meanwhile, or another command's report, is not in
it, so it is neither recorded nor deleted.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sim.errors import SimError

OUTPUT_MANIFEST = ".sim-outputs.json"
SKIPPED_DIRS = (".chunks",)  # resume stores: managed by sim.batch.ChunkStore, never listed here


def _file_sig(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _dir_sig(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino]


class WriteLog:
    """The files (relative path -> signature) and sub-folders (relative path -> device, inode) that the
    writes of one command put in place under ``folder``, as each write reported them."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._roots = (os.path.abspath(folder), os.path.realpath(folder))
        self.files: dict[str, list[int]] = {}
        self.dirs: dict[str, list[int]] = {}

    def relative(self, path: str | Path) -> str | None:
        """``path`` relative to the folder (POSIX), or None when it lies elsewhere (or in a resume store)."""
        full = os.path.abspath(path)
        candidates = (full, os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full)))
        for root, p in zip(self._roots, candidates, strict=True):
            rel = os.path.relpath(p, root)
            if rel != "." and rel != ".." and not rel.startswith(".." + os.sep):
                rel = Path(rel).as_posix()
                if safe_relative(rel) and rel.split("/")[0] not in SKIPPED_DIRS:
                    return rel
        return None


_LOGS: contextvars.ContextVar[tuple[WriteLog, ...]] = contextvars.ContextVar("sim_write_logs", default=())


@contextlib.contextmanager
def recording(folder: str | Path) -> Iterator[WriteLog]:
    """Collect, inside the ``with`` block, what this thread's writes put in place under ``folder``."""
    log = WriteLog(folder)
    token = _LOGS.set((*_LOGS.get(), log))
    try:
        yield log
    finally:
        _LOGS.reset(token)


def note_file(path: str | Path, sig: list[int]) -> None:
    """A writer put a file at ``path`` whose signature (device, inode, size, time) is ``sig``."""
    for log in _LOGS.get():
        rel = log.relative(path)
        if rel is not None:
            log.files[rel] = list(sig)


def note_dir(path: str | Path, sig: list[int]) -> None:
    """A writer created the folder ``path`` (device, inode ``sig``)."""
    for log in _LOGS.get():
        rel = log.relative(path)
        if rel is not None:
            log.dirs[rel] = list(sig)
            log.files = {p: s for p, s in log.files.items() if p != rel}


def make_folder(path: str | Path) -> Path:
    """``path`` and its missing parents, created one by one; each one this call created is noted."""
    path = Path(path)
    missing = []
    p = path
    while not (p.exists() or p.is_symlink()) and p != p.parent:
        missing.append(p)
        p = p.parent
    for p in reversed(missing):
        try:
            os.mkdir(p)
        except FileExistsError:
            continue  # made by someone else just now: not ours
        note_dir(p, _dir_sig(os.lstat(p)))
    return path


def file_signature(path: str | Path) -> list[int] | None:
    """The signature of the regular file at ``path`` (not followed through a final link), or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return _file_sig(st) if stat.S_ISREG(st.st_mode) else None


def _dir_signature(path: str | Path) -> list[int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return _dir_sig(st) if stat.S_ISDIR(st.st_mode) else None


def safe_relative(rel: Any) -> bool:
    """A relative POSIX path that stays inside its folder: no root, no ``..``, no empty part, no control char."""
    if not isinstance(rel, str) or not rel or len(rel) > 1000 or rel.startswith("/"):
        return False
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in rel):
        return False
    parts = rel.split("/")
    return all(p not in ("", ".", "..") for p in parts)


def _sig_list(value: Any, n: int) -> list[int] | None:
    if isinstance(value, list) and len(value) == n and all(isinstance(v, int) and not isinstance(v, bool)
                                                           for v in value):
        return value
    return None


def _manifest_trusted(path: Path) -> bool:
    """The manifest is ours to act on: a regular file, owned by this user, writable by nobody else."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022:
        return False
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def read_output_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of ``folder``: ``outputs`` (command -> names, for information), and, when the manifest is
    trusted (see the module docstring), ``files`` and ``dirs`` (command -> relative path -> signature)."""
    path = Path(folder) / OUTPUT_MANIFEST
    empty: dict[str, Any] = {"outputs": {}, "files": {}, "dirs": {}, "trusted": False}
    try:
        if os.lstat(path).st_size > 10_000_000:
            return empty
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict):
        return empty
    trusted = _manifest_trusted(path)
    out: dict[str, Any] = {"outputs": {}, "files": {}, "dirs": {}, "trusted": trusted}
    outputs = data.get("outputs")
    if isinstance(outputs, dict):
        out["outputs"] = {str(k): [p for p in v if safe_relative(p)] for k, v in outputs.items()
                          if isinstance(v, list)}
    if trusted:
        for key, n in (("files", 4), ("dirs", 2)):
            table = data.get(key)
            if not isinstance(table, dict):
                continue
            for cmd, entries in table.items():
                if isinstance(entries, dict):
                    out[key][str(cmd)] = {p: s for p, s in entries.items()
                                          if safe_relative(p) and _sig_list(s, n) is not None}
    return out


def _open_dir(folder: Path, parts: list[str], dirs: dict[str, list[int]] | None) -> int | None:
    """A descriptor of ``folder/parts...``, each step opened without following links and checked against the
    signature this command recorded for it (``dirs`` None: any real folder); None when any step is not ours."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    for i, part in enumerate(parts):
        rel = "/".join(parts[: i + 1])
        try:
            nxt = os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0),
                          dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = nxt
        if dirs is not None and dirs.get(rel) != _dir_sig(os.fstat(fd)):
            os.close(fd)
            return None
    return fd


def remove_owned_file(folder: Path, rel: str, sig: list[int], dirs: dict[str, list[int]] | None) -> bool:
    """Delete ``folder/rel`` if it is provably the file this command wrote (see the module docstring);
    then the sub-folders it created that this leaves empty. True when the file was deleted. ``dirs`` None
    (a write log of this process, not a manifest read from disk): any real sub-folder on the way, no link."""
    if not safe_relative(rel) or os.unlink not in os.supports_dir_fd:
        return False
    parts = rel.split("/")
    try:
        fd = _open_dir(folder, parts[:-1], dirs)
    except OSError:
        return False
    if fd is None:
        return False
    try:
        st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or _file_sig(st) != list(sig):
            return False
        os.unlink(parts[-1], dir_fd=fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    for i in range(len(parts) - 1, 0, -1):  # the sub-folders it leaves empty, deepest first, only ours
        parent = parts[:i]
        try:
            pfd = _open_dir(folder, parent[:-1], dirs)
        except OSError:
            break
        if pfd is None:
            break
        try:
            st = os.stat(parent[-1], dir_fd=pfd, follow_symlinks=False)
            if dirs is None or dirs.get("/".join(parent)) != _dir_sig(st):
                break
            os.rmdir(parent[-1], dir_fd=pfd)  # only if empty
        except OSError:
            break
        finally:
            os.close(pfd)
    return True


def _manifest_mode() -> int:
    return file_mode() & ~0o022  # writable by this user only: a manifest others can change is not trusted


def recorded_files(inside: Path, levels: int = 3) -> dict[str, tuple[Path, str, list[int], dict]]:
    """The files directly in the folder ``inside`` that a sim command recorded writing: name -> (the folder
    whose trusted manifest records it, its path there, its signature, that command's folders). Manifests of
    ``inside``'s parents up to ``levels`` above are read too (a batch run's folders are recorded by the batch's
    folder)."""
    inside = Path(os.path.abspath(inside))
    found: dict[str, tuple[Path, str, list[int], dict]] = {}
    for folder in [inside.parent, *inside.parent.parents][: levels + 1]:
        manifest = read_output_manifest(folder)
        for cmd, entries in manifest["files"].items():
            for rel, sig in entries.items():
                path = folder / rel
                if path.parent == inside and file_signature(path) == sig:
                    found.setdefault(path.name, (folder, rel, sig, manifest["dirs"].get(cmd, {})))
    return found


def remove_logged(log: WriteLog) -> None:
    """Undo what ``log`` recorded: each file only while it is still the file the write put there (signature),
    then each folder it created that this leaves empty, deepest first. Never a recursive delete."""
    for rel, sig in log.files.items():
        remove_owned_file(log.folder, rel, sig, None)
    for rel in sorted(log.dirs, key=lambda r: -r.count("/")):
        parts = rel.split("/")
        with contextlib.suppress(OSError):
            fd = _open_dir(log.folder, parts[:-1], None)
            if fd is None:
                continue
            try:
                if _dir_sig(os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)) == log.dirs[rel]:
                    os.rmdir(parts[-1], dir_fd=fd)  # only if empty
            finally:
                os.close(fd)


class OwnedOutputs:
    """What one command writes into an output folder, and nothing else.

    Created before the command writes, it collects what each write reports (:func:`note_file`,
    :func:`make_folder`): the path and signature of every file the command put in place under the folder and
    every sub-folder it created. :meth:`commit`, after the command succeeded, records those under the command's
    name in the folder's manifest (``.sim-outputs.json``). Files the manifest recorded for the same command that
    it did not write again (a ``runs.parquet`` of an earlier run with ``--no-runs`` now, the scenario folders of
    an earlier comparison) are deleted when they are provably those files (module docstring), and so are the
    sub-folders of the command's that this leaves empty. :meth:`abandon`, after a failure, deletes what the
    command wrote (by signature) and the folders it created that this leaves empty. Other commands' files and
    the user's own, written meanwhile or before, are never touched."""

    def __init__(self, folder: str | Path, command: str = "run"):
        self.folder = Path(folder)
        self.command = command
        self.log = WriteLog(self.folder)
        self._token: contextvars.Token | None = _LOGS.set((*_LOGS.get(), self.log))

    def _stop(self) -> None:
        if self._token is not None:
            with contextlib.suppress(ValueError):  # set in another context: nothing to restore there
                _LOGS.reset(self._token)
            self._token = None

    def abandon_log(self) -> None:
        """Stop collecting without acting (an interrupted command: what it wrote stays)."""
        self._stop()

    def abandon(self) -> None:
        """The command failed: remove what it wrote, and the folders it created that this leaves empty."""
        self._stop()
        remove_logged(self.log)

    def commit(self) -> list[str]:
        """Record this command's files, delete its stale ones of the previous manifest; returns those."""
        self._stop()
        owned = {p: sig for p, sig in self.log.files.items()
                 if p != OUTPUT_MANIFEST and file_signature(self.folder / p) == sig}  # still the file written
        created = {d: sig for d, sig in self.log.dirs.items() if _dir_signature(self.folder / d) == sig}
        manifest = read_output_manifest(self.folder)
        earlier = manifest["dirs"].get(self.command, {})
        my_dirs = {d: s for d, s in earlier.items() if _dir_signature(self.folder / d) == s} | created
        removed = [rel for rel, sig in manifest["files"].get(self.command, {}).items()
                   if rel not in owned and remove_owned_file(self.folder, rel, sig, my_dirs)]
        files: dict[str, dict[str, list[int]]] = {}
        for cmd, entries in manifest["files"].items():  # another command's file rewritten now is ours
            if cmd != self.command:
                kept = {p: s for p, s in entries.items() if p not in owned and file_signature(self.folder / p) == s}
                if kept:
                    files[cmd] = kept
        dirs = {cmd: {d: s for d, s in entries.items() if _dir_signature(self.folder / d) == s}
                for cmd, entries in manifest["dirs"].items() if cmd != self.command}
        dirs = {cmd: entries for cmd, entries in dirs.items() if entries}
        if owned:
            files[self.command] = dict(sorted(owned.items()))
        mine_dirs = {d: s for d, s in my_dirs.items() if _dir_signature(self.folder / d) == s}
        if mine_dirs:
            dirs[self.command] = mine_dirs
        outputs = {cmd: sorted(entries) for cmd, entries in files.items()}
        if files or manifest["outputs"] or (self.folder / OUTPUT_MANIFEST).exists():
            text = json.dumps({"written_by": "sim", "note": (
                "files each command wrote into this folder; the same command run again deletes those it does not "
                "write again, only when device, inode, size and time still match, and touches nothing else"),
                "outputs": outputs, "files": files, "dirs": dirs}, indent=1)
            atomic_write_bytes(self.folder / OUTPUT_MANIFEST, text.encode(), mode=_manifest_mode())
        return removed


# --------------------------------------------------------------------------------------------
# one writer per folder


def prepare_folder(folder: Path) -> bool:
    """Create ``folder`` (and its parents) if needed, or check that it is a folder this process can write;
    one line otherwise. Returns True when this call created it."""
    folder = Path(folder)
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise SimError(f"--out {folder}: exists and is not a folder; name a folder (it is created if missing)")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise SimError(f"--out {folder}: this folder is not writable; name another --out folder")
        return False
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir()
    except FileExistsError:
        if folder.is_dir():
            return False  # made by someone else just now: not ours
        raise SimError(f"--out {folder}: exists and is not a folder; name a folder") from None
    except NotADirectoryError:
        raise SimError(f"--out {folder}: a part of this path is a file, not a folder") from None
    except PermissionError:
        raise SimError(f"--out {folder}: cannot create this folder (permission denied); name another --out "
                       "folder") from None
    return True


class FolderLock:
    """An exclusive lock on an output folder for one command (``flock`` on the folder itself: no file is
    written, and the lock ends with the process however it ends). A second writer is refused at once."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.fd: int | None = None

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SimError(f"--out {self.folder}: another sim command is writing into this folder; wait for it "
                           "to finish or name another --out folder") from None
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# --------------------------------------------------------------------------------------------
# atomic writes (every file a command writes goes through here)


def process_umask() -> int:
    """The process umask."""
    try:  # Linux reports the umask without changing it (thread-safe)
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets from the process umask (0o666 & ~umask), as ``open()`` would give it."""
    return 0o666 & ~process_umask()


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` so that ``path`` appears complete or not at all (write, fsync, rename). The file
    gets the process umask's mode (a temporary file alone would be private, 0600), or ``mode``. The path and
    signature of the file put in place are reported to the command's write log (:func:`note_file`)."""
    path = Path(path)
    make_folder(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            sig = _file_sig(os.fstat(fh.fileno()))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    note_file(path, sig)  # what this write put in place: the command records exactly this (sim/outputs.py)


def atomic_write_text(path: Path, text: str) -> None:
    """``text`` (UTF-8) written as :func:`atomic_write_bytes` writes."""
    atomic_write_bytes(path, text.encode("utf-8"))


def summary_json(summary: dict[str, Any]) -> str:
    """A summary as ``summary.json`` holds it (numpy numbers as plain numbers)."""
    return json.dumps(summary, indent=2, sort_keys=False, default=_json_default) + "\n"


def _json_default(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value)}")
