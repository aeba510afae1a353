"""The solved decision problem of optimal play (:mod:`sim.escape.optimal`): values, best choices and the transition
table of every reachable (state, round). Both solvers fill it: the reference-driven one in sim/escape/optimal.py and
the compiled one (:class:`sim.escape.optimal_fast.CompiledSolution`, read through the same fields)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sim.escape.params import EscapeParams
from sim.escape.state import PartyState


@dataclass
class Solution:
    """The solved decision problem: values, best choices and the transition table of every reachable
    (state, round)."""

    params: EscapeParams
    objective: str
    horizon: int
    reps: dict[int, PartyState]  # state number -> a state with that key
    layers: list[list[int]]  # layers[r]: the states reachable at the start of round r (1-based; [0] unused)
    choices: dict[int, list[tuple]]  # state number -> its joint choices (by dazedness: same in every round)
    trans: dict[tuple[int, int], tuple[list, float, float]]  # (state, choice) -> (succ [(state, q)], esc, caught)
    value: dict[tuple[int, int], float] = field(default_factory=dict)  # (state, round) -> optimal value
    best: dict[tuple[int, int], int] = field(default_factory=dict)  # (state, round) -> choice index
    ids: dict[tuple, int] = field(default_factory=dict)  # state key -> state number
    states: int = 0
    branches: int = 0
    seconds: float = 0.0
    engine: str = "reference"  # the exact engine whose rounds were played (compiled: ``ids`` is left empty)

    def q(self, sid: int, rnd: int, k: int) -> float:
        """Value of choice ``k`` in state ``sid`` at round ``rnd``, optimal play after it."""
        succ, esc, cau = self.trans[(sid, k)]
        cont = 0.0
        if rnd < self.horizon:
            cont = sum(q * self.value[(s2, rnd + 1)] for s2, q in succ)
        elif self.objective == "not_caught":
            cont = sum(q for _, q in succ)  # neither caught nor escaped by the last round: not caught
        return esc + cont

    def first_choice(self) -> tuple:
        return self.choices[0][self.best[(0, 1)]]
