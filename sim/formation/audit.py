"""The formation kind's part of the balance audit (sim/designer/audit.py, issue 36).

Options are the skirmish choices the built-in policy makes that a scenario can take away: each attack type
where a unit of the ambushing side chooses among two or more (R-MDK-6; that side's units only), movement to the
better area (R-MDK-11, ``policy.movement = "best"``), a slave's withdrawal and its master's recall (R-MDK-5);
these three are policy settings of both sides. The ambush (R-MDK-12) has no choice, so the audit's metric is
the skirmish won by the ambushing side; the ambush lost is its early event.
"""

from __future__ import annotations

from sim.designer.audit_options import AuditOption, edited, setting

ATTACKS = ("melee", "ranged", "magic")


def available_attacks(scenario, unit) -> list[str]:
    """The attack types a unit chooses among (R-MDK-6, revised 2026-12: a physical attacker without an ``attacks``
    list has melee and ranged under ``rules.attack_types = "both"``)."""
    if unit.attacks:
        return list(unit.attacks)
    if scenario.rules.attack_types == "both" and unit.attack != "magic":
        return ["melee", "ranged"]
    return [unit.attack]


def _without_attack(kind: str):
    def restrict(scenario):
        def edit(data: dict) -> None:
            for unit, row in zip(scenario.units, data["units"], strict=True):
                have = available_attacks(scenario, unit)
                if unit.side == scenario.ambush.side and kind in have and len(have) > 1:
                    row["attacks"] = [a for a in have if a != kind]

        return edited(scenario, edit)

    return restrict


def audit_options(scenario) -> list[AuditOption]:
    """Each attack type some unit chooses, movement, withdrawal and recall, where the scenario has them."""
    if not (scenario.skirmish.enabled and scenario.units):
        return []
    side = scenario.ambush.side
    out = [AuditOption(a, restrict=_without_attack(a)) for a in ATTACKS
           if any(u.side == side and a in (have := available_attacks(scenario, u)) and len(have) > 1
                  for u in scenario.units)]
    if scenario.policy.movement == "best":
        out.append(AuditOption("movement", restrict=setting("policy.movement", "fixed")))
    if scenario.policy.withdraw_below is not None and any(u.slave for u in scenario.units):
        out.append(AuditOption("withdrawal", restrict=setting("policy.withdraw_below", None)))
    if scenario.policy.recall_above is not None and any(u.slave for u in scenario.units):
        out.append(AuditOption("recall", restrict=setting("policy.recall_above", None)))
    return out


def audit_metric(scenario) -> str | None:
    """The ambushing side's skirmish wins (``skirmish_win_a`` / ``_b``) where a skirmish is played."""
    if scenario.skirmish.enabled and scenario.units:
        return f"skirmish_win_{scenario.ambush.side.lower()}"
    return None


def audit_runs(scenario, frame, metric: str):
    """The skirmish won by a side per run, and the early event: the ambush lost (R-MDK-12)."""
    if metric not in ("skirmish_win_a", "skirmish_win_b") or "skirmish_winner" not in frame.columns:
        return None
    won = (frame["skirmish_winner"].astype(str) == metric[-1].upper()).to_numpy(dtype=float)
    return won, {"the ambush lost": ~frame["ambush_win"].to_numpy(dtype=bool)}
