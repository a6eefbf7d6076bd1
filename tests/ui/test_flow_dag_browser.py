"""The Memory flow, Fused DAG and Roofline tabs of the tour's Studio in a real browser: labels off the bars and
inside the tab, the whole DAG in its box, the zoom control, the roofs' labels.

Needs Debian's chromium (`.ci/run` installs it); skips without it unless CI is set.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .notebooks import run_tour_page

ROOT = Path(__file__).resolve().parents[2]

# every node label's box against every node's box and every other label's box, and against the tab's edges
_FLOW_JS = """() => {
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
                        && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const out = [];
  const tab = document.querySelector('.ks-studio .ks-flow').getBoundingClientRect();
  for (const svg of document.querySelectorAll('.ks-studio .ks-sankey')) {
    const labels = [...svg.querySelectorAll('text.ks-node-label')].map(e => [e.textContent, e.getBoundingClientRect()]);
    const nodes = [...svg.querySelectorAll('rect.ks-node')].map(e => e.getBoundingClientRect());
    for (const [t, r] of labels) {
      if (nodes.some(n => hit(r, n))) out.push('on a bar: ' + t);
      if (r.left < tab.left - 1 || r.right > tab.right + 1) out.push('clipped: ' + t);
    }
    for (let i = 0; i < labels.length; i++)
      for (let j = i + 1; j < labels.length; j++)
        if (hit(labels[i][1], labels[j][1])) out.push('overlap: ' + labels[i][0] + ' / ' + labels[j][0]);
  }
  return {sankeys: document.querySelectorAll('.ks-studio .ks-sankey').length, problems: out};
}"""


@pytest.fixture(scope="module")
def studio_page(lab_server, browser):
    base, root = lab_server
    if not (root / "notebooks").exists():
        shutil.copytree(ROOT / "notebooks", root / "notebooks")
    page = browser.new_page(viewport={"width": 1500, "height": 1300})
    run_tour_page(page, f"{base}/lab/tree/notebooks/00_tour.ipynb?reset")
    yield page
    page.close()


def _tab(page, title: str) -> None:
    page.click(f".ks-studio .lm-TabBar-tab:has-text('{title}')")
    page.wait_for_timeout(500)


def test_flow_labels_sit_off_the_bars_and_inside_the_tab(studio_page):
    page = studio_page
    _tab(page, "Memory flow")
    page.wait_for_selector(".ks-studio .ks-sankey", state="visible", timeout=30_000)
    got = page.evaluate(_FLOW_JS)
    assert got["sankeys"] == 2
    assert got["problems"] == []


def test_dag_fits_its_box_and_zooms(studio_page):
    page = studio_page
    _tab(page, "Fused DAG")
    box = page.evaluate("""() => { const s = document.querySelector('.ks-studio .ks-dag svg').getBoundingClientRect();
        const d = document.querySelector('.ks-studio .ks-dag').getBoundingClientRect();
        return [s.width, s.height, d.width, window.innerHeight]; }""")
    width, height, room, window_h = box
    assert 0 < width <= room + 1 and 0 < height <= 0.75 * window_h + 1  # the whole graph is in view
    page.click(".ks-studio .ks-dag-view button:has-text('200 %')")
    page.wait_for_function("() => (document.querySelector('.ks-studio .ks-dag svg').getAttribute('width') || '')"
                           ".endsWith('pt')", timeout=30_000)
    zoomed = page.evaluate("() => document.querySelector('.ks-studio .ks-dag svg').getBoundingClientRect().width")
    assert zoomed > width


def test_roofline_names_its_roofs(studio_page):
    page = studio_page
    _tab(page, "Roofline")
    page.wait_for_function("() => [...document.querySelectorAll('.ks-studio .annotation-text')]"
                           ".some(e => e.textContent.includes('cube peak'))", timeout=30_000)
    texts = page.evaluate("() => [...document.querySelectorAll('.ks-studio .annotation-text')].map(e => e.textContent)")
    assert "float16 cube peak 353.9 TFLOPS" in texts and "HBM 1,260 GB/s (measured)" in texts
    assert any(t.startswith("ridge ") for t in texts)
    ticks = page.evaluate("() => [...document.querySelectorAll('.ks-studio .xtick text')].map(e => e.textContent)")
    assert "1k" in ticks or "100" in ticks


# bytes in and out of every drawn node, summed over the bands the SVG draws (their data-bytes)
_BALANCE_JS = """() => [...document.querySelectorAll('.ks-studio .ks-sankey')].map(svg => {
  const nodes = [...svg.querySelectorAll('rect.ks-node')].map(e => ({i: e.dataset.node, kind: e.dataset.kind,
                                                                    name: e.dataset.name, in: 0, out: 0}));
  const by = Object.fromEntries(nodes.map(n => [n.i, n]));
  for (const b of svg.querySelectorAll('path.ks-band')) {
    by[b.dataset.source].out += Number(b.dataset.bytes);
    by[b.dataset.target].in += Number(b.dataset.bytes);
  }
  return nodes;
})"""


def test_every_drawn_node_that_only_moves_bytes_balances(studio_page):
    page = studio_page
    _tab(page, "Memory flow")
    page.wait_for_selector(".ks-studio .ks-sankey", state="visible", timeout=30_000)
    plans = page.evaluate(_BALANCE_JS)
    assert len(plans) == 2  # fused and unfused
    for nodes in plans:
        kinds = {n["kind"] for n in nodes}
        assert {"source", "sink", "move"} <= kinds, kinds
        for n in nodes:
            if n["kind"] == "move":
                assert n["in"] == n["out"] > 0, n
            elif n["kind"] == "source":
                assert n["in"] == 0 < n["out"], n
            elif n["kind"] == "sink":
                assert n["out"] == 0 < n["in"], n
        names = {n["name"] for n in nodes}
        assert {"HBM (read)", "L2 (read)", "GM read", "GM write"} <= names, names  # HBM and L2 apart



def test_flow_labels_stay_apart_in_a_narrow_studio(studio_page):
    """At 1,100 px with the side panel open the Studio is ~500 px wide: the flow still fits its tab and no
    label touches a bar or another label (every other column's top label sits one block higher)."""
    page = studio_page
    page.set_viewport_size({"width": 1100, "height": 1300})
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # as the panel opening by itself does here
    try:
        _tab(page, "Memory flow")
        page.wait_for_timeout(800)
        width = page.evaluate("() => document.querySelector('.ks-studio').getBoundingClientRect().width")
        assert 420 <= width < 640, width  # the narrow layout this test is about
        got = page.evaluate(_FLOW_JS)
        assert got["sankeys"] == 2 and got["problems"] == [], got
    finally:
        page.set_viewport_size({"width": 1500, "height": 1300})
