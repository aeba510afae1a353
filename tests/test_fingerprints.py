"""Every example scenario gives the per-run results stored in tests/data/fingerprints.json (same seed and runs).

A behaviour-preserving change (a refactor, a faster engine) must keep every fingerprint; a rule revision behind a
switch must keep them under the switch's earlier reading (``EARLIER_READING`` in tests/fingerprint_tool.py)."""

from __future__ import annotations

import json

import pytest
from examples import example_scenarios
from fingerprint_tool import STORE, fingerprint, key

STORED = json.loads(STORE.read_text())


def test_every_example_has_a_fingerprint():
    assert sorted(STORED["fingerprints"]) == sorted(key(p) for p in example_scenarios())


@pytest.mark.parametrize("path", example_scenarios(), ids=key)
def test_per_run_results_unchanged(path):
    assert fingerprint(path, STORED["runs"], STORED["seed"]) == STORED["fingerprints"][key(path)]
