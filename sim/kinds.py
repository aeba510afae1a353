"""The contract every rule system (``kind``) provides, and the registry shared modules reach kinds through.

A kind is a subpackage ``sim.<name>`` (escape, restraint, campus, formation) that exports the names of
:data:`REQUIRED` (and, where it has them, :data:`OPTIONAL`). :func:`get` imports it on first use and checks it
against the contract once, so a kind that lacks a piece fails at its first use with the missing names, not deep
inside a report. Shared modules (the CLI, the designer tools, the studio, the docs generator) ask
:class:`Kind` for what they need instead of looking attributes up on a module:

==========================  =========================================================================
``scenario_model``          the pydantic scenario model of the kind's files (``Scenario``)
``check``                   its cross-field checks after validation (``check_scenario``)
``simulate``                Monte Carlo: ``simulate(scenario, runs, seed, n_jobs=1, engine=..., keep_runs=...)``
``engines``                 the two implementations ``simulate`` takes as ``engine``: the scalar reference
                            and the batch engine, which agree run for run on the same seed
``exact``                   exact analysis where the kind has one (``ExactUnsupported`` where not)
``supports_exact``          whether ``exact`` answers a given scenario
``write_report``            the HTML report of a result
``streams``                 whether ``simulate(keep_runs=False)`` folds chunk by chunk into an aggregate
``auto_max_states``         the state budget of exact analysis tried beside a simulation (None: no budget)
``keyed_tables``            dotted tables whose keys are names the user picks (escape: ``rules.tiers``)
``balance_metrics``         the kind's balance metrics of a result (None: the generic run-length spread)
``sensitivity_parameters``  the (key, value) pairs the sensitivity moves (None: the generic key patterns)
``one_character``           the dotted key of the scenario's one character (None: no class matrix)
``rule_default``            the value the rules give a key the scenario leaves out (None where none)
``exact_answer``            extra answer lines of the exact page ([] where none)
``rules_table``             the rules in effect as a report table (title, HTML, note), or None
``optimal_comparison``      optimal play beside the built-in policies, within the exact budget, or None
``optimal``                 ``sim.<kind>.optimal`` where ``supports_optimal``: ``python -m sim optimal``
``tier_ladder``             the rules' tier ladder the studio shows beside its DC controls, or None
``audit_options``           the options of play the balance audit forbids one at a time ([] where none)
``audit_evaluator``         the kind's own restricted play for the audit (escape: optimal play), or None
``audit_runs``              the audit's metric per run and its early events from a run frame, or None
``audit_metric``            the audit's default metric where it is not the kind's main metric, or None
==========================  =========================================================================

(The pattern is pgx's ``Env`` and ``make``: one declared interface, one registry, one test suite run over every
member: tests/test_kind_contract.py.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from sim.errors import ScenarioError

#: every module-level name a kind's package must export
REQUIRED = ("Scenario", "check_scenario", "simulate", "exact", "supports_exact", "write_report")
#: names a kind's package may export (a default is used where it does not)
OPTIONAL = ("STREAMS", "AUTO_MAX_STATES", "balance_metrics", "sensitivity_parameters", "one_character",
            "rule_default", "exact_answer", "rules_table", "optimal_comparison", "tier_ladder",
            "audit_options", "audit_evaluator", "audit_runs", "audit_metric")


@dataclass(frozen=True)
class KindInfo:
    """What is known of a kind without importing it (its engines are compiled on import)."""

    name: str
    title: str
    engines: tuple[str, str] = ("reference", "kernel")  # (scalar reference, batch engine) as ``engine=`` names
    keyed_tables: tuple[str, ...] = ()  # dotted tables keyed by user-chosen names (docs show them as ``<key>``)

    # -- what the CLI and the studio ask instead of comparing kind names (issue 23) ------------------------
    #: the unit of the by-step curves (``escape_by_round``, ``capture_by_turn``): "round" or "turn"
    time_unit: str = "round"
    #: ``policy.name`` names a built-in policy or a ``package.module:callable``: ``--policy NAME`` replaces it
    #: (run, tune) and the studio offers the built-in ones (other kinds' ``[policy]`` tables hold settings)
    named_policies: bool = False
    #: exact analysis takes a state and branch budget (``exact --max-states/--max-branches``)
    exact_budget: bool = False
    #: ``python -m sim optimal``: the best value over every legal choice beside each built-in policy
    supports_optimal: bool = False
    #: ``compare`` is the kind's own paired comparison (``sim.<kind>.policy_comparison.run_compare``) rather
    #: than the shared one over ``[policy]`` settings (``sim.designer.policy_comparison``)
    own_compare: bool = False
    #: scenario keys the studio offers as controls beside the DCs and ability scores of its sensitivity list
    studio_keys: tuple[str, ...] = ()
    #: the by-step curve of the summary the studio draws beside its answer: (summary key, chart title), or None
    studio_curve: tuple[str, str] | None = None


#: the registered kinds, in the order pages and docs list them
KINDS: dict[str, KindInfo] = {
    info.name: info
    for info in (
        KindInfo("escape", "a party escaping restraints in a cell, round by round", keyed_tables=("rules.tiers",),
                 named_policies=True, exact_budget=True, supports_optimal=True, own_compare=True,
                 studio_keys=("attention.limit", "attention.assist", "attention.guide", "attention.search",
                              "attention.per_round"),
                 studio_curve=("escape_by_round", "Escaped by the end of round")),
        KindInfo("restraint", "restraints applied and escaped in combat; composure pools",
                 studio_curve=("incapacitated_or_arms_complete_by_round", "Incapacitated or arms complete by round")),
        KindInfo("campus", "the 12-turn campus game: stances, capture, rescue, teams, growth", time_unit="turn",
                 exact_budget=True, supports_optimal=True,
                 studio_curve=("capture_by_turn", "Captured by turn (share of PC-games)")),
        KindInfo("formation", "ambush, front/back line targeting, armor and DP on the 2d6 dark dice"),
    )
}
NAMES: tuple[str, ...] = tuple(KINDS)


@dataclass(frozen=True)
class Kind:
    """One rule system as the shared modules see it (built by :func:`get`)."""

    info: KindInfo
    module: ModuleType

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def engines(self) -> tuple[str, str]:
        return self.info.engines

    @property
    def scenario_model(self) -> type:
        return self.module.Scenario

    @property
    def check(self) -> Callable[[Any], None]:
        return self.module.check_scenario

    @property
    def simulate(self) -> Callable[..., Any]:
        return self.module.simulate

    @property
    def exact(self) -> Callable[..., dict]:
        return self.module.exact

    @property
    def supports_exact(self) -> Callable[[Any], bool]:
        return self.module.supports_exact

    @property
    def write_report(self) -> Callable[..., Any]:
        return self.module.write_report

    @property
    def streams(self) -> bool:
        return bool(getattr(self.module, "STREAMS", False))

    @property
    def auto_max_states(self) -> int | None:
        return getattr(self.module, "AUTO_MAX_STATES", None)

    # -- what the CLI and the studio ask instead of comparing kind names (issue 23; facts in KindInfo) -----
    @property
    def builtin_policies(self) -> tuple[str, ...]:
        """The built-in policies ``policy.name`` chooses among (the studio's Policy control); () where the
        kind's ``[policy]`` holds settings instead (:attr:`KindInfo.named_policies`)."""
        if not self.info.named_policies:
            return ()
        return tuple(importlib.import_module(f"sim.{self.name}.model").BUILTIN_POLICIES)

    # designer and report hooks (OPTIONAL exports; the shared modules use a generic answer where one is None)

    @property
    def keyed_tables(self) -> tuple[str, ...]:
        return self.info.keyed_tables

    @property
    def balance_metrics(self) -> Callable[[Any, bool], dict] | None:
        """``balance_metrics(result, replay)``: the kind's balance metrics (sim/designer/balance.py)."""
        return getattr(self.module, "balance_metrics", None)

    @property
    def sensitivity_parameters(self) -> Callable[[Any, dict], list[tuple[str, int]]] | None:
        """``sensitivity_parameters(scenario, data)``: the (dotted key, value) pairs to move one step."""
        return getattr(self.module, "sensitivity_parameters", None)

    @property
    def one_character(self) -> Callable[[Any], str] | None:
        """``one_character(scenario)``: the dotted key of the one character the class matrix replaces
        (a ScenarioError when the scenario has not exactly one)."""
        return getattr(self.module, "one_character", None)

    @property
    def optimal(self) -> ModuleType | None:
        """The kind's optimal play (``sim.<kind>.optimal``: ``parse_objective``, ``compare``, ``console_lines``,
        ``write_optimal_report``), for ``python -m sim optimal``; None where the kind has none."""
        if not self.info.supports_optimal:
            return None
        return importlib.import_module(f"sim.{self.name}.optimal")

    def rule_default(self, key: str) -> Any:
        """The value the rules give ``key`` when the scenario leaves it out (None: the model's default)."""
        fn = getattr(self.module, "rule_default", None)
        return None if fn is None else fn(key)

    def exact_answer(self, scenario, exact: dict) -> list[str]:
        """Sentences the exact page adds to its answer (the kind's own question about the exact result)."""
        fn = getattr(self.module, "exact_answer", None)
        return [] if fn is None else list(fn(scenario, exact))

    def rules_table(self, scenario) -> tuple[str, str, str] | None:
        """The rules in effect as (section title, HTML table, note), for reports; None when the kind has none."""
        fn = getattr(self.module, "rules_table", None)
        return None if fn is None else fn(scenario)

    def optimal_comparison(self, scenario) -> dict | None:
        """Optimal play beside the built-in policies for a report's exact section, within the kind's exact
        budget; None when the kind has no optimal play or the scenario does not fit."""
        fn = getattr(self.module, "optimal_comparison", None)
        return None if fn is None else fn(scenario, max_states=self.auto_max_states)

    def tier_ladder(self) -> dict[str, tuple[str, str]] | None:
        """The rules' tier ladder (``rules.tiers.<tier>``) for the studio's table beside its DC controls: per tier,
        in ladder order, its accumulation mark and the tier a successful check makes of it by default; None when
        the kind's rules have no tier ladder."""
        fn = getattr(self.module, "tier_ladder", None)
        return None if fn is None else dict(fn())

    # -- the balance audit (issue 36, sim/designer/audit.py) -------------------------------------------------
    def audit_options(self, scenario) -> list:
        """The options of play of ``scenario`` (:class:`sim.designer.audit.AuditOption`), each once."""
        fn = getattr(self.module, "audit_options", None)
        return [] if fn is None else list(fn(scenario))

    @property
    def audit_evaluator(self) -> Callable[..., Any] | None:
        """``audit_evaluator(scenario, objective, max_states, runs=, seed=, n_jobs=)``: the kind's own restricted play
        (escape: optimal play where it fits), or None (the shared evaluation: the built-in policy with each option
        removed, exact or Monte Carlo)."""
        return getattr(self.module, "audit_evaluator", None)

    def audit_runs(self, scenario, frame, metric: str):
        """(the metric per run, {early event: per-run mask}) from a run frame, or None where the kind cannot give
        ``metric`` per run (the audit then combines the variants' intervals)."""
        fn = getattr(self.module, "audit_runs", None)
        return None if fn is None or frame is None else fn(scenario, frame, metric)

    def audit_metric(self, scenario) -> str | None:
        """The audit's default metric where options cannot move the kind's main metric (None: the main metric)."""
        fn = getattr(self.module, "audit_metric", None)
        return None if fn is None else fn(scenario)


def missing(module: ModuleType) -> list[str]:
    """The names of :data:`REQUIRED` that ``module`` does not export."""
    return [name for name in REQUIRED if not hasattr(module, name)]


@cache
def get(name: str) -> Kind:
    """The kind called ``name``, its package imported on first use and checked against the contract."""
    if name not in KINDS:
        raise ScenarioError(f"expected one of {', '.join(NAMES)}; given {name!r}", key="kind")
    try:
        module = importlib.import_module(f"sim.{name}")
    except ModuleNotFoundError as exc:  # a kind not built yet
        if exc.name == f"sim.{name}":
            raise ScenarioError(f"kind {name!r} is not implemented in this version", key="kind") from None
        raise
    lacking = missing(module)
    if lacking:
        raise TypeError(f"sim.{name} does not provide the kind contract (sim/kinds.py): lacks {', '.join(lacking)}")
    return Kind(KINDS[name], module)
