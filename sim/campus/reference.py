"""Scalar reference engine: one campus game at a time, one turn at a time, reading like RULES.md
section 3 (STYLE.md practice 6).

Randomness comes only from the per-turn uniform block (one row per game); :class:`~sim.campus.params.Layout`
says which column is which, so :mod:`sim.campus.kernel` makes the same choices from the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.campus.params import CAPTURED, CLEARED, FREE, GAME_OVER, Params, miso_best
from sim.campus.rules import Fighter, best_stance, duel, grow_lowest, plain_value, team_battle
from sim.campus.stances import draw_stance, equilibrium_mix, matrix_code


def _pick(u: float, m: int) -> int:
    """A uniform choice among m from one uniform (the shared convention)."""
    return min(int(u * m), m - 1)


@dataclass
class Adv:
    slot: int
    loc: int
    base: tuple[int, int, int]
    present: bool = True
    j: int = 0  # confrontations so far this turn (a boss may have several, R-CAM-7)


@dataclass
class Game:
    """One game's state and its per-game statistics (R-CAM-41)."""

    base: list[list[int]]
    gp: list[int]
    vit: list[int]
    status: list[int]
    room: list[int]
    cap_turn: list[int]
    end_turn: list[int]
    T: int
    n_templates: int
    status_by_turn: list[list[int]] = field(default_factory=list)
    captures_t: list[int] = field(default_factory=list)
    checks_t: list[int] = field(default_factory=list)
    escapes_t: list[int] = field(default_factory=list)
    free_t: list[int] = field(default_factory=list)
    duels_tmpl: list[int] = field(default_factory=list)
    wins_tmpl: list[int] = field(default_factory=list)
    duels_stance: list[int] = field(default_factory=lambda: [0, 0, 0])
    wins_stance: list[int] = field(default_factory=lambda: [0, 0, 0])
    rescues_tried: int = 0
    rescues_won: int = 0

    def __post_init__(self):
        self.captures_t = [0] * self.T
        self.checks_t = [0] * self.T
        self.escapes_t = [0] * self.T
        self.free_t = [0] * self.T
        self.duels_tmpl = [0] * self.n_templates
        self.wins_tmpl = [0] * self.n_templates


def new_game(p: Params) -> Game:
    P = p.P
    return Game(
        base=[list(map(int, p.pc_base[i])) for i in range(P)],
        gp=[0] * P,
        vit=[int(v) for v in p.pc_vit],
        status=[FREE] * P,
        room=[-1] * P,
        cap_turn=[0] * P,
        end_turn=[0] * P,
        T=p.T,
        n_templates=p.n_templates,
    )


class Turn:
    """One turn t of one game, steps 1..8 of R-CAM-5."""

    def __init__(self, p: Params, g: Game, t: int, u: list[float]):
        self.p, self.g, self.t, self.u = p, g, t, u
        self.lay = p.layout

    # ---------------------------------------------------------------- helpers
    def pc_fighter(self, i: int, stance: int) -> Fighter:
        p = self.p
        return Fighter(
            name=p.pc_names[i], stance=stance, base=tuple(self.g.base[i]), bonus=tuple(map(int, p.pc_bonus[i])),
            mult_always=p.pc_mult_always[i], mult_advantage=p.pc_mult_adv[i], tag=i,
        )

    def adv_fighter(self, a: Adv, stance: int) -> Fighter:
        p = self.p
        return Fighter(
            name=p.template_names[p.adv_template[a.slot]], stance=stance, base=a.base,
            bonus=tuple(map(int, p.adv_bonus[a.slot])), mult_always=p.adv_mult_always[a.slot],
            mult_advantage=p.adv_mult_adv[a.slot], reward=int(p.adv_reward[a.slot]), tag=a,
        )

    def is_miso(self, a: Adv) -> bool:
        return a.slot >= self.p.S

    def adv_stance(self, a: Adv) -> int:
        """R-CAM-21: drawn from the weights for each confrontation; R-CAM-57 miso bombs use the
        scenario's stance policy (best and counter: their own best)."""
        p = self.p
        u = self.u[self.lay.adv_stance[a.slot, a.j]]
        if self.is_miso(a):
            if p.stance_policy == 0:
                return p.stance_value
            if p.stance_policy == 1:
                return _pick(u, 3)
            return miso_best(p, a.slot - p.S, a.base)
        return int(u >= p.adv_c1[a.slot]) + int(u >= p.adv_c2[a.slot])

    def stance_weights(self, a: Adv) -> list[int]:
        """Stance probabilities (integer numerators) as the counter policy sees them (R-CAM-51)."""
        p = self.p
        if self.is_miso(a):
            w = [0, 0, 0]
            w[miso_best(p, a.slot - p.S, a.base)] = p.weight_den
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
        if len(p.rooms) == 1:
            return int(p.rooms[0])
        return int(p.rooms[_pick(self.u[self.lay.pc_capture_room[i]], len(p.rooms))])

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
        p, g, t, u, lay = self.p, self.g, self.t, self.u, self.lay
        P = p.P
        g.free_t[t - 1] = sum(1 for s in g.status if s == FREE)
        if not any(s in (FREE, CAPTURED) for s in g.status):
            g.status_by_turn.append(list(g.status))
            return

        # 1. preview: placements (R-CAM-20, R-CAM-50), miso bombs (R-CAM-15, R-CAM-57), options
        advs: list[Adv] = []
        for a in range(p.S):
            if p.adv_first[a] <= t <= p.adv_last[a] and u[lay.adv_chance[a]] < p.adv_chance[a]:
                cands = p.adv_cands[a]
                loc = int(cands[_pick(u[lay.adv_loc[a]], len(cands))])
                advs.append(Adv(a, loc, tuple(map(int, p.adv_base[a]))))
        if p.miso:
            for i in range(P):
                if g.status[i] == GAME_OVER:
                    loc = int(p.plain[_pick(u[lay.pc_miso_loc[i]], len(p.plain))])
                    advs.append(Adv(p.S + i, loc, tuple(g.base[i])))
        if p.k_options < p.L:  # R-CAM-50: a uniform k-subset (the k smallest of L uniform keys)
            keys = [u[c] for c in lay.options]
            kth = sorted(keys)[p.k_options - 1]
            options = [loc for loc in range(p.L) if keys[loc] <= kth]
        else:
            options = list(range(p.L))
        # R-CAM-51: early ears count while their holder is in the game (free or captured)
        ears = any(p.pc_ears[i] and g.status[i] in (FREE, CAPTURED) for i in range(P))
        occupied = {a.loc for a in advs}

        # 2. declaration: rescue assignment, destination (R-CAM-40)
        free = [i for i in range(P) if g.status[i] == FREE]
        dest = [-1] * P
        named = [-1] * P
        if p.rescue:
            captives = [j for j in range(P) if g.status[j] == CAPTURED and g.room[j] in options]
            cover = {j: min(g.base[j]) for j in captives}
            for i in free:
                own = min(g.base[i])  # before this turn's growth
                for j in captives:
                    if p.pc_excl[i, j]:
                        continue
                    target = t + int(p.room_offset[g.room[j]])
                    if cover[j] < target and cover[j] + own >= target:
                        dest[i], named[i] = g.room[j], j
                        cover[j] += own
                        break
        for i in free:
            if dest[i] >= 0:
                continue
            choices = options
            if p.move_avoid:
                if ears:
                    safe = [loc for loc in options if not p.is_room[loc] and loc not in occupied]
                else:
                    safe = [loc for loc in options if not p.is_room[loc]]
                choices = safe or options
            dest[i] = choices[_pick(u[lay.pc_move[i]], len(choices))]

        # 3. growth spending (free PCs only; R-CAM-40 growth policies)
        for i in free:
            if g.gp[i] <= 0:
                continue
            if p.growth == "lowest":
                g.base[i] = grow_lowest(g.base[i], g.gp[i])
                g.gp[i] = 0
            elif p.growth == "best":
                s = best_stance(g.base[i], p.pc_bonus[i], p.pc_mult_always[i])
                g.base[i][s] += g.gp[i]
                g.gp[i] = 0

        # stances (R-CAM-40; R-CAM-51: chosen after growth)
        stance = [-1] * P
        for i in free:
            stance[i] = self.choose_stance(i, dest[i], advs, ears)

        # 4a. missions (R-CAM-25, R-CAM-56)
        for m in range(p.M):
            if not (p.mis_first[m] <= t <= p.mis_last[m] and u[lay.missions[m]] < p.mis_chance[m]):
                continue
            part = [i for i in free if dest[i] == p.mis_loc[m] and g.status[i] == FREE]
            if not part:
                continue
            s = int(p.mis_stance[m])
            vals = [plain_value(g.base[i], p.pc_bonus[i], p.pc_mult_always[i], s) for i in part]
            target = int(p.mis_target[m])
            ok = all(v >= target for v in vals) if p.mis_each[m] else sum(vals) >= target
            for i in part:
                if ok:
                    g.gp[i] += int(p.mis_reward[m])
                else:
                    g.vit[i] -= int(p.mis_pen_vit[m])
                    k = int(p.mis_pen_ability[m])
                    if k >= 0:
                        g.base[i][k] -= int(p.mis_pen_amount[m])
                        if g.base[i][k] < 0:  # R-CAM-16: gp lift it back to 0, gp may go negative
                            g.gp[i] += g.base[i][k]
                            g.base[i][k] = 0

        # 4b. team battles (R-CAM-6, R-CAM-9, R-CAM-52)
        fought = [False] * P
        anchors = []
        for i in free:
            if p.pc_team[i] < 0 or g.status[i] != FREE:
                continue
            same = [j for j in free if p.pc_team[j] == p.pc_team[i] and dest[j] == dest[i]]
            if len(same) >= 2 and same[0] == i:
                anchors.append((-min(len(same), p.team_max), u[lay.pc_team_order[i]], i, same))
        anchors.sort()
        for _, _, anchor, same in anchors:
            loc = dest[anchor]
            present = [a for a in advs if a.present and a.loc == loc]
            if not present:
                continue
            members = sorted(same, key=lambda j: (u[lay.pc_member_key[j]], j))[: p.team_max]
            present.sort(key=lambda a: (u[lay.adv_order[a.slot, a.j]], a.slot))
            pcs = [self.pc_fighter(j, stance[j]) for j in members]
            foes = [self.adv_fighter(a, self.adv_stance(a)) for a in present]
            res = team_battle(pcs, foes)
            for pc_tag, adv, _, _, outcome in res.duels:
                self.record_duel(adv, stance[pc_tag], outcome)
            for j in members:
                fought[j] = True
                g.gp[j] += res.reward_each
            if not res.team_won:
                for j in members:
                    self.capture(j, self.capture_room_of(j, res.put_out_by[j]))
            for a in present:  # R-CAM-52: ordinary adversaries leave, dueled or not; bosses stay
                if p.adv_boss[a.slot] and not self.is_miso(a):
                    a.j += 1
                else:
                    a.present = False

        # 4c. one-on-one confrontations in random order (R-CAM-6, R-CAM-7, R-CAM-8, R-CAM-54)
        for i in sorted(range(P), key=lambda i: (u[lay.pc_duel_key[i]], i)):
            if g.status[i] != FREE or fought[i]:
                continue
            present = [a for a in advs if a.present and a.loc == dest[i]]
            if not present:
                continue
            a = present[_pick(u[lay.pc_duel_pick[i]], len(present))]
            foe = self.adv_fighter(a, self.adv_stance(a))
            _, _, outcome = duel(self.pc_fighter(i, stance[i]), foe)
            self.record_duel(a, stance[i], outcome)
            fought[i] = True
            if outcome > 0:
                g.gp[i] += foe.reward
            else:
                self.capture(i, self.capture_room_of(i, a))
            if p.adv_boss[a.slot] and not self.is_miso(a):
                a.j += 1
            else:
                a.present = False

        # exits (R-CAM-26, R-CAM-58)
        for i in free:
            if g.status[i] == FREE and p.is_exit[dest[i]] and t >= p.opens_on[dest[i]]:
                g.status[i] = CLEARED
                g.end_turn[i] = t
        # R-CAM-12: rescuers are the free PCs whose destination is a capture room
        rescuers = [i for i in free if g.status[i] == FREE and p.is_room[dest[i]]]

        # 5. nursing (R-CAM-30, R-CAM-55)
        for i in range(P):
            if not (p.pc_nurse[i] and g.status[i] == FREE):
                continue
            others = [j for j in free if j != i and g.status[j] == FREE and dest[j] == dest[i]]
            if not others:
                continue
            low = min(g.vit[j] for j in others)
            tied = [j for j in others if g.vit[j] == low]
            j = tied[_pick(u[lay.pc_nurse_tie[i]], len(tied))]
            if g.vit[j] < p.pc_vit[j]:
                g.vit[j] += 1

        # 6. escape checks (R-CAM-11..14, R-CAM-53)
        checking = [j for j in range(P) if g.status[j] == CAPTURED and g.cap_turn[j] < t]
        supporters: dict[int, list[int]] = {j: [] for j in checking}
        failed_support = []
        for i in rescuers:
            in_room = [j for j in checking if g.room[j] == dest[i]]
            if not in_room:
                continue  # nobody checks here: the rescuer does nothing
            g.rescues_tried += 1
            if named[i] >= 0 and named[i] in in_room:
                supporters[named[i]].append(i)
                continue
            cands = [j for j in in_room if not p.pc_excl[i, j]]
            if not cands:  # R-CAM-12: exclusions leave no one -> the support fails
                failed_support.append(i)
                continue
            supporters[cands[_pick(u[lay.pc_rescue_pick[i]], len(cands))]].append(i)
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
            self.capture(i, dest[i])

        # 7. growth points (R-CAM-58)
        for i in range(P):
            if g.status[i] in (FREE, CAPTURED):
                g.gp[i] += 1 + int(p.pc_gpt[i])
        # 8. game over (R-CAM-15)
        for i in range(P):
            if g.status[i] in (FREE, CAPTURED) and g.vit[i] <= 0:
                g.status[i] = GAME_OVER
                g.end_turn[i] = t
        g.status_by_turn.append(list(g.status))

    def choose_stance(self, i: int, dest: int, advs: list[Adv], ears: bool) -> int:
        """R-CAM-40 stance policies; R-CAM-51 counter details."""
        p, g = self.p, self.g
        if p.stance_policy == 0:
            return p.stance_value
        if p.stance_policy == 1:
            return _pick(self.u[self.lay.pc_stance[i]], 3)
        best = best_stance(g.base[i], p.pc_bonus[i], p.pc_mult_always[i])
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
        return score.index(max(score))

    def equilibrium_stance(self, i: int, dest: int, advs: list[Adv], ears: bool, best: int) -> int:
        """Stance policy ``equilibrium`` (issue 7; docs/decisions.md (Campus)): the PC's exact maximin mix of
        the stance game against the adversaries seen at its destination (early ears), each replying with its
        worst-case stance, the one met drawn uniformly (R-CAM-6); without information (or with nobody seen)
        against the templates the schedule can place this turn, each once. Ties among optimal mixes go to the
        most wins against the adversaries' own stance weights (R-CAM-51 counter's integer scores). The
        stance is drawn from the mix with the PC's ``stance`` column; nobody to face: ``best``."""
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
        return draw_stance(equilibrium_mix(codes, prefer), self.u[self.lay.pc_stance[i]])


def finish(p: Params, g: Game) -> None:
    """After turn T a PC still free has cleared (R-CAM-5)."""
    for i in range(p.P):
        if g.status[i] == FREE:
            g.status[i] = CLEARED
            g.end_turn[i] = p.T


def play_game_turns(p: Params, blocks: list[np.ndarray], row: int) -> Game:
    """Play one game from pre-drawn blocks (one (n, K) block per turn; this game's row)."""
    g = new_game(p)
    for t in range(1, p.T + 1):
        Turn(p, g, t, blocks[t - 1][row].tolist()).play()
    finish(p, g)
    return g


def run_reference(p: Params, n: int, rng: np.random.Generator) -> list[Game]:
    """n games, drawing exactly the kernel's per-turn blocks from ``rng``."""
    games = [new_game(p) for _ in range(n)]
    for t in range(1, p.T + 1):
        block = rng.random((n, p.layout.K))
        for row, g in enumerate(games):
            Turn(p, g, t, block[row].tolist()).play()
    for g in games:
        finish(p, g)
    return games


def games_to_arrays(p: Params, games: list[Game]) -> dict[str, np.ndarray]:
    """The per-game record (same keys and dtypes as the kernel's)."""
    return {
        "status_by_turn": np.array([g.status_by_turn for g in games], np.int8).reshape(len(games), p.T, p.P),
        "final_status": np.array([g.status for g in games], np.int8).reshape(len(games), p.P),
        "end_turn": np.array([g.end_turn for g in games], np.int16).reshape(len(games), p.P),
        "vitality": np.array([g.vit for g in games], np.int64).reshape(len(games), p.P),
        "gp": np.array([g.gp for g in games], np.int64).reshape(len(games), p.P),
        "base": np.array([g.base for g in games], np.int64).reshape(len(games), p.P, 3),
        "captures_t": np.array([g.captures_t for g in games], np.int64).reshape(len(games), p.T),
        "checks_t": np.array([g.checks_t for g in games], np.int64).reshape(len(games), p.T),
        "escapes_t": np.array([g.escapes_t for g in games], np.int64).reshape(len(games), p.T),
        "free_t": np.array([g.free_t for g in games], np.int64).reshape(len(games), p.T),
        "duels_tmpl": np.array([g.duels_tmpl for g in games], np.int64).reshape(len(games), p.n_templates),
        "wins_tmpl": np.array([g.wins_tmpl for g in games], np.int64).reshape(len(games), p.n_templates),
        "duels_stance": np.array([g.duels_stance for g in games], np.int64).reshape(len(games), 3),
        "wins_stance": np.array([g.wins_stance for g in games], np.int64).reshape(len(games), 3),
        "rescues_tried": np.array([g.rescues_tried for g in games], np.int64),
        "rescues_won": np.array([g.rescues_won for g in games], np.int64),
    }
