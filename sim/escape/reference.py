"""Scalar reference of the escape challenge: one run at a time, reading like RULES.md section 1.

Randomness comes through a *source* with one method per kind of random event, so the same
round function serves simulation (:class:`DrawSource`, which draws only what each event needs, the
numbers the engine of :mod:`sim.escape.kernel` reads) and exact analysis (the branching source of
:mod:`sim.escape.exact`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sim.dice import DiceExpr
from sim.escape.params import (
    HARNESS,
    MARK_HASH,
    MARK_PLUS,
    MARK_STAR,
    MARK_X,
    N_SLOTS,
    UNLIMITED,
    EscapeParams,
)
from sim.escape.policy import PolicyView, check_action, untie_result
from sim.escape.state import (
    ACTION_INDEX,
    Action,
    CharState,
    PartyState,
    check_spec,
    findable_weights,
    goal_done,
    legs_attention,
    mage_hand_bonus,
    search_need,
)

MASK64 = (1 << 64) - 1


def mix64(z: int) -> int:
    """The SplitMix64 finalizer on a 64-bit integer."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def uniform_at(key: tuple[int, int], run: int, rnd: int, char: int, k: int) -> float:
    """Uniform number ``k`` of character ``char`` in round ``rnd`` of run ``run`` of the chunk with ``key``
    (the random layout of :mod:`sim.escape.kernel`)."""
    counter = (run << 44) | (rnd << 32) | (char << 24) | k
    return (mix64(mix64(key[0] ^ counter) ^ key[1]) >> 11) * (1.0 / 9007199254740992.0)


class DrawSource:
    """Random events of one chunk (its ``key``, drawn from the chunk's Generator, R-GEN-7), each drawing only
    the uniforms it needs: character i's k-th uniform of round r in run j is ``uniform_at(key, j, r, i, k)``.
    Call :meth:`at` before each round."""

    def __init__(self, params: EscapeParams, key):
        self.p = params
        self.key = (int(key[0]), int(key[1]))
        self.run = 0
        self.round = 0
        self.counts = [0] * params.n_chars
        self.char = 0

    def at(self, run: int, rnd: int) -> None:
        """The run and round whose numbers the next events read."""
        self.run, self.round = run, rnd
        self.counts = [0] * self.p.n_chars

    def uniform(self) -> float:
        i = self.char
        k = self.counts[i]
        self.counts[i] += 1
        return uniform_at(self.key, self.run, self.round, i, k)

    def die(self, sides: int) -> int:
        """One die: face floor(u * sides) + 1."""
        return int(self.uniform() * sides) + 1

    def check(self, i: int, net: int, need: int, blessed: bool, breath: bool) -> bool:
        """R-GEN-4: |net| + 1 d20, the highest kept for net > 0 and the lowest for net < 0; then the
        blessing d4 and the breath d20 (R-ESC-14)."""
        self.char = i
        rolls = [self.die(20) for _ in range(abs(net) + 1)]
        total = max(rolls) if net >= 0 else min(rolls)
        if blessed:
            total += self.die(4)
        if breath:
            total += self.die(20)
        return total >= need

    def inspiration(self, i: int, sides: int) -> int:
        """R-ESC-14b: the face of a held inspiration die, drawn before the check's dice."""
        self.char = i
        return self.die(sides)

    def search(self, i: int, need: int) -> bool:
        self.char = i
        return self.die(20) >= need

    def item(self, i: int, weights: np.ndarray) -> int:
        self.char = i
        return pick_weighted([float(w) for w in weights], self.uniform())

    def save(self, i: int, need: int) -> bool:
        self.char = i
        return self.die(20) >= need

    def focus(self, i: int) -> int:
        self.char = i
        return self.die(8)

    def roll(self, i: int, field: str, expr: DiceExpr) -> int:
        self.char = i
        faces = [self.die(term.sides) for term in expr.dice for _ in range(term.count)]
        return expr.evaluate(faces, self.p.modifiers[i])


def pick_weighted(weights: list[float], u: float) -> int:
    """Index drawn by weight from a uniform ``u``: the number of cumulative weights <= u * total,
    clamped to the last positive weight."""
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    idx = sum(1 for c in cumulative if c <= u * total)
    last = max(k for k, w in enumerate(weights) if w > 0)
    return min(idx, last)


@dataclass
class RoundScratch:
    """What the steps of one round hand on to the later ones (the engine's ``Scratch``): who is dazed, the
    declared plan, the help attached to each character's check, next round's blessings and inspiration dice,
    the restraint each character struggled (-1: none) and whose harness was on when the struggles began."""

    dazed: tuple[bool, ...]
    plan: list[Action | None]
    assisted: list[bool] = field(default_factory=list)
    guide: list[int] = field(default_factory=list)
    mage: list[int] = field(default_factory=list)
    helpers: list[list[int]] = field(default_factory=list)
    bless_next: list[bool] = field(default_factory=list)
    insp_next: list[int] = field(default_factory=list)
    struggled: list[int] = field(default_factory=list)
    harness_on: list[bool] = field(default_factory=list)
    legs_attention: int = 0  # R-ESC-10c: drawn by the unties of others and the searches made with bound legs


def play_round(p: EscapeParams, st: PartyState, policy: Callable, src, validate: bool = False) -> None:
    """One round (R-ESC-5), in place: the steps in the order of the rules (and of :mod:`sim.escape.kernel`)."""
    dazed = start_round(p, st)
    sc = RoundScratch(dazed, declare_actions(p, st, policy, dazed, validate))  # (1)
    attention = attach_help(p, st, sc)  # (2)
    resolve_struggles(p, st, sc, src)  # (3)
    resolve_unties_and_items(p, st, sc)
    resolve_rests(p, st, sc, src)
    resolve_searches(p, st, sc, src)  # (4)
    add_attention(st, attention + sc.legs_attention)  # (5)
    apply_composure(p, st, sc, src)  # (6)
    end_tests(p, st, sc)  # (7)


def start_round(p: EscapeParams, st: PartyState) -> tuple[bool, ...]:
    """The round number; who is dazed (R-ESC-12); a dazed character loses its blessing (R-ESC-33);
    statistics: rounds spent at the highest goal tier. Returns who is dazed."""
    st.round += 1
    dazed = tuple(c.dazed_left > 0 for c in st.chars)
    for i, c in enumerate(st.chars):
        if dazed[i]:
            c.blessed = False  # R-ESC-33: a dazed character loses its blessing
        if c.freed_round == 0:  # statistics: rounds spent at the highest goal tier
            top = max((c.tiers[s] for s in range(N_SLOTS) if p.goal[s]), default=0)
            if top > 0:
                c.rounds_at_tier[top] += 1
    return dazed


def declare_actions(p: EscapeParams, st: PartyState, policy: Callable, dazed: tuple[bool, ...],
                    validate: bool) -> list[Action | None]:
    """R-ESC-5 step 1: declarations, seeing only the state at the start of the round (R-ESC-20/21 policies);
    a dazed character declares nothing. Statistics: actions declared by kind."""
    actions = policy(PolicyView(p, st, st.round, dazed))
    plan: list[Action | None] = []
    for i in range(p.n_chars):
        a = actions[i] if i < len(actions) else None
        if dazed[i]:
            a = None
        elif validate:
            a = check_action(p, st, i, a, st.round)
        plan.append(a)
        if a is not None and a.kind in ACTION_INDEX:  # statistics: actions taken by kind
            st.chars[i].actions_taken[ACTION_INDEX[a.kind]] += 1
    return plan


def attach_help(p: EscapeParams, st: PartyState, sc: RoundScratch) -> int:
    """R-ESC-5 step 2: assists, guides and mage hands attach to this round's checks (R-ESC-8, R-ESC-9,
    R-ESC-14), blessings and inspiration dice to later rounds' (R-ESC-14, R-ESC-14b). Returns the attention
    drawn (R-ESC-9a, from round 1: R-ESC-32)."""
    C = p.n_chars
    chars = st.chars
    sc.assisted, sc.guide, sc.mage = [False] * C, [0] * C, [0] * C
    sc.helpers = [[] for _ in range(C)]
    sc.bless_next = [False] * C
    sc.insp_next = [0] * C  # R-ESC-14b: the inspiration die a character gains at the end of the round
    attention = p.att_per_round  # R-ESC-9a, from round 1 (R-ESC-32)
    for i, a in enumerate(sc.plan):
        if a is None:
            continue
        if a.kind == "assist":
            sc.assisted[a.target] = True  # several assistants count once (R-ESC-8)
            sc.mage[a.target] = max(sc.mage[a.target], mage_hand_bonus(p, i, chars[i]))
            sc.helpers[a.target].append(i)
            attention += p.att_assist + legs_attention(p, i, chars[i], a)  # R-ESC-10c: an assist under R-ESC-7
        elif a.kind == "guide":
            sc.guide[a.target] = max(sc.guide[a.target], int(p.guide_bonus[i]))  # only the largest counts
            sc.helpers[a.target].append(i)
            attention += p.att_guide
        elif a.kind == "untie" and a.target != i:
            attention += p.att_assist  # R-ESC-10b
        elif a.kind == "use_item" and a.target != i:
            attention += p.att_assist  # decision: an item used on a teammate is physical help
        elif a.kind == "search":
            attention += p.att_search
        elif a.kind == "bless":
            for j in range(C):
                if j != i:
                    sc.bless_next[j] = True  # R-ESC-14: next round's checks; blessings draw none
        elif a.kind == "inspire":  # R-ESC-14b: a die for a later round's check; draws attention.guide
            chars[i].inspire -= 1
            sc.insp_next[a.target] = max(sc.insp_next[a.target], int(p.inspire_sides[i]))
            attention += p.att_guide
    return attention


def resolve_struggles(p: EscapeParams, st: PartyState, sc: RoundScratch, src) -> None:
    """R-ESC-5 step 3: struggles in party order (R-ESC-32); then a streak breaks in a round without that
    struggle (R-ESC-3)."""
    sc.struggled = [-1] * p.n_chars
    sc.harness_on = [c.tiers[HARNESS] >= 1 for c in st.chars]
    for i, a in enumerate(sc.plan):
        if a is not None and a.kind == "struggle":
            struggle(p, st, sc, i, a, src)
    for i, c in enumerate(st.chars):  # R-ESC-3: a streak breaks in a round without that struggle
        c.last_slot = sc.struggled[i]
        for s in range(N_SLOTS):
            if s != sc.struggled[i]:
                c.acc[s] = 0
                c.streak[s] = 0


def struggle(p: EscapeParams, st: PartyState, sc: RoundScratch, i: int, a: Action, src) -> None:
    """One struggle check (R-ESC-3, R-ESC-4, R-ESC-11, R-GEN-4), its resources spent (R-ESC-14, R-ESC-14a,
    R-ESC-14b), then its success or failure."""
    c = st.chars[i]
    s = a.slot
    sc.struggled[i] = s
    tier = c.tiers[s]
    spec = check_spec(p, i, c, s, a.ability, assisted=sc.assisted[i], guide=sc.guide[i], mage=sc.mage[i],
                      breath=a.breath, rage=a.rage, terrain=a.terrain)
    if a.breath:
        c.breath -= 1
    if a.terrain:
        c.terrain -= 1  # R-ESC-14a: a favoured-terrain use is spent on the check
    face = 0
    if spec.insp:  # R-ESC-14b: the held die is added to this check and restores its face in composure
        face = src.inspiration(i, spec.insp)
        c.insp_die = 0
        c.composure = min(c.composure + face, int(p.comp_max[i]) - c.craving)
    success = src.check(i, spec.net, spec.need - face, spec.blessed, spec.breath)
    c.checks += 1
    if st.round == 1:  # statistics for the first-check advantage
        st.first_round = max(st.first_round, 2 if success else 1)
    c.checks_at_tier[tier] += 1
    if success:
        struggle_success(p, st, i, a, tier, sc.helpers[i])
    else:
        struggle_failure(p, st.chars[i], s, tier, sc.assisted[i])


def struggle_success(p: EscapeParams, st: PartyState, i: int, a: Action, tier: int, helpers: list[int]) -> None:
    """A success moves the restraint down its ladder (R-ESC-2; a rage one more, R-ESC-14a) and resets acc and
    streak (R-ESC-33); the paladins among the struggler and its helpers recover (R-ESC-14 strength of will)."""
    c = st.chars[i]
    s = a.slot
    c.successes += 1
    c.successes_at_tier[tier] += 1
    c.tiers[s] = int(p.becomes[tier])
    if a.rage:  # R-ESC-14a: one more position down the ladder (never below free); the use is spent
        c.tiers[s] = max(0, c.tiers[s] - 1)
        if c.rage != UNLIMITED:
            c.rage -= 1
    c.acc[s] = 0  # R-ESC-33: a success always resets acc and streak
    c.streak[s] = 0
    # R-ESC-14 strength of will: the paladin itself, and paladins who helped
    for k in [i, *helpers]:
        if p.is_paladin[k] and st.chars[k].dazed_left == 0:
            ck = st.chars[k]
            ck.composure = min(ck.composure + max(0, int(p.cha_mod[k])), int(p.comp_max[k]) - ck.craving)


def struggle_failure(p: EscapeParams, c: CharState, s: int, tier: int, assisted: bool) -> None:
    """R-ESC-3 accumulation by the tier's mark; a `*` restraint failed in a second consecutive round is
    released."""
    mark = int(p.mark[tier])
    if mark == MARK_STAR:
        if c.streak[s] == 1:
            c.tiers[s] = 0  # second consecutive round: released
            c.acc[s] = 0
            c.streak[s] = 0
            return
    elif mark == MARK_PLUS:
        c.acc[s] += 2 + (2 if assisted else 0)
    elif mark == MARK_HASH:
        c.acc[s] += 1 + (1 if assisted else 0)
    elif mark == MARK_X:
        c.acc[s] += 1 if assisted else 0
    c.streak[s] += 1


def resolve_unties_and_items(p: EscapeParams, st: PartyState, sc: RoundScratch) -> None:
    """R-ESC-10b unties and R-ESC-10 release items, in party order, each on the tier left so far."""
    chars = st.chars
    for i, a in enumerate(sc.plan):
        if a is None:
            continue
        if a.kind == "untie":
            sc.legs_attention += legs_attention(p, i, chars[i], a)  # R-ESC-10c: legs read as the untie resolves
            t = chars[a.target]
            if t.tiers[a.slot] > 0:
                t.tiers[a.slot] = untie_result(t.tiers[a.slot])  # R-ESC-10b
                t.acc[a.slot] = 0
                t.streak[a.slot] = 0
        elif a.kind == "use_item":
            c = chars[i]
            t = chars[a.target]
            item = c.held[a.item]
            if 1 <= t.tiers[a.slot] <= int(p.item_max_tier[item]):  # R-ESC-10 release item
                t.tiers[a.slot] = 0
                t.acc[a.slot] = 0
                t.streak[a.slot] = 0
                del c.held[a.item]


def resolve_rests(p: EscapeParams, st: PartyState, sc: RoundScratch, src) -> None:
    """R-ESC-10a rest; R-ESC-14b channel and meditate (1d6), in party order; up to maximum - craving."""
    for i, a in enumerate(sc.plan):
        if a is None:
            continue
        c = st.chars[i]
        if a.kind == "rest":
            gain = max(0, src.roll(i, "rest", p.rest_expr))
        elif a.kind in ("channel", "meditate"):
            if a.kind == "channel":
                c.channel -= 1
            else:
                c.ki -= 1
            gain = max(0, src.roll(i, "recover", p.recover_expr))
        else:
            continue
        c.composure = min(c.composure + gain, int(p.comp_max[i]) - c.craving)


def resolve_searches(p: EscapeParams, st: PartyState, sc: RoundScratch, src) -> None:
    """R-ESC-5 step 4: searches in party order (R-ESC-10); a success draws one item by weight from those left
    (R-ESC-36: an empty pool finds nothing). R-ESC-10c, legs read as the search resolves: bound legs add
    tier x legs_dc to the DC, keep the items marked needs_free_legs out of the draw and draw attention.legs."""
    for i, a in enumerate(sc.plan):
        if a is None or a.kind != "search":
            continue
        c = st.chars[i]
        sc.legs_attention += legs_attention(p, i, c, a)
        if not src.search(i, search_need(p, i, c)):
            continue
        weights = np.array(findable_weights(p, c, st.item_left), dtype=np.float64)
        if p.n_items == 0 or not (weights > 0).any():
            continue  # R-ESC-36: an empty pool finds nothing (R-ESC-10c: nothing it can find)
        k = src.item(i, weights)
        if st.item_left[k] > 0:
            st.item_left[k] -= 1
        c.items_found += 1
        if p.item_kind[k] == 0:
            c.item_bonus += int(p.item_value[k])
        else:
            c.held.append(k)


def add_attention(st: PartyState, attention: int) -> None:
    """R-ESC-5 step 5 / R-ESC-9a."""
    st.attention += attention


def apply_composure(p: EscapeParams, st: PartyState, sc: RoundScratch, src) -> None:
    """R-ESC-5 step 6: composure damage (R-ESC-11, R-ESC-13, R-ESC-34), dazed rounds, the saves of R-ESC-14
    and overload (R-ESC-12, R-ESC-35), character by character."""
    for i, c in enumerate(st.chars):
        damage = composure_damage(p, sc, i, c, src)
        top = int(p.comp_max[i]) - c.craving
        if c.dazed_left > 0:  # dazed after an overload: composure stays 0, damage ignored
            c.dazed_left -= 1
            if c.dazed_left == 0:
                c.composure = max(0, top)
            continue
        if damage <= 0:
            continue
        c.composure = max(0, c.composure - damage)
        if c.composure > 0 or st.round <= c.immune_until:
            continue
        if not saved_from_overload(p, st.round, i, c, damage, top, src):
            overload(p, c, top)


def composure_damage(p: EscapeParams, sc: RoundScratch, i: int, c: CharState, src) -> int:
    """Harness (R-ESC-11) and stimulus damage as one hit (R-ESC-34); craving lowers the maximum (R-ESC-13)."""
    damage = 0
    if sc.struggled[i] >= 0 and sc.harness_on[i]:
        damage += max(0, src.roll(i, "harness", p.harness_expr))  # R-ESC-11 harness
    if p.stimulus_expr is not None:
        stim = max(0, src.roll(i, "stimulus", p.stimulus_expr))
        damage += stim
        if p.craving:
            c.craving += stim  # R-ESC-13 craving lowers the maximum
    return damage


def saved_from_overload(p: EscapeParams, rnd: int, i: int, c: CharState, damage: int, top: int, src) -> bool:
    """R-ESC-14 inner breath save (a monk with a breath point) and absolute focus save (R-ESC-35): whether
    the character at 0 composure is spared the overload."""
    if p.is_monk[i] and c.breath > 0:  # R-ESC-14 inner breath save
        c.breath -= 1
        need = 10 + damage + c.save_bonus - int(p.wis_mod[i])
        c.save_bonus += 2
        if src.save(i, need):
            c.composure = max(0, top // 2)
            return True
    elif p.is_focus[i]:  # R-ESC-14 absolute focus
        if src.save(i, 10 + damage // 2 - int(p.focus_mod[i])):
            c.composure = min(max(0, src.focus(i) + int(p.focus_mod[i])), max(0, top))
            c.immune_until = rnd + 1
            return True
    return False


def overload(p: EscapeParams, c: CharState, top: int) -> None:
    """R-ESC-12 overload: dazed for ``overload.dazed_rounds`` rounds, else composure back to its maximum."""
    c.overloads += 1  # R-ESC-12 overload
    c.save_bonus = 0
    if p.dazed_rounds > 0:
        c.dazed_left = p.dazed_rounds
    else:
        c.composure = max(0, top)


def end_tests(p: EscapeParams, st: PartyState, sc: RoundScratch) -> None:
    """R-ESC-5 step 7: blessings and inspiration dice (one held at most, R-ESC-14b) move to next round;
    caught before escaped; timeout."""
    rnd = st.round
    for i, c in enumerate(st.chars):
        c.blessed = sc.bless_next[i]
        if sc.insp_next[i] and not c.insp_die:  # R-ESC-14b: one die held at most
            c.insp_die = sc.insp_next[i]
        if c.freed_round == 0 and goal_done(p, c):
            c.freed_round = rnd
    if p.attention_limit and st.attention >= p.attention_limit:
        st.outcome = "caught"
    elif all(goal_done(p, c) for c in st.chars):
        st.outcome = "escaped"
    elif rnd >= p.max_rounds:
        st.outcome = "timeout"
