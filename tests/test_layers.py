"""The layers of the ``sim`` package (docs/architecture.md, top): an import may go down or stay in its layer, never up,
and the import graph has no cycle, with imports inside functions counted as much as those at the top of a module.

Layers, lowest first::

    0 foundation           errors, dice, stats, labels, palette, frames, result, limits, outputs, batch, report, pages
    1 scenario + contract  scenario loading, the kind registry, the one call into a kind (sim.simulation), scenario
                           values by dotted key, metric names
    2 kinds                sim.<kind> for every registered kind; a kind imports no other kind
    3 run and tools        the pipeline, reports across kinds, the designer tools
    4 entry points         the public API (sim itself), the command line, the studio, the docs generator

An import inside a function is allowed only for an entry point's start-up (the command line, ``import sim``) and
optional extras (the studio), marked ``# lazy: <reason>`` on its line, at most :data:`MAX_LAZY` in the package.

The graph is read with :mod:`ast` from every module under sim/ (nothing is imported): every ``import sim...`` and
``from sim... import ...`` at any depth, ``from sim.pkg import name`` counting as an import of ``sim.pkg.name`` where
that is a module. Cycles are found with :mod:`graphlib` (standard library).
"""

from __future__ import annotations

import ast
import graphlib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "sim"
KIND_PACKAGES = ("sim.escape", "sim.restraint", "sim.campus", "sim.formation")  # checked against sim.kinds.NAMES below

#: (layer name, modules or packages in it); a module belongs to the longest entry that names it or a package above it
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("sim.errors", "sim.version", "sim.numba_cache", "sim.dice", "sim.dice_kernel", "sim.stats",
                    "sim.labels", "sim.palette", "sim.frames", "sim.result", "sim.composure", "sim.store_key",
                    "sim.limits", "sim.outputs", "sim.batch", "sim.report", "sim.report_folder", "sim.pages")),
    ("scenario loading and the kind contract", ("sim.scenario", "sim.kinds", "sim.simulation",
                                                # scenario values by dotted key, and the metric names of a summary:
                                                # what the kinds' designer hooks and every tool read
                                                "sim.designer.params", "sim.designer.metrics",
                                                # the options of play the kinds list for the audit
                                                "sim.designer.audit_options")),
    ("the kinds", KIND_PACKAGES),
    ("pipeline, reports, designer tools", ("sim.pipeline", "sim.exact_report", "sim.designer")),
    # ``sim`` itself is the public Python API (sim.simulate, sim.exact, sim.audit): an entry point like the CLI
    ("CLI, studio, docs generator", ("sim", "sim.cli", "sim.__main__", "sim.studio", "sim.docs_gen")),
)
MAX_LAZY = 25
LAZY_MARK = "# lazy:"

@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module
    line: int
    lazy: bool  # inside a function
    text: str  # the source line


def modules(root: Path = SIM) -> dict[str, Path]:
    """Every module under ``root`` by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str:
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


def _targets(node: ast.AST, known: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [_resolve(a.name, known) for a in node.names if a.name.split(".")[0] == "sim"]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "sim":
        return [_resolve(f"{node.module}.{a.name}", known) for a in node.names]
    return []


def imports(known: dict[str, Path] | None = None) -> list[Import]:
    """Every import of a ``sim`` module by a ``sim`` module, at any depth."""
    known = modules() if known is None else known
    out = []
    for name, path in known.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)

        def visit(node, in_function, name=name, lines=lines):
            for child in ast.iter_child_nodes(node):
                for target in _targets(child, known):
                    out.append(Import(name, target, child.lineno, in_function, lines[child.lineno - 1]))
                visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

        visit(tree, False)
    return out


def layer_of(module: str) -> int | None:
    best, found = -1, None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and len(member) > best:
                best, found = len(member), index
    return found


def upward(found: list[Import]) -> list[str]:
    """The imports from a lower layer into a higher one, and from one kind into another."""
    bad = []
    for imp in found:
        if imp.source == imp.target:
            continue
        low, high = layer_of(imp.source), layer_of(imp.target)
        where = f"{imp.source} (line {imp.line}) imports {imp.target}"
        if low is not None and high is not None and high > low:
            bad.append(f"{where}: up from '{LAYERS[low][0]}' to '{LAYERS[high][0]}'")
        kinds = [next((k for k in KIND_PACKAGES if m == k or m.startswith(k + ".")), None)
                 for m in (imp.source, imp.target)]
        if None not in kinds and kinds[0] != kinds[1]:
            bad.append(f"{where}: one kind imports another")
    return bad


def cycle(found: list[Import]) -> list[str] | None:
    """One cycle of the import graph (function-level imports counted), or None."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        graph.setdefault(imp.source, set())
        if imp.source != imp.target:
            graph[imp.source].add(imp.target)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def lazy_problems(found: list[Import]) -> tuple[list[Import], list[str]]:
    """(the function-level imports, those without a ``# lazy: <reason>`` on their line)."""
    lazy = [imp for imp in found if imp.lazy]
    unexplained = sorted({f"{imp.source} line {imp.line}: {imp.text.strip()}" for imp in lazy
                          if LAZY_MARK not in imp.text or not imp.text.split(LAZY_MARK, 1)[1].strip()})
    return lazy, unexplained


# --------------------------------------------------------------------------------------------
# the tests


@pytest.fixture(scope="module")
def found() -> list[Import]:
    return imports()


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer_of(m) is None] == []


def test_the_kinds_layer_is_every_registered_kind():
    """Every kind registered with a package under sim/ (a kind that lives in tests/ is not part of the package)."""
    from sim import kinds

    assert {f"sim.{name}" for name in kinds.NAMES if (SIM / name).is_dir()} == set(KIND_PACKAGES)


def test_no_import_goes_up_a_layer(found):
    assert upward(found) == [], "\n".join(upward(found))


def test_the_import_graph_has_no_cycle(found):
    assert cycle(found) is None, " -> ".join(cycle(found) or [])


def test_function_level_imports_are_few_and_explained(found):
    lazy, unexplained = lazy_problems(found)
    assert unexplained == [], "function-level imports need '# lazy: <reason>' (CLI start-up, optional extras):\n" + \
        "\n".join(unexplained)
    statements = {(imp.source, imp.line) for imp in lazy}
    assert len(statements) <= MAX_LAZY, sorted(statements)


# -- the checks can fail: a planted upward import and a planted cycle (in a copy of the package's import list)


def test_a_planted_upward_import_is_caught(found):
    planted = Import("sim.errors", "sim.pipeline", 1, False, "from sim.pipeline import run")
    assert any("sim.errors (line 1) imports sim.pipeline" in p for p in upward([*found, planted]))
    sideways = Import("sim.campus.rules", "sim.escape.model", 1, False, "from sim.escape.model import Scenario")
    assert any("one kind imports another" in p for p in upward([*found, sideways]))


def test_a_planted_cycle_is_caught(found):
    planted = Import("sim.stats", "sim.labels", 1, True, "from sim.labels import fixed  # lazy: planted")
    back = Import("sim.labels", "sim.stats", 1, False, "from sim.stats import Z95")
    assert cycle([*found, planted, back]) is not None


def test_a_planted_unexplained_lazy_import_is_caught(found):
    planted = Import("sim.stats", "sim.labels", 9, True, "    from sim.labels import fixed")
    assert any(p.startswith("sim.stats line 9:") for p in lazy_problems([*found, planted])[1])
