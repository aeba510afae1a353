"""Exact answers stay what they were before the party speed-ups of issue 25 (to 1e-12): every escape
example scenario and a set of small parties, under every built-in policy. The pinned numbers
(tests/escape/data/exact_baseline.json) came from the engine before any change (tests/escape/exact_cases.py);
a case that engine refused is not compared."""

from __future__ import annotations

import json

import pytest
from exact_cases import BASELINE, KEYS, POLICIES, all_cases, with_policy

import sim

PINNED = json.loads(BASELINE.read_text())
CASES = all_cases()


@pytest.mark.parametrize("key", sorted(k for k, v in PINNED.items() if v is not None))
def test_exact_equals_the_pinned_answer(key):
    name, policy = key.rsplit("/", 1)
    assert policy in POLICIES
    e = sim.exact(with_policy(CASES[name], policy))
    want = PINNED[key]
    for k in KEYS:
        if k == "escape_by_round":
            assert e[k] == pytest.approx(want[k], abs=1e-12, rel=0), k
        elif want[k] is None:
            assert e[k] is None
        else:
            assert e[k] == pytest.approx(want[k], abs=1e-12, rel=0), k
