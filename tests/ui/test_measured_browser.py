"""Measured next to predicted in a real browser: a kernel loaded with `ks.ascendc.load` and its msprof outputs
(tests/ascendc/msprof/written/add_flags, written from the documented format) in the own-kernel Studio; the card
gives the measured time by the simulated one, the Measured tab the per-pipe table and one core's lanes measured
above predicted, laid out in a 1100 px window. The screenshot goes to artifacts/ui/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .lab import BOOT_MS, STEP_MS

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("KS_UI_ARTIFACTS", Path(__file__).resolve().parents[2] / "artifacts" / "ui"))
STUDIO = ".ks-ascendc"

CELL = f'''\
import numpy as np
import kernelstudio as ks
from kernelstudio.notebook.ascendc_view import AscendCStudio

x = np.random.default_rng(0).standard_normal(8192).astype(np.float16)
k = ks.ascendc.load("{TESTS / "ascendc" / "kernels" / "add_flags" / "add_flags.cpp"}", kernel="add_flags",
                    args=[x, x, ks.ascendc.out(x.shape, "float16")], block_dim=4,
                    tiling={{"blockLength": 2048, "tileLength": 512}})
AscendCStudio(k, measured="{TESTS / "ascendc" / "msprof" / "written" / "add_flags"}")
'''


def test_measured_tab_shows_the_table_and_the_lanes(lab):
    lab.write_notebook("measured.ipynb", [CELL])
    lab.set_viewport(1100, 950)
    lab.open("measured.ipynb")
    lab.side_panel(False)
    lab.run_all()
    lab.wait_ran()
    lab.page.wait_for_function(
        """() => { const s = document.querySelector('.ks-ascendc');
                   const p = s && s.querySelector('.js-plotly-plot');
                   return p && p._fullLayout !== undefined; }""", timeout=BOOT_MS)
    studio = lab.page.locator(STUDIO).first
    studio.scroll_into_view_if_needed()
    cards = studio.inner_text()
    assert "3.25 us" in cards and "measured by msprof" in cards
    studio.locator(".lm-TabBar-tab", has_text="Measured").first.click()
    table = studio.locator(".ks-measured-table")
    table.wait_for(timeout=STEP_MS)
    text = table.inner_text()
    for lane in ("MTE2", "VECTOR", "MTE3", "SCALAR", "whole sub-core"):
        assert lane in text, text
    assert "1.500" in text  # the mean measured MTE2 of the four vector sub-cores
    lab.page.wait_for_function(
        """() => [...document.querySelectorAll('.ks-measured-view .ytick text')]
                 .some(e => e.textContent === 'predicted MTE2')""", timeout=STEP_MS)
    ticks = lab.page.evaluate(
        "() => [...document.querySelectorAll('.ks-measured-view .ytick text')].map(e => e.textContent)")
    assert ticks[:2] == ["measured MTE2", "predicted MTE2"] and "measured CACHEMISS" in ticks
    lab.page.wait_for_timeout(500)
    lab.assert_layout_ok(index=0, where="measured tab")
    m = lab.wait_figures_fit(0)
    assert m["width"] < 1100, m
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    lab.page.set_viewport_size({"width": 1100, "height": 1800})
    lab.page.wait_for_timeout(500)
    studio.scroll_into_view_if_needed()
    studio.screenshot(path=str(ARTIFACTS / "measured-1100px.png"))
