"""Issue 26, item 2: the studio in a 1400 px window (the designer's laptop): the page no wider than the window,
the Outcomes legend whole (the designer read "baselin"), the policy and the tier ladder among the first controls,
not below the fold of a long sidebar. Served as a user starts it and measured in real headless chromium."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np
import pytest
from browser_check import CHROMIUM, LAUNCH_ARGS, require_browser, studio_server, sync_playwright

import sim

pytest.importorskip("panel")

ROOT = Path(__file__).resolve().parents[1]
ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"
WIDTH, HEIGHT = 1400, 900  # the window of the report in issue 26


@pytest.fixture(scope="module")
def page_facts(tmp_path_factory):
    """What the browser shows of the lone rogue's studio at 1400 x 900 (a screenshot is kept beside)."""
    require_browser()
    tmp = tmp_path_factory.mktemp("studio1400")
    with studio_server(ROGUE, tmp) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto(url)
        page.locator(".current-value").wait_for(timeout=60_000)
        page.wait_for_timeout(1500)  # the charts arrive after the first answer
        facts = {
            "scroll_width": page.evaluate("document.documentElement.scrollWidth"),
            "client_width": page.evaluate("document.documentElement.clientWidth"),
            "images": [],
            "policy": page.locator("select").first.bounding_box(),  # the only drop-down: the policy
            "heavy_dc": page.locator(".ctl-rules-tiers-heavy-dc input").first.bounding_box(),
        }
        images = page.locator("img[src^='data:image/png']")
        for i in range(images.count()):
            img = images.nth(i)
            facts["images"].append({
                "box": img.bounding_box(),
                "natural": img.evaluate("e => [e.naturalWidth, e.naturalHeight]"),
                "shown": img.evaluate("e => [e.clientWidth, e.clientHeight]"),
                "parent": img.evaluate("e => e.parentElement.getBoundingClientRect().right"),
                "png": base64.b64decode(img.get_attribute("src").split(",", 1)[1]),
            })
        page.screenshot(path=str(tmp / "studio_1400.png"))
        browser.close()
    return facts


def test_the_page_is_no_wider_than_a_1400_px_window(page_facts):
    assert page_facts["scroll_width"] <= page_facts["client_width"] == WIDTH, \
        f"the page is {page_facts['scroll_width']} px wide in a {WIDTH} px window"


def test_charts_are_shown_whole_inside_the_window(page_facts):
    """Both charts (the curve and Outcomes) are shown at their own size (not scaled, not cropped) and end
    inside the window; nothing drawn touches a chart's right edge, where a cut legend would end."""
    import matplotlib.image as mpimg

    images = page_facts["images"]
    assert len(images) == 2
    for im in images:
        box = im["box"]
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, f"a chart ends at {box['x'] + box['width']} px"
        assert im["shown"] == im["natural"], f"a chart is scaled: {im['natural']} shown as {im['shown']}"
        assert box["x"] + box["width"] <= im["parent"] + 0.5, "a chart is wider than its pane"
        pixels = mpimg.imread(io.BytesIO(im["png"]), format="png")
        edge = pixels[:, -3:, :3]
        assert np.all(edge > 0.95), "something is drawn up to the chart's right edge (a legend cut off?)"


def test_policy_and_ladder_are_in_the_first_viewport(page_facts):
    for name in ("policy", "heavy_dc"):
        box = page_facts[name]
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= HEIGHT, \
            f"the {name} control is at {box} (below the first {HEIGHT} px)"


def test_legends_lie_inside_their_figures():
    """The Outcomes and curve figures lay out their legend inside the figure (what the page shows is the
    figure as drawn)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from sim.studio.app import curve_figure, shares_figure
    from sim.studio.model import Studio

    studio = Studio(sim.load_scenario(ROGUE))
    for fig in (curve_figure(studio, studio.baseline), shares_figure(studio, studio.baseline)):
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
        assert legends
        page = fig.bbox
        for legend in legends:
            box = legend.get_window_extent(renderer)
            assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, \
                f"legend {box} outside the figure {page}"


def test_policy_and_ladder_groups_come_first_and_the_rest_fold_when_long():
    """A party of four has 24 score controls: they come after the policy and the ladder, folded."""
    import panel as pn

    from sim.studio.app import UNFOLDED_CONTROLS, control_groups

    def ws(n):
        return [pn.widgets.IntInput(value=i) for i in range(n)]

    groups = {"Aster": ws(6), "Briar": ws(6), "Tier ladder (DC)": ws(5), "Attention and search": ws(5),
              "Policy": ws(1)}
    cards = control_groups(groups)
    assert [c.title for c in cards] == ["Policy", "Tier ladder (DC)", "Aster", "Briar", "Attention and search"]
    assert sum(map(len, groups.values())) > UNFOLDED_CONTROLS
    assert [c.collapsed for c in cards] == [False, False, True, True, True]
    short = control_groups({"Mei": ws(6), "Tier ladder (DC)": ws(4), "Policy": ws(1)})
    assert [c.title for c in short] == ["Policy", "Tier ladder (DC)", "Mei"]
    assert not any(c.collapsed for c in short)


def test_a_group_named_after_a_character_is_escaped_in_its_card():
    """Panel's Card puts its title into HTML unescaped; a character's name is the scenario's text."""
    import panel as pn

    from sim.studio.app import control_groups

    (card,) = control_groups({'<img src=x onerror="alert(1)">': [pn.widgets.IntInput(value=1)]})
    header = card._header.object  # the HTML the card shows as its header
    # escaped once (markupsafe writes the quote as &#34;, html.escape as &quot;): the text comes back exactly
    assert "<img" not in header and "&lt;img src=x onerror=" in header
    assert '<img src=x onerror="alert(1)">' in html.unescape(header)
