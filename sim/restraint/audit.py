"""The restraint kind's part of the balance audit (sim/designer/audit.py, issue 36).

The target's one policy (R-RST-30) has two class actions a scenario can take away: a ranger's favoured terrain
(R-RST-12, ``target.favoured_terrain``) and a barbarian's rage (R-RST-12, R-RST-31, ``policy.forbid = ["rage"]``:
every check is then the best one without a rage, docs/decisions.md "Forbidden class actions"). The duel is solved
exactly (sim/restraint/exact.py, which reads the same ``rages`` as both engines), so the deltas are exact.
"""

from __future__ import annotations

from sim.designer.audit_options import AuditOption, edited, setting


def _escapes(scenario) -> bool:
    """The target makes escape checks at all: a binder binds it, or it starts bound (R-RST-4)."""
    return scenario.binder is not None or any(scenario.target.restraints.as_tuple())


def _without_rage(scenario):
    def edit(data: dict) -> None:
        pol = data.setdefault("policy", {})
        pol["forbid"] = [*pol.get("forbid", []), "rage"]

    return edited(scenario, edit)


def audit_options(scenario) -> list[AuditOption]:
    """favoured_terrain (a ranger in its favoured terrain) and rage (a barbarian that may still rage)."""
    t = scenario.target
    if t.class_ == "ranger" and t.favoured_terrain:
        return [AuditOption("favoured_terrain", restrict=setting("target.favoured_terrain", False), arises=_escapes)]
    if t.class_ == "barbarian" and "rage" not in scenario.policy.forbid:
        return [AuditOption("rage", restrict=_without_rage, arises=_escapes)]
    return []


def audit_runs(scenario, frame, metric: str):
    """R-RST-13's incapacitated or arms complete by the end of the duel, per run (no early events yet)."""
    if metric != "incapacitated_or_arms_complete_by_round.last":
        return None
    done = (frame["first_incapacitated_round"].to_numpy() > 0) | (frame["first_arms_complete_round"].to_numpy() > 0)
    return done.astype(float), {}
