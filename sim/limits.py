"""Limits against resource bombs and hostile strings, checked at the validation boundary (issue 28).

Everything here is checked before the work it bounds starts: the file's size before it is read, the depth of
its dotted keys before the TOML parser sees it, list lengths and control characters before the model
validates, ``--jobs`` and ``--max-states`` before anything runs, the dice of an expression before exact
analysis convolves them. Each refusal is one line (exit status 2). ``docs/limits.md`` is generated from these
numbers (:func:`limit_rows`, ``python -m sim.docs_gen``).
"""

from __future__ import annotations

import os
import re
from typing import Any

from sim.errors import ScenarioError, SimError

MAX_FILE_BYTES = 1_000_000  # a scenario file (stat first: a larger file is not read)
MAX_KEY_DEPTH = 32  # parts of one dotted key or table header (a.b.c = 1 has 3)
MAX_NESTING = 32  # tables and arrays inside one another
MAX_LIST_ITEMS = 1_000  # items of any one array in a scenario (the escape search pool, spawn locations, ...)
MAX_NAME_CHARS = 100  # a scenario's name
MAX_EXACT_DICE_FACES = 2_000  # exact analysis: Σ count × sides of one dice expression (20d100, 2d1000)
MAX_STATES = 1_000_000  # --max-states (escape exact analysis)
JOBS_PER_CORE = 4  # --jobs at most this many per core of the machine
MAX_FOLDER_NAME_BYTES = 120  # a folder name the tool makes (reports/<name>/): file systems take 255 bytes
MAX_PROBLEMS = 20  # problems of one file printed (in file order), then one line saying how many more
MAX_ARGUMENT_INT = 2**63 - 1  # any integer given on the command line (a seed, a sweep's range, tune --lo/--hi)

#: keys whose text may hold line breaks and tabs (no other control character anywhere)
FREE_TEXT_KEYS = ("description",)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_EXCEPT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def max_jobs() -> int:
    """The largest ``--jobs`` this machine accepts: :data:`JOBS_PER_CORE` per core."""
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def bounded_int(text: str) -> int:
    """An integer argument, refused (ValueError, with the reason) beyond :data:`MAX_ARGUMENT_INT` in magnitude before
    anything converts it to a float or a machine integer; a longer digit string is not even converted."""
    digits = text.strip().lstrip("+-").lstrip("0")
    if len(digits) > len(str(MAX_ARGUMENT_INT)) or abs(value := int(text)) > MAX_ARGUMENT_INT:
        raise ValueError(f"expected an integer of magnitude at most 2^63 - 1 ({MAX_ARGUMENT_INT:,}); given a "
                         f"{len(digits)}-digit number")
    return value


def check_jobs(jobs: int | None) -> None:
    if jobs is None:
        return
    if jobs == 0 or jobs < -1:
        raise SimError(f"--jobs: expected -1 or an integer >= 1, got {jobs}")
    if jobs > max_jobs():
        raise SimError(f"--jobs: expected at most {max_jobs()} ({JOBS_PER_CORE} per core; this machine has "
                       f"{os.cpu_count() or 1}), got {jobs}; -1 uses every core")


def check_max_states(n: int | None) -> None:
    if n is not None and n > MAX_STATES:
        raise SimError(f"--max-states: expected at most {MAX_STATES:,}, got {n:,} (beyond it the analysis "
                       "needs more memory than a workstation has; use Monte Carlo: python -m sim run)")


def check_runs(runs: int | None, flag: str = "--runs") -> None:
    from sim.batch import MAX_RUNS

    if runs is not None and runs > MAX_RUNS:
        raise SimError(f"{flag}: expected at most {MAX_RUNS:,}, got {runs:,}")


def bounded_folder_name(name: str, max_bytes: int = MAX_FOLDER_NAME_BYTES) -> str:
    """``name`` as a folder name of at most ``max_bytes`` UTF-8 bytes: unchanged when it fits, else cut at a
    character boundary and followed by ``-`` and 8 hex digits of the full name's sha256 (two long names that
    share their start still get two folders)."""
    import hashlib

    raw = name.encode("utf-8")
    if len(raw) <= max_bytes:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:8]
    head = raw[: max_bytes - len(digest) - 1].decode("utf-8", errors="ignore")  # a cut letter is dropped whole
    return f"{head}-{digest}"


# --------------------------------------------------------------------------------------------
# the scenario text, before parsing

# strings and comments, replaced by a placeholder before dotted keys are counted
_STRINGS = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"{3,5}|\'\'\'(?:[^\']|\'(?!\'\'))*\'{3,5}'
                      r'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*', re.S)
_PART = r'(?:[A-Za-z0-9_-]+|S)'
_DEEP_KEY = re.compile(_PART + r'(?:[ \t]*\.[ \t]*' + _PART + f"){{{MAX_KEY_DEPTH},}}")


def check_toml_text(text: str, file: str) -> None:
    """Refuse dotted keys deeper than :data:`MAX_KEY_DEPTH` before parsing (the parser's memory grows with the
    square of a key's depth) and nesting deeper than :data:`MAX_NESTING` brackets."""
    bare = _STRINGS.sub(lambda m: "" if m.group(0).startswith("#") else "S", text)
    m = _DEEP_KEY.search(bare)
    if m:
        line = bare.count("\n", 0, m.start()) + 1
        raise ScenarioError(f"line {line}: a dotted key of more than {MAX_KEY_DEPTH} parts", file=file)
    depth = deepest = 0
    for ch in re.findall(r"[\[\]{}]", bare):
        depth = depth + 1 if ch in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING + 1:  # [[table]] headers count two
            raise ScenarioError(f"tables and arrays nested more than {MAX_NESTING} deep", file=file)


_LONG_DIGITS = re.compile(r"[+-]?[0-9][0-9_]{999,}")
_INLINE = re.compile(r'([A-Za-z0-9_.-]+)[ \t]*=[ \t]*(\{)?|(\})')


def _inline_keys(prefix: str) -> list[str]:
    """The keys leading to the value that ends ``prefix`` (one line): ``a = { b = { c = `` gives a, b, c."""
    stack: list[str] = []
    last = ""
    for m in _INLINE.finditer(prefix):
        if m.group(3):
            if stack:
                stack.pop()
            last = ""
        elif m.group(2):
            stack.append(m.group(1))
            last = ""
        else:
            last = m.group(1)
    return [*stack, last]
_HEADER = re.compile(r"^[ \t]*\[\[?([^\]\n]*)\]\]?", re.M)


def long_integer_error(text: str, file: str) -> ScenarioError:
    """The one line for an integer too long for Python to convert (more than ``sys.int_info``'s 4,300 digits,
    which the TOML parser raises as a plain ValueError): the file, the key the number stands for, its line."""
    import sys

    limit = sys.get_int_max_str_digits() or 4300
    bare = _STRINGS.sub(lambda m: "" if m.group(0).startswith("#") else "S" + "\n" * m.group(0).count("\n"),
                        text)
    found = next((m for m in _LONG_DIGITS.finditer(bare) if len(m.group(0).replace("_", "")) > limit), None)
    if found is None:
        return ScenarioError(f"an integer of more than {limit:,} digits", file=file)
    digits = len(found.group(0).lstrip("+-").replace("_", ""))
    line_start = bare.rfind("\n", 0, found.start()) + 1
    line = bare.count("\n", 0, found.start()) + 1
    headers = [h.group(1).strip() for h in _HEADER.finditer(bare, 0, line_start)]
    dotted = ".".join(p for p in (headers[-1] if headers else "", *_inline_keys(bare[line_start:found.start()]))
                      if p)
    return ScenarioError(f"expected an integer of at most {limit:,} digits; given one of {digits:,} digits "
                         f"(line {line})", file=file, key=dotted or None)


# --------------------------------------------------------------------------------------------
# the parsed data, before the model validates


def _key_text(path: tuple) -> str:
    from sim.scenario import _key_part

    return ".".join(_key_part(p) for p in path) or "(top level)"


def check_data(data: Any, file: str) -> None:
    """Refuse arrays longer than :data:`MAX_LIST_ITEMS` and control characters (C0, DEL, C1: terminal escape
    sequences, NUL) in any key or string; ``description`` texts may hold line breaks and tabs."""
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if _CONTROL.search(str(k)):
                    raise ScenarioError(f"a key holds a control character ({_first_control(str(k))}); keys and "
                                        "names must be printable text", file=file, key=_key_text(path))
                stack.append(((*path, k), v))
        elif isinstance(node, list):
            if len(node) > MAX_LIST_ITEMS:
                raise ScenarioError(f"expected at most {MAX_LIST_ITEMS:,} items; given {len(node):,}", file=file,
                                    key=_key_text(path))
            stack.extend(((*path, i), v) for i, v in enumerate(node))
        elif isinstance(node, str):
            free = bool(path) and path[-1] in FREE_TEXT_KEYS
            if (_CONTROL_EXCEPT_LINES if free else _CONTROL).search(node):
                what = "line breaks and tabs only" if free else "no control characters"
                raise ScenarioError(f"expected printable text ({what}); given a control character "
                                    f"({_first_control(node)})", file=file, key=_key_text(path))


def _first_control(text: str) -> str:
    m = _CONTROL.search(text)
    return f"U+{ord(m.group(0)):04X}" if m else "?"


# --------------------------------------------------------------------------------------------
# exact analysis


def check_exact_dice(expr, key: str = "") -> None:
    """Exact analysis convolves every die of an expression: refuse one whose Σ count × sides exceeds
    :data:`MAX_EXACT_DICE_FACES` (its cost grows with the square of that) before convolving."""
    from sim.errors import ExactUnsupported

    faces = sum(t.count * t.sides for t in expr.dice)
    if faces > MAX_EXACT_DICE_FACES:
        where = f"{key}: " if key else ""
        raise ExactUnsupported(f"{where}{expr.text!r} has {faces:,} faces in all (count x sides); exact analysis "
                               f"takes at most {MAX_EXACT_DICE_FACES:,} per expression; use Monte Carlo "
                               "(python -m sim run)")


# --------------------------------------------------------------------------------------------
# the limits page (docs/limits.md is generated from this)


def limit_rows() -> list[tuple[str, str, str]]:
    """(what, limit, where) for every limit, with the numbers of the code."""
    return _input_limits() + _kind_limits()


def _n(x: int) -> str:
    return f"{x:,}"


def _input_limits() -> list[tuple[str, str, str]]:
    """The limits of a scenario file, a run and a dice expression, whatever the kind."""
    from sim.batch import CHUNK_RUNS, DASK_HANDSHAKE_SECONDS, MAX_CHUNK_BYTES, MAX_RUNS
    from sim.dice import MAX_CONSTANT, MAX_DICE_COUNT, MAX_DIE_SIDES

    n = _n
    return [
        ("scenario file size", f"{n(MAX_FILE_BYTES)} bytes, UTF-8 (the size is checked before the file is read)",
         "`sim.limits.MAX_FILE_BYTES`"),
        ("dotted key depth", f"{MAX_KEY_DEPTH} parts (`a.b.c` has 3), checked before parsing",
         "`sim.limits.MAX_KEY_DEPTH`"),
        ("nesting", f"{MAX_NESTING} tables or arrays inside one another", "`sim.limits.MAX_NESTING`"),
        ("items of any one array", f"{n(MAX_LIST_ITEMS)} (the escape search pool `search.items`, campus spawn "
         "`locations`, ...)", "`sim.limits.MAX_LIST_ITEMS`"),
        ("names and labels", "printable text: no control characters (C0, DEL, C1: terminal escapes, NUL); "
         "`description` may hold line breaks and tabs", "every string of a scenario"),
        ("scenario name", f"0 .. {MAX_NAME_CHARS} characters (empty: the file name is used); descriptions up "
         "to 10,000", "`name`, `description`"),
        ("report folder name", f"at most {MAX_FOLDER_NAME_BYTES} bytes (UTF-8): a longer name (100 letters of 4 "
         "bytes) is cut at a letter and ends in `-` and 8 hex digits of the full name's hash, so two names "
         "never share a folder", "`reports/<name>/`, batch and compare folders"),
        ("runs per simulation", f"1 .. {n(MAX_RUNS)}", "`run.runs`, `--runs`"),
        ("runs per seed chunk", f"{n(CHUNK_RUNS)} (fixed, R-GEN-7; not configurable, so results never depend "
         "on it)", "`sim.batch.CHUNK_RUNS`"),
        ("stored chunk", f"{n(MAX_CHUNK_BYTES)} bytes, uncompressed members only (else computed again)",
         "`OUT/.chunks/`"),
        ("seed", "0 .. 2^63 − 1", "`run.seed`, `--seed`"),
        ("parallel jobs", f"-1 (every core) or 1 .. {JOBS_PER_CORE} × the machine's cores", "`--jobs`"),
        ("dice expression", f"at most 200 characters, {MAX_DICE_COUNT} dice, {n(MAX_DIE_SIDES)} sides, "
         f"constants up to {n(MAX_CONSTANT)}", "R-GEN-5, `sim.dice`"),
        ("dice for exact analysis", f"Σ count × sides at most {n(MAX_EXACT_DICE_FACES)} per expression "
         "(20d100, 2d1000); beyond it exact analysis is refused and Monte Carlo still runs",
         "`sim.limits.MAX_EXACT_DICE_FACES`"),
        ("problems printed per file", f"the first {MAX_PROBLEMS} in file order, then one line saying how many more "
         "(key positions are found in one pass)", "`sim.limits.MAX_PROBLEMS`"),
        ("integers on the command line", "magnitude at most 2^63 − 1 (a longer digit string is refused before it "
         "is converted)", "`--seed`, `--runs`, `sweep --param`, `tune --lo/--hi`, ..."),
        ("Dask scheduler", f"`tcp://` or `tls://` (with certificates), host, port 1 .. 65,535; one handshake "
         f"deadline of {DASK_HANDSHAKE_SECONDS:.0f} s before anything is written", "`--scheduler`"),
    ]


def _kind_limits() -> list[tuple[str, str, str]]:
    """The limits of each kind (party, rounds, exact analysis) and of the designer tools."""
    import importlib

    from sim.campus import model as campus
    from sim.designer import fit
    from sim.designer.params import MAX_GRID_POINTS
    from sim.designer.sweep import MAX_POINTS
    from sim.designer.tune import MAX_EVALUATIONS
    from sim.escape import model as escape
    from sim.formation import model as formation
    from sim.restraint import model as restraint

    escape_exact = importlib.import_module("sim.escape.exact")
    exact_fast = importlib.import_module("sim.escape.exact_fast")
    restraint_exact = importlib.import_module("sim.restraint.exact")
    n = _n
    return [
        ("escape party", f"1 .. {escape.MAX_PARTY} characters", "`party`"),
        ("escape rounds", f"1 .. {n(escape.MAX_ROUNDS)}", "`run.max_rounds`"),
        ("escape exact analysis", f"1 .. {escape_exact.MAX_PARTY} characters, built-in policies; compiled engine "
         f"(the default): {n(exact_fast.FAST_MAX_STATES)} states and {n(exact_fast.FAST_MAX_BRANCHES)} replays by "
         f"default ({n(exact_fast.FAST_AUTO_MAX_STATES)} and {n(exact_fast.FAST_AUTO_MAX_BRANCHES)} next to a "
         "simulation); reference-driven engine (optimal play, hand-over): state budget "
         f"{n(escape_exact.DEFAULT_MAX_STATES)} by default "
         f"({n(escape_exact.AUTO_MAX_STATES)} next to a simulation), at most {n(MAX_STATES)}, and "
         f"{escape_exact.BRANCHES_PER_STATE} branches per state of the budget (`--max-branches`); refused as soon "
         "as the projected work exceeds either", "`--max-states`, `--max-branches`, "
         "`sim.exact(max_states=, max_branches=)`"),
        ("escape optimal play", f"1 .. {escape_exact.MAX_PARTY} characters, the same budgets (every choice of "
         "every state counts)", "`python -m sim optimal --max-states/--max-branches`"),
        ("restraint rounds", f"1 .. {n(restraint.MAX_ROUNDS)}; party for the composure table 0 .. "
         f"{restraint.MAX_PARTY}", "`run.rounds`, `composure.party`"),
        ("restraint exact analysis", f"at most {n(restraint_exact.MAX_EXACT_STATES)} duel states and "
         f"{n(restraint_exact.MAX_EXACT_WORK)} steps (one duel or composure state meeting one stimulus outcome in "
         "one round), projected over the rounds to come and refused as soon as the projection exceeds it (a few "
         "seconds at most); beside `run` the exact column is skipped with one line saying why",
         "`sim.restraint.exact.MAX_EXACT_WORK`"),
        ("campus turns", f"1 .. {n(campus.MAX_TURNS)}", "`rules.turns`"),
        ("campus party / locations / spawn entries", f"{campus.MAX_PARTY} / {campus.MAX_LOCATIONS} / "
         f"{campus.MAX_SPAWN_SLOTS}", "`party`, `locations`, `spawns`"),
        ("formation units / rounds / checks per session", f"{formation.MAX_UNITS} / {n(formation.MAX_ROUNDS)} / "
         f"{n(formation.MAX_CHECKS)}", "`units`, `skirmish.max_rounds`, `session.checks`"),
        ("sweep grid", f"at most {n(MAX_POINTS)} points in all, {n(MAX_GRID_POINTS)} values per parameter",
         "`sweep --param`"),
        ("tune evaluations", f"at most {MAX_EVALUATIONS}", "`sim.designer.tune.MAX_EVALUATIONS`"),
        ("fit search space", f"{fit.MAX_PARAMS} parameters of at most 1,001 values each; `method = \"exhaustive\"` "
         f"at most {n(fit.MAX_EXHAUSTIVE_EVALUATIONS)} evaluations (feasible points × target scenarios), counted "
         "before any point is built", "`fit.method`, `sim.designer.fit.MAX_EXHAUSTIVE_EVALUATIONS`"),
    ]


def limits_markdown() -> str:
    """The text of ``docs/limits.md``."""
    lines = [
        "# Limits",
        "",
        "<!-- generated by `python -m sim.docs_gen` from sim/limits.py: edit the code, not this file -->",
        "",
        "Every limit is enforced at the one validation boundary (`sim.load_scenario`, the CLI flags) and reported",
        "like any invalid input: one line naming the file and the dotted key, exit status 2, nothing written.",
        "Each is checked before the work it bounds starts (the file's size before it is read, key depth before",
        "the TOML parser runs, dice before exact analysis convolves them), so a refusal takes well under a",
        "second and little memory.",
        "",
        "| what | limit | where |",
        "|---|---|---|",
    ]
    lines += [f"| {what} | {limit} | {where} |" for what, limit, where in limit_rows()]
    lines += [
        "",
        "What a scenario file, an output folder and a local process can and cannot do: [security.md](security.md).",
        "",
        "Memory: the CLI streams chunk by chunk (`sim run`): summaries and reports are built from running sums",
        "and per-run rows are written as one parquet part per chunk, so the peak memory is that of a few chunks",
        "whatever the run count (`bench/memory.py` measures it). The Python API `sim.simulate` returns every",
        "per-run row in memory as a DataFrame; for very large runs use the CLI or `keep_runs=False`.",
        "",
    ]
    return "\n".join(lines)
