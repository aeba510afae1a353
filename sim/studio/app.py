"""The studio page (Panel): controls on the left, the answer, what changed and the charts on the right.

``studio_app(scenario)`` returns a Panel layout that is served by ``python -m sim studio`` and can be shown
in a notebook cell as it is. Every string from the scenario is escaped before it reaches the page: the page's HTML
is built as :class:`markupsafe.Markup` templates whose arguments are escaped (as sim/report.py builds reports), handed
to Panel as plain ``str`` (Panel escapes its object for transport with ``html.escape``, which would escape a Markup a
second time); metric names and numbers come from the one table of sim/labels.py.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import panel as pn
from markupsafe import Markup, escape
from matplotlib.figure import Figure

from sim import kinds
from sim.errors import SimError
from sim.labels import format_value, metric_label
from sim.palette import BASELINE, outcome_colour, series_colour
from sim.studio.address import netloc
from sim.studio.model import Answer, Studio
from sim.studio.security import TokenAuth, confined, new_token

REFINE_SECONDS_CAP = 20.0
TICK_MS = 300
DEBOUNCE_SECONDS = 0.4

#: chart size on the page: two charts side by side fit beside the sidebar in a 1400 px window
#: (2 x 5.5 in x 90 dpi = 990 px + the 270 px sidebar + margins), and wrap below each other in a narrower one
CHART_DPI = 90
CHART_WIDTH = 5.5
SIDEBAR_WIDTH = 270
#: control groups shown first (a designer's first moves), the rest in the scenario's order
FIRST_GROUPS = ("Policy", "Tier ladder (DC)")
#: with more controls than this, the groups after FIRST_GROUPS start folded so the sidebar stays short
UNFOLDED_CONTROLS = 16


def label(metric: str) -> str:
    """The metric's short name (sim/labels.py), capitalised for the page."""
    text = metric_label(metric, short=True)
    return text[:1].upper() + text[1:]


def _interval(metric: str, lo: float, hi: float, exact: bool) -> str:
    if exact or math.isnan(lo):
        return "exact" if exact else ""
    return f"[{format_value(metric, lo)}, {format_value(metric, hi)}]"


def headline_html(studio: Studio, current: Answer, refining: bool) -> str:
    base = studio.baseline_for(current)  # same runs, same random numbers (R-GEN-7)
    m = studio.metric
    name = getattr(studio.scenario, "name", "") or Path(studio.scenario.source).stem
    diff = current.value - base.value
    how = Markup("{}{}").format(current.method, " · refining…" if refining else "")
    rows = Markup("").join(
        Markup("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>").format(
            label(k), format_value(k, bv), format_value(k, v), _interval(k, lo, hi, current.exact))
        for (k, bv, _, _), (_, v, lo, hi) in zip(base.headline, current.headline, strict=False)
    )
    return str(Markup(
        '<div class="studio-answer"><h2 style="margin:0">{name}</h2>'
        '<p style="font-size:1.6em;margin:0.3em 0">{label}: '
        '<b class="current-value" data-value="{value}" data-exact="{exact}" data-runs="{runs}">{shown}</b> '
        '<span style="color:#666">{interval}</span></p>'
        '<p style="margin:0">Baseline <span class="baseline-value" data-value="{base_value}">{base_shown}</span>'
        " · change {diff:+.1f} points · {how}</p>"
        '<table style="margin-top:0.6em"><tr><th>metric</th><th>baseline</th><th>variant</th><th>95% interval</th>'
        "</tr>{rows}</table></div>"
    ).format(name=name, label=label(m), value=repr(current.value), exact=str(current.exact).lower(),
             runs=current.runs or 0, shown=format_value(m, current.value),
             interval=_interval(m, *current.interval, current.exact), base_value=repr(base.value),
             base_shown=format_value(m, base.value), diff=diff * 100, how=how, rows=rows))


def changes_html(studio: Studio, values: dict[str, Any]) -> str:
    changes = studio.changes(values)
    if not changes:
        return "<p><i>No changes: the variant is the scenario as written.</i></p>"
    rows = Markup("").join(Markup("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>").format(k, a, b)
                           for k, a, b in changes)
    return str(Markup("<table><tr><th>key</th><th>baseline</th><th>variant</th></tr>{}</table>").format(rows))


def curve_figure(studio: Studio, current: Answer) -> Figure | None:
    got, base = studio.curve(current), studio.curve(studio.baseline_for(current))
    if got is None or base is None:
        return None
    title, values, bands = got
    _, bvalues, _ = base
    key = kinds.KINDS[studio.kind].studio_curve[0]
    colour = outcome_colour(key)  # the curve's outcome, coloured as in every report
    fig = Figure(figsize=(CHART_WIDTH, 3.6), layout="constrained")
    ax = fig.add_subplot()
    xs = list(range(1, len(values) + 1))
    ax.plot(xs[: len(bvalues)], bvalues, color=BASELINE, linestyle="--", linewidth=2, label="baseline")
    ax.plot(xs, values, color=colour, marker="o", markersize=3, label="variant")
    lo = [b[0] for b in bands]
    hi = [b[1] for b in bands]
    if not current.exact and not all(math.isnan(v) for v in lo):
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.2, label="95% interval")
    ax.set_title(title)
    ax.set_xlabel(kinds.KINDS[studio.kind].time_unit)
    ax.set_ylabel("share of runs")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncols=3, frameon=False)  # inside the figure, under the axes
    return fig


def shares_figure(studio: Studio, current: Answer) -> Figure:
    keys = [k for k, *_ in current.headline if not k.startswith("mean_") and k != "dp_per_session"]
    base = {k: v for k, v, *_ in studio.baseline_for(current).headline}
    now = {k: (v, lo, hi) for k, v, lo, hi in current.headline}
    colours = [outcome_colour(k, default=series_colour(i)) for i, k in enumerate(keys)]  # one colour per outcome
    fig = Figure(figsize=(CHART_WIDTH, 1.5 + 0.45 * max(1, len(keys))), layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(keys)))[::-1]
    baseline = ax.barh([y + 0.2 for y in ys], [base.get(k, math.nan) for k in keys], height=0.38, color=BASELINE,
                       label="baseline")  # the variant's bars stand under their outcome's tick label
    variant = ax.barh([y - 0.2 for y in ys], [now[k][0] for k in keys], height=0.38, color=colours)
    for y, k in zip(ys, keys, strict=True):
        v, lo, hi = now[k]
        if not current.exact and not math.isnan(lo):
            ax.plot([lo, hi], [y - 0.2, y - 0.2], color="black", linewidth=1)
    ax.set_yticks(ys, [label(k) for k in keys])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of runs")
    ax.set_title("Outcomes")
    from matplotlib.legend_handler import HandlerTuple

    if keys:  # the variant's legend swatch shows each of its colours (one per outcome)
        first = {c: bar for c, bar in reversed(list(zip(colours, variant.patches, strict=True)))}
        swatch = tuple(first[c] for c in dict.fromkeys(colours))
        fig.legend([baseline.patches[0], swatch], ["baseline", "variant"], ncols=2, loc="outside lower center",
                   frameon=False, handler_map={tuple: HandlerTuple(ndivide=None)})
    return fig


def ladder_html(studio: Studio, values: dict[str, Any]) -> str:
    """The tier ladder in play beside the DC controls (the kind's ``tier_ladder`` hook, sim/kinds.py): baseline
    and variant DC per tier, a changed DC highlighted; "" where the kind has no ladder or no DC is a control."""
    ladder = kinds.get(studio.kind).tier_ladder()
    if ladder is None:
        return ""
    rows = []
    for c in studio.controls:
        if not c.key.startswith("rules.tiers."):
            continue
        tier = c.key.split(".")[2]
        mark, becomes = ladder[tier]
        now = values.get(c.key, c.value)
        style = Markup(' style="background:#fff3c4"') if now != c.value else ""
        rows.append(Markup("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>").format(
            style, tier, c.value, now, mark, becomes))
    if not rows:
        return ""
    return str(Markup("<h3>Tier ladder in play</h3><table><tr><th>tier</th><th>baseline DC</th><th>variant DC</th>"
                      "<th>accumulation</th><th>becomes (default)</th></tr>{}</table>").format(Markup("").join(rows)))


def control_groups(groups: dict[str, list]) -> list:
    """The sidebar's groups as cards: policy and the tier ladder first and open; the others (a character's
    scores, attention and search, ...) after them, folded when there are many controls."""
    order = [g for g in FIRST_GROUPS if g in groups] + [g for g in groups if g not in FIRST_GROUPS]
    many = sum(len(ws) for ws in groups.values()) > UNFOLDED_CONTROLS
    # a Card writes its title into HTML as it is: a group is named after a character of the scenario, so escape it
    return [pn.Card(*groups[g], title=str(escape(g)), collapsed=many and g not in FIRST_GROUPS,
                    width=SIDEBAR_WIDTH - 20, css_classes=["studio-group"]) for g in order]


def control_widgets(studio: Studio) -> tuple[dict[str, Any], dict[str, list]]:
    """One widget per control (a drop-down for a choice, an editable slider for a number), by key and by group;
    each carries the CSS class ``ctl-<key with dashes>`` the browser tests find it by."""
    widgets: dict[str, Any] = {}
    groups: dict[str, list] = {}
    for c in studio.controls:
        css = ["ctl-" + c.key.replace(".", "-")]
        if c.options:
            w = titled(pn.widgets.Select, c.label, options=list(c.options), value=c.value, width=230,
                       css_classes=css)
        else:
            w = titled(pn.widgets.EditableIntSlider, c.label, start=c.lo, end=c.hi, value=c.value, width=230,
                       css_classes=css)
        widgets[c.key] = w
        groups.setdefault(c.group, []).append(w)
    return widgets, groups


def titled(widget: type, title: str, **params):
    """A widget shown under ``title``: Panel 1.9 calls that parameter ``label`` (``name`` is deprecated there and
    goes in 2.0); the older Panels the studio extra allows (>= 1.4) call it ``name``."""
    return widget(**{"label" if "label" in widget.param else "name": title}, **params)


class StudioPage:
    """One session's page: the controls, the panes that show the answer, what was last answered, and the
    callbacks that keep them in step (a control moves, the periodic tick, Save and Report)."""

    def __init__(self, scenario, studio: Studio, out_dir: Path):
        self.studio, self.out_dir = studio, out_dir
        self.answer: Answer = studio.baseline  # the answer on show
        self.values: dict[str, Any] = {}  # the control values it answers
        self.pending: float | None = None  # when a control last moved, while the debounce waits
        self.future: Future | None = None  # the refinement running in the background
        self.generation = 0  # counts computed variants: a refinement of an older one is dropped
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.widgets, self.groups = control_widgets(studio)
        self._answer_panes()
        self._chart_panes()
        self._save_and_report(scenario)

    # ------------------------------------------------------------------ building the page

    def _answer_panes(self) -> None:
        studio = self.studio
        self.answer_pane = pn.pane.HTML(headline_html(studio, studio.baseline, False), sizing_mode="stretch_width")
        self.alert = pn.pane.Alert("", alert_type="danger", visible=False, css_classes=["studio-error"])
        self.changes_pane = pn.pane.HTML(changes_html(studio, {}))
        self.ladder_pane = pn.pane.HTML(ladder_html(studio, {}))

    def _chart_panes(self) -> None:
        fig = curve_figure(self.studio, self.studio.baseline)
        # the figures lay themselves out (constrained, legend inside): saved as drawn, not cropped by the pane
        self.curve_pane = pn.pane.Matplotlib(fig, dpi=CHART_DPI, tight=False, visible=fig is not None,
                                             css_classes=["studio-chart"])
        self.shares_pane = pn.pane.Matplotlib(shares_figure(self.studio, self.studio.baseline), dpi=CHART_DPI,
                                              tight=False, css_classes=["studio-chart"])

    def _save_and_report(self, scenario) -> None:
        self.save_path = titled(pn.widgets.TextInput, "Save as",
                                value=str(self.out_dir / f"{scenario.slug}.variant.toml"), width=420)
        colour = "color" if "color" in pn.widgets.Button.param else "button_type"  # Panel 1.9 renamed it
        self.save_button = titled(pn.widgets.Button, "Save", **{colour: "primary"})
        self.report_button = titled(pn.widgets.Button, "Report")
        self.message = pn.pane.HTML("", css_classes=["studio-message"])

    def connect(self) -> None:
        """Every control answers when it moves; the buttons save and report."""
        for w in self.widgets.values():
            w.param.watch(self.on_change, "value")
        self.save_button.on_click(self.on_save)
        self.report_button.on_click(self.on_report)

    def layout(self):
        """Controls in a scrolling sidebar; the answer, the charts, the ladder, what changed and the buttons."""
        sidebar = pn.Column(*control_groups(self.groups), width=SIDEBAR_WIDTH, scroll=True, height=860,
                            css_classes=["studio-controls"])
        charts = pn.FlexBox(self.curve_pane, self.shares_pane, flex_wrap="wrap", sizing_mode="stretch_width")
        main = pn.Column(self.answer_pane, self.alert, charts, self.ladder_pane,
                         pn.pane.HTML("<h3>What changed</h3>"), self.changes_pane,
                         # wraps: at 800 px the path and both buttons do not fit on one line beside the sidebar
                         pn.FlexBox(self.save_path, self.save_button, self.report_button, flex_wrap="wrap",
                                    align_items="flex-end", sizing_mode="stretch_width"), self.message,
                         sizing_mode="stretch_width")
        return pn.Row(sidebar, main, sizing_mode="stretch_width")

    # ------------------------------------------------------------------ answering

    def current_values(self) -> dict[str, Any]:
        return {k: w.value for k, w in self.widgets.items()}

    def show(self, answer: Answer, refining: bool) -> None:
        self.answer_pane.object = headline_html(self.studio, answer, refining)
        f = curve_figure(self.studio, answer)
        if f is not None:
            self.curve_pane.object = f
        self.shares_pane.object = shares_figure(self.studio, answer)

    def on_change(self, *_events) -> None:
        if self.studio.baseline.exact:
            self.compute()
        else:  # simulated answers take about a second: wait until the control rests (debounce in tick)
            self.pending = time.monotonic()

    def compute(self) -> None:
        self.pending = None
        current = self.current_values()
        self.generation += 1
        self.future = None
        try:
            answer = self.studio.answer(current)
        except SimError as exc:
            self.alert.object = str(Markup("Refused: {}").format(str(exc)))
            self.alert.visible = True
            return
        self.alert.visible = False
        self.answer, self.values = answer, current
        self.changes_pane.object = changes_html(self.studio, current)
        self.ladder_pane.object = ladder_html(self.studio, current)
        self.show(answer, refining=not answer.exact)

    def tick(self) -> None:
        """Every TICK_MS: compute once a moved control rests; show a finished refinement; start the next one."""
        if self.pending is not None:
            if time.monotonic() - self.pending >= DEBOUNCE_SECONDS:
                self.compute()
            return
        answer = self.answer
        if self.future is not None:
            if not self.future.done():
                return
            generation, refined = self.future.result()
            self.future = None
            if generation != self.generation or refined is None:
                return
            self.answer = answer = refined
            more = not refined.exact and refined.seconds * 4 < REFINE_SECONDS_CAP and refined.runs < 1_000_000
            self.show(refined, refining=more)
            if not more:
                return
        if answer.exact or answer.runs is None or answer.seconds * 4 >= REFINE_SECONDS_CAP or self.alert.visible:
            return
        generation = self.generation
        self.future = self.pool.submit(lambda: (generation, self.studio.refine(answer)))

    # ------------------------------------------------------------------ Save and Report

    def on_save(self, _event) -> None:
        try:
            path = self.studio.save(self.values, confined(self.out_dir, self.save_path.value))  # only into out_dir
        except (SimError, OSError) as exc:
            self.message.object = str(Markup('<p style="color:#b00">Not saved: {}</p>').format(str(exc)))
            return
        self.message.object = str(Markup("<p>Saved <code>{}</code></p>").format(str(path)))

    def on_report(self, _event) -> None:
        try:  # in this process (sim.pipeline.run), writing only inside out_dir
            path = self.studio.report(self.values, report_folder(self.out_dir))
        except (SimError, OSError) as exc:
            self.message.object = str(Markup('<p style="color:#b00">No report: {}</p>').format(str(exc)))
            return
        self.message.object = str(Markup("<p>Report written: <code>{}</code></p>").format(str(path)))


def studio_app(scenario, out_dir: str | Path | None = None, studio: Studio | None = None):
    """The studio page for ``scenario`` (a Panel layout: serve it, or show it in a notebook)."""
    pn.extension(inline=True)
    studio = studio or Studio(scenario)
    out_dir = Path(out_dir) if out_dir else Path("reports") / scenario.slug / "studio"
    page = StudioPage(scenario, studio, out_dir)
    page.connect()
    layout = page.layout()
    pn.state.add_periodic_callback(page.tick, period=TICK_MS)  # debounce and background refinement, per session
    return layout


def serve(scenario, port: int, address: str = "127.0.0.1", show: bool = True, out_dir: str | Path | None = None,
          token: str | None = None):
    """Serve the studio until interrupted (one Studio shared by the sessions of this process). Every request
    needs ``token`` (sim/studio/security.py); ``show`` opens the browser at the URL that carries it."""
    import threading
    import webbrowser

    token = token or new_token()
    studio = Studio(scenario)

    def page():
        return studio_app(scenario, out_dir=out_dir, studio=studio)

    if show:
        url = f"http://{netloc('127.0.0.1' if address in ('0.0.0.0', '::') else address, port)}/studio?token={token}"
        threading.Timer(1.0, webbrowser.open, [url]).start()
    hosts = studio_hosts(address, port)
    pn.serve({"studio": page}, port=port, address=address, show=False, title="sim studio",
             websocket_origin=hosts, threaded=False, print_url=False,
             auth_provider=TokenAuth(token, port, hosts=None if address in ("0.0.0.0", "::") else hosts))


def studio_hosts(address: str, port: int) -> list[str]:
    """The ``HOST:PORT`` names the studio answers to: its own address and this machine's loopback names. The same
    list checks the websocket's Origin (Bokeh) and every request's Host header (TokenAuth: DNS rebinding)."""
    return list(dict.fromkeys([netloc(address, port), f"localhost:{port}", f"127.0.0.1:{port}"]))


def report_folder(out_dir: str | Path) -> Path:
    """Where Report writes (``variant.toml`` and ``report/``): ``out_dir/variant``, refused (SimError with the
    reason) when it or its ``report`` folder leads out of ``out_dir`` (sim/studio/security.py)."""
    target = confined(out_dir, Path(out_dir) / "variant", suffix=None)
    confined(out_dir, target / "report", suffix=None)  # a link from report/ out of the folder is refused too
    return target
