"""Vectorized campus kernel: a batch of games advanced one turn at a time (STYLE.md practices 1-3).

The state is a frozen dataclass of numpy arrays with the batch axis first. :func:`step` is pure
(it returns a new state) and reads the same per-turn uniform block as the scalar reference
(:mod:`sim.campus.reference`) with the same column layout, so both give identical games. Finished
games stay in the batch; nothing changes for them because no PC of theirs is free or captured.
The kernel loops in Python over PCs, duels and team battles, vectorizing over games, and works on
compressed subsets of games wherever a step concerns few of them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from sim.campus.params import CAPTURED, CLEARED, FREE, GAME_OVER, Params
from sim.campus.stances import equilibrium_thresholds

BIG = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class State:
    """Per-game arrays, batch axis first (n games, P PCs, T turns)."""

    base: np.ndarray  # (n, P, 3) base abilities after growth (R-CAM-1)
    gp: np.ndarray  # (n, P)
    vit: np.ndarray  # (n, P)
    status: np.ndarray  # (n, P) int8: free, captured, cleared, game over
    room: np.ndarray  # (n, P) capture room location of a captive
    cap_turn: np.ndarray  # (n, P) turn of the last capture
    end_turn: np.ndarray  # (n, P) turn of clearing or game over
    status_by_turn: np.ndarray  # (n, T, P) int8
    captures_t: np.ndarray  # (n, T)
    checks_t: np.ndarray  # (n, T)
    escapes_t: np.ndarray  # (n, T)
    free_t: np.ndarray  # (n, T) free PCs at the start of the turn
    duels_tmpl: np.ndarray  # (n, templates)
    wins_tmpl: np.ndarray
    duels_stance: np.ndarray  # (n, 3) by the PC's stance
    wins_stance: np.ndarray
    rescues_tried: np.ndarray  # (n,)
    rescues_won: np.ndarray


def initial_state(p: Params, n: int) -> State:
    P, T = p.P, p.T
    return State(
        base=np.broadcast_to(p.pc_base, (n, P, 3)).astype(np.int64),
        gp=np.zeros((n, P), np.int64),
        vit=np.broadcast_to(p.pc_vit, (n, P)).astype(np.int64),
        status=np.zeros((n, P), np.int8),
        room=np.full((n, P), -1, np.int64),
        cap_turn=np.zeros((n, P), np.int64),
        end_turn=np.zeros((n, P), np.int16),
        status_by_turn=np.zeros((n, T, P), np.int8),
        captures_t=np.zeros((n, T), np.int64),
        checks_t=np.zeros((n, T), np.int64),
        escapes_t=np.zeros((n, T), np.int64),
        free_t=np.zeros((n, T), np.int64),
        duels_tmpl=np.zeros((n, p.n_templates), np.int64),
        wins_tmpl=np.zeros((n, p.n_templates), np.int64),
        duels_stance=np.zeros((n, 3), np.int64),
        wins_stance=np.zeros((n, 3), np.int64),
        rescues_tried=np.zeros(n, np.int64),
        rescues_won=np.zeros(n, np.int64),
    )


def _pick(u: np.ndarray, m) -> np.ndarray:
    """Uniform choice among m (the reference's min(int(u*m), m-1))."""
    # floor(u * m) <= m - 1 for every double u < 1 (exact for powers of two, rounded down otherwise)
    return (u * m).astype(np.int64)


def _min3(b: np.ndarray) -> np.ndarray:
    """Minimum over the last axis of length 3 (numpy's reduction over a tiny axis is slow)."""
    return np.minimum(np.minimum(b[..., 0], b[..., 1]), b[..., 2])


def _argmax3(v: np.ndarray) -> np.ndarray:
    """First index of the maximum over the last axis of length 3 (ties fight, flee, hide)."""
    first = np.where(v[..., 1] > v[..., 0], 1, 0)
    high = np.maximum(v[..., 0], v[..., 1])
    return np.where(v[..., 2] > high, 2, first)


def _nth_true(mask: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Index of the k-th True (0-based) along the last axis."""
    return (np.cumsum(mask, axis=-1) > k[..., None]).argmax(axis=-1)


def _argmin3(b: np.ndarray) -> np.ndarray:
    """First index of the minimum over the last axis of length 3 (ties fight, flee, hide)."""
    first = np.where(b[..., 1] < b[..., 0], 1, 0)
    low = np.minimum(b[..., 0], b[..., 1])
    return np.where(b[..., 2] < low, 2, first)


def _unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a 2-d integer array and each row's index among them (np.unique(axis=0) without
    its slow sort of a void view)."""
    order = np.lexsort(keys.T[::-1])
    srt = keys[order]
    new = np.ones(len(srt), bool)
    new[1:] = (srt[1:] != srt[:-1]).any(axis=1)
    group = np.cumsum(new) - 1
    inv = np.empty(len(keys), np.int64)
    inv[order] = group
    return srt[new], inv


def grow_lowest_vec(base: np.ndarray, gp: np.ndarray) -> np.ndarray:
    """R-CAM-40 growth ``lowest``: each gp, one at a time, to the lowest base ability (ties fight,
    flee, hide). ``base`` (m, 3), ``gp`` (m,); rows still spending shrink each step."""
    out = base.copy()
    left = np.maximum(gp, 0).copy()
    idx = np.flatnonzero(left > 0)
    while idx.size:
        k = _argmin3(out[idx])
        out[idx, k] += 1
        left[idx] -= 1
        idx = idx[left[idx] > 0]
    return out


class _Turn:
    """Working copies for one turn of the whole batch; :func:`step` wraps it purely."""

    def __init__(self, p: Params, s: State, t: int, u: np.ndarray):
        self.p, self.t, self.u = p, t, u
        self.lay = p.layout
        self.n = u.shape[0]
        self.rows = np.arange(self.n)
        self.base = s.base.copy()
        self.gp = s.gp.copy()
        self.vit = s.vit.copy()
        self.st = s.status.copy()
        self.room = s.room.copy()
        self.cap_turn = s.cap_turn.copy()
        self.end_turn = s.end_turn.copy()
        self.status_by_turn = s.status_by_turn.copy()
        self.captures_t = s.captures_t.copy()
        self.checks_t = s.checks_t.copy()
        self.escapes_t = s.escapes_t.copy()
        self.free_t = s.free_t.copy()
        self.duels_tmpl = s.duels_tmpl.copy()
        self.wins_tmpl = s.wins_tmpl.copy()
        self.duels_stance = s.duels_stance.copy()
        self.wins_stance = s.wins_stance.copy()
        self.rescues_tried = s.rescues_tried.copy()
        self.rescues_won = s.rescues_won.copy()

    def state(self) -> State:
        return State(
            base=self.base, gp=self.gp, vit=self.vit, status=self.st, room=self.room, cap_turn=self.cap_turn,
            end_turn=self.end_turn, status_by_turn=self.status_by_turn, captures_t=self.captures_t,
            checks_t=self.checks_t, escapes_t=self.escapes_t, free_t=self.free_t, duels_tmpl=self.duels_tmpl,
            wins_tmpl=self.wins_tmpl, duels_stance=self.duels_stance, wins_stance=self.wins_stance,
            rescues_tried=self.rescues_tried, rescues_won=self.rescues_won,
        )

    # ------------------------------------------------------------------ values (R-CAM-3)
    def _mul(self, x, num, den):
        """floor(x * num / den): additions first, the product of multipliers floored once (R-CAM-58)."""
        return x * num if self.p.unit_den else x * num // den

    def pc_value(self, r, pc, stance, adv, reduction=0):
        p = self.p
        b = np.maximum(self.base[r, pc, stance] - reduction, 0)
        a = adv.astype(np.int64)
        return self._mul(b + p.pc_bonus[pc, stance], p.pc_num[pc, stance, a], p.pc_den[pc, stance, a])

    def adv_value(self, r, slot, stance, adv, reduction=0):
        p = self.p
        b = np.maximum(self.adv_base[r, slot, stance] - reduction, 0)
        a = adv.astype(np.int64)
        return self._mul(b + p.adv_bonus[slot, stance], p.adv_num[slot, stance, a], p.adv_den[slot, stance, a])

    def plain_values(self, base: np.ndarray) -> np.ndarray:
        """(n, P, 3) values without an opponent (best, missions)."""
        p = self.p
        return self._mul(base + p.pc_bonus, p.pc_num[:, :, 0], p.pc_den[:, :, 0])

    def adv_stance(self, r, slot):
        """R-CAM-21 / R-CAM-57 stance of adversary ``slot`` (per row) for its current confrontation."""
        p = self.p
        col = self.lay.adv_stance[slot, self.adv_j[r, slot]]
        us = self.u[r, col]
        spawn = (us >= p.adv_c1[slot]).astype(np.int64) + (us >= p.adv_c2[slot])
        if not p.miso:
            return spawn
        if p.stance_policy == 0:
            miso = np.full_like(spawn, p.stance_value)
        elif p.stance_policy == 1:
            miso = _pick(us, 3)
        else:
            miso = self.miso_best[r, np.clip(slot - p.S, 0, p.P - 1)]
        return np.where(slot >= p.S, miso, spawn)

    def capture(self, r, pc, room):
        """R-CAM-8 / R-CAM-14 (rows r unique within one call)."""
        self.st[r, pc] = CAPTURED
        self.vit[r, pc] -= 1
        self.room[r, pc] = room
        self.cap_turn[r, pc] = self.t
        self.captures_t[r, self.t - 1] += 1

    def capture_room_of(self, r, pc, slot):
        """R-CAM-8 / R-CAM-53: the adversary's room, else the only room, else one at random."""
        p = self.p
        fixed = p.adv_room[slot]
        if len(p.rooms) == 1:
            default = np.full_like(fixed, p.rooms[0])
        else:
            default = p.rooms[_pick(self.u[r, self.lay.pc_capture_room[pc]], len(p.rooms))]
        return np.where(fixed >= 0, fixed, default)

    def record_duels(self, r, slot, pc_stance, win):
        tmpl = self.p.adv_template[slot]
        self.duels_tmpl[r, tmpl] += 1
        self.wins_tmpl[r, tmpl] += win
        self.duels_stance[r, pc_stance] += 1
        self.wins_stance[r, pc_stance] += win

    # ------------------------------------------------------------------ the turn
    def play(self) -> None:
        p, t, u, lay, rows = self.p, self.t, self.u, self.lay, self.rows
        n, P, A, L, S = self.n, p.P, p.A, p.L, p.S
        st = self.st
        free = st == FREE
        self.free_t[:, t - 1] = np.count_nonzero(free, axis=1)

        # 1. preview: placements (R-CAM-20, R-CAM-50), miso bombs (R-CAM-57), options
        present = np.zeros((n, A), bool)
        loc = np.zeros((n, A), np.int64)
        if S:
            on = (p.adv_first[:S] <= t) & (t <= p.adv_last[:S])
            present[:, :S] = (u[:, lay.adv_chance[:S]] < p.adv_chance[:S]) & on
            loc[:, :S] = p.adv_cand_table[np.arange(S), _pick(u[:, lay.adv_loc[:S]], p.adv_n_cands[:S])]
        if p.miso:
            present[:, S:] = st == GAME_OVER
            loc[:, S:] = p.plain[_pick(u[:, lay.pc_miso_loc], len(p.plain))]
            self.adv_base = np.concatenate([np.broadcast_to(p.adv_base[:S], (n, S, 3)), self.base], axis=1)
            self.miso_best = _argmax3(self.plain_values(self.base))
        else:
            self.adv_base = np.broadcast_to(p.adv_base, (n, A, 3))
        self.adv_j = np.zeros((n, A), np.int64)
        # adversaries present per location, kept up to date as they leave
        flat = (rows * (L + 1))[:, None] + np.where(present, loc, L)
        at_cnt = np.bincount(flat.ravel(), minlength=n * (L + 1)).reshape(n, L + 1)[:, :L].copy()
        all_options = p.k_options >= L
        if not all_options:  # R-CAM-50: the k locations with the smallest keys
            keys = u[:, lay.options]
            kth = np.partition(keys, p.k_options - 1, axis=1)[:, p.k_options - 1]
            opt = keys <= kth[:, None]
        else:
            opt = np.ones((n, L), bool)
        ears_pcs = np.flatnonzero(p.pc_ears)
        ears = ((st[:, ears_pcs] == FREE) | (st[:, ears_pcs] == CAPTURED)).any(1)

        # 2. declaration (R-CAM-40): rescue assignments, then destinations
        dest = np.full((n, P), -1, np.int64)
        named = np.full((n, P), -1, np.int64)
        if p.rescue:
            self.rescue_policy(free, opt, dest, named)
        need = free & (dest < 0)
        if p.move_avoid:
            safe_ne = opt & ~p.is_room
            safe = np.where(ears[:, None], safe_ne & (at_cnt == 0), safe_ne)
            none = ~safe.any(1)
            safe[none] = opt[none]
        else:
            safe = opt
        if all_options and not p.move_avoid:
            choice = _pick(u[:, lay.pc_move], L)
        else:
            k = _pick(u[:, lay.pc_move], np.count_nonzero(safe, axis=1)[:, None])
            choice = np.take_along_axis(np.argsort(~safe, axis=1, kind="stable"), k, axis=1)
        dest = np.where(need, choice, dest)

        # 3. growth (free PCs only)
        spend = free & (self.gp > 0)
        if p.growth != "none" and spend.any():
            flat_base = self.base.reshape(-1, 3)
            idx = np.flatnonzero(spend.ravel())
            g = self.gp.ravel()[idx]
            if p.growth == "lowest":
                # the first gp of every spender on the full arrays (most spend one), the rest compressed
                first = _argmin3(self.base)
                for k3 in range(3):
                    self.base[:, :, k3] += spend & (first == k3)
                more = g > 1
                idx, g = idx[more], g[more] - 1
                flat_base[idx] = grow_lowest_vec(flat_base[idx], g)
            else:
                pc = idx % P
                b = flat_base[idx]
                vals = self._mul(b + p.pc_bonus[pc], p.pc_num[pc, :, 0], p.pc_den[pc, :, 0])
                flat_base[idx, _argmax3(vals)] += g
            self.gp[spend] = 0

        # stances (R-CAM-40; R-CAM-51: after growth)
        if p.stance_policy == 0:
            stance = np.full((n, P), p.stance_value, np.int64)
        elif p.stance_policy == 1:
            stance = _pick(u[:, lay.pc_stance], 3)
        else:
            stance = _argmax3(self.plain_values(self.base))
            if p.stance_policy == 3:
                self.counter(stance, free, dest, present, loc, ears, at_cnt)
            elif p.stance_policy == 4:
                self.equilibrium(stance, free, dest, present, loc, ears, at_cnt)

        # 4a. missions (R-CAM-25, R-CAM-56)
        for m in range(p.M):
            if not p.mis_first[m] <= t <= p.mis_last[m]:
                continue
            part = free & (dest == p.mis_loc[m]) & (u[:, lay.missions[m]] < p.mis_chance[m])[:, None]
            r = np.flatnonzero(part.any(1))
            if not r.size:
                continue
            part = part[r]
            sm = p.mis_stance[m]
            vals = self._mul(self.base[r, :, sm] + p.pc_bonus[:, sm], p.pc_num[:, sm, 0], p.pc_den[:, sm, 0])
            if p.mis_each[m]:
                ok = np.where(part, vals >= p.mis_target[m], True).all(1)
            else:
                ok = np.where(part, vals, 0).sum(1) >= p.mis_target[m]
            win = part & ok[:, None]
            lose = part & ~ok[:, None]
            self.gp[r] += win * p.mis_reward[m]
            self.vit[r] -= lose * p.mis_pen_vit[m]
            ka = p.mis_pen_ability[m]
            if ka >= 0:
                b = self.base[r, :, ka] - lose * p.mis_pen_amount[m]
                neg = np.minimum(b, 0)  # R-CAM-16: gp lift the ability back to 0 (gp may go negative)
                self.gp[r] += neg
                self.base[r, :, ka] = b - neg

        # 4b. team battles (R-CAM-6, R-CAM-9, R-CAM-52)
        fought = np.zeros((n, P), bool)
        if p.has_teams:
            self.team_battles(free, dest, stance, fought, present, loc, at_cnt)

        # 4c. one-on-one confrontations in random order (R-CAM-6..8, R-CAM-54)
        dc = np.maximum(dest, 0)
        conf = (st == FREE) & ~fought & (at_cnt[rows[:, None], dc] > 0)
        rc = np.flatnonzero(conf.any(1))
        if rc.size:
            dorder = np.argsort(u[rc][:, lay.pc_duel_key], axis=1, kind="stable")
            for q in range(P):
                i = dorder[:, q]
                di = dc[rc, i]
                ok = (st[rc, i] == FREE) & ~fought[rc, i] & (at_cnt[rc, di] > 0)
                if not ok.any():
                    continue
                r, ir, d = rc[ok], i[ok], di[ok]
                at_r = present[r] & (loc[r] == d[:, None])
                slot = _nth_true(at_r, _pick(u[r, lay.pc_duel_pick[ir]], at_cnt[r, d]))
                sa = self.adv_stance(r, slot)
                sp = stance[r, ir]
                pv = self.pc_value(r, ir, sp, sp == (sa + 1) % 3)
                av = self.adv_value(r, slot, sa, sa == (sp + 1) % 3)
                win = pv > av  # R-CAM-4: higher wins; a tie is a loss for both
                self.record_duels(r, slot, sp, win)
                fought[r, ir] = True
                self.gp[r, ir] += np.where(win, p.adv_reward[slot], 0)
                lost = ~win
                if lost.any():
                    rl, il, sl = r[lost], ir[lost], slot[lost]
                    self.capture(rl, il, self.capture_room_of(rl, il, sl))
                boss = p.adv_boss[slot]
                self.adv_j[r[boss], slot[boss]] += 1
                gone = ~boss
                present[r[gone], slot[gone]] = False
                at_cnt[r[gone], d[gone]] -= 1

        # exits (R-CAM-26, R-CAM-58)
        leave = (st == FREE) & (dest >= 0) & p.is_exit[dc] & (t >= p.opens_on[dc])
        if leave.any():
            st[leave] = CLEARED
            self.end_turn[leave] = t
        now_free = st == FREE
        rescuers = now_free & (dest >= 0) & p.is_room[dc]

        # 5. nursing (R-CAM-30, R-CAM-55)
        nurses = np.flatnonzero(p.pc_nurse)
        hurt = now_free & (self.vit < p.pc_vit) if nurses.size else None
        for i in nurses:
            # nothing can change unless another free PC there is below its starting vitality
            r = np.flatnonzero(now_free[:, i] & (hurt & (dest == dest[:, i][:, None])).any(1))
            if not r.size:
                continue
            oth = now_free[r] & (dest[r] == dest[r, i][:, None])
            oth[:, i] = False
            keep = oth.any(1)
            r, oth = r[keep], oth[keep]
            v = self.vit[r]
            low = np.where(oth, v, BIG).min(1)
            tied = oth & (v == low[:, None])
            j = _nth_true(tied, _pick(u[r, lay.pc_nurse_tie[i]], np.count_nonzero(tied, axis=1)))
            up = v[np.arange(r.size), j] < p.pc_vit[j]
            self.vit[r[up], j[up]] += 1

        # 6. escape checks (R-CAM-11..14, R-CAM-53)
        checking = (st == CAPTURED) & (self.cap_turn < t)
        rk = np.flatnonzero(checking.any(1))
        if rk.size:
            self.escape_checks(rk, checking[rk], rescuers[rk], dest[rk], named[rk])

        # 7. growth points (R-CAM-58)
        in_game = (st == FREE) | (st == CAPTURED)
        self.gp += in_game * (1 + p.pc_gpt)
        # 8. game over (R-CAM-15)
        over = in_game & (self.vit <= 0)
        if over.any():
            st[over] = GAME_OVER
            self.end_turn[over] = t
        self.status_by_turn[:, t - 1] = st

    def rescue_policy(self, free, opt, dest, named):
        """R-CAM-40 ``rescue = true``: free PCs in party order take the first captive (party order,
        held before this turn, room among the options) not yet covered whose check their own min
        completes; min taken before this turn's growth."""
        p, t, rows = self.p, self.t, self.rows
        P = p.P
        cap = self.st == CAPTURED
        room_ok = cap & opt[rows[:, None], np.maximum(self.room, 0)]
        rr = np.flatnonzero(room_ok.any(1) & free.any(1))
        if not rr.size:
            return
        mins = _min3(self.base[rr])
        ok = room_ok[rr]
        target = t + p.room_offset[np.maximum(self.room[rr], 0)]
        cover = mins.copy()
        fr = free[rr]
        d_sub = dest[rr]
        n_sub = named[rr]
        for i in range(P):
            unassigned = fr[:, i].copy()
            if not unassigned.any():
                continue
            own = mins[:, i]
            for j in range(P):
                if j == i or p.pc_excl[i, j]:
                    continue
                c = unassigned & ok[:, j] & (cover[:, j] < target[:, j]) & (cover[:, j] + own >= target[:, j])
                if not c.any():
                    continue
                d_sub[c, i] = self.room[rr[c], j]
                n_sub[c, i] = j
                cover[c, j] += own[c]
                unassigned &= ~c
        dest[rr] = d_sub
        named[rr] = n_sub

    def opponent_wins(self, r, i):
        """For PC i in rows r (both (m,)): ``win[k, a, s, s2]`` = the PC beats adversary slot a when it
        declares s and a declares s2 (R-CAM-2..4, R-CAM-30), and ``w[k, a]`` the slot's stance weights as
        integers over ``weight_den`` (a miso bomb: all on its own best, R-CAM-57)."""
        p = self.p
        A = p.A
        m = r.size
        s_idx = np.arange(3)
        beats = s_idx[:, None] == (s_idx[None, :] + 1) % 3  # [a, b]: a beats b
        b = self.base[r, i]  # (m, 3)
        V = self._mul((b + p.pc_bonus[i])[:, :, None], p.pc_num[i], p.pc_den[i])  # (m, 3, 2)
        pv = np.where(beats[None], V[:, :, 1][:, :, None], V[:, :, 0][:, :, None])  # (m, s, s2)
        if p.miso:
            ab = self.adv_base[r]  # (m, A, 3)
        else:  # spawn adversaries only: their values are the same in every game
            ab = p.adv_base[None]
        VA = self._mul((ab + p.adv_bonus[None])[..., None], p.adv_num[None], p.adv_den[None])  # (.,A,3,2)
        av = np.where(beats[None, None], VA[..., 1][..., None], VA[..., 0][..., None])  # (., A, s2, s)
        win = pv[:, None, :, :] > np.swapaxes(av, 2, 3)  # (m, A, s, s2)
        w = np.broadcast_to(p.adv_wnum, (m, A, 3)).copy()
        if p.miso:
            mb = self.miso_best[r]  # (m, P)
            w[:, p.S:, :] = (np.arange(3)[None, None, :] == mb[:, :, None]) * p.weight_den
        return win, w

    def counter(self, stance, free, dest, present, loc, ears, at_cnt):
        """R-CAM-40 ``counter`` / R-CAM-51: the stance with the most (integer-weighted) wins against
        the adversaries seen at the destination; without any, ``best`` (already in ``stance``)."""
        rows = self.rows
        dc = np.maximum(dest, 0)
        r, i = np.nonzero(free & ears[:, None] & (at_cnt[rows[:, None], dc] > 0))
        if not r.size:
            return
        seen = present[r] & (loc[r] == dc[r, i][:, None])  # (m, A)
        win, w = self.opponent_wins(r, i)
        w = w * seen[:, :, None]
        score = (win * w[:, :, None, :]).sum(axis=(1, 3))  # (m, s)
        stance[r, i] = _argmax3(score)

    def equilibrium(self, stance, free, dest, present, loc, ears, at_cnt):
        """Stance policy ``equilibrium`` (issue 7): the reference's ``equilibrium_stance`` on every free PC.
        The games are grouped by their exact key (the multiset of 0/1 matrices of the adversaries faced and
        the tie-break scores), each distinct key solved once (cached in :mod:`sim.campus.stances`)."""
        p, lay = self.p, self.lay
        A = p.A
        r, i = np.nonzero(free)
        if not r.size:
            return
        dc = np.maximum(dest[r, i], 0)
        win, w = self.opponent_wins(r, i)
        seen = ears[r][:, None] & present[r] & (loc[r] == dc[:, None])  # (m, A)
        fallback = np.zeros(A, bool)
        fallback[p.eq_fallback_slots[self.t - 1]] = True
        foes = np.where(seen.any(1)[:, None], seen, fallback[None, :])
        code = np.zeros(foes.shape, np.int64)  # one 9-bit matrix per adversary (stances.matrix_code)
        prefer = np.zeros((r.size, 3), np.int64)  # (m, s) wins weighted by the foes' stance weights
        wf = w * foes[:, :, None]
        for s in range(3):
            for s2 in range(3):
                code |= win[:, :, s, s2].astype(np.int64) << (3 * s + s2)
            prefer[:, s] = (win[:, :, s, :] * wf).sum(axis=(1, 2))
        codes = np.where(foes, code, -1)
        keys = np.concatenate([np.sort(codes, axis=1), prefer], axis=1)
        uniq, inv = _unique_rows(keys)
        c1 = np.full(len(uniq), np.nan)
        c2 = np.full(len(uniq), np.nan)
        for k, key in enumerate(uniq):
            cs = [int(c) for c in key[:A] if c >= 0]
            if cs:  # nobody to face: `best` (already in ``stance``)
                c1[k], c2[k] = equilibrium_thresholds(cs, key[A:])
        c1, c2 = c1[inv], c2[inv]
        has = ~np.isnan(c1)
        us = self.u[r, lay.pc_stance[i]]
        drawn = (us >= c1).astype(np.int64) + (us >= c2)
        stance[r[has], i[has]] = drawn[has]

    def team_battles(self, free, dest, stance, fought, present, loc, at_cnt):
        p, u, lay, rows = self.p, self.u, self.lay, self.rows
        n, P, A, tm = self.n, p.P, p.A, p.team_max
        team = p.pc_team
        anchor = np.zeros((n, P), bool)
        size = np.zeros((n, P), np.int64)
        for k in range(len(p.team_names)):
            members = np.flatnonzero(team == k)
            if members.size < 2:
                continue
            for i in members:
                same = np.zeros(n, np.int64)
                earlier = np.zeros(n, bool)
                for j in members:
                    sj = free[:, j] & (dest[:, j] == dest[:, i])
                    same += sj
                    if j < i:
                        earlier |= sj
                di = np.maximum(dest[:, i], 0)
                # a team whose location has no adversary now never fights: it can be left out of the order
                anchor[:, i] = free[:, i] & (same >= 2) & ~earlier & (at_cnt[rows, di] > 0)
                size[:, i] = np.minimum(same, tm)
        ra = np.flatnonzero(anchor.any(1))
        if not ra.size:
            return
        anc = anchor[ra]
        neg_size = np.where(anc, -size[ra], 1)
        tie = np.broadcast_to(np.arange(P), anc.shape)
        order = np.lexsort((tie, u[ra][:, lay.pc_team_order], neg_size), axis=-1)
        n_anchor = np.count_nonzero(anc, axis=1)
        for q in range(int(n_anchor.max())):
            sel = q < n_anchor
            rq = ra[sel]
            a_q = order[sel, q]
            l_q = dest[rq, a_q]
            has = at_cnt[rq, l_q] > 0
            if not has.any():
                continue
            r, a_i, lq = rq[has], a_q[has], l_q[has]
            m = r.size
            at_r = present[r] & (loc[r] == lq[:, None])
            member = free[r] & (team[None, :] == team[a_i][:, None]) & (dest[r] == lq[:, None])
            mkey = np.where(member, u[r][:, lay.pc_member_key], np.inf)
            morder = np.argsort(mkey, axis=1, kind="stable")[:, :tm]
            nmem = np.minimum(np.count_nonzero(member, axis=1), tm)
            ocol = lay.adv_order[np.arange(A)[None, :], self.adv_j[r]]
            akey = np.where(at_r, u[r[:, None], ocol], np.inf)
            aorder = np.argsort(akey, axis=1, kind="stable")
            nadv = np.count_nonzero(at_r, axis=1)
            adv_st = self.adv_stance(r[:, None], np.broadcast_to(np.arange(A), (m, A)))  # once per battle
            pp = np.zeros(m, np.int64)
            ap = np.zeros(m, np.int64)
            red_pc = np.zeros((m, tm), np.int64)
            red_adv = np.zeros((m, A), np.int64)
            reward = np.zeros(m, np.int64)
            outby = np.full((m, tm), -1, np.int64)
            go = np.ones(m, bool)
            while go.any():
                g = np.flatnonzero(go)
                rg = r[g]
                ppg, apg = pp[g], ap[g]
                pc = morder[g, ppg]
                slot = aorder[g, apg]
                sp = stance[rg, pc]
                sa = adv_st[g, slot]
                pv = self.pc_value(rg, pc, sp, sp == (sa + 1) % 3, red_pc[g, ppg])
                av = self.adv_value(rg, slot, sa, sa == (sp + 1) % 3, red_adv[g, slot])
                win = pv > av
                lose = av > pv
                self.record_duels(rg, slot, sp, win)
                # R-CAM-9: the winner's base in its stance is lowered by the loser's value
                red_pc[g, ppg] += np.where(win, np.maximum(av, 0), 0)
                reward[g] += np.where(win, p.adv_reward[slot], 0)
                red_adv[g, slot] += np.where(lose, np.maximum(pv, 0), 0)
                outby[g, ppg] = np.where(win, outby[g, ppg], slot)
                pp[g] += ~win
                ap[g] += ~lose
                go = (pp < nmem) & (ap < nadv)
            lost = pp >= nmem  # a last duel that empties both sides is a loss (R-CAM-52)
            share = reward // nmem
            for kpos in range(tm):
                has_k = kpos < nmem
                if not has_k.any():
                    continue
                rk = r[has_k]
                pk = morder[has_k, kpos]
                fought[rk, pk] = True
                self.gp[rk, pk] += share[has_k]
                lk = lost[has_k]
                if lk.any():
                    rl, pl, sl = rk[lk], pk[lk], outby[has_k, kpos][lk]
                    self.capture(rl, pl, self.capture_room_of(rl, pl, sl))
            # R-CAM-52: every ordinary adversary that took part leaves; bosses stay
            boss = p.adv_boss[None, :] & at_r
            self.adv_j[r] += boss
            leaving = at_r & ~p.adv_boss[None, :]
            present[r] &= ~leaving
            at_cnt[r, lq] -= np.count_nonzero(leaving, axis=1)

    def escape_checks(self, rk, checking, rescuers, dest, named):
        """Step 6 on the rows rk that hold a checking captive (arrays already restricted to rk)."""
        p, u, lay, t = self.p, self.u, self.lay, self.t
        m, P = rk.size, p.P
        mr = np.arange(m)
        room = self.room[rk]
        mins = _min3(self.base[rk])
        support = np.zeros((m, P), np.int64)
        tgt = np.full((m, P), -1, np.int64)
        failed = np.zeros((m, P), bool)
        for i in range(P):
            ri = rescuers[:, i]
            if not ri.any():
                continue
            in_room = checking & (room == dest[:, i][:, None])
            loc_r = np.flatnonzero(ri & in_room.any(1))
            if not loc_r.size:
                continue
            self.rescues_tried[rk[loc_r]] += 1
            ir = in_room[loc_r]
            nm = named[loc_r, i]
            use_named = (nm >= 0) & ir[np.arange(loc_r.size), np.maximum(nm, 0)]
            cands = ir & ~p.pc_excl[i][None, :]
            cc = np.count_nonzero(cands, axis=1)
            fail = ~use_named & (cc == 0)  # R-CAM-12: exclusions left no one
            j = _nth_true(cands, _pick(u[rk[loc_r], lay.pc_rescue_pick[i]], cc))
            target = np.where(use_named, nm, np.where(fail, -1, j))
            tgt[loc_r, i] = target
            failed[loc_r, i] = fail
            ok = target >= 0
            support[loc_r[ok], target[ok]] += mins[loc_r[ok], i]
        goal = t + p.room_offset[np.maximum(room, 0)]
        success = checking & (goal <= mins + support)  # R-CAM-13
        self.checks_t[rk, t - 1] += np.count_nonzero(checking, axis=1)
        self.escapes_t[rk, t - 1] += np.count_nonzero(success, axis=1)
        has_t = tgt >= 0
        succ_r = has_t & success[mr[:, None], np.maximum(tgt, 0)]
        self.gp[rk] += succ_r * (t // 2 + 1)
        self.rescues_won[rk] += np.count_nonzero(succ_r, axis=1)
        st = self.st[rk]
        vit = self.vit[rk]
        st[success] = FREE
        vit -= checking & ~success  # R-CAM-14
        caught = (has_t & ~succ_r) | failed
        if caught.any():
            st[caught] = CAPTURED
            vit[caught] -= 1
            rm = self.room[rk]
            rm[caught] = dest[caught]
            self.room[rk] = rm
            ct = self.cap_turn[rk]
            ct[caught] = t
            self.cap_turn[rk] = ct
            self.captures_t[rk, t - 1] += np.count_nonzero(caught, axis=1)
        self.st[rk] = st
        self.vit[rk] = vit


def step(state: State, p: Params, t: int, u: np.ndarray) -> State:
    """Advance every game of the batch through turn t (R-CAM-5) with the turn's uniform block u (n, K)."""
    turn = _Turn(p, state, t, u)
    turn.play()
    return turn.state()


def finish(state: State, p: Params) -> State:
    """After turn T a PC still free has cleared (R-CAM-5)."""
    free = state.status == FREE
    return replace(
        state,
        status=np.where(free, CLEARED, state.status).astype(np.int8),
        end_turn=np.where(free, p.T, state.end_turn).astype(np.int16),
    )


def run_kernel(p: Params, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """n games; one (n, K) uniform block per turn drawn for every game (R-GEN-7, STYLE.md 3)."""
    s = initial_state(p, n)
    for t in range(1, p.T + 1):
        u = rng.random((n, p.layout.K))
        s = step(s, p, t, u)
    s = finish(s, p)
    return state_to_arrays(s)


def state_to_arrays(s: State) -> dict[str, np.ndarray]:
    return {
        "status_by_turn": s.status_by_turn,
        "final_status": s.status,
        "end_turn": s.end_turn,
        "vitality": s.vit,
        "gp": s.gp,
        "base": s.base,
        "captures_t": s.captures_t,
        "checks_t": s.checks_t,
        "escapes_t": s.escapes_t,
        "free_t": s.free_t,
        "duels_tmpl": s.duels_tmpl,
        "wins_tmpl": s.wins_tmpl,
        "duels_stance": s.duels_stance,
        "wins_stance": s.wins_stance,
        "rescues_tried": s.rescues_tried,
        "rescues_won": s.rescues_won,
    }
