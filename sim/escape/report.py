"""The escape report: escape-by-round curve with its interval band, outcome shares, the per-tier
table that shows the bottleneck tier, and per-character results; charts also as PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sim.escape.model import TIER_IDS
from sim.report import new_figure, save_figure, section, table_html, write_html
from sim.result import SimulationResult
from sim.stats import wilson_interval


def tier_table(result: SimulationResult) -> pd.DataFrame:
    """Per tier: checks made, success rate (with interval), character-rounds spent with it as the
    character's highest goal tier, and each tier's share of those rounds."""
    cols = result.extra["columns"]
    checks = cols["checks_at_tier"].sum(axis=(0, 1))
    succ = cols["successes_at_tier"].sum(axis=(0, 1))
    rounds = cols["rounds_at_tier"].sum(axis=(0, 1))
    n = len(cols["outcome"])
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
    runs = result.runs
    names = result.extra["params"].names
    rows = []
    for name in names:
        fr = runs[f"{name}.freed_round"]
        rows.append({
            "character": name,
            "P(freed)": float(fr.notna().mean()),
            "mean round freed": float(fr.dropna().mean()) if fr.notna().any() else np.nan,
            "checks": float(runs[f"{name}.checks"].mean()),
            "successes": float(runs[f"{name}.successes"].mean()),
            "overloads": float(runs[f"{name}.overloads"].mean()),
            "items found": float(runs[f"{name}.items_found"].mean()),
        })
    return pd.DataFrame(rows)


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
    runs = result.runs
    esc = runs.loc[runs["outcome"] == "escaped", "rounds"]
    fig, ax = new_figure("Rounds to escape (escaped runs)", "round of escape", "share of all runs")
    counts = np.bincount(esc.to_numpy(dtype=np.int64), minlength=p.max_rounds + 1)[1:] / n
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
    ]
    title = f"Escape challenge — {scen.name or scen.slug} (policy {s['policy']})"
    written.append(write_html(out / "report.html", title, sections, s))
    return written
