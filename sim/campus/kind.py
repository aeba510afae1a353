"""The campus kind as one object (sim/kinds.py); its hooks are imported when first read (``lazy``)."""

from __future__ import annotations

from sim.kinds import Kind, hooks, lazy

KIND = Kind(
    name="campus",
    title="the 12-turn campus game: stances, capture, rescue, teams, growth",
    package="sim.campus",
    scenario_model=lazy("sim.campus.model:Scenario"),
    check=lazy("sim.campus.model:check_scenario"),
    simulate=lazy("sim.campus.simulate:simulate"),
    exact=lazy("sim.campus.optimal:exact"),  # the exact engine (sim/campus/exact.py) with the solved table where asked
    supports_exact=lazy("sim.campus.exact:supports_exact"),
    write_report=lazy("sim.campus.report:write_report"),
    time_unit="turn",
    exact_budget=True,
    studio_curve=("capture_by_turn", "Captured by turn (share of PC-games)"),
    streams=True,  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/campus/aggregate.py)
    auto_max_states=lazy("sim.campus.exact:AUTO_MAX_STATES"),
    random_layout=lazy("sim.campus.params:RANDOM_LAYOUT"),
    summary_keys=("clear_rate", "party_clear_rate", "game_over_rate", "capture_by_turn", "escape_success_by_turn"),
    main_metric="clear_rate",
    headline=("clear_rate", "party_clear_rate", "game_over_rate"),
    #: game_over_rate is a mean over PCs of shares of all runs: the Wilson interval over runs is conservative
    run_proportions=frozenset({"game_over_rate"}),
    metrics={
        "clear_rate": ("share of PCs that clear the game (mean over PCs)", "probability", "PCs clearing the game"),
        "party_clear_rate": ("share of games in which every PC clears", "probability", "games the whole party clears"),
        "game_over_rate": ("share of PCs whose game is over (mean over PCs)", "probability",
                           "PCs captured (game over)"),
        "captured_at_end_rate": ("share of PCs captured at the end", "probability", ""),
        "rescues_tried_per_game": ("rescues tried per game", "count", ""),
        "rescue_success_rate": ("share of rescues that succeed", "probability", ""),
        "capture_by_turn": ("expected captures in turn {round}", "count", ""),
        "capture_hazard_by_turn": ("capture hazard in turn {round}", "probability", ""),
        "escape_success_by_turn": ("escape-check success in turn {round}", "probability", ""),
        "escape_checks_by_turn": ("escape checks per game in turn {round}", "count", ""),
    },
    sensitivity_patterns=("party.*.abilities.*", "adversaries.*.abilities.*", "missions.*.target"),
    rule_prefix="CAM",
    format_intro="The campus game: locations, adversaries and their schedule, missions, the party and its "
                 "policies (rules: [campus](../rules/campus.md)).",
    leading_policy="stance",
    optimal=lazy("sim.campus.optimal"),
    balance_metrics=lazy("sim.campus.designer:balance_metrics"),
    **hooks("sim.campus.audit", "audit_options", "audit_runs"),
    limit_rows=lazy("sim.campus.limits:limit_rows"),
)
