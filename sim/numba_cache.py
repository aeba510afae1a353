"""Where numba keeps the compiled engines (``@njit(cache=True)``), chosen before numba is imported.

numba writes its cache beside the sources (``sim/*/__pycache__``) or, where that is read-only, in the user's cache
folder (``~/.cache/numba``). A package installed read-only for a user whose home is read-only too (a service
account, a locked-down container) has neither, and numba then stops with a long traceback at the first import of an
engine. :func:`ensure_numba_cache` detects that case and points ``NUMBA_CACHE_DIR`` at a private folder of this user
in the system's temporary folder (created with mode 0700; one that another user owns or can write is not used).
Nothing changes where either usual place is writable or ``NUMBA_CACHE_DIR`` is set.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def _writable(folder: Path) -> bool:
    """``folder`` exists (or can be made) and this process can write into it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def _user_cache() -> Path:
    """numba's own fallback: the user's cache folder (as numba's appdirs computes it)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "numba"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "numba" / "Cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"


def _private_folder() -> Path | None:
    """``<tmp>/sim-numba-<uid>``, made mode 0700 and checked to be this user's alone; None where that fails."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    folder = Path(tempfile.gettempdir()) / f"sim-numba-{uid}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != uid) \
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None  # a folder planted by someone else: compiled code from it would run here
    return folder


def choose_cache_dir(package: Path = PACKAGE, user_cache=_user_cache, writable=_writable) -> Path | None:
    """The folder to give numba as NUMBA_CACHE_DIR, or None where its usual places will do."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    if writable(package) or writable(user_cache()):
        return None
    return _private_folder()


def ensure_numba_cache() -> None:
    """Set NUMBA_CACHE_DIR to a private folder where numba's usual places are read-only (before numba imports;
    if numba is imported already, its configuration is reloaded)."""
    try:
        folder = choose_cache_dir()
    except (OSError, RuntimeError):  # no home folder at all: leave numba to its defaults
        return
    if folder is None:
        return
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.reload_config()
