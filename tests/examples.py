"""``ROOT``, the project folder (the one definition every test imports), and the example scenario files the tests
iterate over: every TOML file under scenarios/ that is a scenario (scenarios/fit/ladder.toml is a fit file, tested by
tests/designer/test_designer_fit.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def is_scenario(path: Path) -> bool:
    return "fit" not in tomllib.loads(path.read_text(encoding="utf-8"))


def example_scenarios(recursive: bool = False) -> list[Path]:
    found = (ROOT / "scenarios").rglob("*.toml") if recursive else (ROOT / "scenarios").glob("*/*.toml")
    return sorted(p for p in found if is_scenario(p))


def examples_of(kind: str | None = None) -> dict[str, Path]:
    """Example scenarios by name: ``kind/stem`` for every kind, or ``stem`` within one kind (the ``examples`` fixture
    of tests/conftest.py and of each kind's folder)."""
    found = {p.relative_to(ROOT / "scenarios").with_suffix("").as_posix(): p for p in example_scenarios()}
    if kind is None:
        return found
    return {name.split("/", 1)[1]: p for name, p in found.items() if name.startswith(f"{kind}/")}
