"""Scalar reference engine: one campus game at a time, one turn at a time, reading like RULES.md
section 3 (STYLE.md practice 6).

Randomness comes from one :class:`Stream` per chunk, read in run order and only when a rule needs a draw
(the conventions are in :mod:`sim.campus.params`), so :mod:`sim.campus.kernel`, reading the same doubles
in the same order, makes the same choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.campus.columns import RUN_STATS, columns_from_games, per_game_shape
from sim.campus.params import CAPTURED, CLEARED, FREE, GAME_OVER, Params, miso_best, pc_terms
from sim.campus.rules import Fighter, best_stance, duel, grow_lowest, plain_value, team_battle
from sim.campus.stances import draw_stance, equilibrium_mix, matrix_code


class Stream:
    """The chunk's uniforms in run order (R-GEN-7): the generator's doubles, read one at a time. The batch
    engine reads the same doubles in the same order (:mod:`sim.campus.kernel`). ``label`` names the draw
    (tests script draws by label); the stream itself ignores it."""

    def __init__(self, rng: np.random.Generator, block: int = 4096):
        self.rng, self.block = rng, block
        self.buf: list[float] = []
        self.pos = 0
        self.used = 0

    def u(self, label=None) -> float:
        if self.pos >= len(self.buf):
            self.buf = self.rng.random(self.block).tolist()
            self.pos = 0
        x = self.buf[self.pos]
        self.pos += 1
        self.used += 1
        return x


@dataclass
class Adv:
    slot: int
    loc: int
    base: tuple[int, int, int]
    present: bool = True
    j: int = 0  # confrontations so far this turn (a boss may have several, R-CAM-7)


@dataclass
class Game:
    """One game's state and its per-game statistics (R-CAM-41, declared in :mod:`sim.campus.columns`)."""

    base: list[list[int]]
    gp: list[int]
    vit: list[int]
    status: list[int]
    room: list[int]
    cap_turn: list[int]
    end_turn: list[int]
    bought: list[list[int]] = field(default_factory=list)  # R-CAM-9a: per PC, the turn each buy item was bought
    status_by_turn: list[list[int]] = field(default_factory=list)  # each PC's status, appended turn by turn
    # counters, zero at the start in their shape of sim.campus.columns: new_game sets every statistic of the table
    # left None or not declared here
    captures_t: list[int] | None = None
    checks_t: list[int] | None = None
    escapes_t: list[int] | None = None
    free_t: list[int] | None = None
    duels_tmpl: list[int] | None = None
    wins_tmpl: list[int] | None = None
    duels_stance: list[int] | None = None
    wins_stance: list[int] | None = None
    rescues_tried: int | None = None
    rescues_won: int | None = None


def new_game(p: Params) -> Game:
    P = p.P
    g = Game(
        base=[list(map(int, p.pc_base[i])) for i in range(P)],
        gp=[0] * P,
        vit=[int(v) for v in p.pc_vit],
        status=[FREE] * P,
        room=[-1] * P,
        cap_turn=[0] * P,
        end_turn=[0] * P,
        bought=[[0] * p.B for _ in range(P)],
    )
    for s in RUN_STATS:  # the counters start at zero, in the table's shape
        if getattr(g, s.reference, None) is None:
            setattr(g, s.reference, np.zeros(per_game_shape(s, p), np.int64).tolist())
    return g


class Turn:
    """One turn t of one game, steps 1..8 of R-CAM-5, drawing from ``rng`` (a :class:`Stream`) only what it
    uses, in the order the steps need it."""

    def __init__(self, p: Params, g: Game, t: int, rng, table=None):
        self.p, self.g, self.t, self.rng = p, g, t, rng
        self.table = table  # policy.name = "optimal": the solved table declares (sim.campus.optimal.TablePolicy)
        # every PC's skills in this game: its own and those it bought (R-CAM-9a)
        self.terms = [pc_terms(p, i, g.bought[i] if g.bought else ()) for i in range(p.P)]

    # ---------------------------------------------------------------- draws (sim.campus.params conventions)
    def pick(self, m: int, label) -> int:
        """A uniform choice among m: floor(u * m), drawn only when m > 1."""
        if m <= 1:
            return 0
        return min(int(self.rng.u(label) * m), m - 1)

    def chance(self, prob: float, label) -> bool:
        """True with probability ``prob``, drawn only when 0 < prob < 1."""
        if prob >= 1:
            return True
        if prob <= 0:
            return False
        return self.rng.u(label) < prob

    def shuffle(self, items: list, label) -> list:
        """A random order (Fisher-Yates, m - 1 draws): position j takes one of the items j.. at random."""
        out = list(items)
        for j in range(len(out) - 1):
            k = j + self.pick(len(out) - j, (label, j))
            out[j], out[k] = out[k], out[j]
        return out

    # ---------------------------------------------------------------- helpers
    def pc_fighter(self, i: int, stance: int) -> Fighter:
        p, tm = self.p, self.terms[i]
        return Fighter(
            name=p.pc_names[i], stance=stance, base=tuple(self.g.base[i]), bonus=tm.bonus,
            mult_always=tm.mult_always, mult_advantage=tm.mult_adv, tag=i,
        )

    def adv_fighter(self, a: Adv, stance: int | None) -> Fighter:
        p = self.p
        if self.is_miso(a):  # R-CAM-57: its bonus and multiplier skills, bought ones too (R-CAM-9a)
            tm = self.terms[a.slot - p.S]
            return Fighter(name=p.template_names[p.adv_template[a.slot]], stance=stance, base=a.base,
                           bonus=tm.bonus, mult_always=tm.mult_always, mult_advantage=tm.mult_adv, reward=0, tag=a)
        return Fighter(
            name=p.template_names[p.adv_template[a.slot]], stance=stance, base=a.base,
            bonus=tuple(map(int, p.adv_bonus[a.slot])), mult_always=p.adv_mult_always[a.slot],
            mult_advantage=p.adv_mult_adv[a.slot], reward=int(p.adv_reward[a.slot]), tag=a,
        )

    def is_miso(self, a: Adv) -> bool:
        return a.slot >= self.p.S

    def is_boss(self, a: Adv) -> bool:
        return bool(self.p.adv_boss[a.slot]) and not self.is_miso(a)

    def adv_stance(self, a: Adv) -> int:
        """R-CAM-21: drawn from the weights for each confrontation (no draw when one stance has all the
        weight); R-CAM-57 miso bombs use the scenario's stance policy (best and counter: their own best)."""
        p = self.p
        label = ("adv_stance", (a.slot, a.j))
        if self.is_miso(a):
            if p.stance_policy == 0:
                return p.stance_value
            if p.stance_policy == 1:
                return self.pick(3, label)
            return miso_best(self.terms[a.slot - p.S], a.base)
        if p.adv_fixed_stance[a.slot] >= 0:
            return int(p.adv_fixed_stance[a.slot])
        u = self.rng.u(label)
        return int(u >= p.adv_c1[a.slot]) + int(u >= p.adv_c2[a.slot])

    def stance_weights(self, a: Adv) -> list[int]:
        """Stance probabilities (integer numerators) as the counter policy sees them (R-CAM-51)."""
        p = self.p
        if self.is_miso(a):
            w = [0, 0, 0]
            w[miso_best(self.terms[a.slot - p.S], a.base)] = p.weight_den
            return w
        return [int(x) for x in p.adv_wnum[a.slot]]

    def capture(self, i: int, room: int) -> None:
        """R-CAM-8 / R-CAM-14: vitality -1, captured (moved to the room at the end of the turn)."""
        g = self.g
        g.status[i] = CAPTURED
        g.vit[i] -= 1
        g.room[i] = room
        g.cap_turn[i] = self.t
        g.captures_t[self.t - 1] += 1

    def capture_room_of(self, i: int, a: Adv) -> int:
        """R-CAM-8 / R-CAM-53: the adversary's room, else the only room, else one at random."""
        p = self.p
        if not self.is_miso(a) and p.adv_room[a.slot] >= 0:
            return int(p.adv_room[a.slot])
        return int(p.rooms[self.pick(len(p.rooms), ("pc_capture_room", i))])

    def record_duel(self, a: Adv, pc_stance: int, outcome: int) -> None:
        g, p = self.g, self.p
        tmpl = int(p.adv_template[a.slot])
        g.duels_tmpl[tmpl] += 1
        g.duels_stance[pc_stance] += 1
        if outcome > 0:
            g.wins_tmpl[tmpl] += 1
            g.wins_stance[pc_stance] += 1

    # ---------------------------------------------------------------- the turn
    def play(self) -> None:
        """R-CAM-5: steps 1..8 of the turn, each a step named after its rule (as in :mod:`sim.campus.kernel`)."""
        p, g, t = self.p, self.g, self.t
        g.free_t[t - 1] = sum(1 for s in g.status if s == FREE)
        if not any(s in (FREE, CAPTURED) for s in g.status):
            g.status_by_turn.append(list(g.status))
            return
        self.r_cam_20_place_adversaries()  # 1. preview
        options = self.r_cam_50_options()
        ears = self.r_cam_51_early_ears()
        self.free = [i for i in range(p.P) if g.status[i] == FREE]  # 2. declaration
        self.dest = [-1] * p.P
        self.named = [-1] * p.P
        if self.table is not None:
            self.r_cam_40_table(options, ears)  # 2-3. declaration and growth spending by the solved table
        else:
            if p.rescue:
                self.r_cam_40_rescue(options)
            self.r_cam_40_move(options, ears)
            self.r_cam_40_growth()  # 3. growth spending
            self.r_cam_40_stances(ears)
        self.r_cam_25_missions(ears)  # 4a. missions
        for loc in range(p.L):  # 4b. confrontations, location by location
            self.r_cam_6_confrontations(loc, self.free, self.dest, self.stance)
        self.r_cam_26_exits()
        self.r_cam_30_nursing()  # 5.
        self.r_cam_11_escape_checks()  # 6.
        self.r_cam_58_growth_points()  # 7.
        self.r_cam_15_game_over()  # 8.
        g.status_by_turn.append(list(g.status))

    def r_cam_20_place_adversaries(self) -> None:
        """Step 1: each scheduled adversary slot appears with its chance at one of its locations (R-CAM-20,
        R-CAM-50); a miso bomb for every PC whose game is over, at a plain location (R-CAM-15, R-CAM-57)."""
        p, g, t = self.p, self.g, self.t
        advs: list[Adv] = []
        for a in range(p.S):
            if p.adv_first[a] <= t <= p.adv_last[a] and self.chance(p.adv_chance[a], ("adv_chance", a)):
                cands = p.adv_cands[a]
                loc = int(cands[self.pick(len(cands), ("adv_loc", a))])
                advs.append(Adv(a, loc, tuple(map(int, p.adv_base[a]))))
        if p.miso:
            for i in range(p.P):
                if g.status[i] == GAME_OVER:
                    loc = int(p.plain[self.pick(len(p.plain), ("pc_miso_loc", i))])
                    advs.append(Adv(p.S + i, loc, tuple(g.base[i])))
        self.advs = advs

    def r_cam_50_options(self) -> list[int]:
        """Step 1, R-CAM-50: the locations offered this turn, a uniform k-subset (the first k of a partial
        shuffle) when ``options`` is below the number of locations."""
        p = self.p
        if p.k_options >= p.L:
            return list(range(p.L))
        order = list(range(p.L))
        for j in range(p.k_options):
            k = j + self.pick(p.L - j, ("options", j))
            order[j], order[k] = order[k], order[j]
        return sorted(order[: p.k_options])

    def r_cam_51_early_ears(self) -> bool:
        """R-CAM-51: early ears count while their holder is in the game (free or captured)."""
        g = self.g
        return any(self.terms[i].ears and g.status[i] in (FREE, CAPTURED) for i in range(self.p.P))

    def r_cam_40_rescue(self, options: list[int]) -> None:
        """Step 2, R-CAM-40 ``rescue = true``: free PCs in party order take the first captive (party order,
        room among the options) not yet covered whose check their own min completes."""
        p, g, t = self.p, self.g, self.t
        captives = [j for j in range(p.P) if g.status[j] == CAPTURED and g.room[j] in options]
        cover = {j: min(g.base[j]) for j in captives}
        for i in self.free:
            own = min(g.base[i])  # before this turn's growth
            for j in captives:
                if p.pc_excl[i, j]:
                    continue
                target = t + int(p.room_offset[g.room[j]])
                if cover[j] < target and cover[j] + own >= target:
                    self.dest[i], self.named[i] = g.room[j], j
                    cover[j] += own
                    break

    def r_cam_40_move(self, options: list[int], ears: bool) -> None:
        """Step 2, R-CAM-40 move ``random`` (uniform among the options) or ``avoid`` (with early ears: options
        with no adversary and no capture room; without: options that are no capture room; none: all options)."""
        p = self.p
        occupied = {a.loc for a in self.advs}
        for i in self.free:
            if self.dest[i] >= 0:
                continue
            choices = options
            if p.move_avoid:
                if ears:
                    safe = [loc for loc in options if not p.is_room[loc] and loc not in occupied]
                else:
                    safe = [loc for loc in options if not p.is_room[loc]]
                choices = safe or options
            self.dest[i] = choices[self.pick(len(choices), ("pc_move", i))]

    def r_cam_40_table(self, options: list[int], ears: bool) -> None:
        """Steps 2-3 by the solved table of optimal play (``policy.name = "optimal"``, one PC): destination among
        the options, growth spending and stance, the placements seen only with early ears (R-CAM-51); no draw."""
        p, g = self.p, self.g
        layout = None
        if ears:  # per location, the templates placed there, sorted (the table's view of the preview)
            layout = tuple(tuple(sorted(int(p.adv_template[a.slot]) for a in self.advs
                                        if a.loc == loc and not self.is_miso(a))) for loc in range(p.L))
        self.stance = [-1] * p.P
        for i in self.free:
            dest, gp, base, s = self.table.declare(self.t, g.vit[i], g.gp[i], g.base[i], options, layout)
            self.dest[i], g.gp[i], g.base[i], self.stance[i] = dest, gp, list(base), s

    def r_cam_40_growth(self) -> None:
        """Step 3, growth spending (free PCs only, in party order): purchases (R-CAM-9a), then the rest by the
        R-CAM-40 growth policy."""
        p, g = self.p, self.g
        for i in self.free:
            waiting = self.purchases(i)
            if g.gp[i] <= 0 or (waiting and p.save_for_buy):
                continue  # policy.save_for_buy: it keeps its gp for the item it cannot afford yet
            if p.growth == "lowest":
                g.base[i] = grow_lowest(g.base[i], g.gp[i])
                g.gp[i] = 0
            elif p.growth == "best":
                s = best_stance(g.base[i], self.terms[i].bonus, self.terms[i].mult_always, p.stance_allowed)
                g.base[i][s] += g.gp[i]
                g.gp[i] = 0

    def r_cam_40_stances(self, ears: bool) -> None:
        """R-CAM-40 stances of the free PCs, in party order (R-CAM-51: chosen after growth)."""
        self.stance = [-1] * self.p.P
        for i in self.free:
            self.stance[i] = self.choose_stance(i, self.dest[i], self.advs, ears)

    def r_cam_25_missions(self, ears: bool) -> None:
        """Step 4a: missions (R-CAM-25, R-CAM-56, R-CAM-25a), in file order; a mission with no free PC present
        has no effect (and draws nothing)."""
        p, t = self.p, self.t
        # R-CAM-25a: the adversary side has early ears when a miso bomb placed this turn holds them
        miso_ears = any(self.terms[a.slot - p.S].ears for a in self.advs if self.is_miso(a))
        for m in range(p.M):
            if not p.mis_first[m] <= t <= p.mis_last[m]:
                continue
            if p.mis_found[m] and not ears:
                continue  # R-CAM-25a: found by early ears, and no PC with early ears is in the game
            part = [i for i in self.free if self.dest[i] == p.mis_loc[m]]
            if not part or not self.chance(p.mis_chance[m], ("missions", m)):
                continue  # a mission with no free PC present has no effect (and draws nothing)
            ok = self.mission_succeeds(m, part, miso_ears)
            for i in part:
                self.mission_result(m, i, ok)

    def mission_succeeds(self, m: int, part: list[int], miso_ears: bool) -> bool:
        """R-CAM-25 / R-CAM-56: the participants' values in the mission's stance against its target, in total
        or each. R-CAM-25a: miso bombs here take part only when the adversary side has early ears (a miso bomb
        in play holds them), in any mission, found or not; they lower the total by their value in the mission's
        stance (never raising it); in mode "each" every participant's value is lowered."""
        p, g = self.p, self.g
        s = int(p.mis_stance[m])
        vals = [plain_value(g.base[i], self.terms[i].bonus, self.terms[i].mult_always, s) for i in part]
        target = int(p.mis_target[m])
        lower = 0
        if p.miso_in_missions and miso_ears:  # R-CAM-25a: without adversary-side early ears, no bomb takes part
            for a in self.advs:
                if self.is_miso(a) and a.loc == p.mis_loc[m]:
                    tm = self.terms[a.slot - p.S]
                    lower += max(plain_value(a.base, tm.bonus, tm.mult_always, s), 0)
        vals_low = [v - lower for v in vals]
        return all(v >= target for v in vals_low) if p.mis_each[m] else sum(vals) - lower >= target

    def mission_result(self, m: int, i: int, ok: bool) -> None:
        """R-CAM-25: the reward on success; on failure the penalty in vitality and ability (R-CAM-16: gp lift a
        negative ability back to 0, gp may go negative)."""
        p, g = self.p, self.g
        if ok:
            g.gp[i] += int(p.mis_reward[m])
            return
        g.vit[i] -= int(p.mis_pen_vit[m])
        k = int(p.mis_pen_ability[m])
        if k >= 0:
            g.base[i][k] -= int(p.mis_pen_amount[m])
            if g.base[i][k] < 0:  # R-CAM-16: gp lift it back to 0, gp may go negative
                g.gp[i] += g.base[i][k]
                g.base[i][k] = 0

    def r_cam_26_exits(self) -> None:
        """R-CAM-26 / R-CAM-58: a free PC at an open exit after its confrontations leaves, cleared."""
        p, g, t = self.p, self.g, self.t
        for i in self.free:
            if g.status[i] == FREE and p.is_exit[self.dest[i]] and t >= p.opens_on[self.dest[i]]:
                g.status[i] = CLEARED
                g.end_turn[i] = t

    def r_cam_30_nursing(self) -> None:
        """Step 5, R-CAM-30 / R-CAM-55: a free nurse gives +1 vitality (up to its starting value) to the other
        free PC at its location with the lowest vitality, one at random among ties."""
        p, g = self.p, self.g
        for i in range(p.P):
            if not (self.terms[i].nurse and g.status[i] == FREE):
                continue
            others = [j for j in self.free if j != i and g.status[j] == FREE and self.dest[j] == self.dest[i]]
            if not others:
                continue
            low = min(g.vit[j] for j in others)
            tied = [j for j in others if g.vit[j] == low]
            j = tied[self.pick(len(tied), ("pc_nurse_tie", i))]
            if g.vit[j] < p.pc_vit[j]:
                g.vit[j] += 1

    def r_cam_11_escape_checks(self) -> None:
        """Step 6, R-CAM-11..14: captives taken before this turn check against t + their room's offset, with the
        support of their rescuers (R-CAM-12, R-CAM-53); success frees the captive and rewards its rescuers,
        failure costs it 1 vitality and captures them (R-CAM-14); a failed support is captured where it stands."""
        p, g, t = self.p, self.g, self.t
        checking = [j for j in range(p.P) if g.status[j] == CAPTURED and g.cap_turn[j] < t]
        supporters, failed_support = self.r_cam_12_supporters(checking)
        outcome_of: dict[int, bool] = {}
        for j in checking:
            target = t + int(p.room_offset[g.room[j]])
            total = min(g.base[j]) + sum(min(g.base[i]) for i in supporters[j])  # R-CAM-13
            outcome_of[j] = target <= total
        for j in checking:
            g.checks_t[t - 1] += 1
            if outcome_of[j]:
                g.escapes_t[t - 1] += 1
                g.status[j] = FREE
                for i in supporters[j]:
                    g.gp[i] += t // 2 + 1
                    g.rescues_won += 1
            else:  # R-CAM-14
                g.vit[j] -= 1
                for i in supporters[j]:
                    self.capture(i, g.room[j])
        for i in failed_support:
            self.capture(i, self.dest[i])

    def r_cam_12_supporters(self, checking: list[int]) -> tuple[dict[int, list[int]], list[int]]:
        """R-CAM-12 / R-CAM-53: the rescuers are the free PCs whose destination is a capture room; each supports
        the captive it named, else one checking in its room at random (minus its exclusions; none left: the
        support fails). Returns each captive's supporters and the failed supporters."""
        p, g = self.p, self.g
        rescuers = [i for i in self.free if g.status[i] == FREE and p.is_room[self.dest[i]]]
        supporters: dict[int, list[int]] = {j: [] for j in checking}
        failed_support = []
        for i in rescuers:
            in_room = [j for j in checking if g.room[j] == self.dest[i]]
            if not in_room:
                continue  # nobody checks here: the rescuer does nothing
            g.rescues_tried += 1
            if self.named[i] >= 0 and self.named[i] in in_room:
                supporters[self.named[i]].append(i)
                continue
            cands = [j for j in in_room if not p.pc_excl[i, j]]
            if not cands:  # R-CAM-12: exclusions leave no one -> the support fails
                failed_support.append(i)
                continue
            supporters[cands[self.pick(len(cands), ("pc_rescue_pick", i))]].append(i)
        return supporters, failed_support

    def r_cam_58_growth_points(self) -> None:
        """Step 7, R-CAM-58: every PC still in the game (free or captured) gains 1 gp and its skills' per turn."""
        g = self.g
        for i in range(self.p.P):
            if g.status[i] in (FREE, CAPTURED):
                g.gp[i] += 1 + self.terms[i].gpt

    def r_cam_15_game_over(self) -> None:
        """Step 8, R-CAM-15: a PC in the game with no vitality left is out (game over)."""
        g = self.g
        for i in range(self.p.P):
            if g.status[i] in (FREE, CAPTURED) and g.vit[i] <= 0:
                g.status[i] = GAME_OVER
                g.end_turn[i] = self.t

    # ---------------------------------------------------------------- growth purchases (R-CAM-9a)
    def purchases(self, i: int) -> bool:
        """R-CAM-9a: free PC i walks the policy's buy list in order and buys each item as soon as it can afford
        it (gp >= price), before the rest is spent by the growth policy. An item it already has, or cannot
        take (a team when it already belongs to one, or a team with team_max members in the game), is passed
        over; the walk stops at the first item it cannot afford (the list is bought in order). Returns whether
        it stopped there (an item is waiting)."""
        p, g, t = self.p, self.g, self.t
        for b in range(p.B):
            if g.bought[i][b] > 0:
                continue
            k = int(p.buy_skill[b])
            if k >= 0:
                cost = int(p.sk_cost[k])
            else:
                team = int(p.buy_team[b])
                if self.terms[i].team >= 0:
                    continue  # one team per PC
                members = sum(1 for j in range(p.P) if self.terms[j].team == team and g.status[j] in (FREE, CAPTURED))
                if members >= p.team_max:
                    continue  # at most team_max members
                cost = p.team_cost
            if g.gp[i] < cost:
                return True
            g.gp[i] -= cost
            g.bought[i][b] = t
            self.terms[i] = pc_terms(p, i, g.bought[i])
        return False

    # ---------------------------------------------------------------- confrontations (R-CAM-6..9)
    def rotation(self, loc: int, here: list[int]) -> list[list[int]]:
        """R-CAM-6: the groups at a location: every team with two or more members present (R-CAM-9; more
        than team_max: a random team_max of them, the rest alone, R-CAM-52), larger teams first, ties in
        random order; then the other PCs one at a time in random order. Members in party order."""
        p = self.p
        by_team: dict[int, list[int]] = {}
        singles = []
        for i in here:
            if self.terms[i].team >= 0:
                by_team.setdefault(self.terms[i].team, []).append(i)
            else:
                singles.append(i)
        teams = []
        for k in sorted(by_team):
            members = by_team[k]
            if len(members) < 2:
                singles += members
                continue
            if len(members) > p.team_max:
                members = self.shuffle(members, ("team_members", k))
                singles += members[p.team_max:]
                members = sorted(members[: p.team_max])
            teams.append(members)
        ordered = []
        for size in sorted({len(m) for m in teams}, reverse=True):
            ordered += self.shuffle([m for m in teams if len(m) == size], ("team_order", (loc, size)))
        return ordered + [[i] for i in self.shuffle(sorted(singles), ("pc_order", loc))]

    def opponents(self, k: int, fought_boss: list[set]) -> list[Adv]:
        """R-CAM-7: the adversaries still here that group k may fight (a boss at most once a turn per group)."""
        return [a for a in self.here if a.present and not (self.is_boss(a) and a.slot in fought_boss[k])]

    def r_cam_6_confrontations(self, loc: int, free: list[int], dest: list[int], stance: list[int]) -> None:
        """R-CAM-6: walk the rotation round and round; at each step the next group still free with an
        opponent left fights, until no adversary or no free PC is left (so a group fights twice in a row only
        when it is the only one that can). ``fights = "once"``: one walk, each group at most once."""
        g = self.g
        self.here = [a for a in self.advs if a.present and a.loc == loc]
        pcs = [i for i in free if g.status[i] == FREE and dest[i] == loc]
        if not self.here or not pcs:
            return
        groups = self.rotation(loc, pcs)
        fought_boss: list[set] = [set() for _ in groups]
        n = len(groups)
        nxt = 0
        while True:
            chosen = -1
            for step in range(n):
                k = (nxt + step) % n
                if not self.p.until_cleared and k < nxt:
                    break  # "once": no second walk
                if all(g.status[i] == FREE for i in groups[k]) and self.opponents(k, fought_boss):
                    chosen = k
                    break
            if chosen < 0:
                return
            if len(groups[chosen]) >= 2:
                self.team_battle(chosen, groups[chosen], stance, fought_boss)
            else:
                self.one_on_one(chosen, groups[chosen][0], stance, fought_boss)
            nxt = chosen + 1
            if not self.p.until_cleared and nxt >= n:
                return

    def after_confrontation(self, k: int, a: Adv, fought_boss: list[set]) -> None:
        """R-CAM-7 / R-CAM-54: an ordinary adversary leaves, won or lost; a boss stays (a tie too) and is done
        with this group for the turn."""
        if self.is_boss(a):
            fought_boss[k].add(a.slot)
            a.j += 1
        else:
            a.present = False

    def one_on_one(self, k: int, i: int, stance: list[int], fought_boss: list[set]) -> None:
        """R-CAM-6, R-CAM-8: a single PC against one of its opponents drawn at random."""
        g = self.g
        opp = self.opponents(k, fought_boss)
        a = opp[self.pick(len(opp), ("pc_duel_pick", i))]
        foe = self.adv_fighter(a, self.adv_stance(a))
        _, _, outcome = duel(self.pc_fighter(i, stance[i]), foe)
        self.record_duel(a, stance[i], outcome)
        if outcome > 0:
            g.gp[i] += foe.reward
        else:
            self.capture(i, self.capture_room_of(i, a))
        self.after_confrontation(k, a, fought_boss)

    def team_battle(self, k: int, members: list[int], stance: list[int], fought_boss: list[set]) -> None:
        """R-CAM-9 / R-CAM-52: the team against every opponent present, each side in random order; each
        adversary draws its stance once per battle, when it first steps up."""
        g = self.g
        team = self.shuffle(members, ("team_side", k))
        present = self.shuffle(self.opponents(k, fought_boss), ("adv_side", k))
        pcs = [self.pc_fighter(j, stance[j]) for j in team]
        foes = [self.adv_fighter(a, None) for a in present]
        res = team_battle(pcs, foes, draw_stance=self.adv_stance)
        for pc_tag, adv, _, _, outcome in res.duels:
            self.record_duel(adv, stance[pc_tag], outcome)
        for j in team:
            g.gp[j] += res.reward_each
        if not res.team_won:
            for j in team:
                self.capture(j, self.capture_room_of(j, res.put_out_by[j]))
        for a in present:  # R-CAM-52: ordinary adversaries leave, dueled or not; bosses stay
            self.after_confrontation(k, a, fought_boss)

    def choose_stance(self, i: int, dest: int, advs: list[Adv], ears: bool) -> int:
        """R-CAM-40 stance policies; R-CAM-51 counter details. policy.forbid (issue 36; docs/decisions.md
        "Forbidden stances"): each policy's next best allowed stance: fixed, the first allowed in the order
        fight, flee, hide; random, uniform among the allowed (one draw, as ever); best and counter, the best
        allowed (ties fight, flee, hide); equilibrium, the maximin mix over the allowed stances."""
        p, g = self.p, self.g
        allowed = [s for s in range(3) if p.stance_allowed >> s & 1]
        if p.stance_policy == 0:
            return p.stance_value if p.stance_value in allowed else allowed[0]
        if p.stance_policy == 1:
            if len(allowed) == 3:
                return self.pick(3, ("pc_stance", i))
            return allowed[min(int(self.rng.u(("pc_stance", i)) * len(allowed)), len(allowed) - 1)]
        best = best_stance(g.base[i], self.terms[i].bonus, self.terms[i].mult_always, p.stance_allowed)
        if p.stance_policy == 2:
            return best
        if p.stance_policy == 4:
            return self.equilibrium_stance(i, dest, advs, ears, best)
        seen = [a for a in advs if a.loc == dest]
        if not ears or not seen:
            return best
        score = [0, 0, 0]
        for s in range(3):
            me = self.pc_fighter(i, s)
            for a in seen:
                w = self.stance_weights(a)
                for s2 in range(3):
                    if w[s2] and duel(me, self.adv_fighter(a, s2))[2] > 0:
                        score[s] += w[s2]
        return max(allowed, key=lambda s: (score[s], -s))

    def equilibrium_stance(self, i: int, dest: int, advs: list[Adv], ears: bool, best: int) -> int:
        """Stance policy ``equilibrium`` (issue 7; docs/decisions.md (Campus)): the PC's exact maximin mix of
        the stance game against the adversaries seen at its destination (early ears), each replying with its
        worst-case stance; without information (or with nobody seen) against the templates the schedule can
        place this turn, each once. Ties among optimal mixes go to the most wins against the adversaries'
        own stance weights (R-CAM-51 counter's integer scores). The stance is drawn from the mix with one
        uniform; nobody to face: ``best`` (no draw)."""
        p = self.p
        foes = [a for a in advs if a.loc == dest] if ears else []
        if not foes:
            foes = [Adv(int(a), -1, tuple(map(int, p.adv_base[a]))) for a in p.eq_fallback_slots[self.t - 1]]
        if not foes:
            return best
        codes = []
        prefer = [0, 0, 0]
        for a in foes:
            # R-CAM-2..4, R-CAM-30: 1 if the PC wins with stance s against stance s2 (a tie is a loss)
            m = [[int(duel(self.pc_fighter(i, s), self.adv_fighter(a, s2))[2] > 0) for s2 in range(3)]
                 for s in range(3)]
            codes.append(matrix_code(m))
            w = self.stance_weights(a)
            for s in range(3):
                prefer[s] += sum(w[s2] * m[s][s2] for s2 in range(3))
        return draw_stance(equilibrium_mix(codes, prefer, p.stance_allowed), self.rng.u(("pc_stance", i)))


def finish(p: Params, g: Game) -> None:
    """After turn T a PC still free has cleared (R-CAM-5)."""
    for i in range(p.P):
        if g.status[i] == FREE:
            g.status[i] = CLEARED
            g.end_turn[i] = p.T


def play_game(p: Params, rng, table=None) -> Game:
    """One game, turn by turn, drawing from ``rng`` (a :class:`Stream`); ``table``: the solved table of optimal
    play declares instead of the built-in policies."""
    g = new_game(p)
    for t in range(1, p.T + 1):
        Turn(p, g, t, rng, table).play()
    finish(p, g)
    return g


def run_reference(p: Params, n: int, rng: np.random.Generator, table=None) -> list[Game]:
    """n games in run order, each drawing what it uses from the chunk's stream (R-GEN-7)."""
    stream = Stream(rng)
    return [play_game(p, stream, table) for _ in range(n)]


def games_to_arrays(p: Params, games: list[Game]) -> dict[str, np.ndarray]:
    """The per-game arrays (the statistics of :mod:`sim.campus.columns`; same keys and dtypes as the kernel's)."""
    return columns_from_games(p, games)
