"""The escape report: escape-by-round curve with its interval band, outcome shares, the per-tier
table that shows the bottleneck tier, and per-character results; charts also as PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sim.designer.balance import balance_table
from sim.escape.model import TIER_IDS
from sim.report import new_figure, save_figure, section, table_html, write_html
from sim.result import SimulationResult
from sim.stats import Z95, wilson_interval


def tier_table(result: SimulationResult) -> pd.DataFrame:
    """Per tier: checks made, success rate (with interval), character-rounds spent with it as the
    character's highest goal tier, and each tier's share of those rounds."""
    agg = result.extra["aggregate"]
    checks = agg.checks_at_tier.sum(axis=0)
    succ = agg.successes_at_tier.sum(axis=0)
    rounds = agg.rounds_at_tier.sum(axis=0)
    n = agg.runs
    rows = []
    for t in range(1, 9):
        if checks[t] == 0 and rounds[t] == 0:
            continue
        lo, hi = wilson_interval(int(succ[t]), int(checks[t])) if checks[t] else (np.nan, np.nan)
        rows.append({
            "tier": TIER_IDS[t],
            "checks per run": checks[t] / n,
            "success rate": succ[t] / checks[t] if checks[t] else np.nan,
            "95% interval": f"[{lo:.3f}, {hi:.3f}]" if checks[t] else "–",
            "rounds spent per run": rounds[t] / n,
            "share of rounds": rounds[t] / rounds.sum() if rounds.sum() else np.nan,
        })
    df = pd.DataFrame(rows)
    if len(df):
        df["bottleneck"] = np.where(df["rounds spent per run"] == df["rounds spent per run"].max(), "◀", "")
    return df


def character_table(result: SimulationResult) -> pd.DataFrame:
    agg = result.extra["aggregate"]
    names = result.extra["params"].names
    n = agg.runs
    rows = []
    for i, name in enumerate(names):
        rows.append({
            "character": name,
            "P(freed)": agg.freed[i] / n,
            "mean round freed": agg.freed_round_sum[i] / agg.freed[i] if agg.freed[i] else np.nan,
            "checks": agg.checks[i] / n,
            "successes": agg.successes[i] / n,
            "overloads": agg.overloads[i] / n,
            "items found": agg.items_found[i] / n,
        })
    return pd.DataFrame(rows)


def balance_metrics(result: SimulationResult) -> dict:
    """Balance metrics of an escape result from its aggregate: run-length spread, timeout share,
    first-check advantage (escape rate after a round-1 success minus after round-1 failures) and the
    tier where most failed runs were held (the same keys as sim.designer.balance)."""
    from sim.designer.balance import spread_from_counts

    agg = result.extra["aggregate"]
    n = agg.runs
    out: dict = {"run_length": spread_from_counts(agg.rounds_all),
                 "run_length_success": spread_from_counts(agg.escaped_at)}
    timeouts = int(agg.outcomes[3])
    out["timeout_share"] = timeouts / n
    out["timeout_share_ci"] = wilson_interval(timeouts, n)
    fr = agg.first_round  # rows: no check, checks without success, a success; columns: not escaped, escaped
    n1, n0 = int(fr[2].sum()), int(fr[1].sum())
    if n1 and n0:
        p1, p0 = fr[2, 1] / n1, fr[1, 1] / n0
        se = float(np.sqrt(p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0))
        d = float(p1 - p0)
        out["first_check_advantage"] = {"value": d, "ci": [d - Z95 * se, d + Z95 * se], "p_after_success": float(p1),
                                        "p_after_failure": float(p0), "n_after_success": n1, "n_after_failure": n0,
                                        "runs_with_a_round_1_check": n1 + n0}
    failed = int(agg.failure_tiers.sum())
    if failed:
        shares = {TIER_IDS[t]: float(c / failed) for t, c in enumerate(agg.failure_tiers) if c > 0}
        top = max(shares, key=shares.get)
        out["failure_tier"], out["failure_tier_share"], out["failure_tiers"] = top, shares[top], shares
    else:
        out["failure_tier"] = None
    return out


def write_report(result: SimulationResult, out_dir: Path, exact_summary: dict | None = None) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = result.summary
    n = s["runs"]
    p = result.extra["params"]
    written = []

    # escape-by-round curve with a Wilson band
    k = np.arange(1, p.max_rounds + 1)
    curve = np.array(s["escape_by_round"])
    band = np.array([wilson_interval(v * n, n) for v in curve])
    fig, ax = new_figure("Escape by round", "round", "P(escaped by end of round)")
    ax.fill_between(k, band[:, 0], band[:, 1], alpha=0.25, label="95% interval")
    ax.plot(k, curve, marker="o", label=f"simulated ({n:,} runs)")
    if exact_summary:
        ax.plot(k, exact_summary["escape_by_round"], "k--", label="exact")
    ax.set_ylim(0, 1.02)
    ax.legend()
    written.append(save_figure(fig, out / "escape_by_round.png"))

    # outcome shares
    shares = [s["escape_rate"], s["caught_rate"], s["timeout_rate"]]
    cis = [s["escape_rate_ci"], s["caught_rate_ci"], s["timeout_rate_ci"]]
    fig, ax = new_figure("Outcome shares", "outcome", "share of runs")
    err = np.clip(np.array([[v - c[0] for v, c in zip(shares, cis, strict=True)],
                            [c[1] - v for v, c in zip(shares, cis, strict=True)]]), 0, None)
    ax.bar(["escaped", "caught", "timeout"], shares, yerr=err, capsize=6, color=["#4c9", "#c54", "#aaa"])
    ax.set_ylim(0, 1.02)
    written.append(save_figure(fig, out / "outcomes.png"))

    # tiers
    tiers = tier_table(result)
    if len(tiers):
        fig, ax = new_figure("Rounds spent and success rate by tier", "tier", "character-rounds per run")
        ax.bar(tiers["tier"], tiers["rounds spent per run"], color="#69c", label="rounds spent")
        ax2 = ax.twinx()
        ax2.plot(tiers["tier"], tiers["success rate"], "ko-", label="check success rate")
        ax2.set_ylabel("check success rate")
        ax2.set_ylim(0, 1.02)
        written.append(save_figure(fig, out / "tiers.png"))

    # rounds histogram of escaped runs
    agg = result.extra["aggregate"]
    fig, ax = new_figure("Rounds to escape (escaped runs)", "round of escape", "share of all runs")
    counts = agg.escaped_at[1:] / n
    ax.bar(k, counts, color="#4c9")
    written.append(save_figure(fig, out / "rounds_hist.png"))

    head = {
        "escape rate": [s["escape_rate"], f"[{s['escape_rate_ci'][0]:.4f}, {s['escape_rate_ci'][1]:.4f}]"],
        "caught rate": [s["caught_rate"], f"[{s['caught_rate_ci'][0]:.4f}, {s['caught_rate_ci'][1]:.4f}]"],
        "timeout rate": [s["timeout_rate"], f"[{s['timeout_rate_ci'][0]:.4f}, {s['timeout_rate_ci'][1]:.4f}]"],
        "mean rounds (escaped)": [s["mean_rounds"] if s["mean_rounds"] is not None else np.nan, ""],
    }
    headline = pd.DataFrame(head, index=["simulated", "95% interval"]).T
    if exact_summary:
        headline["exact"] = [exact_summary["escape_rate"], exact_summary["caught_rate"],
                             exact_summary["timeout_rate"], exact_summary["mean_rounds"] or np.nan]
    by_round = pd.DataFrame({"round": k, "P(escaped by round)": curve,
                             "low": band[:, 0], "high": band[:, 1]})
    if exact_summary:
        by_round["exact"] = exact_summary["escape_by_round"]
    scen = result.scenario
    sections = [
        f"<p>{scen.description}</p>" if scen.description else "",
        section("Headline", table_html(headline)),
        section("Escape by round", table_html(by_round, index=False), image="escape_by_round.png"),
        section("Outcome shares", image="outcomes.png"),
        section("Tiers: where the runs get stuck", table_html(tiers, index=False) if len(tiers) else "",
                image="tiers.png" if len(tiers) else None,
                note="Rounds spent counts each round a character starts with that tier as its highest goal "
                     "restraint; the bottleneck is the tier holding characters longest."),
        section("Characters", table_html(character_table(result), index=False)),
        section("Rounds to escape", image="rounds_hist.png"),
        section("Balance", table_html(balance_table(balance_metrics(result)), index=False),
                note="Run-length spread over all runs (and escaped runs), share of timeouts, the first-check "
                     "advantage (escape rate after a round-1 success minus after only failed round-1 checks) and "
                     "the tier that held the party longest in the runs that did not escape."),
    ]
    title = f"Escape challenge — {scen.name or scen.slug} (policy {s['policy']})"
    written.append(write_html(out / "report.html", title, sections, s))
    return written
