"""Exact analysis of escape scenarios: forward dynamic programming over the distribution of party
states, for one to four characters under every built-in policy (``greedy``, ``arms_first``, ``team``).

The round function is the scalar reference itself (:func:`sim.escape.reference.play_round`): a
branching source answers each random event (a check, a search, a save, a dice roll, an item draw)
with every outcome and its exact probability, so exact answers and simulated ones come from the
same rules text and the only approximation is floating-point addition. Check probabilities come
from the shared check table (:func:`sim.dice.check_numerator`), dice sums from their cached
distributions.

Speed comes from these, none of which touches the rules:

- equal states are merged every round (a state is a compact hashable key, :func:`state_key`);
- the distribution of next states of a state is computed once and reused in every later round
  where the state appears (memoized transitions; the round number is part of the memo key only
  where the rules read it, see :func:`_round_matters`);
- the policy is asked once per state, not once per branch;
- dice rolls are deferred (:mod:`sim.escape.exact_sym`): one replay of the round serves every face of a
  roll as long as the faces agree on every decision the round takes, and the next states are expanded
  per character at the end of the round;
- the parameters are read as Python numbers (:func:`fast_params`), and the attention is left out of the key
  when there is no attention limit.

Two budgets bound the work: ``max_states`` (distinct states whose round is computed) and
``max_branches`` (rounds played on the branching source). The work of each round is projected before
it is spent, and the analysis refuses as soon as a projection exceeds a budget:
:class:`ExactBudgetExceeded` names the limit that binds, the flag that raises it and the projected
time, and suggests Monte Carlo.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
import time
from collections.abc import Callable

import numpy as np

from sim.dice import CHECK_DENOMINATOR, DiceExpr, check_numerator
from sim.errors import ExactUnsupported
from sim.escape.exact_fast import (
    FAST_AUTO_MAX_BRANCHES,
    FAST_AUTO_MAX_STATES,
    FAST_MAX_BRANCHES,
    FAST_MAX_STATES,
    CompiledSearch,
    Uncovered,
)
from sim.escape.exact_sym import Deferred, Fork, deferred_in
from sim.escape.model import BUILTIN_POLICIES, OPTIMAL_POLICY, Scenario
from sim.escape.optimal import optimal_exact
from sim.escape.params import EscapeParams, compile_params
from sim.escape.policy import load_policy
from sim.escape.reference import play_round
from sim.escape.state import CharState, PartyState, initial_state
from sim.result import provenance

#: the largest party exact analysis takes on (joint states grow as a power of the party size)
MAX_PARTY = 4
#: default state budget of ``sim.exact`` and ``python -m sim exact`` (about 30 s on a small machine)
DEFAULT_MAX_STATES = 20_000
#: budget when exact analysis is tried alongside a simulation (report overlay, sweeps, tune, ...):
#: a party too large for it is simply reported by simulation, after a few seconds at most
class AutoBudget(int):
    """The state budget of exact analysis tried beside a simulation: the reference-driven engine reads it as
    ``max_states``; the compiled engine, where it answers, uses its own budgets beside a simulation instead
    (:data:`sim.escape.exact_fast.FAST_AUTO_MAX_STATES`, :data:`sim.escape.exact_fast.FAST_AUTO_MAX_BRANCHES`:
    about a second of CPU). A plain integer is a budget given by the user and binds either engine."""


AUTO_MAX_STATES = AutoBudget(500)


#: branches (combinations of the outcomes of a round's random events, each one a played round) allowed
#: per state of the budget: a state whose round has very many random events costs as much as many states
BRANCHES_PER_STATE = 25


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class ExactBudgetExceeded(ExactUnsupported):
    """Exact analysis would exceed its budget. ``binds`` names the limit (``"states"`` or
    ``"branches"``), ``flag`` the option that raises it; ``states``/``branches`` are the counts the
    analysis would reach (done so far plus projected for the round it refused), ``projected_seconds``
    the time that would take and ``seconds`` the time spent before refusing. The message is one line
    and suggests Monte Carlo."""

    def __init__(self, states: int, rnd: int, budget: int, branches: int | None = None, *,
                 binds: str = "states", max_branches: int | None = None, seconds: float = 0.0,
                 projected_seconds: float | None = None, projected: bool = False):
        self.states, self.round, self.budget, self.branches = states, rnd, budget, branches
        self.binds, self.max_branches, self.seconds = binds, max_branches, seconds
        self.projected_seconds, self.projected = projected_seconds, projected
        self.flag = "--max-states" if binds == "states" else "--max-branches"
        verb = "would need at least" if projected else "reached"
        if binds == "states":
            what = f"the state budget binds: it {verb} {states:,} states (budget --max-states {budget:,})"
        else:
            limit = max_branches if max_branches is not None else BRANCHES_PER_STATE * budget
            what = (f"the branch budget binds: it {verb} {branches:,} branches, each one combination of a round's "
                    f"random outcomes (budget --max-branches {limit:,}; {states:,} states)")
        eta = ""
        if projected_seconds is not None:
            eta = f"; at least {_duration(projected_seconds)} more to finish that round alone"
        super().__init__(f"exact analysis refused in round {rnd} after {seconds:.1f} s: {what}{eta}; raise "
                         f"{self.flag} or use Monte Carlo (python -m sim run)")


#: a projected branch count refuses only beyond this multiple of the branch budget: branches per state vary
#: from state to state, and a round projected near the budget is played up to the budget itself (the hard stop)
PROJECTION_MARGIN = 1.25


class _Branches(Exception):
    pass


class BranchSource:
    """Replays a fixed prefix of outcome choices; beyond it takes the first outcome and records
    the alternatives for later replays. ``rolls`` caches the outcomes of each character's dice
    fields (shared by every branch of one analysis).

    With ``forced`` (a set, the deferral mode of :func:`transitions`), a dice roll (:meth:`roll`,
    :meth:`focus`) beyond the prefix is answered with every face at once, a
    :class:`~sim.escape.exact_sym.Deferred` (path entry :data:`DEFER`), unless its signature (kind,
    character, field) is in ``forced``: the rolls whose faces led to different decisions earlier in this
    state's round are played face by face from the start. ``outs`` and ``sigs`` give the outcomes and the
    signature of each deferred position."""

    __slots__ = ("p", "prefix", "depth", "path", "prob", "pending", "rolls", "forced", "outs", "sigs")

    def __init__(self, params: EscapeParams, prefix: tuple[int, ...], rolls: dict | None = None,
                 forced: set | None = None):
        self.p = params
        self.prefix = prefix
        self.depth = len(prefix)
        self.path: list[int] = []
        self.prob = 1.0
        self.pending: list[tuple[int, ...]] = []
        self.rolls = {} if rolls is None else rolls
        self.forced = forced
        self.outs: dict[int, tuple] = {}
        self.sigs: dict[int, tuple] = {}

    def _choose(self, outcomes: tuple[tuple[object, float], ...], sig: tuple | None = None):
        path = self.path
        pos = len(path)
        if pos < self.depth:
            k = self.prefix[pos]
        elif sig is not None and self.forced is not None and len(outcomes) > 1 and sig not in self.forced:
            k = DEFER
        else:
            k = 0
            if len(outcomes) > 1:
                base = tuple(path)
                self.pending.extend([base + (j,) for j in range(1, len(outcomes))])
        path.append(k)
        if k == DEFER:
            self.outs[pos] = outcomes
            self.sigs[pos] = sig
            return Deferred.roll(pos, [v for v, _ in outcomes])
        value, q = outcomes[k]
        self.prob *= q
        return value

    def check(self, i, net, need, blessed, breath) -> bool:
        key = (net, need, blessed, breath)  # a deferred need cannot be hashed: its roll is played face by face
        out = _CHECKS.get(key)
        if out is None:
            out = _CHECKS[key] = _bernoulli(check_numerator(net, need, blessed, breath))
        return self._choose(out)

    def search(self, i, need) -> bool:
        return self.check(i, 0, need, False, False)

    def save(self, i, need) -> bool:
        return self.check(i, 0, need, False, False)

    def focus(self, i) -> int:
        return self._choose(_D8, ("focus", i))

    def inspiration(self, i, sides) -> int:
        """R-ESC-14b: every face of a held inspiration die, each 1 / sides."""
        out = _DIE.get(sides)
        if out is None:
            out = _DIE[sides] = tuple((f, 1 / sides) for f in range(1, sides + 1))
        return self._choose(out)

    def item(self, i, weights) -> int:
        total = float(weights.sum())
        return self._choose(tuple((k, float(w) / total) for k, w in enumerate(weights) if w > 0))

    def roll(self, i, field: str, expr: DiceExpr) -> int:
        key = (field, i)  # one analysis, one set of parameters: the field and character fix the dice
        out = self.rolls.get(key)
        if out is None:
            out = self.rolls[key] = _distribution(expr, self.p.modifiers[i])
        return self._choose(out, key)


#: path entry of a roll answered with every face at once (deferral mode)
DEFER = -1


_D8 = tuple((f, 1 / 8) for f in range(1, 9))
_DIE: dict[int, tuple[tuple[object, float], ...]] = {}  # sides -> faces of an inspiration die
_CHECKS: dict[tuple, tuple[tuple[object, float], ...]] = {}  # (net, need, blessed, breath) -> outcomes
_DIST_CACHE: dict = {}


def _bernoulli(num: int) -> tuple[tuple[object, float], ...]:
    """(True, q), (False, 1 - q) for q = num / CHECK_DENOMINATOR (the shared check table), impossible
    outcomes left out."""
    q = num / CHECK_DENOMINATOR
    return tuple((v, w) for v, w in ((True, q), (False, 1.0 - q)) if w > 0)


def _distribution(expr: DiceExpr, mods: dict) -> tuple[tuple[int, float], ...]:
    key = (expr, tuple(sorted(mods.items())))
    out = _DIST_CACHE.get(key)
    if out is None:
        out = tuple((v, q) for v, q in expr.distribution(mods).items() if q > 0)
        _DIST_CACHE[key] = out
    return out


# ---------------------------------------------------------------------------------------------
# states


#: fields of :class:`CharState` that only count (R-ESC-15 statistics): left out of state keys. Every
#: other field is part of the key, so a resource the rules gain is told apart without edits here.
STAT_FIELDS = frozenset({"freed_round", "checks", "successes", "overloads", "items_found", "rounds_at_tier",
                         "checks_at_tier", "successes_at_tier", "actions_taken"})
_KEY_FIELDS = tuple(f.name for f in dataclasses.fields(CharState) if f.name not in STAT_FIELDS)


_GET_KEY_FIELDS = operator.attrgetter(*_KEY_FIELDS)
_PARTY_FIELDS = ("attention", "item_left")  # the party's fields in the state key
_IMMUNE = _KEY_FIELDS.index("immune_until")
_HELD = _KEY_FIELDS.index("held")


def _char_key(c: CharState, rnd: int) -> tuple:
    v = [tuple(x) if type(x) is list else x for x in _GET_KEY_FIELDS(c)]
    v[_IMMUNE] = max(0, v[_IMMUNE] - rnd)  # focus immunity counted from the rounds played
    if v[_HELD]:
        v[_HELD] = tuple(sorted(v[_HELD]))  # which items are held, not in what order
    return tuple(v)


def state_key(st: PartyState, p: EscapeParams | None = None) -> tuple:
    """Compact hashable key of everything in ``st`` the next rounds depend on.

    Every field of each :class:`CharState` but the statistics (:data:`STAT_FIELDS`), with the focus
    immunity counted from the rounds played (``immune_until - round``, at least 0) rather than as a
    round number, so that equal states of different rounds share a key; then the attention and the
    items left in the pool. Given the parameters ``p`` of a scenario without an attention limit, the
    attention is left out (kept as 0): it can then change nothing (R-ESC-9a: only the limit catches;
    the ``team`` guard of R-ESC-37 reads it only under a limit)."""
    rnd = st.round
    return (tuple(_char_key(c, rnd) for c in st.chars), _attention(st, p), tuple(st.item_left))


def _attention(st: PartyState, p: EscapeParams | None) -> int:
    return st.attention if p is None or p.attention_limit else 0


_STATS = ("rounds_at_tier", "checks_at_tier", "successes_at_tier", "actions_taken")


def _list_fields(st: PartyState) -> tuple[str, ...]:
    """The names of the list fields of ``st``'s characters that the rounds change (statistics left out)."""
    return tuple(name for name, v in st.chars[0].__dict__.items() if type(v) is list and name not in _STATS)


def _scratch_copy(st: PartyState, lists: tuple[str, ...] | None = None) -> PartyState:
    """A copy of ``st`` for one branch of a round: the dynamic fields copied, the statistics
    lists shared with ``st`` (the exact engine never reads them; :meth:`PartyState.copy` copies
    every list, which is a third of the time of a round here). ``lists``: :func:`_list_fields`."""
    if lists is None:
        lists = _list_fields(st)
    chars = []
    for c in st.chars:
        d = c.__dict__.copy()
        for name in lists:
            d[name] = d[name][:]
        c2 = object.__new__(CharState)
        c2.__dict__ = d
        chars.append(c2)
    out = object.__new__(PartyState)
    out.__dict__ = st.__dict__.copy()
    out.chars = chars
    out.item_left = st.item_left[:]
    return out


def _at_round(st: PartyState, played: int) -> PartyState:
    """``st`` with ``played`` rounds played and the same key (focus immunity shifted): ``st`` itself
    when it is already there, else a copy. A :class:`_Lazy` state is built first."""
    st = realize(st)
    if st.round == played and not st.outcome:
        return st
    out = st.copy()
    shift = played - st.round
    for c in out.chars:
        if c.immune_until > st.round:
            c.immune_until += shift
    out.round = played
    out.outcome = ""
    return out


class _Grid(dict):
    """A 2-D parameter array as Python numbers: ``g[i, j]`` an element, ``g[i]`` a row (a tuple)."""

    __slots__ = ()


def fast_params(p: EscapeParams) -> EscapeParams:
    """``p`` with its arrays as Python numbers (tuples, and :class:`_Grid` for 2-D ones): the same values,
    read several times faster one element at a time, as the scalar round does. ``item_weight`` stays an
    array (the round draws items with array arithmetic)."""
    if getattr(p, "_fast", False):
        return p
    upd = {}
    for f in dataclasses.fields(p):
        v = getattr(p, f.name)
        if type(v) is not np.ndarray or f.name == "item_weight":
            continue
        if v.ndim == 1:
            upd[f.name] = tuple(v.tolist())
        elif v.ndim == 2:
            g = _Grid()
            for i, row in enumerate(v.tolist()):
                g[i] = tuple(row)
                for j, x in enumerate(row):
                    g[i, j] = x
            upd[f.name] = g
    out = dataclasses.replace(p, **upd)
    object.__setattr__(out, "_fast", True)
    return out


def _round_matters(p: EscapeParams, policy_name: str) -> bool:
    """Whether a round's transitions depend on the round number beyond the final timeout: the
    ``team`` policy's attention guard (R-ESC-37) counts the rounds still to come."""
    return policy_name == "team" and bool(p.attention_limit)


#: outcome codes of a transition
_GOES_ON, _ESCAPED, _CAUGHT = 0, 1, 2


def transitions(p: EscapeParams, st: PartyState, policy: Callable, rolls: dict | None = None,
                counter: list[int] | None = None, defer: bool = True) -> tuple[list, float, float]:
    """One round from ``st``: (list of (next key, next state, probability) of the runs that go on,
    P(escaped this round), P(caught this round)). Equal next states are merged; a run the round
    ends by timeout counts as going on (the caller applies the last round). ``counter`` is
    [branches so far, the most allowed(, replays of the round so far)]; beyond the most allowed
    :class:`_Branches` is raised. A branch is one combination of the round's random outcomes that goes
    on (a next state before merging), one that ends the run (all the faces of the rolls deferred in it
    together), or a replay stopped to play a roll face by face.

    ``defer``: dice rolls are answered with every face at once (:mod:`sim.escape.exact_sym`) and
    played face by face only where the faces lead to different decisions; the deferred values left in
    the state at the end of the round are expanded into one next state per combination of faces. The
    answer is the same as face by face (``defer=False``), with fewer replays of the round. A next state
    may then be a :class:`_Lazy` (built by :func:`realize` when needed)."""
    plan = None

    def once(view):  # declarations see only the start of the round: the same on every branch
        nonlocal plan
        if plan is None:
            plan = policy(view)
        return plan

    goes_on: dict[tuple, list] = {}
    escaped = caught = 0.0
    stack: list[tuple[int, ...]] = [()]
    lists = _list_fields(st)
    forced: set | None = set() if defer else None
    if counter is None:
        counter = [0, float("inf")]
    tick = _ticker(counter)
    while stack:
        prefix = stack.pop()
        if len(counter) > 2:
            counter[2] += 1  # replays of the round
        src = BranchSource(p, prefix, rolls, forced)
        nxt = _scratch_copy(st, lists)
        try:
            play_round(p, nxt, once, src)
        except Fork as fork:  # the faces of a deferred roll disagree on a decision: play it face by face
            _play_face_by_face(stack, src, fork.pos, forced)
            tick()  # a replay stopped early: work, though no outcome
            continue
        stack.extend(src.pending)
        q = src.prob
        if nxt.outcome == "escaped":  # on every face of the deferred rolls alike (same decisions)
            tick()
            escaped += q
        elif nxt.outcome == "caught":
            tick()
            caught += q
        else:
            nxt.outcome = ""
            _merge_goes_on(goes_on, _expand(p, nxt, src, q, lists) if src.outs else ((state_key(nxt, p), nxt, q),),
                           tick)
    return [tuple(e) for e in goes_on.values()], escaped, caught


def _ticker(counter: list) -> Callable[[], None]:
    """Count one branch in ``counter`` (see :func:`transitions`); :class:`_Branches` beyond the most allowed."""

    def tick() -> None:
        counter[0] += 1
        if counter[0] > counter[1]:
            raise _Branches()

    return tick


def _play_face_by_face(stack: list, src: BranchSource, j: int, forced: set) -> None:
    """The faces of the deferred roll at position ``j`` lead to different decisions: mark the roll to be
    played face by face and queue the replays (the alternatives of the events before it, then each face)."""
    forced.add(src.sigs[j])
    stack.extend([x for x in src.pending if len(x) <= j])  # alternatives of the events before it
    base = tuple(src.path[:j])
    stack.extend([base + (k,) for k in range(len(src.outs[j]))])


def _merge_goes_on(goes_on: dict, successors, tick: Callable[[], None]) -> None:
    """Add the (key, state, probability) ``successors`` to ``goes_on`` (equal keys merged), one branch each."""
    for k, s2, q2 in successors:
        tick()  # one branch per combination of outcomes that goes on
        entry = goes_on.get(k)
        if entry is None:
            goes_on[k] = [k, s2, q2]
        else:
            entry[2] += q2


def _faces(d: Deferred, at: dict) -> object:
    return d.vals[tuple(at[x] for x in d.vars)]


def _set_faces(holder, found: list, at: dict) -> None:
    """Put the faces ``at`` (position -> face index) of the deferred values ``found`` of ``holder`` in place."""
    for _, name, idx, d in found:
        v = _faces(d, at)
        if idx < 0:
            setattr(holder, name, v)
        else:
            seq = getattr(holder, name)[:]  # a list the copy may share (statistics): copied first
            seq[idx] = v
            setattr(holder, name, seq)


def _combos(found: list, src: BranchSource):
    """(faces: position -> face index, probability) of every combination of the faces of the rolls that
    the deferred values ``found`` depend on."""
    sizes = {}
    for *_, d in found:
        sizes.update(zip(d.vars, d.sizes, strict=True))
    positions = sorted(sizes)
    outs = [src.outs[pos] for pos in positions]
    for faces in itertools.product(*(range(sizes[pos]) for pos in positions)):
        w = 1.0
        for out, k in zip(outs, faces, strict=True):
            w *= out[k][1]
        yield dict(zip(positions, faces, strict=True)), w


class _Lazy:
    """A next state not built yet: ``nxt`` with the faces ``at`` of its deferred values (built only when the
    engine meets its key for the first time, :func:`realize`)."""

    __slots__ = ("nxt", "at", "lists")

    def __init__(self, nxt: PartyState, at: dict, lists: tuple[str, ...]):
        self.nxt, self.at, self.lists = nxt, at, lists

    def build(self) -> PartyState:
        s2 = _scratch_copy(self.nxt, self.lists)
        _set_faces(s2, deferred_in(self.nxt), self.at)
        for c2, c in zip(s2.chars, self.nxt.chars, strict=True):
            _set_faces(c2, deferred_in(c), self.at)
        return s2


def realize(s: PartyState | _Lazy) -> PartyState:
    """A state of :func:`transitions`' answer, built if it was left lazy."""
    return s.build() if type(s) is _Lazy else s


def _expand(p: EscapeParams, nxt: PartyState, src: BranchSource, q: float, lists: tuple[str, ...]):
    """(key, state or :class:`_Lazy`, probability) for each combination of the faces of the deferred rolls
    whose values ``nxt`` holds (a roll whose value the round dropped adds up to 1 and is left out). When
    each character's deferred values depend on rolls of their own (the usual case: a character's damage),
    the keys are built character by character and combined, without a state per combination."""
    top = deferred_in(nxt, _PARTY_FIELDS)
    per = [deferred_in(c, _KEY_FIELDS) for c in nxt.chars]
    if not top and not any(per):
        yield state_key(nxt, p), nxt, q
        return
    var_sets = [{x for *_, d in f for x in d.vars} for f in per]
    disjoint = sum(len(v) for v in var_sets) == len(set().union(*var_sets))
    rnd = nxt.round
    if top or not disjoint:  # the general case: every combination of every roll, a state each
        found = top + [h for f in per for h in f]
        for at, w in _combos(found, src):
            lazy = _Lazy(nxt, at, lists)
            yield state_key(lazy.build(), p), lazy, q * w
        return
    variants = []  # per character: [(character key, faces, probability)]
    for c, f in zip(nxt.chars, per, strict=True):
        if not f:
            variants.append([(_char_key(c, rnd), {}, 1.0)])
            continue
        rows = []
        for at, w in _combos(f, src):
            c2 = object.__new__(CharState)
            c2.__dict__ = c.__dict__.copy()
            _set_faces(c2, f, at)
            rows.append((_char_key(c2, rnd), at, w))
        variants.append(rows)
    rest = (_attention(nxt, p), tuple(nxt.item_left))
    for combo in itertools.product(*variants):
        w = q
        at = {}
        for _, a, wc in combo:
            w *= wc
            at.update(a)
        yield (tuple(ck for ck, _, _ in combo), *rest), _Lazy(nxt, at, lists), w


# ---------------------------------------------------------------------------------------------
# scope


def _unsupported_reason(scenario: Scenario) -> str | None:
    n = len(scenario.party)
    if n > MAX_PARTY:
        return (f"exact analysis supports parties of 1 to {MAX_PARTY} characters; this party has {n} "
                "(use Monte Carlo: python -m sim run)")
    if scenario.policy.name not in (*BUILTIN_POLICIES, OPTIMAL_POLICY):
        return (f"exact analysis supports the built-in policies ({', '.join(BUILTIN_POLICIES)}); this scenario "
                f"uses {scenario.policy.name!r} (use Monte Carlo: python -m sim run)")
    return None


def supports_exact(scenario: Scenario) -> bool:
    """Whether exact analysis applies (party size and policy); the state budget may still stop it."""
    return _unsupported_reason(scenario) is None


# ---------------------------------------------------------------------------------------------
# the dynamic program


def exact(scenario: Scenario, max_states: int | None = None, max_branches: int | None = None,
          policy: str | None = None, objective: str | None = None, engine: str = "auto") -> dict:
    """Exact `escape_rate`, `escape_by_round`, `mean_rounds`, `caught_rate`, `timeout_rate`.

    ``policy`` overrides the scenario's policy; ``policy="optimal"`` gives the same keys under optimal
    play for ``objective`` (:func:`sim.escape.optimal.optimal_exact`: ``escape_rate`` by default,
    ``escape_by_round@K`` or ``not_caught``), with an ``optimal`` block.

    ``max_states`` (default :data:`DEFAULT_MAX_STATES`) bounds the distinct states whose round is
    computed, ``max_branches`` (default :data:`BRANCHES_PER_STATE` x ``max_states``) the branches
    played (each one combination of a round's random outcomes). The work is projected as the search
    runs: the states of the next round are known once a round is done, and their branches are
    projected from the branches per state measured so far; as soon as either projection exceeds its
    budget, :class:`ExactBudgetExceeded` names the limit that binds, the flag that raises it and the
    projected time. The summary's ``exact_engine`` gives the states computed, the largest number of
    states alive in one round, the budgets, the branches and the time taken."""
    if policy == OPTIMAL_POLICY or (policy is None and scenario.policy.name == OPTIMAL_POLICY):
        return optimal_exact(scenario, objective, max_states, max_branches, engine)
    if objective is not None:
        raise ExactUnsupported("objective applies to policy='optimal'")
    if policy is not None:
        scenario = scenario.model_copy(update={"policy": scenario.policy.model_copy(update={"name": policy})})
    reason = _unsupported_reason(scenario)
    if reason:
        raise ExactUnsupported(reason)
    budget = DEFAULT_MAX_STATES if max_states is None else int(max_states)
    if budget < 1:
        raise ExactUnsupported(f"max_states: expected an integer >= 1, got {max_states}")
    branch_budget = BRANCHES_PER_STATE * budget if max_branches is None else int(max_branches)
    if branch_budget < 1:
        raise ExactUnsupported(f"max_branches: expected an integer >= 1, got {max_branches}")
    if engine not in ENGINES:
        raise ExactUnsupported(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    if engine != "reference":
        answer = _compiled(scenario, max_states, max_branches, engine == "compiled")
        if answer is not None:
            return answer
    search = _Search(scenario, budget, branch_budget)
    search.run()
    return search.summary()


#: the exact engines: ``auto`` (the compiled one where it covers the scenario, else the reference-driven one),
#: ``compiled`` (the compiled one or a refusal), ``reference`` (the reference-driven one, the independent check)
ENGINES = ("auto", "compiled", "reference")


def _compiled(scenario: Scenario, max_states: int | None, max_branches: int | None, only: bool) -> dict | None:
    """The compiled engine's answer (:mod:`sim.escape.exact_fast`), or None where it does not cover the scenario
    (the reference-driven engine answers then; with ``only``, a refusal). Its budgets default to its own."""
    if isinstance(max_states, AutoBudget) and max_branches is None:  # beside a simulation
        max_states, max_branches = FAST_AUTO_MAX_STATES, FAST_AUTO_MAX_BRANCHES
    states = FAST_MAX_STATES if max_states is None else int(max_states)
    branches = FAST_MAX_BRANCHES if max_branches is None else int(max_branches)
    p = compile_params(scenario)
    try:
        search = CompiledSearch(p, scenario.policy.name, states, branches)
        search.run(_refusal(search, states, branches))
    except Uncovered as exc:
        if only:
            raise ExactUnsupported(f"the compiled exact engine does not cover this scenario: {exc}") from None
        return None
    return exact_summary(scenario, p, search.escaped_at, search.caught, search.timeout, search.engine_block())


def _refusal(search, budget: int, branch_budget: int):
    def refuse(rnd, binds, states, branches, projected, eta):
        spent = time.perf_counter() - search.started
        exc = ExactBudgetExceeded(states, rnd, budget, branches, binds=binds, max_branches=branch_budget,
                                  seconds=spent, projected_seconds=eta, projected=projected)
        exc.played = search.branches
        return exc
    return refuse


class _Search:
    """The dynamic program of :func:`exact`, round by round over the distribution of states alive.

    Each distinct state (numbered in ``ids``; per round as well where :func:`_round_matters`) has its
    round computed once by :func:`transitions` into a row of a transition table (CSR: next state
    numbers and probabilities, and the probabilities of escaping and of being caught in that round);
    a round then moves the probabilities of the states alive through their rows."""

    def __init__(self, scenario: Scenario, budget: int, branch_budget: int):
        self.started = time.perf_counter()
        self.scenario, self.budget, self.branch_budget = scenario, budget, branch_budget
        p = self.p = fast_params(compile_params(scenario))
        self.policy = load_policy(scenario.policy.name)
        self.by_round_key = _round_matters(p, scenario.policy.name)
        self.rolls: dict = {}
        self.counter = [0, branch_budget, 0]  # branches played, branch budget, replays (transitions)
        start = initial_state(p)
        self.ids: dict[tuple, int] = {state_key(start, p): 0}  # state key -> state number
        self.reps: dict[int, PartyState] = {0: start}  # a state for each number not yet expanded
        self.memo: dict = {}  # state number (and round where it matters) -> row of the transition table
        self.row_ptr, self.cols, self.vals, self.esc_of, self.cau_of = [0], [], [], [], []
        self.table = None  # the rows above as arrays; None when rows were added since
        self.frontier, self.probs = np.zeros(1, dtype=np.int64), np.ones(1)
        self.escaped_at = [0.0] * (p.max_rounds + 1)
        self.caught = self.timeout = 0.0
        self.peak = 1
        self.per_state = None  # branches per expanded state, measured (the last round's where there was one)

    def refuse(self, rnd: int, binds: str, states: int, branches: int, projected: bool) -> ExactBudgetExceeded:
        spent = time.perf_counter() - self.started
        played = self.counter[0]
        eta = spent / played * max(0, branches - played) if projected and played > 0 else None
        exc = ExactBudgetExceeded(states, rnd, self.budget, branches, binds=binds, max_branches=self.branch_budget,
                                  seconds=spent, projected_seconds=eta, projected=projected)
        exc.played = played  # branches actually played before refusing
        return exc

    def run(self) -> None:
        for rnd in range(1, self.p.max_rounds + 1):
            if not self._advance(rnd, self._round_rows(rnd)):
                break

    def _round_rows(self, rnd: int) -> list[int]:
        """The table row of each state alive at the start of round ``rnd``, computing the rows not known yet."""
        memo, counter = self.memo, self.counter
        keys = [((sid, rnd) if self.by_round_key else sid) for sid in self.frontier.tolist()]
        todo = sum(1 for mk in keys if mk not in memo)  # states whose round is still to compute: known now
        if len(memo) + todo > self.budget:
            raise self.refuse(rnd, "states", len(memo) + todo, int(counter[0] + todo * (self.per_state or 0)), True)
        if self.per_state is not None and counter[0] + todo * self.per_state > PROJECTION_MARGIN * self.branch_budget:
            raise self.refuse(rnd, "branches", len(memo) + todo, int(counter[0] + todo * self.per_state), True)
        rows = []
        done, round_start = 0, counter[0]
        for sid, mk in zip(self.frontier.tolist(), keys, strict=True):
            row = memo.get(mk)
            if row is None:
                row = self._add_row(sid, mk, rnd)
                done += 1
                # the rest of this round, projected from the branches per state measured in it so far
                measured = (counter[0] - round_start) / done
                if done >= 3 or self.per_state is None:
                    left = todo - done
                    if left and counter[0] + left * measured > PROJECTION_MARGIN * self.branch_budget:
                        raise self.refuse(rnd, "branches", len(memo) + left, int(counter[0] + left * measured), True)
            rows.append(row)
        if done:  # the smaller of this round's and the overall branches per state: a projection that errs low
            self.per_state = min((counter[0] - round_start) / done, counter[0] / len(memo))
        return rows

    def _add_row(self, sid: int, mk, rnd: int) -> int:
        """Play round ``rnd`` from state ``sid`` (:func:`transitions`) into a new row of the table."""
        rep = self.reps[sid] if self.by_round_key else self.reps.pop(sid)
        try:
            succ, esc, cau = transitions(self.p, _at_round(rep, rnd - 1), self.policy, self.rolls, self.counter)
        except _Branches:
            raise self.refuse(rnd, "branches", len(self.memo) + 1, self.counter[0], False) from None
        ids, reps = self.ids, self.reps
        for k2, s2, q2 in succ:
            sid2 = ids.get(k2)
            if sid2 is None:
                sid2 = ids[k2] = len(ids)
                reps[sid2] = s2
            elif self.by_round_key and sid2 not in reps:
                reps[sid2] = s2
            self.cols.append(sid2)
            self.vals.append(q2)
        self.row_ptr.append(len(self.cols))
        self.esc_of.append(esc)
        self.cau_of.append(cau)
        row = self.memo[mk] = len(self.memo)
        self.table = None
        return row

    def _advance(self, rnd: int, rows: list[int]) -> bool:
        """Move the probabilities alive through their ``rows``: escaped and caught in round ``rnd``, and the
        distribution at the start of the next round; False when the search ends (last round, or none alive)."""
        if self.table is None:  # new rows this round
            self.table = (np.array(self.row_ptr, dtype=np.int64), np.array(self.cols, dtype=np.int64),
                          np.array(self.vals), np.array(self.esc_of), np.array(self.cau_of))
        ptr, col, val, esc_a, cau_a = self.table
        probs = self.probs
        r = np.array(rows, dtype=np.int64)
        self.escaped_at[rnd] = float(probs @ esc_a[r])
        self.caught += float(probs @ cau_a[r])
        starts, lens = ptr[r], ptr[r + 1] - ptr[r]
        entries = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
        nxt = np.bincount(col[entries], weights=np.repeat(probs, lens) * val[entries], minlength=len(self.ids))
        if rnd == self.p.max_rounds:
            self.timeout = float(nxt.sum())  # R-ESC-5 (7): neither caught nor escaped by the last round
            return False
        self.frontier = np.flatnonzero(nxt)
        self.probs = nxt[self.frontier]
        self.peak = max(self.peak, len(self.frontier))
        return bool(len(self.frontier))

    def summary(self) -> dict:
        return exact_summary(self.scenario, self.p, self.escaped_at, self.caught, self.timeout, {
            "engine": "reference",
            "states": len(self.memo),
            "peak_states": self.peak,
            "max_states": self.budget,
            "max_branches": self.branch_budget,
            "branches": self.counter[0],
            "replays": self.counter[2],
            "seconds": round(time.perf_counter() - self.started, 4),
        })


def exact_summary(scenario: Scenario, p, escaped_at: list[float], caught: float, timeout: float,
                  engine: dict) -> dict:
    """The exact summary from the probability escaped in each round (index = round), caught and timed out."""
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
        "policy": scenario.policy.name,
        "escape_rate": escape_rate,
        "escape_rate_ci": [escape_rate, escape_rate],
        "caught_rate": caught,
        "timeout_rate": timeout,
        "mean_rounds": mean_rounds,
        "escape_by_round": by_round,
        "reading": {"volume1_features": scenario.rules.volume1_features,
                    "self_untie": scenario.rules.self_untie},
        "exact": True,
        "exact_engine": engine,
    }
    summary.update({k: v for k, v in provenance(scenario, None, None).items() if k not in ("seed", "runs")})
    return summary
