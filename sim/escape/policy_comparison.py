"""Policy comparison: one escape scenario under several policies with common random numbers.

``python -m sim compare SCENARIO --policies greedy,arms_first,team[,module:callable]`` runs the
scenario once per policy with the same seed and run count. Because run ``k`` of every policy reads
the same pre-drawn uniform blocks (R-GEN-7), the per-run outcomes are paired: the difference of
two policies is estimated from the per-run differences, whose spread is much smaller than that of
two independent estimates. The report shows each policy's headline metrics with 95% intervals, the
paired difference to the first policy with its 95% interval, how often each action was taken and
the escape-by-round curve of every policy (docs/policies.md).

Every policy runs on one engine: the vectorized kernel only if it supports every policy and counts
actions, otherwise the scalar reference (the two give identical per-run results anyway).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sim.errors import ScenarioError, SimError, one_line, shown
from sim.escape import kernel as K
from sim.escape.model import Scenario
from sim.escape.params import compile_params
from sim.escape.policy import names_code, require_code_opt_in
from sim.escape.report import tier_ladder
from sim.escape.simulate import KERNEL_POLICIES, kernel_chunk, simulate
from sim.escape.state import ACTION_KINDS
from sim.labels import fixed, format_estimate
from sim.labels import points as points_text
from sim.report import (
    answer,
    atomic_write_text,
    chart_text,
    description_block,
    details,
    fmt_pct,
    legend_outside,
    new_figure,
    save_figure,
    scenario_question,
    section,
    summary_json,
    table,
    table_html,
    write_html,
)
from sim.result import SimulationResult, provenance
from sim.scenario import load_scenario, parse_scenario, run_settings
from sim.stats import Z95, wilson_interval

DEFAULT_POLICIES = ("greedy", "arms_first", "team")
RATES = ("escape_rate", "caught_rate", "timeout_rate")
OUTCOME_CODES = {"escape_rate": K.ESCAPED, "caught_rate": K.CAUGHT, "timeout_rate": K.TIMEOUT}


def with_policy(scenario: Scenario, name: str) -> Scenario:
    """A validated copy of ``scenario`` whose ``policy.name`` is ``name`` (same source file)."""
    data = scenario.model_dump(by_alias=True, exclude_none=True)
    data["policy"] = {**data.get("policy", {}), "name": name}
    return parse_scenario(data, scenario.source)


def parse_policies(text: str) -> list[str]:
    """``"greedy,arms_first,team,pkg.mod:fn"`` -> the list of names (whitespace ignored)."""
    names = [part.strip() for part in str(text).split(",")]
    if not names or any(not n for n in names):
        raise ScenarioError(f"expected a comma-separated list of policy names; given {text!r}", key="--policies")
    return names


def _kernel_counts_actions(scenario: Scenario) -> bool:
    """Whether the vectorized kernel reports ``action_counts`` (it is being extended to)."""
    p = compile_params(with_policy(scenario, "greedy"))
    return "action_counts" in kernel_chunk(p, 1, np.random.default_rng(0))


def choose_engine(scenario: Scenario, policies: list[str]) -> str:
    """One engine for every policy: the kernel if it runs all of them and counts actions, else the reference."""
    if all(name in KERNEL_POLICIES for name in policies) and _kernel_counts_actions(scenario):
        return "kernel"
    return "reference"


@dataclass
class ComparisonResult:
    """Per-policy summaries, paired differences to the first policy, action counts."""

    scenario: Scenario
    policies: list[str]
    runs: int
    seed: int
    engine: str
    summaries: dict[str, dict[str, Any]]
    differences: dict[str, dict[str, dict[str, Any]]]  # policy -> metric -> {difference, ci, se}
    actions: dict[str, dict[str, Any]]  # policy -> {per_run, share, by_character}
    results: dict[str, SimulationResult] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        head = ("escape_rate", "escape_rate_ci", "caught_rate", "caught_rate_ci", "timeout_rate", "timeout_rate_ci",
                "mean_rounds", "mean_rounds_se", "escape_by_round", "mean_checks", "mean_overloads",
                "scenario_hash")
        return {
            "kind": "escape",
            "name": self.scenario.name,
            "runs": self.runs,
            "seed": self.seed,
            "engine": self.engine,
            "policies": list(self.policies),
            "baseline": self.policies[0],
            "summaries": {pol: {k: s[k] for k in head if k in s} for pol, s in self.summaries.items()},
            "differences": self.differences,
            "actions": self.actions,
            **{k: v for k, v in provenance(self.scenario, self.seed, self.runs).items() if k not in ("seed", "runs")},
        }


def paired_difference(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """mean(y - x) with a 95% normal interval from the per-run differences."""
    d = np.asarray(y, dtype=np.float64) - np.asarray(x, dtype=np.float64)
    n = len(d)
    mean = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else None
    ci = [mean - Z95 * se, mean + Z95 * se] if se is not None else None
    return {"difference": mean, "ci": ci, "se": se}


def paired_mean_rounds_difference(r0: np.ndarray, e0: np.ndarray, r1: np.ndarray, e1: np.ndarray) -> dict:
    """Difference of mean rounds over escaped runs (policy 1 minus policy 0), each a ratio of means.

    Its interval is the delta method on the paired runs: run k contributes
    ``(r1 - m1) e1 / P1 - (r0 - m0) e0 / P0`` (m: mean rounds of the escaped runs, P: escape rate),
    and the standard error is that influence's standard deviation over sqrt(runs)."""
    n = len(r0)
    if not e0.any() or not e1.any():
        return {"difference": None, "ci": None, "se": None}
    m0, m1 = float(r0[e0].mean()), float(r1[e1].mean())
    p0, p1 = float(e0.mean()), float(e1.mean())
    infl = (r1 - m1) * e1 / p1 - (r0 - m0) * e0 / p0
    diff = m1 - m0
    se = float(infl.std(ddof=1) / math.sqrt(n)) if n > 1 else None
    return {"difference": diff, "ci": [diff - Z95 * se, diff + Z95 * se] if se is not None else None, "se": se}


def action_summary(cols: dict[str, np.ndarray], names: tuple[str, ...]) -> dict[str, Any]:
    """Mean number of each action kind per run (party total), each kind's share of all actions,
    and the per-character means."""
    counts = cols["action_counts"].astype(np.int64)  # (n, C, kinds)
    n = counts.shape[0]
    totals = counts.sum(axis=(0, 1))
    all_actions = int(totals.sum())
    return {
        "per_run": {kind: float(totals[k] / n) for k, kind in enumerate(ACTION_KINDS)},
        "share": {kind: float(totals[k] / all_actions) if all_actions else 0.0
                  for k, kind in enumerate(ACTION_KINDS)},
        "by_character": {
            name: {kind: float(counts[:, i, k].sum() / n) for k, kind in enumerate(ACTION_KINDS)}
            for i, name in enumerate(names)
        },
    }


def compare(scenario: Scenario, policies: list[str] | None = None, runs: int | None = None, seed: int | None = None,
            n_jobs: int = 1, allow_code: bool = False) -> ComparisonResult:
    """Run ``scenario`` under each policy with common random numbers (same seed, same runs).

    ``policies`` named by the caller (the CLI's ``--policies``) are the user's own choice, so a
    ``module:callable`` among them runs without further opt-in. ``policies=None`` compares the
    built-in policies plus the scenario's own policy; if that one names code, it needs
    ``allow_code=True`` (the CLI's ``--allow-code``). The first policy is the baseline."""
    runs, seed = run_settings(scenario, runs, seed)
    if policies is None:
        own = scenario.policy.name
        require_code_opt_in(own, allow_code)
        policies = list(DEFAULT_POLICIES) + ([own] if own not in DEFAULT_POLICIES else [])
    policies = list(policies)
    if not policies:
        raise ScenarioError("expected at least one policy", key="--policies")
    for i, name in enumerate(policies):
        if name in policies[:i]:
            raise ScenarioError(f"expected each policy once; given {name!r} twice", key="--policies")
    variants = {name: with_policy(scenario, name) for name in policies}  # validates every name first
    engine = choose_engine(scenario, policies)
    results: dict[str, SimulationResult] = {}
    for name in policies:
        results[name] = simulate(variants[name], runs=runs, seed=seed, n_jobs=n_jobs, engine=engine,
                                 allow_code=True)  # named by the caller or opted in above
    return _compare_results(scenario, policies, runs, seed, engine, results)


def _compare_results(scenario, policies, runs, seed, engine, results) -> ComparisonResult:
    base = results[policies[0]].columns
    names = results[policies[0]].params.names
    differences: dict[str, dict[str, dict[str, Any]]] = {}
    for name in policies[1:]:
        cols = results[name].columns
        diff = {rate: paired_difference(base["outcome"] == code, cols["outcome"] == code)
                for rate, code in OUTCOME_CODES.items()}
        diff["mean_rounds"] = paired_mean_rounds_difference(
            base["rounds"].astype(np.float64), base["outcome"] == K.ESCAPED,
            cols["rounds"].astype(np.float64), cols["outcome"] == K.ESCAPED)
        differences[name] = diff
    actions = {name: action_summary(res.columns, names) for name, res in results.items()}
    summaries = {name: res.summary for name, res in results.items()}
    return ComparisonResult(scenario, list(policies), runs, seed, engine, summaries, differences, actions, results)


# ---------------------------------------------------------------------------------------------
# report


def _ci_text(ci) -> str:
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "–"


def _pct_ci(v, ci) -> str:
    return fmt_pct(v, ci) if v is not None else "–"


def _diff_text(d, points: bool = False) -> str:
    if d["difference"] is None:
        return "–"
    if points:  # a difference of two rates, in percentage points
        text = points_text(d["difference"], 1, signed=True)
        return text if d["ci"] is None else text + (f" ({fixed(100 * d['ci'][0], 1, True)} to "
                                                    f"{fixed(100 * d['ci'][1], 1, True)})")
    if d["ci"] is None:
        return f"{d['difference']:+.3f}"
    return f"{d['difference']:+.3f} ({d['ci'][0]:+.3f} to {d['ci'][1]:+.3f})"


def answer_block(scen, lines):
    return answer(scenario_question(scen.description, "Which policy gets the party out most often?"), lines)


def headline_table(res: ComparisonResult) -> pd.DataFrame:
    rows = []
    for name in res.policies:
        s = res.summaries[name]
        mr = s["mean_rounds"]
        se = s["mean_rounds_se"]
        rows.append({
            "policy": name,
            "escaped (95% interval)": _pct_ci(s["escape_rate"], s["escape_rate_ci"]),
            "caught (95% interval)": _pct_ci(s["caught_rate"], s["caught_rate_ci"]),
            "timeout (95% interval)": _pct_ci(s["timeout_rate"], s["timeout_rate_ci"]),
            "mean rounds, escaped runs (± 1.96 se)": "–" if mr is None else
            (f"{mr:.2f}" + (f" ± {1.96 * se:.2f}" if se is not None else "")),
        })
    return pd.DataFrame(rows)


def difference_table(res: ComparisonResult) -> pd.DataFrame:
    labels = {"escape_rate": "escape rate", "caught_rate": "caught rate", "timeout_rate": "timeout rate",
              "mean_rounds": "mean rounds (escaped runs)"}
    rows = []
    for name in res.policies[1:]:
        row: dict[str, Any] = {"policy": f"{name} − {res.policies[0]}"}
        for metric, d in res.differences[name].items():
            row[f"{labels.get(metric, metric.replace('_', ' '))} (95% interval)"] = _diff_text(d, metric in RATES)
        rows.append(row)
    return pd.DataFrame(rows)


def action_table(res: ComparisonResult) -> pd.DataFrame:
    rows = []
    for name in res.policies:
        a = res.actions[name]
        row: dict[str, Any] = {"policy": name}
        for kind in ACTION_KINDS:
            row[kind.replace("_", " ")] = f"{a['per_run'][kind]:.2f}"
        row["assist + guide share"] = f"{100 * (a['share']['assist'] + a['share']['guide']):.1f}%"
        rows.append(row)
    return pd.DataFrame(rows)


def _tier_ladder_html(scen):
    return tier_ladder(scen)


def write_compare_report(res: ComparisonResult, out_dir: Path) -> list[Path]:
    """compare.html, compare.json and escape_by_round_by_policy.png in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = res.results[res.policies[0]].params if res.results else None
    max_rounds = p.max_rounds if p is not None else len(next(iter(res.summaries.values()))["escape_by_round"])
    k = np.arange(1, max_rounds + 1)
    written = [_by_round_chart(res, k, out), _actions_chart(res, out)]
    data = res.as_dict()
    atomic_write_text(out / "compare.json", summary_json(data))
    written.append(out / "compare.json")
    scen = res.scenario
    title = f"Escape policies compared — {scen.name or scen.slug}"
    summary = {"kind": "escape", "runs": res.runs, "seed": res.seed, **provenance(scen, res.seed, res.runs)}
    written.append(write_html(out / "compare.html", title, _compare_sections(res, k), summary))
    return written


def _by_round_chart(res: ComparisonResult, k, out: Path) -> Path:
    """Escape by round, one line per policy with its 95% Wilson band."""
    fig, ax = new_figure("Escape by round, by policy", "round", "P(escaped by end of round)")
    for name in res.policies:
        curve = np.array(res.summaries[name]["escape_by_round"])
        band = np.array([wilson_interval(v * res.runs, res.runs) for v in curve])
        (line,) = ax.plot(k, curve, marker="o", label=chart_text(name))
        ax.fill_between(k, band[:, 0], band[:, 1], alpha=0.15, color=line.get_color())
    ax.set_ylim(0, 1.02)
    legend_outside(ax, title=f"policy ({res.runs:,} runs each,\n95% bands)")
    return save_figure(fig, out / "escape_by_round_by_policy.png")


def _actions_chart(res: ComparisonResult, out: Path) -> Path:
    """Mean actions per run by kind, grouped bars per policy."""
    fig, ax = new_figure("Actions taken per run, by policy", "action", "mean actions per run (party total)")
    width = 0.8 / len(res.policies)
    x = np.arange(len(ACTION_KINDS))
    for m, name in enumerate(res.policies):
        ax.bar(x + m * width, [res.actions[name]["per_run"][kind] for kind in ACTION_KINDS], width,
               label=chart_text(name))
    ax.set_xticks(x + width * (len(res.policies) - 1) / 2, [a.replace("_", " ") for a in ACTION_KINDS])
    legend_outside(ax, title="policy")
    return save_figure(fig, out / "actions_by_policy.png")


def _answer_lines(res: ComparisonResult) -> list[str]:
    """The policy with the highest escape rate, then each policy's paired difference to the first."""
    best = max(res.policies, key=lambda nm: res.summaries[nm]["escape_rate"])
    sb = res.summaries[best]
    lines = [f"Highest escape rate: {best}, {fmt_pct(sb['escape_rate'], sb['escape_rate_ci'])} of runs."]
    for name in res.policies[1:]:
        d = res.differences[name]["escape_rate"]
        if d["ci"] is not None:
            verdict = ("within noise" if d["ci"][0] <= 0 <= d["ci"][1]
                       else ("better" if d["difference"] > 0 else "worse"))
            lines.append(f"{name} vs {res.policies[0]}: {100 * d['difference']:+.1f} percentage points "
                         f"({100 * d['ci'][0]:+.1f} to {100 * d['ci'][1]:+.1f}), {verdict}.")
    return lines


def _compare_sections(res: ComparisonResult, k) -> list:
    by_round = table(["round"] + list(res.policies),
                     [[str(r)] + [fmt_pct(res.summaries[name]["escape_by_round"][i], decimals=1)
                                  for name in res.policies] for i, r in enumerate(k)])
    per_char = pd.DataFrame([
        {"policy": name, "character": who, **{kd.replace("_", " "): v for kd, v in counts.items()}}
        for name in res.policies for who, counts in res.actions[name]["by_character"].items()
    ])
    scen = res.scenario
    return [
        answer_block(scen, _answer_lines(res)),
        description_block(scen.description),
        section("Headline by policy", table_html(headline_table(res), index=False),
                note=f"Every policy ran the same {res.runs:,} runs with seed {res.seed} (common random numbers), "
                     f"engine: {res.engine}. Intervals are 95% Wilson intervals."),
        section("Tier ladder in effect", _tier_ladder_html(scen),
                note="DCs and what a successful escape check makes of each tier (R-ESC-2), the same for every "
                     "policy."),
        section(f"Paired difference to {res.policies[0]}",
                table_html(difference_table(res), index=False) if len(res.policies) > 1 else "",
                note="Differences and their 95% intervals come from the per-run differences of the paired runs "
                     "(run k of every policy reads the same dice). Mean rounds is over escaped runs; its interval "
                     "is the delta method on the paired runs."),
        section("Escape by round", details("Table: escaped by the end of each round, by policy", by_round),
                image="escape_by_round_by_policy.png",
                alt="Line chart: share of runs escaped by the end of each round, one line per policy"),
        section("Actions taken (mean per run, party total)", table_html(action_table(res), index=False),
                image="actions_by_policy.png", alt="Grouped bars: mean actions per run by kind, per policy",
                note="Actions declared by characters that were not dazed; assist and guide are teamwork."),
        section("Actions by character (mean per run)", table_html(per_char, float_format="{:.2f}", index=False),
                folded=True),
    ]


# ---------------------------------------------------------------------------------------------
# command line (wired into sim/cli.py as ``python -m sim compare``; its arguments are sim.cli's)


def main_compare(args) -> int:
    """``python -m sim compare``: ``args`` has scenario, policies, runs, seed, jobs, out, allow_code, quiet."""
    res, out = run_compare(args)
    if not getattr(args, "quiet", False):
        for name in res.policies:
            s = res.summaries[name]
            line = f"{name}: escape {s['escape_rate']:.4f} {_ci_text(s['escape_rate_ci'])}"
            if name in res.differences:
                d = res.differences[name]["escape_rate"]
                line += f"; vs {res.policies[0]} {d['difference']:+.4f} {_ci_text(d['ci'])}"
            a = res.actions[name]["per_run"]
            line += f"; assists {a['assist']:.2f}, guides {a['guide']:.2f} per run"
            print(line, file=sys.stderr)
        print(shown(f"wrote {out}/compare.html"), file=sys.stderr)
    return 0


def _default_policies(scenario, allow_code: bool) -> list[str]:
    """The built-in policies and the scenario's own (issue 28: never dropped silently). Its own policy naming
    code runs only with --allow-code; without it, it is left out and a line on stderr says so and why."""
    own = scenario.policy.name
    policies = list(DEFAULT_POLICIES)
    if own in policies:
        return policies
    if names_code(own) and not allow_code:
        print(one_line(f"note: {scenario.source}: the scenario's own policy {own!r} names Python code, so it is left "
                       "out of the comparison; add --allow-code to include it (importing it runs that code)"),
              file=sys.stderr)
        return policies
    return [*policies, own]


def console_compare(args) -> tuple[str, list[str], list[list[str]]]:
    """``python -m sim compare`` for escape (the kind's ``compare`` hook, sim/escape/kind.py): the comparison run
    and written, then its console table: (title, header, rows), each policy's escape rate, its paired difference
    to the first and its assists and guides per run."""
    res, _ = run_compare(args)
    rows = []
    for name in res.policies:
        s = res.summaries[name]
        lo, hi = s["escape_rate_ci"]
        d = res.differences.get(name, {}).get("escape_rate")
        diff = "baseline" if d is None else (
            format_estimate(d["difference"], *(d["ci"] or [math.nan, math.nan]), percent=True).replace("%", " pts"))
        a = res.actions[name]["per_run"]
        rows.append([name, format_estimate(s["escape_rate"], lo, hi), diff, f"{a['assist']:.2f} / {a['guide']:.2f}"])
    title = f"{res.scenario.name or res.scenario.slug}: {res.runs:,} runs per policy, seed {res.seed}"
    return title, ["policy", "escaped [95%]", f"vs {res.policies[0]} (paired)", "assists / guides per run"], rows


def run_compare(args) -> tuple[ComparisonResult, Path]:
    """Validate ``args``, compare and write the report; returns the result and the output folder."""
    jobs = getattr(args, "jobs", 1)
    if jobs == 0 or jobs < -1:
        raise SimError(f"--jobs: expected -1 or an integer >= 1, got {jobs}")
    scenario = load_scenario(args.scenario)
    try:
        policies = parse_policies(args.policies) if args.policies else _default_policies(
            scenario, getattr(args, "allow_code", False))
        res = compare(scenario, policies, runs=args.runs, seed=args.seed, n_jobs=jobs,
                      allow_code=getattr(args, "allow_code", False))
    except ScenarioError as exc:
        if exc.file is None:
            raise ScenarioError(exc.detail, file=scenario.source, key=exc.key) from None
        raise
    out = Path(args.out) if args.out else Path("reports") / scenario.slug / "compare"
    write_compare_report(res, out)
    return res, out


__all__ = [
    "ComparisonResult", "compare", "console_compare", "main_compare", "parse_policies",
    "run_compare",
    "with_policy",
    "write_compare_report",
]
