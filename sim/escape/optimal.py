"""Optimal play of an escape scenario: the best value any policy can reach, over every legal action choice
(R-ESC-5, R-ESC-6), as a finite-horizon decision problem solved by backward induction over the reachable
states.

The rounds are the scalar reference's (:func:`sim.escape.reference.play_round`), driven by the exact
engine's branching source (:func:`sim.escape.exact.transitions`) with a fixed declaration per state and
choice: no rule is restated here. The legal choices come from :mod:`sim.escape.actions` (the R-ESC-6 policy
check). A forward pass finds every state reachable under some policy in each round and, per state, the
outcome distribution of every joint choice (memoized across rounds, as in the exact engine); the backward
pass takes the best choice of each (state, round) from the last round to the first.

Objectives (``objective``): ``escape_rate`` (default: escaped by the last round), ``escape_by_round@K``
(escaped by the end of round K) and ``not_caught`` (escaped or timed out, never caught).
"""

from __future__ import annotations

import re
import time

from sim.errors import ExactUnsupported, ScenarioError
from sim.escape.actions import canonical, describe, joint_actions
from sim.escape.exact_fast import Uncovered
from sim.escape.model import BUILTIN_POLICIES, SLOTS, TIER_IDS, Scenario
from sim.escape.optimal_fast import CompiledForward, budgets
from sim.escape.params import EscapeParams, compile_params
from sim.escape.policy import PolicyView, load_policy
from sim.escape.solution import Solution
from sim.escape.state import REST, PartyState, initial_state
from sim.labels import fixed
from sim.report import answer, atomic_write_text, section, summary_json, table, write_html
from sim.result import provenance

OBJECTIVES = ("escape_rate", "escape_by_round@K", "not_caught")
#: optimal play plays every legal choice of a state: its default branch budget is this many times the exact
#: engine's (a level-3 monk with breath and meditation has about 14 choices a state; docs/exact.md)
OPTIMAL_BRANCH_FACTOR = 2


def _engine():
    import importlib

    return importlib.import_module("sim.escape.exact")


def parse_objective(objective: str | None, max_rounds: int) -> tuple[str, int]:
    """(kind, horizon) of an objective name; a bad name raises :class:`ScenarioError` (one line)."""
    name = objective or "escape_rate"
    if name == "escape_rate":
        return "escape", max_rounds
    if name == "not_caught":
        return "not_caught", max_rounds
    if name.startswith("escape_by_round@"):
        k = name.partition("@")[2]
        if k.isdigit() and 1 <= int(k) <= max_rounds:
            return "escape", int(k)
        raise ScenarioError(f"objective {name!r}: K must be a round from 1 to {max_rounds}", key="objective")
    raise ScenarioError(f"objective {name!r}: expected one of escape_rate, escape_by_round@K, not_caught",
                        key="objective")


def objective_value(summary: dict, objective: str | None) -> float:
    """The objective read from an exact summary (any policy)."""
    name = objective or "escape_rate"
    if name == "not_caught":
        return 1.0 - summary["caught_rate"]
    if name.startswith("escape_by_round@"):
        return summary["escape_by_round"][int(name.partition("@")[2]) - 1]
    return summary["escape_rate"]


def _dazed(st: PartyState) -> tuple[bool, ...]:
    return tuple(c.dazed_left > 0 for c in st.chars)


def solve(scenario: Scenario | EscapeParams, objective: str | None = None, max_states: int | None = None,
          max_branches: int | None = None, forbidden=None, engine: str = "reference") -> Solution:
    """Solve ``scenario`` (or its compiled parameters) for ``objective`` by backward induction over the
    reachable states. ``forbidden`` (pairs ``(option, character index or None)``, :func:`sim.escape.actions.forbids`)
    takes options of play away: restricted play, for the balance audit.

    The budgets are the exact engine's: ``max_states`` distinct states, ``max_branches`` rounds played
    on the branching source (every choice of every state counts; default :data:`OPTIMAL_BRANCH_FACTOR` times
    the exact engine's); beyond them
    :class:`~sim.escape.exact.ExactBudgetExceeded`."""
    ex = _engine()
    raw = scenario if isinstance(scenario, EscapeParams) else compile_params(scenario)
    p = ex.fast_params(raw)
    if p.n_chars > ex.MAX_PARTY:
        raise ExactUnsupported(f"optimal play supports parties of 1 to {ex.MAX_PARTY} characters; this party "
                               f"has {p.n_chars}")
    started = time.perf_counter()
    kind, horizon = parse_objective(objective, p.max_rounds)
    if engine != "reference":
        sol = _solve_compiled(ex, raw, kind, horizon, max_states, max_branches, started, engine == "compiled",
                              frozenset(forbidden or ()))
        if sol is not None:
            return sol
    budget = ex.DEFAULT_MAX_STATES if max_states is None else int(max_states)
    branch_budget = (OPTIMAL_BRANCH_FACTOR * ex.BRANCHES_PER_STATE * budget if max_branches is None
                     else int(max_branches))
    fwd = _Forward(ex, p, started, budget, branch_budget, frozenset(forbidden or ()))
    for rnd in range(1, horizon + 1):
        fwd.round(rnd, rnd < horizon)
    sol = Solution(p, kind, horizon, fwd.reps, fwd.layers, fwd.choices, fwd.trans, ids=fwd.ids,
                   states=len(fwd.choices), branches=fwd.counter[0])
    _backward(sol)
    sol.seconds = time.perf_counter() - started
    return sol


def _solve_compiled(ex, p: EscapeParams, kind: str, horizon: int, max_states, max_branches,  # noqa: PLR0913
                    started: float, only: bool, forbidden: frozenset = frozenset()) -> Solution | None:
    """:func:`solve` with the rounds played by the compiled engine (:mod:`sim.escape.optimal_fast`); None where
    it does not cover the scenario (with ``only``, a refusal). Its budgets default to its own
    (:func:`sim.escape.optimal_fast.budgets`)."""
    budget, branch_budget = budgets(max_states, max_branches, isinstance(max_states, ex.AutoBudget))

    def refuse(rnd, binds, states, branches, projected, eta):
        exc = ex.ExactBudgetExceeded(states, rnd, budget, branches, binds=binds, max_branches=branch_budget,
                                     seconds=time.perf_counter() - started, projected_seconds=eta,
                                     projected=projected)
        exc.played = fwd.branches
        return exc

    try:
        fwd = CompiledForward(p, started, budget, branch_budget, refuse, forbidden)
        for rnd in range(1, horizon + 1):
            fwd.round(rnd, rnd < horizon)
    except Uncovered as exc:
        if only:
            raise ExactUnsupported(f"the compiled exact engine does not cover this scenario: {exc}") from None
        return None
    sol = fwd.solution(kind, horizon)
    sol.seconds = time.perf_counter() - started
    return sol


class _Forward:
    """The forward pass of :func:`solve`: every state reachable under some policy in each round and, per state,
    the outcome of every joint choice (:func:`sim.escape.exact.transitions` with that choice fixed), within the
    exact engine's budgets (projected as in :func:`sim.escape.exact.exact`)."""

    def __init__(self, ex, p: EscapeParams, started: float, budget: int, branch_budget: int,
                 forbidden: frozenset = frozenset()):
        self.ex, self.p, self.started, self.budget, self.branch_budget = ex, p, started, budget, branch_budget
        self.forbidden = forbidden
        self.counter = [0, branch_budget]
        self.rolls: dict = {}
        start = initial_state(p)
        self.ids = {ex.state_key(start, p): 0}
        self.reps = {0: start}
        self.choices: dict[int, list[tuple]] = {}
        self.trans: dict[tuple[int, int], tuple[list, float, float]] = {}
        self.layers: list[list[int]] = [[], [0]]
        self.per_state = None  # branches per expanded state (every choice), measured

    def refuse(self, rnd: int, binds: str, states: int, branches: int, projected: bool) -> Exception:
        counter = self.counter
        spent = time.perf_counter() - self.started
        eta = spent / counter[0] * max(0, branches - counter[0]) if projected and counter[0] else None
        exc = self.ex.ExactBudgetExceeded(states, rnd, self.budget, branches, binds=binds,
                                          max_branches=self.branch_budget, seconds=spent, projected_seconds=eta,
                                          projected=projected)
        exc.played = counter[0]
        return exc

    def _over(self, branches: float) -> bool:
        return branches > self.ex.PROJECTION_MARGIN * self.branch_budget

    def round(self, rnd: int, more: bool) -> None:
        """Expand the states of ``layers[rnd]`` not expanded yet; the next layer (when ``more`` rounds follow)
        holds every state any of their choices reaches."""
        choices, counter, per_state = self.choices, self.counter, self.per_state
        reached: dict[int, None] = {}
        todo = sum(1 for sid in self.layers[rnd] if sid not in choices)  # known before the round is expanded
        if len(choices) + todo > self.budget:
            raise self.refuse(rnd, "states", len(choices) + todo, int(counter[0] + todo * (per_state or 0)), True)
        if per_state is not None and self._over(counter[0] + todo * per_state):
            raise self.refuse(rnd, "branches", len(choices) + todo, int(counter[0] + todo * per_state), True)
        done, round_start = 0, counter[0]
        for sid in self.layers[rnd]:
            if sid not in choices:
                self._expand(sid, rnd)
                done += 1
                measured = (counter[0] - round_start) / done
                left = todo - done
                if (done >= 3 or per_state is None) and left and self._over(counter[0] + left * measured):
                    raise self.refuse(rnd, "branches", len(choices) + left, int(counter[0] + left * measured), True)
            if more:
                for k in range(len(choices[sid])):
                    for sid2, _ in self.trans[(sid, k)][0]:
                        reached[sid2] = None
        if done:
            self.per_state = min((counter[0] - round_start) / done, counter[0] / len(choices))
        self.layers.append(list(reached))

    def _expand(self, sid: int, rnd: int) -> None:
        """The legal joint choices of state ``sid`` in round ``rnd`` (R-ESC-6) and the outcome of each."""
        ex, counter = self.ex, self.counter
        st = ex._at_round(self.reps[sid], rnd - 1)
        opts = joint_actions(self.p, st, rnd, _dazed(st), self.forbidden)
        self.choices[sid] = opts
        state_start = counter[0]
        for k, joint in enumerate(opts):
            if k:  # the rest of this state's choices, projected from its first ones
                rest = counter[0] + (len(opts) - k) * (counter[0] - state_start) / k
                if self._over(rest):
                    raise self.refuse(rnd, "branches", len(self.choices), int(rest), True)

            def fixed(view, joint=joint):
                return list(joint)

            try:
                succ, esc, cau = ex.transitions(self.p, st, fixed, self.rolls, counter)
            except ex._Branches:
                raise self.refuse(rnd, "branches", len(self.choices), counter[0], False) from None
            rows = []
            for k2, s2, q2 in succ:
                sid2 = self.ids.get(k2)
                if sid2 is None:
                    sid2 = self.ids[k2] = len(self.ids)
                    self.reps[sid2] = ex.realize(s2)
                rows.append((sid2, q2))
            self.trans[(sid, k)] = (rows, esc, cau)


def _backward(sol: Solution) -> None:
    """Backward induction: the value and best choice of every (state, round), last round first."""
    for rnd in range(sol.horizon, 0, -1):
        for sid in sol.layers[rnd]:
            best_k, best_v = 0, -1.0
            for k in range(len(sol.choices[sid])):
                v = sol.q(sid, rnd, k)
                if v > best_v + 1e-12:  # ties: the earlier choice
                    best_k, best_v = k, v
            sol.value[(sid, rnd)] = best_v
            sol.best[(sid, rnd)] = best_k


def play_summary(sol: Solution) -> dict:
    """escape_rate, escape_by_round, caught_rate, timeout_rate and mean_rounds of the optimal table (a
    forward pass with the best choice of each state and round). Under ``escape_by_round@K`` the pass
    stops at round K: ``timeout_rate`` is then the share still bound after round K."""
    if sol.engine == "compiled":  # the same pass on the solved arrays
        escaped_at, caught, timeout = sol.summary()
    else:
        escaped_at, caught, timeout = _play(sol)
    rate = sum(escaped_at)
    by_round, acc = [], 0.0
    for rnd in range(1, sol.horizon + 1):
        acc += escaped_at[rnd]
        by_round.append(acc)
    mean = sum(r * q for r, q in enumerate(escaped_at)) / rate if rate > 0 else None
    return {"escape_rate": rate, "caught_rate": caught, "timeout_rate": timeout, "mean_rounds": mean,
            "escape_by_round": by_round}


def _play(sol: Solution) -> tuple[list[float], float, float]:
    """Play the best choices forward: the probability escaped in each round, caught, and still bound at the end."""
    dist = {0: 1.0}
    escaped_at = [0.0] * (sol.params.max_rounds + 1)
    caught = 0.0
    for rnd in range(1, sol.horizon + 1):  # past the horizon of escape_by_round@K: the run is no longer scored
        nxt: dict[int, float] = {}
        for sid, w in dist.items():
            succ, esc, cau = sol.trans[(sid, sol.best[(sid, rnd)])]
            escaped_at[rnd] += w * esc
            caught += w * cau
            for s2, q in succ:
                nxt[s2] = nxt.get(s2, 0.0) + w * q
        dist = nxt
    return escaped_at, caught, sum(dist.values())


def first_actions(sol: Solution) -> list[str]:
    """The optimal first action of each character in words, ties named as ties (:func:`name_first_actions`)."""
    choices = sol.choices[0]
    return name_first_actions(sol.params, choices, [sol.q(0, 1, k) for k in range(len(choices))])


TIE = 1e-12  # two first actions whose values differ by at most this are equal (as in _backward)


def name_first_actions(p: EscapeParams, choices: list[tuple], values: list[float]) -> list[str]:
    """Per character, the first action of the best joint choice in words; where other joint choices are worth
    the same (to :data:`TIE`), every action of that character among them: "Mei struggles arms (str or dex,
    equal)" when only the ability differs, else "A or B (equal)", in the order of the legal actions (values equal
    to :data:`TIE` are equal: which one is larger by rounding must not reorder the words, nor the engine)."""
    best = max(values)
    tied = [k for k, v in enumerate(values) if v >= best - TIE]
    lines = []
    for i in range(len(choices[tied[0]])):
        texts = list(dict.fromkeys(describe(p, i, choices[k][i]) for k in tied))
        if len(texts) == 1:
            lines.append(texts[0])
            continue
        parts = [re.fullmatch(r"(.* struggles \w+) \((\w+)\)", t) for t in texts]
        if all(parts) and len({m.group(1) for m in parts}) == 1:
            lines.append(f"{parts[0].group(1)} ({' or '.join(m.group(2) for m in parts)}, equal)")
        else:
            lines.append(" or ".join(texts) + " (equal)")
    return lines


def optimal_exact(scenario: Scenario, objective: str | None = None, max_states: int | None = None,
                  max_branches: int | None = None, engine: str = "auto") -> dict:
    """The exact summary under optimal play (the keys of ``sim.exact``), with an ``optimal`` block: the
    objective, its optimal value, the optimal first actions and the work done."""
    sol = solve(scenario, objective, max_states, max_branches, engine=engine)
    out = {"kind": "escape", "name": scenario.name, "runs": None, "seed": None, "policy": "optimal"}
    played = play_summary(sol)
    out.update(played)
    out["escape_rate_ci"] = [played["escape_rate"], played["escape_rate"]]
    out["exact"] = True
    out["optimal"] = {
        "objective": objective or "escape_rate",
        "value": sol.value[(0, 1)],
        "first_actions": first_actions(sol),
    }
    out["exact_engine"] = {"engine": sol.engine, "states": sol.states,
                           "peak_states": max(len(x) for x in sol.layers),
                           "max_states": None, "branches": sol.branches, "seconds": round(sol.seconds, 4)}
    out.update({k: v for k, v in provenance(scenario, None, None).items() if k not in ("seed", "runs")})
    return out


def with_policy(scenario: Scenario, name: str) -> Scenario:
    return scenario.model_copy(update={"policy": scenario.policy.model_copy(update={"name": name})})


def compare(scenario: Scenario, objective: str | None = None, max_states: int | None = None,
            max_branches: int | None = None, worst: int = 5) -> dict:
    """Optimal value beside every built-in policy's exact value (gap in points), the optimal first actions,
    and for each built-in policy the decisions where it loses most: the states it reaches with the largest
    reach probability x value lost (the state in words, its choice, the optimal choice, the value lost)."""
    ex = _engine()
    sol = solve(scenario, objective, max_states, max_branches, engine="auto")
    best = sol.value[(0, 1)]
    p = sol.params
    policies = []
    for name in BUILTIN_POLICIES:
        s = with_policy(scenario, name)
        try:
            e = ex.exact(s, max_states=max_states, max_branches=max_branches)
        except ExactUnsupported as exc:
            policies.append({"policy": name, "value": None, "gap_points": None, "note": str(exc)})
            continue
        v = objective_value(e, objective)
        policies.append({"policy": name, "value": v, "gap_points": 100.0 * (best - v),
                         "losses": _losses(sol, name, worst)})
    return {
        "scenario": scenario.name, "objective": objective or "escape_rate", "optimal_value": best,
        "first_actions": first_actions(sol), "policies": policies,
        "optimal_play": play_summary(sol),
        "engine": {"engine": sol.engine, "states": sol.states, "branches": sol.branches,
                   "seconds": round(sol.seconds, 4)},
        "characters": list(p.names),
    }


def _losses(sol: Solution, policy_name: str, worst: int) -> list[dict]:
    """Where ``policy_name`` loses most against optimal play: a forward pass under the policy over the
    solved states, each decision weighed by the probability of reaching it."""
    ex = _engine()
    p = sol.params
    policy = load_policy(policy_name)
    dist = {0: 1.0}
    found = []
    for rnd in range(1, sol.horizon + 1):
        nxt: dict[int, float] = {}
        for sid, w in dist.items():
            st = ex._at_round(sol.reps[sid], rnd - 1)
            choice = tuple(policy(PolicyView(p, st, rnd, _dazed(st))))
            choice = tuple(None if d else canonical(a) for a, d in zip(choice, _dazed(st), strict=True))
            opts = sol.choices[sid]
            k = opts.index(choice) if choice in opts else None
            if k is None:  # every legal choice is enumerated (sim.escape.actions): refuse rather than answer less
                said = "; ".join(describe(p, i, a) for i, a in enumerate(choice))
                raise ExactUnsupported(f"optimal play does not enumerate {policy_name}'s choice in round {rnd} "
                                       f"({said}); it cannot compare the two (R-ESC-6)")
            lost = sol.value[(sid, rnd)] - sol.q(sid, rnd, k)
            if lost > 1e-12:
                found.append({"round": rnd, "reach": w, "lost": lost, "weighted": w * lost,
                              "state": describe_state(p, st),
                              "policy_action": "; ".join(describe(p, i, a) for i, a in enumerate(choice)),
                              "optimal_action": "; ".join(describe(p, i, a) for i, a in
                                                          enumerate(opts[sol.best[(sid, rnd)]]))})
            succ = sol.trans[(sid, k)][0]
            for s2, q in succ:
                nxt[s2] = nxt.get(s2, 0.0) + w * q
        dist = nxt
    found.sort(key=lambda d: -d["weighted"])
    return found[:worst]


def describe_state(p: EscapeParams, st: PartyState) -> str:
    """A state in words: each character's bound slots with their tiers, composure, and the attention."""
    parts = []
    for i, c in enumerate(st.chars):
        def slot_text(s: int, t: int, c=c) -> str:
            text = f"{SLOTS[s]} {TIER_IDS[t] if t < len(TIER_IDS) else t}"
            if c.streak[s]:
                text += f" ({c.streak[s]} failed in a row, +{c.acc[s]})" if c.acc[s] else f" ({c.streak[s]} failed)"
            return text

        bound = ", ".join(slot_text(s, t) for s, t in enumerate(c.tiers) if t > 0) or "free"
        extra = f"; composure {c.composure}" if p.stimulus_expr is not None or p.harness_expr is not None else ""
        if c.dazed_left:
            extra += "; dazed"
        parts.append(f"{p.names[i]}: {bound}{extra}")
    att = f"; attention {st.attention}/{p.attention_limit}" if p.attention_limit else ""
    return " | ".join(parts) + att


__all__ = ["OBJECTIVES", "Solution", "compare", "decision_table", "optimal_exact", "parse_objective", "solve"]


# ---------------------------------------------------------------------------------------------
# output: console lines, optimal.json, optimal.html


def console_lines(result: dict) -> list[str]:
    """The comparison in words, for the console."""
    obj = result["objective"]
    lines = [f"{result['scenario']}: optimal {obj} {100 * result['optimal_value']:.2f}%",
             "optimal first actions: " + "; ".join(result["first_actions"])]
    for row in result["policies"]:
        if row["value"] is None:
            lines.append(f"  {row['policy']:<11} no exact value ({row['note']})")
            continue
        lines.append(f"  {row['policy']:<11} {100 * row['value']:6.2f}%  leaves {fixed(row['gap_points'])} points "
                     "on the table")
        for loss in row.get("losses", [])[:3]:
            lines.append(f"      round {loss['round']} (reached {100 * loss['reach']:.1f}%): {loss['state']}: "
                         f"{loss['policy_action']} instead of {loss['optimal_action']} "
                         f"(-{fixed(100 * loss['lost'])} points there)")
    eng = result["engine"]
    lines.append(f"({eng['states']:,} states, {eng['branches']:,} branches, {eng['seconds']:.2f} s)")
    return lines


def write_optimal_report(scenario, result: dict, out_dir) -> list:
    """``optimal.json`` and ``optimal.html`` (through the report template) into ``out_dir``."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "optimal.json", summary_json(result))
    obj = result["objective"]
    head = [f"With optimal play the {obj.replace('_', ' ')} is {100 * result['optimal_value']:.2f}%.",
            "Optimal first actions: " + "; ".join(result["first_actions"]) + "."]
    rows = []
    for row in result["policies"]:
        if row["value"] is None:
            rows.append([row["policy"], "–", "–"])
            continue
        rows.append([row["policy"], f"{100 * row['value']:.2f}%", f"{fixed(row['gap_points'])} pp"])
        head.append(f"{row['policy']} leaves {fixed(row['gap_points'])} points on the table.")
    sections = [answer(f"How much of this scenario's difficulty is policy ({obj})?", head),
                section("Optimal value beside each built-in policy",
                        table(["policy", obj, "gap to optimal"],
                              [["optimal", f"{100 * result['optimal_value']:.2f}%", "0.00 pp"], *rows]))]
    for row in result["policies"]:
        losses = row.get("losses") or []
        if not losses:
            continue
        sections.append(section(
            f"Where {row['policy']} loses most",
            table(["round", "reached", "state", f"{row['policy']} does", "optimal play does", "value lost"],
                  [[str(x["round"]), f"{100 * x['reach']:.1f}%", x["state"], x["policy_action"],
                    x["optimal_action"], f"{fixed(100 * x['lost'])} pp"] for x in losses]),
            note="Decisions ranked by the probability of reaching them under the policy times the value lost there."))
    summary = {"kind": "escape", "policy": "optimal"}
    page = write_html(out / "optimal.html", f"Optimal play — {scenario.name or scenario.slug}", sections, summary)
    return [out / "optimal.json", page]


def decision_table(scenario: Scenario | EscapeParams):
    """Optimal play (objective ``escape_rate``) solved for simulation: the compiled engine's
    :class:`~sim.escape.optimal_fast.DecisionTable` (small, picklable: sent to every chunk), or the reference-driven
    solver's :class:`Solution` where the compiled engine does not cover the scenario."""
    sol = solve(scenario, engine="auto")
    return sol.table() if sol.engine == "compiled" else sol


def table_policy(sol):
    """The solved decision table as a policy for the scalar reference (Monte Carlo of optimal play): in
    round ``r`` it declares the best choice of the state at ``r``. A state the table does not know (past the
    objective's horizon) rests. ``sol``: a :class:`Solution` of either engine or a compiled
    :class:`~sim.escape.optimal_fast.DecisionTable` (the state found by its compiled row)."""
    if sol.engine == "compiled":
        return (sol if not isinstance(sol, Solution) else sol.table()).policy()
    ex = _engine()
    ids = sol.ids

    def policy(view):
        st = view.state
        played = view.round - 1  # the view sees the round already counted; keys count the rounds played
        key = (tuple(ex._char_key(c, played) for c in st.chars), ex._attention(st, sol.params),
               tuple(st.item_left))
        sid = ids.get(key)
        k = sol.best.get((sid, view.round)) if sid is not None else None
        if k is None:
            return [None if d else REST for d in view.dazed]
        return list(sol.choices[sid][k])

    return policy


_PLAY_CACHE: dict[int, tuple[EscapeParams, object]] = {}


def play(view):
    """Optimal play (objective ``escape_rate``) as a policy for simulation:
    ``python -m sim run SCENARIO --policy sim.escape.optimal:play`` (Monte Carlo of the solved table on the
    scalar reference, every declaration checked). The scenario is solved on the first call of each process,
    within the default budget."""
    p = view.params
    hit = _PLAY_CACHE.get(id(p))
    if hit is None or hit[0] is not p:
        hit = _PLAY_CACHE[id(p)] = (p, table_policy(decision_table(p)))
    return hit[1](view)
