"""The formation kind as one object (sim/kinds.py); its hooks are imported when first read (``lazy``)."""

from __future__ import annotations

from sim.kinds import Kind, hooks, lazy

KIND = Kind(
    name="formation",
    title="ambush, front/back line targeting, armor and DP on the 2d6 dark dice",
    package="sim.formation",
    scenario_model=lazy("sim.formation.model:Scenario"),
    check=lazy("sim.formation.model:check_scenario"),
    **hooks("sim.formation.engine", "simulate", "exact", "supports_exact"),
    write_report=lazy("sim.formation.report:write_report"),
    streams=True,  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/formation/aggregate.py)
    summary_keys=("ambush_win", "ambush_win_by_2", "dp_per_session"),
    main_metric="ambush_win",
    # the skirmish's only where it runs (present_metrics drops the rest)
    headline=("ambush_win", "ambush_win_by_2", "dp_per_session", "skirmish_win_a", "skirmish_win_b",
              "skirmish_draw"),
    metrics={
        "ambush_win": ("share of ambushes that succeed", "probability", "ambush won"),
        "ambush_win_by_2": ("share of ambushes won by 2 or more", "probability", "ambush won by 2 or more"),
        "dp_per_session": ("DP earned per session", "DP", "DP per session"),
        "skirmish_win_a": ("share of skirmishes side A wins", "probability", ""),
        "skirmish_win_b": ("share of skirmishes side B wins", "probability", ""),
        "skirmish_draw": ("share of skirmishes that reach the round limit", "probability", ""),
        "skirmish_mean_rounds": ("mean skirmish rounds", "rounds", ""),
        "skirmish_mean_survivors_a": ("mean survivors of side A", "count", ""),
        "skirmish_mean_survivors_b": ("mean survivors of side B", "count", ""),
        "enslave_dp_mean": ("mean enslavement DP for side A", "DP", ""),
        "dp_per_session_sd": ("sd of the DP earned per session", "DP", ""),
        "dp_per_roll": ("DP per roll of the dark dice", "DP", ""),
        "skirmish_mean_withdrawn_a": ("mean units of side A withdrawn", "count", ""),
        "skirmish_mean_withdrawn_b": ("mean units of side B withdrawn", "count", ""),
    },
    sensitivity_patterns=("ambush.ambusher_athletics", "ambush.defender_information", "units.*.combat",
                          "units.*.evade"),
    default_question="How often does the ambush succeed, and what does a session earn?",
    rule_prefix="MDK",
    format_intro="Ambush odds, DP per session and a front/back skirmish of units "
                 "(rules: [formation](../rules/formation.md)).",
    leading_policy="name",
    **hooks("sim.formation.audit", "audit_options", "audit_runs", "audit_metric"),
    limit_rows=lazy("sim.formation.limits:limit_rows"),
)
