"""The vectorized kernel: the whole chunk at once, finished runs masked (STYLE.md practices 1-3).

Same rules, same uniform columns (``sim.formation.layout``) as the scalar reference in
``sim.formation.reference``; per-run results are identical for the same seed (tested).
Units act one after another (a Python loop over units and rounds); every step is an array
operation over the batch axis.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from sim.dice import faces_from_uniform
from sim.formation import layout as L
from sim.formation.model import (
    FRONT,
    G_ASSAULT,
    G_NONE,
    G_SERVICE,
    G_TRAINING,
    MAGIC,
    MELEE,
    Params,
)
from sim.formation.rules import AREA_PENALTY, GRAPPLE_PENALTY, PASSIVE_PENALTY

DRAW = 2
NO_SKIRMISH = -1
BIG = np.iinfo(np.int32).max


# --------------------------------------------------------------------------------------------
# R-MDK-1 / R-MDK-2 on arrays


def dark_arrays(f1: np.ndarray, f2: np.ndarray):
    """R-MDK-1: (dark sum, critical, fumble, DP) of die faces, elementwise."""
    s = np.where(f1 == 6, 0, f1) + np.where(f2 == 6, 0, f2)
    sixes = (f1 == 6).astype(np.int8) + (f2 == 6).astype(np.int8)
    dp = np.where(sixes == 2, 4, sixes)
    return s, sixes == 2, (f1 == 5) & (f2 == 5), dp


def active_wins_arrays(a_total, a_crit, a_fumble, p_total, p_crit, p_fumble) -> np.ndarray:
    """R-MDK-2: critical beats non-critical, fumble loses to non-fumble, else higher total;
    ties to the passive side."""
    return np.where(a_crit != p_crit, a_crit, np.where(a_fumble != p_fumble, p_fumble, a_total > p_total))


# --------------------------------------------------------------------------------------------
# ambush and session


def ambush_kernel(p: Params, u: np.ndarray) -> dict[str, np.ndarray]:
    """R-MDK-12, R-MDK-20 for the whole batch."""
    f = faces_from_uniform(u, 6)
    sa, ca, fa, _ = dark_arrays(f[:, 0], f[:, 1])
    sd, cd, fd, _ = dark_arrays(f[:, 2], f[:, 3])
    a_total = p.ambusher_base - sa
    d_total = p.defender_base - sd
    win = active_wins_arrays(a_total, ca, fa, d_total, cd, fd) & p.ambush_possible
    return {"ambush_ambusher_total": a_total.astype(np.int64), "ambush_defender_total": d_total.astype(np.int64),
            "ambush_win": win, "ambush_win_by_2": win & (a_total - d_total >= 2)}


def session_kernel(p: Params, u: np.ndarray) -> dict[str, np.ndarray]:
    """R-MDK-3 rewards + R-MDK-1 DP from sixes over ``checks`` rolls (R-MDK-21)."""
    n = u.shape[0]
    if p.checks:
        f = faces_from_uniform(u, 6)
        sixes = dark_arrays(f[:, 0::2], f[:, 1::2])[3].astype(np.int64).sum(axis=1)
    else:
        sixes = np.zeros(n, dtype=np.int64)
    return {"dp_rewards": np.full(n, p.reward_dp, dtype=np.int64), "dp_sixes": sixes,
            "dp_session": p.reward_dp + sixes}


# --------------------------------------------------------------------------------------------
# skirmish state and steps


@dataclass(frozen=True)
class SkirmishState:
    """Frozen skirmish state; every field has the batch axis first."""

    hp: np.ndarray  # (n, U) int32
    alive: np.ndarray  # (n, U) bool
    present: np.ndarray  # (n, U) bool, R-MDK-5
    entered: np.ndarray  # (n, U) int16: round the unit was called (acts from the next)
    partner: np.ndarray  # (n, U) int16: grapple partner or -1 (R-MDK-10)
    initiator: np.ndarray  # (n, U) bool
    gkind: np.ndarray  # (n, U) int8
    winner: np.ndarray  # (n,) int8, NO_SKIRMISH while running
    rounds: np.ndarray  # (n,) int16

    @property
    def finished(self) -> np.ndarray:
        return self.winner != NO_SKIRMISH


ATTACK, DEFENSE, LEAVE, HOLD = 0, 1, 2, 3  # the four 2DR pairs of a unit's columns
_FIRST = [L.ATTACK_DICE[0], L.DEFENSE_DICE[0], L.LEAVE_DICE[0], L.HOLD_DICE[0]]
_SECOND = [L.ATTACK_DICE[1], L.DEFENSE_DICE[1], L.LEAVE_DICE[1], L.HOLD_DICE[1]]


@dataclass(frozen=True)
class RoundDice:
    """One round's uniforms read as dice once (layout columns), for every unit."""

    dark_sum: np.ndarray  # (n, U, 4) R-MDK-1 dark dice sum of the ATTACK/DEFENSE/LEAVE/HOLD pairs
    critical: np.ndarray  # (n, U, 4) bool
    fumble: np.ndarray  # (n, U, 4) bool
    d4: np.ndarray  # (n, U) R-MDK-13 die
    target_pick: np.ndarray  # (n, U) uniform
    victim_pick: np.ndarray  # (n, U) uniform


def round_dice(u: np.ndarray, n_units: int) -> RoundDice:
    v = u.reshape(u.shape[0], n_units, L.UNIT_COLS)
    s, c, f, _ = dark_arrays(faces_from_uniform(v[:, :, _FIRST], 6), faces_from_uniform(v[:, :, _SECOND], 6))
    return RoundDice(dark_sum=s, critical=c, fumble=f, d4=faces_from_uniform(v[:, :, L.ROLEPLAY_D4], 4),
                     target_pick=v[:, :, L.TARGET_PICK], victim_pick=v[:, :, L.VICTIM_PICK])


def init_state(p: Params, n: int) -> SkirmishState:
    U = p.n_units
    return SkirmishState(
        hp=np.broadcast_to(p.hp, (n, U)).astype(np.int32),
        alive=np.ones((n, U), dtype=bool),
        present=np.broadcast_to(p.master < 0, (n, U)).copy(),
        entered=np.zeros((n, U), dtype=np.int16),
        partner=np.full((n, U), -1, dtype=np.int16),
        initiator=np.zeros((n, U), dtype=bool),
        gkind=np.zeros((n, U), dtype=np.int8),
        winner=np.full(n, NO_SKIRMISH, dtype=np.int8),
        rounds=np.zeros(n, dtype=np.int16),
    )


def penalty_rows(p: Params, onfield: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Array version of ``targeting.attack_penalty`` and ``targeting.in_contact`` for attacker ``j``
    against every unit: (penalty (n, U), contact (n, U)). R-MDK-6/7/8/9."""
    sj = p.side[j]
    own = p.side == sj
    front = p.area == FRONT
    enemy_front = (onfield & ~own & front).sum(axis=1)
    rank = (onfield[:, :j] & (own & front)[:j]).sum(axis=1)
    overflow = (p.area[j] == FRONT) & onfield[:, j] & (rank >= enemy_front)  # R-MDK-7
    if p.troop[j]:  # R-MDK-8
        blockers = ~own & front & p.troop & (p.troop_size >= p.troop_size[j])
        troop_ok = ~(onfield & blockers).any(axis=1)
    else:
        troop_ok = np.zeros(onfield.shape[0], dtype=bool)
    a, own_area = p.attack[j], p.area[j]
    if a == MAGIC:
        front_pen, back_pen, reach = 0, 0, troop_ok
    elif a == MELEE:
        front_pen = 0 if own_area == FRONT else AREA_PENALTY
        back_pen, reach = AREA_PENALTY, overflow | troop_ok
    else:  # ranged
        front_pen = AREA_PENALTY if own_area == FRONT else 0
        back_pen = 0 if own_area == FRONT else AREA_PENALTY
        reach = troop_ok
    back_row = np.where(reach, 0, back_pen)
    pen = np.where(front[None, :], front_pen, back_row[:, None]).astype(np.int32)
    contact_back = overflow | troop_ok
    contact = ~own[None, :] & np.where(front[None, :], own_area == FRONT, contact_back[:, None])
    return pen, contact


def _release(partner, initiator, gkind, rows: np.ndarray, units: np.ndarray) -> None:
    """End the grapples of ``units[rows]`` (in place on fresh copies)."""
    r = np.nonzero(rows)[0]
    if r.size == 0:
        return
    u = units[r]
    g = partner[r, u].astype(np.int64)
    for x, rr in ((u, r), (g[g >= 0], r[g >= 0])):
        partner[rr, x] = -1
        initiator[rr, x] = False
        gkind[rr, x] = G_NONE


def _choose(p: Params, cands: np.ndarray, hp: np.ndarray, partner: np.ndarray, u_pick: np.ndarray) -> np.ndarray:
    """Policy tie-break among minimal-penalty candidates (file order)."""
    if p.policy == "first":
        return np.argmax(cands, axis=1)
    if p.policy == "random":
        count = cands.sum(axis=1)
        kth = np.floor(u_pick * count)
        return np.argmax(np.cumsum(cands, axis=1) > kth[:, None], axis=1)
    # greedy: avoid a grappled pair (R-MDK-10 random victim) if possible, then the weakest
    free = cands & (partner < 0)
    pool = np.where(free.any(axis=1)[:, None], free, cands)
    return np.argmin(np.where(pool, hp, BIG), axis=1)


def unit_turn(p: Params, st: SkirmishState, j: int, r: int, dice: RoundDice, free: np.ndarray,
              by2: np.ndarray) -> SkirmishState:
    """Pure step: unit ``j`` takes its turn of round ``r`` in every unfinished run."""
    n = st.hp.shape[0]
    ar = np.arange(n)
    ambushed = 1 - p.ambush_side
    act = ~st.finished & st.alive[:, j] & st.present[:, j] & (st.entered[:, j] < r)  # R-MDK-5
    if p.side[j] == ambushed and not p.super_perception[j]:
        act &= ~free  # R-MDK-12 free round
    if not act.any():
        return st
    partner, initiator, gkind = st.partner.copy(), st.initiator.copy(), st.gkind.copy()
    present, entered = st.present.copy(), st.entered.copy()
    hp, alive = st.hp.copy(), st.alive.copy()
    winner, rounds = st.winner.copy(), st.rounds.copy()

    # R-MDK-10 leaving a grapple (no action)
    g = partner[:, j].astype(np.int64)
    held = act & (g >= 0) & ~initiator[:, j]
    if held.any():
        gi = np.maximum(g, 0)
        kind = gkind[:, j]
        ms, mc, mf = dice.dark_sum[:, j, LEAVE], dice.critical[:, j, LEAVE], dice.fumble[:, j, LEAVE]
        ts, tc, tf = dice.dark_sum[:, j, HOLD], dice.critical[:, j, HOLD], dice.fumble[:, j, HOLD]
        assault = active_wins_arrays(p.stamina[j] - ms, mc, mf, p.stamina[gi] - ts, tc, tf)
        focus = np.where(mc, True, np.where(mf, False, p.resolve[j] - ms - p.focus_target >= 0))
        leave = np.where(kind == G_SERVICE, True, np.where(kind == G_ASSAULT, assault, focus))
        _release(partner, initiator, gkind, held & leave, np.full(n, j))

    # R-MDK-5 calling a summon or slave monster costs the action; one in combat at a time
    comps = p.companions[j]
    if comps:
        in_combat = np.zeros(n, dtype=bool)
        nxt = np.full(n, -1, dtype=np.int64)
        for c in reversed(comps):
            in_combat |= alive[:, c] & present[:, c]
            nxt = np.where(~present[:, c], c, nxt)
        call = act & ~in_combat & (nxt >= 0)
        rc = np.nonzero(call)[0]
        present[rc, nxt[rc]] = True
        entered[rc, nxt[rc]] = r
        act &= ~call
        if not act.any():
            return replace(st, partner=partner, initiator=initiator, gkind=gkind, present=present,
                           entered=entered)

    onfield = alive & present
    g = partner[:, j].astype(np.int64)
    grappled = g >= 0
    pen, contact = penalty_rows(p, onfield, j)
    enemies = onfield & (p.side != p.side[j])[None, :]
    penalty = np.where(enemies, pen, BIG).min(axis=1)
    cands = enemies & (pen == penalty[:, None])
    try_grapple = np.zeros(n, dtype=bool)
    if p.grapple[j] != G_NONE:  # R-MDK-9 contact needed
        gc = enemies & contact & (partner < 0)
        try_grapple = ~grappled & gc.any(axis=1)
        cands = np.where(try_grapple[:, None], gc, cands)
        penalty = np.where(try_grapple, 0, penalty)
    target = _choose(p, cands, hp, partner, dice.target_pick[:, j])
    target = np.where(grappled, g, target)
    penalty = np.where(grappled, 0, penalty)
    tp = partner[ar, target].astype(np.int64)
    redirect = ~grappled & (tp >= 0) & (p.attack[j] != MAGIC) & (dice.victim_pick[:, j] >= 0.5)
    victim = np.where(redirect, tp, target)  # R-MDK-10 random victim

    modifier = -penalty - GRAPPLE_PENALTY * grappled
    if p.grapple[j] in (G_TRAINING, G_SERVICE):  # R-MDK-13
        uses = try_grapple | (grappled & initiator[:, j])
        modifier = modifier + np.where(uses, dice.d4[:, j] - 1, 0)
    sa, ca, fa = dice.dark_sum[:, j, ATTACK], dice.critical[:, j, ATTACK], dice.fumble[:, j, ATTACK]
    sd, cd, fd = dice.dark_sum[:, j, DEFENSE], dice.critical[:, j, DEFENSE], dice.fumble[:, j, DEFENSE]
    a_total = p.combat[j] + modifier - sa
    passive = np.where(free & by2 & (p.side[victim] == ambushed), PASSIVE_PENALTY, 0)  # R-MDK-12
    d_total = p.evade[victim] - passive - sd
    hit = act & active_wins_arrays(a_total, ca, fa, d_total, cd, fd)  # R-MDK-2

    dmg = p.damage[j] - p.armor[victim]  # R-MDK-14 damage model, R-MDK-4 armor
    if p.margin_damage:
        dmg = dmg + (a_total - d_total)
    dmg = np.maximum(p.min_damage, dmg)
    rh = np.nonzero(hit)[0]
    hp[rh, victim[rh]] -= dmg[rh].astype(np.int32)
    died = hit & (hp[ar, victim] <= 0)
    alive[ar[died], victim[died]] = False
    _release(partner, initiator, gkind, died, victim)
    form = hit & ~died & try_grapple  # R-MDK-10 grapple formed
    rf = np.nonzero(form)[0]
    if rf.size:
        vf = victim[rf]
        partner[rf, j] = vf
        partner[rf, vf] = j
        initiator[rf, j] = True
        gkind[rf, j] = p.grapple[j]
        gkind[rf, vf] = p.grapple[j]

    onfield = alive & present
    left_a = (onfield & (p.side == 0)[None, :]).any(axis=1)
    left_b = (onfield & (p.side == 1)[None, :]).any(axis=1)
    done = act & ~(left_a & left_b)
    winner = np.where(done, np.where(left_a, 0, 1), winner).astype(np.int8)
    rounds = np.where(done, r, rounds).astype(np.int16)
    return SkirmishState(hp=hp, alive=alive, present=present, entered=entered, partner=partner,
                         initiator=initiator, gkind=gkind, winner=winner, rounds=rounds)


def skirmish_kernel(p: Params, n: int, rng: np.random.Generator, ambush_win: np.ndarray,
                    by2: np.ndarray) -> dict[str, np.ndarray]:
    """The skirmish for the batch; draws round blocks until every run has finished."""
    if not p.skirmish:
        z = np.zeros(n, dtype=np.int64)
        return {"skirmish_winner": np.full(n, NO_SKIRMISH, dtype=np.int64), "skirmish_rounds": z,
                "survivors_a": z, "survivors_b": z.copy(), "enslave_dp": z.copy()}
    st = init_state(p, n)
    won = ambush_win & p.use_ambush
    by2 = won & by2
    no_free = np.zeros(n, dtype=bool)
    for r in range(1, p.max_rounds + 1):
        if st.finished.all():
            break
        dice = round_dice(rng.random((n, L.round_cols(p.n_units))), p.n_units)
        free = won if r == 1 else no_free
        for j in p.order:
            st = unit_turn(p, st, j, r, dice, free, by2)
    winner = np.where(st.finished, st.winner, DRAW).astype(np.int64)
    rounds = np.where(st.finished, st.rounds, p.max_rounds).astype(np.int64)
    onfield = st.alive & st.present
    side_b = (p.side == 1)[None, :]
    fallen_b_dp = ((~st.alive & side_b) * (3 * p.stars)[None, :]).sum(axis=1)  # R-MDK-3
    return {
        "skirmish_winner": winner,
        "skirmish_rounds": rounds,
        "survivors_a": (onfield & ~side_b).sum(axis=1).astype(np.int64),
        "survivors_b": (onfield & side_b).sum(axis=1).astype(np.int64),
        "enslave_dp": np.where(winner == 0, fallen_b_dp, 0).astype(np.int64),
    }


def run_chunk_kernel(p: Params, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One seed chunk, blocks drawn in layout order."""
    out = ambush_kernel(p, rng.random((n, L.AMBUSH_COLS)))
    out.update(session_kernel(p, rng.random((n, L.session_cols(p.checks)))))
    out.update(skirmish_kernel(p, n, rng, out["ambush_win"], out["ambush_win_by_2"]))
    return out


__all__ = ["penalty_rows", "round_dice", "run_chunk_kernel", "unit_turn"]
