"""The example scenario files the tests iterate over: every TOML file under scenarios/ that is a scenario
(scenarios/fit/ladder.toml is a fit file, tested by tests/designer/test_designer_fit.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def is_scenario(path: Path) -> bool:
    return "fit" not in tomllib.loads(path.read_text(encoding="utf-8"))


def example_scenarios(recursive: bool = False) -> list[Path]:
    found = (ROOT / "scenarios").rglob("*.toml") if recursive else (ROOT / "scenarios").glob("*/*.toml")
    return sorted(p for p in found if is_scenario(p))
