"""The contract every rule system (``kind``) provides: one :class:`Kind` object per kind, and the registry shared
modules reach kinds through.

A kind is one object. Each kind package ``sim.<name>`` declares it in ``sim/<name>/kind.py`` (``KIND = Kind(...)``):
every fact and every hook the shared modules (the CLI, the pipeline, the designer tools, the reports, the studio,
the docs generator) need, so that no shared module holds a table keyed by kind name or imports a kind package.
The registry lists the built-in packages once (:data:`PACKAGES`); a kind from elsewhere (the test suite's
fifth kind) joins with :func:`register`. :func:`get` answers by name, :func:`all_kinds` in order; ``NAMES`` and
``KINDS`` are computed on each read, so a registered kind is in them.

Engines compile when their modules are imported, so a hook is usually declared as ``lazy("module:attr")``: the
module is imported when the hook is first read (any field may be given so). Reading a declared fact (a name, a
metric, a capability) imports nothing: ``python -m sim --help`` and a refusal of a flag stay fast.

Capabilities are read from the object (as scikit-learn's estimator tags): :meth:`Kind.capabilities` names the
optional hooks a kind provides, without importing them; tests/test_kind_contract.py runs one suite over every
registered kind, reading what to check from there.

(The pattern is pgx's ``Env`` and ``make``: one declared interface, one registry, one test suite run over every
member.)
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any

from sim import labels
from sim.errors import ScenarioError

#: the packages of the built-in kinds, in the order pages and docs list them (each declares ``KIND`` in kind.py)
PACKAGES = ("sim.escape", "sim.restraint", "sim.campus", "sim.formation")


class Ref:
    """``lazy("module:attr")`` (or ``lazy("module")``): a hook or value imported when first read."""

    __slots__ = ("target",)

    def __init__(self, target: str):
        self.target = target

    def load(self) -> Any:
        module, _, attr = self.target.partition(":")
        value = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            value = getattr(value, part)
        return value

    def __repr__(self) -> str:
        return f"lazy({self.target!r})"


lazy = Ref


def hooks(module: str, *names: str) -> dict[str, Ref]:
    """``{name: lazy("module:name")}`` for hooks named in their module as in :class:`Kind` (``**hooks(...)``)."""
    return {name: Ref(f"{module}:{name}") for name in names}


def _none(*args, **kwargs) -> None:
    return None


def _no_lines(*args, **kwargs) -> list:
    return []


#: the fields of the optional hooks: a kind leaves the default (None, or a function answering "none") where it has none
OPTIONAL_HOOKS = ("builtin_policies", "with_policy", "compare", "optimal", "optimal_comparison", "balance_metrics",
                  "sensitivity_parameters", "one_character", "round_limit", "rule_default", "exact_answer",
                  "rules_table", "tier_ladder", "audit_options", "audit_evaluator", "audit_runs", "audit_metric")


@dataclass(frozen=True, eq=False)
class Kind:
    """One rule system: its facts and hooks (declared in ``sim/<name>/kind.py``; docs/architecture.md)."""

    name: str
    title: str
    package: str  # the kind's package (``sim.escape``; the test kind's own)
    # -- required hooks -------------------------------------------------------------------------------------------
    scenario_model: type  # the pydantic model of its files (``kind`` a Literal of its name)
    check: Callable[[Any], None]  # cross-field checks after validation
    #: Monte Carlo: ``simulate(scenario, runs, seed, n_jobs=1, engine=..., keep_runs=...)`` -> SimulationResult
    simulate: Callable[..., Any]
    exact: Callable[..., dict]  # exact analysis (raises ExactUnsupported where it has none)
    supports_exact: Callable[[Any], bool]  # whether ``exact`` answers a given scenario
    write_report: Callable[..., Any]  # ``write_report(result, out, exact_summary=None)``: the report's path(s)
    # -- facts ------------------------------------------------------------------------------------------------------
    #: the two implementations ``simulate`` takes as ``engine=``: the scalar reference and the batch engine
    engines: tuple[str, str] = ("reference", "kernel")
    keyed_tables: tuple[str, ...] = ()  # dotted tables keyed by user-chosen names (docs show them as ``<key>``)
    time_unit: str = "round"  # the unit of the by-step curves: "round" or "turn"
    exact_budget: bool = False  # exact analysis takes ``exact --max-states/--max-branches``
    studio_keys: tuple[str, ...] = ()  # scenario keys the studio offers beside its DCs and ability scores
    studio_curve: tuple[str, str] | None = None  # the studio's by-step curve: (summary key, chart title)
    streams: bool = False  # ``simulate(keep_runs=False)`` folds chunk by chunk into an aggregate
    auto_max_states: int | None = None  # the state budget of exact analysis tried beside a simulation
    random_layout: str = "1"  # how the engine turns a seed into dice: chunks stored under another are not reused
    summary_keys: tuple[str, ...] = ()  # the keys its summary must carry (the output contract, docs/scenario-format)
    #: the metric the kind is judged by (the designer tools' default ``--metric``)
    main_metric: str = ""
    headline: tuple[str, ...] = ()  # the comparison index's and the studio's metrics, the main one first
    #: summary keys whose values are shares of all runs (a Wilson interval over ``runs`` holds)
    run_proportions: frozenset[str] = frozenset()
    #: its summary keys in words: key -> (name, unit, short name), see :data:`sim.labels.METRICS`
    metrics: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)
    metric_words: Mapping[str, str] = field(default_factory=dict)  # the class matrix's sentences ({within})
    sensitivity_patterns: tuple[str, ...] = ()  # the keys the sensitivity moves (fnmatch); () the generic ones
    default_question: str = "What is the exact answer?"  # the exact page's question without a description
    rule_prefix: str = ""  # rule IDs ``R-<prefix>-N``, written on docs/rules/<name>.md
    format_intro: str = ""  # the first line of docs/scenario-format/<name>.md
    leading_policy: str | None = None  # the [policy] field a bare ``compare --policies`` value sets
    # -- optional hooks (OPTIONAL_HOOKS: None, or a function that answers "none") ---------------------------------
    builtin_policies: tuple[str, ...] = ()  # the built-in policies ``policy.name`` chooses among (--policy NAME)
    with_policy: Callable[[Any, str], Any] | None = None  # ``--policy NAME``: the scenario under that policy
    #: ``compare`` of its own: ``compare(args) -> (title, header, rows)`` for the console (escape: paired runs)
    compare: Callable[[Any], tuple[str, list[str], list[list[str]]]] | None = None
    #: optimal play (a module: ``parse_objective``, ``compare``, ``console_lines``, ``write_optimal_report``)
    optimal: ModuleType | None = None
    #: ``optimal_comparison(scenario, max_states=)``: optimal play beside the built-in policies, or None
    optimal_comparison: Callable[..., dict | None] = _none
    balance_metrics: Callable[[Any, bool], dict] | None = None  # ``(result, replay)``; None: the generic spread
    #: ``sensitivity_parameters(scenario, data)``: the (dotted key, value) pairs to move; None: the patterns
    sensitivity_parameters: Callable[[Any, dict], list[tuple[str, int]]] | None = None
    one_character: Callable[[Any], str] | None = None  # dotted key of the one character (the class matrix)
    round_limit: Callable[[Any], int | None] = _none  # the scenario's round limit, for sentences
    rule_default: Callable[[str], Any] = _none  # the value the rules give a key the scenario leaves out
    exact_answer: Callable[[Any, dict], list[str]] = _no_lines  # extra answer lines of the exact page
    rules_table: Callable[[Any], tuple[str, str, str] | None] = _none  # the rules in effect (title, HTML, note)
    tier_ladder: Callable[[], dict[str, tuple[str, str]] | None] = _none  # the studio's ladder table
    audit_options: Callable[[Any], list] = _no_lines  # the options of play the balance audit forbids
    audit_evaluator: Callable[..., Any] | None = None  # the kind's own restricted play (escape: optimal play)
    audit_runs: Callable[[Any, Any, str], Any] = _none  # (metric per run, early events) from a run frame
    audit_metric: Callable[[Any], str | None] = _none  # the audit's metric where not the main metric
    #: ``limit_rows()``: the kind's rows of docs/limits.md, (limit, value, what happens) (sim/docs_gen.py)
    limit_rows: Callable[[], list[tuple[str, str, str]]] = _no_lines

    def __getattribute__(self, name: str) -> Any:  # a lazy field is imported when first read
        value = object.__getattribute__(self, name)
        return value.load() if type(value) is Ref else value

    def declared(self, name: str) -> Any:
        """A field as declared, without importing it (a :class:`Ref` stays a Ref)."""
        return object.__getattribute__(self, name)

    def capabilities(self) -> frozenset[str]:
        """The optional hooks this kind provides (its tags), read from the declaration: nothing is imported."""
        defaults = {f.name: f.default for f in dataclasses.fields(Kind)}
        have = {name for name in OPTIONAL_HOOKS if self.declared(name) not in (None, defaults[name], ())}
        if self.streams:
            have.add("streams")
        if self.exact_budget:
            have.add("exact_budget")
        return frozenset(have)

    # -- derived facts (issue 23: what the CLI and the studio ask instead of comparing kind names) ---------------
    @property
    def named_policies(self) -> bool:
        """``policy.name`` names a built-in policy or a ``package.module:callable``: ``--policy NAME`` replaces it."""
        return self.declared("with_policy") is not None

    @property
    def supports_optimal(self) -> bool:
        """``python -m sim optimal``: the best value over every legal choice beside each built-in policy."""
        return self.declared("optimal") is not None

    @property
    def own_compare(self) -> bool:
        """``compare`` is the kind's own comparison rather than the shared one over ``[policy]`` settings."""
        return self.declared("compare") is not None

    @property
    def module(self) -> ModuleType:
        """The kind's package (imported)."""
        return importlib.import_module(self.package)

    @property
    def info(self) -> Kind:  # the facts once kept apart from the hooks (KindInfo): now the same object
        return self


#: the fields every kind must give (the rest have defaults)
REQUIRED = tuple(f.name for f in dataclasses.fields(Kind) if f.default is dataclasses.MISSING
                 and f.default_factory is dataclasses.MISSING)

_REGISTRY: dict[str, Kind] = {}
_BUILTIN_LOADED = False


def missing(kind: Kind) -> list[str]:
    """The required hooks of ``kind`` that do not resolve (a lazy hook whose module or name is not there)."""
    lacking = []
    for name in REQUIRED:
        try:
            value = getattr(kind, name)
        except (ImportError, AttributeError):
            lacking.append(name)
            continue
        if value is None:
            lacking.append(name)
    return lacking


def _builtin() -> dict[str, Kind]:
    global _BUILTIN_LOADED
    if not _BUILTIN_LOADED:
        for package in PACKAGES:
            _add(importlib.import_module(f"{package}.kind").KIND)
        _BUILTIN_LOADED = True
    return _REGISTRY


def _add(kind: Kind) -> None:
    if not isinstance(kind, Kind):
        raise TypeError(f"expected a sim.kinds.Kind; given {type(kind).__name__}")
    known = _REGISTRY.get(kind.name)
    if known is not None and known is not kind:
        raise ValueError(f"a kind named {kind.name!r} is registered already ({known.package})")
    _REGISTRY[kind.name] = kind
    labels.add_metrics(kind.name, kind.metrics)


def register(kind: Kind) -> Kind:
    """Add a kind from outside the package (the test suite's fifth kind); the same object again is a no-op."""
    _builtin()
    _add(kind)
    return kind


def unregister(name: str) -> None:
    """Remove a kind :func:`register` added (tests)."""
    kind = _builtin().get(name)
    if kind is not None and kind.package not in PACKAGES:
        del _REGISTRY[name]
        labels.add_metrics(name, {})


def all_kinds() -> tuple[Kind, ...]:
    """Every registered kind, the built-in ones first in :data:`PACKAGES` order."""
    return tuple(_builtin().values())


def names() -> tuple[str, ...]:
    return tuple(_builtin())


def get(name: str) -> Kind:
    """The kind called ``name`` (a ScenarioError naming the registered ones where there is none)."""
    kind = _builtin().get(name)
    if kind is None:
        raise ScenarioError(f"expected one of {', '.join(names())}; given {name!r}", key="kind")
    return kind


def __getattr__(name: str) -> Any:  # NAMES and KINDS, read now (a registered kind is in them)
    if name == "NAMES":
        return names()
    if name == "KINDS":
        return MappingProxyType(dict(_builtin()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")




#: a kind package's names for the hooks of its object (``sim.restraint.write_report``, ``sim.escape.Scenario``)
PACKAGE_NAMES = {"Scenario": "scenario_model", "check_scenario": "check", "STREAMS": "streams",
                 "AUTO_MAX_STATES": "auto_max_states"} | {name: name for name in (
                     "simulate", "exact", "supports_exact", "write_report", *OPTIONAL_HOOKS)}


def lazy_exports(package: str, names: Mapping[str, str] | None = None) -> Callable[[str], Any]:
    """A kind package's ``__getattr__`` (PEP 562): ``package.simulate`` (and every name of :data:`PACKAGE_NAMES`)
    is its kind object's hook, ``package.<name>`` of ``names`` is imported from ``names[name]`` (``"module"`` or
    ``"module:attr"``), each when first read, so that importing the package (for its ``kind.py``) compiles nothing."""

    def __getattr__(attr: str) -> Any:
        target = (names or {}).get(attr)
        if target is not None:
            return Ref(target if ":" in target else f"{target}:{attr}").load()
        if attr in PACKAGE_NAMES:
            return getattr(importlib.import_module(f"{package}.kind").KIND, PACKAGE_NAMES[attr])
        raise AttributeError(f"module {package!r} has no attribute {attr!r}")

    return __getattr__


labels.add_metric_source(_builtin)  # the kinds' metric names, loaded when a label is first looked up
