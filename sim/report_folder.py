"""Which folder a scenario's reports go to, so that two scenario files never share one by accident.

The default folder is ``reports/<scenario name>/`` (:attr:`sim.scenario.ScenarioBase.slug`). ``run`` and ``exact``
leave a note of the file they reported on there (:data:`SOURCE_NOTE`, the file's absolute path). When that
folder already holds the report of another file (a tuned copy that kept the original's ``name``), the
scenario gets its own folder, ``reports/<scenario name>--<file name>/``, and the console says so; an explicit
``--out`` is used as given, and the console says whose report it replaced."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sim.limits import bounded_folder_name
from sim.report import atomic_write_text

SOURCE_NOTE = ".sim-source"  # the absolute path of the scenario file whose report the folder holds


def _source(scenario) -> str | None:
    return str(Path(scenario.source).resolve()) if getattr(scenario, "source", None) else None


def owner(folder: Path) -> str | None:
    """The scenario file whose report ``folder`` holds (None: no note there)."""
    try:
        text = (Path(folder) / SOURCE_NOTE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def default_folder(scenario, out: str | None = None, sub: str = "") -> tuple[Path, list[str]]:
    """(folder, console notes): ``out`` as given, else ``reports/<slug>/`` unless another file's report is there,
    then ``reports/<slug>--<file stem>/`` (with a short hash of the path if that too is taken); ``sub`` below it."""
    if out:
        return Path(out), []
    base = Path("reports") / scenario.slug
    mine = _source(scenario)
    taken = owner(base)
    notes = []
    if mine is not None and taken not in (None, mine):
        stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in Path(mine).stem.lower()).strip("_")
        alt = Path("reports") / bounded_folder_name(f"{scenario.slug}--{stem or 'scenario'}")
        if owner(alt) not in (None, mine):
            digest = hashlib.sha256(mine.encode()).hexdigest()[:8]
            alt = Path("reports") / bounded_folder_name(f"{scenario.slug}--{digest}")
        notes.append(f"note: {base}/ holds the report of {taken} (same scenario name); this file's report goes to "
                     f"{alt}/ (--out chooses a folder)")
        base = alt
    return (base / sub if sub else base), notes


def replaced_notes(folder: Path, scenario, page: str) -> list[str]:
    """Before writing ``page`` into ``folder``: a console note when that replaces an earlier report (naming the
    file it came from when that is another file)."""
    if not (Path(folder) / page).exists():
        return []
    taken, mine = owner(folder), _source(scenario)
    if taken is not None and mine is not None and taken != mine:
        return [f"note: replaced the report of {taken} in {folder}/"]
    return [f"note: replaced the earlier {page} in {folder}/"]


def note_source(folder: Path, scenario) -> None:
    """Record the scenario file whose report ``folder`` now holds."""
    mine = _source(scenario)
    if mine is not None:
        atomic_write_text(Path(folder) / SOURCE_NOTE, mine + "\n")
