"""A user's own Ascend C in a real browser: notebook 09 run top to bottom in JupyterLab; the `%%ascend_c` Studio
draws the kernel's timeline with its copy-in, vector and copy-out lanes, the racy copy lists its findings with
their lines and marks them in the source, and the views fit a narrow window. Screenshots go to artifacts/ui/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .lab import BOOT_MS, STEP_MS

pytestmark = pytest.mark.slow

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "09_bring_your_own.ipynb"
ARTIFACTS = Path(os.environ.get("KS_UI_ARTIFACTS", Path(__file__).resolve().parents[2] / "artifacts" / "ui"))
STUDIO = ".ks-ascendc"


def _shot(lab, index: int, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = lab.page.viewport_size
    lab.page.set_viewport_size({"width": size["width"], "height": 1800})
    lab.page.wait_for_timeout(500)
    studio = lab.page.locator(STUDIO).nth(index)
    studio.scroll_into_view_if_needed()
    path = ARTIFACTS / f"09_bring_your_own-{name}.png"
    studio.screenshot(path=str(path))
    lab.page.set_viewport_size(size)
    lab.page.wait_for_timeout(300)
    return path


def _lane_ticks(lab, index: int) -> list[str]:
    return lab.page.evaluate(
        """i => [...document.querySelectorAll('.ks-ascendc')[i].querySelectorAll('.ytick text')]
                .map(e => e.textContent)""", index)


def test_notebook_09_shows_the_kernels_timeline_findings_and_marked_source(lab):
    shutil.copy(NOTEBOOK, lab.root / "own.ipynb")
    lab.set_viewport(1100, 950)
    lab.open("own.ipynb")
    lab.side_panel(False)  # the Ascend C panel follows designed kernels; this notebook has none
    lab.run_all()
    lab.page.wait_for_timeout(1000)
    lab.wait_ran()
    lab.page.wait_for_function(  # add_flags, add_racy and the four sample-shaped kernels' Studios
        """() => { const s = document.querySelectorAll('.ks-ascendc');
             return s.length === 6 && [...s].every(x => { const p = x.querySelector('.js-plotly-plot');
                                                          return p && p._fullLayout !== undefined; }); }""",
        timeout=BOOT_MS)
    studios = lab.page.locator(STUDIO)
    studios.first.scroll_into_view_if_needed()
    lab.page.wait_for_function("() => document.querySelector('.ks-ascendc .ks-header')?.innerText.includes('calls')",
                               timeout=STEP_MS)
    header = studios.first.locator(".ks-header").inner_text()
    assert "add_flags" in header and "outputs match the reference" in header
    ticks = " ".join(_lane_ticks(lab, 0))
    for pipe in ("MTE2", "VECTOR", "MTE3"):
        assert pipe in ticks, ticks
    assert "0\nsync findings" in studios.first.inner_text()
    lab.page.wait_for_timeout(500)
    lab.assert_layout_ok(index=0, where="timeline")
    _shot(lab, 0, "timeline")

    racy = studios.nth(1)
    racy.scroll_into_view_if_needed()
    racy.locator(".lm-TabBar-tab", has_text="Sync check").first.click()
    sync = racy.locator(".ks-sync")
    sync.wait_for(timeout=STEP_MS)
    text = sync.inner_text()
    assert "[race]" in text and "[lost-signal]" in text and "add_racy.cpp:" in text
    assert "(entry add_flags)" in racy.locator(".ks-header").inner_text()
    lab.assert_layout_ok(index=1, where="sync check")
    _shot(lab, 1, "sync-check")
    racy.locator(".lm-TabBar-tab", has_text="Source").first.click()
    marked = racy.locator(".ks-src-line[title]")
    marked.first.wait_for(timeout=STEP_MS)
    assert marked.count() >= 3  # the two copies and the Add that race, and the SetFlag signalled twice
    assert "race" in (marked.first.get_attribute("title") or "")
    _shot(lab, 1, "source")

    lab.set_viewport(800)
    lab.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # 800 px: the file browser closed
    lab.page.wait_for_timeout(800)
    studios.first.scroll_into_view_if_needed()
    m = lab.wait_figures_fit(0)
    assert m["width"] < 760, m
    _shot(lab, 0, "timeline-800px")
    lab.assert_layout_ok(index=0, where="800 px")
