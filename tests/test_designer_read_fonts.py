"""Issue 26, CJK and readable numbers: Japanese terms keep their romanised name beside them and draw with a CJK
font when one is installed (no boxes); restraint heat-map numbers are at least 11 px tall."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from sim import report


def _system_has_cjk() -> bool:
    fc = shutil.which("fc-list")
    return bool(fc and subprocess.run([fc, ":lang=ja"], capture_output=True, text=True).stdout.strip())


def test_romanised_name_beside_every_japanese_term():
    text = report.chart_text("成功値 by 魔導界")
    if report.cjk_font_available():
        assert text == "成功値 (seikōchi) by 魔導界 (Madōkai)"
    else:
        assert text == "seikōchi by Madōkai"


@pytest.mark.skipif(not _system_has_cjk(), reason="no CJK font installed (apt-get install fonts-noto-cjk)")
def test_charts_draw_japanese_with_a_cjk_font(recwarn):
    name = report.use_cjk_font()
    assert name is not None and ("CJK" in name or "JP" in name or "Gothic" in name)
    fig, ax = report.new_figure(report.chart_text("成功値"), "x", "y")
    fig.canvas.draw()  # a glyph missing from every font warns "Glyph ... missing"
    import matplotlib.pyplot as plt

    plt.close(fig)
    assert not [w for w in recwarn if "missing from font" in str(w.message)]


def test_restraint_heat_map_numbers_are_readable(tmp_path, monkeypatch):
    import sim.restraint.report as rr

    captured = {}

    def keep(fig, path):
        captured["fig"] = fig
        return path

    monkeypatch.setattr(rr, "save_figure", keep)
    df = pd.DataFrame(np.linspace(0, 1, 9 * 20).reshape(9, 20), index=[f"slot{i}" for i in range(9)],
                      columns=range(1, 21))  # slots by level 1-20, as the escape-check heat map
    rr._heat_map(df, "P", "level", "slot", tmp_path / "h.png", "{:.2f}")
    fig = captured["fig"]
    ax = fig.axes[0]
    sizes = [t.get_fontsize() for t in ax.texts]
    assert len(sizes) == df.size
    # 11 px at the chart's 100 dpi is 7.92 points; the figure is at most 10 inches (1000 px), so the page shows it
    # at full size
    assert min(sizes) * 100 / 72 >= 11 and fig.get_size_inches()[0] <= 10
    import matplotlib.pyplot as plt

    plt.close(fig)
