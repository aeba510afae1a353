"""Exact analysis of single-character escape scenarios under `greedy` (forward dynamic programming
over the distribution of states).

The round function is the scalar reference itself: a branching source answers each random event
(a check, a search, a dice roll, an item draw) with every outcome and its exact probability, and
equal states are merged after every round. So exact answers and simulated ones come from the
same rules text, and the only approximation is floating-point addition.
"""

from __future__ import annotations

from sim.dice import CHECK_DENOMINATOR, DiceExpr, check_numerator
from sim.errors import ExactUnsupported
from sim.escape.model import Scenario
from sim.escape.params import EscapeParams, compile_params
from sim.escape.policy import greedy
from sim.escape.reference import play_round
from sim.escape.state import PartyState, initial_state
from sim.result import provenance

MAX_STATES = 2_000_000


class _Branch(Exception):
    pass


class BranchSource:
    """Replays a fixed prefix of outcome choices; beyond it takes the first outcome and records
    the alternatives for later replays."""

    def __init__(self, params: EscapeParams, prefix: tuple[int, ...]):
        self.p = params
        self.prefix = prefix
        self.path: list[int] = []
        self.prob = 1.0
        self.pending: list[tuple[int, ...]] = []

    def _choose(self, outcomes: list[tuple[object, float]]):
        outcomes = [(v, q) for v, q in outcomes if q > 0]
        pos = len(self.path)
        if pos < len(self.prefix):
            k = self.prefix[pos]
        else:
            k = 0
            base = tuple(self.path)
            self.pending.extend(base + (j,) for j in range(1, len(outcomes)))
        self.path.append(k)
        value, q = outcomes[k]
        self.prob *= q
        return value

    @staticmethod
    def _bernoulli(num: int) -> list[tuple[object, float]]:
        q = num / CHECK_DENOMINATOR
        return [(True, q), (False, 1.0 - q)]

    def check(self, i, net, need, blessed, breath) -> bool:
        return self._choose(self._bernoulli(check_numerator(net, need, blessed, breath)))

    def search(self, i, need) -> bool:
        return self._choose(self._bernoulli(check_numerator(0, need)))

    def save(self, i, need) -> bool:
        return self._choose(self._bernoulli(check_numerator(0, need)))

    def focus(self, i) -> int:
        return self._choose([(f, 1 / 8) for f in range(1, 9)])

    def item(self, i, weights) -> int:
        total = float(weights.sum())
        return self._choose([(k, float(w) / total) for k, w in enumerate(weights)])

    def roll(self, i, field: str, expr: DiceExpr) -> int:
        return self._choose(list(_distribution(expr, self.p.modifiers[i]).items()))


_DIST_CACHE: dict = {}


def _distribution(expr: DiceExpr, mods: dict) -> dict[int, float]:
    key = (expr, tuple(sorted(mods.items())))
    if key not in _DIST_CACHE:
        _DIST_CACHE[key] = expr.distribution(mods)
    return _DIST_CACHE[key]


def supports_exact(scenario: Scenario) -> bool:
    return len(scenario.party) == 1 and scenario.policy.name == "greedy"


def step_distribution(p: EscapeParams, st: PartyState) -> list[tuple[PartyState, float]]:
    """Every outcome of one round from ``st`` with its probability."""
    out = []
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        src = BranchSource(p, prefix)
        nxt = st.copy()
        play_round(p, nxt, greedy, src)
        out.append((nxt, src.prob))
        stack.extend(src.pending)
    return out


def exact(scenario: Scenario) -> dict:
    """Exact `escape_rate`, `escape_by_round`, `mean_rounds`, `caught_rate`, `timeout_rate`."""
    if len(scenario.party) != 1:
        raise ExactUnsupported("exact analysis supports one character; this party has "
                               f"{len(scenario.party)} (use simulate)")
    if scenario.policy.name != "greedy":
        raise ExactUnsupported(f"exact analysis uses the greedy policy; this scenario uses {scenario.policy.name!r}")
    p = compile_params(scenario)
    dist: dict[tuple, tuple[PartyState, float]] = {}
    start = initial_state(p)
    dist[start.key()] = (start, 1.0)
    escaped_at = [0.0] * (p.max_rounds + 1)
    caught = timeout = 0.0
    for rnd in range(1, p.max_rounds + 1):
        nxt: dict[tuple, tuple[PartyState, float]] = {}
        for st, q in dist.values():
            for s2, q2 in step_distribution(p, st):
                w = q * q2
                if s2.outcome == "escaped":
                    escaped_at[rnd] += w
                elif s2.outcome == "caught":
                    caught += w
                elif s2.outcome == "timeout":
                    timeout += w
                else:
                    k = s2.key()
                    if k in nxt:
                        nxt[k] = (nxt[k][0], nxt[k][1] + w)
                    else:
                        nxt[k] = (s2, w)
        if len(nxt) > MAX_STATES:
            raise ExactUnsupported(f"exact analysis exceeded {MAX_STATES} states in round {rnd}")
        dist = nxt
        if not dist:
            break
    escape_rate = sum(escaped_at)
    by_round = []
    acc = 0.0
    for rnd in range(1, p.max_rounds + 1):
        acc += escaped_at[rnd]
        by_round.append(acc)
    mean_rounds = (sum(r * q for r, q in enumerate(escaped_at)) / escape_rate) if escape_rate > 0 else None
    summary = {
        "kind": "escape",
        "name": scenario.name,
        "runs": None,
        "seed": None,
        "policy": "greedy",
        "escape_rate": escape_rate,
        "escape_rate_ci": [escape_rate, escape_rate],
        "caught_rate": caught,
        "timeout_rate": timeout,
        "mean_rounds": mean_rounds,
        "escape_by_round": by_round,
        "exact": True,
    }
    summary.update({k: v for k, v in provenance(scenario, None, None).items() if k not in ("seed", "runs")})
    return summary
