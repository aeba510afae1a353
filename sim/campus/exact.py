"""Exact analysis of campus games with one PC: a forward dynamic program over the distribution of the PC's
state, turn by turn (RULES.md section 3, R-CAM-1..59).

This is a computation of its own, written from the rules: it calls neither the Monte Carlo kernel nor the
scalar reference. Each turn, every distinct PC state (status, vitality, gp, base abilities, capture room) with
its probability is played through the steps of R-CAM-5 with every random event answered by each of its
outcomes and its exact probability: the placements of the spawn schedule (R-CAM-20, R-CAM-50), the options
offered (R-CAM-50), the PC's move and stance where its policy draws them (R-CAM-40), the mission chances
(R-CAM-25), the order in which the PC meets the adversaries at its destination and their stances (R-CAM-6,
R-CAM-21), the capture room (R-CAM-53). Equal states are merged, their probabilities added.

What it takes on: one PC (the joint state of two or more grows too fast for this engine: they are refused
before any work, naming the party size), every built-in policy (move, stance, growth; ``rescue`` has nobody
to rescue with one PC), missions, bosses, exits, options, skills. Refused: growth purchases (R-CAM-9a).
With one PC a miso bomb (R-CAM-15) never appears while the game goes on, teams never form (R-CAM-9 needs two
members present) and nursing has nobody to nurse (R-CAM-30): those rules cannot act.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from math import comb

from sim.campus.params import Params, compile_params
from sim.campus.stances import equilibrium_mix
from sim.errors import ExactUnsupported
from sim.result import provenance

#: default state budget of ``sim.exact`` and ``python -m sim exact`` (distinct (turn, state) pairs played)
DEFAULT_MAX_STATES = 200_000
#: the budget tried beside a simulation (report overlay, sweeps, tune): a game too large answers by simulation
AUTO_MAX_STATES = 20_000
#: the largest party the exact engine takes on
MAX_PARTY = 1
#: the most adversary placements (distinct layouts of one turn) the engine enumerates per turn
MAX_PLACEMENTS = 20_000
#: branches (outcomes of one state's turn) allowed per state of the budget, as escape's exact engine counts them
BRANCHES_PER_STATE = 25

FREE, CAPTURED, CLEARED, GAME_OVER = "free", "captured", "cleared", "game_over"
STANCES = ("fight", "flee", "hide")


class CampusExactRefused(ExactUnsupported):
    """Exact analysis refused before (or while) doing the work. ``binds`` names what binds: ``"party"``,
    ``"purchases"``, ``"placements"`` or ``"states"``; ``flag`` the option that raises it where one does."""

    def __init__(self, message: str, binds: str, flag: str | None = None, estimate: int | None = None):
        self.binds, self.flag, self.estimate = binds, flag, estimate
        super().__init__(message)


# ------------------------------------------------------------------------------------------ the rules
def beats(a: int, b: int) -> bool:
    """R-CAM-2: flee beats fight, hide beats flee, fight beats hide (0 fight, 1 flee, 2 hide)."""
    return a == (b + 1) % 3


def value(base: int, add: int, mult: Fraction) -> int:
    """R-CAM-3: (base + additive bonuses) x all multipliers, floored once (R-CAM-58)."""
    x = (base + add) * mult
    return x.numerator // x.denominator


class Rules:
    """The scenario's numbers as plain Python values, and the rule steps that read them."""

    def __init__(self, p: Params):
        self.p = p
        self.T, self.L = p.T, p.L
        self.bonus = tuple(int(x) for x in p.pc_bonus[0])
        self.m_always = tuple(p.pc_mult_always[0])
        self.m_adv = tuple(p.pc_mult_adv[0])
        self.ears = bool(p.pc_ears[0])
        self.gpt = int(p.pc_gpt[0])
        self.vit0 = int(p.pc_vit[0])
        self.base0 = tuple(int(x) for x in p.pc_base[0])
        self.is_room = tuple(bool(x) for x in p.is_room)
        self.is_exit = tuple(bool(x) for x in p.is_exit)
        self.opens_on = tuple(int(x) for x in p.opens_on)
        self.offset = tuple(int(x) for x in p.room_offset)
        self.rooms = tuple(int(x) for x in p.rooms)
        self.templates = self._templates(p)
        self._win: dict = {}
        self._wins: dict = {}

    @staticmethod
    def _templates(p: Params) -> dict:
        """Per adversary template (R-CAM-20): base, bonus, multipliers, stance probabilities (R-CAM-21), reward,
        boss flag, capture room; read from its first spawn slot (every slot of a template has its values)."""
        out = {}
        for a in range(p.S):
            k = int(p.adv_template[a])
            if k in out:
                continue
            probs = tuple(Fraction(int(w), int(p.weight_den)) for w in p.adv_wnum[a])
            out[k] = dict(base=tuple(int(x) for x in p.adv_base[a]), bonus=tuple(int(x) for x in p.adv_bonus[a]),
                          always=tuple(p.adv_mult_always[a]), adv=tuple(p.adv_mult_adv[a]), probs=probs,
                          reward=int(p.adv_reward[a]), boss=bool(p.adv_boss[a]), room=int(p.adv_room[a]))
        return out

    # R-CAM-3 / R-CAM-30 values
    def pc_value(self, base, s: int, opp: int | None) -> int:
        """The PC's value in stance s against an opponent in stance ``opp`` (None: no opponent, as in ``best``
        and missions, R-CAM-56: no advantage, no ``when = "advantage"`` multiplier)."""
        mult = self.m_always[s]
        if opp is not None and beats(s, opp):
            mult = mult * self.m_adv[s] * 2  # R-CAM-2 stance advantage x2, R-CAM-30 when = advantage
        return value(base[s], self.bonus[s], mult)

    def adv_value(self, k: int, s: int, opp: int) -> int:
        tp = self.templates[k]
        mult = tp["always"][s]
        if beats(s, opp):
            mult = mult * tp["adv"][s] * 2
        return value(tp["base"][s], tp["bonus"][s], mult)

    def wins(self, base, s: int, k: int, s2: int) -> bool:
        """R-CAM-4: the higher value wins; equal values: both lose (the PC does not win). It depends on the
        PC's base in stance s only (cached on it)."""
        key = (base[s], s, k, s2)
        hit = self._wins.get(key)
        if hit is None:
            hit = self._wins[key] = self.pc_value(base, s, s2) > self.adv_value(k, s2, s)
        return hit

    def win_prob(self, base, s: int, k: int) -> float:
        """The PC's chance to beat template k, its stance drawn from its weights (R-CAM-21); it depends on the
        PC's base in stance s only (cached on it)."""
        key = (base[s], s, k)
        hit = self._win.get(key)
        if hit is None:
            probs = self.templates[k]["probs"]
            hit = self._win[key] = float(sum((probs[s2] for s2 in range(3) if probs[s2] and self.wins(base, s, k, s2)),
                                             Fraction(0)))
        return hit

    def best_stance(self, base) -> int:
        """R-CAM-40 ``best``: the highest own value before the stance advantage; ties fight, flee, hide."""
        vals = [self.pc_value(base, s, None) for s in range(3)]
        return vals.index(max(vals))

    def capture_rooms(self, k: int) -> list[tuple[float, int]]:
        """R-CAM-8 / R-CAM-53: the adversary's room, else the only room, else one at random among them."""
        room = self.templates[k]["room"]
        if room >= 0:
            return [(1.0, room)]
        return [(1.0 / len(self.rooms), r) for r in self.rooms]


# ------------------------------------------------------------------------------------------ refusals
def refusal(p: Params) -> CampusExactRefused | None:
    """Why the exact engine does not take this scenario on (None: it does). Checked before any work."""
    if p.P > MAX_PARTY:
        return CampusExactRefused(
            f"exact analysis refused before the work: the party size binds: {p.P} PCs, and the exact engine solves "
            "one PC (the states of several PCs multiply, and teams, rescues, nursing and miso bombs couple them); "
            "use Monte Carlo (python -m sim run)",
            binds="party")
    if p.B:
        return CampusExactRefused(
            "exact analysis refused before the work: growth purchases (R-CAM-9a, policy.buy) bind: the exact "
            "engine does not follow bought skills; use Monte Carlo (python -m sim run)", binds="purchases")
    if p.stance_allowed != 7:
        return CampusExactRefused(
            "exact analysis refused before the work: forbidden stances (policy.forbid, the balance audit's "
            "restricted play) bind: the exact engine plays every stance; use Monte Carlo (python -m sim run)",
            binds="forbid")
    return None


#: CPU seconds the projection of a party's joint states may take (each PC alone through the one-PC engine)
PROJECTION_SECONDS = 2.0


def party_refusal(scenario, why: CampusExactRefused, max_states: int) -> CampusExactRefused:
    """The party-size refusal with the projected size of the joint state: each PC played alone by this engine
    (its states per turn, within ``max_states`` and :data:`PROJECTION_SECONDS`); the party's (turn, state) pairs
    are at least the sum over the turns of the product of those counts, before teams, rescues, nursing and miso
    bombs couple the PCs (they only add states). The first refusal is kept where a PC alone is refused too."""
    counts = []
    for pc in scenario.party:
        alone = scenario.model_copy(update={"party": [pc], "policy": scenario.policy.model_copy(
            update={"rescue": False, "name": "builtin"})})
        p = compile_params(alone)
        if refusal(p) is not None:
            return why
        game = Game(Rules(p), BuiltinPolicy(Rules(p)), max_states)
        try:  # its first turns, as many as its share of the time allows
            game.play(deadline=time.process_time() + PROJECTION_SECONDS / len(scenario.party))
        except CampusExactRefused:
            return why
        counts.append(game.per_turn)
    turns = min(map(len, counts))
    joint = sum(math.prod(c[t] for c in counts) for t in range(turns))
    if not turns:
        return why
    return CampusExactRefused(
        f"exact analysis refused before the work: the party size binds: {len(counts)} PCs, and the exact engine "
        f"solves one PC; their joint game would need at least {joint:,} (turn, state) pairs in its first {turns} of "
        f"{scenario.rules.turns} turns alone (each PC's own states per turn multiplied, before teams, rescues, "
        f"nursing and miso bombs couple them; budget --max-states {max_states:,}); use Monte Carlo "
        "(python -m sim run)", binds="party", estimate=joint)


def supports_exact(scenario) -> bool:
    return refusal(compile_params(scenario)) is None


# ------------------------------------------------------------------------------------------ the preview
def placements(rules: Rules, t: int) -> list[tuple[Fraction, tuple]]:
    """R-CAM-20 / R-CAM-50, step 1: the distribution of this turn's placements, each a tuple over the locations
    of the sorted templates placed there. Each slot of an entry active this turn appears with its chance, at
    one of its candidates drawn uniformly; slots are independent."""
    p = rules.p
    dist: dict[tuple, Fraction] = {tuple(() for _ in range(rules.L)): Fraction(1)}
    for a in range(p.S):
        if not p.adv_first[a] <= t <= p.adv_last[a]:
            continue
        c = Fraction(str(float(p.adv_chance[a]))).limit_denominator(1_000_000)
        cands = [int(x) for x in p.adv_cands[a]]
        k = int(p.adv_template[a])
        nxt: dict[tuple, Fraction] = {}
        for layout, pr in dist.items():
            if c < 1:
                nxt[layout] = nxt.get(layout, Fraction(0)) + pr * (1 - c)
            if c > 0:
                for loc in cands:
                    lay = layout[:loc] + (tuple(sorted(layout[loc] + (k,))),) + layout[loc + 1:]
                    nxt[lay] = nxt.get(lay, Fraction(0)) + pr * c / len(cands)
        dist = nxt
        if len(dist) > MAX_PLACEMENTS:
            raise CampusExactRefused(
                f"exact analysis refused before the work: the placements bind: turn {t} has more than "
                f"{MAX_PLACEMENTS:,} distinct layouts of adversaries; use Monte Carlo (python -m sim run)",
                binds="placements", estimate=len(dist))
    return [(pr, layout) for layout, pr in dist.items()]


def options(rules: Rules) -> list[tuple[Fraction, tuple[int, ...]]]:
    """R-CAM-50: every location, or a uniform k-subset of all locations."""
    L, k = rules.L, int(rules.p.k_options)
    if k >= L:
        return [(Fraction(1), tuple(range(L)))]
    from itertools import combinations

    return [(Fraction(1, comb(L, k)), c) for c in combinations(range(L), k)]


# ------------------------------------------------------------------------------------------ one turn
class Turn:
    """The outcomes of one turn of the one PC, every random event branched with its probability. A branch is
    ``(prob, outcome, captured, duels)``: ``outcome`` is ``("go", state)`` for a PC still in the game (state =
    (captured, vitality, gp, base, room)) or ``("end", status, vitality, gp)``; ``captured`` whether the PC was
    captured this turn (R-CAM-41 capture_by_turn); ``duels`` the (template, PC stance, won) of each duel."""

    def __init__(self, rules: Rules):
        self.r = rules
        self._fights: dict = {}
        self._free: dict = {}

    # R-CAM-6 / R-CAM-7: the PC against every adversary at its destination, one at a time, drawn at random
    def fights(self, base, s: int, here: tuple) -> list:
        """Branches (prob, captured_by template or -1, reward, duels) of the confrontations at the destination:
        ``until_cleared`` (R-CAM-6): the PC, the only group, fights again and again, each time one of the
        adversaries it may still fight drawn uniformly (an ordinary one leaves won or lost, a boss fights each
        group once a turn, R-CAM-7), until it is captured or none is left; ``once``: one draw, one duel.
        ``here`` holds templates (each draws its stance from its weights, R-CAM-21) or, in the robust mode of
        :mod:`sim.campus.optimal`, (template, stance) pairs: stances the adversaries chose."""
        key = (base, s, here)
        if key not in self._fights:
            self._fights[key] = self._fight_branches(base, s, here, self.r.p.until_cleared)
        return self._fights[key]

    def _fight_branches(self, base, s: int, here: tuple, again: bool) -> list:
        if not here:
            return [(1.0, -1, 0, ())]
        out = []
        n = len(here)
        for a in sorted(set(here)):  # a template, or (template, the stance it chose) in the robust mode
            pk = here.count(a) / n
            k, q = (a, float(self.r.win_prob(base, s, a))) if isinstance(a, int) else \
                (a[0], float(self.r.wins(base, s, a[0], a[1])))
            if q > 0:
                rest = list(here)
                rest.remove(a)
                rest_branches = self._fight_branches(base, s, tuple(rest), again) if again else [(1.0, -1, 0, ())]
                reward = self.r.templates[k]["reward"]
                for pb, by, rw, duels in rest_branches:
                    out.append((pk * q * pb, by, rw + reward, ((k, s, 1),) + duels))
            if q < 1:
                out.append((pk * (1 - q), k, 0, ((k, s, 0),)))  # R-CAM-4/8: a loss or a tie captures the PC
        return out

    # R-CAM-25 / R-CAM-56 missions at the destination, in file order
    def missions(self, t: int, dest: int, ears: bool, vit: int, gp: int, base) -> list:
        """Branches (prob, vit, gp, base) after this turn's missions at ``dest``."""
        p = self.r.p
        branches = [(1.0, vit, gp, base)]
        for m in range(p.M):
            if int(p.mis_loc[m]) != dest or not p.mis_first[m] <= t <= p.mis_last[m]:
                continue
            if p.mis_found[m] and not ears:
                continue  # R-CAM-25a: found by early ears, and the PC has none
            c = float(p.mis_chance[m])
            nxt = []
            for pr, v, g, b in branches:
                if c < 1:
                    nxt.append((pr * (1 - c), v, g, b))
                if c > 0:
                    nxt.append((pr * min(c, 1.0),) + self.mission_result(m, v, g, b))
            branches = nxt
        return branches

    def mission_result(self, m: int, vit: int, gp: int, base) -> tuple:
        """R-CAM-25 / R-CAM-56: one PC, sum and each alike: its value without the stance advantage against the
        target; success pays the reward, failure the penalty (R-CAM-16: gp lift a negative ability to 0)."""
        p, r = self.r.p, self.r
        s = int(p.mis_stance[m])
        if r.pc_value(base, s, None) >= int(p.mis_target[m]):
            return vit, gp + int(p.mis_reward[m]), base
        vit -= int(p.mis_pen_vit[m])
        k = int(p.mis_pen_ability[m])
        if k >= 0:
            b = list(base)
            b[k] -= int(p.mis_pen_amount[m])
            if b[k] < 0:
                gp += b[k]
                b[k] = 0
            base = tuple(b)
        return vit, gp, base

    def free(self, t: int, vit: int, gp: int, base, dest: int, s: int, here: tuple, ears: bool) -> list:
        """The rest of a free PC's turn once it has moved, grown and chosen stance s: missions (step 4a),
        confrontations (4b), exit (R-CAM-26), growth points (7), game over (8)."""
        key = (t, vit, gp, base, dest, s, here, ears)
        hit = self._free.get(key)
        if hit is None:
            hit = self._free[key] = self._free_branches(*key)
        return hit

    def _free_branches(self, t, vit, gp, base, dest, s, here, ears) -> list:
        r = self.r
        out = []
        for pm, v, g, b in self.missions(t, dest, ears, vit, gp, base):
            for pf, by, reward, duels in self.fights(b, s, here):
                pr = pm * pf
                if by >= 0:  # R-CAM-8: captured, vitality -1, to a capture room
                    for pr_room, room in r.capture_rooms(by):
                        out.append((pr * pr_room, self.end_of_turn(t, True, v - 1, g + reward, b, room), True,
                                    duels))
                elif r.is_exit[dest] and t >= r.opens_on[dest]:  # R-CAM-26 / R-CAM-58
                    out.append((pr, ("end", CLEARED, v, g + reward), False, duels))
                else:
                    out.append((pr, self.end_of_turn(t, False, v, g + reward, b, -1), False, duels))
        return out

    def end_of_turn(self, t: int, captured: bool, vit: int, gp: int, base, room: int) -> tuple:
        """Steps 7 and 8: +1 gp and gp per turn (R-CAM-58), then game over at vitality <= 0 (R-CAM-15)."""
        gp += 1 + self.r.gpt
        if vit <= 0:
            return ("end", GAME_OVER, vit, gp)
        return ("go", (captured, vit, gp, base, room))

    def captive(self, t: int, state) -> list:
        """Step 6 for a PC captured before this turn (R-CAM-11, R-CAM-13, R-CAM-14): target t + its room's offset;
        success when the target <= min of its base abilities (no rescuer with one PC); failure: vitality -1."""
        _, vit, gp, base, room = state
        if self.r.offset[room] + t <= min(base):
            return [(1.0, self.end_of_turn(t, False, vit, gp, base, -1), False, ())]
        return [(1.0, self.end_of_turn(t, True, vit - 1, gp, base, room), False, ())]


# ------------------------------------------------------------------------------------------ the built-in policies
class BuiltinPolicy:
    """R-CAM-40 / R-CAM-51: the scenario's move, growth and stance policies, as distributions. ``needs_layout``:
    the policy reads the whole placement (early ears with ``avoid``, ``counter`` or ``equilibrium``)."""

    def __init__(self, rules: Rules):
        self.r = rules
        p = rules.p
        self.stance_policy = int(p.stance_policy)  # 0 fixed, 1 random, 2 best, 3 counter, 4 equilibrium
        self.needs_layout = rules.ears and (p.move_avoid or self.stance_policy >= 3)

    def moves(self, opts: tuple, layout: tuple | None) -> list[tuple[float, int]]:
        """R-CAM-40 move ``random``: uniform among the options; ``avoid``: with early ears, the options with no
        adversary placed and no capture room, without early ears the options that are no capture room (R-CAM-51);
        none: all the options."""
        r = self.r
        choices = list(opts)
        if r.p.move_avoid:
            if r.ears:
                safe = [loc for loc in opts if not r.is_room[loc] and not layout[loc]]
            else:
                safe = [loc for loc in opts if not r.is_room[loc]]
            choices = safe or choices
        return [(1.0 / len(choices), d) for d in choices]

    def grow(self, gp: int, base: tuple) -> tuple[int, tuple]:
        """Step 3, R-CAM-40 growth ``none``, ``lowest`` (each gp to the lowest base; ties fight, flee, hide) or
        ``best`` (every gp to the ability of the best stance); only with gp > 0."""
        growth = self.r.p.growth
        if gp <= 0 or growth == "none":
            return gp, base
        b = list(base)
        if growth == "lowest":
            for _ in range(gp):
                b[b.index(min(b))] += 1
        else:
            b[self.r.best_stance(base)] += gp
        return 0, tuple(b)

    def stances(self, t: int, base: tuple, here: tuple) -> list[tuple[float, int]]:
        """R-CAM-40 stance policies after growth (R-CAM-51); ``here``: the templates seen at the destination
        (only with early ears)."""
        r, sp = self.r, self.stance_policy
        if sp == 0:
            return [(1.0, int(r.p.stance_value))]
        if sp == 1:
            return [(1 / 3, 0), (1 / 3, 1), (1 / 3, 2)]
        best = r.best_stance(base)
        seen = here if r.ears else ()
        if sp == 2 or (sp == 3 and not seen):
            return [(1.0, best)]
        if sp == 3:  # counter: the most wins against the seen adversaries' stance weights (integer scores)
            score = [sum(self.weight(k, s2) for k in seen for s2 in range(3) if r.wins(base, s, k, s2))
                     for s in range(3)]
            return [(1.0, score.index(max(score)))]
        return self.equilibrium(t, base, seen, best)

    def weight(self, k: int, s2: int) -> int:
        return int(self.r.templates[k]["probs"][s2] * self.r.p.weight_den)

    def equilibrium(self, t: int, base: tuple, seen: tuple, best: int) -> list[tuple[float, int]]:
        """Stance policy ``equilibrium`` (docs/decisions.md, Campus): the maximin mix of the 0/1 win matrices
        against the adversaries seen, or without them one slot per template the schedule can place this turn;
        ties to the most wins against their weights. Drawn with one uniform on the mix's cumulative sums."""
        r, p = self.r, self.r.p
        foes = list(seen) or [int(p.adv_template[a]) for a in p.eq_fallback_slots[t - 1]]
        if not foes:
            return [(1.0, best)]
        codes, prefer = [], [0, 0, 0]
        for k in foes:
            m = [[int(r.wins(base, s, k, s2)) for s2 in range(3)] for s in range(3)]
            codes.append(sum(m[s][s2] << (3 * s + s2) for s in range(3) for s2 in range(3)))
            for s in range(3):
                prefer[s] += sum(self.weight(k, s2) * m[s][s2] for s2 in range(3))
        x = equilibrium_mix(codes, prefer)
        c1 = float(x[0])
        c2 = float(x[0] + x[1]) if x[2] > 0 else 1.0  # the draw's thresholds (u >= c1) + (u >= c2)
        return [(pr, s) for pr, s in ((c1, 0), (c2 - c1, 1), (1 - c2, 2)) if pr > 0]


# ------------------------------------------------------------------------------------------ the game
class Tally:
    """Expected counts per game (R-CAM-41), accumulated as probability mass times the count of each branch."""

    def __init__(self, T: int, n_templates: int):
        self.captures = [0.0] * T
        self.checks = [0.0] * T
        self.escapes = [0.0] * T
        self.free = [0.0] * T
        self.duels_tmpl = [0.0] * n_templates
        self.wins_tmpl = [0.0] * n_templates
        self.duels_stance = [0.0] * 3
        self.wins_stance = [0.0] * 3
        self.final: dict[tuple, float] = {}  # (status, vitality, gp, end turn) -> probability

    def duel(self, w: float, duels) -> None:
        for k, s, won in duels:
            self.duels_tmpl[k] += w
            self.duels_stance[s] += w
            if won:
                self.wins_tmpl[k] += w
                self.wins_stance[s] += w

    def end(self, w: float, status: str, vit: int, gp: int, turn: int) -> None:
        key = (status, vit, gp, turn)
        self.final[key] = self.final.get(key, 0.0) + w


def _merge(branches) -> list:
    out: dict = {}
    for pr, outcome, capt, duels in branches:
        key = (outcome, capt, duels)
        out[key] = out.get(key, 0.0) + pr
    return [(pr, *key) for key, pr in out.items()]


class Game:
    """The forward dynamic program over the one PC's state distribution, turn by turn (R-CAM-5)."""

    def __init__(self, rules: Rules, policy, max_states: int, max_branches: int | None = None):
        self.r, self.policy, self.max_states = rules, policy, max_states
        self.max_branches = max_branches if max_branches is not None else BRANCHES_PER_STATE * max_states
        self.branches = 0
        self.turn = Turn(rules)
        self.opts = [(float(pr), o) for pr, o in options(rules)]
        self.states_done = 0
        self.peak = 0
        self.per_turn: list[int] = []

    def layouts(self, t: int):
        """This turn's placements as floats, and per location the distribution of the templates placed there."""
        lay = [(float(pr), layout) for pr, layout in placements(self.r, t)]
        at: list[dict] = [{} for _ in range(self.r.L)]
        for pr, layout in lay:
            for loc in range(self.r.L):
                at[loc][layout[loc]] = at[loc].get(layout[loc], 0.0) + pr
        return lay, [[(pr, here) for here, pr in d.items()] for d in at]

    def free_branches(self, t: int, state, lay, at) -> list:
        """Steps 1..8 of a free PC's turn under the policy: options, placements, move, growth, stance, the rest."""
        _, vit, gp, base, _ = state
        pol, out = self.policy, []
        if hasattr(pol, "free_branches"):  # optimal play: the solved table's declaration (sim.campus.optimal)
            return pol.free_branches(t, state, self.opts, lay, at)
        for po, opts in self.opts:
            if pol.needs_layout:
                for pl, layout in lay:
                    out += self._declared(t, vit, gp, base, po * pl, pol.moves(opts, layout), lambda d, L=layout:
                                          [(1.0, L[d])])
            else:
                out += self._declared(t, vit, gp, base, po, pol.moves(opts, None), lambda d: at[d])
        return _merge(out)

    def _declared(self, t, vit, gp, base, w, moves, heres) -> list:
        pol, out = self.policy, []
        g, b = pol.grow(gp, base)
        for pd, dest in moves:
            for ph, here in heres(dest):
                for ps, s in pol.stances(t, b, here):
                    pr = w * pd * ph * ps
                    out += [(pr * q, o, c, d) for q, o, c, d in self.turn.free(t, vit, g, b, dest, s, here,
                                                                               self.r.ears)]
        return out

    def play(self, deadline: float | None = None) -> Tally:
        """The game, turn by turn; ``deadline`` (CPU seconds, ``time.process_time``): stop after the turn that
        passes it (a partial tally: the party refusal's projection)."""
        r = self.r
        tally = Tally(r.T, r.p.n_templates)
        states = {(False, r.vit0, 0, r.base0, -1): 1.0}
        for t in range(1, r.T + 1):
            if deadline is not None and time.process_time() > deadline:
                break
            self.budget(t, len(states))
            lay, at = self.layouts(t) if any(not s[0] for s in states) else ([], [])
            nxt: dict = {}
            for state, mass in states.items():
                if state[0]:  # captured before this turn: step 6
                    branches = self.turn.captive(t, state)
                    tally.checks[t - 1] += mass
                else:
                    tally.free[t - 1] += mass
                    branches = self.free_branches(t, state, lay, at)
                self.branches += len(branches)
                for pr, outcome, capt, duels in branches:
                    w = mass * pr
                    if capt:
                        tally.captures[t - 1] += w
                    tally.duel(w, duels)
                    if state[0] and outcome[0] == "go" and not outcome[1][0]:
                        tally.escapes[t - 1] += w  # R-CAM-13: the check succeeded
                    if outcome[0] == "end":
                        tally.end(w, outcome[1], outcome[2], outcome[3], t)
                    else:
                        nxt[outcome[1]] = nxt.get(outcome[1], 0.0) + w
            states = nxt
            if self.branches > self.max_branches:
                raise CampusExactRefused(
                    f"exact analysis refused after turn {t}: the branch budget binds: it reached "
                    f"{self.branches:,} branches, each one outcome of a state's turn (budget --max-branches "
                    f"{self.max_branches:,}); raise --max-branches or use Monte Carlo (python -m sim run)",
                    binds="branches", flag="--max-branches", estimate=self.branches)
        for (captured, vit, gp, _, _), mass in states.items():  # after turn T (R-CAM-5)
            tally.end(mass, CAPTURED if captured else CLEARED, vit, gp, r.T if not captured else 0)
        return tally

    def budget(self, t: int, n: int) -> None:
        """Refuse before turn t's work when its states would exceed the budget (``--max-states``)."""
        self.peak = max(self.peak, n)
        self.per_turn.append(n)
        if self.states_done + n > self.max_states:
            raise CampusExactRefused(
                f"exact analysis refused in turn {t}: the state budget binds: it would need at least "
                f"{self.states_done + n:,} states (budget --max-states {self.max_states:,}); raise --max-states "
                f"or use Monte Carlo (python -m sim run)", binds="states", flag="--max-states",
                estimate=self.states_done + n)
        self.states_done += n


# ------------------------------------------------------------------------------------------ the summary
def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 1e-15 else None


def summary_of(p: Params, tally: Tally) -> dict:
    """The Monte Carlo summary's keys (sim.campus.simulate.summarize) with their exact values (an interval
    [v, v], ``runs`` None), plus the outcome distribution by turn (``outcome_by_turn``)."""
    T, name = p.T, p.pc_names[0]
    share = {st: sum(w for k, w in tally.final.items() if k[0] == st) for st in (CLEARED, GAME_OVER, CAPTURED)}
    vit_end = sum(w * k[1] for k, w in tally.final.items())
    gp_end = sum(w * k[2] for k, w in tally.final.items())
    by_turn = {st: [sum(w for k, w in tally.final.items() if k[0] == st and k[3] == t) for t in range(1, T + 1)]
               for st in (CLEARED, GAME_OVER)}
    clear = share[CLEARED]
    return {
        "kind": "campus", "name": p.scenario.name, "runs": None, "seed": None,
        "clear_rate": clear, "clear_rate_ci": [clear, clear],
        "party_clear_rate": clear, "party_clear_rate_ci": [clear, clear],
        "game_over_rate": share[GAME_OVER],
        "capture_by_turn": list(tally.captures),
        "escape_success_by_turn": [_ratio(e, c) for e, c in zip(tally.escapes, tally.checks, strict=True)],
        "escape_checks_by_turn": list(tally.checks),
        "capture_hazard_by_turn": [_ratio(c, f) for c, f in zip(tally.captures, tally.free, strict=True)],
        "captured_at_end_rate": share[CAPTURED],
        "pc_names": [name],
        "clear_rate_by_pc": {name: clear},
        "game_over_rate_by_pc": {name: share[GAME_OVER]},
        "mean_vitality_end_by_pc": {name: vit_end},
        "mean_gp_end_by_pc": {name: gp_end},
        "win_rate_by_adversary": {nm: _ratio(tally.wins_tmpl[k], tally.duels_tmpl[k])
                                  for k, nm in enumerate(p.template_names)},
        "duels_per_game_by_adversary": {nm: tally.duels_tmpl[k] for k, nm in enumerate(p.template_names)},
        "win_rate_by_stance": {st: _ratio(tally.wins_stance[k], tally.duels_stance[k])
                               for k, st in enumerate(STANCES)},
        "duels_per_game_by_stance": {st: tally.duels_stance[k] for k, st in enumerate(STANCES)},
        "rescues_tried_per_game": 0.0,  # one PC: nobody to rescue (R-CAM-12)
        "rescue_success_rate": None,
        "mean_turns": T,
        # the distribution of the outcome: cleared (by the exit or after turn T) and game over, by turn
        "cleared_by_turn": by_turn[CLEARED],
        "game_over_by_turn": by_turn[GAME_OVER],
        "reading": {"miso_in_missions": bool(p.miso_in_missions)},
    }


def exact(scenario, max_states: int = DEFAULT_MAX_STATES, max_branches: int | None = None,
          policy: str | None = None, table=None) -> dict:
    """The exact campus summary of a one-PC game under its built-in policies (``policy="optimal"``: under
    optimal play, the solved table ``table``, :class:`sim.campus.optimal.OptimalPolicy`: the kind's exact hook
    is :func:`sim.campus.optimal.exact`, which passes it). Refuses (:class:`CampusExactRefused`) before the work
    where the engine does not take the scenario on, and as soon as a turn would exceed ``max_states``."""
    start = time.perf_counter()
    p = compile_params(scenario)
    why = refusal(p)
    if why is not None:
        raise party_refusal(scenario, why, max_states) if why.binds == "party" else why
    rules = Rules(p)
    if policy is None and scenario.policy.name == "optimal":  # the scenario plays the solved table
        policy = "optimal"
    if policy == "optimal":
        if table is None:  # the solved table's class lives in sim/campus/optimal.py, which builds on this module
            raise ExactUnsupported("campus exact analysis of optimal play goes through sim.campus.optimal.exact")
        pol = table(rules, Turn(rules), max_states=max_states)
    elif policy is None:
        pol = BuiltinPolicy(rules)
    else:
        raise ExactUnsupported(f"campus exact analysis takes policy None or 'optimal'; given {policy!r}")
    game = Game(rules, pol, max_states, max_branches)
    tally = game.play()
    out = summary_of(p, tally)
    out.update(provenance(scenario, None, None))
    out["runs"], out["seed"] = None, None
    out["exact_engine"] = {"states": game.states_done, "peak_states": game.peak, "max_states": max_states,
                           "branches": game.branches, "max_branches": game.max_branches,
                           "seconds": time.perf_counter() - start}
    if policy == "optimal":
        out["policy"] = "optimal"
    return out
