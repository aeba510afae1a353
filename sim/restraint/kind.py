"""The restraint kind as one object (sim/kinds.py); its hooks are imported when first read (``lazy``)."""

from __future__ import annotations

from sim.kinds import Kind, hooks, lazy

#: R-RST-13's P(incapacitated or arms >= complete) at the end of the duel: the plain incapacitated share is 0
#: whenever no body restraint is in play
MAIN = "incapacitated_or_arms_complete_by_round.last"

KIND = Kind(
    name="restraint",
    title="restraints applied and escaped in combat; composure pools",
    package="sim.restraint",
    scenario_model=lazy("sim.restraint.model:Scenario"),
    check=lazy("sim.restraint.model:check_scenario"),
    **hooks("sim.restraint.simulate", "simulate", "exact", "supports_exact"),
    write_report=lazy("sim.restraint.report:write_report"),
    studio_curve=("incapacitated_or_arms_complete_by_round", "Incapacitated or arms complete by round"),
    streams=True,  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/restraint/aggregate.py)
    summary_keys=("incapacitated_by_round", "arms_complete_by_round", "mean_escape_checks", "composure_max"),
    main_metric=MAIN,
    headline=(MAIN, "arms_complete_by_round.last", "incapacitated_by_round.last", "mean_escape_checks"),
    run_proportions=frozenset({"incapacitated_by_round", "arms_complete_by_round",
                               "incapacitated_or_arms_complete_by_round", "overload_by_round"}),
    metrics={
        "incapacitated_or_arms_complete_by_round": ("target taken out (incapacitated or arms complete) by round "
                                                    "{round}", "probability", "incapacitated or arms fully bound"),
        "arms_complete_by_round": ("target's arms complete by round {round}", "probability", "arms fully bound"),
        "incapacitated_by_round": ("target incapacitated by round {round}", "probability", "incapacitated"),
        "overload_by_round": ("target overloaded by round {round}", "probability", ""),
        "escape_checks_by_round": ("escape checks in round {round}", "count", ""),
        "mean_escape_checks": ("mean escape checks per duel", "count", "escape checks per duel"),
        "mean_escape_successes": ("mean successful escape checks per duel", "count", ""),
        "mean_bindings_won": ("mean bindings won by the binder per duel", "count", ""),
        "mean_rages_left": ("mean rages left at the end", "count", ""),
        "mean_ranger_uses_left": ("mean ranger uses left at the end", "count", ""),
        "composure_max": ("target's composure maximum", "points", ""),
        "mean_recoveries": ("mean recoveries per duel", "count", ""),
        "mean_rounds_to_overload": ("mean rounds until the target overloads", "rounds", ""),
        "dazed_by_round": ("target dazed in round {round}", "probability", ""),
    },
    metric_words={MAIN: "ends incapacitated or with arms complete"},
    sensitivity_patterns=("binder.scores.*", "target.scores.*"),
    default_question="How likely is the target taken out (incapacitated or its arms complete) by the end?",
    rule_prefix="RST",
    format_intro="A binder against a target in combat, the combat effect table and composure pools "
                 "(rules: [restraint](../rules/restraint.md)).",
    leading_policy="name",
    **hooks("sim.restraint.designer", "balance_metrics", "one_character"),
    round_limit=lambda scenario: scenario.run.rounds,
    **hooks("sim.restraint.audit", "audit_options", "audit_runs"),
    limit_rows=lazy("sim.restraint.limits:limit_rows"),
)
