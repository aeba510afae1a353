"""The campus kind's part of the balance audit (sim/designer/audit.py, issue 36).

Options are the choices the built-in policy (R-CAM-40) makes that a scenario can take away: each stance
(R-CAM-1, R-CAM-40: ``policy.forbid``; the policy then takes its next best allowed stance, docs/decisions.md
"Forbidden stances"), rescue (R-CAM-8), growth spending (R-CAM-9a, ``policy.growth``), each item of
``policy.buy`` and teaming up (R-CAM-9: team membership and ``team:`` purchases). A stance arises when some PC
declared it in a confrontation of the baseline runs (the ``duels_stance_*`` columns).
"""

from __future__ import annotations

import numpy as np

from sim.campus.model import STANCES
from sim.designer.audit_options import AuditOption, edited, setting


def _forbid_stance(stance: str):
    """The scenario with ``stance`` added to ``policy.forbid`` (R-CAM-40 restricted play)."""

    def edit(data: dict) -> None:
        pol = data.setdefault("policy", {})
        pol["forbid"] = [*pol.get("forbid", []), stance]

    return lambda scenario: edited(scenario, edit)


def _without_buy(item: str):
    def edit(data: dict) -> None:
        data["policy"]["buy"] = [b for b in data["policy"].get("buy", []) if b != item]

    return lambda scenario: edited(scenario, edit)


def _without_teams(data: dict) -> None:
    for pc in data.get("party", []):
        pc.pop("team", None)
    data["policy"]["buy"] = [b for b in data["policy"].get("buy", []) if not b.startswith("team:")]


def audit_options(scenario) -> list[AuditOption]:
    """stance:S (each stance not forbidden yet, while one more can go), rescue, growth, buy:ITEM (each item of the
    buy list) and team_up, where the scenario has them."""
    pol = scenario.policy
    out = []
    if len(pol.forbid) < len(STANCES) - 1:
        out += [AuditOption(f"stance:{s}", restrict=_forbid_stance(s), used_in=f"duels_stance_{s}")
                for s in STANCES if s not in pol.forbid]
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
