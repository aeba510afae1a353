"""Fixtures of the designer-tool tests: every example scenario (``examples["escape/lone_rogue"]``), the scratch
output folder and the CLI runner, all from tests/conftest.py (the designer tools read every kind)."""

from __future__ import annotations

import pytest
from examples import examples_of


@pytest.fixture(scope="session")
def examples():
    return examples_of()
