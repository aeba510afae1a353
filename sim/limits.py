"""Limits against resource bombs and hostile strings, checked at the validation boundary (issue 28).

Everything here is checked before the work it bounds starts: the file's size before it is read, the depth of
its dotted keys before the TOML parser sees it, list lengths and control characters before the model
validates, ``--jobs`` and ``--max-states`` before anything runs, the dice of an expression before exact
analysis convolves them. Each refusal is one line (exit status 2). ``docs/limits.md`` is generated from these
numbers and each kind's own (``sim/<kind>/limits.py``) by ``python -m sim.docs_gen``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from typing import Any

from sim.batch import MAX_RUNS
from sim.errors import ExactUnsupported, ScenarioError, SimError

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
    if runs is not None and runs > MAX_RUNS:
        raise SimError(f"{flag}: expected at most {MAX_RUNS:,}, got {runs:,}")


def bounded_folder_name(name: str, max_bytes: int = MAX_FOLDER_NAME_BYTES) -> str:
    """``name`` as a folder name of at most ``max_bytes`` UTF-8 bytes: unchanged when it fits, else cut at a
    character boundary and followed by ``-`` and 8 hex digits of the full name's sha256 (two long names that
    share their start still get two folders)."""
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


def key_part(part: Any) -> str:
    """One part of a dotted key as the one-line errors show it (quoted where it is not a plain name)."""
    text = str(part)
    return text if text and all(ch.isalnum() or ch in "_-" for ch in text) else json.dumps(text)


def _key_text(path: tuple) -> str:
    return ".".join(key_part(p) for p in path) or "(top level)"


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
    faces = sum(t.count * t.sides for t in expr.dice)
    if faces > MAX_EXACT_DICE_FACES:
        where = f"{key}: " if key else ""
        raise ExactUnsupported(f"{where}{expr.text!r} has {faces:,} faces in all (count x sides); exact analysis "
                               f"takes at most {MAX_EXACT_DICE_FACES:,} per expression; use Monte Carlo "
                               "(python -m sim run)")
