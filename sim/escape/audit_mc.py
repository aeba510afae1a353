"""The escape audit where optimal play does not fit (more than four characters, or beyond the exact budget):
the scenario's built-in policy with each option removed from its choices, simulated on the scalar reference
with common random numbers (sim/designer/audit.py, issue 36).

"Removed from its choices" is the policy re-planned without the option (docs/decisions.md "Restricted play of
a built-in policy"): the restricted play runs the policy on parameters whose ``forbidden`` set
(:attr:`sim.escape.params.EscapeParams.forbidden`) makes :func:`sim.escape.actions.action_problem` - the one
source of legal actions - refuse every declaration :func:`sim.escape.actions.forbids` takes away, so the policy
asks its own legality questions and takes its own next choice in its own order (greedy: the next step of
R-ESC-20; a struggle: the best allowed pair, without a forbidden spend). The runs are validated
(``check_action``): a forbidden declaration would stop them with a PolicyError. Only the scalar reference plays
restricted (the batch kernel's policies have no forbidden set; this path does not use the kernel).

An option is audited when the policy declares it in some baseline run (else it "never arises" under the policy:
forbidding it changes no run). Party-wide options always; each character's options too where the party is at
most :data:`PER_CHARACTER_MAX` characters, or when named (each costs a simulation of every run).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from sim.batch import map_chunks
from sim.designer.audit_options import conditioned
from sim.errors import ExactUnsupported
from sim.escape import kernel as K
from sim.escape.actions import options_of
from sim.escape.columns import allocate, copy_into
from sim.escape.model import BUILTIN_POLICIES
from sim.escape.optimal import parse_objective
from sim.escape.params import compile_params
from sim.escape.policy import load_policy
from sim.escape.simulate import reference_chunk

#: the per-character options are audited on this path up to this party size (measured, 300-500 runs: 1.6 times the
#: party-wide audit's CPU with three characters, 3.3 with four, 4.3 with five); above it, only when named (--option)
PER_CHARACTER_MAX = 3


def recording_policy(base, used: set):
    """``base``, recording each (option, character) its declarations use (:func:`sim.escape.actions.options_of`)."""

    def policy(view):
        chosen = list(base(view))
        for i, a in enumerate(chosen):
            if a is not None:
                used.update((o, i) for o in options_of(a))
        return chosen

    return policy


def _task(params, n, rng):
    p, name = params
    used: set = set()
    cols = reference_chunk(p, n, rng, recording_policy(load_policy(name), used), validate=True)
    return cols, used


def _hits(forbid: frozenset, used: set) -> bool:
    """Whether some declaration recorded in ``used`` is one ``forbid`` takes away."""
    return any((o, i) in used if i is not None else any(u == o for u, _ in used) for o, i in forbid)


class EscapeMonteCarloAudit:
    """Built-in policy with and without each option, re-planned (module docstring), on common random numbers
    (paired SE)."""

    method = "monte_carlo"
    #: an option the policy never declares is still a candidate replacement of a dead one (Ann's dex when greedy
    #: ties to her str): without it every run is the baseline's, so a pair costs one simulation
    pairs_unused = True

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
        self.per_character = self.params.n_chars <= PER_CHARACTER_MAX
        self.engine = (f"Monte Carlo of the {self.params.policy} policy re-planned without each option, scalar "
                       f"reference (optimal play does not fit: {why})")
        self._cache: dict = {}
        self._base, self._first, self._used = self._simulate(self.params, frozenset())
        self.baseline = float(self._base.mean())

    def _simulate(self, p, forbidden: frozenset):
        """(won per run, first-round code per run, options declared) of the policy on ``p`` less ``forbidden``."""
        key = (id(p), forbidden)
        if key not in self._cache:
            restricted = replace(p, forbidden=frozenset(forbidden))
            cols, used = allocate(p, self.runs), set()
            for chunk, (part, u) in map_chunks(_task, (restricted, p.policy), self.runs, self.seed, self.n_jobs):
                copy_into(cols, part, chunk.start)
                used |= u
            outcome, rounds = cols["outcome"], cols["rounds"]
            if self._kind == "not_caught":
                won = outcome != K.CAUGHT
            else:
                won = (outcome == K.ESCAPED) & (rounds <= self._horizon)
            self._cache[key] = (won.astype(float), np.asarray(cols["first_round"]), used)
        return self._cache[key]

    def audits(self, o) -> bool:
        return o.scope == "party" or self.per_character

    def arises(self, o) -> bool:
        """Declared by the policy in some baseline run (else forbidding it changes no run)."""
        return _hits(o.forbid, self._used)

    def _paired(self, forbidden: frozenset) -> tuple[float, float]:
        if not _hits(forbidden, self._used):  # the policy never declares it: every run is the baseline's
            return self.baseline, 0.0
        won = self._simulate(self.params, forbidden)[0]
        diff = self._base - won
        return float(won.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))

    def value_without(self, o) -> tuple[float, float]:
        return self._paired(o.forbid)

    def can_pair(self, a, b) -> bool:
        return a.scope == b.scope  # a party-wide option is replaced by a party-wide one, a character's by its own

    def _used_without(self, forbid: frozenset) -> set:
        """The options declared in the runs without ``forbid`` (the baseline's when the policy never declares it)."""
        return self._simulate(self.params, forbid)[2] if _hits(forbid, self._used) else self._used

    def value_without_both(self, a, b) -> tuple[float, float]:
        """The policy is deterministic given the state and the dice: without b, a policy that never declares a
        plays every run as without b alone, and likewise with a and b swapped: that value, without a simulation."""
        if not _hits(a.forbid, self._used_without(b.forbid)):
            return self._paired(b.forbid)
        if not _hits(b.forbid, self._used_without(a.forbid)):
            return self._paired(a.forbid)
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
