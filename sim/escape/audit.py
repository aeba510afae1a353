"""The escape kind's part of the balance audit (sim/designer/audit.py, issue 36): its options of play and the
audit's exact evaluation under optimal play.

Options (:data:`sim.escape.actions.OPTIONS`): every action kind but rest (R-ESC-5), each ability a struggle may
use (R-ESC-6), and the resources a check may spend (breath, rage, favoured terrain); the class actions
(channel, inspire, meditate) only under the volume-1 reading (R-ESC-14b). Each is forbidden to the whole party
and, in a party of two or more, to each character in turn. "Without an option" is optimal play over the legal
actions less those :func:`sim.escape.actions.forbids` takes away (:func:`sim.escape.optimal.solve`'s
``forbidden``): the deltas are exact.
"""

from __future__ import annotations

from sim.designer.audit_options import AuditOption
from sim.errors import ExactUnsupported
from sim.escape.actions import OPTIONS, forbids, options_of
from sim.escape.audit_mc import EscapeMonteCarloAudit
from sim.escape.optimal import solve
from sim.escape.params import compile_params
from sim.escape.state import CLASS_ACTIONS


def audit_options(scenario) -> list[AuditOption]:
    """Every option of play of the scenario's party (R-ESC-5, R-ESC-6): the party's, then each character's."""
    p = compile_params(scenario)
    names = [o for o in OPTIONS if p.volume1 or o not in CLASS_ACTIONS]
    out = [AuditOption(o, "party", frozenset({(o, None)})) for o in names]
    if p.n_chars > 1:
        out += [AuditOption(o, p.names[i], frozenset({(o, i)})) for i in range(p.n_chars) for o in names]
    return out


def audit_evaluator(scenario, objective: str | None, max_states: int | None, runs: int | None = None,
                    seed: int | None = None, n_jobs: int = 1):
    """Exact restricted optimal play (:class:`EscapeAudit`) where it fits, else the built-in policy with each option
    removed, on common random numbers (:class:`sim.escape.audit_mc.EscapeMonteCarloAudit`)."""
    try:
        return EscapeAudit(scenario, objective, max_states)
    except ExactUnsupported as exc:  # beyond optimal play today (a bad objective is a ScenarioError: refused)

        return EscapeMonteCarloAudit(scenario, objective, runs, seed, n_jobs, str(exc))


class EscapeAudit:
    """Optimal play with and without each option (exact: backward induction, sim/escape/optimal.py)."""

    method = "exact"
    runs = seed = None

    def __init__(self, scenario, objective: str | None, max_states: int | None):
        self.scenario, self.objective, self.max_states = scenario, objective, max_states
        self.metric = objective or "escape_rate"
        self.params = compile_params(scenario)
        self.sol = solve(self.params, objective, max_states, engine="auto")
        self.baseline = self.sol.value[(0, 1)]
        self._values: dict[frozenset, float] = {frozenset(): self.baseline}
        self._used: dict[frozenset, set] = {frozenset(): _used(self.sol)}  # options some best choice uses
        self.engine = (f"optimal play (backward induction over {self.sol.states:,} states, on the "
                       f"{self.sol.engine} exact engine)")

    def arises(self, o: AuditOption) -> bool:
        """Whether the option is legal in some state optimal play can reach (under some policy)."""
        return any(a is not None and forbids(o.forbid, i, a)
                   for joints in self.sol.choices.values() for joint in joints for i, a in enumerate(joint))

    def _value(self, forbid: frozenset) -> float:
        if forbid not in self._values:
            sol = solve(self.params, self.objective, self.max_states, forbidden=forbid, engine="auto")
            self._values[forbid], self._used[forbid] = sol.value[(0, 1)], _used(sol)
        return self._values[forbid]

    def value_without(self, o: AuditOption) -> tuple[float, float]:
        return self._value(o.forbid), 0.0

    def can_pair(self, a: AuditOption, b: AuditOption) -> bool:
        return a.scope == b.scope  # a party-wide option is replaced by a party-wide one, a character's by its own

    def value_without_both(self, a: AuditOption, b: AuditOption) -> tuple[float, float]:
        for one, other in ((b, a), (a, b)):  # no best choice without one uses the other: that optimal policy is
            v = self._value(one.forbid)  # still there without both, so the value stays (it cannot rise)
            if not _uses(self._used[one.forbid], other.forbid):
                return v, 0.0
        return self._value(a.forbid | b.forbid), 0.0

    def value_of(self, scenario) -> tuple[float, float]:
        return solve(scenario, self.objective, self.max_states, engine="auto").value[(0, 1)], 0.0

    def decided_by(self) -> list[dict]:
        return decided_by(self.sol)


def _uses(used: set, forbid: frozenset) -> bool:
    """Whether a best choice recorded in ``used`` is one ``forbid`` takes away."""
    return any((o, i) in used if i is not None else any(u == o for u, _ in used) for o, i in forbid)


def _used(sol) -> set:
    """(option, character) pairs some best choice of the solved table uses (:func:`sim.escape.actions.options_of`)."""
    return {(o, i) for (sid, _), k in sol.best.items() for i, a in enumerate(sol.choices[sid][k]) if a is not None
            for o in options_of(a)}


def _after(sol, sid: int) -> float:
    """The value of state ``sid`` at the start of round 2 under optimal play (the objective after round 1)."""
    if sol.horizon > 1:
        return sol.value[(sid, 2)]
    return 1.0 if sol.objective == "not_caught" else 0.0


def decided_by(sol) -> list[dict]:
    """The objective under optimal play given each early event and given its complement, exactly: a check failed
    in round 1 (a failure streak after it), round 1's best struggle succeeded (a tier lowered, or out), and the
    attention above half its limit at the start of some round (R-ESC-9a; only with a limit)."""
    start = sol.reps[0]
    succ, esc, _ = sol.trans[(0, sol.best[(0, 1)])]

    def failed(st) -> bool:
        return any(s > 0 for c in st.chars for s in c.streak)

    def lowered(st) -> bool:
        return any(t < t0 for c, c0 in zip(st.chars, start.chars, strict=True)
                   for t, t0 in zip(c.tiers, c0.tiers, strict=True))

    rows = []
    for name, test, escaped_in in (("a check failed in round 1", failed, False),
                                   ("round 1's best struggle succeeded", lowered, True)):
        share = (esc if escaped_in else 0.0) + sum(q for s, q in succ if test(sol.reps[s]))
        given = (esc if escaped_in else 0.0) + sum(q * _after(sol, s) for s, q in succ if test(sol.reps[s]))
        other = (0.0 if escaped_in else esc) + sum(q * _after(sol, s) for s, q in succ if not test(sol.reps[s]))
        rows.append(_row(name, share, given, other))
    if sol.params.attention_limit:
        rows.append(_attention_row(sol))
    return rows


def _row(event: str, share: float, given: float, other: float) -> dict:
    """``given`` and ``other`` are the objective's probability mass with and without the event."""
    return {"event": event, "share": share, "rate_given": given / share if share > 1e-15 else None,
            "rate_otherwise": other / (1.0 - share) if share < 1.0 - 1e-15 else None}


def _attention_row(sol) -> dict:
    """A forward pass under optimal play over (state, attention was above half) pairs."""
    half = sol.params.attention_limit / 2

    def above(sid: int) -> bool:
        return sol.reps[sid].attention > half

    dist = {(0, above(0)): 1.0}
    won = {False: 0.0, True: 0.0}
    flagged = 1.0 if above(0) else 0.0
    for rnd in range(1, sol.horizon + 1):
        nxt: dict[tuple[int, bool], float] = {}
        for (sid, flag), w in dist.items():
            succ, esc, _ = sol.trans[(sid, sol.best[(sid, rnd)])]
            won[flag] += w * esc
            for s2, q in succ:
                f2 = flag or above(s2)
                flagged += w * q if f2 and not flag else 0.0
                nxt[(s2, f2)] = nxt.get((s2, f2), 0.0) + w * q
        dist = nxt
    if sol.objective == "not_caught":  # bound at the end and never caught: not caught
        for (_, flag), w in dist.items():
            won[flag] += w
    return _row("the attention above half its limit", flagged, won[True], won[False])
