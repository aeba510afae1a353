"""Shared report building: charts as PNG (matplotlib, Agg) and HTML pages from one escaping template path.

Every HTML page the project writes goes through :func:`write_html`, which renders ``sim/templates/page.html``
with Jinja2's autoescape on. A page is a list of blocks; a block is either :class:`markupsafe.Markup` made
by the helpers here (:func:`section`, :func:`table_html`, :func:`table`, :func:`paragraph`, :func:`answer`,
...), which escape every value they are given, or a plain ``str``, which is escaped as text. So a string
from a scenario, a command line or a file name can never become markup, whatever a new page forgets.
Every page carries a Content-Security-Policy that allows no script at all (the reports need none), images
only from the page's own folder, inline styles only and inline fonts only (the small CJK subset every page
carries for its Japanese terms, :func:`cjk_font_face`).

Charts are saved next to the page and referenced by relative path; every chart has a title and labelled
axes. Text that comes from a scenario goes through :func:`chart_text` before it reaches a chart (no
mathtext, bounded length, romanised Japanese terms when no CJK font is installed).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import matplotlib
from markupsafe import Markup, escape

from sim.batch import atomic_write_bytes  # noqa: F401 - tests and older callers patch or import it here
from sim.labels import decimals_for, fixed
from sim.outputs import atomic_write_text, note_file, summary_json  # noqa: F401 - pages and commands import them here
from sim.palette import SERIES

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

#: No script, no plugin, no form, no base; images from the page's folder (or inline data); inline styles; fonts
#: only inline (the page's own CJK subset, :func:`cjk_font_face`).
CSP = ("default-src 'none'; script-src 'none'; object-src 'none'; img-src 'self' data:; "
       "style-src 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'")
#: the family name of the web font every page carries for its Japanese terms
CJK_WEB_FONT = "Sim CJK"

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("sim", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=False,
    lstrip_blocks=False,
)
_BLOCKS = _ENV.get_template("blocks.html").module


# ---------------------------------------------------------------------------------------------
# files


# ---------------------------------------------------------------------------------------------
# charts

#: Japanese terms of the rule texts with their romanised reading, used in charts when matplotlib has no
#: font with Japanese glyphs (reports show both: the page's font stack renders the term where it can).
ROMANISED = {
    "成功値": "seikōchi", "魔導界": "Madōkai", "絶対隷奴": "Zettai Reido", "運動": "undō", "情報": "jōhō",
    "戦闘": "sentō", "体力": "tairyoku", "自尊": "jison", "攻": "kō",
}
MAX_CHART_TEXT = 40


_CJK_FILES = ("notosanscjk", "notoserifcjk", "notosansjp", "sourcehansans", "ipaexg", "ipag", "takao", "vl-gothic")


def _register_cjk_fonts() -> None:
    """Add installed CJK font files that matplotlib's font cache predates (a font installed after matplotlib
    first ran, e.g. fonts-noto-cjk by .ci/run)."""
    from matplotlib import font_manager

    known = {Path(f.fname).name.lower() for f in font_manager.fontManager.ttflist}
    for path in font_manager.findSystemFonts():
        name = Path(path).name.lower()
        if name not in known and any(k in name.replace("_", "").replace(" ", "") for k in _CJK_FILES):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # an unreadable font file: skip it
                continue


@lru_cache(maxsize=1)
def cjk_font_available() -> bool:
    """Whether matplotlib can find a font with Japanese glyphs (fc-list :lang=ja decides on Linux)."""
    from matplotlib import font_manager

    _register_cjk_fonts()
    for font in font_manager.fontManager.ttflist:
        name = font.name.lower()
        if any(k in name for k in ("cjk", "noto sans jp", "ipa", "takao", "hiragino", "yu gothic", "meiryo",
                                   "ms gothic", "vl gothic", "droid sans japanese", "source han")):
            return True
    return False


def _is_cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef"


def romanise(text: str) -> str:
    """``text`` with the known Japanese terms replaced by their romanised reading."""
    for term, roman in sorted(ROMANISED.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(term, roman)
    return text


def chart_text(text: Any, limit: int = MAX_CHART_TEXT) -> str:
    """A string safe to draw in a chart: at most ``limit`` characters (an ellipsis marks a cut), ``$`` not
    read as mathtext, bidirectional and other control characters dropped, Japanese terms romanised (and
    other CJK characters replaced by '?') when no CJK font is installed."""
    import unicodedata

    text = str(text)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf") or ch == " ")
    if not cjk_font_available():
        text = romanise(text)
        text = "".join("?" if _is_cjk(ch) else ch for ch in text)
    else:  # the term as itself, its romanised name beside it
        for term, roman in sorted(ROMANISED.items(), key=lambda kv: -len(kv[0])):
            if term in text and roman not in text:
                text = text.replace(term, f"{term} ({roman})")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("$", r"\$")


def save_figure(fig, path: Path) -> Path:
    """Save a matplotlib figure as PNG (atomically) and close it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=100, bbox_inches="tight", format="png")
        os.chmod(tmp, 0o666 & ~_UMASK)
        st = os.lstat(tmp)
        os.replace(tmp, path)
        note_file(path, [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns])  # what the command wrote
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once, at import (os.umask can only be read by setting it)


@lru_cache(maxsize=1)
def use_cjk_font() -> str | None:
    """Give matplotlib a font with Japanese glyphs as the fallback after its default (so a Japanese term draws
    as itself, not as boxes) when one is installed, e.g. Debian's fonts-noto-cjk; its name, or None."""
    from matplotlib import font_manager

    if not cjk_font_available():
        return None
    names = sorted({f.name for f in font_manager.fontManager.ttflist})
    for wanted in ("Noto Sans CJK JP", "Noto Sans JP", "Source Han Sans JP", "IPAexGothic", "IPAGothic",
                   "TakaoGothic", "VL Gothic", "Noto Serif CJK JP"):
        if wanted in names:
            plt.rcParams["font.family"] = ["DejaVu Sans", wanted]  # a list of families: per-glyph fallback
            return wanted
    return None


def new_figure(title: str, xlabel: str, ylabel: str, size=(7.5, 4.2)):
    """A figure with one axes titled and labelled (units belong in the labels), its colour cycle the
    non-outcome :data:`sim.palette.SERIES` (an outcome's colour comes from :func:`sim.palette.outcome_colour`)."""
    use_cjk_font()
    fig, ax = plt.subplots(figsize=size)
    ax.set_prop_cycle(color=list(SERIES))  # series that are not outcomes never take an outcome's colour
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


def legend_outside(ax, title: str | None = None, **kwargs):
    """A legend to the right of the axes, where it cannot cover data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize="small",
                     title=title, **kwargs)


def legend_below(ax, ncol: int = 3, title: str | None = None, **kwargs):
    """A legend under the axes (below the x label), where it cannot cover data."""
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=ncol, fontsize="small", title=title,
                     frameon=False, **kwargs)


# ---------------------------------------------------------------------------------------------
# numbers in words and figures


def missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def fmt_pct(p, ci: Sequence[float] | None = None, decimals: int | None = None) -> str:
    """A probability as a percentage with the precision its interval supports: ``62.3% (61.4–63.2%)``."""
    if missing(p):
        return "–"
    if decimals is None:
        decimals = decimals_for((ci[1] - ci[0]) / 2, percent=True, most=3, fallback=3) if ci is not None else 1
    text = f"{fixed(100 * p, decimals)}%"
    if ci is not None and not any(missing(c) for c in ci):
        text += f" ({fixed(100 * ci[0], decimals)}–{fixed(100 * ci[1], decimals)}%)"
    return text


def fmt_num(v, ci: Sequence[float] | None = None, se: float | None = None, decimals: int | None = None) -> str:
    """A number with the precision its interval (or ±1.96 se) supports, the interval in brackets."""
    if missing(v):
        return "–"
    if ci is None and se is not None and not missing(se):
        ci = (v - 1.96 * se, v + 1.96 * se)
    if decimals is None:
        if ci is not None and not any(missing(c) for c in ci):
            decimals = decimals_for((ci[1] - ci[0]) / 2, most=3, fallback=3)
        else:
            decimals = 0 if float(v).is_integer() else 2
    text = f"{v:,.{decimals}f}"
    if ci is not None and not any(missing(c) for c in ci):
        text += f" ({ci[0]:,.{decimals}f} to {ci[1]:,.{decimals}f})"
    return text


def fmt_exact(p, percent: bool = True, digits: int = 4) -> str:
    """An exact value with ``digits`` significant digits (percent for probabilities)."""
    if missing(p):
        return "–"
    if percent:
        return f"{fixed(100 * p, max(digits - 2, 1))}%"
    return f"{p:.{digits}g}"


# ---------------------------------------------------------------------------------------------
# HTML building blocks (each returns Markup; every argument that is not Markup is escaped)


def section(title: str, body: Any = "", image: str | None = None, note: str | None = None,
            alt: str | None = None, key: str | None = None, folded: bool = False, level: int = 2) -> Markup:
    """A titled section: optional note, chart image (``alt`` defaults to the title) and body. ``folded``
    makes it a ``<details>`` block a reader opens on demand; ``key`` shows a machine key in small type."""
    return Markup(_BLOCKS.section(title, body or "", image, alt, note, key, folded, level))


def paragraph(text: Any, cls: str | None = None) -> Markup:
    return Markup(_BLOCKS.paragraph(text, cls))


def details(summary: str, body: Any, open: bool = False) -> Markup:
    return Markup(_BLOCKS.details(summary, body, open))


def link(href: str, text: str) -> Markup:
    """A link to a file beside the page (only relative paths and http(s) addresses are linked)."""
    href = str(href)
    scheme = href.split(":", 1)[0].lower() if ":" in href.split("/", 1)[0] else ""
    if scheme not in ("", "http", "https"):
        return Markup(escape(text))
    return Markup(_BLOCKS.link(href, text))


def answer(question: str | None, lines: Iterable[Any]) -> Markup:
    """The block that opens a report: the scenario's question and its answer in words and numbers."""
    return Markup(_BLOCKS.answer(question, list(lines)))


def items(entries: Iterable[Any]) -> Markup:
    return Markup(_BLOCKS.items(list(entries)))


def definitions(pairs: Iterable[tuple[Any, Any]]) -> Markup:
    return Markup(_BLOCKS.definitions(list(pairs)))


def tag(text: str, cls: str = "") -> Markup:
    return Markup(_BLOCKS.tag(text, cls))


def join(*parts: Any, sep: str = "") -> Markup:
    """Concatenate blocks; plain strings are escaped."""
    return Markup(sep).join(p for p in parts if p is not None and p != "")


def table(columns: Sequence[Any], rows: Iterable[Sequence[Any]], row_classes: Sequence[str] | None = None,
          caption: str | None = None) -> Markup:
    """A table from already formatted cells (strings are escaped; Markup cells are kept), scrollable
    sideways when wider than the page."""
    cells = [[(c, "num" if _NUMERIC.match(c.striptags() if isinstance(c, Markup) else str(c)) else "") for c in r]
             for r in rows]
    return Markup(_BLOCKS.table(list(columns), cells, list(row_classes) if row_classes else None, caption))

_NUMERIC = re.compile(r"^[−+\-]?\d[\d.,]*(%| pp)?(\s|$)|^–$")


def _cell(v, float_format: str) -> Any:
    if isinstance(v, Markup):
        return v
    if v is None or v is pd.NA:
        return "–"
    if isinstance(v, float):
        return "–" if v != v else float_format.format(v)
    try:
        import numpy as np

        if isinstance(v, np.floating):
            return "–" if v != v else float_format.format(float(v))
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def table_html(df: pd.DataFrame, float_format: str = "{:.3g}", index: bool = True) -> Markup:
    """An HTML table of ``df`` (headers and cells escaped, floats formatted, missing values as a dash),
    scrollable sideways when wider than the page."""
    columns = [str(c) for c in df.columns]
    rows = []
    for idx, row in zip(df.index, df.itertuples(index=False, name=None), strict=True):
        cells = [_cell(v, float_format) for v in row]
        rows.append(([str(idx)] if index else []) + cells)
    if index:
        columns = [str(df.index.name or "")] + columns
    return table(columns, rows)


@lru_cache(maxsize=1)
def cjk_font_face() -> Markup:
    """The ``@font-face`` rule of the pages' Japanese terms: ``sim/templates/cjk-subset.woff`` (Noto Sans CJK JP,
    SIL Open Font License, subset to the characters the project uses by tools/cjk_font.py) inline as a data: URL,
    limited by ``unicode-range`` to those characters, so every page draws them without a CJK font installed
    (the charts keep their own fallback: romanised names when no CJK font is installed)."""
    import base64
    import io
    from importlib.resources import files

    from fontTools.ttLib import TTFont  # fontTools comes with matplotlib

    data = (files("sim") / "templates" / "cjk-subset.woff").read_bytes()
    font = TTFont(io.BytesIO(data))
    points = sorted(font.getBestCmap())
    ranges = ", ".join(f"U+{p:X}" for p in points)
    encoded = base64.b64encode(data).decode("ascii")
    return Markup(f'@font-face {{ font-family: "{CJK_WEB_FONT}"; src: url(data:font/woff;base64,{encoded}) '
                  f'format("woff"); unicode-range: {ranges}; font-display: block; }}')


def write_html(path: Path, title: str, sections: Iterable[Any], summary: dict[str, Any] | None = None) -> Path:
    """Render the page (``sim/templates/page.html``, autoescaped, with :data:`CSP`) and write it atomically."""
    meta = []
    if summary:
        labels = {"kind": "kind", "runs": "runs", "seed": "seed", "policy": "policy", "scenario_hash": "scenario hash",
                  "sim_version": "sim", "numpy_version": "numpy"}
        for key, label in labels.items():
            if summary.get(key) is not None:
                value = summary[key]
                if key == "runs" and isinstance(value, int):
                    value = f"{value:,}"
                if key == "scenario_hash":
                    value = str(value)[:12]
                meta.append((label, str(value)))
    blocks = [b for b in sections if b is not None and b != ""]
    page = _ENV.get_template("page.html").render(title=title, meta=meta, blocks=blocks, csp=CSP,
                                                 font_face=cjk_font_face())
    atomic_write_text(Path(path), page)
    return Path(path)


__all__ = [
    "CSP", "Markup", "answer", "atomic_write_text", "chart_text", "definitions", "description_block", "details",
    "escape", "fmt_exact", "fmt_num", "fmt_pct", "items", "join", "key_label", "legend_below", "legend_outside",
    "link", "new_figure", "paragraph", "save_figure", "scenario_question", "section", "summary_json", "table",
    "table_html", "tag", "write_html",
]


def scenario_question(description: str | None, default: str) -> str:
    """The question a scenario asks: the text after "Design question:" (or "Question:") in its description,
    up to the first question mark, else ``default``."""
    text = " ".join((description or "").split())
    m = re.search(r"(?:design\s+)?question\s*:\s*(.+?\?)", text, flags=re.I)
    if not m:
        return default
    q = m.group(1).strip()
    return q[:1].upper() + q[1:]


_LIST_LINE = re.compile(r"\s*(?:[-*•]|\d+[.)])\s")


def reflow(text: str) -> list[str]:
    """A TOML description's paragraphs: the hard line breaks of the file's source joined (a single line break is
    a space), a blank line starts a new paragraph, and a line that starts a list item (``- ``, ``* ``, ``1. ``)
    keeps its break."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", (text or "").strip()):
        lines: list[str] = []
        for raw in block.splitlines():
            line = raw.strip()
            if not line:
                continue
            if lines and not _LIST_LINE.match(raw):
                lines[-1] += " " + line
            else:
                lines.append(line)
        if lines:
            paragraphs.append("\n".join(lines))
    return paragraphs


def description_block(description: str | None) -> Markup | str:
    """The scenario's description as paragraphs that reflow to the page's width (:func:`reflow`), or nothing."""
    return join(*(paragraph(p, "description") for p in reflow(description or "")))


def key_label(label: str, key: str) -> Markup:
    """A plain-language label with the machine key beside it in small type."""
    return Markup(_BLOCKS.keyed(label, key))
