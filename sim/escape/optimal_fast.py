"""Optimal play on the compiled exact engine (issue 35 item 3): the forward pass of :mod:`sim.escape.optimal`, with
the round of each (state, joint choice) played by the batch kernel on the exact random source
(:func:`sim.escape.exact_fast.play_choices`, kernel policy FIXED: the declaration given) instead of the scalar
reference. The legal choices come from the one legal-action source (:func:`sim.escape.actions.joint_actions`, R-ESC-5,
R-ESC-6), read on each state decoded into a :class:`~sim.escape.state.PartyState`; the backward pass and the
summary are :mod:`sim.escape.optimal`'s own.

A state's choices and their outcomes are computed once and reused in every round it is reached (a row means the
same state in every round: focus immunity is kept as rounds left; the last round's timeout changes only how a
next state is counted, which the backward pass does by the round). The result is a :class:`~sim.escape.optimal.Solution`
whose ``ids`` are left empty: the decision table for ``run --policy optimal`` and the policy comparison stay on the
reference-driven solver.
"""

from __future__ import annotations

import time

import numpy as np

from sim.escape import kernel as K
from sim.escape.actions import joint_actions
from sim.escape.branching import new_branching
from sim.escape.exact_fast import N_DYN, Uncovered, decode, initial_keys, play_choices
from sim.escape.params import EscapeParams
from sim.escape.state import ACTION_INDEX, CharState, PartyState


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


def legality_key(st: PartyState) -> tuple:
    """What the legal actions of a state read (R-ESC-6 through :mod:`sim.escape.actions` and the predicates of
    :mod:`sim.escape.state`): every character's tiers, uses left (breath, rage, terrain, channel, ki, inspire), the
    inspiration die held, the release items held and whether it is dazed; not composure, acc, streak, the
    blessing or the attention. States with the same key share one list of joint choices (the tests compare the
    optimal values with the reference-driven solver's, which enumerates every state)."""
    return tuple((tuple(c.tiers), c.breath, c.rage, c.terrain, c.channel, c.ki, c.inspire, c.insp_die, tuple(c.held),
                  c.dazed_left > 0) for c in st.chars)


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


#: default budgets of optimal play on the compiled engine: replays of every choice of every state (about 20 s),
#: and distinct states: the solved table is Python objects of 15-35 KB a state (choices, outcomes), so 60,000
#: states keep the memory under about 2 GB
OPTIMAL_MAX_BRANCHES = 50_000_000
OPTIMAL_MAX_STATES = 60_000
PROBE_CHOICES = 16  # joint choices of a state played first to project the rest (:meth:`CompiledForward._project`)


class _Reps(dict):
    """State number -> its :class:`PartyState`: the states a round expands are stored as they are decoded; a
    state reached but never expanded (after the last round, read by the balance audit's early events) is
    decoded on first read, with the rounds played of the layer that reached it (the horizon after the last)."""

    def __init__(self, fwd: CompiledForward):
        super().__init__()
        self.fwd = fwd

    def __missing__(self, sid: int) -> PartyState:
        f = self.fwd
        if not 0 <= sid < len(f.rows):
            raise KeyError(sid)
        # layers[r] holds the states at the start of round r (r - 1 played); the last round appends an empty layer
        played = next((r - 1 for r, layer in enumerate(f.layers) if r and sid in layer), len(f.layers) - 2)
        decode(f.rows[sid], f.st, 0, f.p.n_chars, f.p.n_items, played)
        st = self[sid] = party_of(f.p, f.st)
        return st


class CompiledForward:
    """The forward pass: per round, every state reachable under some choice, the choices of each and their
    outcomes, within the budgets (states: summed over rounds; branches: replays of every choice)."""

    def __init__(self, p: EscapeParams, started: float, budget: int, branch_budget: int, refuse,  # noqa: PLR0913
                 forbidden: frozenset = frozenset()):
        self.p, self.started, self.budget, self.branch_budget, self.refuse = p, started, budget, branch_budget, refuse
        self.forbidden = forbidden  # options of play taken away (restricted play, the balance audit)
        if int(np.max(np.abs(p.comp_max), initial=0)) > 30000:
            raise Uncovered("composure beyond the compiled engine's int16 state")
        self.R = K.rules_of(p)
        self.st, self.sc, self.b = K.initial_batch(p, 1), K.new_scratch(p), new_branching()
        self.limit_on = bool(p.attention_limit)
        self.rows = [initial_keys(p)[0]]  # state number -> its row
        self.ids: dict[bytes, int] = {self.rows[0].tobytes(): 0}  # a row -> its state number
        self.legal: dict[tuple, tuple] = {}  # legality_key -> (joint choices, their plan rows)
        self.reps: dict[int, PartyState] = _Reps(self)  # every reached state, decoded on first read
        self.choices: dict[int, list[tuple]] = {}
        self.trans: dict[tuple[int, int], tuple[list, float, float]] = {}
        self.layers: list[list[int]] = [[], [0]]
        self.branches = 0
        self.per_state: float | None = None

    def round(self, rnd: int, more: bool) -> None:
        """Expand the states of ``layers[rnd]`` not expanded yet (a state's choices and outcomes do not depend on
        the round: memoized); the next layer holds every state their choices reach."""
        todo = [sid for sid in self.layers[rnd] if sid not in self.choices]
        states = len(self.choices) + len(todo)
        if states > self.budget:
            raise self.refuse(rnd, "states", states, self.branches, True, None)
        if self.per_state is not None and self.branches + len(todo) * self.per_state > 1.25 * self.branch_budget:
            projected = self.branches + len(todo) * self.per_state
            eta = (time.perf_counter() - self.started) / max(1, self.branches) * len(todo) * self.per_state
            raise self.refuse(rnd, "branches", states, int(projected), True, eta)
        before = self.branches
        for sid in todo:
            self._expand(sid, rnd)
            if self.branches > self.branch_budget:
                raise self.refuse(rnd, "branches", states, self.branches, False, None)
        if todo:
            self.per_state = (self.branches - before) / len(todo)
        reached: dict[int, None] = {}
        if more:
            for sid in self.layers[rnd]:
                for k in range(len(self.choices[sid])):
                    for sid2, _ in self.trans[(sid, k)][0]:
                        reached[sid2] = None
        self.layers.append(list(reached))

    def _project(self, st: PartyState, opts: list, sid: int, rnd: int) -> None:
        """Before a state with many joint choices is expanded (a party of four has thousands), play its first
        :data:`PROBE_CHOICES` and refuse when the replays of all of them, projected from those, would pass the
        branch budget: a refusal in a fraction of a second, as the reference-driven solver projects its own."""
        if len(opts) <= PROBE_CHOICES:
            return
        probe = np.stack([plan_of(self.p, st, joint) for joint in opts[:PROBE_CHOICES]])
        played = play_choices(self.R, self.rows[sid], probe, rnd - 1, self.limit_on, self.st, self.sc, self.b,
                              self.p.n_chars, self.p.n_items)[5]
        projected = self.branches + int(played) * len(opts) / PROBE_CHOICES
        if projected > 1.25 * self.branch_budget:
            raise self.refuse(rnd, "branches", len(self.choices) + 1, int(projected), True, None)
        decode(self.rows[sid], self.st, 0, self.p.n_chars, self.p.n_items, rnd - 1)  # the probe moved the batch

    def _expand(self, sid: int, rnd: int) -> None:
        p, ids = self.p, self.ids
        decode(self.rows[sid], self.st, 0, p.n_chars, p.n_items, rnd - 1)
        st = self.reps[sid] = party_of(p, self.st)
        lkey = legality_key(st)
        known = self.legal.get(lkey)
        if known is None:
            opts = joint_actions(p, st, rnd, tuple(c.dazed_left > 0 for c in st.chars), self.forbidden)
            self._project(st, opts, sid, rnd)
            known = self.legal[lkey] = (opts, np.stack([plan_of(p, st, joint) for joint in opts]))
        opts, plans = known
        self.choices[sid] = opts
        out, out_p, first, esc, cau, played, overflow = play_choices(
            self.R, self.rows[sid], plans, rnd - 1, self.limit_on, self.st, self.sc, self.b, p.n_chars, p.n_items)
        if overflow:
            raise Uncovered("a round with more random events than the compiled source holds")
        self.branches += int(played)
        keys = [row.tobytes() for row in out]
        probs = out_p.tolist()
        for k in range(len(opts)):
            succ = []
            for x in range(int(first[k]), int(first[k + 1])):
                sid2 = ids.get(keys[x])
                if sid2 is None:
                    sid2 = ids[keys[x]] = len(self.rows)
                    self.rows.append(out[x].copy())
                succ.append((sid2, probs[x]))
            self.trans[(sid, k)] = (succ, float(esc[k]), float(cau[k]))


__all__ = ["CompiledForward", "party_of", "plan_of"]
