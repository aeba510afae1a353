"""The escape kind as one object (sim/kinds.py); its hooks are imported when first read (``lazy``)."""

from __future__ import annotations

from sim.kinds import Kind, hooks, lazy

KIND = Kind(
    name="escape",
    title="a party escaping restraints in a cell, round by round",
    package="sim.escape",
    scenario_model=lazy("sim.escape.model:Scenario"),
    check=lazy("sim.escape.model:check"),
    simulate=lazy("sim.escape.simulate:simulate"),
    **hooks("sim.escape.exact", "exact", "supports_exact"),
    write_report=lazy("sim.escape.report:write_report"),
    keyed_tables=("rules.tiers",),
    exact_budget=True,
    studio_keys=("attention.limit", "attention.assist", "attention.guide", "attention.search", "attention.per_round"),
    studio_curve=("escape_by_round", "Escaped by the end of round"),
    streams=True,  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/escape/aggregate.py)
    auto_max_states=lazy("sim.escape.exact:AUTO_MAX_STATES"),
    random_layout=lazy("sim.escape.kernel:RANDOM_LAYOUT"),
    summary_keys=("escape_rate", "escape_rate_ci", "caught_rate", "timeout_rate", "mean_rounds", "escape_by_round"),
    main_metric="escape_rate",
    headline=("escape_rate", "caught_rate", "timeout_rate", "mean_rounds"),
    run_proportions=frozenset({"escape_by_round"}),
    metrics={
        "escape_rate": ("share of runs in which the party escapes", "probability", "escaped"),
        "caught_rate": ("share of runs in which the watch catches the party", "probability", "caught"),
        "timeout_rate": ("share of runs that reach the round limit", "probability", "still held at the round limit"),
        "mean_rounds": ("mean rounds to escape (escaped runs)", "rounds", "rounds to escape (escaped runs)"),
        "mean_checks": ("mean escape checks per run (party total)", "count", ""),
        "mean_overloads": ("mean overloads per run (party total)", "count", ""),
        "escape_by_round": ("escaped by the end of round {round}", "probability", "escaped by round"),
    },
    metric_words={"escape_rate": "escapes{within}"},
    default_question="How often does the party escape?",
    rule_prefix="ESC",
    format_intro="A party restrained in a cell escapes round by round (rules: [escape](../rules/escape.md)).",
    builtin_policies=lazy("sim.escape.model:BUILTIN_POLICIES"),
    with_policy=lazy("sim.escape.policy_comparison:with_policy"),
    compare=lazy("sim.escape.policy_comparison:console_compare"),
    optimal=lazy("sim.escape.optimal"),
    **hooks("sim.escape.designer", "optimal_comparison", "balance_metrics", "sensitivity_parameters",
            "one_character", "rule_default", "exact_answer", "rules_table", "tier_ladder"),
    round_limit=lambda scenario: scenario.run.max_rounds,
    **hooks("sim.escape.audit", "audit_options", "audit_evaluator"),
    limit_rows=lazy("sim.escape.limits:limit_rows"),
)
