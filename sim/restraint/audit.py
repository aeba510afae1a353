"""The restraint kind's part of the balance audit (sim/designer/audit.py, issue 36).

The target's one policy (R-RST-30) has one choice a scenario can take away: a ranger's favoured terrain
(R-RST-12). Its rages have no switch yet, so they are not audited. The duel is solved exactly (sim/restraint/
exact.py), so the deltas are exact.
"""

from __future__ import annotations

from sim.designer.audit import AuditOption, setting


def _escapes(scenario) -> bool:
    """The target makes escape checks at all: a binder binds it, or it starts bound (R-RST-4)."""
    return scenario.binder is not None or any(scenario.target.restraints.as_tuple())


def audit_options(scenario) -> list[AuditOption]:
    if scenario.target.class_ == "ranger" and scenario.target.favoured_terrain:
        return [AuditOption("favoured_terrain", restrict=setting("target.favoured_terrain", False), arises=_escapes)]
    return []


def audit_runs(scenario, frame, metric: str):
    """R-RST-13's incapacitated or arms complete by the end of the duel, per run (no early events yet)."""
    if metric != "incapacitated_or_arms_complete_by_round.last":
        return None
    done = (frame["first_incapacitated_round"].to_numpy() > 0) | (frame["first_arms_complete_round"].to_numpy() > 0)
    return done.astype(float), {}
