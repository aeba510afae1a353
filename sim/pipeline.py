"""The run pipeline: scenario -> params -> chunks -> aggregate -> summary -> outputs, in one function.

:func:`run` is what ``python -m sim run`` (single and batch), the designer tools (through
:func:`sim.designer.evaluate.evaluate`: sweep, tune, sensitivity, matrix) and the studio's Report button call.
Its stages:

1. **params**: the run count and seed (the flags, else the scenario's ``[run]`` table); the kind's contract
   (:func:`sim.kinds.get`) turns the scenario into its engine's parameters inside ``simulate``;
2. **chunks**: runs are cut into fixed seed chunks (R-GEN-7) and played by the kind's batch engine, in this
   process, in worker processes or on a Dask cluster (:func:`sim.batch.execution`); when an output folder is
   given, every finished chunk is kept in ``OUT/.chunks`` so an interrupted run resumes to the same result;
3. **aggregate -> summary**: the kind folds the chunks into its aggregate and computes the summary (every
   ``<key>_ci`` already contains its estimate: :func:`sim.stats.wilson_interval` clamps);
4. **exact**: where the kind solves the scenario within its budget (``None`` where not; a budget refusal
   becomes a note);
5. **outputs** (only with ``out``): ``runs.parquet``, the kind's ``report.html`` with its charts and
   ``summary.json``.

The answer is a :class:`PipelineResult` (typed: summary, exact summary, per-run frame, the kind's parameters,
paths written, timings). docs/architecture.md draws the data flow.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sim import kinds, simulation
from sim.batch import ChunkStore, chunks, execution, fingerprint_of
from sim.designer.metrics import metric_interval, metric_value
from sim.designer.precision import DEFAULT_MAX_RUNS, PrecisionInfo, simulate_to_error
from sim.errors import ExactUnsupported, ScenarioError, SimError, one_line
from sim.outputs import (
    FolderLock,
    OwnedOutputs,
    atomic_write_bytes,
    atomic_write_text,
    make_folder,
    prepare_folder,
    recorded_files,
    recording,
    remove_logged,
    remove_owned_file,
    summary_json,
)
from sim.result import SimulationResult, with_summary
from sim.scenario import ScenarioBase


@dataclass(frozen=True)
class Timings:
    """Wall-clock seconds per stage of one :func:`run`."""

    simulate: float = 0.0
    exact: float = 0.0
    write: float = 0.0

    @property
    def total(self) -> float:
        return self.simulate + self.exact + self.write


@dataclass(frozen=True)
class PipelineResult:
    """What one :func:`run` produced.

    ``summary``: the simulated summary (SCENARIOS.md keys and provenance; None when not simulated);
    ``exact``: the exact summary (None where the kind, the scenario or its budget has none);
    ``runs``: the per-run frame when it was kept in memory (None when streamed to ``runs.parquet`` or not
    simulated); ``params``: the kind's engine parameters where the kind exposes them (escape), else None;
    ``simulation``: the kind's :class:`~sim.result.SimulationResult` (what its report is drawn from);
    ``out`` and ``written``: the output folder and the files written there; ``precision``: the
    ``--target-error`` outcome; ``notes``: why exact analysis is missing, when it was refused on its budget.

    Every dict is built before the result is made and never written afterwards: ``summary`` is
    ``simulation.summary`` (the page's note and the ``--target-error`` outcome already in it)."""

    scenario: ScenarioBase
    summary: dict[str, Any] | None
    exact: dict[str, Any] | None
    params: object | None  # the kind's own parameters (escape: sim.escape.params.EscapeParams)
    simulation: SimulationResult | None
    out: Path | None = None
    written: tuple[Path, ...] = ()
    timings: Timings = Timings()
    precision: PrecisionInfo | None = None
    notes: tuple[str, ...] = ()
    runs_in_memory: bool = True  # False when the runs were streamed to runs.parquet

    @property
    def runs(self) -> pd.DataFrame | None:
        """The per-run frame when the runs were kept in memory (made when first read, as
        :attr:`sim.result.SimulationResult.runs`: a caller of the summary alone never builds it), else None."""
        return self.simulation.runs if self.runs_in_memory and self.simulation is not None else None


# --------------------------------------------------------------------------------------------
# the pipeline


def run_fingerprint(scenario, seed: int, runs: int, **extra) -> dict[str, Any]:
    """What identifies a run of ``scenario`` (:func:`sim.batch.fingerprint_of`), with its kind's random layout:
    chunks stored under another layout are never mixed into the run."""
    return fingerprint_of(scenario, seed, runs, kinds.get(scenario.kind).random_layout, **extra)


def run(scenario, out: str | Path | None = None, *, runs: int | None = None, seed: int | None = None,
        n_jobs: int = 1, simulate: bool = True, exact: bool = True, write_runs: bool = True,
        target_error: float | None = None, max_runs: int | None = None, metric: str | None = None,
        progress=None, backend: str = "local", scheduler: str | None = None, allow_code: bool = False,
        show_progress: bool = False, **simulate_options) -> PipelineResult:
    """Simulate ``scenario`` (``runs`` plays from ``seed``; to ``target_error`` on ``metric`` if given) and
    solve it exactly where supported; with ``out``, write ``summary.json``, ``runs.parquet`` (unless
    ``write_runs`` is false), ``report.html`` and the charts there.

    Without ``out`` nothing is written and the simulation runs in the caller's execution settings
    (``simulate_options`` go to the kind's ``simulate``, e.g. ``engine`` or ``allow_code``).

    With ``out``, long runs are safe to interrupt: every finished chunk is kept in ``out/.chunks`` with the
    scenario hash, seed, runs and versions, and the same call continues from them to exactly the result of an
    uninterrupted run (the folder is removed once the run completes). Kinds that stream (escape) fold chunks
    into their aggregate and write ``runs.parquet`` as a partitioned dataset, one part per chunk, so memory
    stays bounded whatever the run count. Invalid input leaves nothing behind (a folder this call created is
    removed again, and only the files this call wrote are removed from an existing one)."""
    if out is None:
        if allow_code:  # the opt-in reaches the kind's simulate (sim.simulate(..., allow_code=True), tune --allow-code)
            simulate_options = {**simulate_options, "allow_code": True}
        return _run_in_memory(scenario, runs, seed, n_jobs, simulate, exact, simulate_options)

    out = Path(out)
    created = not (out.exists() or out.is_symlink())
    stores: list = []
    with recording(out) as log:
        try:
            make_folder(out)
            return _run_and_write(scenario, out, runs, seed, n_jobs, write_runs, target_error, max_runs, metric,
                                  progress, backend, scheduler, allow_code, show_progress, exact, simulate_options,
                                  stores)
        except (SimError, OSError):  # refused or failed (not interrupted): undo exactly what this call wrote
            for store in stores:
                store.remove()
            remove_logged(log)
            if created:
                with contextlib.suppress(OSError):
                    out.rmdir()  # only if empty: never a recursive delete
            raise


def _run_in_memory(scenario, runs, seed, n_jobs, simulate, exact, options) -> PipelineResult:
    t0 = time.perf_counter()
    result = simulation.simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, **options) if simulate else None
    t1 = time.perf_counter()
    notes: list[str] = []
    exact_answer = exact_summary(scenario, notes) if exact else None
    t2 = time.perf_counter()
    return PipelineResult(scenario, None if result is None else result.summary, exact_answer, _params(result), result,
                          timings=Timings(t1 - t0, t2 - t1), notes=tuple(notes))


def _run_and_write(scenario, out, runs, seed, n_jobs, write_runs, target_error, max_runs, metric, progress,
                   backend, scheduler, allow_code, show_progress, exact, options, stores: list) -> PipelineResult:
    def settings(**store):  # the execution settings of every simulation below
        return execution(backend, scheduler, progress=show_progress, allow_code=allow_code, **store)

    t0 = time.perf_counter()
    contract = kinds.get(scenario.kind)
    runs = scenario.run.runs if runs is None else int(runs)
    seed = scenario.run.seed if seed is None else int(seed)
    streams = contract.streams  # the kind folds chunks into an aggregate
    written: list[Path] = []
    precision = None
    store = None
    # chunks -> aggregate -> summary
    if target_error is not None:
        with settings():
            result, precision = simulate_to_error(scenario, target_error, seed=seed, n_jobs=n_jobs, metric=metric,
                                                  start_runs=runs if runs != scenario.run.runs else None,
                                                  max_runs=max_runs or DEFAULT_MAX_RUNS, progress=progress,
                                                  **options)
    else:
        result, store = _simulate_chunked(scenario, out, runs, seed, n_jobs, write_runs, streams, settings,
                                          options, stores)
    t1 = time.perf_counter()
    result, exact_answer, notes = _exact_beside(scenario, contract, result, exact)
    t2 = time.perf_counter()
    in_memory = not (streams and target_error is None)
    _write_outputs(contract, result, out, exact_answer, write_runs and in_memory, written,
                   store if write_runs and not in_memory else None)
    if store is not None:
        store.remove()  # complete: the chunks are no longer needed
    t3 = time.perf_counter()
    return PipelineResult(scenario, result.summary, exact_answer, _params(result), result, out,
                          tuple(dict.fromkeys(written)), Timings(t1 - t0, t2 - t1, t3 - t2), precision, tuple(notes),
                          runs_in_memory=in_memory)


def _simulate_chunked(scenario, out: Path, runs: int, seed: int, n_jobs: int, write_runs: bool, streams: bool,
                      settings, options: dict, stores: list):
    """(result, chunk store): the simulation with every finished chunk kept in ``out/.chunks`` (resumable); a
    kind that streams stages ``runs.parquet`` there as one part per chunk, moved into place once complete."""
    if write_runs:  # refused now, not after the work: an earlier runs.parquet this command cannot replace
        clear_runs(out / "runs.parquet", check_only=True, names=part_names(runs) if streams else ())
    fp = run_fingerprint(scenario, seed, runs, streamed=streams, runs_written=bool(write_runs))
    store = ChunkStore(out / ".chunks", fp)
    stores.append(store)
    with settings(store=store):
        if not streams:
            return simulation.simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, **options), store
        result = simulation.simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, keep_runs=False,
                              runs_sink=store.stage_part if write_runs else None, **options)
    return result, store


def _exact_beside(scenario, contract, result, exact: bool) -> tuple[SimulationResult, dict | None, list[str]]:
    """(the simulation, exact summary or None where unsupported or over budget, notes); the first note goes to
    the page: into a copy of the simulation's summary (the kind's dict is not written)."""
    notes: list[str] = []
    exact_answer = exact_summary(scenario, notes) if exact else None
    if notes:  # the page says why the figures are Monte Carlo alone (issue 25)
        result = with_summary(result, {**result.summary, "exact_note": notes[0]})
    if exact_answer is not None:  # optimal play beside the built-in policies, where the kind has it (escape)
        optimal = contract.optimal_comparison(scenario, max_states=contract.auto_max_states)
        if optimal is not None:
            exact_answer = {**exact_answer, "optimal": optimal}
    return result, exact_answer, notes


def _write_outputs(contract, result, out: Path, exact_answer: dict | None, runs_in_memory: bool,
                   written: list[Path], staged=None) -> None:
    """runs.parquet (one file when the runs are in memory and wanted; the parts ``staged`` in the resume store,
    moved into place), the report and summary.json, last. The earlier run's summary and report go first, so
    that an interruption never leaves one run's rows beside another run's summary (issue 45)."""
    make_folder(out)
    _retire_summary(out)
    runs_dir = out / "runs.parquet"
    clear_runs(runs_dir, check_only=False, replace=runs_in_memory or staged is not None,
               names=staged.staged_names() if staged is not None else ())
    if runs_in_memory:
        buf = io.BytesIO()
        result.runs.to_parquet(buf, index=False)
        atomic_write_bytes(runs_dir, buf.getvalue())
        written.append(runs_dir)
    elif staged is not None and staged.has_parts():
        written.extend(staged.install_parts(runs_dir))
    written.extend(_paths(contract.write_report(result, out, exact_summary=exact_answer)))
    atomic_write_text(out / "summary.json", summary_json(result.summary))
    written.append(out / "summary.json")


def _retire_summary(out: Path) -> None:
    """Remove the earlier run's ``summary.json`` and ``report.html`` (names this command writes again now)
    before any of this run's rows are put in place; not followed through a link."""
    fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for name in ("summary.json", "report.html"):
            with contextlib.suppress(OSError):
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                    os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def _params(result) -> Any:
    return None if result is None else result.params


def _paths(written) -> list[Path]:
    """A kind's ``write_report`` returns the report's path or a list of paths."""
    if written is None:
        return []
    if isinstance(written, str | Path):
        return [Path(written)]
    return [Path(p) for p in written]


def part_names(runs: int) -> set[str]:
    """The names of the parts of ``runs.parquet`` a streamed run of ``runs`` writes (one per chunk)."""
    return {f"part-{c.index:06d}.parquet" for c in chunks(int(runs))}


def clear_runs(runs_dir: Path, check_only: bool, replace: bool = True, names=()) -> None:
    """Make way for this run's ``runs.parquet``. A file or a symbolic link of that name is replaced (a link
    only after saying so, its target untouched). A dataset folder loses the parts a sim command recorded
    writing (:func:`sim.outputs.recorded_files`: by signature) and then the folder if that empties it. A file
    in it that no command can prove it wrote (the user's, a copied folder's) is never deleted: one of the
    ``names`` this run writes is replaced by this run's part; any other, with ``replace``, refuses the run,
    naming it (``check_only``: refuse before any work, delete nothing), so that no row of another run is left
    beside this run's; without ``replace`` (``--no-runs``) it stays."""
    try:
        st = os.lstat(runs_dir)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        if replace and not check_only:
            if stat.S_ISLNK(st.st_mode):
                print(one_line(f"warning: {runs_dir} was a symbolic link (to {os.readlink(runs_dir)}); replaced by "
                               "this run's rows (the link's target is left as it was)"), file=sys.stderr)
            os.unlink(runs_dir)
        return
    recorded = recorded_files(runs_dir)
    foreign = sorted(name for name in os.listdir(runs_dir) if name not in recorded and name not in names)
    if foreign and replace:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise SimError(f"{runs_dir}: holds files this command did not write ({shown}); move them out or name "
                       "another --out folder (nothing was deleted)")
    if check_only:
        return
    for folder, rel, sig, _ in recorded.values():  # a name this command writes, recorded by signature
        remove_owned_file(folder, rel, sig, None)
    with contextlib.suppress(OSError):
        os.rmdir(runs_dir)  # only if empty


# --------------------------------------------------------------------------------------------
# exact analysis beside a simulation


def supports_exact(scenario) -> bool:
    try:
        return bool(kinds.get(scenario.kind).supports_exact(scenario))
    except ExactUnsupported:
        return False


def exact_options(scenario) -> dict[str, Any]:
    """Options of ``sim.exact`` when exact analysis is tried alongside a simulation: the kind's
    smaller state budget where it has one (escape parties), so that a party too large for exact
    analysis costs a few seconds before it is reported by simulation alone."""
    budget = kinds.get(scenario.kind).auto_max_states
    return {} if budget is None else {"max_states": budget}


def exact_summary(scenario, notes: list[str] | None = None) -> dict | None:
    """The exact summary, or None where the kind (or this scenario, or its budget) has none. When the
    exact engine refused on its budget, a one-line note for the page ("exact analysis refused ...; Monte
    Carlo instead") is appended to ``notes``."""
    if not supports_exact(scenario):
        return None
    try:
        return simulation.exact(scenario, **exact_options(scenario))
    except ExactUnsupported as exc:
        if notes is not None and getattr(exc, "binds", None):
            notes.append(refusal_note(exc))
        elif notes is not None:  # refused on another bound (restraint's work budget, ...): say why, once
            notes.append(one_line(f"Exact analysis was skipped: {exc}. The figures are Monte Carlo."))
        return None


def refusal_note(exc) -> str:
    """What a page says when exact analysis was asked for and refused on its budget."""
    return (f"Exact analysis was tried and refused (its {exc.binds} budget binds; 'python -m sim exact' takes "
            f"{exc.flag} to raise it); the figures are Monte Carlo.")


# --------------------------------------------------------------------------------------------
# summary -> table rows (the sweep's grid points and the comparison index's scenarios)


def metric_row(summary: dict, exact: dict | None, metrics: list[str]) -> dict[str, float]:
    """``<m>``, ``<m>_lo``, ``<m>_hi`` for every metric of ``metrics`` (a metric missing from ``summary``
    raises the ScenarioError naming the available ones), and ``<m>_exact`` when an exact summary is given:
    NaN where the exact summary lacks that metric (the column is there, the cell is empty)."""
    row: dict[str, float] = {}
    for m in metrics:
        value = metric_value(summary, m)
        lo, hi = metric_interval(summary, m)
        row[m], row[f"{m}_lo"], row[f"{m}_hi"] = value, lo, hi
        if exact is not None:
            try:
                row[f"{m}_exact"] = metric_value(exact, m)
            except ScenarioError:
                row[f"{m}_exact"] = math.nan
    return row


# --------------------------------------------------------------------------------------------
# output folders


@contextlib.contextmanager
def owned_folder(folder: Path | None, command: str):
    """Lock ``folder`` for this command, record the files it writes there and replace what the same command
    wrote there before (only that: other commands' and the user's files are never touched, sim/outputs.py).
    A second command writing into the same folder meanwhile is refused; on error, the files this command
    wrote (as its writes reported them, by signature) and the folders it created are removed if left empty,
    and nothing else is touched: never a recursive delete."""
    if folder is None:
        yield
        return

    created = prepare_folder(folder)
    lock = FolderLock(folder)
    try:
        lock.acquire()
    except SimError:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    try:
        outputs = OwnedOutputs(folder, command)
        try:
            yield
        except (SimError, OSError):
            outputs.abandon()  # exactly the files its writes reported, and the folders it made, if left empty
            if created:
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only if empty: another command's file in it stays
            raise
        except BaseException:
            outputs.abandon_log()  # interrupted: what it wrote stays (a resumed run replaces it)
            raise
        outputs.commit()
    finally:
        lock.release()
