"""What the shared designer tools and reports ask of the escape kind (hooks of sim/escape/kind.py):
balance metrics from the aggregate, the keys the sensitivity moves, the one character of the class matrix,
the rules' default of a tier DC, the exact page's tier question, the tier ladder table and the ladder the studio
shows beside its DC controls."""

from __future__ import annotations

from typing import Any

from sim.designer.params import with_values
from sim.errors import ExactUnsupported, ScenarioError, SimError
from sim.escape.aggregate import balance_from_aggregate
from sim.escape.exact import exact as solve_exact
from sim.escape.model import DEFAULT_BECOMES, DEFAULT_DC, MARKS, TIER_IDS
from sim.escape.optimal import compare
from sim.escape.report import dc_in_effect
from sim.escape.report import tier_ladder as ladder_table
from sim.report import fmt_exact


def balance_metrics(result, replay: bool = True) -> dict[str, Any]:
    """The escape balance metrics (sim/designer/balance.py): every escape result carries its aggregate, so no
    replay is needed."""
    return balance_from_aggregate(result.aggregate)


def sensitivity_parameters(scenario, data: dict) -> list[tuple[str, int]]:
    """The keys the sensitivity moves (sim/designer/sensitivity.py): every tier DC on the path of the party's
    restraints (each tier present and the tiers it becomes, R-ESC-2), every party member's scores, ``search.dc``
    and ``attention.limit`` where set."""

    overrides = data.get("rules", {}).get("tiers", {})

    def dc(t: int) -> int:
        return overrides.get(TIER_IDS[t], {}).get("dc", DEFAULT_DC[t])

    def becomes(t: int) -> int:
        name = overrides.get(TIER_IDS[t], {}).get("becomes")
        return TIER_IDS.index(name) if name else DEFAULT_BECOMES[t]

    present = set()
    for member in data["party"]:
        for tier in member.get("restraints", {}).values():
            t = TIER_IDS.index(tier)
            while 0 < t < 8 and t not in present:  # R-ESC-2: the utter tier (8) has no check
                present.add(t)
                t = becomes(t)
    out = [(f"rules.tiers.{TIER_IDS[t]}.dc", dc(t)) for t in sorted(present, reverse=True)]
    for i, member in enumerate(data["party"]):
        out += [(f"party.{i}.scores.{k}", v) for k, v in member["scores"].items()]
    if "search" in data:
        out.append(("search.dc", data["search"]["dc"]))
    if _is_int(data.get("attention", {}).get("limit")):
        out.append(("attention.limit", data["attention"]["limit"]))
    return out


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def one_character(scenario) -> str:
    """The class matrix's character: the party's only member."""
    if len(scenario.party) != 1:
        raise ScenarioError(f"the class matrix needs one character; this party has {len(scenario.party)}",
                            file=scenario.source, key="party")
    return "party.0"


def rule_default(key: str) -> Any:
    """``rules.tiers.<tier>.dc`` left out of the scenario: the tier ladder's DC (R-ESC-2); None for other keys."""
    parts = key.split(".")
    if len(parts) == 4 and parts[:2] == ["rules", "tiers"] and parts[3] == "dc" and parts[2] in TIER_IDS:
        return DEFAULT_DC[TIER_IDS.index(parts[2])]
    return None


def tier_ladder() -> dict[str, tuple[str, str]]:
    """The rules' tier ladder for the studio's table (R-ESC-2), every tier in ladder order: its accumulation mark
    (R-ESC-3; "" for free and utter) and the tier a successful check makes of it by default."""
    return {tier: (MARKS[t], TIER_IDS[DEFAULT_BECOMES[t]]) for t, tier in enumerate(TIER_IDS)}


def rules_table(scenario) -> tuple[str, str, str]:
    """The tier ladder in effect (R-ESC-2) for a report section: title, table, note."""
    return ("Tier ladder in effect", ladder_table(scenario),
            "DCs and what a successful escape check makes of each tier (R-ESC-2); overrides from the scenario's "
            "[rules.tiers] are highlighted.")


MAX_TIER_SECONDS = 2.0  # the tier question is answered when the scenario's own exact analysis took less


def tiers_on_the_way(scenario) -> list[str]:
    """The tiers the party must get through (R-ESC-2): each goal restraint worn at the start, then what a success
    makes of it, down to free."""
    out: list[str] = []
    for c in scenario.party:
        for slot in scenario.goal.slots:
            tier = getattr(c.restraints, slot, None)
            seen = 0
            while tier and tier != "free" and tier != "utter" and seen < len(TIER_IDS):
                if tier not in out:
                    out.append(tier)
                o = scenario.rules.tiers.get(tier)
                tier = o.becomes if o is not None and o.becomes is not None else TIER_IDS[
                    DEFAULT_BECOMES[TIER_IDS.index(tier)]]
                seen += 1
    return [t for t in TIER_IDS if t in out]


def exact_answer(scenario, exact: dict[str, Any]) -> list[str]:
    """Which tier holds the party back most, exactly: for each tier on the way, the exact escape rate if that
    tier's checks always succeeded (its DC at the lowest allowed, -100); the largest gain names it."""
    if "escape_rate" not in exact:
        return []
    engine = exact.get("exact_engine") or {}
    tiers = tiers_on_the_way(scenario)
    if not tiers or engine.get("seconds", 0.0) > MAX_TIER_SECONDS:
        return []
    base = exact["escape_rate"]
    gains = []
    for tier in tiers:
        try:
            v = solve_exact(with_values(scenario, {f"rules.tiers.{tier}.dc": -100}))["escape_rate"]
        except SimError:
            return []
        gains.append((v - base, tier, v))
    gain, tier, v = max(gains)
    if len(tiers) == 1:
        return [f"One tier stands in the way: {tier} (DC {dc_in_effect(scenario, tier)})."]
    others = ", ".join(f"{t} {100 * g:+.1f}" for g, t, _ in sorted(gains, reverse=True)[1:])
    return [f"The tier that holds the party back most: {tier} (DC {dc_in_effect(scenario, tier)}). If its checks "
            f"always succeeded the party would escape in {fmt_exact(v)} of runs instead of {fmt_exact(base)} "
            f"({100 * gain:+.1f} points; the other tiers on the way: {others} points)."]


__all__ = ["balance_from_aggregate", "balance_metrics", "exact_answer", "one_character", "rule_default",
           "rules_table", "sensitivity_parameters", "tier_ladder", "tiers_on_the_way"]


def optimal_comparison(scenario, max_states: int | None = None) -> dict | None:
    """Optimal play beside every built-in policy (sim/escape/optimal.py ``compare``: the optimal escape rate, each
    policy's exact rate and gap in points, and where each loses most), for the report's exact section; None when
    the decision problem does not fit the budget (the page then leaves the section out)."""
    try:
        return compare(scenario, max_states=max_states, worst=3)
    except ExactUnsupported:
        return None
