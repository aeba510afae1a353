"""The scalar references read step by step (STYLE.md practices 6 and 14; issue 23).

Each kind's reference round is a short sequence of named steps, one function per step of the rules (as the
compiled engines are), and the compilation of a scenario into parameters is split into named helpers. This test
keeps it that way: no function of these modules may run past :data:`MAX_LINES` lines (a nested function counts
inside its parent and on its own)."""

from __future__ import annotations

import ast

import pytest
from examples import ROOT

MAX_LINES = 60

#: the four kinds' scalar references and the modules holding their ``compile_params``
MODULES = (
    "sim/escape/reference.py",
    "sim/escape/params.py",
    "sim/campus/reference.py",
    "sim/campus/params.py",
    "sim/formation/reference.py",
    "sim/formation/model.py",
    "sim/restraint/reference.py",
    "sim/restraint/rules.py",
)


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, length in lines) of every function and method of ``source``, nested ones too."""
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_function_lengths_counts_lines():
    """The measure itself: a 3-line function is 3 lines, a nested one counts in both."""
    source = "def outer():\n    def inner():\n        return 1\n    return inner\n"
    assert sorted(function_lengths(source)) == [("inner", 2, 2), ("outer", 1, 4)]


@pytest.mark.parametrize("module", MODULES)
def test_no_function_longer_than_the_limit(module):
    lengths = function_lengths((ROOT / module).read_text(encoding="utf-8"))
    too_long = [f"{name} (line {line}): {n} lines" for name, line, n in lengths if n > MAX_LINES]
    assert not too_long, f"{module}: split into named steps of at most {MAX_LINES} lines: " + "; ".join(too_long)
