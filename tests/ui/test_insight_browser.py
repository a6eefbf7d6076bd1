"""The Studio's Advice and What if panels in a real browser: Advice lists simulated moves, Apply on the first one
that saves time changes the "what changed" strip by the gain its row stated; What if shows a control per profile
field and "side by side" draws the chips' timelines on one axis; nothing overflows the Studio at 1,100 px with the
side panel open. Screenshots go to artifacts/ui/."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from .lab import BOOT_MS, STEP_MS
from .notebooks import design_cell, studio_notebook

pytestmark = pytest.mark.slow

ARTIFACTS = Path(os.environ.get("KS_UI_ARTIFACTS", Path(__file__).resolve().parents[2] / "artifacts" / "ui"))


def _shot(lab, name: str, selector: str = ".ks-studio") -> None:
    """A screenshot of the first `selector` element of the Studio (the whole Studio by default)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = lab.page.viewport_size
    lab.page.set_viewport_size({"width": size["width"], "height": 2400})
    lab.page.wait_for_timeout(500)
    part = lab.page.locator(selector).first
    part.scroll_into_view_if_needed()
    part.screenshot(path=str(ARTIFACTS / f"insight-{name}.png"))
    lab.page.set_viewport_size(size)
    lab.page.wait_for_timeout(300)


def test_advice_apply_and_what_if_in_the_browser(lab):
    lab.set_viewport(1100)
    lab.open(lab.write_notebook("insight.ipynb", studio_notebook(design_cell("mla", flags="--target ascend910b2"))))
    lab.run_all()
    lab.wait_panel("mla", timeout_ms=BOOT_MS)
    lab.wait_ran()
    lab.wait_studio_drawn()
    studio = lab.page.locator(".ks-studio").first
    studio.scroll_into_view_if_needed()

    studio.locator(".widget-button", has_text="Advice").first.click()
    lab.page.wait_for_selector(".ks-studio .ks-advice", timeout=STEP_MS)
    rows = studio.locator(".ks-advice")
    assert rows.count() >= 2 and "&rarr;" not in rows.first.inner_text() and "→" in rows.first.inner_text()
    lab.assert_layout_ok("advice")
    _shot(lab, "advice", ".ks-studio .ks-advice-strip")

    # the first move that fits and saves time: its row states the gain; Apply; "what changed" shows it
    gain_row = next(i for i in range(rows.count()) if re.search(r"\(-[\d.]+ us\)", rows.nth(i).inner_text()))
    stated = re.search(r"\((-[\d.]+) us\)", rows.nth(gain_row).inner_text()).group(1)
    before = studio.locator(".ks-changed").inner_text()
    row = studio.locator(".ks-advice").nth(gain_row).locator("xpath=ancestor::div[contains(@class, 'widget-hbox')][1]")
    row.locator(".widget-button", has_text="Apply").click()
    lab.page.wait_for_function(
        "before => document.querySelector('.ks-studio .ks-changed').innerText !== before", arg=before,
        timeout=STEP_MS)
    changed = studio.locator(".ks-changed").inner_text()
    assert f"{float(stated):+.2f} us" in changed, (stated, changed)
    _shot(lab, "advice-applied", ".ks-studio .ks-changed")

    studio.locator(".widget-button", has_text="What if").first.click()
    lab.page.wait_for_selector(".ks-studio .ks-whatif", timeout=STEP_MS)
    assert studio.locator(".ks-whatif .widget-slider, .ks-whatif .widget-hslider").count() >= 10
    studio.locator(".ks-whatif .widget-button", has_text="side by side").click()
    lab.page.wait_for_function(
        "() => { const p = document.querySelector('.ks-studio .ks-whatif .js-plotly-plot');"
        " return p && p._fullLayout !== undefined; }", timeout=STEP_MS)
    text = studio.locator(".ks-whatif").inner_text()
    assert "ascend910b4" in text and "ascend950" in text
    lab.page.wait_for_timeout(800)
    lab.assert_layout_ok("what if, side by side")
    _shot(lab, "what-if", ".ks-studio .ks-whatif")
