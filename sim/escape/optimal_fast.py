"""Optimal play on the compiled exact engine (issue 35 item 3): the best value any policy can reach, over every legal
joint declaration (R-ESC-5, R-ESC-6), solved by backward induction over the reachable states, with every round
played by the batch kernel on the exact random source.

- **States** are the compiled engine's rows (:mod:`sim.escape.exact_fast`: tiers, acc, streak, the kernel's
  character fields later rounds read, held items, items left, attention where a limit reads it), numbered once for
  the whole solve in one compiled hash table. A row means the same state in every round (focus immunity is kept as
  rounds left), so a state's choices and outcomes are computed once and reused in every round it is reached.
- **Choices** come from the one legal-action source (:func:`sim.escape.actions.joint_actions`), asked once per
  *projection* of a state onto what legality reads (:data:`legality_columns`: every character's tiers, uses left,
  inspiration die, held items, dazed or not), on one state of that projection decoded into a
  :class:`~sim.escape.state.PartyState`; every state with the same projection shares the list.
- **Transitions** (:func:`sim.escape.exact_fast.expand_states`): every choice of a state is played by the kernel's
  round with the declaration fixed (kernel policy FIXED) on every combination of the round's random outcomes; the
  result is stored as compressed arrays: per state its first choice and count, per choice the probability escaped,
  caught and its next states with their probabilities.
- **Backward induction** (:func:`backward_round`, compiled): from the last round to the first, the value of each
  state alive in round r is the best over its choices of (escaped this round) + sum(probability x value of the next
  state in round r + 1); ties go to the earlier choice (as the reference-driven solver, :mod:`sim.escape.optimal`).

The result is a :class:`CompiledSolution`, read like the reference-driven solver's :class:`~sim.escape.optimal.Solution`
(``value``, ``best``, ``choices``, ``trans``, ``reps`` as read-only mappings over the arrays), and
:class:`DecisionTable`, the solved table as a policy for simulation (``run --policy optimal``): a reference state is
encoded into its row (:func:`row_of`) and its best choice read.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
from numba import njit

from sim.escape import kernel as K
from sim.escape.actions import joint_actions
from sim.escape.branching import new_branching
from sim.escape.exact_fast import (
    N_DYN,
    OK,
    OVER_EVENTS,
    Uncovered,
    decode,
    expand_states,
    initial_keys,
    play_choices,
    row_hash,
)
from sim.escape.params import N_SLOTS, EscapeParams
from sim.escape.solution import Solution
from sim.escape.state import ACTION_INDEX, REST, CharState, PartyState


def party_of(p: EscapeParams, st: K.Batch) -> PartyState:
    """Row 0 of a one-run batch as the reference's state (held items in item order)."""
    chars = []
    for i in range(p.n_chars):
        values = {name: int(st.chars[0, i, f]) for f, name in enumerate(K.CHAR_FIELDS[:N_DYN])}
        values["blessed"] = bool(values["blessed"])
        held = [k for k in range(p.n_items) for _ in range(int(st.held[0, i, k]))]
        chars.append(CharState(tiers=[int(t) for t in st.tiers[0, i]], acc=[int(a) for a in st.acc[0, i]],
                               streak=[int(s) for s in st.streak[0, i]], held=held, **values))
    return PartyState(chars, int(st.runs[0, K.ATTENTION]), [int(x) for x in st.item_left[0]],
                      round=int(st.runs[0, K.ROUNDS]))


def plan_of(p: EscapeParams, st: PartyState, joint: tuple) -> np.ndarray:
    """A joint choice as the kernel's plan rows (P_KIND .. P_TERRAIN); a release item by its item number."""
    plan = np.full((p.n_chars, K.N_PLAN), -1, dtype=np.int64)
    plan[:, K.P_BREATH:] = 0
    for i, a in enumerate(joint):
        if a is None:
            continue
        item = st.chars[i].held[a.item] if a.kind == "use_item" else -1
        plan[i] = (ACTION_INDEX[a.kind], a.slot, a.ability, a.target, item, int(a.breath), int(a.rage),
                   int(a.terrain))
    return plan


def char_width(p: EscapeParams) -> int:
    """The columns of one character in a state row (:func:`sim.escape.exact_fast.encode`)."""
    return 3 * N_SLOTS + N_DYN + p.n_items


#: the kernel's character fields the legal actions read (R-ESC-6 through :mod:`sim.escape.actions` and the
#: predicates of :mod:`sim.escape.state`; R-ESC-14, R-ESC-14a, R-ESC-14b): uses left (breath, rage, terrain, channel,
#: ki, inspire) and the inspiration die held; not composure, acc, streak, the blessing or the attention
LEGALITY_FIELDS = (K.BREATH, K.RAGE, K.TERRAIN, K.CHANNEL_LEFT, K.KI, K.INSPIRE_LEFT, K.INSP_DIE)


def legality_columns(p: EscapeParams) -> tuple[np.ndarray, np.ndarray]:
    """The columns of a state row the legal actions read (every character's tiers, :data:`LEGALITY_FIELDS`, held
    items per item: R-ESC-10) and, apart, each character's dazed-rounds column (read as dazed or not, R-ESC-12).
    States with the same projection share one list of joint choices (tests/escape/test_optimal_table.py compares it
    with a direct call on every solved state)."""
    w, cols, dazed = char_width(p), [], []
    for i in range(p.n_chars):
        x = i * w
        cols += [x + 3 * s for s in range(N_SLOTS)]
        cols += [x + 3 * N_SLOTS + f for f in LEGALITY_FIELDS]
        cols += [x + 3 * N_SLOTS + N_DYN + k for k in range(p.n_items)]
        dazed.append(x + 3 * N_SLOTS + K.DAZED_LEFT)
    return np.array(cols, dtype=np.int64), np.array(dazed, dtype=np.int64)


def row_of(p: EscapeParams, st: PartyState, played: int) -> bytes:
    """A reference state with ``played`` rounds played as the compiled engine's state row (the Python twin of
    :func:`sim.escape.exact_fast.encode`; tests check it against every solved state): the decision table reads the
    reference's states with it."""
    row: list[int] = []
    for c in st.chars:
        for s in range(N_SLOTS):
            row += (c.tiers[s], c.acc[s], c.streak[s])
        for name in K.CHAR_FIELDS[:N_DYN]:
            v = int(getattr(c, name))
            row.append(max(0, v - played) if name == "immune_until" else v)  # R-ESC-14: immunity as rounds left
        counts = [0] * p.n_items
        for k in c.held:
            counts[k] += 1
        row += counts
    row += [int(x) for x in st.item_left]
    row.append(int(st.attention) if p.attention_limit else 0)  # R-ESC-9a: only a limit reads the attention
    return np.array(row, dtype=np.int16).tobytes()


#: default budgets of optimal play on the compiled engine (measured in bench/escape_exact.py): states whose choices
#: are played, summed over the rounds (the solved table is arrays: about 1-7 KB a state with its choices and their
#: next states, so 250,000 states stay under 2 GB), and replays of every choice of every state (0.5-1.3
#: microseconds each with the merging: 50 million take 25-65 s)
OPTIMAL_MAX_STATES = 250_000
OPTIMAL_MAX_BRANCHES = 50_000_000
#: replays allowed per state when a state budget is given without a branch budget (``--max-states`` alone)
OPTIMAL_BRANCHES_PER_STATE = 800
#: the budgets beside a simulation (report, studio, sweeps, tune; :class:`sim.escape.exact.AutoBudget`): about a
#: second of CPU
OPTIMAL_AUTO_MAX_STATES = 20_000
OPTIMAL_AUTO_MAX_BRANCHES = 2_500_000


def budgets(max_states: int | None, max_branches: int | None, beside_simulation: bool) -> tuple[int, int]:
    """(states, replays) optimal play may use: the defaults, the budgets beside a simulation, or those given (a
    state budget alone allows :data:`OPTIMAL_BRANCHES_PER_STATE` replays a state)."""
    if beside_simulation and max_branches is None:
        return OPTIMAL_AUTO_MAX_STATES, OPTIMAL_AUTO_MAX_BRANCHES
    states = OPTIMAL_MAX_STATES if max_states is None else int(max_states)
    if max_branches is not None:
        return states, int(max_branches)
    if max_states is None:
        return states, OPTIMAL_MAX_BRANCHES
    return states, max(1, OPTIMAL_BRANCHES_PER_STATE * states)


PROBE_CHOICES = 16  # joint choices of a state played first to project the rest (:meth:`CompiledForward._project`)


@njit(cache=True)
def reach(layer, cfirst, ccount, c_first, s_id, n_rows):
    """The states any choice of a state of ``layer`` reaches (the next layer), in state order."""
    mark = np.zeros(n_rows, dtype=np.bool_)
    for sid in layer:
        for c in range(cfirst[sid], cfirst[sid] + ccount[sid]):
            for e in range(c_first[c], c_first[c + 1]):
                mark[s_id[e]] = True
    return np.flatnonzero(mark)


@njit(cache=True)
def backward_round(layer, cfirst, ccount, c_first, c_esc, s_id, s_p, v_next, last, not_caught, tie):  # noqa: PLR0913
    """One round of backward induction: the value and best choice of each state of ``layer``. A choice's value is
    its probability escaped plus the expected value of its next states in the next round (``v_next``, by state); in
    the last round (``last``) a next state is worth 1 under ``not_caught`` (bound, never caught), else 0. The best
    is the first choice worth more than every earlier one by ``tie`` (the reference-driven solver's order)."""
    value = np.empty(layer.shape[0])
    best = np.empty(layer.shape[0], dtype=np.int32)
    for j in range(layer.shape[0]):
        sid = layer[j]
        best_k, best_v = 0, -1.0
        for k in range(ccount[sid]):
            c = cfirst[sid] + k
            cont = 0.0
            if not last:
                for e in range(c_first[c], c_first[c + 1]):
                    cont += s_p[e] * v_next[s_id[e]]
            elif not_caught:
                for e in range(c_first[c], c_first[c + 1]):
                    cont += s_p[e]
            v = c_esc[c] + cont
            if v > best_v + tie:
                best_k, best_v = k, v
        value[j] = best_v
        best[j] = best_k
    return value, best


@njit(cache=True)
def push_round(layer, best, dist, cfirst, c_first, c_esc, c_cau, s_id, s_p):  # noqa: PLR0913
    """One round of play under the best choices: the distribution over next states and the probability escaped
    and caught in the round."""
    nxt = np.zeros(dist.shape[0])
    esc = cau = 0.0
    for j in range(layer.shape[0]):
        sid = layer[j]
        w = dist[sid]
        if w == 0.0:
            continue
        c = cfirst[sid] + best[j]
        esc += w * c_esc[c]
        cau += w * c_cau[c]
        for e in range(c_first[c], c_first[c + 1]):
            nxt[s_id[e]] += w * s_p[e]
    return nxt, esc, cau


class CompiledForward:
    """The forward pass: per round, every state reachable under some choice, the choices of each and their
    outcomes (compressed arrays, :func:`sim.escape.exact_fast.expand_states`), within the budgets (states: expanded,
    summed over rounds; branches: replays of every choice)."""

    def __init__(self, p: EscapeParams, started: float, budget: int, branch_budget: int, refuse,  # noqa: PLR0913
                 forbidden: frozenset = frozenset()):
        self.p, self.started, self.budget, self.branch_budget, self.refuse = p, started, budget, branch_budget, refuse
        self.forbidden = forbidden  # options of play taken away (restricted play, the balance audit)
        if int(np.max(np.abs(p.comp_max), initial=0)) > 30000:
            raise Uncovered("composure beyond the compiled engine's int16 state")
        self.R = K.rules_of(p)
        self.st, self.sc, self.b = K.initial_batch(p, 1), K.new_scratch(p), new_branching()
        self.limit_on = bool(p.attention_limit)
        first = initial_keys(p)
        self.rows = np.empty((1024, first.shape[1]), dtype=np.int16)
        self.rows[0] = first[0]
        self.table = np.full(2048, -1, dtype=np.int64)
        self.table[np.int64(row_hash(first[0]) & np.uint64(2047))] = 0
        self.n_rows = 1
        self.cfirst = np.full(1024, -1, dtype=np.int64)  # state -> its first choice (-1: not expanded)
        self.ccount = np.zeros(1024, dtype=np.int64)
        self.proj_of = np.full(1024, -1, dtype=np.int64)  # state -> its legality projection
        self.first_round = np.zeros(1024, dtype=np.int64)  # state -> the round whose layer first holds it
        self.first_round[0] = 1
        self.c_first, self.c_esc, self.c_cau = np.zeros(1024, dtype=np.int64), np.zeros(1024), np.zeros(1024)
        self.s_id, self.s_p = np.zeros(4096, dtype=np.int32), np.zeros(4096)
        self.n_ch = self.n_s = 0
        self.cols, self.dazed_cols = legality_columns(p)
        self.projections: dict[bytes, int] = {}  # a projection's bytes -> its number
        self.opts: list[list[tuple]] = []  # projection -> its joint choices
        self.plans = np.zeros((0, p.n_chars, K.N_PLAN), dtype=np.int64)
        self.plan_first = np.zeros(1, dtype=np.int64)
        self.layers: list[np.ndarray] = [np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)]
        self.expanded = self.branches = 0
        self.per_state: float | None = None

    def _fit(self) -> None:
        """The per-state arrays as long as the state table."""
        need = self.rows.shape[0]
        if self.cfirst.shape[0] < need:
            extra = need - self.cfirst.shape[0]
            self.cfirst = np.concatenate([self.cfirst, np.full(extra, -1, dtype=np.int64)])
            self.ccount = np.concatenate([self.ccount, np.zeros(extra, dtype=np.int64)])
            self.proj_of = np.concatenate([self.proj_of, np.full(extra, -1, dtype=np.int64)])
            self.first_round = np.concatenate([self.first_round, np.zeros(extra, dtype=np.int64)])

    def round(self, rnd: int, more: bool) -> None:
        """Expand the states of ``layers[rnd]`` not expanded yet (memoized across rounds); the next layer holds
        every state their choices reach."""
        layer = self.layers[rnd]
        todo = layer[self.cfirst[layer] < 0]
        states = self.expanded + len(todo)
        if states > self.budget:
            raise self.refuse(rnd, "states", states, self.branches, True, None)
        if self.per_state is not None and self.branches + len(todo) * self.per_state > 1.25 * self.branch_budget:
            projected = self.branches + len(todo) * self.per_state
            eta = (time.perf_counter() - self.started) / max(1, self.branches) * len(todo) * self.per_state
            raise self.refuse(rnd, "branches", states, int(projected), True, eta)
        if len(todo):
            self._expand(todo, rnd)
        if more:
            nxt = reach(layer, self.cfirst, self.ccount, self.c_first, self.s_id, self.n_rows)
            fresh = nxt[self.first_round[nxt] == 0]
            self.first_round[fresh] = rnd + 1
            self.layers.append(nxt)
        else:
            self.layers.append(np.zeros(0, dtype=np.int64))

    def _projections(self, todo: np.ndarray, rnd: int) -> np.ndarray:
        """The legality projection of each state of ``todo``, the legal joint choices of a new one asked of
        :func:`sim.escape.actions.joint_actions` on one of its states (R-ESC-6)."""
        keys = self.rows[todo][:, self.cols]
        dazed = self.rows[todo][:, self.dazed_cols] > 0
        raw = np.ascontiguousarray(np.concatenate([keys, dazed.astype(np.int16)], axis=1))
        found = self.projections
        width = raw.shape[1] * raw.itemsize
        blob = raw.tobytes()
        proj = np.empty(len(todo), dtype=np.int64)
        for j in range(len(todo)):
            key = blob[j * width:(j + 1) * width]
            pid = found.get(key)
            if pid is None:
                pid = found[key] = self._new_projection(int(todo[j]), rnd)
            proj[j] = pid
        return proj

    def _new_projection(self, sid: int, rnd: int) -> int:
        p = self.p
        decode(self.rows[sid], self.st, 0, p.n_chars, p.n_items, rnd - 1)
        st = party_of(p, self.st)
        opts = joint_actions(p, st, rnd, tuple(c.dazed_left > 0 for c in st.chars), self.forbidden)
        self._project(st, opts, sid, rnd)
        plans = np.stack([plan_of(p, st, joint) for joint in opts])
        self.opts.append(opts)
        self.plans = np.concatenate([self.plans, plans])
        self.plan_first = np.append(self.plan_first, len(self.plans))
        return len(self.opts) - 1

    def _project(self, st: PartyState, opts: list, sid: int, rnd: int) -> None:
        """Before the choices of a new projection with many joint choices are played (a party of four has
        thousands), play its first :data:`PROBE_CHOICES` on this state and refuse when the replays of all of them,
        projected from those, would pass the branch budget: a refusal in a fraction of a second."""
        if len(opts) <= PROBE_CHOICES:
            return
        probe = np.stack([plan_of(self.p, st, joint) for joint in opts[:PROBE_CHOICES]])
        played = play_choices(self.R, self.rows[sid], probe, rnd - 1, self.limit_on, self.st, self.sc, self.b,
                              self.p.n_chars, self.p.n_items)[5]
        projected = self.branches + int(played) * len(opts) / PROBE_CHOICES
        if projected > 1.25 * self.branch_budget:
            raise self.refuse(rnd, "branches", self.expanded + 1, int(projected), True, None)

    def _expand(self, todo: np.ndarray, rnd: int) -> None:
        p = self.p
        proj = self._projections(todo, rnd)
        self.proj_of[todo] = proj
        (self.table, self.rows, self.n_rows, self.c_first, self.c_esc, self.c_cau, self.n_ch, self.s_id, self.s_p,
         self.n_s, played, status, done) = expand_states(
            self.R, todo, proj, self.plans, self.plan_first, rnd - 1, self.limit_on, self.st, self.sc, self.b,
            p.n_chars, p.n_items, self.table, self.rows, self.n_rows, self.cfirst, self.ccount, self.c_first,
            self.c_esc, self.c_cau, self.n_ch, self.s_id, self.s_p, self.n_s, self.branch_budget - self.branches)
        self.branches += int(played)
        self._fit()
        if status == OVER_EVENTS:
            raise Uncovered("a round with more random events than the compiled source holds")
        if status != OK:
            raise self.refuse(rnd, "branches", self.expanded + int(done), self.branches, False, None)
        self.expanded += len(todo)
        self.per_state = int(played) / len(todo)

    def solution(self, kind: str, horizon: int) -> CompiledSolution:
        """Backward induction over the layers (:func:`backward_round`), last round first."""
        sol = CompiledSolution(self, kind, horizon)
        v_next = np.zeros(self.n_rows)
        for rnd in range(horizon, 0, -1):
            layer = self.layers[rnd]
            value, best = backward_round(layer, self.cfirst, self.ccount, self.c_first, self.c_esc, self.s_id,
                                         self.s_p, v_next, rnd == horizon, kind == "not_caught", TIE)
            sol.values[rnd], sol.bests[rnd] = value, best
            v_next = np.zeros(self.n_rows)
            v_next[layer] = value
        return sol


TIE = 1e-12  # as sim.escape.optimal.TIE: a later choice is best only when worth more than this above the earlier


# ---------------------------------------------------------------------------------------------
# the solved table, read like the reference-driven solver's Solution


class _Choices(Mapping):
    """state -> its joint choices (the list of its legality projection)."""

    def __init__(self, f: CompiledForward):
        self.f = f

    def __getitem__(self, sid):
        f = self.f
        if not 0 <= sid < f.n_rows or f.cfirst[sid] < 0:
            raise KeyError(sid)
        return f.opts[f.proj_of[sid]]

    def __iter__(self):
        return iter(np.flatnonzero(self.f.cfirst[:self.f.n_rows] >= 0).tolist())

    def __len__(self):
        return self.f.expanded


class _Trans(Mapping):
    """(state, choice) -> ([(next state, probability)], escaped, caught)."""

    def __init__(self, f: CompiledForward):
        self.f = f

    def __getitem__(self, key):
        f, (sid, k) = self.f, key
        if not 0 <= sid < f.n_rows or f.cfirst[sid] < 0 or not 0 <= k < f.ccount[sid]:
            raise KeyError(key)
        c = int(f.cfirst[sid] + k)
        lo, hi = int(f.c_first[c]), int(f.c_first[c + 1])
        succ = list(zip(f.s_id[lo:hi].tolist(), f.s_p[lo:hi].tolist(), strict=True))
        return succ, float(f.c_esc[c]), float(f.c_cau[c])

    def __iter__(self):
        f = self.f
        for sid in np.flatnonzero(f.cfirst[:f.n_rows] >= 0).tolist():
            for k in range(int(f.ccount[sid])):
                yield sid, k

    def __len__(self):
        return self.f.n_ch


class _ByRound(Mapping):
    """(state, round) -> its value or best choice (``rounds[r]``: aligned with the sorted ``layers[r]``)."""

    def __init__(self, layers: list[np.ndarray], rounds: dict[int, np.ndarray], cast):
        self.layers, self.rounds, self.cast = layers, rounds, cast

    def __getitem__(self, key):
        sid, rnd = key
        if rnd not in self.rounds:
            raise KeyError(key)
        layer = self.layers[rnd]
        j = int(np.searchsorted(layer, sid))
        if j >= len(layer) or layer[j] != sid:
            raise KeyError(key)
        return self.cast(self.rounds[rnd][j])

    def __iter__(self):
        for rnd in sorted(self.rounds):
            for sid in self.layers[rnd].tolist():
                yield sid, rnd

    def __len__(self):
        return sum(len(self.layers[r]) for r in self.rounds)


class _Reps(Mapping):
    """state -> its :class:`PartyState`, decoded on first read with the rounds played of the layer that first holds
    it (the balance audit and the comparison read a few)."""

    def __init__(self, f: CompiledForward):
        self.f, self.cache = f, {}

    def __getitem__(self, sid):
        f = self.f
        if not 0 <= sid < f.n_rows:
            raise KeyError(sid)
        st = self.cache.get(sid)
        if st is None:
            played = max(0, int(f.first_round[sid]) - 1) if f.first_round[sid] else len(f.layers) - 2
            decode(f.rows[sid], f.st, 0, f.p.n_chars, f.p.n_items, played)
            st = self.cache[sid] = party_of(f.p, f.st)
        return st

    def __iter__(self):
        return iter(range(self.f.n_rows))

    def __len__(self):
        return self.f.n_rows


class CompiledSolution(Solution):
    """The solved decision problem on the compiled engine: :class:`~sim.escape.optimal.Solution`'s mappings over
    the arrays of :class:`CompiledForward` (``ids`` empty: a reference state is found by :func:`row_of`)."""

    def __init__(self, f: CompiledForward, kind: str, horizon: int):
        self.values: dict[int, np.ndarray] = {}
        self.bests: dict[int, np.ndarray] = {}
        super().__init__(f.p, kind, horizon, _Reps(f), f.layers, _Choices(f), _Trans(f),
                         value=_ByRound(f.layers, self.values, float), best=_ByRound(f.layers, self.bests, int),
                         ids={}, states=f.expanded, branches=f.branches, engine="compiled")
        self.fwd = f

    def q(self, sid: int, rnd: int, k: int) -> float:
        f = self.fwd
        c = int(f.cfirst[sid] + k)
        lo, hi = int(f.c_first[c]), int(f.c_first[c + 1])
        cont = 0.0
        if rnd < self.horizon:
            layer = self.layers[rnd + 1]
            vals = self.values[rnd + 1][np.searchsorted(layer, f.s_id[lo:hi])]
            cont = sum((f.s_p[lo:hi] * vals).tolist())
        elif self.objective == "not_caught":
            cont = sum(f.s_p[lo:hi].tolist())
        return float(f.c_esc[c]) + cont

    def summary(self) -> dict:
        """:func:`sim.escape.optimal.play_summary` on the arrays (:func:`push_round`)."""
        f, p = self.fwd, self.params
        dist = np.zeros(f.n_rows)
        dist[0] = 1.0
        escaped_at = [0.0] * (p.max_rounds + 1)
        caught = 0.0
        for rnd in range(1, self.horizon + 1):
            dist, esc, cau = push_round(self.layers[rnd], self.bests[rnd], dist, f.cfirst, f.c_first, f.c_esc,
                                        f.c_cau, f.s_id, f.s_p)
            escaped_at[rnd] = esc
            caught += cau
        return escaped_at, caught, float(dist.sum())

    def table(self) -> DecisionTable:
        return DecisionTable(self)


class DecisionTable:
    """The solved table as a policy for the scalar reference (``run --policy optimal``, the studio, ``tune``): the
    state rows, the layers and best choices by round and the joint choices by legality projection; small and
    picklable (sent to every chunk). A reference state is encoded into its row (:func:`row_of`) and found by it."""

    engine = "compiled"

    def __init__(self, sol: CompiledSolution):
        f = sol.fwd
        self.params, self.horizon = sol.params, sol.horizon
        self.rows = f.rows[:f.n_rows].copy()
        self.layers = {r: sol.layers[r] for r in sol.bests}
        self.best = dict(sol.bests)
        self.proj_of = f.proj_of[:f.n_rows].copy()
        self.opts = f.opts
        self._index: dict[bytes, int] | None = None

    def __getstate__(self):
        return {**self.__dict__, "_index": None}

    def state_number(self, st: PartyState, played: int) -> int | None:
        if self._index is None:
            blob, w = self.rows.tobytes(), self.rows.shape[1] * 2
            self._index = {blob[j * w:(j + 1) * w]: j for j in range(len(self.rows))}
        return self._index.get(row_of(self.params, st, played))

    def decide(self, st: PartyState, rnd: int) -> tuple | None:
        """The best joint choice of reference state ``st`` at round ``rnd`` (None: a state the table does not
        hold, past the objective's horizon), release items numbered as in ``st``'s held list."""
        sid = self.state_number(st, rnd - 1)
        layer = self.layers.get(rnd)
        if sid is None or layer is None:
            return None
        j = int(np.searchsorted(layer, sid))
        if j >= len(layer) or layer[j] != sid:
            return None
        joint = self.opts[self.proj_of[sid]][int(self.best[rnd][j])]
        return tuple(_held_as_in(st, i, a) for i, a in enumerate(joint))

    def policy(self):
        def policy(view):
            joint = self.decide(view.state, view.round)
            if joint is None:
                return [None if d else REST for d in view.dazed]
            return list(joint)

        return policy


def _held_as_in(st: PartyState, i: int, a):
    """A use_item choice names a held item by its place among the held items in item order (:func:`party_of`); in
    ``st`` the same item may sit elsewhere in the held list."""
    if a is None or a.kind != "use_item":
        return a
    return replace(a, item=st.chars[i].held.index(sorted(st.chars[i].held)[a.item]))


__all__ = ["CompiledForward", "CompiledSolution", "DecisionTable", "party_of", "plan_of", "row_of"]
