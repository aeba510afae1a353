"""Fixtures of the escape tests: ``examples`` is narrowed to the escape examples by name (``examples["<stem>"]``);
``scratch`` and ``cli`` come from tests/conftest.py, the builders from escape_helpers.py."""

from __future__ import annotations

import pytest
from examples import examples_of


@pytest.fixture(scope="session")
def examples():
    return examples_of("escape")
