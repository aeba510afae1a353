"""The dice race as one kind object: registering it (``sim.kinds.register(KIND)``) is all a kind outside the
package does to join validate, run, the report, sweep, tune, compare and the contract suite."""

from __future__ import annotations

from fifth_kind import engine, model, report
from sim.kinds import Kind

KIND = Kind(
    name=model.NAME,
    title="a two-line dice race (tests only)",
    package="fifth_kind",
    scenario_model=model.Scenario,
    check=model.check_scenario,
    simulate=engine.simulate,
    exact=engine.exact,
    supports_exact=engine.supports_exact,
    write_report=report.write_report,
    engines=engine.ENGINES,
    summary_keys=("a_win_rate", "b_win_rate", "draw_rate", "mean_rounds", "a_win_by_round"),
    main_metric="a_win_rate",
    headline=("a_win_rate", "b_win_rate", "draw_rate", "mean_rounds"),
    run_proportions=frozenset({"a_win_by_round"}),
    metrics={
        "a_win_rate": ("share of races side A wins", "probability", "A wins"),
        "b_win_rate": ("share of races side B wins", "probability", "B wins"),
        "draw_rate": ("share of races drawn", "probability", "draw"),
        "a_win_by_round": ("side A has won by the end of round {round}", "probability", "A won by round"),
        "mean_total_a": ("mean total of side A at the end", "count", ""),
        "mean_total_b": ("mean total of side B at the end", "count", ""),
    },
    sensitivity_patterns=("target", "bonus"),
    default_question="How often does side A win the race?",
    leading_policy="name",
    round_limit=lambda scenario: scenario.run.max_rounds,
)
