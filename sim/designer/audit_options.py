"""The options of play a kind lists for the balance audit (its ``audit_options`` hook) and the helpers a kind uses to
build them: a scenario with one option taken away (:func:`edited`, :func:`setting`) and the metric conditioned on
early events (:func:`conditioned`). Kept below the kinds (docs/architecture.md, layers): the audit itself
(:mod:`sim.designer.audit`) reads what the kinds declare here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim.designer.params import scenario_data
from sim.scenario import parse_scenario


@dataclass(frozen=True)
class AuditOption:
    """One option of play a kind lists for the audit (``audit_options``)."""

    option: str  # "search", "struggle:dex", "rescue", "buy:lockpick", "movement", ...
    scope: str = "party"  # "party" (everyone) or a character's name
    forbid: frozenset = frozenset()  # escape: pairs (option, character index or None) optimal play leaves out
    restrict: Callable[[Any], Any] | None = field(default=None, compare=False)  # other kinds: the scenario without
    #: other kinds: whether the option can come up in the scenario at all (None: assumed to)
    arises: Callable[[Any], bool] | None = field(default=None, compare=False)
    #: Monte Carlo: a per-run column of the kind's run frame counting the option's uses (campus:
    #: ``duels_stance_hide``); the option then arises only when some baseline run uses it
    used_in: str | None = None

    @property
    def label(self) -> str:
        return self.option if self.scope == "party" else f"{self.scope}: {self.option}"


def conditioned(outcome: np.ndarray, events: dict[str, np.ndarray]) -> list[dict]:
    """Per event: its share of the runs, the metric's mean over the runs with it and over the others."""
    rows = []
    for name, mask in events.items():
        mask = np.asarray(mask, dtype=bool)
        share = float(mask.mean()) if len(mask) else 0.0
        given = float(outcome[mask].mean()) if mask.any() else None
        other = float(outcome[~mask].mean()) if (~mask).any() else None
        rows.append({"event": name, "share": share, "rate_given": given, "rate_otherwise": other})
    return rows


def edited(scenario, edit: Callable[[dict], None]):
    """A validated copy of ``scenario`` with ``edit`` applied to its TOML mapping (for ``restrict``)."""
    data = scenario_data(scenario)
    edit(data)
    return parse_scenario(data, scenario.source)


def setting(path: str, value: Any) -> Callable[[Any], Any]:
    """``restrict``: the scenario with the dotted table key ``path`` set to ``value`` (None: left out)."""
    *tables, name = path.split(".")

    def edit(data: dict) -> None:
        for t in tables:
            data = data.setdefault(t, {})
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value

    return lambda scenario: edited(scenario, edit)
