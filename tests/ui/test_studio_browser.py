"""The Studio in a real browser: JupyterLab, the tour notebook, run all, move a slider.

Needs Debian's chromium (`.ci/run` installs it); skips without it unless CI is set.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .notebooks import run_tour_page

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lab_url(lab_server):
    """The shared JupyterLab server (tests/ui/conftest.py) serving a copy of the notebooks."""
    base, root = lab_server
    if not (root / "notebooks").exists():
        shutil.copytree(ROOT / "notebooks", root / "notebooks")
    return base


def _timeline_bases(page) -> str:
    return page.evaluate(f"() => {_timeline_js()}")


def test_tour_renders_the_studio_and_a_slider_moves_the_timeline(lab_url, lab, tmp_path):
    page = lab.page  # the lab fixture fails the test on any page error
    lab.set_viewport(1500, 2200)
    run_tour_page(page, f"{lab_url}/lab/tree/notebooks/00_tour.ipynb?reset")
    page.wait_for_selector(".ks-studio .js-plotly-plot", state="attached", timeout=120_000)
    page.wait_for_selector(".ks-studio .widget-html svg", state="attached", timeout=60_000)
    page.wait_for_function("() => document.querySelector('.ks-cards') !== null", timeout=60_000)
    page.wait_for_function("""() => [...document.querySelectorAll('.ks-studio .js-plotly-plot')]
        .some(e => e._fullData && e._fullData.length && e._fullData[0].base)""", timeout=120_000)
    studio = page.query_selector(".ks-studio")
    studio.scroll_into_view_if_needed()
    studio.screenshot(path=str(tmp_path / "studio.png"))
    cards = page.inner_text(".ks-cards")
    bases = _timeline_bases(page)
    assert "predicted time" in cards and "vs unfused" in cards
    handle = page.query_selector(".ks-studio .widget-slider .noUi-handle, .ks-studio .widget-slider .ui-slider-handle")
    assert handle is not None, "no slider in the Studio"
    handle.focus()
    page.keyboard.press("ArrowRight")  # tile_m 16 -> 32
    page.wait_for_function("(before) => document.querySelector('.ks-cards').innerText !== before", arg=cards,
                           timeout=60_000)
    page.wait_for_function("(before) => " + _timeline_js() + " !== before", arg=bases, timeout=60_000)
    assert "tile_m 16" in page.inner_text(".ks-changed")
    studio.screenshot(path=str(tmp_path / "studio_moved.png"))
    assert json.loads(_timeline_bases(page)) != json.loads(bases)


def _timeline_js() -> str:
    return ("JSON.stringify([...document.querySelectorAll('.ks-studio .js-plotly-plot')]"
            ".map(e => (e._fullData || []).map(t => t.base ? Array.from(t.base).slice(0, 80) : null)))")
