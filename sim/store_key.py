"""The per-user secret that authenticates the resume store's chunks (``OUT/.chunks``).

A check that anyone holding the scenario can compute (a hash of the run's fingerprint) cannot tell a chunk this
user's ``sim`` wrote from one edited by whoever shared the folder. So every chunk carries an HMAC-SHA256 keyed by
a secret the folder does not hold: 32 random bytes kept in ``$XDG_CONFIG_HOME/sim/resume-key`` (default
``~/.config/sim/resume-key``), created on first use, readable by this user only (0600). A chunk whose HMAC does
not verify was not written by this user's ``sim`` for this run and chunk: it is computed again.

When the key cannot be kept (no writable home), a key for this process only is used and one line says so: the
run works, but a later process cannot resume from its chunks.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
import stat
import sys
from pathlib import Path

from sim.errors import one_line

KEY_BYTES = 32


def key_path() -> Path:
    """Where the key is kept: ``$XDG_CONFIG_HOME/sim/resume-key`` (``~/.config`` when unset or relative)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "sim" / "resume-key"


def _read_key(path: Path) -> bytes:
    """The key at ``path``: a regular file of this user (not followed through a link), made private if it was
    not; raises OSError or ValueError when it is not such a file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            raise ValueError("not a regular file of this user")
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)  # the user's own key, left readable by others: private from now on
        data = os.read(fd, 4 * KEY_BYTES + 1)
    finally:
        os.close(fd)
    key = bytes.fromhex(data.decode("ascii").strip())
    if len(key) != KEY_BYTES:
        raise ValueError("not a key")
    return key


def _create_key(path: Path) -> bytes:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)  # O_EXCL: two processes creating it at once keep one key
    try:
        os.write(fd, key.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


@functools.cache
def user_key() -> bytes:
    """This user's resume key (created on first use); a process-only key, said once, when it cannot be kept."""
    path = key_path()
    try:
        try:
            return _read_key(path)
        except FileNotFoundError:
            try:
                return _create_key(path)
            except FileExistsError:  # created by another process just now
                return _read_key(path)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(one_line(f"warning: cannot keep the resume key at {path} ({why}); this run's chunks cannot be "
                       "resumed by another process (set XDG_CONFIG_HOME to a folder of yours)"), file=sys.stderr)
        return secrets.token_bytes(KEY_BYTES)


def mac(*parts: bytes | str) -> bytes:
    """HMAC-SHA256 under this user's key of ``parts`` (each length-prefixed, so no two lists collide)."""
    h = hmac.new(user_key(), digestmod=hashlib.sha256)
    for part in parts:
        raw = part.encode() if isinstance(part, str) else part
        h.update(len(raw).to_bytes(8, "big"))
        h.update(raw)
    return h.digest()


def verify(tag: bytes, *parts: bytes | str) -> bool:
    return hmac.compare_digest(tag, mac(*parts))
