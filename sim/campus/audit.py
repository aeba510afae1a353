"""The campus kind's part of the balance audit (sim/designer/audit.py, issue 36).

Options are the choices the built-in policy (R-CAM-40) makes that a scenario can take away: rescue (R-CAM-8),
growth spending (R-CAM-9a, ``policy.growth``), each item of ``policy.buy`` and teaming up (R-CAM-9: team
membership and ``team:`` purchases). The stance choice has no switch per stance yet, so stances are not audited.
"""

from __future__ import annotations

import numpy as np

from sim.designer.audit import AuditOption, edited, setting


def _without_buy(item: str):
    def edit(data: dict) -> None:
        data["policy"]["buy"] = [b for b in data["policy"].get("buy", []) if b != item]

    return lambda scenario: edited(scenario, edit)


def _without_teams(data: dict) -> None:
    for pc in data.get("party", []):
        pc.pop("team", None)
    data["policy"]["buy"] = [b for b in data["policy"].get("buy", []) if not b.startswith("team:")]


def audit_options(scenario) -> list[AuditOption]:
    """rescue, growth, buy:ITEM (each item of the buy list) and team_up, where the scenario has them."""
    pol = scenario.policy
    out = []
    if pol.rescue:
        out.append(AuditOption("rescue", restrict=setting("policy.rescue", False)))
    if pol.growth != "none":
        out.append(AuditOption("growth", restrict=setting("policy.growth", "none")))
    out += [AuditOption(f"buy:{item}", restrict=_without_buy(item)) for item in pol.buy if not item.startswith("team:")]
    if any(getattr(pc, "team", None) for pc in _pcs(scenario)) or any(b.startswith("team:") for b in pol.buy):
        out.append(AuditOption("team_up", restrict=lambda s: edited(s, _without_teams)))
    return out


def _pcs(scenario) -> list:
    return list(scenario.party)


def audit_runs(scenario, frame, metric: str):
    """clear_rate per game (the share of its PCs cleared) and the early events: a PC captured in turn 1, a PC
    captured by turn 3 (R-CAM-41's per-turn captures)."""
    if metric != "clear_rate":
        return None
    n_pcs = sum(1 for c in frame.columns if c.startswith("pc") and c.endswith("_outcome"))
    outcome = frame["cleared"].to_numpy(dtype=float) / max(1, n_pcs)
    cap = [frame[c].to_numpy() for c in ("captures_t1", "captures_t2", "captures_t3") if c in frame.columns]
    events = {}
    if cap:
        events["a PC captured in turn 1"] = cap[0] > 0
        events["a PC captured by turn 3"] = np.sum(cap, axis=0) > 0
    return outcome, events
