"""The DeepSeek composites in a real browser: the Studio cells of notebooks 05 (MlaProlog, 21 kernels) and 07
(the MoE block, 20 kernels) run in JupyterLab; one knob moves (T, imbalance) and the views, the cards and the
Ascend C panel follow (its kernel picker, the file of the CANN-named kernel). Screenshots at 1,100 px wide go
to artifacts/ui/ (KS_UI_ARTIFACTS)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from .lab import PANEL, STEP_MS

pytestmark = pytest.mark.slow

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ARTIFACTS = Path(os.environ.get("KS_UI_ARTIFACTS", Path(__file__).resolve().parents[2] / "artifacts" / "ui"))
BUILD_MS = 90_000  # a composite's first build in a cold kernel on a loaded 2-core machine

# the timeline's lane labels (y ticks) and the widths of its bars, to see a knob move it
_TIMELINE_JS = """() => { const p = [...document.querySelectorAll('.ks-studio .js-plotly-plot')]
  .find(e => e._fullLayout && e.closest('.widget-tab-contents'));
  if (!p || !p._fullData || !p._fullData.length) return null;
  return JSON.stringify(p._fullData.map(t => t.x ? Array.from(t.x).slice(0, 400) : null)); }"""


# the Timeline tab's height, its load strip's columns, and whether the timeline's title line meets the figure's
# modebar, the unfused plan's title runs past the figure or a capacity label wraps
_TAB_JS = """() => { const tab = document.querySelector('.ks-studio .widget-tab-contents .ks-timeline');
  const box = e => e ? e.getBoundingClientRect() : null;
  const t = box(tab.querySelector('.ks-timeline-title')), m = box(tab.querySelector('.modebar'));
  const meets = !!(t && m && t.bottom > m.top && t.top < m.bottom && t.right > m.left && t.left < m.right);
  const labels = [...document.querySelectorAll('.ks-studio .ks-capacity .ks-bar-row > span:last-child')];
  const fig = box(tab.querySelector('.js-plotly-plot'));
  const un = [...tab.querySelectorAll('.annotation-text')].find(a => a.textContent.startsWith('unfused plan'));
  const u = box(un);
  return {unfusedTitleInside: !!(u && fig && u.left >= fig.left - 1 && u.right <= fig.right + 1),
          height: box(tab).height, rows: tab.querySelectorAll('.ks-load-row').length,
          cores: tab.querySelectorAll('.ks-load-core').length, titleMeetsModebar: meets,
          wrapped: labels.filter(l => { const r = document.createRange(); r.selectNodeContents(l);
                                        return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; })
                         .map(l => l.innerText)}; }"""


def _studio_cells(name: str) -> list[str]:
    """The notebook's first cells up to and including its `%%ascend_kernel` cell (the rest prints reports)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    last = next(i for i, c in enumerate(code) if c.startswith("%%ascend_kernel"))
    return code[: last + 1]


def _shot(lab, name: str) -> Path:
    """The page at 1,100 px wide (notebook and panel) as `name`.png, and the Studio's view on screen (on a
    window tall enough to hold it) as `name`-view.png, under ARTIFACTS."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    lab.page.screenshot(path=str(path))
    size = lab.page.viewport_size
    lab.page.set_viewport_size({"width": size["width"], "height": 3000})
    lab.page.wait_for_timeout(500)
    view = lab.page.locator(".ks-studio .widget-tab-contents").first
    view.scroll_into_view_if_needed()
    view.screenshot(path=str(ARTIFACTS / f"{name}-view.png"))
    lab.page.set_viewport_size(size)
    lab.page.wait_for_timeout(300)
    return path


def _open(lab, notebook: str, design: str) -> dict[str, str]:
    lab.set_viewport(1100, 1400)
    lab.open(lab.write_notebook(notebook, _studio_cells(notebook)))
    lab.run_all()
    panel = lab.wait_panel(design, timeout_ms=BUILD_MS)
    assert lab.left_collapsed(), "at 1,100 px the panel opening collapses the file browser"
    lab.wait_ran()
    lab.wait_studio_drawn()
    lab.page.locator(".ks-studio").first.scroll_into_view_if_needed()
    lab.studio_tab("Timeline")
    lab.wait_figures_fit()
    return panel


def _pick_kernel(lab, kernel: str) -> str:
    """Pick `kernel` in the panel's kernel picker; the text of the file shown."""
    lab.page.locator(f"{PANEL} select.ks-panel-kernel").select_option(kernel)
    lab.page.wait_for_function("([sel, k]) => document.querySelector(sel).dataset.kernel === k",
                               arg=[PANEL, kernel], timeout=STEP_MS)
    return lab.page.locator(f"{PANEL} .cm-content").inner_text()


def _kernel_options(lab) -> list[str]:
    return lab.page.locator(f"{PANEL} select.ks-panel-kernel option").evaluate_all("os => os.map(o => o.value)")


def test_notebook_07_moe_block_imbalance_moves_the_views_and_the_panel(lab):
    first = _open(lab, "07_moe.ipynb", "moe")
    assert "imbalance=uniform" in first["header"].replace("\n", "") and "ascend910b2 · 20 kernels" in first["header"]
    kernels = _kernel_options(lab)
    assert len(kernels) == 20 and "moe_grouped_matmul" in kernels
    code = _pick_kernel(lab, "moe_grouped_matmul")
    assert "MoeGroupedMatmul" in code
    tabs = lab.page.locator(f"{PANEL} .ks-panel-tab").evaluate_all("ts => ts.map(t => t.dataset.path)")
    assert tabs == ["op_kernel/moe_grouped_matmul.cpp", "op_host/moe_grouped_matmul_tiling.h",
                    "op_host/moe_grouped_matmul.cpp", "main.cpp"]
    lab.assert_layout_ok("07, uniform")
    tab = lab.page.evaluate(_TAB_JS)
    assert tab["rows"] == 2 and tab["cores"] == 2 * 24, tab  # gate_up and down, a column per cube core
    assert not tab["titleMeetsModebar"] and tab["wrapped"] == [] and tab["unfusedTitleInside"], tab
    assert "imbalance cost" in lab.page.locator(".ks-studio .ks-cards").first.inner_text()
    _shot(lab, "07_moe-uniform")

    cards = lab.page.locator(".ks-studio .ks-cards").first.inner_text()
    bars = lab.page.evaluate(_TIMELINE_JS)
    lab.page.locator(".ks-studio .widget-dropdown", has=lab.page.locator("label", has_text="imbalance")) \
        .locator("select").select_option("one_hot")
    moved = lab.wait_panel("moe", after_seq=int(first["seq"]), timeout_ms=BUILD_MS)
    assert "imbalance=one_hot" in moved["header"].replace("\n", "")
    lab.page.wait_for_function("before => document.querySelector('.ks-studio .ks-cards').innerText !== before",
                               arg=cards, timeout=STEP_MS)
    lab.page.wait_for_function(f"before => ({_TIMELINE_JS})() !== before", arg=bars, timeout=STEP_MS)
    assert "imbalance uniform → one_hot" in lab.page.locator(".ks-studio .ks-changed").first.inner_text()
    assert lab.page.evaluate(f"() => document.querySelector('{PANEL}').dataset.kernel") == "moe_grouped_matmul"
    lab.wait_figures_fit()
    lab.assert_layout_ok("07, one_hot")
    _shot(lab, "07_moe-one_hot")


def test_notebook_05_mla_prolog_tokens_move_the_views_and_the_panel(lab):
    first = _open(lab, "05_mla_prolog.ipynb", "mla_prolog")
    assert "ascend910b2 · 21 kernels" in first["header"]
    header = lab.page.locator(".ks-studio .ks-header").first.inner_text()
    assert "21 kernels: cube_vector (MIX_AIC_1_2), " in header and header.count("(AIV_ONLY)") == 1, header
    kernels = _kernel_options(lab)
    assert len(kernels) == 21 and "mla_prolog_scatter" in kernels
    assert "MlaPrologScatter" in _pick_kernel(lab, "mla_prolog_scatter")
    lab.assert_layout_ok("05, T=1")
    _shot(lab, "05_mla_prolog-T1")

    cards = lab.page.locator(".ks-studio .ks-cards").first.inner_text()
    bars = lab.page.evaluate(_TIMELINE_JS)
    lab.move_slider("T")  # 1 -> 128 tokens
    moved = lab.wait_panel("mla_prolog", after_seq=int(first["seq"]), timeout_ms=BUILD_MS)
    assert "T=128" in moved["header"].replace("\n", "")
    lab.page.wait_for_function("before => document.querySelector('.ks-studio .ks-cards').innerText !== before",
                               arg=cards, timeout=STEP_MS)
    lab.page.wait_for_function(f"before => ({_TIMELINE_JS})() !== before", arg=bars, timeout=STEP_MS)
    assert "T 1 → 128" in lab.page.locator(".ks-studio .ks-changed").first.inner_text()
    lab.wait_figures_fit()
    lab.assert_layout_ok("05, T=128")
    tab = lab.page.evaluate(_TAB_JS)
    assert tab["height"] < 3000 and tab["rows"] == 0 and not tab["titleMeetsModebar"], tab  # was 29,553 px
    assert tab["wrapped"] == [] and tab["unfusedTitleInside"], tab
    assert "fusion of kernel rms_norm_mul_1" in lab.page.locator(".ks-studio .ks-plan").first.inner_text()
    _shot(lab, "05_mla_prolog-T128")
