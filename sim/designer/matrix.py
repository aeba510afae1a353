"""Class-balance matrix (``python -m sim matrix SCENARIO``; docs/designer.md, "Class-balance matrix").

The scenario's one character (escape: the only party member; restraint: the target) is replaced by
each class in turn, at the scenario's level (or ``--level``), with ability scores from the class preset
below (or ``--scores``), and crossed with the ``--vary`` values. Each cell is solved exactly where the
kind allows (a single-character escape always is), otherwise simulated with common random numbers
(the same runs and seed in every cell).

Outliers: a cell is flagged when its class's value differs from the median class's value in the
same variant by more than ``threshold`` (default 10 percentage points) and by more than the noise,
``1.96 * sqrt(se_class^2 + se_median^2)`` (zero for exact cells).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sim import kinds
from sim.designer.evaluate import evaluate, exact_summary
from sim.designer.metrics import half_width, main_metric, metric_interval, metric_value
from sim.designer.params import GridAxis, get_value, parse_axis, scenario_data, set_value
from sim.errors import ScenarioError
from sim.labels import metric_label
from sim.report import answer, atomic_write_text, new_figure, save_figure, section, table, write_html
from sim.scenario import parse_scenario

#: the standard array, assigned to the abilities in each class's order of priority (highest first)
STANDARD_ARRAY = (15, 14, 13, 12, 10, 8)

#: each class's abilities from most to least important (a common reading of the classes' primary
#: abilities: the casting or attack ability first, then constitution or the class's defence)
CLASS_PRIORITIES: dict[str, tuple[str, ...]] = {
    "barbarian": ("str", "con", "dex", "wis", "cha", "int"),
    "bard": ("cha", "dex", "con", "wis", "int", "str"),
    "cleric": ("wis", "con", "str", "cha", "dex", "int"),
    "druid": ("wis", "con", "dex", "int", "cha", "str"),
    "fighter": ("str", "con", "dex", "wis", "cha", "int"),
    "monk": ("dex", "wis", "con", "str", "int", "cha"),
    "paladin": ("str", "cha", "con", "wis", "dex", "int"),
    "ranger": ("dex", "wis", "con", "str", "int", "cha"),
    "rogue": ("dex", "int", "con", "cha", "wis", "str"),
    "sorcerer": ("cha", "con", "dex", "wis", "int", "str"),
    "warlock": ("cha", "con", "dex", "wis", "int", "str"),
    "wizard": ("int", "con", "dex", "wis", "cha", "str"),
    "artificer": ("int", "con", "dex", "wis", "str", "cha"),
}
CLASSES = tuple(CLASS_PRIORITIES)
ABILITIES = ("str", "dex", "con", "int", "wis", "cha")

DEFAULT_THRESHOLD = 0.10
MAX_CELLS = 2_000

def preset_scores(class_name: str) -> dict[str, int]:
    """The class preset: the standard array assigned by the class's priorities."""
    order = CLASS_PRIORITIES[class_name]
    by_ability = dict(zip(order, STANDARD_ARRAY, strict=True))
    return {a: by_ability[a] for a in ABILITIES}


def parse_classes(text: str | None) -> list[str]:
    if text is None or text.strip() in ("", "all"):
        return list(CLASSES)
    names = [c.strip() for c in text.split(",") if c.strip()]
    for name in names:
        if name not in CLASS_PRIORITIES:
            raise ScenarioError(f"unknown class {name!r}; expected all or some of {', '.join(CLASSES)}",
                                key="--classes")
    if len(set(names)) != len(names):
        raise ScenarioError("each class at most once", key="--classes")
    return names


def parse_scores(text: str | None) -> dict[str, int] | None:
    """``str=10,dex=16,...`` (all six abilities) -> a score mapping."""
    if text is None:
        return None
    out: dict[str, int] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in ABILITIES or not value.strip().lstrip("-").isdigit():
            raise ScenarioError(f"expected ABILITY=SCORE for str, dex, con, int, wis, cha; given {part!r}",
                                key="--scores")
        out[name] = int(value)
    if set(out) != set(ABILITIES):
        raise ScenarioError("give all six scores, e.g. str=10,dex=16,con=12,int=14,wis=10,cha=8", key="--scores")
    return out


@dataclass
class Matrix:
    frame: pd.DataFrame
    metric: str
    vary: list[str]
    threshold: float
    scenario: Any
    scores: dict[str, dict[str, int]]
    level: int


def _character(scenario) -> str:
    """The dotted key of the scenario's one character, as its kind names it (``one_character``, sim/kinds.py)."""
    one = kinds.get(scenario.kind).one_character
    if one is None:
        covered = [k.name for k in kinds.all_kinds() if "one_character" in k.capabilities()]
        raise ScenarioError(f"the class matrix covers {' and '.join(covered)} scenarios; this one is "
                            f"{scenario.kind}", file=scenario.source, key="kind")
    return one(scenario)


def _variant(scenario, char: str, class_name: str, level: int, scores: dict[str, int],
             values: dict[str, Any]):
    data = scenario_data(scenario)
    data = set_value(data, f"{char}.class", class_name, scenario.source)
    data = set_value(data, f"{char}.level", level, scenario.source)
    data = set_value(data, f"{char}.scores", dict(scores), scenario.source)
    for key, value in values.items():
        data = set_value(data, key, value, scenario.source)
    return parse_scenario(data, scenario.source)


def matrix(scenario, classes: list[str] | None = None, vary: list[GridAxis | str] | None = None,
           level: int | None = None, scores: dict[str, int] | None = None, runs: int | None = None,
           seed: int | None = None, n_jobs: int = 1, threshold: float = DEFAULT_THRESHOLD,
           metric: str | None = None) -> Matrix:
    """Every class (x every variant) evaluated; see the module docstring."""
    char = _character(scenario)
    classes = list(classes or CLASSES)
    axes = [parse_axis(a) if isinstance(a, str) else a for a in (vary or [])]
    keys = [a.key for a in axes]
    if len(set(keys)) != len(keys):
        raise ScenarioError("each --vary key at most once", key="--vary")
    combos = list(product(*(a.values for a in axes))) if axes else [()]
    if len(classes) * len(combos) > MAX_CELLS:
        raise ScenarioError(f"expected at most {MAX_CELLS} cells; given {len(classes)} classes x {len(combos)} "
                            "variants", key="--vary")
    metric = metric or main_metric(scenario.kind)
    level = int(level if level is not None else _get(scenario, f"{char}.level"))
    runs = int(scenario.run.runs if runs is None else runs)
    seed = int(scenario.run.seed if seed is None else seed)
    used_scores = {c: (dict(scores) if scores else preset_scores(c)) for c in classes}
    variants = {}
    for combo in combos:  # validate every cell first: bad input ends before anything is computed
        values = dict(zip(keys, combo, strict=True))
        for c in classes:
            variants[(c, combo)] = _variant(scenario, char, c, level, used_scores[c], values)
    rows = []
    for (c, combo), variant in variants.items():
        summary = exact_summary(variant)  # exact where the kind solves the cell within its budget
        exact = summary is not None
        if not exact:
            summary = evaluate(variant, runs=runs, seed=seed, n_jobs=n_jobs, exact=False).summary
        value = metric_value(summary, metric)
        lo, hi = metric_interval(summary, metric)
        rows.append({"class": c, **dict(zip(keys, combo, strict=True)), metric: value, f"{metric}_lo": lo,
                     f"{metric}_hi": hi, "exact": bool(exact),
                     "mean_rounds": _mean_rounds(summary), "_half": 0.0 if exact else half_width(summary, metric)})
    df = pd.DataFrame(rows)
    _flag_outliers(df, metric, keys, threshold)
    df = df.drop(columns="_half")
    return Matrix(df, metric, keys, threshold, scenario, used_scores, level)


def _get(scenario, key: str):
    return get_value(scenario_data(scenario), key)


def _mean_rounds(summary: dict) -> float:
    """Escape: the summary's mean rounds. Restraint: mean rounds (capped at the duel's length) until
    the main event, ``sum_r (1 - F(r))`` over the cumulative by-round curve ``F``."""
    value = summary.get("mean_rounds")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    curve = summary.get("incapacitated_or_arms_complete_by_round")
    if isinstance(curve, list) and curve:
        return float(sum(1.0 - (f or 0.0) for f in [0.0] + curve[:-1]))
    return math.nan


def _flag_outliers(df: pd.DataFrame, metric: str, keys: list[str], threshold: float) -> None:
    df["median_class_value"] = np.nan
    df["difference"] = np.nan
    df["outlier"] = False
    groups = df.groupby(keys, sort=False) if keys else [((), df)]
    for _, part in groups:
        values = part[metric].to_numpy(float)
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            continue
        median = float(np.median(finite))
        # the median class: the class whose value is nearest the median (its noise enters the test)
        mid = part.index[int(np.nanargmin(np.abs(values - median)))]
        mid_half = float(df.at[mid, "_half"])
        for idx in part.index:
            diff = float(df.at[idx, metric]) - median
            noise = math.hypot(float(df.at[idx, "_half"]), mid_half) if idx != mid else 0.0
            df.at[idx, "median_class_value"] = median
            df.at[idx, "difference"] = diff
            df.at[idx, "outlier"] = bool(abs(diff) > threshold and abs(diff) > noise)


def _variant_label(row: pd.Series, keys: list[str]) -> str:
    return ", ".join(f"{k.split('.')[-1]} = {row[k]}" for k in keys) if keys else "as written"


def outlier_sentences(m: Matrix) -> list[str]:
    """One plain sentence per outlier cell."""
    kind = kinds.get(m.scenario.kind)
    rounds = kind.round_limit(m.scenario)
    within = f" within {rounds} rounds" if rounds else ""
    words = kind.metric_words.get(m.metric, f"reaches {m.metric}").replace("{within}", within)
    out = []
    flagged = m.frame[m.frame["outlier"]]
    flagged = flagged.iloc[np.argsort(-flagged["difference"].abs().to_numpy(), kind="stable")]  # largest first
    for _, row in flagged.iterrows():
        points = abs(row["difference"]) * 100
        more = "more" if row["difference"] > 0 else "less"
        where = f" ({_variant_label(row, m.vary)})" if m.vary else ""
        out.append(f"The {row['class']} {words}{where} {points:.0f} points {more} often than the median "
                   f"class ({row[m.metric] * 100:.1f}% against {row['median_class_value'] * 100:.1f}%).")
    return out


def heat_map(m: Matrix, out: Path) -> Path:
    df = m.frame
    labels = ([_variant_label(r, m.vary) for _, r in df.drop_duplicates(m.vary).iterrows()] if m.vary
              else ["as written"])
    classes = list(dict.fromkeys(df["class"]))
    data = np.full((len(classes), len(labels)), np.nan)
    for i, c in enumerate(classes):
        part = df[df["class"] == c]
        data[i, : len(part)] = part[m.metric].to_numpy(float)
    label = metric_label(m.metric)
    fig, ax = new_figure(f"{label} by class (! marks an outlier)", "variant", "class",
                         size=(2.0 + 1.3 * len(labels), 1.5 + 0.42 * len(classes)))
    ax.grid(False)
    image = ax.imshow(data, aspect="auto", cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right")
    ax.set_yticks(range(len(classes)), classes)
    for (r, c), v in np.ndenumerate(data):
        if np.isfinite(v):
            flagged = bool(df[(df["class"] == classes[r])]["outlier"].iloc[c])
            ax.text(c, r, f"{v * 100:.0f}%" + (" !" if flagged else ""), ha="center", va="center", fontsize=8,
                    color="white" if v < 0.5 else "black")
    fig.colorbar(image, ax=ax, label="share of runs")
    return save_figure(fig, out / "matrix.png")


def write_matrix(m: Matrix, out_dir: str | Path) -> list[Path]:
    """``matrix.csv``, ``matrix.png`` and ``report.html``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "matrix.csv", m.frame.to_csv(index=False))
    chart = heat_map(m, out)
    sentences = outlier_sentences(m)
    exact = bool(m.frame["exact"].all())
    how = ("Every cell is exact." if exact else
           "Cells are simulated with common random numbers (same runs and seed); intervals are 95%.")
    lines = sentences or [f"No class differs from the median class by more than {m.threshold * 100:.0f} points "
                          "beyond noise."]
    lines = [*lines, f"{how} An outlier is more than {m.threshold * 100:.0f} points from the median class's value "
                     "in the same variant, and beyond the noise of both."]
    cell_rows = []
    for _, r in m.frame.iterrows():
        interval = "exact" if r["exact"] else f"[{r[m.metric + '_lo'] * 100:.1f}, {r[m.metric + '_hi'] * 100:.1f}]"
        cell_rows.append([r["class"], *(str(r[k]) for k in m.vary), f"{r[m.metric] * 100:.1f}%", interval,
                          f"{r['difference'] * 100:+.1f} pp", "yes" if r["outlier"] else "",
                          "–" if math.isnan(r["mean_rounds"]) else f"{r['mean_rounds']:.2f}"])
    score_rows = [[c, *(str(s[a]) for a in ABILITIES)] for c, s in m.scores.items()]
    label = metric_label(m.metric)
    sections = [
        answer(f"Is any class far ahead or behind on {label.lower()}?", lines),
        section("Class by variant", image=chart.name,
                alt="Heat map: the metric of every class (rows) in every variant (columns)"),
        section("Cells", table(["class", *m.vary, label, "95% interval", "vs median class", "outlier", "mean rounds"],
                               cell_rows)),
        section(f"Ability scores (level {m.level})", table(["class", *ABILITIES], score_rows),
                note="The standard array 15, 14, 13, 12, 10, 8 assigned by each class's priorities, unless "
                     "--scores was given."),
    ]
    rules = kinds.get(m.scenario.kind).rules_table(m.scenario)
    if rules is not None:  # the rules in effect as written (escape: the tier ladder)
        title, body, note = rules
        sections.insert(1, section(title, body, note=f"{note} A --vary of one of these values changes it in that "
                                                     "variant only."))
    name = getattr(m.scenario, "name", "") or Path(m.scenario.source).stem
    write_html(out / "report.html", f"Class-balance matrix — {name}", sections)
    return [out / "matrix.csv", chart, out / "report.html"]


def format_table(m: Matrix) -> str:
    lines = outlier_sentences(m) or [f"No outlier class (threshold {m.threshold * 100:.0f} points beyond noise)."]
    lines.append("")
    df = m.frame
    head = ["class", *m.vary, m.metric, "95% interval", "outlier"]
    rows = [head]
    for _, r in df.iterrows():
        rows.append([r["class"], *(str(r[k]) for k in m.vary), f"{r[m.metric] * 100:.1f}%",
                     f"[{r[m.metric + '_lo'] * 100:.1f}, {r[m.metric + '_hi'] * 100:.1f}]",
                     "yes" if r["outlier"] else ""])
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(head))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


__all__ = ["CLASS_PRIORITIES", "STANDARD_ARRAY", "preset_scores", "matrix", "write_matrix", "format_table",
           "parse_classes", "parse_scores"]
