"""Mutation testing of module-level rule tables (the part mutmut does not mutate).

mutmut 3 mutates code inside functions only; a rule table such as ``CLASS_DIE`` or ``MARKS`` is
module-level data that it never changes. This script does for those tables what mutmut does for
functions: for every literal of a module-level assignment it writes one mutant of the module into
a scratch copy of the project, runs the given pytest selection there and records whether a test
failed (killed) or not (survived).

Mutations, one per mutant:
- an integer literal ``n`` becomes ``n + 1`` (a d6 becomes a d7, a DC 15 becomes 16);
- a float literal ``x`` becomes ``x + 0.25``;
- a string in a tuple, list or set is removed (``"ranger"`` leaves the escape artists);
- a string that is a dict value or a tuple/list element is replaced by the next different string
  of the same assignment (``"cha"`` becomes ``"int"``, ``"#"`` becomes ``"x"``).

Dict keys, docstrings and ``__all__`` are not mutated (a changed key only raises a KeyError).

Usage: python tools/mutate_tables.py --root SCRATCH_COPY --module sim/composure.py -- PYTEST_ARGS...
Prints one line per surviving mutant and a score line; exits 0.
"""

from __future__ import annotations

import argparse
import ast
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mutant:
    line: int
    start: int  # character offsets into the source text
    end: int
    replacement: str
    description: str


def _offsets(source: str) -> list[int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _span(node: ast.AST, line_starts: list[int]) -> tuple[int, int]:
    # ast column offsets are in UTF-8 bytes; the tables are ASCII, so bytes == characters there
    return line_starts[node.lineno - 1] + node.col_offset, line_starts[node.end_lineno - 1] + node.end_col_offset


def _table_assignments(tree: ast.Module):
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            names = [stmt.target.id]
        else:
            continue
        if names and "__all__" not in names:
            yield names[0], stmt.value


def mutants_of(source: str, only: set[str] | None = None) -> list[Mutant]:
    tree = ast.parse(source)
    line_starts = _offsets(source)
    out: list[Mutant] = []
    for name, value in _table_assignments(tree):
        if only and name not in only:
            continue
        owner: dict[int, str] = {}  # node -> the dict key it belongs to (for readable descriptions)
        for d in ast.walk(value):
            if isinstance(d, ast.Dict):
                for k, v in zip(d.keys, d.values, strict=True):
                    if isinstance(k, ast.Constant):
                        for n in ast.walk(v):
                            owner.setdefault(id(n), repr(k.value))
        strings = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        distinct = list(dict.fromkeys(strings))
        dict_keys = {id(k) for d in ast.walk(value) if isinstance(d, ast.Dict) for k in d.keys if k is not None}
        in_collection: dict[int, ast.AST] = {}
        for node in ast.walk(value):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                for elt in node.elts:
                    in_collection[id(elt)] = node
        for node in ast.walk(value):
            if not isinstance(node, ast.Constant) or id(node) in dict_keys or isinstance(node.value, bool):
                continue
            start, end = _span(node, line_starts)
            where = f"{name}[{owner[id(node)]}]" if id(node) in owner else name
            if isinstance(node.value, int):
                out.append(Mutant(node.lineno, start, end, repr(node.value + 1),
                                  f"{where}: {node.value} -> {node.value + 1}"))
            elif isinstance(node.value, float):
                out.append(Mutant(node.lineno, start, end, repr(node.value + 0.25),
                                  f"{where}: {node.value} -> {node.value + 0.25}"))
            elif isinstance(node.value, str):
                parent = in_collection.get(id(node))
                if parent is not None and len(parent.elts) > 1:
                    # remove the element together with the comma after it (or before it, if last)
                    i = parent.elts.index(node)
                    if i + 1 < len(parent.elts):
                        cut_end = _span(parent.elts[i + 1], line_starts)[0]
                        out.append(Mutant(node.lineno, start, cut_end, "", f"{where}: remove {node.value!r}"))
                    else:
                        cut_start = _span(parent.elts[i - 1], line_starts)[1]
                        out.append(Mutant(node.lineno, cut_start, end, "", f"{where}: remove {node.value!r}"))
                others = [s for s in distinct if s != node.value]
                if others:
                    k = distinct.index(node.value)
                    repl = next(s for s in distinct[k + 1:] + distinct[:k] if s != node.value)
                    out.append(Mutant(node.lineno, start, end, repr(repl),
                                      f"{where}: {node.value!r} -> {repl!r}"))
    return out


def _preload(root: Path) -> None:
    """Import the heavy third-party modules once; forked children then import only the project."""
    sys.path.insert(0, str(root))
    for name in ("numpy", "pandas", "pydantic", "pyarrow", "numba", "matplotlib.pyplot", "hypothesis", "pytest",
                 "sim", "sim.escape", "sim.restraint", "sim.campus", "sim.formation"):
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - an optional module; the child imports what it needs
            pass
    for name in [n for n in sys.modules if n == "sim" or n.startswith("sim.")]:
        del sys.modules[name]  # the children import the project afresh, mutated module included


def _run_forked(root: Path, pytest_args: list[str], timeout: float) -> int:
    """pytest in a forked child (fresh project modules, warm third-party imports); its exit status."""
    pid = os.fork()
    if pid == 0:  # child
        code = 3
        try:
            os.chdir(root)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            import pytest

            code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *pytest_args]))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -1
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, type=Path, help="scratch copy of the project (files are changed)")
    ap.add_argument("--module", required=True, help="module path relative to the root, e.g. sim/composure.py")
    ap.add_argument("--only", default="", help="comma-separated table names to mutate (default: all)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant before it counts as killed")
    ap.add_argument("--subprocess", action="store_true", help="a fresh interpreter per mutant (slower than fork)")
    ap.add_argument("pytest_args", nargs="*", help="pytest selection (after --)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    path = root / args.module
    original = path.read_text(encoding="utf-8")
    mutants = mutants_of(original, {n for n in args.only.split(",") if n} or None)
    # Never let a stale bytecode file stand in for a mutant (same size and mtime second as the last one).
    sys.dont_write_bytecode = True
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    for pyc in (path.parent / "__pycache__").glob(path.stem + ".*.pyc"):
        pyc.unlink()
    use_fork = hasattr(os, "fork") and not args.subprocess
    if use_fork:
        _preload(root)
    killed = survived = 0
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *args.pytest_args]
    try:
        for m in mutants:
            path.write_text(original[:m.start] + m.replacement + original[m.end:], encoding="utf-8")
            if use_fork:
                rc = _run_forked(root, args.pytest_args, args.timeout)
            else:
                try:
                    rc = subprocess.run(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        timeout=args.timeout).returncode
                except subprocess.TimeoutExpired:
                    rc = -1
            if rc == 0:
                survived += 1
                print(f"survived  {args.module}:{m.line}  {m.description}", flush=True)
            else:
                killed += 1
    finally:
        path.write_text(original, encoding="utf-8")
    total = killed + survived
    score = 100.0 * killed / total if total else 100.0
    print(f"tables {args.module}: {killed}/{total} killed ({score:.0f}%), {survived} survived, "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
