"""Balance audit (issue 36): which options of play are dead, dominated or must be picked.

Restricted play (Jaffe et al., AIIDE 2012): the value a player loses when one option is forbidden. Each kind
lists its options once (``audit_options``, the kind contract in sim/kinds.py); each option either names what
optimal play must leave out (escape: ``forbid``, pairs of option and character read by
:func:`sim.escape.actions.forbids`) or gives the scenario without it (``restrict``: a validated copy, e.g. campus
with ``policy.rescue = false``).

- **escape**: optimal play (:func:`sim.escape.optimal.solve`) with and without each option: exact deltas.
- **other kinds**: the scenario's built-in policy with the option removed from its choices; exact where the kind
  solves every variant for the metric (restraint), else Monte Carlo with common random numbers (same runs and
  seed: run *j* of every variant reads the same dice), the standard error from the paired per-run differences.

Flags (``delta = value - value without``): ``dead`` (below ``dead``, default half a point, and the option
arises), ``must_pick`` (above ``must_pick``, default 15 points), ``dominated`` (dead on its own, but worth more
than ``dead`` once another single option B is forbidden too: B replaces every use of it at no loss; the audit
names B). A Monte Carlo delta is flagged only beyond 3 SE of the threshold. See docs/designer.md (Balance audit).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim import kinds, pipeline
from sim.designer.audit_options import AuditOption, conditioned
from sim.designer.evaluate import exact_summary, resolve_runs_seed
from sim.designer.matrix import CLASSES, _get, _variant, preset_scores
from sim.designer.metrics import half_width, main_metric, metric_value
from sim.designer.params import get_value, scenario_data
from sim.errors import ScenarioError
from sim.labels import fixed

DEAD = 0.005
MUST_PICK = 0.15
SPREAD = 0.10
SE_MARGIN = 3.0  # a Monte Carlo delta is flagged only this many SE beyond its threshold
#: metrics the player wants low (the audit's delta is then ``value without - value``: positive = the option helps)
LOWER_IS_BETTER = ("incapacitated_or_arms_complete_by_round", "incapacitated_by_round", "caught_rate",
                   "timeout_rate", "capture_by_turn", "game_over_rate", "captured_rate")


def helps(metric: str) -> float:
    """+1 where the player wants ``metric`` high, -1 where low (:data:`LOWER_IS_BETTER`)."""
    return -1.0 if metric.split("@")[0].split(".")[0] in LOWER_IS_BETTER else 1.0


@dataclass
class Audit:
    """The audit of one scenario (:func:`audit`); :meth:`as_json` is the ``--json`` shape."""

    scenario: Any
    metric: str
    method: str  # "exact" | "monte_carlo"
    baseline: float
    options: list[dict]
    classes: list[dict]
    decided_by: list[dict]
    never_arises: list[str] = field(default_factory=list)
    skipped_classes: dict[str, str] = field(default_factory=dict)  # class -> why its variant is not valid
    thresholds: dict[str, float] = field(default_factory=dict)
    engine: str = ""
    runs: int | None = None
    seed: int | None = None
    seconds: float = 0.0

    def as_json(self) -> dict:
        return {"metric": self.metric, "method": self.method, "baseline": self.baseline, "options": self.options,
                "classes": self.classes, "decided_by": self.decided_by}

    def verdicts(self) -> list[str]:
        """The answer, one sentence per flagged option ("search is dead: it gains 0.0 points")."""
        out = []
        for row in self.options:
            name = row["option"] if row["scope"] == "party" else f"{row['scope']}'s {row['option']}"
            pts = 100 * row["delta"]
            hurts = f" (the play does {fixed(-pts, 1)} points better without it)" if pts <= -0.05 else ""
            if row["flag"] == "dead":
                out.append(f"{name} is dead: it gains {fixed(pts, 1)} points{hurts}")
            elif row["flag"] == "must_pick":
                out.append(f"{name} is mandatory: without it the {self.metric} falls by {fixed(pts, 1)} points")
            elif row["flag"] == "dominated":
                out.append(f"{name} is dominated by {row['replaced_by']}: it gains {fixed(pts, 1)} points while "
                           f"{row['replaced_by']} is there{hurts}")
        return out or ["Nothing is dead or mandatory"]


# -- thresholds and options -------------------------------------------------------------------------------


def check_thresholds(dead: float, must_pick: float, spread: float) -> None:
    """Refuse thresholds out of range (one line, exit 2)."""
    for key, v in (("--dead", dead), ("--must-pick", must_pick), ("--spread", spread)):
        if not (isinstance(v, int | float) and math.isfinite(v) and 0 <= v <= 1):
            raise ScenarioError(f"expected a share from 0 to 1 (0.005 is half a point); given {v!r}", key=key)
    if dead >= must_pick:
        raise ScenarioError(f"expected --dead below --must-pick; given {dead} and {must_pick}", key="--dead")


def options_of(scenario) -> list[AuditOption]:
    """The options the scenario's kind lists for it (``audit_options``)."""
    return list(kinds.get(scenario.kind).audit_options(scenario))


def select_options(scenario, all_options: list[AuditOption], names: list[str] | None) -> list[AuditOption]:
    """The options named (by option, or ``scope: option``); an unknown name is refused with the known ones."""
    if not names:
        return all_options
    known = {o.label: o for o in all_options}
    by_option: dict[str, list[AuditOption]] = {}
    for o in all_options:
        by_option.setdefault(o.option, []).append(o)
    chosen: list[AuditOption] = []
    for name in names:
        hit = [known[name]] if name in known else by_option.get(name)
        if not hit:
            listed = ", ".join(dict.fromkeys(o.option for o in all_options)) or "none"
            raise ScenarioError(f"unknown option {name!r}; this {scenario.kind} scenario has: {listed}",
                                file=scenario.source, key="--option")
        chosen += [o for o in hit if o not in chosen]
    return chosen


# -- flags --------------------------------------------------------------------------------------------------


def _beyond(delta: float, se: float, threshold: float, above: bool) -> bool:
    margin = SE_MARGIN * se
    return delta > threshold + margin if above else delta < threshold - margin


def flag_rows(rows: list[dict], pairs: Callable[[dict], tuple[str | None, float]], dead: float,
              must_pick: float) -> None:
    """Set ``flag`` and ``replaced_by`` of each row (see the module docstring). ``pairs(row)`` gives the option
    replacing it (or None) and that option's worth once both are gone, for a row that is dead on its own."""
    for row in rows:
        delta, se = row["delta"], row["se"]
        if _beyond(delta, se, must_pick, True):
            row["flag"] = "must_pick"
        elif _beyond(delta, se, dead, False):
            by, _ = pairs(row)
            row["flag"], row["replaced_by"] = ("dominated", by) if by else ("dead", None)


# -- the audit ------------------------------------------------------------------------------------------------


def audit(scenario, *, objective: str | None = None, options: list[str] | None = None, dead: float = DEAD,
          must_pick: float = MUST_PICK, spread: float = SPREAD, runs: int | None = None, seed: int | None = None,
          n_jobs: int = 1, max_states: int | None = None, classes: bool = True) -> Audit:
    """Audit ``scenario``: each option's delta and flag, the class spread (one character) and what decided it."""
    check_thresholds(dead, must_pick, spread)
    started = time.process_time()
    chosen = select_options(scenario, options_of(scenario), options)
    exact_play = kinds.get(scenario.kind).audit_evaluator
    if exact_play is not None:  # the kind's own restricted play (escape: optimal play, exact where it fits)
        ev = exact_play(scenario, objective, max_states, runs=runs, seed=seed, n_jobs=n_jobs)
    else:
        ev = MonteCarloAudit(scenario, objective, runs, seed, n_jobs)
    rows, never = [], []
    for o in chosen:
        if not options and not getattr(ev, "audits", lambda _: True)(o):  # not covered unless named
            continue
        if not ev.arises(o):
            never.append(o.label)
            continue
        value, se = ev.value_without(o)
        rows.append({"option": o.option, "scope": o.scope, "value_without": value,
                     "delta": helps(ev.metric) * (ev.baseline - value) + 0.0,  # + 0.0: no -0.0
                     "se": se, "flag": None, "replaced_by": None})
    by_label = {o.label: o for o in chosen}
    arising = [by_label[r["option"] if r["scope"] == "party" else f"{r['scope']}: {r['option']}"] for r in rows]
    # an option the policy never uses may still replace one it uses (campus: flee, when best always fights)
    pool = arising + ([by_label[label] for label in never] if getattr(ev, "pairs_unused", False) else [])
    flag_rows(rows, lambda row: _replacement(ev, row, pool, dead), dead, must_pick)
    skipped: dict[str, str] = {}
    spread_rows = class_spread(scenario, ev, spread, skipped) if classes else []
    return Audit(scenario, ev.metric, ev.method, ev.baseline, rows, spread_rows, ev.decided_by(), never, skipped,
                 {"dead": dead, "must_pick": must_pick, "spread": spread}, ev.engine, ev.runs, ev.seed,
                 time.process_time() - started)


def _replacement(ev, row: dict, arising: list[AuditOption], dead: float) -> tuple[str | None, float]:
    """The single option B whose absence makes ``row``'s option worth more than ``dead`` (the most), or None."""
    me = next(o for o in arising if o.option == row["option"] and o.scope == row["scope"])
    best, gain = None, 0.0
    for other in arising:
        if other is me or not ev.can_pair(me, other):
            continue
        v_b, se_b = ev.value_without(other)
        v_ab, se_ab = ev.value_without_both(me, other)
        worth = helps(ev.metric) * (v_b - v_ab)
        if _beyond(worth, math.hypot(se_b, se_ab), dead, True) and worth > gain:
            best, gain = other.label, worth
    return best, gain


def class_spread(scenario, ev, spread: float, skipped: dict[str, str] | None = None) -> list[dict]:
    """One row per class (one-character scenarios): value, difference to the median class, outlier. A class whose
    variant is not a valid scenario (a ranger's favoured terrain on another class) is left out, with the reason
    in ``skipped``."""
    one = kinds.get(scenario.kind).one_character
    if one is None:
        return []
    try:
        char = one(scenario)
    except ScenarioError:
        return []

    level = int(_get(scenario, f"{char}.level"))
    variants = {}
    for c in CLASSES:
        try:
            variants[c] = _class_variant(scenario, char, c, level)
        except ScenarioError as exc:
            if skipped is not None:
                skipped[c] = exc.detail
    if not variants:
        return []
    values = {c: ev.value_of(v) for c, v in variants.items()}
    median = float(np.median([v for v, _ in values.values()]))
    return [{"class": c, "value": v, "se": se, "difference": v - median,
             "outlier": bool(abs(v - median) > spread + SE_MARGIN * se)} for c, (v, se) in values.items()]


def _class_variant(scenario, char: str, class_name: str, level: int):
    """The matrix's class variant (sim/designer/matrix.py); a switch of another class's feature that the new class
    cannot have (a ranger's ``favoured_terrain = true``, R-RST-12) is switched off rather than refused."""
    try:
        return _variant(scenario, char, class_name, level, preset_scores(class_name), {})
    except ScenarioError as exc:
        if not exc.key or get_value(scenario_data(scenario), exc.key) is not True:
            raise
        return _variant(scenario, char, class_name, level, preset_scores(class_name), {exc.key: False})


# -- Monte Carlo (and exact-of-policy) evaluation of the kinds without optimal play ---------------------------


class MonteCarloAudit:
    """The scenario's built-in policy, with and without each option: exact where the kind solves every variant for
    the metric, else simulated with common random numbers (paired per-run differences where the kind gives the
    metric per run: ``audit_runs``)."""

    #: an option the policy never uses is still a candidate replacement of a dead one (the dominated test)
    pairs_unused = True

    def __init__(self, scenario, objective: str | None, runs: int | None, seed: int | None, n_jobs: int):
        self.scenario, self.kind = scenario, kinds.get(scenario.kind)
        self.metric = objective or self.kind.audit_metric(scenario) or main_metric(scenario.kind)
        self.runs, self.seed = resolve_runs_seed(scenario, runs, seed)
        self.n_jobs = n_jobs
        self._cache: dict[str, tuple] = {}
        self._totals: dict[str, float] = {}  # the baseline runs' column sums (``used_in``)
        self.method = "exact" if self._exact(scenario) is not None else "monte_carlo"
        self.engine = "the kind's exact engine (built-in policy)" if self.method == "exact" else "Monte Carlo"
        self.baseline, self._base_se, self._base_runs, self._base_events = self._evaluate(scenario)

    def _exact(self, scenario) -> float | None:
        try:
            summary = exact_summary(scenario)
            return None if summary is None else float(metric_value(summary, self.metric))
        except (ScenarioError, KeyError, IndexError, TypeError):
            return None

    def _evaluate(self, scenario) -> tuple:
        """(value, se, per-run metric or None, events {name: per-run mask}) of a variant, computed once."""
        key = scenario.model_dump_json()
        if key not in self._cache:
            self._cache[key] = self._compute(scenario)
        return self._cache[key]

    def _compute(self, scenario) -> tuple:
        value = self._exact(scenario) if self.method == "exact" else None
        if value is not None:
            return value, 0.0, None, {}

        if self.method == "exact" and "simulated" not in self.engine:  # say so on the engine line
            self.engine += f"; variants it does not take on simulated ({self.runs:,} runs, seed {self.seed})"
        result = pipeline.run(scenario, runs=self.runs, seed=self.seed, n_jobs=self.n_jobs, exact=False).simulation
        if scenario is self.scenario:
            self._keep_totals(result.runs)
        per_run = self.kind.audit_runs(scenario, result.runs, self.metric)
        if per_run is not None:
            outcome = np.asarray(per_run[0], dtype=float)
            return float(outcome.mean()), float(outcome.std(ddof=1) / math.sqrt(len(outcome))), outcome, per_run[1]
        value = float(metric_value(result.summary, self.metric))
        return value, half_width(result.summary, self.metric) / 1.96, None, {}

    def _keep_totals(self, frame) -> None:
        self._totals = {str(c): float(v) for c, v in frame.select_dtypes("number").sum().items()}

    def arises(self, o: AuditOption) -> bool:
        if o.restrict is None or (o.arises is not None and not o.arises(self.scenario)):
            return False
        if o.used_in is None:
            return True
        if not self._totals:  # an exact baseline has no runs: the baseline simulated once, for the uses only
            self._keep_totals(pipeline.run(self.scenario, runs=self.runs, seed=self.seed, n_jobs=self.n_jobs,
                                           exact=False).simulation.runs)
        return o.used_in not in self._totals or self._totals[o.used_in] > 0

    def _paired(self, variant) -> tuple[float, float]:
        value, se, runs, _ = self._evaluate(variant)
        if runs is not None and self._base_runs is not None:
            diff = self._base_runs - runs
            return value, float(diff.std(ddof=1) / math.sqrt(len(diff)))
        return value, math.hypot(se, self._base_se)

    def value_without(self, o: AuditOption) -> tuple[float, float]:
        return self._paired(o.restrict(self.scenario))

    def can_pair(self, a: AuditOption, b: AuditOption) -> bool:
        """Whether the scenario without both is valid (campus: one stance must stay allowed)."""
        try:
            self._without_both(a, b)
        except ScenarioError:
            return False
        return True

    def _without_both(self, a: AuditOption, b: AuditOption):
        return b.restrict(a.restrict(self.scenario))

    def value_without_both(self, a: AuditOption, b: AuditOption) -> tuple[float, float]:
        return self._paired(self._without_both(a, b))

    def value_of(self, scenario) -> tuple[float, float]:
        value, se, _, _ = self._evaluate(scenario)
        return value, se

    def decided_by(self) -> list[dict]:
        if self._base_runs is None:
            return []
        return conditioned(self._base_runs, self._base_events)
