"""The multi-device Studio in a real browser: notebook 08 run top to bottom in JupyterLab, the tile count moved
with the keyboard, and the exposed communication shrinking on the per-device timeline; the Ascend C tab shows
the MC2 code and follows the tile count; a split CANN refuses shows the banner over the last good views.
Screenshots of each tab go to artifacts/ui/ (KS_UI_ARTIFACTS)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from kernelstudio.notebook.views.multi import MULTI_COLORS

from .lab import STEP_MS

pytestmark = pytest.mark.slow

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "08_matmul_allreduce.ipynb"
ARTIFACTS = Path(os.environ.get("KS_UI_ARTIFACTS", Path(__file__).resolve().parents[2] / "artifacts" / "ui"))
STUDIO = ".ks-multi-studio"

# per device lane group: the widths of the exposed communication bars drawn on the timeline
_EXPOSED_JS = """color => { const p = document.querySelector('.ks-multi-studio .js-plotly-plot');
  if (!p || !p._fullData || !p._fullData.length) return null;
  const t = p._fullData[0]; const c = t.marker.color; let sum = 0;
  for (let i = 0; i < t.x.length; i++) if (c[i] === color) sum += t.x[i];
  return sum; }"""


def _shot(lab, name: str) -> Path:
    """The Studio on a window tall enough to hold it, saved under ARTIFACTS."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = lab.page.viewport_size
    lab.page.set_viewport_size({"width": size["width"], "height": 2000})
    lab.page.wait_for_timeout(500)
    studio = lab.page.locator(STUDIO).first
    studio.scroll_into_view_if_needed()
    path = ARTIFACTS / f"08_matmul_allreduce-{name}.png"
    studio.screenshot(path=str(path))
    lab.page.set_viewport_size(size)
    lab.page.wait_for_timeout(300)
    return path


def _exposed_card(lab) -> float:
    text = lab.page.locator(f"{STUDIO} .ks-cards").inner_text()
    m = re.search(r"hidden, ([\d,.]+) exposed", text)
    assert m, text
    return float(m.group(1).replace(",", ""))


def test_notebook_08_moving_the_tile_count_shrinks_the_exposed_communication(lab):
    shutil.copy(NOTEBOOK, lab.root / "mc2.ipynb")
    lab.set_viewport(1500, 950)
    lab.open("mc2.ipynb")
    lab.side_panel(False)  # a multi-device design has no Ascend C for the panel yet: give the notebook the room
    lab.run_all()
    lab.page.wait_for_timeout(1000)
    lab.wait_ran()
    lab.wait_studio_drawn()
    lab.page.locator(STUDIO).first.scroll_into_view_if_needed()
    lab.page.wait_for_function(f"c => ({_EXPOSED_JS})(c) > 0", arg=MULTI_COLORS["exposed"], timeout=STEP_MS)
    figure_before = lab.page.evaluate(_EXPOSED_JS, MULTI_COLORS["exposed"])
    card_before = _exposed_card(lab)
    assert figure_before == pytest.approx(8 * card_before, rel=1e-3)  # 8 devices, each its exposed bars
    lab.assert_layout_ok("1 tile")
    _shot(lab, "timeline-1-tile")

    cards = lab.page.locator(f"{STUDIO} .ks-cards").inner_text()
    lab.move_slider("tiles")  # 1 -> 2 tiles
    lab.page.wait_for_function(f"before => document.querySelector('{STUDIO} .ks-cards').innerText !== before",
                               arg=cards, timeout=STEP_MS)
    lab.page.wait_for_function(f"([c, before]) => ({_EXPOSED_JS})(c) < before",
                               arg=[MULTI_COLORS["exposed"], figure_before], timeout=STEP_MS)
    figure_after = lab.page.evaluate(_EXPOSED_JS, MULTI_COLORS["exposed"])
    card_after = _exposed_card(lab)
    assert card_after < card_before and figure_after == pytest.approx(8 * card_after, rel=1e-3)
    assert "tiles 1 → 2" in lab.page.locator(f"{STUDIO} .ks-changed").inner_text()
    hidden = lab.page.evaluate(_EXPOSED_JS, MULTI_COLORS["hidden"])
    assert hidden > 0, "two tiles: the first tile's AllReduce runs under the second tile's matmul"
    lab.assert_layout_ok("2 tiles")
    _shot(lab, "timeline-2-tiles")

    # a device's compute per pipe, then the sweep and the link tabs
    lab.page.locator(f"{STUDIO} .widget-toggle-button", has_text="device 0").click()
    lab.page.wait_for_function("() => [...document.querySelectorAll('.ks-multi-studio .ytick text')]"
                               ".some(e => e.textContent.includes('CUBE'))", timeout=STEP_MS)
    lab.assert_layout_ok("device 0 expanded")
    _shot(lab, "timeline-device0-pipes")
    lab.studio_tab("Tile sweep")
    lab.wait_figures_fit()
    lab.assert_layout_ok("sweep")
    _shot(lab, "sweep")
    lab.studio_tab("Link")
    assert "assumed" in lab.page.locator(f"{STUDIO} .ks-link").inner_text()
    lab.assert_layout_ok("link")
    _shot(lab, "link")

    # the generated MC2 code at 1,100 px: Commit per tile and Wait, following the tile count
    lab.set_viewport(1100)
    lab.page.wait_for_timeout(500)
    lab.studio_tab("Ascend C")
    code = lab.page.locator(f"{STUDIO} .ks-code")
    code.wait_for(timeout=STEP_MS)
    text = code.inner_text()
    assert "hccl_.Commit(" in text and "hccl_.Wait(" in text and "SyncAll" in text
    assert "in 2 tile(s)" in text
    lab.assert_layout_ok("Ascend C, 1100 px")
    _shot(lab, "ascend-c-1100px")
    lab.move_slider("tiles")  # 2 -> 3 tiles: the code follows
    lab.page.wait_for_function(f"() => document.querySelector('{STUDIO} .ks-code').innerText.includes('in 3 tile(s)')",
                               timeout=STEP_MS)
    assert "hccl_.Commit(" in code.inner_text()
    lab.assert_layout_ok("Ascend C, 3 tiles")
    lab.move_slider("tiles", "ArrowLeft")  # back to 2 tiles
    lab.page.wait_for_function(f"() => document.querySelector('{STUDIO} .ks-code').innerText.includes('in 2 tile(s)')",
                               timeout=STEP_MS)
    lab.set_viewport(1500)
    lab.studio_tab("Timeline")

    # a split CANN refuses: the banner over the last good views, which stay
    lab.execute("from kernelstudio.notebook import get_studio; get_studio('tp_allreduce').set_knobs(tiles=9)")
    lab.page.wait_for_selector(f"{STUDIO} .ks-banner", timeout=STEP_MS)
    banner = lab.page.locator(f"{STUDIO} .ks-banner").inner_text()
    assert "do not split into 9 tiles" in banner and "last good setting" in banner
    assert _exposed_card(lab) == card_after
    lab.assert_layout_ok("banner")
    _shot(lab, "refused-9-tiles")
    lab.execute("get_studio('tp_allreduce').set_knobs(tiles=4)")
    lab.page.wait_for_selector(f"{STUDIO} .ks-banner", state="detached", timeout=STEP_MS)

    # a narrow window: the figures follow the cell, nothing runs past the Studio, no control's text is cut
    lab.set_viewport(800)
    lab.page.wait_for_timeout(800)
    for tab in ("Tile sweep", "Timeline"):
        lab.studio_tab(tab)
        m = lab.wait_figures_fit()
        assert m["width"] < 760, m
        lab.assert_layout_ok(f"800 px, {tab}")
    _shot(lab, "timeline-800px")
