"""Optimal play of a one-PC campus game: the best clear rate any policy can reach, by backward induction over
the 12 turns (R-CAM-5) and over every legal choice of the PC side in each turn: the destination among the
options, the growth spending (every split of its gp over the three abilities, R-CAM-5 step 3) and the stance
(R-CAM-2). It sees what the rules let the policy see (R-CAM-51): the options always, the placements only with
early ears. Rescue has nobody to rescue with one PC and purchases are refused (as in :mod:`sim.campus.exact`).

The turns are the exact engine's (:class:`sim.campus.exact.Turn`, written from the rules): the value of a
choice is the sum over its branches of probability x the value of where it leads (1 for cleared, 0 for game
over or captured at the end). The adversaries draw their stances from their weights (R-CAM-21).

Only abilities up to a cap matter: beyond the smallest base that wins every duel in a stance against every
adversary stance, passes every mission in it, and (for the smallest ability) every escape check, plus every
ability penalty missions can take, more cannot change an outcome, so spending stops at the cap (the gp is
kept, which is never worse) and states are merged with their abilities clipped to it.
"""

from __future__ import annotations

import itertools
import time

from sim.campus.exact import (
    CAPTURED,
    CLEARED,
    DEFAULT_MAX_STATES,
    STANCES,
    BuiltinPolicy,
    CampusExactRefused,
    Game,
    Rules,
    Turn,
    options,
    refusal,
)
from sim.campus.exact import (
    exact as exact_game,
)
from sim.campus.model import check_scenario
from sim.campus.params import compile_params
from sim.campus.stances import maximin_float
from sim.errors import ScenarioError
from sim.labels import fixed
from sim.report import answer, atomic_write_text, section, summary_json, table, write_html

OBJECTIVES = ("clear_rate",)
#: how the adversaries take their stances: drawn from their weights (R-CAM-21, R-CAM-7 "random") or chosen to
#: minimise the PC's value (the robust mode, ``python -m sim optimal --adversary best``)
ADVERSARIES = ("random", "best")


def parse_objective(objective: str | None, max_rounds: int | None = None) -> tuple[str, int | None]:
    """Campus optimal play maximises the clear rate; another name raises :class:`ScenarioError` (one line)."""
    if objective in (None, "clear_rate"):
        return "clear_rate", max_rounds
    raise ScenarioError(f"objective {objective!r}: campus optimal play takes clear_rate", key="objective")


def caps(r: Rules) -> tuple[int, int, int]:
    """Per stance, the base ability beyond which more changes no outcome (see the module's docstring)."""
    p = r.p
    slack = sum(int(p.mis_pen_amount[m]) * (int(p.mis_last[m]) - int(p.mis_first[m]) + 1) for m in range(p.M)
                if int(p.mis_pen_ability[m]) >= 0)
    escape = r.T + max(r.offset) if r.rooms else 0
    out = []
    for s in range(3):
        need = escape
        for k, tp in r.templates.items():
            for s2 in range(3):
                if tp["probs"][s2]:
                    b = 0
                    while b < 10_000 and not r.wins(_at(s, b), s, k, s2):
                        b += 1
                    if b < 10_000:  # a duel no base wins asks nothing of the base
                        need = max(need, b)
        for m in range(p.M):
            if int(p.mis_stance[m]) == s:
                b = 0
                while b < 10_000 and r.pc_value(_at(s, b), s, None) < int(p.mis_target[m]):
                    b += 1
                if b < 10_000:
                    need = max(need, b)
        out.append(need + slack)
    return tuple(out)


def _at(s: int, b: int) -> tuple[int, int, int]:
    base = [0, 0, 0]
    base[s] = b
    return tuple(base)


class OptimalPolicy:
    """The solved table: ``value(t, state)`` the best clear probability from the start of turn t, and the
    argmax declaration of each (turn, state, options, placements seen)."""

    def __init__(self, rules: Rules, turn: Turn, max_states: int = DEFAULT_MAX_STATES):
        self.r, self.turn, self.max_states = rules, turn, max_states
        self.opts = [(float(pr), o) for pr, o in options(rules)]
        self.cap = caps(rules)
        self.memo: dict = {}
        self._q: dict = {}
        self._spends: dict = {}
        self._lay: dict = {}
        self._best: dict = {}
        self._game = Game(rules, BuiltinPolicy(rules), max_states)
        self._thresholds()

    def _thresholds(self) -> None:
        """The least base ability that wins each duel (per stance, over every template and adversary stance it
        may draw), that reaches each mission's target, and the escape checks' targets (R-CAM-11)."""
        r, p = self.r, self.r.p
        self.penalised = any(int(p.mis_pen_ability[m]) >= 0 for m in range(p.M))
        need = []
        for s in range(3):
            vals = set()
            for k, tp in r.templates.items():
                for s2 in range(3):
                    b = self._least(lambda b, k=k, s2=s2, s=s: r.wins(_at(s, b), s, k, s2))
                    if tp["probs"][s2] and b is not None:
                        vals.add(b)
            need.append(tuple(sorted(vals)))
        self.duel_need = tuple(need)
        self.mission_need = [self._least(lambda b, m=m: r.pc_value(_at(int(p.mis_stance[m]), b),
                                                                  int(p.mis_stance[m]), None) >= int(p.mis_target[m]))
                             or 0 for m in range(p.M)]
        self.escape_levels = sorted({t + off for t in range(1, r.T + 1) for off in (r.offset[x] for x in r.rooms)})
        # an unbeatable base: one stance winning every duel, every ability passing every escape check and mission
        floor = max(self.escape_levels, default=0)
        need = [floor] * 3
        for m in range(p.M):
            need[int(p.mis_stance[m])] = max(need[int(p.mis_stance[m])], self.mission_need[m])
        self.perfect = [tuple(max(need[j], self.duel_need[s][-1] if j == s and self.duel_need[s] else 0)
                              for j in range(3)) for s in range(3) if self._all_won(s)]
        # the clip is sound while gp never falls (no negative gp per turn, no ability penalty lifted by gp)
        self.gp_clip = bool(self.perfect) and r.gpt >= 0 and not self.penalised

    def _all_won(self, s: int) -> bool:
        """Whether some base wins every duel in stance s against every adversary stance with a chance."""
        r = self.r
        return all(self._least(lambda b, k=k, s2=s2: r.wins(_at(s, b), s, k, s2)) is not None
                   for k, tp in r.templates.items() for s2 in range(3) if tp["probs"][s2])

    def g_star(self, base) -> int:
        """The gp that makes ``base`` unbeatable (see :meth:`_thresholds`) at the least cost."""
        return min(sum(max(n - b, 0) for n, b in zip(need, base, strict=True)) for need in self.perfect)

    @staticmethod
    def _least(ok) -> int | None:
        """The least base in 0..10,000 for which ``ok`` holds (values grow with the base), None if none."""
        lo, hi = 0, 10_000
        if not ok(hi):
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def clip(self, base) -> tuple:
        return tuple(min(b, c) for b, c in zip(base, self.cap, strict=True))

    def layouts(self, t: int):
        if t not in self._lay:
            self._lay[t] = self._game.layouts(t)
        return self._lay[t]

    # --------------------------------------------------------------------- values
    def value(self, t: int, state) -> float:
        """The best clear probability of the PC in ``state`` at the start of turn t (R-CAM-5: free after turn T
        clears, captured does not)."""
        captured, vit, gp, base, room = state
        if t > self.r.T:
            return 0.0 if captured else 1.0
        if self.gp_clip and gp > 0:  # more gp than it takes to become unbeatable is worth no more
            state = (captured, vit, min(gp, self.g_star(base)), base, room)
        key = (t, state)  # bases are clipped to the caps from the first state on (spending stops there)
        v = self.memo.get(key)
        if v is None:
            if len(self.memo) >= self.max_states:
                raise CampusExactRefused(
                    f"optimal play refused in turn {t}: the state budget binds: more than {self.max_states:,} "
                    f"(turn, state) pairs (budget --max-states {self.max_states:,}); raise --max-states or use "
                    "Monte Carlo of the built-in policies (python -m sim run)", binds="states", flag="--max-states",
                    estimate=len(self.memo))
            v = self.memo[key] = self._value(t, state)
        return v

    def _value(self, t: int, state) -> float:
        if state[0]:
            return self.worth(t, self.turn.captive(t, state))
        lay, at = self.layouts(t)
        total = 0.0
        for po, opts in self.opts:
            if self.r.ears:
                total += po * sum(pl * self.best(t, state, opts, layout, at)[0] for pl, layout in lay)
            else:
                total += po * self.best(t, state, opts, None, at)[0]
        return total

    def q(self, t: int, vit: int, gp: int, base, dest: int, s: int, here: tuple) -> float:
        """The value of the rest of a free turn once declared (destination, spending, stance) and of what follows."""
        key = (t, vit, gp, base, dest, s, here)
        v = self._q.get(key)
        if v is None:
            v = self._q[key] = self.worth(t, self.turn.free(t, vit, gp, base, dest, s, here, self.r.ears))
        return v

    def worth(self, t: int, branches, clip: bool = False) -> float:
        """The value of a turn's branches followed by optimal play (``clip``: states of another policy, put in
        the table's terms first, :meth:`table_key`)."""
        out = 0.0
        for pr, outcome, _, _ in branches:
            if outcome[0] == "end":
                out += pr * (outcome[1] == CLEARED)
            else:
                out += pr * self.value(t + 1, self.table_key(outcome[1]) if clip else outcome[1])
        return out

    def table_key(self, state) -> tuple:
        """A state in the table's terms: abilities clipped to the caps, gp to what makes the PC unbeatable."""
        captured, vit, gp, base, room = state
        base = self.clip(tuple(base))
        if self.gp_clip and gp > 0:
            gp = min(gp, self.g_star(base))
        return (captured, vit, gp, base, room)

    def spends(self, t: int, gp: int, base, dest: int, s: int) -> list[tuple[int, tuple]]:
        """The growth spendings (R-CAM-5 step 3) that can be best in turn t at ``dest`` in stance s: every
        spending is matched, at no more cost, by one that raises the stance's ability to one of its duel
        thresholds (the least base that beats an adversary stance), the mission stances to their targets at
        ``dest``, and all three abilities to a floor that passes an escape check of a later turn, the rest of the
        gp kept: such a spending gives the same outcome in every duel and mission of this turn and every escape
        check while captured, and the kept gp can still buy the rest at the start of the next free turn. With
        ability penalties from missions (which shift the thresholds) every split up to the caps is tried."""
        if gp <= 0:
            return [(gp, base)]
        if self.penalised:
            return self.splits(gp, base)
        key = (t, gp, base, dest, s)
        hit = self._spends.get(key)
        if hit is None:
            hit = self._spends[key] = self._spends_of(t, gp, base, dest, s)
        return hit

    def _spends_of(self, t: int, gp: int, base, dest: int, s: int) -> list[tuple[int, tuple]]:
        p = self.r.p
        missions = [(int(p.mis_stance[m]), self.mission_need[m]) for m in range(p.M)
                    if int(p.mis_loc[m]) == dest and p.mis_first[m] <= t <= p.mis_last[m]]
        floors = [0] + [lv for lv in self.escape_levels if t < lv]
        out: dict[tuple, int] = {}
        for lv in floors:
            for need in (0,) + self.duel_need[s]:
                for chosen in itertools.product((False, True), repeat=len(missions)):  # each target or not
                    b = [max(x, lv) for x in base]
                    b[s] = max(b[s], need)
                    for (ms, mneed), take in zip(missions, chosen, strict=True):
                        if take:
                            b[ms] = max(b[ms], mneed)
                    cost = sum(b) - sum(base)
                    if cost <= gp:
                        out[tuple(b)] = gp - cost
        return [(g, b) for b, g in out.items()]

    def splits(self, gp: int, base) -> list[tuple[int, tuple]]:
        """Every growth spending (R-CAM-5 step 3): x, y, z gp to fight, flee, hide, x + y + z <= gp, none beyond
        the caps; gp <= 0: nothing to spend."""
        if gp <= 0:
            return [(gp, base)]
        room = [max(c - b, 0) for b, c in zip(base, self.cap, strict=True)]
        out = []
        for x in range(min(gp, room[0]) + 1):
            for y in range(min(gp - x, room[1]) + 1):
                for z in range(min(gp - x - y, room[2]) + 1):
                    out.append((gp - x - y - z, (base[0] + x, base[1] + y, base[2] + z)))
        return out

    def best(self, t: int, state, opts, layout, at) -> tuple[float, int, int, tuple, int]:
        """(value, destination, gp, base, stance) of the best declaration given what the PC sees."""
        top = None
        for dest in opts:  # the best at each destination is shared by every option set that offers it
            here = self.best_at(t, state, dest, layout[dest] if layout is not None else None, at)
            if top is None or here[0] > top[0] + 1e-12:
                top = here
        return top

    def best_at(self, t: int, state, dest: int, seen, at) -> tuple[float, int, int, tuple, int]:
        """The best declaration going to ``dest``; ``seen``: the templates placed there (early ears) or None."""
        key = (t, state, dest, seen)
        hit = self._best.get(key)
        if hit is None:
            _, vit, gp, base, _ = state
            heres = [(1.0, seen)] if seen is not None else at[dest]
            hit = self._best[key] = self.declare_at(t, vit, gp, base, dest, heres)
        return hit

    def declare_at(self, t: int, vit: int, gp: int, base, dest: int, heres) -> tuple[float, int, int, tuple, int]:
        """The best (value, destination, gp, base, stance) going to ``dest``, who is there drawn from ``heres``."""
        top = None
        for s in range(3):
            for g, b in self.spends(t, gp, base, dest, s):
                v = sum(ph * self.q(t, vit, g, b, dest, s, here) for ph, here in heres)
                if top is None or v > top[0] + 1e-12:
                    top = (v, dest, g, b, s)
        return top

    # --------------------------------------------------------------------- the table as a policy
    def free_branches(self, t: int, state, opts_dist, lay, at) -> list:
        """The branches of the solved declaration (for :class:`sim.campus.exact.Game`: the exact summary of
        optimal play)."""
        state = (state[0], state[1], state[2], self.clip(state[3]), state[4])
        out = []
        for po, opts in opts_dist:
            views = [(pl, layout) for pl, layout in lay] if self.r.ears else [(1.0, None)]
            for pl, layout in views:
                _, dest, g, b, s = self.best(t, state, opts, layout, at)
                heres = [(1.0, layout[dest])] if layout is not None else at[dest]
                for ph, here in heres:
                    w = po * pl * ph
                    out += [(w * q, o, c, d) for q, o, c, d in self.turn.free(t, state[1], g, b, dest, s, here,
                                                                              self.r.ears)]
        return out


class TablePolicy:
    """The solved table as the declaration of the scalar reference engine (``policy.name = "optimal"``, Monte
    Carlo of optimal play, :mod:`sim.campus.reference`): in turn t the PC in (vitality, gp, base) offered ``opts``
    and seeing ``layout`` (early ears) goes, spends and takes the stance the table holds best (R-CAM-5 step 2-3,
    R-CAM-51). The table's states have their abilities clipped to the caps and their gp to what makes the PC
    unbeatable (see :class:`OptimalPolicy`); the declaration is read there and applied to the PC's own numbers as
    the same raises. It draws nothing."""

    def __init__(self, pol: OptimalPolicy):
        self.pol = pol

    def declare(self, t: int, vit: int, gp: int, base, opts, layout) -> tuple[int, int, tuple, int]:
        """(destination, gp after growth, base after growth, stance)."""
        pol = self.pol
        _, _, g, cb, _ = key = pol.table_key((False, vit, gp, base, -1))
        _, at = pol.layouts(t)
        _, dest, g2, b2, s = pol.best(t, key, tuple(opts), layout if self.pol.r.ears else None, at)
        raised = tuple(int(x) + (y - c) for x, y, c in zip(base, b2, cb, strict=True))
        return dest, gp - (g - g2), raised, s


def with_policy(scenario, name: str):
    """A validated copy of ``scenario`` with ``policy.name = name`` (``run --policy optimal``: the solved table)."""
    out = scenario.model_copy(update={"policy": scenario.policy.model_copy(update={"name": name})})
    check_scenario(out)
    return out


class RobustPolicy(OptimalPolicy):
    """Optimal play against adversaries who choose their stances to minimise the PC's clear rate (``--adversary
    best``), instead of drawing them from their weights (R-CAM-21). Each free turn at the PC's destination is a
    zero-sum game (docs/decisions.md, Campus robust mode): the PC declares its destination, growth spending and a
    mixed stance (R-CAM-5 step 2); the adversaries know the state, that declaration and the mix, not the stance
    drawn from it, and the placement; each chooses one stance for the turn among those its weights allow (with
    one PC each adversary meets it at most once a turn, R-CAM-6/7). The payoff is the PC's value of what follows
    (this turn's missions, confrontations and the later turns, played the same way). Without early ears the PC
    mixes before knowing who is there, so it maximises the sum over the placements of the adversaries' minimum
    (:func:`sim.campus.stances.maximin_float`, the vertex enumeration of the ``equilibrium`` stance policy in
    floats). A declaration holds the mix instead of a stance."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._replies: dict = {}

    def replies(self, here: tuple) -> list[tuple]:
        """The adversaries' joint replies at a location: one stance per adversary among those with weight
        (R-CAM-21), as (template, stance) pairs; the same template's adversaries met in random order (R-CAM-6)
        count once per multiset of stances."""
        hit = self._replies.get(here)
        if hit is None:
            per = []
            for k in sorted(set(here)):
                allowed = [c for c in range(3) if self.r.templates[k]["probs"][c]]
                per.append([tuple((k, c) for c in cs) for cs in
                            itertools.combinations_with_replacement(allowed, here.count(k))])
            hit = self._replies[here] = [tuple(sorted(sum(parts, ()))) for parts in itertools.product(*per)]
        return hit

    def declare_at(self, t: int, vit: int, gp: int, base, dest: int, heres) -> tuple[float, int, int, tuple, tuple]:
        """The best declaration going to ``dest`` (value, destination, gp, base, mix)."""
        top = None
        for g, b in self.mixed_spends(t, gp, base, dest):
            ms = [[[ph * self.q(t, vit, g, b, dest, s, pairs) for pairs in self.replies(here)] for s in range(3)]
                  for ph, here in heres]
            x, v = maximin_float(ms)
            if top is None or v > top[0] + 1e-12:
                top = (v, dest, g, b, x)
        return top

    def mixed_spends(self, t: int, gp: int, base, dest: int) -> list[tuple[int, tuple]]:
        """The growth spendings that can be best with a mixed stance: all three abilities raised to a floor that
        passes an escape check of a later turn (or not), and each ability to one of its own thresholds at once
        (its duel thresholds, the targets of this turn's missions at ``dest`` in its stance) or not; every other
        spending gives the same outcomes at more cost (:meth:`OptimalPolicy.spends`). With ability penalties from
        missions every split up to the caps."""
        if gp <= 0:
            return [(gp, base)]
        if self.penalised:
            return self.splits(gp, base)
        p = self.r.p
        levels = []
        for j in range(3):
            need = set(self.duel_need[j]) | {self.mission_need[m] for m in range(p.M) if int(p.mis_stance[m]) == j
                                             and int(p.mis_loc[m]) == dest and p.mis_first[m] <= t <= p.mis_last[m]}
            levels.append([0] + sorted(v for v in need if v > base[j]))
        out: dict[tuple, int] = {}
        for floor in [0] + [lv for lv in self.escape_levels if t < lv]:
            for need in itertools.product(*levels):
                b = tuple(max(x, floor, n) for x, n in zip(base, need, strict=True))
                cost = sum(b) - sum(base)
                if cost <= gp:
                    out[b] = gp - cost
        return [(g, b) for b, g in out.items()]

    def free_branches(self, *args):
        raise CampusExactRefused("the robust mode (--adversary best) gives the value of optimal play against the "
                                 "adversaries' best stances; it is not played forward", binds="adversary")


def solve(scenario, max_states: int | None = None, adversary: str = "random") -> tuple[OptimalPolicy, float, float]:
    """The solved table, the optimal clear rate and the CPU seconds it took; ``adversary = "best"``: against
    adversaries choosing their stances to minimise it (:class:`RobustPolicy`)."""
    start = time.process_time()
    p = compile_params(scenario)
    why = refusal(p)
    if why is not None:
        raise why
    if adversary not in ADVERSARIES:
        raise ScenarioError(f"expected --adversary one of {', '.join(ADVERSARIES)}; given {adversary!r}",
                            key="--adversary")
    r = Rules(p)
    pol = (RobustPolicy if adversary == "best" else OptimalPolicy)(r, Turn(r), max_states or DEFAULT_MAX_STATES)
    v = pol.value(1, (False, r.vit0, 0, pol.clip(r.base0), -1))
    return pol, v, time.process_time() - start


def describe(r: Rules, decision) -> str:
    """A declaration in words; its stance, or a mix of stances (the robust mode)."""
    _, dest, g, b, s = decision
    if not isinstance(s, int):
        mixed = [f"{STANCES[j]} {100 * x:.0f}%" for j, x in enumerate(s) if x > 1e-9]
        s = STANCES.index(mixed[0].split()[0]) if len(mixed) == 1 else None
        stance = STANCES[s] if s is not None else "mixed " + " / ".join(mixed)
    else:
        stance = STANCES[s]
    return (f"go to {r.p.loc_names[dest]}, abilities fight {b[0]} / flee {b[1]} / hide {b[2]} (gp left {g}), "
            f"stance {stance}")


# ------------------------------------------------------------------------------------------ where a policy loses
class Losses:
    """Where a built-in policy loses most against optimal play: a forward pass under the policy (the exact
    engine's turns), and at each of its decisions (turn, state, options offered, placements seen with early ears)
    the value lost there: the optimal value of the decision minus the value of the policy's declaration followed
    by optimal play (its advantage gap). Weighed by the probability of reaching the decision under the policy,
    the gaps add up to the policy's whole gap to optimal play (the performance difference identity)."""

    def __init__(self, pol: OptimalPolicy, variant):
        self.pol, self.r = pol, pol.r
        self.builtin = BuiltinPolicy(Rules(compile_params(variant)))
        self.game = Game(self.r, self.builtin, pol.max_states)
        self.game.turn = pol.turn  # the same turns (and caches) as the table's

    def decisions(self, t: int, state, lay, at) -> list[tuple[float, float, tuple, object, tuple]]:
        """(weight, value lost, options, layout seen or None, the optimal declaration) of each decision of the
        policy at a free state."""
        _, vit, gp, base, _ = state
        key = self.pol.table_key(state)
        views = lay if self.r.ears else [(1.0, None)]
        out = []
        for po, opts in self.pol.opts:
            for pl, layout in views:
                top = self.pol.best(t, key, opts, layout, at)
                heres = (lambda d, L=layout: [(1.0, L[d])]) if layout is not None else (lambda d: at[d])
                mine = self.game._declared(t, vit, gp, base, 1.0, self.builtin.moves(opts, layout), heres)
                out.append((po * pl, top[0] - self.pol.worth(t, mine, clip=True), opts, layout, top))
        return out

    def run(self, worst: int) -> list[dict]:
        r, found = self.r, []
        states = {(False, r.vit0, 0, r.base0, -1): 1.0}
        for t in range(1, r.T + 1):
            lay, at = self.pol.layouts(t)
            nxt: dict = {}
            for state, mass in states.items():
                if state[0]:
                    branches = self.pol.turn.captive(t, state)
                else:
                    branches = self.game.free_branches(t, state, lay, at)
                    found += [(mass * w, lost, t, state, opts, layout, top)
                              for w, lost, opts, layout, top in self.decisions(t, state, lay, at) if lost > 1e-12]
                for pr, outcome, _, _ in branches:
                    if outcome[0] == "go":
                        nxt[outcome[1]] = nxt.get(outcome[1], 0.0) + mass * pr
            states = nxt
        found.sort(key=lambda x: -x[0] * x[1])
        return [self.row(*x) for x in found[:worst]]

    def row(self, reach, lost, t, state, opts, layout, top) -> dict:
        names = self.r.p.loc_names
        seen = "" if layout is None else "; seen: " + (", ".join(
            f"{names[loc]}: {', '.join(self.r.p.template_names[k] for k in here)}"
            for loc, here in enumerate(layout) if here) or "nobody")
        return {"turn": t, "reach": reach, "lost": lost, "weighted": reach * lost,
                "state": describe_state(self.r, state) + f"; offered {', '.join(names[x] for x in opts)}" + seen,
                "policy_action": self.policy_text(opts, layout, state), "optimal_action": describe(self.r, top)}

    def policy_text(self, opts, layout, state) -> str:
        """The built-in policy's declaration in words (its settings where it draws)."""
        r, b = self.r, self.builtin
        dests = sorted({d for _, d in b.moves(opts, layout)})
        where = r.p.loc_names[dests[0]] if len(dests) == 1 else "one of " + ", ".join(r.p.loc_names[d] for d in dests)
        g, base = b.grow(state[2], state[3])
        stance = STANCES[r.best_stance(base)] if b.stance_policy == 2 else (
            STANCES[int(r.p.stance_value)] if b.stance_policy == 0 else f"by its {b.r.p.scenario.policy.stance} rule")
        return (f"go to {where}, abilities fight {base[0]} / flee {base[1]} / hide {base[2]} (gp left {g}), "
                f"stance {stance}")


def describe_state(r: Rules, state) -> str:
    _, vit, gp, base, _ = state
    return f"vitality {vit}, gp {gp}, abilities fight {base[0]} / flee {base[1]} / hide {base[2]}"


def policy_variants(scenario) -> list[tuple[str, object]]:
    """The scenario's own policy, then each built-in choice of one policy key changed from it (R-CAM-40)."""
    pol = scenario.policy.model_copy(update={"name": "builtin"})  # the settings, also under policy.name = optimal
    scenario = scenario.model_copy(update={"policy": pol})
    out = [("scenario policy", scenario)]
    for key, values in (("move", ("random", "avoid")), ("stance", ("random", "best", "counter", "equilibrium")),
                        ("growth", ("none", "lowest", "best"))):
        for v in values:
            if getattr(pol, key) != v:
                out.append((f"{key} = {v}", scenario.model_copy(update={"policy": pol.model_copy(update={key: v})})))
    return out


def compare(scenario, objective: str | None = None, max_states: int | None = None,
            max_branches: int | None = None, worst: int = 5, adversary: str = "random") -> dict:
    """The optimal clear rate beside the exact clear rate of the scenario's policy and of each built-in policy
    one key away from it, with the gap in points ("the built-in policy leaves X points")."""
    parse_objective(objective)
    robust = robust_value(scenario, max_states) if adversary == "best" else None  # refused before the rest
    pol, best, cpu = solve(scenario, max_states)
    r = pol.r
    start = (False, r.vit0, 0, pol.clip(r.base0), -1)
    lay, at = pol.layouts(1)
    if r.ears:
        first = ["(turn 1 depends on the placements seen with early ears)"]
    else:  # turn 1, for each set of options the preview may offer (R-CAM-50)
        first = [f"offered {', '.join(r.p.loc_names[x] for x in o)}: {describe(r, pol.best(1, start, o, None, at))}"
                 for _, o in pol.opts[:3]]
    engine = {"states": len(pol.memo), "branches": sum(len(v) for v in pol.turn._free.values()),
              "seconds": round(cpu, 4)}  # the solve's own work (the losses below ask for more states)
    policies = []
    for name, variant in policy_variants(scenario):
        e = exact(variant, max_states=max_states or DEFAULT_MAX_STATES, max_branches=max_branches)
        policies.append({"policy": name, "value": e["clear_rate"], "gap_points": 100.0 * (best - e["clear_rate"]),
                         "losses": Losses(pol, variant).run(worst)})
    out = {
        "scenario": scenario.name, "kind": "campus", "objective": "clear_rate", "optimal_value": best,
        "first_actions": first, "policies": policies,
        "engine": engine, "characters": list(r.p.pc_names),
    }
    if robust is not None:
        out["adversary_best"] = {**robust, "gap_points": 100.0 * (best - robust["optimal_value"])}
    return out


def robust_value(scenario, max_states: int | None = None) -> dict:
    """Optimal play against adversaries choosing their stances (:class:`RobustPolicy`): its clear rate, the
    PC's first-turn declarations and the work done."""
    pol, v, cpu = solve(scenario, max_states, adversary="best")
    r = pol.r
    first = []
    if not r.ears:
        start = (False, r.vit0, 0, pol.clip(r.base0), -1)
        at = pol.layouts(1)[1]
        first = [f"offered {', '.join(r.p.loc_names[x] for x in o)}: {describe(r, pol.best(1, start, o, None, at))}"
                 for _, o in pol.opts[:3]]
    return {"optimal_value": v, "first_actions": first, "states": len(pol.memo), "seconds": round(cpu, 4)}


def exact(scenario, max_states: int = DEFAULT_MAX_STATES, max_branches: int | None = None,
          policy: str | None = None) -> dict:
    """Campus exact analysis (:func:`sim.campus.exact.exact`, the kind's ``exact`` hook), with the solved table
    where the scenario (``policy.name = "optimal"``) or ``policy="optimal"`` asks for optimal play."""
    return exact_game(scenario, max_states, max_branches, policy, table=OptimalPolicy)


def optimal_exact(scenario, max_states: int | None = None) -> dict:
    return exact(scenario, max_states=max_states or DEFAULT_MAX_STATES, policy="optimal")


def console_lines(result: dict) -> list[str]:
    lines = [f"{result['scenario']}: optimal clear rate {100 * result['optimal_value']:.2f}%",
             "optimal first turn: " + "; ".join(result["first_actions"])]
    for row in result["policies"]:
        lines.append(f"  {row['policy']:<22} {100 * row['value']:6.2f}%  leaves {fixed(row['gap_points'])} points")
        lines += [f"      {loss_text(x)}" for x in row.get("losses", [])[:3]]
    lines += robust_lines(result)
    eng = result["engine"]
    lines.append(f"({eng['states']:,} states, {eng['branches']:,} branches, {eng['seconds']:.2f} s CPU)")
    return lines


def robust_lines(result: dict) -> list[str]:
    """The value under the adversaries' best stances beside the rules' random ones (``--adversary best``)."""
    rb = result.get("adversary_best")
    if rb is None:
        return []
    return [f"against adversaries choosing their stances to minimise it (--adversary best): optimal clear rate "
            f"{100 * rb['optimal_value']:.2f}% ({fixed(rb['gap_points'])} points below the rules' random stances, "
            f"{100 * result['optimal_value']:.2f}%; {rb['states']:,} states, {rb['seconds']:.2f} s CPU)",
            *(["  its first turn: " + "; ".join(rb["first_actions"])] if rb["first_actions"] else [])]


def loss_text(x: dict) -> str:
    """One decision where a policy loses, in words (console)."""
    return (f"turn {x['turn']} (reached {100 * x['reach']:.1f}%): {x['state']}: {x['policy_action']} instead of "
            f"{x['optimal_action']} (-{fixed(100 * x['lost'])} points there)")


LOSS_COLUMNS = ("turn", "reached", "state (what the PC sees)", "the policy declares", "optimal play declares",
                "value lost")


def loss_sections(result: dict) -> list:
    """Per built-in policy, the table of the decisions where it loses most (the page)."""
    note = ("Decisions ranked by the probability of reaching them under the policy times the value lost there (the "
            "optimal value of the decision minus the value of the policy's declaration followed by optimal play); "
            "over every decision these add up to the policy's gap.")
    return [section(f"Where {row['policy']} loses most", note=note, body=table(LOSS_COLUMNS, [
        (str(x["turn"]), f"{100 * x['reach']:.1f}%", x["state"], x["policy_action"], x["optimal_action"],
         f"{fixed(100 * x['lost'])} pp") for x in row["losses"]])) for row in result["policies"] if row.get("losses")]


def write_optimal_report(scenario, result: dict, out_dir) -> list:
    """``optimal.json`` and ``optimal.html`` into ``out_dir``."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "optimal.json", summary_json(result))
    head = [f"With optimal play the clear rate is {100 * result['optimal_value']:.2f}%.",
            "Optimal first turn: " + "; ".join(result["first_actions"]) + "."]
    head += [f"{row['policy']} leaves {fixed(row['gap_points'])} points." for row in result["policies"]]
    rows = [["optimal", f"{100 * result['optimal_value']:.2f}%", "0.00 pp"]]
    rows += [[row["policy"], f"{100 * row['value']:.2f}%", f"{fixed(row['gap_points'])} pp"]
             for row in result["policies"]]
    sections = [answer("How much of this game's difficulty is the policy (clear rate)?", head),
                section("Optimal clear rate beside the built-in policies", table(["policy", "clear rate",
                                                                                   "gap to optimal"], rows))]
    if result.get("adversary_best"):
        rb = result["adversary_best"]
        sections.append(section("Adversaries choosing their stances (--adversary best)", note=(
            "The adversaries know the PC's destination, growth and stance mix (not the stance drawn from it) and "
            "choose their stances among those their weights allow to minimise its clear rate; each confrontation "
            "is a zero-sum game solved exactly (docs/exact.md)."), body=table(
            ["adversary stances", "optimal clear rate", "gap"],
            [["drawn from their weights (the rules)", f"{100 * result['optimal_value']:.2f}%", "0.00 pp"],
             ["chosen to minimise it", f"{100 * rb['optimal_value']:.2f}%", f"-{fixed(rb['gap_points'])} pp"]])))
    sections += loss_sections(result)
    page = write_html(out / "optimal.html", f"Optimal play — {scenario.name or scenario.slug}", sections,
                      {"kind": "campus", "policy": "optimal"})
    return [out / "optimal.json", page]


__all__ = ["ADVERSARIES", "OBJECTIVES", "CAPTURED", "OptimalPolicy", "RobustPolicy", "TablePolicy", "compare",
           "console_lines", "optimal_exact", "parse_objective", "robust_value", "solve", "with_policy",
           "write_optimal_report"]
