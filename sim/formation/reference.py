"""The scalar reference: one run at a time, written to read like RULES.md section 4.

It reads the same uniform columns as the kernel (``sim.formation.layout``), so for the same seed
both give identical per-run results (a test checks this). Slow on purpose; clarity first.
"""

from __future__ import annotations

import math

import numpy as np

from sim.dice import dark_roll, faces_from_uniform
from sim.formation import layout as L
from sim.formation.columns import columns_from_records
from sim.formation.model import (
    G_ASSAULT,
    G_NONE,
    G_SERVICE,
    G_TRAINING,
    MAGIC,
    Params,
)
from sim.formation.rules import (
    GRAPPLE_PENALTY,
    PASSIVE_PENALTY,
    active_wins,
    check_succeeds,
    enslave_dp,
    expected_damage_count,
    roleplay_bonus,
)
from sim.formation.targeting import attack_penalty, attack_types, can_move, in_contact

# Faces are converted to Python ints before sim.dice.dark_roll: with numpy integers its
# ``(a == 6) + (b == 6)`` adds two numpy bools (logical or), so a double six would count as one.
DRAW = 2  # winner code of a skirmish that reached the round limit
NO_SKIRMISH = -1


def ambush_run(p: Params, u_row) -> dict:
    """R-MDK-12, R-MDK-20: one ambush check."""
    f = faces_from_uniform(np.asarray(u_row), 6).tolist()  # Python ints (see DRAW note)
    ra, rd = dark_roll(f[0], f[1]), dark_roll(f[2], f[3])
    a_total = p.ambusher_base - ra.sum
    d_total = p.defender_base - rd.sum
    win = p.ambush_possible and active_wins(a_total, ra, d_total, rd)  # ties to the defenders
    by2 = win and a_total - d_total >= 2
    return {"ambush_ambusher_total": a_total, "ambush_defender_total": d_total,
            "ambush_win": bool(win), "ambush_win_by_2": bool(by2)}


def session_run(p: Params, u_row) -> dict:
    """R-MDK-3 (rewards of a successful session) + R-MDK-1 DP from sixes over the session's checks
    (R-MDK-21)."""
    f = faces_from_uniform(np.asarray(u_row), 6).tolist()  # Python ints (see DRAW note)
    sixes_dp = 0
    for i in range(p.checks):
        sixes_dp += dark_roll(f[2 * i], f[2 * i + 1]).dp
    return {"dp_rewards": p.reward_dp, "dp_sixes": sixes_dp, "dp_session": p.reward_dp + sixes_dp}


class _Field:
    """The skirmish state of one run."""

    def __init__(self, p: Params):
        n = p.n_units
        self.hp = [int(h) for h in p.hp]
        self.alive = [True] * n
        self.present = [bool(p.master[k] < 0) for k in range(n)]  # R-MDK-5: called units wait
        self.entered = [0] * n
        self.partner = [-1] * n
        self.initiator = [False] * n
        self.gkind = [G_NONE] * n
        self.area = [int(a) for a in p.area]  # R-MDK-11: movement changes it
        self.withdrawn = [False] * n  # R-MDK-5: withdrawn to the dark prison
        self.dismissed = [False] * n  # R-MDK-5: a dismissed summon is gone for the combat
        self.entry_hp = [int(h) for h in p.hp]  # R-MDK-5: hp when it last entered the combat
        self.winner = NO_SKIRMISH

    def onfield(self) -> list[bool]:
        return [a and pr for a, pr in zip(self.alive, self.present, strict=True)]

    def release(self, k: int) -> None:
        """End the grapple ``k`` is in (leaving costs no action, R-MDK-10)."""
        g = self.partner[k]
        for x in (k, g):
            if x >= 0:
                self.partner[x] = -1
                self.initiator[x] = False
                self.gkind[x] = G_NONE


def _choose(p: Params, field: _Field, cands: list[int], u_pick: float) -> int:
    """Policy tie-break among the best candidates (file order)."""
    if p.policy == "first":
        return cands[0]
    if p.policy == "random":
        return cands[math.floor(u_pick * len(cands))]
    # greedy: avoid a grappled pair (R-MDK-10 random victim) if possible, then the weakest
    pool = [k for k in cands if field.partner[k] < 0] or cands
    return min(pool, key=lambda k: (field.hp[k], k))


def attack_score(p: Params, field: _Field, onfield, j: int, k: int, t: int, area, passive: int) -> int:
    """R-MDK-6: how good attacking ``k`` with attack type ``t`` is for unit ``j`` standing as in
    ``area``. ``min_penalty``: minus the penalty. ``expected_damage``: 2592 × the expected damage
    to ``k`` (36 × 36 outcomes × 2), halved when a non-magic attack aims at a grappled pair, where
    R-MDK-10 sends it to either of the two at random."""
    penalty = attack_penalty(p, onfield, j, k, t, area)[0]
    if p.choice == "min_penalty":
        return -penalty
    grappled = GRAPPLE_PENALTY if (field.partner[j] >= 0 and t != MAGIC) else 0  # R-MDK-10: none on magic
    diff = int(p.combat[j]) - penalty - grappled - (int(p.evade[k]) - passive)
    count = expected_damage_count(diff, int(p.damage[j]) - int(p.armor[k]), p.margin_damage, p.min_damage)
    shared = field.partner[k] >= 0 and t != MAGIC
    return count if shared else 2 * count


def best_attacks(p: Params, field: _Field, onfield, j: int, area, passive_of) -> tuple[int, list[tuple[int, int]]]:
    """R-MDK-6: the best score over every attack type and enemy, and the (target, type) pairs that
    reach it; for a target, the first type in the order melee, ranged, magic."""
    best, pairs = None, []
    for k in range(p.n_units):
        if not onfield[k] or p.side[k] == p.side[j]:
            continue
        for t in attack_types(p, j):
            score = attack_score(p, field, onfield, j, k, t, area, passive_of(k))
            if best is None or score > best:
                best, pairs = score, [(k, t)]
            elif score == best and all(kk != k for kk, _ in pairs):
                pairs.append((k, t))
    return best, pairs


def grapple_score(p: Params, j: int, k: int, passive: int) -> int:
    """R-MDK-11 (second round): how good a grapple attempt on ``k`` is for unit ``j`` standing as in ``area``,
    scored as attacks are (:func:`attack_score`) but over 4 × the d4 of the R-MDK-13 bonus: ``min_penalty``:
    4 × (no penalty + the mean bonus, 1.5 for training and service); ``expected_damage``: 4 × 2592 × the
    expected damage over the d4 (service: the service value with the bonus, no success value)."""
    roleplay = int(p.grapple[j]) in (G_TRAINING, G_SERVICE)
    if p.choice == "min_penalty":
        return sum(range(4)) if roleplay else 0
    diff = int(p.combat[j]) - (int(p.evade[k]) - passive)
    base = int(p.damage[j]) - int(p.armor[k])
    service = int(p.grapple[j]) == G_SERVICE
    total = 0
    for bonus in range(4):  # R-MDK-13: 1d4 − 1
        b = bonus if roleplay else 0
        total += expected_damage_count(diff + b, base + (b if service else 0), p.margin_damage and not service,
                                       p.min_damage)
    return 2 * total


def best_action(p: Params, field: _Field, onfield, j: int, area, passive_of) -> int:
    """R-MDK-11: the best score of the unit's actions from ``area``, in units of 1/4 of :func:`attack_score`: its
    best attack and, with ``movement = "best"``, a grapple attempt on an ungrappled enemy in contact (R-MDK-9)."""
    best = 4 * best_attacks(p, field, onfield, j, area, passive_of)[0]
    if p.movement == "best" and p.grapple[j] != G_NONE:
        for k in range(p.n_units):
            if (onfield[k] and p.side[k] != p.side[j] and field.partner[k] < 0
                    and in_contact(p, onfield, j, k, area)):
                best = max(best, grapple_score(p, j, k, passive_of(k)))
    return best


def move(p: Params, field: _Field, onfield, j: int, passive_of) -> None:
    """R-MDK-11 movement (policy ``best`` or ``best_attack``, costs no action): the unit moves to the other area
    if its best action is strictly better from there, unless that would leave its side's front empty.
    A grappled unit stays."""
    if field.partner[j] >= 0:
        return
    here = field.area[j]
    there = 1 - here
    if not can_move(p, onfield, j, there, field.area):
        return
    moved = list(field.area)
    moved[j] = there
    if best_action(p, field, onfield, j, moved, passive_of) > best_action(p, field, onfield, j, field.area,
                                                                           passive_of):
        field.area[j] = there


def unit_turn(p: Params, field: _Field, j: int, r: int, f6, f4, u_row, free: bool, by2: bool) -> None:
    """One unit's turn in round ``r``: the steps of :func:`sim.formation.kernel.unit_turn`."""
    if not (field.alive[j] and field.present[j] and field.entered[j] < r):
        return  # R-MDK-5: a called unit acts from the round after it is called
    ambushed = 1 - p.ambush_side
    if free and p.side[j] == ambushed and not p.super_perception[j]:
        return  # R-MDK-12: the ambushers' free round; super-perception monsters act normally
    leave_grapple(p, field, j, f6)
    if withdraw(p, field, j):
        _check_end(p, field)
        return
    dismiss(p, field, j)
    if call_companion(p, field, j, r):
        return
    onfield = field.onfield()

    def passive_of(k: int) -> int:  # R-MDK-12: the ambushed side's passive checks after a win by 2
        return PASSIVE_PENALTY if (free and by2 and p.side[k] == ambushed) else 0

    if p.movement != "fixed":  # R-MDK-11
        move(p, field, onfield, j, passive_of)
    if attack(p, field, onfield, j, f6, f4, u_row, passive_of):
        _check_end(p, field)


def leave_grapple(p: Params, field: _Field, j: int, f6) -> None:
    """R-MDK-10 leaving a grapple (no action): assault by an opposed 体力 check, training by a 自尊 focus
    check, service freely."""
    g = field.partner[j]
    if g < 0 or field.initiator[j]:
        return
    base = j * L.UNIT_COLS
    kind = field.gkind[j]
    mine = dark_roll(f6[base + L.LEAVE_DICE[0]], f6[base + L.LEAVE_DICE[1]])
    if kind == G_SERVICE:
        leave = True
    elif kind == G_ASSAULT:
        theirs = dark_roll(f6[base + L.HOLD_DICE[0]], f6[base + L.HOLD_DICE[1]])
        leave = active_wins(int(p.stamina[j]) - mine.sum, mine, int(p.stamina[g]) - theirs.sum, theirs)
    else:
        leave = check_succeeds(int(p.resolve[j]) - mine.sum, p.focus_target, mine)
    if leave:
        field.release(j)


def withdraw(p: Params, field: _Field, j: int) -> bool:
    """R-MDK-5 withdrawal: a slave monster below the policy's threshold withdraws to the dark prison with its
    own action and leaves the skirmish (not while another holds it in a grapple); one called back withdraws
    again once it is hurt after its return. Returns whether it did."""
    if (field.hp[j] < p.withdraw_hp[j] and field.hp[j] < field.entry_hp[j]
            and (field.partner[j] < 0 or field.initiator[j])):
        field.release(j)
        field.present[j] = False
        field.withdrawn[j] = True
        return True
    return False


def dismiss(p: Params, field: _Field, j: int) -> None:
    """R-MDK-5 dismissal (second round, a free declaration: no action): when master ``j`` has another summon
    waiting, its summon in combat whose hp is below policy.dismiss_below is dismissed (a grapple it is in ends);
    a dismissed summon is gone for the combat. The master may then call the next one (:func:`call_companion`)."""
    comps = [c for c in p.companions[j] if not p.slave[c]]
    waiting = any(field.alive[c] and not field.present[c] and not field.dismissed[c] for c in comps)
    if not waiting:
        return
    for c in comps:
        if field.alive[c] and field.present[c] and field.hp[c] < p.dismiss_hp[c]:
            field.release(c)
            field.present[c] = False
            field.dismissed[c] = True


def call_companion(p: Params, field: _Field, j: int, r: int) -> bool:
    """R-MDK-5 summons and slave monsters: one summon and one slave of a master in combat at a time; calling one
    costs the master's action: a waiting one, or a withdrawn slave whose hp is above policy.recall_above
    (revised 2026-12); it acts from the next round. Returns whether the master called one."""
    comps = p.companions[j]
    if not comps:
        return False
    busy = {bool(p.slave[c]) for c in comps if field.alive[c] and field.present[c]}
    for c in comps:
        if bool(p.slave[c]) in busy or field.present[c] or field.dismissed[c]:
            continue
        if not field.withdrawn[c] or (p.recall_hp[c] and field.hp[c] >= p.recall_hp[c]):
            field.present[c] = True
            field.withdrawn[c] = False
            field.entered[c] = r
            field.entry_hp[c] = field.hp[c]
            return True
    return False


def partner_attack(p: Params, field: _Field, onfield, j: int, g: int, passive: int) -> tuple[int, int]:
    """R-MDK-10 (second round): inside a grapple the held unit attacks its partner ``g`` with the attack type of
    the best score, and the -2 adds to that type's R-MDK-6 penalty at the partner (none on magic). Scores:
    ``min_penalty``: minus the whole penalty; ``expected_damage``: the expected damage (no halving: the partner
    is the victim). Ties: melee, ranged, magic. Returns (type, area penalty)."""
    best = None
    for t in attack_types(p, j):
        penalty = attack_penalty(p, onfield, j, g, t, field.area)[0]
        grapple = GRAPPLE_PENALTY if t != MAGIC else 0
        if p.choice == "min_penalty":
            score = -(penalty + grapple)
        else:
            diff = int(p.combat[j]) - penalty - grapple - (int(p.evade[g]) - passive)
            score = expected_damage_count(diff, int(p.damage[j]) - int(p.armor[g]), p.margin_damage, p.min_damage)
        if best is None or score > best[0]:
            best = (score, t, penalty)
    return best[1], best[2]


def choose_attack(p: Params, field: _Field, onfield, j: int, u_row, passive_of) -> tuple[int, int, int, bool]:
    """The unit's target, attack type and penalty, and whether it tries a grapple: inside a grapple the pair
    attack each other (R-MDK-10); a grappler tries a grapple on an enemy in contact (R-MDK-9); otherwise the
    attack type and target of the best score (R-MDK-6/7/8)."""
    g = field.partner[j]
    kind = int(p.attack[j])
    if g >= 0:
        if field.initiator[j]:
            return g, kind, 0, False  # the grappler keeps up its contact action (R-MDK-9: no area penalty)
        if p.grapple_area:  # R-MDK-10 (second round): the type's R-MDK-6 penalty at the partner, and the -2
            kind, penalty = partner_attack(p, field, onfield, j, g, passive_of(g))
            return g, kind, penalty, False
        if int(p.attacks[j]) >> MAGIC & 1:
            kind = MAGIC  # R-MDK-10 (revised 2026-12): magic takes no grapple penalty, so it casts
        return g, kind, 0, False
    base = j * L.UNIT_COLS
    cands: list[int] = []
    if p.grapple[j] != G_NONE:  # R-MDK-9: grappling needs contact
        cands = [k for k in range(p.n_units) if onfield[k] and p.side[k] != p.side[j]
                 and field.partner[k] < 0 and in_contact(p, onfield, j, k, field.area)]
    if cands:
        return _choose(p, field, cands, float(u_row[base + L.TARGET_PICK])), kind, 0, True
    _, pairs = best_attacks(p, field, onfield, j, field.area, passive_of)
    target = _choose(p, field, [k for k, _ in pairs], float(u_row[base + L.TARGET_PICK]))
    kind = dict(pairs)[target]
    return target, kind, attack_penalty(p, onfield, j, target, kind, field.area)[0], False


def attack(p: Params, field: _Field, onfield, j: int, f6, f4, u_row, passive_of) -> bool:
    """The unit's action: opposed 2DR (R-MDK-1, R-MDK-2: ties to the defender) with the penalties of R-MDK-7/8,
    R-MDK-10 and R-MDK-12 and the R-MDK-13 roleplay bonus; a hit deals damage. Returns whether it hit."""
    base = j * L.UNIT_COLS
    g = field.partner[j]
    contact = g >= 0 and field.initiator[j]  # the grappler keeps up its own contact action
    target, kind, penalty, grapple_try = choose_attack(p, field, onfield, j, u_row, passive_of)
    victim = target
    if g < 0 and field.partner[target] >= 0 and kind != MAGIC:
        # R-MDK-10: an attack from outside at a grappled pair picks its victim at random
        if u_row[base + L.VICTIM_PICK] >= 0.5:
            victim = field.partner[target]
    modifier = -penalty
    if g >= 0 and (contact or kind != MAGIC):
        modifier -= GRAPPLE_PENALTY  # R-MDK-10: -2 on attacks inside a grapple, none on magic
    bonus = 0
    if p.grapple[j] in (G_TRAINING, G_SERVICE) and (grapple_try or contact):
        bonus = roleplay_bonus(f4[base + L.ROLEPLAY_D4])  # R-MDK-13
    modifier += bonus
    service = p.grapple[j] == G_SERVICE and (grapple_try or contact)
    a_roll = dark_roll(f6[base + L.ATTACK_DICE[0]], f6[base + L.ATTACK_DICE[1]])
    d_roll = dark_roll(f6[base + L.DEFENSE_DICE[0]], f6[base + L.DEFENSE_DICE[1]])
    a_total = int(p.combat[j]) + modifier - a_roll.sum  # R-MDK-1
    d_total = int(p.evade[victim]) - passive_of(victim) - d_roll.sum
    if not active_wins(a_total, a_roll, d_total, d_roll):  # R-MDK-2, ties to the defender
        return False
    # R-MDK-14 damage model; R-MDK-4 armor
    dmg = int(p.damage[j]) - int(p.armor[victim])
    if service:
        dmg += bonus  # R-MDK-13 (revised 2026-12): the service value with the bonus only, no success value
    elif p.margin_damage:
        dmg += a_total - d_total
    hit(p, field, j, victim, dmg, grapple_try)
    return True


def hit(p: Params, field: _Field, j: int, victim: int, dmg: int, grapple_try: bool) -> None:
    """Damage at least ``min_damage`` (R-MDK-14); the victim falls at 0 hp, else a grapple attempt grapples the
    two (R-MDK-10: assault, training and service)."""
    field.hp[victim] -= max(p.min_damage, dmg)
    if field.hp[victim] <= 0:
        field.alive[victim] = False
        field.release(victim)
    elif grapple_try:  # R-MDK-10: assault, training and service grapple the two
        field.partner[j], field.partner[victim] = victim, j
        field.initiator[j] = True
        field.gkind[j] = field.gkind[victim] = int(p.grapple[j])


def _check_end(p: Params, field: _Field) -> None:
    """A side with no unit on the field (fallen or withdrawn) has lost."""
    onfield = field.onfield()
    for side in (0, 1):
        if not any(onfield[k] and p.side[k] == side for k in range(p.n_units)):
            field.winner = 1 - side


def skirmish_run(p: Params, round_rows, ambush_win: bool, by2: bool) -> dict:
    """The skirmish of one run (``p.skirmish``): units act in order each round until one side falls or the round
    limit (a draw). ``round_rows[r - 1]`` is round r's row of uniforms."""
    field = _Field(p)
    won = bool(p.use_ambush and ambush_win)
    rounds = p.max_rounds
    for r in range(1, p.max_rounds + 1):
        row = np.asarray(round_rows[r - 1])
        f6 = faces_from_uniform(row, 6).tolist()
        f4 = faces_from_uniform(row, 4).tolist()
        free = won and r == 1
        for j in p.order:
            unit_turn(p, field, j, r, f6, f4, row, free, won and by2)
            if field.winner != NO_SKIRMISH:
                break
        if field.winner != NO_SKIRMISH:
            rounds = r
            break
    winner = DRAW if field.winner == NO_SKIRMISH else field.winner
    onfield = field.onfield()
    dp = 0
    if winner == 0:  # R-MDK-3: side A enslaves the fallen of side B
        dp = sum(enslave_dp(p.stars[k]) for k in range(p.n_units) if p.side[k] == 1 and not field.alive[k])
    return {
        "skirmish_winner": winner,
        "skirmish_rounds": rounds,
        "survivors_a": sum(1 for k in range(p.n_units) if onfield[k] and p.side[k] == 0),
        "survivors_b": sum(1 for k in range(p.n_units) if onfield[k] and p.side[k] == 1),
        "withdrawn_a": sum(1 for k in range(p.n_units) if field.withdrawn[k] and p.side[k] == 0),
        "withdrawn_b": sum(1 for k in range(p.n_units) if field.withdrawn[k] and p.side[k] == 1),
        "enslave_dp": dp,
    }


def run_chunk_reference(p: Params, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Draw the chunk's blocks (layout order) and play its runs one at a time: the per-run columns of
    :mod:`sim.formation.columns` (a step not played keeps its declared value)."""
    u_ambush = rng.random((n, L.AMBUSH_COLS))
    u_session = rng.random((n, L.session_cols(p.checks)))
    u_rounds = [rng.random((n, L.round_cols(p.n_units))) for _ in range(p.max_rounds)] if p.skirmish else []
    records = []
    for i in range(n):
        record = ambush_run(p, u_ambush[i])
        record.update(session_run(p, u_session[i]))
        if p.skirmish:
            record.update(skirmish_run(p, [u[i] for u in u_rounds], record["ambush_win"], record["ambush_win_by_2"]))
        records.append(record)
    return columns_from_records(p, records)
