"""Tables designers read at a glance: the combat effect table (R-RST-14), the composure table
(R-RST-20, R-RST-24, R-RST-25) and the class features (R-RST-12, R-RST-23). All exact."""

from __future__ import annotations

import pandas as pd

from sim.composure import CLASS_DIE, composure_maximum, default_composure_ability
from sim.dice import ability_modifier, d20_check_probability, proficiency_bonus
from sim.restraint import rules as R
from sim.restraint.exact import expected_rounds_to_overload
from sim.restraint.model import LEVEL_NAMES, SLOTS

CLASSES = tuple(CLASS_DIE)

# R-RST-5 somatic spells: P(works) by arms level.
SOMATIC = (1.0, 1.0, 0.75, 0.5, 0.0, 0.0)
# R-RST-6 speed by legs level.
SPEED = ("normal", "normal", "half", "5 ft", "0", "0")


def attack_probability(attack_bonus: int, ac: int, net: int) -> float:
    """P(d20 + bonus >= AC) with ``net`` extra dice (a 5e attack: a natural 20 always hits, a natural 1
    always misses)."""
    if net == 0:
        hits = sum(1 for f in range(1, 21) if f == 20 or (f != 1 and f + attack_bonus >= ac))
        return hits / 20
    one = attack_probability(attack_bonus, ac, 0)
    return 1 - (1 - one) ** 2 if net > 0 else one**2


def _slot_effects(slot: int, level: int) -> dict:
    """The effects of one restraint alone (R-RST-5, R-RST-6, R-RST-7)."""
    e = {
        "str_penalty": 0, "dex_penalty": 0, "attack": 0, "attack_allowed": True, "fighter_net": 0,
        "against": 0, "somatic": 1.0, "verbal": True, "speed": "normal", "checks": "", "conditions": "",
    }
    if slot == R.ARMS:
        e["str_penalty"] = R.ARMS_STR_PENALTY[level]
        e["dex_penalty"] = R.ARMS_DEX_PENALTY[level]
        e["attack"] = -1 if level in (R.MODERATE, R.HEAVY) else 0
        e["attack_allowed"] = level < R.COMPLETE
        e["somatic"] = SOMATIC[level]
        if level == R.HEAVY:
            e["checks"] = "str checks: penalty die"
        elif level >= R.COMPLETE:
            e["checks"] = "str checks fail"
    elif slot == R.LEGS:
        e["str_penalty"] = R.LEGS_STR_PENALTY[level]
        e["dex_penalty"] = R.LEGS_DEX_PENALTY[level]
        e["speed"] = SPEED[level]
        e["against"] = 1 if level >= R.MODERATE else 0
        if level == R.HEAVY:
            e["checks"] = "dex checks: penalty die"
        elif level >= R.COMPLETE:
            e["checks"] = "dex checks fail"
    elif slot == R.GAG:
        e["verbal"] = False
        e["conditions"] = "no verbal spells"
    elif slot == R.BLINDFOLD:
        e["attack"], e["against"] = -1, 1  # 5e blinded
        e["conditions"] = "blinded"
    elif slot == R.EARPLUGS:
        e["conditions"] = "deafened"
    elif slot == R.BODY:
        e["attack_allowed"] = False  # incapacitated: no actions but escapes (R-RST-4)
        e["somatic"] = 0.0
        e["verbal"] = False
        e["conditions"] = "incapacitated"
    if slot == R.FINGERS:
        if level in (R.LIGHT, R.MODERATE):
            e["checks"] = "+4 DC on other escapes"
        elif level == R.HEAVY:
            e["checks"] = "escape checks: penalty die"
        elif level >= R.COMPLETE:
            e["checks"] = "no escape from other slots"
    if slot == R.BODY:
        e["checks"] = "+8 DC on other escapes"
    return e


def combat_effect_table(attack_bonus: int, acs: list[int]) -> pd.DataFrame:
    """R-RST-14: for each slot and level, score penalties, P(weapon attack hits AC x) with its penalty
    die, the same for a fighter's attack that ignores restraint penalties (R-RST-12), P(an attack against
    the wearer hits AC x), P(somatic spell works), verbal spells, speed, checks and conditions."""
    rows = []
    for slot, slot_name in enumerate(SLOTS):
        for level in range(1, R.N_LEVELS):
            e = _slot_effects(slot, level)
            row = {
                "slot": slot_name,
                "level": f"{level} {LEVEL_NAMES[level]}",
                "escape_dc": None if level == R.DESPAIR else (22 if slot == R.BODY else 10 + 4 * level),
                "str_penalty": e["str_penalty"],
                "dex_penalty": e["dex_penalty"],
            }
            for ac in acs:
                row[f"hit_ac{ac}"] = attack_probability(attack_bonus, ac, e["attack"]) if e["attack_allowed"] else 0.0
            for ac in acs:
                row[f"fighter_hit_ac{ac}"] = attack_probability(attack_bonus, ac, 0) if e["attack_allowed"] else 0.0
            for ac in acs:
                row[f"hit_against_ac{ac}"] = attack_probability(attack_bonus, ac, e["against"])
            row.update(
                somatic=e["somatic"], verbal=1.0 if e["verbal"] else 0.0, speed=e["speed"],
                checks=e["checks"], conditions=e["conditions"],
            )
            rows.append(row)
    df = pd.DataFrame(rows)
    df["escape_dc"] = df["escape_dc"].astype("Int64")  # despair: no DC (cannot be escaped)
    return df


def composure_table(scores: dict, levels: range = range(1, 21)) -> pd.DataFrame:
    """R-RST-24 / R-RST-25: composure maximum by class (rows) and level (columns) for one set of
    scores, each class with its default composure ability."""
    data = {cls: [composure_maximum(cls, lv, scores) for lv in levels] for cls in CLASSES}
    return pd.DataFrame.from_dict(data, orient="index", columns=list(levels))


def rounds_to_overload_table(maxima: pd.DataFrame, damage: dict[int, float]) -> pd.DataFrame:
    """R-RST-24: expected rounds until the first overload for every maximum of ``maxima``."""
    top = int(maxima.to_numpy().max())
    expected = expected_rounds_to_overload(top, damage)
    return maxima.map(lambda m: float(expected[int(m)]))


# R-RST-23 class recoveries per long rest (5e resource counts) and R-RST-12 escape features.
channel_divinity_uses = R.channel_divinity_uses  # R-RST-32 (as the escape challenge)


def bardic_die(level: int) -> int:
    return 6 if level < 5 else (8 if level < 10 else (10 if level < 15 else 12))


def class_features_table(level: int, scores: dict) -> pd.DataFrame:
    """R-RST-12 (escape features in combat) and R-RST-23 (composure recoveries) at one level."""
    prof = proficiency_bonus(level)
    mods = {a: ability_modifier(v) for a, v in scores.items()}
    rows = []
    for cls in CLASSES:
        escape, recovery, per_rest = "", "", 0.0
        if cls == "rogue":
            escape = f"+{prof} (proficiency) on every escape check"
        elif cls == "druid":
            escape = f"{max(0, mods['wis']):+d} (wis mod, only when positive: R-RST-31) on every escape check"
        elif cls == "ranger":
            escape = f"favoured terrain: +{2 * prof} on a check, {prof} uses"
        elif cls == "barbarian":
            escape = f"rage: bonus die on str checks, one extra level off; {R.rages_per_day(level)} rages"
        elif cls == "fighter":
            escape = f"{prof} weapon attacks a day ignore restraint penalties"
        elif cls == "warlock":
            escape = "add a level of restraint to itself to regain a spell slot (tabulated, not simulated)"
        if cls in ("cleric", "paladin"):
            uses = channel_divinity_uses(cls, level)
            recovery = f"channel divinity: 1d6 composure, {uses} uses"
            per_rest = 3.5 * uses
        elif cls == "bard":
            uses, die = max(1, mods["cha"]), bardic_die(level)
            recovery = f"bardic inspiration d{die}: restores its roll to the target, {uses} uses"
            per_rest = uses * (die + 1) / 2
        elif cls == "monk":
            ki = level if level >= 2 else 0
            recovery = f"1d6 composure per ki point spent, {ki} ki"
            per_rest = 3.5 * ki
        elif cls in ("wizard", "sorcerer", "artificer"):
            recovery = "absolute focus (R-ESC-14): check against overload, 1d8 + casting mod"
        rows.append(
            {
                "class": cls,
                "composure_die": f"d{CLASS_DIE[cls]}",
                "composure_ability": default_composure_ability(cls, scores),
                "escape_feature": escape,
                "recovery": recovery,
                "expected_recovery_per_rest": per_rest,
            }
        )
    return pd.DataFrame(rows)


def escape_probability_table(p: R.Params) -> pd.DataFrame:
    """P(one escape check succeeds) for a restraint alone on each slot, at each level, with the
    target's best ability (R-RST-2, R-RST-3, R-RST-30; rages counted while it has them)."""
    rows = []
    for slot, slot_name in enumerate(SLOTS):
        row = {"slot": slot_name}
        for level in range(1, R.N_LEVELS):
            levels = [0] * R.N_SLOTS
            levels[slot] = level
            if not R.escapable(slot, levels):
                row[LEVEL_NAMES[level]] = 0.0
                continue
            spec, _ = R.best_check(p, levels, slot, p.rages)
            probability = 0.0 if spec.auto_fail else d20_check_probability(spec.static, spec.dc, spec.net)
            row[LEVEL_NAMES[level]] = probability
        rows.append(row)
    return pd.DataFrame(rows)
