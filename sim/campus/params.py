"""Compiled, immutable parameters of a campus scenario.

Both engines read one stream of uniforms per chunk of games (R-GEN-7), consumed in run order: a game draws
only what it uses, when it uses it, in the order of RULES.md's turn (R-CAM-5). A uniform choice among m is
floor(u * m) and is drawn only when m > 1; a chance p is drawn only when 0 < p < 1; a random order is a
Fisher-Yates shuffle (m - 1 draws). :data:`RANDOM_LAYOUT` names this convention in every summary's
provenance: a new convention changes every per-run result once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from sim.campus.model import STANCES, Scenario
from sim.campus.rules import best_stance, to_fraction

FREE, CAPTURED, CLEARED, GAME_OVER = 0, 1, 2, 3
STATUS_NAMES = ("free", "captured", "cleared", "game_over")
STANCE_POLICIES = ("fixed", "random", "best", "counter", "equilibrium")
MISO_NAME = "miso_bomb"
# the random layout (which uniform decides what): "campus-stream-2" = one stream per chunk, drawn only when used
# (issue 11); the layout before it ("campus-block-1") drew a fixed block of columns per game-turn
RANDOM_LAYOUT = "campus-stream-2"


@dataclass(frozen=True)
class Params:
    """The validated scenario compiled into arrays (R-CAM-1..59)."""

    scenario: Scenario
    P: int
    L: int
    T: int
    team_max: int
    miso: bool
    k_options: int  # L when every location is an option
    pc_names: tuple[str, ...]
    loc_names: tuple[str, ...]
    # locations
    is_room: np.ndarray  # (L,) bool
    is_exit: np.ndarray  # (L,) bool
    opens_on: np.ndarray  # (L,) int
    room_offset: np.ndarray  # (L,) escape offset of each capture room (R-CAM-11)
    rooms: np.ndarray  # indices of capture rooms
    plain: np.ndarray  # indices of locations that are not capture rooms
    # PCs
    pc_base: np.ndarray  # (P, 3) int64
    pc_vit: np.ndarray  # (P,) starting vitality
    pc_bonus: np.ndarray  # (P, 3) int64
    pc_num: np.ndarray  # (P, 3, 2) int64 multiplier numerators [no advantage, advantage]
    pc_den: np.ndarray  # (P, 3, 2)
    pc_mult_always: tuple  # per PC, 3 Fractions
    pc_mult_adv: tuple  # per PC, 3 Fractions (without the x2 of the stance advantage)
    pc_team: np.ndarray  # (P,) team id or -1
    team_names: tuple[str, ...]
    pc_ears: np.ndarray  # (P,) bool
    pc_nurse: np.ndarray  # (P,) bool
    pc_gpt: np.ndarray  # (P,) int
    pc_excl: np.ndarray  # (P, P) bool: row excludes column
    # adversary slots: spawn slots first, then one miso slot per PC when miso_bomb is on
    A: int
    S: int
    adv_template: np.ndarray  # (A,) template index; miso slots: n_templates
    template_names: tuple[str, ...]
    adv_boss: np.ndarray  # (A,) bool
    adv_reward: np.ndarray  # (A,)
    adv_room: np.ndarray  # (A,) fixed capture room location or -1 (default rule)
    adv_base: np.ndarray  # (A, 3) spawn slots (miso rows unused)
    adv_bonus: np.ndarray  # (A, 3)
    adv_num: np.ndarray  # (A, 3, 2)
    adv_den: np.ndarray  # (A, 3, 2)
    adv_mult_always: tuple
    adv_mult_adv: tuple
    adv_c1: np.ndarray  # (A,) stance thresholds: stance = (u >= c1) + (u >= c2)
    adv_c2: np.ndarray
    adv_wnum: np.ndarray  # (A, 3) stance weights as integers over weight_den (counter)
    weight_den: int
    adv_first: np.ndarray  # (A,) first turn of the slot's spawn entry
    adv_last: np.ndarray
    adv_chance: np.ndarray  # (A,)
    adv_cands: tuple  # per slot: array of candidate location indices
    adv_cand_table: np.ndarray  # (A, L) padded candidates
    adv_n_cands: np.ndarray  # (A,)
    adv_fixed_stance: np.ndarray  # (A,) stance when the weights name one stance, else -1
    # equilibrium without information: per turn, one spawn slot per template the schedule can place
    eq_fallback_slots: tuple  # (T,) of int arrays (see sim.campus.stances)
    # missions
    M: int
    mis_loc: np.ndarray
    mis_first: np.ndarray
    mis_last: np.ndarray
    mis_chance: np.ndarray
    mis_stance: np.ndarray
    mis_each: np.ndarray  # bool
    mis_target: np.ndarray
    mis_reward: np.ndarray
    mis_pen_vit: np.ndarray  # vitality loss (0 if none)
    mis_pen_ability: np.ndarray  # stance index or -1
    mis_pen_amount: np.ndarray
    # policy
    move_avoid: bool
    stance_policy: int  # index in STANCE_POLICIES
    stance_value: int
    growth: str
    rescue: bool
    has_teams: bool
    unit_den: bool  # every multiplier an integer: values need no division
    until_cleared: bool  # R-CAM-6 rules.fights: "until_cleared" (True) or "once"
    # R-CAM-9a purchases: the purchasable skills of [growth.costs] and the policy's buy list
    K: int
    sk_names: tuple[str, ...]
    sk_cost: np.ndarray  # (K,)
    sk_bonus: np.ndarray  # (K, 3)
    sk_num: np.ndarray  # (K, 3, 2) multiplier factor [always, always x advantage-only] as num / den
    sk_den: np.ndarray  # (K, 3, 2)
    sk_mult_always: tuple  # per skill, 3 Fractions
    sk_mult_adv: tuple  # per skill, 3 Fractions (without the x2 of the stance advantage)
    sk_ears: np.ndarray  # (K,) bool
    sk_nurse: np.ndarray  # (K,) bool
    sk_gpt: np.ndarray  # (K,)
    team_cost: int  # -1: team membership has no price
    B: int  # length of the buy list
    buy_names: tuple[str, ...]
    buy_skill: np.ndarray  # (B,) skill index, or -1 for a team
    buy_team: np.ndarray  # (B,) team index, or -1 for a skill
    save_for_buy: bool  # policy.save_for_buy: keep gp for the next unaffordable item
    # R-CAM-25a
    mis_found: np.ndarray  # (M,) bool: found_by = "early_ears"
    miso_in_missions: bool
    # policy.forbid (issue 36): bit s set = the PCs may declare stance s (7: all three, the unrestricted play)
    stance_allowed: int = 7

    @property
    def n_templates(self) -> int:
        return len(self.template_names)


def _frac_pair(f: Fraction) -> tuple[int, int]:
    return f.numerator, f.denominator


def member_terms(pc) -> tuple[tuple[int, int, int], tuple[Fraction, ...], tuple[Fraction, ...]]:
    """R-CAM-30 value terms of a PC's skills: (additive bonus per stance, multipliers that always count,
    multipliers that count only with the stance advantage, without the advantage's own x2)."""
    return skill_terms(pc.skills)


def skill_terms(skills) -> tuple[tuple[int, int, int], tuple[Fraction, ...], tuple[Fraction, ...]]:
    """R-CAM-30 value terms of a list of skills (see :func:`member_terms`)."""
    bonus = [0, 0, 0]
    always = [Fraction(1)] * 3
    adv = [Fraction(1)] * 3
    for sk in skills:
        stances = [STANCES.index(x) for x in (sk.stances if sk.stances is not None else STANCES)]
        if sk.kind == "bonus":
            for st in stances:
                bonus[st] += int(sk.value)
        elif sk.kind == "multiplier":
            f = to_fraction(sk.value if sk.value is not None else 2)
            for st in stances:
                if (sk.when or "always") == "always":
                    always[st] *= f
                else:
                    adv[st] *= f
    return (bonus[0], bonus[1], bonus[2]), tuple(always), tuple(adv)


def template_multipliers(t) -> tuple[Fraction, Fraction, Fraction]:
    """An adversary template's multipliers as exact fractions (they always count)."""
    return tuple(to_fraction(x) for x in t.multiplier.as_tuple())


def template_stance_probs(t) -> tuple[Fraction, Fraction, Fraction]:
    """R-CAM-21: an adversary template's stance probabilities, exact (no weights: uniform)."""
    if t.stance is None:
        w = (Fraction(1), Fraction(1), Fraction(1))
    elif isinstance(t.stance, str):
        w = tuple(Fraction(int(t.stance == x)) for x in STANCES)
    else:
        w = tuple(Fraction(str(x)) for x in t.stance.as_tuple())
    total = sum(w)
    return tuple(x / total for x in w)


def compile_params(s: Scenario) -> Params:
    """The validated scenario compiled into arrays: locations, party, purchases, adversary slots, missions and
    the policy, each by its own helper below."""
    where = _locations(s)
    party = _party(s)
    team_names = party.pop("team_names")  # the buy list's teams join the party's (R-CAM-9a)
    buys = _purchases(s, team_names)
    # a team needs two members to ever fight a team battle
    has_teams = (any(np.sum(party["pc_team"] == k) >= 2 for k in range(len(team_names)))
                 or bool((buys["buy_team"] >= 0).any()))
    slots = _spawn_slots(s, where["plain"])
    advs = _adversaries(s, slots, party, where)
    pol = s.policy
    return Params(
        scenario=s, T=s.rules.turns, team_max=s.rules.team_max, **where, **party, team_names=tuple(team_names),
        **advs, eq_fallback_slots=_equilibrium_fallback(slots, s.rules.turns), **_missions(s), **buys,
        move_avoid=pol.move == "avoid", stance_policy=STANCE_POLICIES.index(pol.stance),
        stance_value=STANCES.index(pol.stance_value), growth=pol.growth, rescue=pol.rescue, has_teams=has_teams,
        unit_den=bool((party["pc_den"] == 1).all() and (advs["adv_den"] == 1).all() and (buys["sk_den"] == 1).all()),
        until_cleared=s.rules.fights == "until_cleared", save_for_buy=bool(s.policy.save_for_buy),
        miso_in_missions=bool(s.rules.miso_in_missions),
        stance_allowed=sum(1 << k for k, name in enumerate(STANCES) if name not in pol.forbid),
    )


def _locations(s: Scenario) -> dict:
    """The locations (R-CAM-11, R-CAM-26, R-CAM-50): capture rooms and their escape offsets, exits and the turn
    they open, and how many are offered each turn."""
    L = len(s.locations)
    is_room = np.array([loc.capture_room for loc in s.locations], dtype=bool)
    room_offset = np.array(
        [loc.escape_offset if loc.escape_offset is not None else s.rules.escape_offset for loc in s.locations],
        dtype=np.int64,
    )
    return dict(
        L=L, loc_names=tuple(loc.id for loc in s.locations), is_room=is_room,
        is_exit=np.array([loc.exit for loc in s.locations], dtype=bool),
        opens_on=np.array([loc.opens_on for loc in s.locations], dtype=np.int64), room_offset=room_offset,
        rooms=np.flatnonzero(is_room), plain=np.flatnonzero(~is_room),
        k_options=L if s.rules.options == "all" else min(int(s.rules.options), L),
    )


def _party(s: Scenario) -> dict:
    """The PCs (R-CAM-1, R-CAM-30): base abilities, vitality, skill terms, flags, teams (``team_names``: a list,
    in order of first mention) and exclusions."""
    P = len(s.party)
    team_names: list[str] = []
    pc_base = np.zeros((P, 3), np.int64)
    pc_vit = np.zeros(P, np.int64)
    pc_bonus = np.zeros((P, 3), np.int64)
    pc_num = np.ones((P, 3, 2), np.int64)
    pc_den = np.ones((P, 3, 2), np.int64)
    pc_team = np.full(P, -1, np.int64)
    pc_ears = np.zeros(P, bool)
    pc_nurse = np.zeros(P, bool)
    pc_gpt = np.zeros(P, np.int64)
    pc_excl = np.zeros((P, P), bool)
    mult_always_all = []
    mult_adv_all = []
    names = [p.name for p in s.party]
    for i, pc in enumerate(s.party):
        pc_base[i] = pc.abilities.as_tuple()
        pc_vit[i] = pc.vitality if pc.vitality is not None else s.rules.vitality
        bonus, always, adv = member_terms(pc)
        pc_bonus[i] = bonus
        team = pc.team
        for sk in pc.skills:
            if sk.kind == "team":
                team = sk.name
            elif sk.kind == "early_ears":
                pc_ears[i] = True
            elif sk.kind == "nursing":
                pc_nurse[i] = True
            elif sk.kind == "gp_per_turn":
                pc_gpt[i] += int(sk.value)
        if team is not None:
            if team not in team_names:
                team_names.append(team)
            pc_team[i] = team_names.index(team)
        for st in range(3):
            pc_num[i, st, 0], pc_den[i, st, 0] = _frac_pair(always[st])
            pc_num[i, st, 1], pc_den[i, st, 1] = _frac_pair(always[st] * adv[st] * 2)
        mult_always_all.append(tuple(always))
        mult_adv_all.append(tuple(adv))
        for ex in pc.exclude:
            pc_excl[i, names.index(ex)] = True
    return dict(
        P=P, pc_names=tuple(names), pc_base=pc_base, pc_vit=pc_vit, pc_bonus=pc_bonus, pc_num=pc_num,
        pc_den=pc_den, pc_mult_always=tuple(mult_always_all), pc_mult_adv=tuple(mult_adv_all), pc_team=pc_team,
        team_names=team_names, pc_ears=pc_ears, pc_nurse=pc_nurse, pc_gpt=pc_gpt, pc_excl=pc_excl,
    )


def _purchases(s: Scenario, team_names: list[str]) -> dict:
    """R-CAM-9a purchases: the skills of [growth.costs] and the policy's buy list (its teams are added to
    ``team_names``)."""
    costs = s.growth.costs
    K = len(costs.skills)
    sk_bonus = np.zeros((K, 3), np.int64)
    sk_num = np.ones((K, 3, 2), np.int64)
    sk_den = np.ones((K, 3, 2), np.int64)
    sk_always, sk_adv = [], []
    for k, sk in enumerate(costs.skills):
        bonus, always, adv = skill_terms([sk.as_skill()])
        sk_bonus[k] = bonus
        sk_always.append(tuple(always))
        sk_adv.append(tuple(adv))
        for st in range(3):
            sk_num[k, st, 0], sk_den[k, st, 0] = _frac_pair(always[st])
            sk_num[k, st, 1], sk_den[k, st, 1] = _frac_pair(always[st] * adv[st])
    buys = s.policy.buy
    B = len(buys)
    buy_skill = np.full(B, -1, np.int64)
    buy_team = np.full(B, -1, np.int64)
    sk_names = [sk.name for sk in costs.skills]
    for b, item in enumerate(buys):
        if item.startswith("team:"):
            if item[5:] not in team_names:
                team_names.append(item[5:])
            buy_team[b] = team_names.index(item[5:])
        else:
            buy_skill[b] = sk_names.index(item)
    return dict(
        K=K, sk_names=tuple(sk_names), sk_cost=np.array([sk.cost for sk in costs.skills], np.int64),
        sk_bonus=sk_bonus, sk_num=sk_num, sk_den=sk_den, sk_mult_always=tuple(sk_always),
        sk_mult_adv=tuple(sk_adv), sk_ears=np.array([sk.kind == "early_ears" for sk in costs.skills], bool),
        sk_nurse=np.array([sk.kind == "nursing" for sk in costs.skills], bool),
        sk_gpt=np.array([int(sk.value) if sk.kind == "gp_per_turn" else 0 for sk in costs.skills], np.int64),
        team_cost=-1 if costs.team is None else int(costs.team), B=B, buy_names=tuple(buys), buy_skill=buy_skill,
        buy_team=buy_team,
    )


def _spawn_slots(s: Scenario, plain: np.ndarray) -> list[tuple]:
    """R-CAM-20 / R-CAM-50: one slot per adversary a spawn entry may place: (template index, first turn, last
    turn, chance, candidate locations)."""
    loc_index = {loc.id: i for i, loc in enumerate(s.locations)}
    tmpl_index = {a.name: i for i, a in enumerate(s.adversaries)}
    slots = []
    for sp in s.spawns:
        first, last = sp.turns if sp.turns is not None else (1, s.rules.turns)
        if sp.locations == "any":
            cands = plain.copy()
        else:
            cands = np.array([loc_index[x] for x in sp.locations], np.int64)
        for _ in range(sp.count):
            slots.append((tmpl_index[sp.adversary], first, last, sp.chance, cands))
    return slots


def _adversaries(s: Scenario, slots: list[tuple], party: dict, where: dict) -> dict:
    """The adversary slots: the spawn slots (R-CAM-20, R-CAM-21), then one miso-bomb slot per PC when miso_bomb
    is on (R-CAM-57), with the counter policy's stance weights (R-CAM-51)."""
    S, P, L = len(slots), party["P"], where["L"]
    miso = bool(s.rules.miso_bomb)
    A = S + (P if miso else 0)
    adv = dict(
        adv_template=np.zeros(A, np.int64), adv_boss=np.zeros(A, bool), adv_reward=np.zeros(A, np.int64),
        adv_room=np.full(A, -1, np.int64), adv_base=np.zeros((A, 3), np.int64), adv_bonus=np.zeros((A, 3), np.int64),
        adv_num=np.ones((A, 3, 2), np.int64), adv_den=np.ones((A, 3, 2), np.int64), adv_c1=np.zeros(A),
        adv_c2=np.zeros(A), adv_first=np.zeros(A, np.int64), adv_last=np.zeros(A, np.int64),
        adv_chance=np.ones(A), adv_fixed_stance=np.full(A, -1, np.int64),
        adv_cand_table=np.zeros((A, L), np.int64), adv_n_cands=np.zeros(A, np.int64),
    )
    terms: dict[str, list] = {"adv_mult_always": [], "adv_mult_adv": [], "adv_cands": []}
    loc_index = {name: i for i, name in enumerate(where["loc_names"])}
    probs = [_spawn_slot(s, adv, terms, a, slot, loc_index) for a, slot in enumerate(slots)]
    for i in range(P):  # miso slots (R-CAM-57)
        a = S + i
        if a >= A:
            break
        _miso_slot(s, adv, terms, a, i, party, where["plain"])
    adv["adv_wnum"], adv["weight_den"] = _counter_weights(probs, A)
    template_names = tuple(a.name for a in s.adversaries) + ((MISO_NAME,) if s.rules.miso_bomb else ())
    return dict(adv, **{k: tuple(v) for k, v in terms.items()}, A=A, S=S, miso=miso, template_names=template_names)


def _spawn_slot(s: Scenario, adv: dict, terms: dict, a: int, slot: tuple, loc_index: dict) -> tuple:
    """Slot ``a`` of a spawn entry: its template's values and R-CAM-21 stance thresholds (stance = number of
    cumulative thresholds u has passed; one stance with all the weight: fixed, no draw). Returns the template's
    stance probabilities."""
    ti, first, last, chance, cands = slot
    t = s.adversaries[ti]
    adv["adv_template"][a] = ti
    adv["adv_boss"][a] = t.boss
    adv["adv_reward"][a] = t.reward
    adv["adv_room"][a] = loc_index[t.capture_room] if t.capture_room is not None else -1
    adv["adv_base"][a] = t.abilities.as_tuple()
    adv["adv_bonus"][a] = t.bonus.as_tuple()
    mults = template_multipliers(t)
    terms["adv_mult_always"].append(mults)
    terms["adv_mult_adv"].append((Fraction(1),) * 3)
    for st in range(3):
        adv["adv_num"][a, st, 0], adv["adv_den"][a, st, 0] = _frac_pair(mults[st])
        adv["adv_num"][a, st, 1], adv["adv_den"][a, st, 1] = _frac_pair(mults[st] * 2)
    p = template_stance_probs(t)
    # R-CAM-21: stance = number of cumulative thresholds u has passed
    adv["adv_c1"][a] = float(p[0])
    adv["adv_c2"][a] = float(p[0] + p[1]) if p[2] > 0 else 1.0
    if p[0] == 0:
        adv["adv_c1"][a] = 0.0
    nonzero = [k for k in range(3) if p[k] > 0]
    if len(nonzero) == 1:
        adv["adv_fixed_stance"][a] = nonzero[0]
    adv["adv_first"][a], adv["adv_last"][a] = first, last
    adv["adv_chance"][a] = chance
    terms["adv_cands"].append(cands)
    adv["adv_cand_table"][a, : len(cands)] = cands
    adv["adv_n_cands"][a] = len(cands)
    return p


def _miso_slot(s: Scenario, adv: dict, terms: dict, a: int, i: int, party: dict, plain: np.ndarray) -> None:
    """Slot ``a``, PC i's miso bomb (R-CAM-57): its skill terms, at any plain location, every turn."""
    adv["adv_template"][a] = len(s.adversaries)
    adv["adv_bonus"][a] = party["pc_bonus"][i]
    adv["adv_num"][a] = party["pc_num"][i]
    adv["adv_den"][a] = party["pc_den"][i]
    terms["adv_mult_always"].append(party["pc_mult_always"][i])
    terms["adv_mult_adv"].append(party["pc_mult_adv"][i])
    terms["adv_cands"].append(plain.copy())
    adv["adv_cand_table"][a, : len(plain)] = plain
    adv["adv_n_cands"][a] = len(plain)
    adv["adv_first"][a], adv["adv_last"][a] = 1, s.rules.turns


def _counter_weights(probs: list[tuple[Fraction, Fraction, Fraction]], A: int) -> tuple[np.ndarray, int]:
    """Counter (R-CAM-51): the spawn slots' stance probabilities over one common denominator (limited to
    denominators of 1000 when the common one passes 10**9). Returns the (A, 3) numerators and the denominator."""
    den = 1
    for p in probs:
        for x in p:
            den = math.lcm(den, x.denominator)
    if den > 10**9:
        probs = [tuple(x.limit_denominator(1000) for x in p) for p in probs]
        den = 1
        for p in probs:
            for x in p:
                den = math.lcm(den, x.denominator)
    adv_wnum = np.zeros((A, 3), np.int64)
    for a, p in enumerate(probs):
        adv_wnum[a] = [int(x * den) for x in p]
    return adv_wnum, den


def _equilibrium_fallback(slots: list[tuple], T: int) -> tuple:
    """Equilibrium policy without information: the templates the schedule can place in turn t, each once
    (represented by its first such slot; every slot of a template has its values)."""
    fallback = []
    for t in range(1, T + 1):
        seen_tmpl: set[int] = set()
        reps = []
        for a, (ti, first, last, chance, _) in enumerate(slots):
            if first <= t <= last and chance > 0 and ti not in seen_tmpl:
                seen_tmpl.add(ti)
                reps.append(a)
        fallback.append(np.array(reps, np.int64))
    return tuple(fallback)


def _missions(s: Scenario) -> dict:
    """Missions (R-CAM-25, R-CAM-56, R-CAM-25a)."""
    ms = s.missions
    T = s.rules.turns
    loc_index = {loc.id: i for i, loc in enumerate(s.locations)}
    return dict(
        M=len(ms),
        mis_loc=np.array([loc_index[m.location] for m in ms], np.int64),
        mis_first=np.array([(m.turns or [1, T])[0] for m in ms], np.int64),
        mis_last=np.array([(m.turns or [1, T])[1] for m in ms], np.int64),
        mis_chance=np.array([m.chance for m in ms], float),
        mis_stance=np.array([STANCES.index(m.stance) for m in ms], np.int64),
        mis_each=np.array([m.mode == "each" for m in ms], bool),
        mis_target=np.array([m.target for m in ms], np.int64),
        mis_reward=np.array([m.reward for m in ms], np.int64),
        mis_pen_vit=np.array([(m.penalty.vitality or 0) if m.penalty else 0 for m in ms], np.int64),
        mis_pen_ability=np.array(
            [STANCES.index(m.penalty.ability) if m.penalty and m.penalty.ability else -1 for m in ms], np.int64
        ),
        mis_pen_amount=np.array([(m.penalty.amount or 0) if m.penalty else 0 for m in ms], np.int64),
        mis_found=np.array([m.found_by == "early_ears" for m in ms], bool),
    )


@dataclass(frozen=True)
class Terms:
    """A PC's skill terms in one game: its own skills plus those it bought (R-CAM-30, R-CAM-9a)."""

    bonus: tuple[int, int, int]
    mult_always: tuple[Fraction, Fraction, Fraction]
    mult_adv: tuple[Fraction, Fraction, Fraction]
    ears: bool
    nurse: bool
    gpt: int
    team: int  # team index or -1


def pc_terms(params: Params, i: int, bought) -> Terms:
    """R-CAM-9a: PC i's terms given ``bought`` (its row of the buy list: the turn each item was bought, 0 never);
    a bought skill adds its bonus, multiplies its multipliers and adds its flags to the PC's own skills."""
    p = params
    bonus = [int(x) for x in p.pc_bonus[i]]
    always = list(p.pc_mult_always[i])
    adv = list(p.pc_mult_adv[i])
    ears, nurse, gpt, team = bool(p.pc_ears[i]), bool(p.pc_nurse[i]), int(p.pc_gpt[i]), int(p.pc_team[i])
    for b in range(p.B):
        if bought[b] <= 0:
            continue
        k = int(p.buy_skill[b])
        if k < 0:
            team = int(p.buy_team[b])
            continue
        for st in range(3):
            bonus[st] += int(p.sk_bonus[k, st])
            always[st] *= p.sk_mult_always[k][st]
            adv[st] *= p.sk_mult_adv[k][st]
        ears |= bool(p.sk_ears[k])
        nurse |= bool(p.sk_nurse[k])
        gpt += int(p.sk_gpt[k])
    return Terms(tuple(bonus), tuple(always), tuple(adv), ears, nurse, gpt, team)


def miso_best(terms: Terms, base) -> int:
    """R-CAM-57: a miso bomb's own `best` stance on its final base abilities (with the skills it ended with)."""
    return best_stance(tuple(int(x) for x in base), terms.bonus, terms.mult_always)
