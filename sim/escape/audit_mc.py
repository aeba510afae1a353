"""The escape audit where optimal play does not fit (more than four characters, or beyond the exact budget):
the scenario's built-in policy with each option removed from its choices, simulated on the scalar reference
with common random numbers (sim/designer/audit.py, issue 36).

"Removed from its choices": the policy declares as usual; a declaration that uses a forbidden option is replaced
by the nearest allowed one (:func:`substitute`): the same struggle without the forbidden resource (breath, rage,
terrain), else the allowed struggle with the best success chance (R-ESC-31's measure), else the first allowed
of untie, use_item, assist, guide, search, else rest. An option the policy never declares in the baseline runs
cannot be told from one that never arises: it is listed apart ("never declared by the policy").
Only the party-wide options are audited this way (each costs a simulation of every run).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from sim.batch import map_chunks
from sim.designer.audit import conditioned
from sim.errors import ExactUnsupported
from sim.escape import kernel as K
from sim.escape.actions import forbids, legal_actions
from sim.escape.columns import allocate, copy_into
from sim.escape.greedy import declared_numerator
from sim.escape.model import BUILTIN_POLICIES
from sim.escape.optimal import parse_objective
from sim.escape.params import compile_params
from sim.escape.policy import load_policy
from sim.escape.simulate import reference_chunk
from sim.escape.state import REST

FALLBACK_KINDS = ("untie", "use_item", "assist", "guide", "search")


def substitute(view, i: int, a, forbidden):
    """The allowed declaration nearest to ``a`` for character ``i`` (see the module docstring)."""
    p, st = view.params, view.state
    legal = legal_actions(p, st, i, view.round, forbidden)
    stripped = replace(a, breath=False, rage=False, terrain=False)
    if stripped in legal:
        return stripped
    struggles = [b for b in legal if b.kind == "struggle"]
    if struggles:
        return max(struggles, key=lambda b: (declared_numerator(p, i, st.chars[i], b), -b.slot, -b.ability))
    for kind in FALLBACK_KINDS:
        for b in legal:
            if b.kind == kind:
                return b
    return REST


def restricted_policy(base, forbidden, counter: list[int]):
    """``base`` with every forbidden declaration replaced (:func:`substitute`); ``counter[0]`` counts them."""

    def policy(view):
        chosen = list(base(view))
        for i, a in enumerate(chosen):
            if a is not None and forbids(forbidden, i, a):
                chosen[i] = substitute(view, i, a, forbidden)
                counter[0] += 1
        return chosen

    return policy


def _task(params, n, rng):
    p, name, forbidden = params
    counter = [0]
    cols = reference_chunk(p, n, rng, restricted_policy(load_policy(name), forbidden, counter), validate=True)
    return cols, counter[0]


class EscapeMonteCarloAudit:
    """Built-in policy with and without each party-wide option, on common random numbers (paired SE)."""

    method = "monte_carlo"

    def __init__(self, scenario, objective: str | None, runs: int | None, seed: int | None, n_jobs: int, why: str):
        self.scenario, self.params = scenario, compile_params(scenario)
        self.metric = objective or "escape_rate"
        self._kind, self._horizon = parse_objective(objective, self.params.max_rounds)
        if self.params.policy not in BUILTIN_POLICIES:
            raise ExactUnsupported(f"the escape audit plays optimally and cannot here ({why}); its Monte Carlo "
                                   f"fallback restricts a built-in policy, not {self.params.policy!r}")
        # the flags, else the scenario's [run] (as sim.designer.evaluate.resolve_runs_seed)
        self.runs = int(scenario.run.runs if runs is None else runs)
        self.seed = int(scenario.run.seed if seed is None else seed)
        self.n_jobs = n_jobs
        self.engine = (f"Monte Carlo of the {self.params.policy} policy with each option removed, scalar reference "
                       f"(optimal play does not fit: {why})")
        self._cache: dict = {}
        self._base, self._first, self._declared = self._simulate(self.params, frozenset())
        self.baseline = float(self._base.mean())

    def _simulate(self, p, forbidden: frozenset):
        key = (id(p), forbidden)
        if key not in self._cache:
            cols, used = allocate(p, self.runs), 0
            for chunk, (part, n) in map_chunks(_task, (p, p.policy, forbidden), self.runs, self.seed, self.n_jobs):
                copy_into(cols, part, chunk.start)
                used += n
            outcome, rounds = cols["outcome"], cols["rounds"]
            if self._kind == "not_caught":
                won = outcome != K.CAUGHT
            else:
                won = (outcome == K.ESCAPED) & (rounds <= self._horizon)
            self._cache[key] = (won.astype(float), np.asarray(cols["first_round"]), used)
        return self._cache[key]

    def audits(self, o) -> bool:
        return o.scope == "party"

    def arises(self, o) -> bool:
        """Declared by the policy in some baseline run (a restricted run then replaces at least one declaration)."""
        return self._simulate(self.params, o.forbid)[2] > 0

    def _paired(self, forbidden: frozenset) -> tuple[float, float]:
        won = self._simulate(self.params, forbidden)[0]
        diff = self._base - won
        return float(won.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))

    def value_without(self, o) -> tuple[float, float]:
        return self._paired(o.forbid)

    def can_pair(self, a, b) -> bool:
        return a.scope == b.scope == "party"

    def value_without_both(self, a, b) -> tuple[float, float]:
        return self._paired(a.forbid | b.forbid)

    def value_of(self, scenario) -> tuple[float, float]:
        p = compile_params(scenario)
        won = self._simulate(p, frozenset())[0]
        self._cache.setdefault(("keep", id(p)), p)  # keeps p alive: its id stays its cache key
        return float(won.mean()), float(won.std(ddof=1) / math.sqrt(len(won)))

    def decided_by(self) -> list[dict]:
        """Round 1 from the per-run code of sim/escape/columns.py (``first_round``: no check, checks without a
        success, a success)."""
        return conditioned(self._base, {"a check failed in round 1 (none succeeded)": self._first == 1,
                                        "a check succeeded in round 1": self._first == 2})
