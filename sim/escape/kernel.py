"""The fast escape engine: numba-compiled loops over batch arrays, one run at a time (RULES.md section 1).

State is data (STYLE.md practice 1): a :class:`Batch` of numpy arrays with the run axis first, and the
compiled :class:`Rules` of the scenario. Each run is played to its end before the next begins; one
compiled function per step of the round order R-ESC-5, named after its rule:

    start_round -> declare_actions (R-ESC-20/21 policies) -> attach_help (R-ESC-8, 9, 9a, 14)
    -> resolve_struggles (R-ESC-3, 4, 11, 32, 33) -> resolve_unties_and_items (R-ESC-10, 10b)
    -> resolve_rests (R-ESC-10a) -> resolve_searches (R-ESC-10) -> add_attention (R-ESC-9a)
    -> apply_composure (R-ESC-12, 13, 14, 34, 35) -> end_tests (R-ESC-5 step 7)

Random layout (:data:`RANDOM_LAYOUT`): each chunk draws a 128-bit key from its Generator (R-GEN-7); uniform
number k that character i uses in round r of run j is a fixed function of (key, j, r, i, k) (SplitMix64 mixing
of the packed counter, 53 bits to [0, 1)). So every random event takes only the uniforms it needs, in the order
it needs them (a check: the held inspiration die first (R-ESC-14b), then |net| + 1 d20, then the blessing d4 if
blessed, then the breath d20 if spent; a search:
a d20, then the item uniform if it succeeded; a dice expression one uniform a die), no run's numbers depend on
another run, and two policies or parameter values played on the same seed read the same numbers for the same
character in the same round of the same run (common random numbers). A die face is ``floor(u * sides) + 1``.
The scalar reference (:mod:`sim.escape.reference`) computes the same numbers through its ``DrawSource``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from sim.dice import CHECK_DENOMINATOR, CHECK_MAX_SUM, MAX_NET_DICE, check_table_array
from sim.dice_kernel import net_dice
from sim.escape.branching import exact_at_least, exact_check, exact_dice, exact_die, exact_item
from sim.escape.columns import CHAR, CHAR_TIER, RUN, stat_names
from sim.escape.params import (
    ARMS,
    BLINDFOLD,
    BODY,
    COMPLETE,
    DEX,
    EARPLUGS,
    FINGERS,
    GAG,
    HARNESS,
    LEGS,
    MARK_HASH,
    MARK_PLUS,
    MARK_STAR,
    MARK_X,
    MASK,
    MODERATE,
    N_SLOTS,
    SEVERE,
    STR,
    UNLIMITED,
    UTTER,
    EscapeParams,
)
from sim.escape.state import ACTION_KINDS

RANDOM_LAYOUT = "escape-keyed-2"  # version of the random layout above (recorded in every summary)

# outcomes
RUNNING, ESCAPED, CAUGHT, TIMEOUT = 0, 1, 2, 3
OUTCOME_NAMES = ("", "escaped", "caught", "timeout")
# action kinds: positions in ACTION_KINDS; NONE for a dazed character
NONE = -1
STRUGGLE, ASSIST, GUIDE, SEARCH, REST, UNTIE, USE_ITEM, BLESS, CHANNEL, INSPIRE, MEDITATE = (
    ACTION_KINDS.index(k) for k in ("struggle", "assist", "guide", "search", "rest", "untie", "use_item", "bless",
                                    "channel", "inspire", "meditate"))
# plan columns (P_RAGE, P_TERRAIN: R-ESC-14a spends of a struggle)
P_KIND, P_SLOT, P_ABILITY, P_TARGET, P_ITEM, P_BREATH, P_RAGE, P_TERRAIN = range(8)
N_PLAN = 8
POLICY_CODES = {"greedy": 0, "arms_first": 1, "team": 2}
GREEDY, ARMS_FIRST, TEAM = 0, 1, 2
FIXED = 3  # not a policy: the declaration is given in Scratch.plan (optimal play on the compiled exact engine)
# The policies compare success probabilities as integers over DENOM: CHECK_DENOMINATOR times 120, the least common
# multiple of the inspiration dice's sides (R-ESC-14b), so that a check with a held die (the mean over its faces)
# is an integer too. The reference compares the same ratios as exact fractions.
SCALE = 120
DENOM = CHECK_DENOMINATOR * SCALE

# How the steps are compiled. Each step of the round and each policy step is its own function (``rule``), compiled
# once and cached, and tagged for LLVM to inline into the one entry point :func:`run_engine` (numba's
# ``forceinline``): a call between compiled functions passes every array of its arguments field by field (about
# 250 values for the three NamedTuples below), which cost more than most rules do; inlined, the arrays' fields stay
# in registers. The small predicates and the check arithmetic are inlined earlier, into numba's own IR (``leaf``).
# Nothing here allocates, so reference counting is compiled out (``_nrt=False``, as in the campus engine): the
# arrays belong to the Python caller for the whole call. ``nogil``: several chunks run at once in threads.
# Profile (bench/README.md, first section): with the changes it names, the bench party went from 2.6 M to about
# 11.5 M character-rounds/s.
rule = njit(cache=True, _nrt=False, forceinline=True)
leaf = njit(inline="always")


# Rules.game: the scenario's scalars, then the goal slots (GOAL + slot)
# (ATT_LEGS, SEARCH_LEGS_DC: R-ESC-10c, 0 with legs_hinder = false)
(N_CHARS, N_ITEMS, MAX_ROUNDS, POOL, ATTENTION_LIMIT, ATT_ASSIST, ATT_GUIDE, ATT_SEARCH, ATT_PER_ROUND, SEARCH_ON,
 SEARCH_DC, HAS_STIMULUS, CRAVING, DAZED_ROUNDS, ARMS_FREE, ATT_LEGS, SEARCH_LEGS_DC, GOAL) = range(18)
DC, BECOMES, MARK = range(3)  # Rules.tier columns (R-ESC-2, R-ESC-3)
# Rules.char columns: what an escape check adds by ability (str, dex, int): the ability modifier plus the escape
# artist's bonus (R-ESC-4, R-ESC-14) and the rogue's and druid's (R-ESC-14a); what a favoured-terrain use adds by
# ability (R-ESC-14a); then the rest
CHECK_MOD = 0
TERRAIN_MOD = 3
(WIS_MOD, CHA_MOD, SEARCH_MOD, GUIDE_BONUS, MAGE_BONUS, IS_MONK, IS_PALADIN, IS_CLERIC, IS_MAGE_HAND, IS_FOCUS,
 FOCUS_MOD, COMP_MAX, REST_FIXED, HARNESS_FIXED, STIMULUS_FIXED, INSPIRE_SIDES, HARNESS_MAX, STIMULUS_MAX,
 RECOVER_FIXED) = range(6, 25)
N_CHAR_RULES = 25
ITEM_KIND, ITEM_VALUE, ITEM_MAX_TIER, ITEM_NEEDS_LEGS = range(4)  # Rules.item columns (R-ESC-10c: needs_free_legs)
REST_DICE, HARNESS_DICE, STIMULUS_DICE, RECOVER_DICE = range(4)  # Rules.dice rows
# Batch.chars columns: the character state the rounds read, then the per-character statistics of R-ESC-15
CHAR_STATE = ("last_slot", "composure", "craving", "dazed_left", "breath", "save_bonus", "immune_until",
              "item_bonus", "blessed", "rage", "terrain", "channel", "ki", "inspire", "insp_die")
(LAST_SLOT, COMPOSURE, CRAVING_LEFT, DAZED_LEFT, BREATH, SAVE_BONUS, IMMUNE_UNTIL, ITEM_BONUS, BLESSED, RAGE, TERRAIN,
 CHANNEL_LEFT, KI, INSPIRE_LEFT, INSP_DIE) = range(len(CHAR_STATE))
# The statistics' columns come from their one declaration (sim/escape/columns.py, RUN_STATS, in its order): a new
# statistic is its row there, its index by name below and the lines that count it here and in the reference.
CHAR_FIELDS = CHAR_STATE + stat_names(CHAR)  # Batch.chars columns
RUN_FIELDS = stat_names(RUN)  # Batch.runs columns
TIER_STATS = stat_names(CHAR_TIER)  # Batch.tier_stats rows
FREED_ROUND, CHECKS = CHAR_FIELDS.index("freed_round"), CHAR_FIELDS.index("checks")
SUCCESSES, OVERLOADS = CHAR_FIELDS.index("successes"), CHAR_FIELDS.index("overloads")
ITEMS_FOUND = CHAR_FIELDS.index("items_found")
ATTENTION, ROUNDS = RUN_FIELDS.index("attention"), RUN_FIELDS.index("rounds")
OUTCOME, FIRST_ROUND = RUN_FIELDS.index("outcome"), RUN_FIELDS.index("first_round")
ROUNDS_AT_TIER, CHECKS_AT_TIER = TIER_STATS.index("rounds_at_tier"), TIER_STATS.index("checks_at_tier")
SUCCESSES_AT_TIER = TIER_STATS.index("successes_at_tier")
# Scratch.flags columns: this round's help attached to each character's check, and its struggle; the inspiration
# die it gains at the end of the round (R-ESC-14b)
ASSISTED, GUIDE_FLAG, MAGE, BLESS_NEXT, STRUGGLED, HARNESS_ON, INSPIRE_NEXT = range(7)
N_FLAGS = 7


class Rules(NamedTuple):
    """The scenario's numbers as the compiled loops read them (from :class:`EscapeParams`): a few
    arrays with named columns."""

    game: np.ndarray  # (GOAL + S,) int64
    tier: np.ndarray  # (9, 3): DC, BECOMES, MARK by tier
    char: np.ndarray  # (C, N_CHAR_RULES)
    item: np.ndarray  # (I, 4): ITEM_KIND, ITEM_VALUE, ITEM_MAX_TIER, ITEM_NEEDS_LEGS
    weight: np.ndarray  # (I,) float64
    dice: np.ndarray  # (4, terms, 3): REST, HARNESS, STIMULUS, RECOVER_DICE rows of (sign, count, sides) (R-GEN-5)
    table: np.ndarray  # success chances over DENOM, flat: chance_row(...) + need index (:func:`chance_table`)


class Batch(NamedTuple):
    """State of a batch of runs (run axis first) and its per-run statistics (R-ESC-15)."""

    tiers: np.ndarray  # (n, C, S) int8
    acc: np.ndarray  # (n, C, S) int32
    streak: np.ndarray  # (n, C, S) int32
    chars: np.ndarray  # (n, C, CHAR_FIELDS) int32
    held: np.ndarray  # (n, C, I) held release items, by item
    item_left: np.ndarray  # (n, I), -1 unlimited
    runs: np.ndarray  # (n, RUN_FIELDS) int64
    tier_stats: np.ndarray  # (n, C, TIER_STATS, 9) int32
    action_counts: np.ndarray  # (n, C, kinds) int32

    def field(self, name: str) -> np.ndarray:
        """A named per-character, per-run or per-tier field as a writable view (Python side)."""
        if name in CHAR_FIELDS:
            return self.chars[:, :, CHAR_FIELDS.index(name)]
        if name in RUN_FIELDS:
            return self.runs[:, RUN_FIELDS.index(name)]
        return self.tier_stats[:, :, TIER_STATS.index(name)]


class Scratch(NamedTuple):
    """One round's working arrays for one run (reused)."""

    plan: np.ndarray  # (C, N_PLAN): P_KIND .. P_TERRAIN
    dazed: np.ndarray  # (C,) bool
    flags: np.ndarray  # (C, N_FLAGS): ASSISTED .. INSPIRE_NEXT
    helpers: np.ndarray  # (C, C): helpers[target, helper]
    weights: np.ndarray  # (I,) float64
    counts: np.ndarray  # (C,) uniforms each character drew this round
    strug: np.ndarray  # (C, N_STRUG): each declared struggle's chance rows and need, its planned help (ST_*)


# Scratch.strug columns, set when a struggle is declared (:func:`plan_struggle`): the chance table's rows of the
# check without and with an assist (R-ESC-8), what the random part must reach without guide and mage hand (so that
# help of bonus b reads the chance at ST_NEED0 - b), the chance with no help; then, for the team pass, the help
# planned for it so far (R-ESC-8, 9, 33 combined: assisted, largest guide, largest mage hand, any help) and its
# chance with it.
# The resolution reads its net dice (ST_NET0, ST_NET1) and ST_NEED0 too: nothing they depend on changes between the
# declaration and the check (R-ESC-32: the struggles of earlier characters move only their own restraints).
ST_ROW0, ST_ROW1, ST_NEED0, ST_OWN, ST_ASSISTED, ST_GUIDE, ST_MAGE, ST_HELPED, ST_BEFORE, ST_NET0, ST_NET1 = range(11)
N_STRUG = 11

# The success chance table (issue 27): every chance a policy weighs is one look-up, by the check's dice (net dice,
# blessing, breath d20, held inspiration die) and what its random part must reach, clamped to [0, NEED_TOP]: a need
# of 0 or less always succeeds, one of NEED_TOP or more never does, even with the largest inspiration die's top face.
N_NETS = 2 * MAX_NET_DICE + 1
MAX_SIDES = 12  # the largest inspiration die (R-ESC-14b)
NEED_TOP = CHECK_MAX_SUM + MAX_SIDES + 1
NEED_SPAN = NEED_TOP + 1
AUTO_ROW = (MAX_SIDES + 1) * 2 * 2 * N_NETS * NEED_SPAN  # a `*` auto-release: every entry DENOM (R-ESC-3, R-ESC-37)


def chance_table() -> np.ndarray:
    """Flat int64 table: at ``chance_row(sides, blessed, breath, net) + clamp(need)``, P(kept d20 [+ 1d4]
    [+ d20] [+ the held die] >= need) over DENOM: the check numerator of :mod:`sim.dice` times SCALE, or with a held
    inspiration die of ``sides`` faces the sum over its faces of the numerator at need - face, times SCALE // sides
    (the mean over the faces, R-ESC-14b); then the AUTO_ROW of DENOMs."""
    base = check_table_array()  # [net + MAX_NET_DICE, blessed, breath, clip(need, 0, CHECK_MAX_SUM + 1)]
    assert (base[..., 0] == CHECK_DENOMINATOR).all() and (base[..., -1] == 0).all()
    table = np.zeros((MAX_SIDES + 1, 2, 2, N_NETS, NEED_SPAN), dtype=np.int64)
    need = np.arange(NEED_SPAN)
    for b in (0, 1):
        for r in (0, 1):
            for n in range(N_NETS):
                row = base[n, b, r]
                table[0, b, r, n] = row[np.clip(need, 0, CHECK_MAX_SUM + 1)] * SCALE
                for sides in range(1, MAX_SIDES + 1):
                    faces = sum(row[np.clip(need - f, 0, CHECK_MAX_SUM + 1)] for f in range(1, sides + 1))
                    table[sides, b, r, n] = faces * (SCALE // sides)
    return np.concatenate([table.reshape(-1), np.full(NEED_SPAN, DENOM, dtype=np.int64)])


_TABLE = chance_table()


def rules_of(p: EscapeParams) -> Rules:
    C = p.n_chars
    game = np.zeros(GOAL + N_SLOTS, dtype=np.int64)
    game[[N_CHARS, N_ITEMS, MAX_ROUNDS, POOL, ATTENTION_LIMIT, ATT_ASSIST, ATT_GUIDE, ATT_SEARCH, ATT_PER_ROUND,
          SEARCH_ON, SEARCH_DC, HAS_STIMULUS, CRAVING, DAZED_ROUNDS, ARMS_FREE, ATT_LEGS, SEARCH_LEGS_DC]] = [
        C, p.n_items, p.max_rounds, p.stacking == "pool", p.attention_limit, p.att_assist, p.att_guide,
        p.att_search, p.att_per_round, p.search_on, p.search_dc, p.stimulus_expr is not None, p.craving,
        p.dazed_rounds, p.arms_free, p.att_legs, p.search_legs_dc]
    game[GOAL:] = p.goal
    tier = np.stack([p.dc, p.becomes, p.mark], axis=1).astype(np.int64)
    char = np.zeros((C, N_CHAR_RULES), dtype=np.int64)
    char[:, CHECK_MOD:CHECK_MOD + 3] = p.escape_mod + p.artist_bonus + p.feature_bonus
    char[:, TERRAIN_MOD:TERRAIN_MOD + 3] = p.terrain_bonus
    char[:, INSPIRE_SIDES] = p.inspire_sides
    char[:, HARNESS_MAX], char[:, STIMULUS_MAX] = p.danger[:, 0], p.danger[:, 1]
    for col, values in ((WIS_MOD, p.wis_mod), (CHA_MOD, p.cha_mod), (SEARCH_MOD, p.search_mod),
                        (GUIDE_BONUS, p.guide_bonus), (MAGE_BONUS, p.mage_bonus), (IS_MONK, p.is_monk),
                        (IS_PALADIN, p.is_paladin), (IS_CLERIC, p.is_cleric), (IS_MAGE_HAND, p.is_mage_hand),
                        (IS_FOCUS, p.is_focus), (FOCUS_MOD, p.focus_mod), (COMP_MAX, p.comp_max)):
        char[:, col] = values
    exprs = (p.rest_expr, p.harness_expr, p.stimulus_expr, p.recover_expr)
    n_terms = max(1, *(len(e.dice) for e in exprs if e is not None))
    dice = np.zeros((len(exprs), n_terms, 3), dtype=np.int64)
    dice[:, :, 2] = 1  # padding terms roll no dice (count 0)
    fixed = (REST_FIXED, HARNESS_FIXED, STIMULUS_FIXED, RECOVER_FIXED)
    for row, (expr, col) in enumerate(zip(exprs, fixed, strict=True)):
        if expr is None:
            continue
        for t, term in enumerate(expr.dice):
            dice[row, t] = (term.sign, term.count, term.sides)
        char[:, col] = [expr.constant + expr.ability_part(p.modifiers[i]) for i in range(C)]
    item = np.zeros((p.n_items, 4), dtype=np.int64)
    item[:, ITEM_KIND], item[:, ITEM_VALUE], item[:, ITEM_MAX_TIER] = p.item_kind, p.item_value, p.item_max_tier
    item[:, ITEM_NEEDS_LEGS] = p.item_needs_legs
    return Rules(game, tier, char, item, np.ascontiguousarray(p.item_weight, dtype=np.float64).reshape(-1), dice,
                 _TABLE)


def initial_batch(p: EscapeParams, n: int) -> Batch:
    """``n`` runs at the start of the challenge (R-ESC-35: composure at its maximum)."""
    C, I = p.n_chars, p.n_items
    chars = np.zeros((n, C, len(CHAR_FIELDS)), dtype=np.int32)
    chars[:, :, LAST_SLOT] = -1
    chars[:, :, COMPOSURE] = p.comp_max
    chars[:, :, BREATH] = p.breath_points
    chars[:, :, RAGE] = p.rage_uses  # R-ESC-14a / R-ESC-14b uses
    chars[:, :, TERRAIN] = p.terrain_uses
    chars[:, :, CHANNEL_LEFT] = p.channel_uses
    chars[:, :, KI] = p.ki
    chars[:, :, INSPIRE_LEFT] = p.inspire_uses
    return Batch(
        tiers=np.broadcast_to(p.init_tiers.astype(np.int8), (n, C, N_SLOTS)).copy(),
        acc=np.zeros((n, C, N_SLOTS), dtype=np.int32), streak=np.zeros((n, C, N_SLOTS), dtype=np.int32),
        chars=chars, held=np.zeros((n, C, I), dtype=np.int32),
        item_left=np.broadcast_to(p.item_count.astype(np.int32), (n, I)).copy(),
        runs=np.zeros((n, len(RUN_FIELDS)), dtype=np.int64),
        tier_stats=np.zeros((n, C, len(TIER_STATS), 9), dtype=np.int32),
        action_counts=np.zeros((n, C, len(ACTION_KINDS)), dtype=np.int32),
    )


def new_scratch(p: EscapeParams) -> Scratch:
    C = p.n_chars
    return Scratch(np.zeros((C, N_PLAN), dtype=np.int64), np.zeros(C, dtype=np.bool_),
                   np.zeros((C, N_FLAGS), dtype=np.int64), np.zeros((C, C), dtype=np.bool_),
                   np.zeros(p.n_items, dtype=np.float64), np.zeros(C, dtype=np.int64),
                   np.zeros((C, N_STRUG), dtype=np.int64))


# =============================================================================================
# random events (the layout above)


@leaf
def mix64(z):
    """The SplitMix64 finalizer (a bijection of uint64 with full avalanche)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@leaf
def uniform_at(key, run, rnd, char, k):
    """Uniform number ``k`` of character ``char`` in round ``rnd`` of run ``run`` (the layout above)."""
    counter = np.uint64(run) << np.uint64(44)
    counter |= (np.uint64(rnd) << np.uint64(32)) | (np.uint64(char) << np.uint64(24)) | np.uint64(k)
    bits = mix64(mix64(key[0] ^ counter) ^ key[1]) >> np.uint64(11)  # 53 bits: exact as a signed integer too
    return float(np.int64(bits)) * (1.0 / 9007199254740992.0)


@leaf
def mc_round_keys(u, run, rnd):
    """The chunk key's two words and the counter's run and round fields of this round (a tuple: registers)."""
    return u[0], u[1], (np.uint64(run) << np.uint64(44)) | (np.uint64(rnd) << np.uint64(32))


@leaf
def next_uniform(key, sc, i):
    """Character i's next uniform of this round; ``key`` from :func:`round_keys` (as :func:`uniform_at`)."""
    k = sc.counts[i]
    sc.counts[i] = k + 1
    counter = key[2] | (np.uint64(i) << np.uint64(24)) | np.uint64(k)
    bits = mix64(mix64(key[0] ^ counter) ^ key[1]) >> np.uint64(11)
    return float(np.int64(bits)) * (1.0 / 9007199254740992.0)


@leaf
def face(x, sides):
    """A die face from a uniform number: floor(x * sides) + 1 (truncation is floor for x >= 0)."""
    return int(x * sides) + 1


@leaf
def mc_roll_die(u, sc, i, sides):
    return face(next_uniform(u, sc, i), sides)


@leaf
def mc_roll_check(u, sc, i, net, need, blessed, breath):
    """R-GEN-1, R-GEN-4: keep the highest (net > 0) or lowest (net < 0) of |net| + 1 d20, add the
    blessing d4 and the breath d20 (R-ESC-14); success if the total reaches ``need``."""
    total = mc_roll_die(u, sc, i, 20)
    for _ in range(abs(net)):
        d = mc_roll_die(u, sc, i, 20)
        if (net > 0 and d > total) or (net < 0 and d < total):
            total = d
    if blessed:
        total += mc_roll_die(u, sc, i, 4)
    if breath:
        total += mc_roll_die(u, sc, i, 20)
    return total >= need


@leaf
def mc_roll_dice(u, sc, i, dice, fixed):
    """R-GEN-5: a dice expression for one character (``fixed`` = constant + ability modifiers)."""
    total = fixed
    for t in range(dice.shape[0]):
        for _ in range(dice[t, 1]):
            total += dice[t, 0] * mc_roll_die(u, sc, i, dice[t, 2])
    return total


@leaf
def mc_pick_item(u, sc, i, weights):
    """R-ESC-10: an item by weight: the number of cumulative weights <= u * total, clamped to the
    last positive weight (as the reference's ``pick_weighted``)."""
    x = next_uniform(u, sc, i)
    total = 0.0
    for k in range(weights.shape[0]):
        total += weights[k]
    threshold = x * total
    cum = 0.0
    idx = 0
    last = 0
    for k in range(weights.shape[0]):
        cum += weights[k]
        if cum <= threshold:
            idx += 1
        if weights[k] > 0:
            last = k
    return min(idx, last)


# The random events the round reads, by the type of its random source ``u``: the chunk's key (a plain tuple: Monte
# Carlo, the functions above) or a :class:`sim.escape.branching.Branching` (a named tuple: the exact engine, every
# outcome in turn with its probability, issue 35). Numba picks the implementation when it compiles the round for
# the source's type, so the Monte Carlo round is the same code as before.


def _is_exact(u) -> bool:
    return isinstance(u, types.BaseNamedTuple)


def round_keys(u, run, rnd):
    """The random numbers of one round (the chunk key's words and the round's counter); the exact source itself."""


@overload(round_keys, inline="always")
def _round_keys(u, run, rnd):
    if _is_exact(u):
        return lambda u, run, rnd: u
    return mc_round_keys.py_func


def roll_die(u, sc, i, sides):
    """One die of ``sides`` faces."""


@overload(roll_die, inline="always")
def _roll_die(u, sc, i, sides):
    if _is_exact(u):
        return lambda u, sc, i, sides: exact_die(u, i, sides)
    return mc_roll_die.py_func


def roll_at_least(u, sc, i, sides, need):
    """One die of ``sides`` faces reaching ``need`` (a search, a save)."""


@overload(roll_at_least, inline="always")
def _roll_at_least(u, sc, i, sides, need):
    if _is_exact(u):
        return lambda u, sc, i, sides, need: exact_at_least(u, i, sides, need)
    return lambda u, sc, i, sides, need: mc_roll_die(u, sc, i, sides) >= need


def roll_check(u, sc, i, net, need, blessed, breath):
    """R-GEN-4 check (R-ESC-14 blessing and breath)."""


@overload(roll_check, inline="always")
def _roll_check(u, sc, i, net, need, blessed, breath):
    if _is_exact(u):
        return lambda u, sc, i, net, need, blessed, breath: exact_check(u, i, net, need, blessed, breath)
    return mc_roll_check.py_func


def roll_dice(u, sc, i, dice, fixed):
    """R-GEN-5 dice expression."""


@overload(roll_dice)  # called, not inlined into numba's IR: inlining its loop twice trips a numba IR check
def _roll_dice(u, sc, i, dice, fixed):
    if _is_exact(u):
        return lambda u, sc, i, dice, fixed: exact_dice(u, i, dice, fixed)
    return mc_roll_dice.py_func


def pick_item(u, sc, i, weights):
    """R-ESC-10 item draw by weight."""


@overload(pick_item, inline="always")
def _pick_item(u, sc, i, weights):
    if _is_exact(u):
        return lambda u, sc, i, weights: exact_item(u, i, weights)
    return mc_pick_item.py_func


# =============================================================================================
# who may do what (R-ESC-7, R-ESC-9, R-ESC-10, R-ESC-10b, R-ESC-11)


@leaf
def can_untie_self(R, st, j, i):
    """R-ESC-10b / R-ESC-31: arms and body at 0 (self_untie = "arms_free"); "hands_free": fingers at 0 too."""
    t = st.tiers
    return t[j, i, ARMS] == 0 and t[j, i, BODY] == 0 and ((R.game[ARMS_FREE] != 0) or t[j, i, FINGERS] == 0)


@leaf
def can_help_physically(st, j, i):
    """R-ESC-7: fingers 0, arms and legs below complete, body 0."""
    t = st.tiers
    return t[j, i, FINGERS] == 0 and t[j, i, ARMS] < COMPLETE and t[j, i, LEGS] < COMPLETE and t[j, i, BODY] == 0


@leaf
def can_untie_other(R, st, j, i):
    return can_untie_self(R, st, j, i) and can_help_physically(st, j, i)


@leaf
def has_mage_hand(R, st, j, i):
    """R-ESC-14 mage hand: a wizard or sorcerer with arms and fingers at 0."""
    return (R.char[i, IS_MAGE_HAND] != 0) and st.tiers[j, i, ARMS] == 0 and st.tiers[j, i, FINGERS] == 0


@leaf
def can_assist(R, st, j, i):
    """R-ESC-7, or R-ESC-14 mage hand (arms and fingers at 0)."""
    return can_help_physically(st, j, i) or has_mage_hand(R, st, j, i)


@leaf
def mage_hand_bonus(R, st, j, i):
    """R-ESC-14 / R-ESC-33: a wizard or sorcerer with arms and fingers at 0 and the mouth free (gag 0 and mask 0,
    second round of 2026-12) adds int mod + proficiency."""
    if has_mage_hand(R, st, j, i) and st.tiers[j, i, GAG] == 0 and st.tiers[j, i, MASK] == 0:
        return R.char[i, MAGE_BONUS]
    return 0


@leaf
def legs_attention(R, st, j, i, kind, target):
    """R-ESC-10c: attention.legs more for an action that needs character i to move (a search, an untie of another,
    an assist that is not a mage-hand assist) while its legs are bound (read as the action resolves)."""
    if st.tiers[j, i, LEGS] < 1:
        return 0
    if kind == SEARCH or (kind == UNTIE and target != i) or (kind == ASSIST and not has_mage_hand(R, st, j, i)):
        return R.game[ATT_LEGS]
    return 0


@leaf
def can_guide(st, j, i):
    """R-ESC-9: gag and blindfold at 0."""
    return st.tiers[j, i, GAG] == 0 and st.tiers[j, i, BLINDFOLD] == 0


@leaf
def can_be_guided(st, j, i):
    return st.tiers[j, i, EARPLUGS] == 0  # R-ESC-11 earplugs


@leaf
def can_search(R, st, j, i):
    """R-ESC-10: search configured, blindfold 0, legs below complete, body 0."""
    t = st.tiers
    return (R.game[SEARCH_ON] != 0) and t[j, i, BLINDFOLD] == 0 and t[j, i, LEGS] < COMPLETE and t[j, i, BODY] == 0


@leaf
def can_bless(R, st, j, i):
    """R-ESC-14 blessing: a cleric with the mouth free (gag 0 and mask 0)."""
    return (R.char[i, IS_CLERIC] != 0) and st.tiers[j, i, GAG] == 0 and st.tiers[j, i, MASK] == 0


@leaf
def can_inspire(st, j, i):
    """R-ESC-14b: an inspire use left and gag 0."""
    return st.chars[j, i, INSPIRE_LEFT] > 0 and st.tiers[j, i, GAG] == 0


@leaf
def has_rage(st, j, i):
    """R-ESC-14a: a rage use left (UNLIMITED, -1, never runs out)."""
    return st.chars[j, i, RAGE] > 0 or st.chars[j, i, RAGE] == UNLIMITED


@leaf
def ability_allowed(st, j, i, slot, ability):
    """R-ESC-11: a body wrap allows only str on the body slot; fingers at moderate or above force str."""
    body = st.tiers[j, i, BODY] >= 1
    if body and slot != BODY:
        return False
    if body or st.tiers[j, i, FINGERS] >= MODERATE:
        return ability == STR
    return True


@leaf
def may_struggle(st, j, i, slot):
    """Tier 1..despair (utter cannot be struggled, R-ESC-2) and a str check allowed (R-ESC-11)."""
    t = st.tiers[j, i, slot]
    return 1 <= t < UTTER and ability_allowed(st, j, i, slot, STR)


@leaf
def goal_done(R, st, j, i):
    for s in range(N_SLOTS):
        if (R.game[GOAL + s] != 0) and st.tiers[j, i, s] != 0:
            return False
    return True


# =============================================================================================
# the check (R-ESC-3, R-ESC-4, R-ESC-11, R-ESC-14, R-GEN-4)


@leaf
def check_net(R, st, j, i, slot, ability, assisted, rage):
    penalty = 0
    if ability == DEX and st.tiers[j, i, FINGERS] >= 1 and slot != FINGERS:
        penalty += 1  # R-ESC-11 fingers: penalty die on dex checks of other slots
    if ability == STR and st.tiers[j, i, MASK] >= 1:
        penalty += 1  # R-ESC-11 mask: penalty die on every str check (R-ESC-33)
    bonus = (1 if assisted else 0) + (1 if rage else 0)  # the assist's and the rage's (R-ESC-14a) bonus dice
    return net_dice(bonus, penalty, R.game[POOL] != 0)  # R-GEN-4


@leaf
def check_need(R, st, j, i, slot, ability, guide, mage, breath, terrain):
    """What the random part of an escape check must reach: DC - (mod + acc + items + escape artist, rogue and
    druid + guide + mage hand [+ favoured terrain] [+ wis mod with the breath d20]) (R-ESC-4, R-ESC-3, R-ESC-9,
    R-ESC-14, R-ESC-14a)."""
    tier = st.tiers[j, i, slot]
    static = R.char[i, CHECK_MOD + ability]
    static += st.acc[j, i, slot] + st.chars[j, i, ITEM_BONUS]
    static += guide + mage
    if terrain:
        static += R.char[i, TERRAIN_MOD + ability]
    if breath:
        static += R.char[i, WIS_MOD]
    return R.tier[tier, DC] - static


@leaf
def chance_row(sides, blessed, breath, net):
    """Where the chance table's row for a check's dice starts: a held inspiration die of ``sides`` faces (0: none,
    R-ESC-14b), the blessing d4, the breath d20 (R-ESC-14), ``net`` bonus dice (R-GEN-4)."""
    return (((sides * 2 + (1 if blessed else 0)) * 2 + (1 if breath else 0)) * N_NETS + net + MAX_NET_DICE) * NEED_SPAN


@leaf
def chance(R, row, need):
    """P(the random part of the check of table row ``row`` reaches ``need``) over DENOM (:func:`chance_table`)."""
    return R.table[row + min(max(need, 0), NEED_TOP)]


@leaf
def is_auto_release(R, st, j, i, slot):
    """R-ESC-3: a `*` restraint struggled in its second consecutive round is released."""
    return R.tier[st.tiers[j, i, slot], MARK] == MARK_STAR and st.streak[j, i, slot] == 1


# =============================================================================================
# policies (R-ESC-20, R-ESC-31, R-ESC-21, R-ESC-37; arms_first)


@leaf
def set_action(plan, i, kind, slot, ability, target, item, breath):
    plan[i, P_KIND] = kind
    plan[i, P_SLOT] = slot
    plan[i, P_ABILITY] = ability
    plan[i, P_TARGET] = target
    plan[i, P_ITEM] = item
    plan[i, P_BREATH] = 1 if breath else 0
    plan[i, P_RAGE] = 0
    plan[i, P_TERRAIN] = 0


@leaf
def item_for(R, st, j, i, tier):
    """R-ESC-31: the held release item covering ``tier`` with the smallest max_tier (then index), or -1."""
    best = -1
    for k in range(R.game[N_ITEMS]):
        if st.held[j, i, k] > 0 and tier <= R.item[k, ITEM_MAX_TIER]:
            if best < 0 or R.item[k, ITEM_MAX_TIER] < R.item[best, ITEM_MAX_TIER]:
                best = k
    return best


@leaf
def holds_items(R, st, j, i):
    for k in range(R.game[N_ITEMS]):
        if st.held[j, i, k] > 0:
            return True
    return False


@leaf
def best_struggle(R, st, j, i, only_slot):
    """R-ESC-20 step 2: (numerator, slot, ability) of the best pair among the goal slots above 0
    (or ``only_slot``); slot -1 if none. Ties: the slot struggled last round, then slot order, then
    str, dex, int (R-ESC-31).

    The pairs are weighed as the declared check is (:func:`plan_struggle`) but with no help, no breath and no
    terrain, with what is the same for every pair read once (issue 27: this step was a quarter of the engine's
    time): which abilities are allowed (R-ESC-11), the penalty dice of fingers and mask (R-ESC-11, R-ESC-33), the
    rage's bonus die on str while a use is left (R-ESC-14a, R-ESC-31), items, blessing and a held inspiration die
    (R-ESC-14b), each ability's row of the chance table."""
    best_num, best_slot, best_ability, best_last = -1, -1, -1, False
    body = st.tiers[j, i, BODY] >= 1
    fingers = st.tiers[j, i, FINGERS]
    n_abilities = 1 if body or fingers >= MODERATE else 3  # R-ESC-11: str only (STR is ability 0)
    fingers_penalty = 1 if fingers >= 1 else 0  # on dex checks of slots other than fingers
    mask_penalty = 1 if st.tiers[j, i, MASK] >= 1 else 0  # on every str check
    rage = 1 if has_rage(st, j, i) else 0
    pool = R.game[POOL] != 0
    items = st.chars[j, i, ITEM_BONUS]
    blessed = st.chars[j, i, BLESSED]
    sides = st.chars[j, i, INSP_DIE]
    last_slot = st.chars[j, i, LAST_SLOT]
    # the chance table's rows (no breath): str; dex on a slot other than fingers; dex on fingers and int
    row_str = chance_row(sides, blessed, False, net_dice(rage, mask_penalty, pool))
    row_dex = chance_row(sides, blessed, False, net_dice(0, fingers_penalty, pool))
    row_plain = chance_row(sides, blessed, False, net_dice(0, 0, pool))
    for s in range(N_SLOTS):
        if only_slot >= 0:
            if s != only_slot:
                continue
        elif not (R.game[GOAL + s] != 0):
            continue
        tier = st.tiers[j, i, s]
        if tier < 1 or tier >= UTTER or (body and s != BODY):  # may_struggle
            continue
        last = s == last_slot
        auto = R.tier[tier, MARK] == MARK_STAR and st.streak[j, i, s] == 1  # R-ESC-3 auto-release: 1
        base = R.tier[tier, DC] - st.acc[j, i, s] - items
        for a in range(n_abilities):
            row = row_str if a == STR else row_dex if (a == DEX and s != FINGERS) else row_plain
            num = chance(R, AUTO_ROW if auto else row, base - R.char[i, CHECK_MOD + a])
            if num > best_num or (num == best_num and last and not best_last):
                best_num, best_slot, best_ability, best_last = num, s, a, last
    return best_num, best_slot, best_ability


@leaf
def plan_struggle(R, st, j, i, sc, num, slot, ability):
    """Declares the struggle and keeps its chances for the helpers (Scratch.strug): the check as it is declared,
    blessing, breath, rage, terrain and a held inspiration die included, a `*` auto-release counting as 1
    (R-ESC-20, R-ESC-37)."""
    plan = sc.plan
    # R-ESC-14 / R-ESC-31: a monk spends a breath point when the probability is below 1/2
    breath = (R.char[i, IS_MONK] != 0) and st.chars[j, i, BREATH] > 0 and 2 * num < DENOM
    set_action(plan, i, STRUGGLE, slot, ability, -1, -1, breath)
    # R-ESC-14a / R-ESC-31: favoured terrain likewise; rage on every str check while a use is left
    terrain = st.chars[j, i, TERRAIN] > 0 and 2 * num < DENOM
    rage = has_rage(st, j, i) and ability == STR
    plan[i, P_TERRAIN] = 1 if terrain else 0
    plan[i, P_RAGE] = 1 if rage else 0
    net0 = check_net(R, st, j, i, slot, ability, False, rage)
    net1 = check_net(R, st, j, i, slot, ability, True, rage)
    if is_auto_release(R, st, j, i, slot):
        row0 = row1 = AUTO_ROW
    else:
        sides = st.chars[j, i, INSP_DIE]
        blessed = st.chars[j, i, BLESSED]
        row0 = chance_row(sides, blessed, breath, net0)
        row1 = chance_row(sides, blessed, breath, net1)
    need0 = check_need(R, st, j, i, slot, ability, 0, 0, breath, terrain)
    sc.strug[i, ST_NET0] = net0
    sc.strug[i, ST_NET1] = net1
    sc.strug[i, ST_ROW0] = row0
    sc.strug[i, ST_ROW1] = row1
    sc.strug[i, ST_NEED0] = need0
    sc.strug[i, ST_OWN] = chance(R, row0, need0)


@leaf
def plan_recover(R, st, j, i, plan):
    """R-ESC-20 step 0 (R-ESC-14b): with a channel or ki use and composure at most the largest damage it can
    take this round (harness and stimulus at their maximum rolls), recover."""
    channel = st.chars[j, i, CHANNEL_LEFT] > 0
    if not channel and st.chars[j, i, KI] <= 0:
        return False
    danger = R.char[i, STIMULUS_MAX]
    if st.tiers[j, i, HARNESS] >= 1:
        danger += R.char[i, HARNESS_MAX]
    if st.chars[j, i, COMPOSURE] > danger:
        return False
    set_action(plan, i, CHANNEL if channel else MEDITATE, -1, -1, -1, -1, False)
    return True


@leaf
def highest_own_goal(R, st, j, i, need_item):
    """The own goal slot of highest tier (ties: slot order), optionally only those a held item covers."""
    best, best_tier = -1, 0
    for s in range(N_SLOTS):
        t = st.tiers[j, i, s]
        if (R.game[GOAL + s] != 0) and t > best_tier and (not need_item or item_for(R, st, j, i, t) >= 0):
            best, best_tier = s, t
    return best


@leaf
def highest_teammate(R, st, j, i, need_item):
    """(teammate, slot) of highest tier (party order, then slot order), optionally only item-covered."""
    best_c, best_s, best_tier = -1, -1, 0
    for c in range(R.game[N_CHARS]):
        if c == i:
            continue
        for s in range(N_SLOTS):
            t = st.tiers[j, c, s]
            better = t > best_tier and (not need_item or item_for(R, st, j, i, t) >= 0)
            best_c = c if better else best_c  # selects, not branches: the tiers are random
            best_s = s if better else best_s
            best_tier = t if better else best_tier
    return best_c, best_s


@rule
def plan_own(R, st, j, i, sc):
    """Greedy steps 0-3 with the item steps (R-ESC-20, R-ESC-31); False means 'help or rest'."""
    plan = sc.plan
    if plan_recover(R, st, j, i, plan):  # step 0
        return True
    if can_untie_self(R, st, j, i):  # step 1
        own = highest_own_goal(R, st, j, i, False)
        if own >= 0:
            set_action(plan, i, UNTIE, own, -1, i, -1, False)
            return True
    if holds_items(R, st, j, i):  # after step 1: a release item on itself
        s = highest_own_goal(R, st, j, i, True)
        if s >= 0:
            set_action(plan, i, USE_ITEM, s, -1, i, item_for(R, st, j, i, st.tiers[j, i, s]), False)
            return True
    num, slot, ability = best_struggle(R, st, j, i, -1)  # step 2
    if slot >= 0:
        plan_struggle(R, st, j, i, sc, num, slot, ability)
        return True
    if can_untie_other(R, st, j, i):  # step 3
        c, s = highest_teammate(R, st, j, i, False)
        if c >= 0:
            set_action(plan, i, UNTIE, s, -1, c, -1, False)
            return True
    if holds_items(R, st, j, i) and can_help_physically(st, j, i):  # after step 3: an item on a teammate
        c, s = highest_teammate(R, st, j, i, True)
        if c >= 0:
            set_action(plan, i, USE_ITEM, s, -1, c, item_for(R, st, j, i, st.tiers[j, c, s]), False)
            return True
    return False


@leaf
def helped_chance(R, sc, c, assisted, bonus):
    """P(success) over DENOM of c's declared struggle with an assist or not and guide + mage hand ``bonus``
    (R-ESC-8, R-ESC-9, R-ESC-14)."""
    return chance(R, sc.strug[c, ST_ROW1 if assisted else ST_ROW0], sc.strug[c, ST_NEED0] - bonus)


@leaf
def lowest_struggler(R, st, j, i, sc, guidable_only, without_die):
    """The struggling teammate with the lowest declared success probability (ties: party order); optionally
    only those that can be guided (heard), and only those holding no inspiration die."""
    plan = sc.plan
    best, best_num = -1, 0
    for c in range(R.game[N_CHARS]):
        if c == i or plan[c, P_KIND] != STRUGGLE:
            continue
        if guidable_only and not can_be_guided(st, j, c):
            continue
        if without_die and st.chars[j, c, INSP_DIE] != 0:
            continue
        num = sc.strug[c, ST_OWN]
        if best < 0 or num < best_num:
            best, best_num = c, num
    return best


@leaf
def others_bound(R, st, j, i):
    for c in range(R.game[N_CHARS]):
        if c != i and not goal_done(R, st, j, c):
            return True
    return False


@rule
def plan_help(R, st, j, i, sc):
    """Greedy steps 4-6 (R-ESC-20, R-ESC-31), once every struggle is declared."""
    plan = sc.plan
    target = lowest_struggler(R, st, j, i, sc, False, False)
    if target >= 0 and can_assist(R, st, j, i):  # step 4: assist
        set_action(plan, i, ASSIST, -1, -1, target, -1, False)
        return
    if can_guide(st, j, i):  # else guide
        target = lowest_struggler(R, st, j, i, sc, True, False)
        if target >= 0:
            set_action(plan, i, GUIDE, -1, -1, target, -1, False)
            return
    if can_inspire(st, j, i):  # else inspire a struggling teammate that holds no die (R-ESC-14b)
        target = lowest_struggler(R, st, j, i, sc, True, True)
        if target >= 0:
            set_action(plan, i, INSPIRE, -1, -1, target, -1, False)
            return
    if can_bless(R, st, j, i) and others_bound(R, st, j, i):  # else bless
        set_action(plan, i, BLESS, -1, -1, -1, -1, False)
        return
    if can_search(R, st, j, i):  # step 5
        set_action(plan, i, SEARCH, -1, -1, -1, -1, False)
        return
    set_action(plan, i, REST, -1, -1, -1, -1, False)  # step 6


@leaf
def plan_arms_and_fingers(R, st, j, i, sc):
    """`arms_first`: a character without free hands struggles its arms while bound and it may, then its
    fingers (R-ESC-31 tie rules within the slot); otherwise it plays greedy. Greedy step 0 comes first."""
    if plan_recover(R, st, j, i, sc.plan) or can_untie_self(R, st, j, i):
        return
    for slot in (ARMS, FINGERS):
        if st.tiers[j, i, slot] > 0:
            num, s, a = best_struggle(R, st, j, i, slot)
            if s >= 0:
                plan_struggle(R, st, j, i, sc, num, s, a)
                return


@leaf
def plan_attention(R, st, j, plan):
    """Attention the plan draws this round, per_round excluded (R-ESC-9a, R-ESC-10b; R-ESC-10c with the legs at
    the start of the round)."""
    total = 0
    for i in range(R.game[N_CHARS]):
        kind = plan[i, P_KIND]
        total += legs_attention(R, st, j, i, kind, plan[i, P_TARGET])
        if kind == ASSIST:
            total += R.game[ATT_ASSIST]
        elif kind == GUIDE or kind == INSPIRE:  # an inspire draws attention.guide (R-ESC-14b)
            total += R.game[ATT_GUIDE]
        elif (kind == UNTIE or kind == USE_ITEM) and plan[i, P_TARGET] != i:
            total += R.game[ATT_ASSIST]
        elif kind == SEARCH:
            total += R.game[ATT_SEARCH]
    return total


@leaf
def add_planned_help(R, st, j, sc, k):
    """k's assist or guide joins the help planned for its target (R-ESC-8: assisted; R-ESC-9: the largest guide;
    R-ESC-14 mage hand: the largest), and the target's chance with it is weighed again."""
    kind = sc.plan[k, P_KIND]
    c = sc.plan[k, P_TARGET]
    if (kind != ASSIST and kind != GUIDE) or c == k:
        return
    strug = sc.strug
    strug[c, ST_HELPED] = 1
    if kind == ASSIST:
        strug[c, ST_ASSISTED] = 1
        strug[c, ST_MAGE] = max(strug[c, ST_MAGE], mage_hand_bonus(R, st, j, k))
    else:
        strug[c, ST_GUIDE] = max(strug[c, ST_GUIDE], R.char[k, GUIDE_BONUS])
    strug[c, ST_BEFORE] = helped_chance(R, sc, c, strug[c, ST_ASSISTED] != 0, strug[c, ST_GUIDE] + strug[c, ST_MAGE])


@rule
def team_pass(R, st, j, sc, rnd):
    """R-ESC-21 / R-ESC-37 team, after the greedy plan: one pass in party order where a struggler
    without planned help switches to the help of largest exact gain if it strictly exceeds its own
    probability and the attention guard allows it. The help planned for each struggler, and its chance with
    it, are kept in Scratch.strug and updated at each switch."""
    C = R.game[N_CHARS]
    plan = sc.plan
    strug = sc.strug
    for c in range(C):
        strug[c, ST_HELPED] = 0
        strug[c, ST_ASSISTED] = 0
        strug[c, ST_GUIDE] = 0
        strug[c, ST_MAGE] = 0
        strug[c, ST_BEFORE] = strug[c, ST_OWN]
    for k in range(C):
        add_planned_help(R, st, j, sc, k)
    for i in range(C):
        if plan[i, P_KIND] != STRUGGLE or strug[i, ST_HELPED] != 0:
            continue
        p_i = strug[i, ST_OWN]  # as greedy planned it: breath and blessing, no help
        may_assist = can_assist(R, st, j, i)
        may_guide = can_guide(st, j, i)
        my_mage = mage_hand_bonus(R, st, j, i)
        my_guide = R.char[i, GUIDE_BONUS]
        best_gain, best_kind, best_target = -1, NONE, -1
        for c in range(C):
            if c == i or plan[c, P_KIND] != STRUGGLE:
                continue
            assisted = strug[c, ST_ASSISTED] != 0
            guide = strug[c, ST_GUIDE]
            mage = strug[c, ST_MAGE]
            before = strug[c, ST_BEFORE]
            if may_assist:
                gain = helped_chance(R, sc, c, True, guide + max(mage, my_mage)) - before
                if gain > best_gain:
                    best_gain, best_kind, best_target = gain, ASSIST, c
            if may_guide and can_be_guided(st, j, c):
                gain = helped_chance(R, sc, c, assisted, max(guide, my_guide) + mage) - before
                if gain > best_gain:
                    best_gain, best_kind, best_target = gain, GUIDE, c
        if best_kind == NONE or best_gain <= p_i:
            continue
        if R.game[ATTENTION_LIMIT]:  # the attention guard of R-ESC-37
            cost = R.game[ATT_ASSIST] if best_kind == ASSIST else R.game[ATT_GUIDE]
            cost += legs_attention(R, st, j, i, best_kind, best_target)  # R-ESC-10c: an assist with bound legs
            projected = (st.runs[j, ATTENTION] + plan_attention(R, st, j, plan) + R.game[ATT_PER_ROUND] + cost
                         + R.game[ATT_PER_ROUND] * max(0, R.game[MAX_ROUNDS] - rnd))
            if projected >= R.game[ATTENTION_LIMIT]:
                continue
        set_action(plan, i, best_kind, -1, -1, best_target, -1, False)
        add_planned_help(R, st, j, sc, i)


# =============================================================================================
# the round (R-ESC-5), one step a function


@rule
def start_round(R, st, j, sc):
    """Round number; who is dazed (R-ESC-12); a dazed character loses its blessing (R-ESC-33);
    statistics: rounds spent at the highest goal tier."""
    st.runs[j, ROUNDS] += 1
    for i in range(R.game[N_CHARS]):
        sc.counts[i] = 0
    for i in range(R.game[N_CHARS]):
        sc.dazed[i] = st.chars[j, i, DAZED_LEFT] > 0
        if sc.dazed[i]:
            st.chars[j, i, BLESSED] = 0
        if st.chars[j, i, FREED_ROUND] == 0:
            top = 0
            for s in range(N_SLOTS):
                top = max(top, st.tiers[j, i, s] if R.game[GOAL + s] != 0 else 0)
            if top > 0:
                st.tier_stats[j, i, ROUNDS_AT_TIER, top] += 1


@leaf
def declare_fixed(R, st, j, sc):
    """The declaration given in ``sc.plan`` (optimal play, issue 35): a dazed character declares nothing
    (R-ESC-12); a struggle's check as declared, with its breath, rage and terrain spends (R-ESC-4, R-ESC-14,
    R-ESC-14a), read by resolve_struggles as a policy's declaration is."""
    for i in range(R.game[N_CHARS]):
        if sc.dazed[i]:
            set_action(sc.plan, i, NONE, -1, -1, -1, -1, False)
        elif sc.plan[i, P_KIND] == STRUGGLE:
            slot, ability, rage = sc.plan[i, P_SLOT], sc.plan[i, P_ABILITY], sc.plan[i, P_RAGE] == 1
            sc.strug[i, ST_NET0] = check_net(R, st, j, i, slot, ability, False, rage)
            sc.strug[i, ST_NET1] = check_net(R, st, j, i, slot, ability, True, rage)
            sc.strug[i, ST_NEED0] = check_need(R, st, j, i, slot, ability, 0, 0, sc.plan[i, P_BREATH] == 1,
                                               sc.plan[i, P_TERRAIN] == 1)


@rule
def declare_actions(R, st, j, sc, policy):
    """R-ESC-5 step 1: simultaneous declarations, seeing only the state at the start of the round.
    greedy (R-ESC-20): own steps 1-3 for everyone, then helpers (steps 4-6) choose among the declared
    struggles; arms_first puts arms and fingers first; team (R-ESC-21) then weighs help against struggle."""
    plan = sc.plan
    if policy == FIXED:
        declare_fixed(R, st, j, sc)
        return
    for i in range(R.game[N_CHARS]):
        set_action(plan, i, NONE, -1, -1, -1, -1, False)
    for i in range(R.game[N_CHARS]):
        if sc.dazed[i]:
            continue
        if policy == ARMS_FIRST:
            plan_arms_and_fingers(R, st, j, i, sc)
        if plan[i, P_KIND] == NONE:
            plan_own(R, st, j, i, sc)
    for i in range(R.game[N_CHARS]):
        if not sc.dazed[i] and plan[i, P_KIND] == NONE:
            plan_help(R, st, j, i, sc)
    if policy == TEAM:
        team_pass(R, st, j, sc, st.runs[j, ROUNDS])


@rule
def attach_help(R, st, j, sc):
    """R-ESC-5 step 2: assists (R-ESC-8, once however many), guides (R-ESC-9, the largest), mage
    hands (R-ESC-14, the largest) attach to this round's checks; blessings to next round's.
    Returns the attention drawn (R-ESC-9a, R-ESC-10b, R-ESC-32: per_round from round 1)."""
    C = R.game[N_CHARS]
    plan = sc.plan
    for i in range(C):
        sc.flags[i, ASSISTED] = 0
        sc.flags[i, GUIDE_FLAG] = 0
        sc.flags[i, MAGE] = 0
        sc.flags[i, BLESS_NEXT] = 0
        sc.flags[i, INSPIRE_NEXT] = 0
        for k in range(C):
            sc.helpers[i, k] = False
    attention = R.game[ATT_PER_ROUND]
    for i in range(C):
        kind = plan[i, P_KIND]
        target = plan[i, P_TARGET]
        if kind == ASSIST:
            sc.flags[target, ASSISTED] = 1
            sc.flags[target, MAGE] = max(sc.flags[target, MAGE], mage_hand_bonus(R, st, j, i))
            sc.helpers[target, i] = True
            attention += R.game[ATT_ASSIST] + legs_attention(R, st, j, i, kind, target)  # R-ESC-10c
        elif kind == GUIDE:
            sc.flags[target, GUIDE_FLAG] = max(sc.flags[target, GUIDE_FLAG], R.char[i, GUIDE_BONUS])
            sc.helpers[target, i] = True
            attention += R.game[ATT_GUIDE]
        elif (kind == UNTIE or kind == USE_ITEM) and target != i:
            attention += R.game[ATT_ASSIST]  # an untie of another; an item on a teammate (docs/decisions.md)
        elif kind == SEARCH:
            attention += R.game[ATT_SEARCH]
        elif kind == BLESS:
            for c in range(C):
                if c != i:
                    sc.flags[c, BLESS_NEXT] = 1  # blessings draw no attention
        elif kind == INSPIRE:  # R-ESC-14b: a die for a later round's check; draws attention.guide
            st.chars[j, i, INSPIRE_LEFT] -= 1
            sc.flags[target, INSPIRE_NEXT] = max(sc.flags[target, INSPIRE_NEXT], R.char[i, INSPIRE_SIDES])
            attention += R.game[ATT_GUIDE]
    return attention


@leaf
def strength_of_will(R, st, j, sc, i):
    """R-ESC-14 paladin: recovers cha mod composure when it, or a target it helped, succeeds."""
    for k in range(R.game[N_CHARS]):
        if (k == i or sc.helpers[i, k]) and (R.char[k, IS_PALADIN] != 0) and st.chars[j, k, DAZED_LEFT] == 0:
            top = R.char[k, COMP_MAX] - st.chars[j, k, CRAVING_LEFT]
            st.chars[j, k, COMPOSURE] = min(st.chars[j, k, COMPOSURE] + max(0, R.char[k, CHA_MOD]), top)


@leaf
def struggle_succeeded(R, st, j, sc, i, s, tier, rage):
    """R-ESC-2: a success moves the tier (with the rage one position further, R-ESC-14a) and resets acc and
    streak (R-ESC-33); strength of will (R-ESC-14)."""
    st.chars[j, i, SUCCESSES] += 1
    st.tier_stats[j, i, SUCCESSES_AT_TIER, tier] += 1
    st.tiers[j, i, s] = R.tier[tier, BECOMES]
    if rage:  # R-ESC-14a: one more position down the ladder, never below free; the use is spent
        st.tiers[j, i, s] = max(0, st.tiers[j, i, s] - 1)
        if st.chars[j, i, RAGE] != UNLIMITED:
            st.chars[j, i, RAGE] -= 1
    st.acc[j, i, s] = 0
    st.streak[j, i, s] = 0
    strength_of_will(R, st, j, sc, i)


@rule
def resolve_struggles(R, st, j, sc, u):
    """R-ESC-5 step 3: struggles in party order (R-ESC-32); a success moves the tier (R-ESC-2) and
    resets acc and streak (R-ESC-33); a failure accumulates by the tier's mark (R-ESC-3); a streak
    breaks in a round without that struggle."""
    rnd = st.runs[j, ROUNDS]
    for i in range(R.game[N_CHARS]):
        sc.flags[i, STRUGGLED] = -1
        sc.flags[i, HARNESS_ON] = st.tiers[j, i, HARNESS] >= 1
    for i in range(R.game[N_CHARS]):
        if sc.plan[i, P_KIND] != STRUGGLE:
            continue
        s = sc.plan[i, P_SLOT]
        breath = sc.plan[i, P_BREATH] == 1
        rage = sc.plan[i, P_RAGE] == 1
        terrain = sc.plan[i, P_TERRAIN] == 1
        sc.flags[i, STRUGGLED] = s
        tier = st.tiers[j, i, s]
        net = sc.strug[i, ST_NET1 if sc.flags[i, ASSISTED] else ST_NET0]  # check_net, as declared
        need = sc.strug[i, ST_NEED0] - sc.flags[i, GUIDE_FLAG] - sc.flags[i, MAGE]  # check_need, as declared
        if breath:
            st.chars[j, i, BREATH] -= 1
        if terrain:
            st.chars[j, i, TERRAIN] -= 1  # R-ESC-14a: the use is spent on the check
        sides = st.chars[j, i, INSP_DIE]
        if sides > 0:  # R-ESC-14b: the held die, drawn first, adds to the check and restores its face
            face = roll_die(u, sc, i, sides)
            st.chars[j, i, INSP_DIE] = 0
            need -= face
            top = R.char[i, COMP_MAX] - st.chars[j, i, CRAVING_LEFT]
            st.chars[j, i, COMPOSURE] = min(st.chars[j, i, COMPOSURE] + face, top)
        success = roll_check(u, sc, i, net, need, st.chars[j, i, BLESSED], breath)
        st.chars[j, i, CHECKS] += 1
        if rnd == 1:  # statistics for the first-check advantage
            st.runs[j, FIRST_ROUND] = max(st.runs[j, FIRST_ROUND], 2 if success else 1)
        st.tier_stats[j, i, CHECKS_AT_TIER, tier] += 1
        if success:
            struggle_succeeded(R, st, j, sc, i, s, tier, rage)
            continue
        mark = R.tier[tier, MARK]
        if mark == MARK_STAR:
            if st.streak[j, i, s] == 1:  # second consecutive round: released
                st.tiers[j, i, s] = 0
                st.acc[j, i, s] = 0
                st.streak[j, i, s] = 0
                continue
        elif mark == MARK_PLUS:
            st.acc[j, i, s] += 4 if sc.flags[i, ASSISTED] else 2
        elif mark == MARK_HASH:
            st.acc[j, i, s] += 2 if sc.flags[i, ASSISTED] else 1
        elif mark == MARK_X:
            st.acc[j, i, s] += 1 if sc.flags[i, ASSISTED] else 0
        st.streak[j, i, s] += 1
    for i in range(R.game[N_CHARS]):  # R-ESC-3: streaks of restraints not struggled this round break
        st.chars[j, i, LAST_SLOT] = sc.flags[i, STRUGGLED]
        for s in range(N_SLOTS):
            kept = s == sc.flags[i, STRUGGLED]
            st.acc[j, i, s] = st.acc[j, i, s] if kept else 0
            st.streak[j, i, s] = st.streak[j, i, s] if kept else 0


@rule
def resolve_unties_and_items(R, st, j, sc):
    """R-ESC-10b unties (severe or lower removed, complete or above becomes severe) and R-ESC-10
    release items, in party order on the tier left so far (R-ESC-32). Returns the attention of R-ESC-10c drawn by
    the unties of others made with bound legs (read as each untie resolves)."""
    legs = 0
    for i in range(R.game[N_CHARS]):
        kind = sc.plan[i, P_KIND]
        if kind != UNTIE and kind != USE_ITEM:
            continue
        c, s = sc.plan[i, P_TARGET], sc.plan[i, P_SLOT]
        tier = st.tiers[j, c, s]
        if kind == UNTIE:
            legs += legs_attention(R, st, j, i, kind, c)
            if tier > 0:
                st.tiers[j, c, s] = 0 if tier <= SEVERE else SEVERE
                st.acc[j, c, s] = 0
                st.streak[j, c, s] = 0
        else:
            item = sc.plan[i, P_ITEM]
            if 1 <= tier <= R.item[item, ITEM_MAX_TIER]:  # an item aimed at a freed restraint is kept
                st.tiers[j, c, s] = 0
                st.acc[j, c, s] = 0
                st.streak[j, c, s] = 0
                st.held[j, i, item] -= 1
    return legs


@rule
def resolve_rests(R, st, j, sc, u):
    """R-ESC-10a: rest restores composure by the recovery roll, up to maximum - craving; R-ESC-14b channel and
    meditate spend a use and restore 1d6, in the same party order."""
    for i in range(R.game[N_CHARS]):
        kind = sc.plan[i, P_KIND]
        if kind == REST:
            gain = max(0, roll_dice(u, sc, i, R.dice[REST_DICE], R.char[i, REST_FIXED]))
        elif kind == CHANNEL or kind == MEDITATE:
            if kind == CHANNEL:
                st.chars[j, i, CHANNEL_LEFT] -= 1
            else:
                st.chars[j, i, KI] -= 1
            gain = max(0, roll_dice(u, sc, i, R.dice[RECOVER_DICE], R.char[i, RECOVER_FIXED]))
        else:
            continue
        top = R.char[i, COMP_MAX] - st.chars[j, i, CRAVING_LEFT]
        st.chars[j, i, COMPOSURE] = min(st.chars[j, i, COMPOSURE] + gain, top)


@rule
def resolve_searches(R, st, j, sc, u):
    """R-ESC-5 step 4 / R-ESC-10: searches in party order; a success draws one item by weight from
    those left (R-ESC-36: an empty pool finds nothing). R-ESC-10c, legs read as the search resolves: bound legs
    add tier x legs_dc to the DC, keep the items marked needs_free_legs out of the draw, and draw attention.legs
    (returned)."""
    legs = 0
    for i in range(R.game[N_CHARS]):
        if sc.plan[i, P_KIND] != SEARCH:
            continue
        legs += legs_attention(R, st, j, i, SEARCH, -1)
        bound = st.tiers[j, i, LEGS] >= 1
        need = R.game[SEARCH_DC] + st.tiers[j, i, LEGS] * R.game[SEARCH_LEGS_DC] - R.char[i, SEARCH_MOD]
        if not roll_at_least(u, sc, i, 20, need):
            continue
        any_left = False
        for k in range(R.game[N_ITEMS]):
            hidden = bound and R.item[k, ITEM_NEEDS_LEGS] != 0
            sc.weights[k] = R.weight[k] if st.item_left[j, k] != 0 and not hidden else 0.0
            any_left = any_left or sc.weights[k] > 0
        if not any_left:
            continue
        k = pick_item(u, sc, i, sc.weights)
        if st.item_left[j, k] > 0:
            st.item_left[j, k] -= 1
        st.chars[j, i, ITEMS_FOUND] += 1
        if R.item[k, ITEM_KIND] == 0:
            st.chars[j, i, ITEM_BONUS] += R.item[k, ITEM_VALUE]
        else:
            st.held[j, i, k] += 1
    return legs


@leaf
def add_attention(st, j, attention):
    """R-ESC-5 step 5 / R-ESC-9a."""
    st.runs[j, ATTENTION] += attention


@rule
def apply_composure(R, st, j, sc, u):
    """R-ESC-5 step 6: harness (R-ESC-11) and stimulus damage as one hit (R-ESC-34), craving
    (R-ESC-13), dazed rounds, inner breath and absolute focus saves (R-ESC-14, R-ESC-35), overload
    (R-ESC-12)."""
    rnd = st.runs[j, ROUNDS]
    for i in range(R.game[N_CHARS]):
        damage = 0
        if sc.flags[i, STRUGGLED] >= 0 and sc.flags[i, HARNESS_ON]:
            damage += max(0, roll_dice(u, sc, i, R.dice[HARNESS_DICE], R.char[i, HARNESS_FIXED]))
        if (R.game[HAS_STIMULUS] != 0):
            stim = max(0, roll_dice(u, sc, i, R.dice[STIMULUS_DICE], R.char[i, STIMULUS_FIXED]))
            damage += stim
            if (R.game[CRAVING] != 0):
                st.chars[j, i, CRAVING_LEFT] += stim
        top = R.char[i, COMP_MAX] - st.chars[j, i, CRAVING_LEFT]
        if st.chars[j, i, DAZED_LEFT] > 0:  # dazed: composure stays 0, damage ignored
            st.chars[j, i, DAZED_LEFT] -= 1
            if st.chars[j, i, DAZED_LEFT] == 0:
                st.chars[j, i, COMPOSURE] = max(0, top)
            continue
        if damage <= 0:
            continue
        st.chars[j, i, COMPOSURE] = max(0, st.chars[j, i, COMPOSURE] - damage)
        if st.chars[j, i, COMPOSURE] > 0 or rnd <= st.chars[j, i, IMMUNE_UNTIL]:
            continue
        if (R.char[i, IS_MONK] != 0) and st.chars[j, i, BREATH] > 0:  # inner breath save
            st.chars[j, i, BREATH] -= 1
            need = 10 + damage + st.chars[j, i, SAVE_BONUS] - R.char[i, WIS_MOD]
            st.chars[j, i, SAVE_BONUS] += 2
            if roll_at_least(u, sc, i, 20, need):
                st.chars[j, i, COMPOSURE] = max(0, top // 2)
                continue
        elif (R.char[i, IS_FOCUS] != 0):  # absolute focus
            if roll_at_least(u, sc, i, 20, 10 + damage // 2 - R.char[i, FOCUS_MOD]):
                st.chars[j, i, COMPOSURE] = min(max(0, roll_die(u, sc, i, 8) + R.char[i, FOCUS_MOD]), max(0, top))
                st.chars[j, i, IMMUNE_UNTIL] = rnd + 1
                continue
        st.chars[j, i, OVERLOADS] += 1  # overload
        st.chars[j, i, SAVE_BONUS] = 0
        if R.game[DAZED_ROUNDS] > 0:
            st.chars[j, i, DAZED_LEFT] = R.game[DAZED_ROUNDS]
        else:
            st.chars[j, i, COMPOSURE] = max(0, top)


@rule
def end_tests(R, st, j, sc):
    """R-ESC-5 step 7: blessings move to next round; caught before escaped; timeout."""
    rnd = st.runs[j, ROUNDS]
    all_free = True
    for i in range(R.game[N_CHARS]):
        st.chars[j, i, BLESSED] = sc.flags[i, BLESS_NEXT]
        if sc.flags[i, INSPIRE_NEXT] > 0 and st.chars[j, i, INSP_DIE] == 0:  # R-ESC-14b: one die at most
            st.chars[j, i, INSP_DIE] = sc.flags[i, INSPIRE_NEXT]
        done = goal_done(R, st, j, i)
        if st.chars[j, i, FREED_ROUND] == 0 and done:
            st.chars[j, i, FREED_ROUND] = rnd
        all_free = all_free and done
    if R.game[ATTENTION_LIMIT] > 0 and st.runs[j, ATTENTION] >= R.game[ATTENTION_LIMIT]:
        st.runs[j, OUTCOME] = CAUGHT
    elif all_free:
        st.runs[j, OUTCOME] = ESCAPED
    elif rnd >= R.game[MAX_ROUNDS]:
        st.runs[j, OUTCOME] = TIMEOUT


@rule
def play_round(R, st, j, sc, u, policy, plan_only):
    """One round of run ``j`` (R-ESC-5), in place; with ``plan_only``, only its declarations."""
    if plan_only:
        for i in range(R.game[N_CHARS]):
            sc.dazed[i] = st.chars[j, i, DAZED_LEFT] > 0
    else:
        start_round(R, st, j, sc)
    declare_actions(R, st, j, sc, policy)
    if plan_only:
        return
    for i in range(R.game[N_CHARS]):  # statistics: actions declared by kind
        if sc.plan[i, P_KIND] != NONE:
            st.action_counts[j, i, sc.plan[i, P_KIND]] += 1
    attention = attach_help(R, st, j, sc)
    keys = round_keys(u, j, st.runs[j, ROUNDS])  # the random numbers of this round (the layout above)
    resolve_struggles(R, st, j, sc, keys)
    attention += resolve_unties_and_items(R, st, j, sc)
    resolve_rests(R, st, j, sc, keys)
    attention += resolve_searches(R, st, j, sc, keys)
    add_attention(st, j, attention)
    apply_composure(R, st, j, sc, keys)
    end_tests(R, st, j, sc)


PLAY_RUNS, ONE_ROUND, PLAN_ONLY = 0, 1, 2


@njit(cache=True, _nrt=False, nogil=True)
def run_engine(R, st, sc, key, policy, mode, out):
    """The compiled entry point. PLAY_RUNS: play every run to its end. ONE_ROUND: one round of every
    unfinished run. PLAN_ONLY: every unfinished run's declarations into ``out``."""
    keys = (key[0], key[1])  # a tuple of two words, kept in registers (an array is re-read after every store)
    for j in range(st.runs.shape[0]):
        while st.runs[j, OUTCOME] == RUNNING:
            play_round(R, st, j, sc, keys, policy, mode == PLAN_ONLY)
            if mode == PLAN_ONLY:
                for i in range(R.game[N_CHARS]):
                    for col in range(N_PLAN):
                        out[j, i, col] = sc.plan[i, col]
            if mode != PLAY_RUNS:
                break


# =============================================================================================
# drivers

NO_PLAN = np.zeros((0, 0, N_PLAN), dtype=np.int64)
MAX_CHUNK_RUNS = 1 << 20  # the counter's run field (the layout above)


def chunk_key(rng: np.random.Generator) -> np.ndarray:
    """The 128-bit key of a chunk, drawn from its Generator (R-GEN-7)."""
    return rng.integers(0, 2**64, size=2, dtype=np.uint64)


def run_batch(p: EscapeParams, n: int, rng: np.random.Generator, policy: str = "greedy") -> Batch:
    """``n`` runs from the start, with the random numbers of the chunk whose Generator is ``rng``."""
    if n > MAX_CHUNK_RUNS:
        raise ValueError(f"at most {MAX_CHUNK_RUNS} runs in one chunk")
    st = initial_batch(p, n)
    run_engine(rules_of(p), st, new_scratch(p), chunk_key(rng),
               POLICY_CODES[policy], PLAY_RUNS, NO_PLAN)
    return st


def step(p: EscapeParams, st: Batch, key: np.ndarray, policy: str = "greedy") -> None:
    """One round of every unfinished run of ``st`` with the random numbers of chunk key ``key``."""
    run_engine(rules_of(p), st, new_scratch(p), key, POLICY_CODES[policy],
               ONE_ROUND, NO_PLAN)


def plan(p: EscapeParams, st: Batch, policy: str = "greedy") -> np.ndarray:
    """The declared actions ``(n, C, N_PLAN)`` (columns P_KIND .. P_TERRAIN) at the states of ``st``."""
    out = np.zeros((len(st.runs), p.n_chars, N_PLAN), dtype=np.int64)
    run_engine(rules_of(p), st, new_scratch(p), np.zeros(2, dtype=np.uint64),
               POLICY_CODES[policy], PLAN_ONLY, out)
    return out
