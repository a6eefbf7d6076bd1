"""Notebook 10 (FlashAttention) in a real browser: its Studio cell runs in JupyterLab, the fused attention kernel
is one kernel in the views and the Ascend C panel, and moving the `s2` slider (key/value columns per step,
512 -> 256) rebuilds it: the cards, the timeline, the idle view and the panel's code follow. Screenshots at
1,100 px wide go to artifacts/ui/10_flash_attention-*.png (KS_UI_ARTIFACTS)."""

from __future__ import annotations

import pytest

from .lab import PANEL, STEP_MS
from .test_deepseek_browser import _TIMELINE_JS, BUILD_MS, _open, _shot

pytestmark = pytest.mark.slow

# the Timeline tab's "why units idle" table, as text
_IDLE_JS = """() => { const t = [...document.querySelectorAll('.ks-studio .widget-tab-contents')]
  .map(e => e.textContent).find(x => x.includes('why units idle'));
  return t ? t.slice(t.indexOf('why units idle')) : ''; }"""


# the Timeline figure's stage strip (trace "stages"): the stage of each row drawn, and the blocks in the hovers
_STAGES_JS = """() => { const p = [...document.querySelectorAll('.ks-studio .js-plotly-plot')]
  .find(e => e._fullLayout && e.closest('.widget-tab-contents'));
  const t = p && p._fullData ? p._fullData.find(d => d.name === 'stages') : null;
  if (!t || !t.y) return null;
  const ticks = [...p.querySelectorAll('.ytick text')].map(e => e.textContent);
  const blocks = [...new Set(Array.from(t.hovertext).map(h => (h.match(/of block (\\d+)/) || [])[1]))];
  return {rows: [...new Set(Array.from(t.y))].length, bars: t.y.length, ticks: ticks.slice(0, 6), blocks}; }"""


def test_notebook_10_flash_attention_s2_block_moves_the_views_and_the_panel(lab):
    first = _open(lab, "10_flash_attention.ipynb", "attention")
    header = first["header"].replace("\n", "")
    assert "s2=512" in header and "ascend910b2 · kernel attention" in header, header
    studio_header = lab.page.locator(".ks-studio .ks-header").first.inner_text()
    assert "attention (MIX_AIC_1_2)" in studio_header, studio_header
    strip = lab.page.evaluate(_STAGES_JS)  # four stage rows above the lanes, a bar per block of each
    assert strip and strip["rows"] == 4 and strip["bars"] >= 16, strip
    assert [x.split()[-1] for x in strip["ticks"][:4]] == ["bmm1", "bmm2", "vec1", "vec2"], strip
    assert sorted(strip["blocks"]) == ["0", "1", "2", "3"], strip
    code = lab.page.locator(f"{PANEL} .cm-content").inner_text()
    assert "S2 in 4 blocks of 512" in code and "Matmul" in code, code[:500]
    assert "attention kernel (MIX_AIC_1_2)" in code, code[:500]
    lab.assert_layout_ok("10, s2=512")
    _shot(lab, "10_flash_attention-s2_512")

    cards = lab.page.locator(".ks-studio .ks-cards").first.inner_text()
    bars = lab.page.evaluate(_TIMELINE_JS)
    idle = lab.page.evaluate(_IDLE_JS)
    assert "cross_wait" in idle, idle[:500]  # the idle view names the cross-core hand-offs the stages wait for
    lab.move_slider("s2", "ArrowLeft")  # 512 -> 256 columns per step
    moved = lab.wait_panel("attention", after_seq=int(first["seq"]), timeout_ms=BUILD_MS)
    assert "s2=256" in moved["header"].replace("\n", "")
    lab.page.wait_for_function("before => document.querySelector('.ks-studio .ks-cards').innerText !== before",
                               arg=cards, timeout=STEP_MS)
    lab.page.wait_for_function(f"before => ({_TIMELINE_JS})() !== before", arg=bars, timeout=STEP_MS)
    assert "s2 512 → 256" in lab.page.locator(".ks-studio .ks-changed").first.inner_text()
    lab.page.wait_for_function("sel => document.querySelector(sel + ' .cm-content').innerText"
                               ".includes('S2 in 8 blocks of 256')", arg=PANEL, timeout=STEP_MS)
    lab.page.wait_for_function(f"before => ({_IDLE_JS})() !== before", arg=idle, timeout=STEP_MS)
    lab.wait_figures_fit()
    assert lab.page.evaluate(_STAGES_JS)["bars"] >= 32  # eight blocks of 256 now
    lab.assert_layout_ok("10, s2=256")
    _shot(lab, "10_flash_attention-s2_256")

    # the Memory flow tab: the fused plan's bytes beside the one-kernel-per-op plan's (S and P through HBM there)
    lab.studio_tab("Memory flow")
    lab.page.wait_for_selector(".ks-studio .ks-flow-plan[data-plan='unfused']", timeout=STEP_MS)
    flow = lab.page.locator(".ks-studio .ks-flow-plan[data-plan='fused']").first.inner_text()
    assert "HBM" in flow, flow
    lab.assert_layout_ok("10, memory flow")
    _shot(lab, "10_flash_attention-memory_flow")
