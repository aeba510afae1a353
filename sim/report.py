"""Shared report building: charts as PNG (matplotlib, Agg) and one self-contained HTML page.

A kind's ``write_report(result, out_dir, exact_summary=None)`` builds a list of sections with the
helpers here and calls :func:`write_html`. Charts are saved next to the page and referenced by
relative path; every chart has a title and labelled axes.
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import matplotlib

from sim.batch import atomic_write_bytes

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; } .meta { color: #666; font-size: 0.85em; }
.note { background: #f8f8f0; padding: 0.5em 1em; border-left: 3px solid #cc9; }
"""


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def save_figure(fig, path: Path) -> Path:
    """Save a matplotlib figure as PNG (atomically) and close it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=100, bbox_inches="tight", format="png")
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def new_figure(title: str, xlabel: str, ylabel: str, size=(7.5, 4.2)):
    """A figure with one axes titled and labelled (units belong in the labels)."""
    fig, ax = plt.subplots(figsize=size)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


def table_html(df: pd.DataFrame, float_format: str = "{:.4f}", index: bool = True) -> str:
    """An HTML table of ``df`` with floats formatted."""
    def fmt_value(v, f=float_format):
        if isinstance(v, float):
            return "–" if v != v else f.format(v)
        return str(v)

    fmt = {c: fmt_value for c in df.columns}
    return df.to_html(index=index, formatters=fmt, border=0, escape=True, na_rep="–")


def section(title: str, body_html: str = "", image: str | None = None, note: str | None = None) -> str:
    parts = [f"<h2>{html.escape(title)}</h2>"]
    if note:
        parts.append(f'<p class="note">{html.escape(note)}</p>')
    if image:
        parts.append(f'<p><img src="{html.escape(image)}" alt="{html.escape(title)}"></p>')
    if body_html:
        parts.append(body_html)
    return "\n".join(parts)


def write_html(path: Path, title: str, sections: list[str], summary: dict[str, Any] | None = None) -> Path:
    """Write the report page (atomically)."""
    meta = ""
    if summary:
        keys = ("kind", "runs", "seed", "scenario_hash", "sim_version", "numpy_version")
        meta = " · ".join(f"{k}: {html.escape(str(summary.get(k)))}" for k in keys if k in summary)
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p class=\"meta\">{meta}</p>" + "\n".join(sections) + "</body></html>\n"
    )
    atomic_write_text(Path(path), page)
    return Path(path)


def summary_json(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=2, sort_keys=False, default=_json_default) + "\n"


def _json_default(value):
    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value)}")
