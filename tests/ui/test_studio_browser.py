"""The Studio in a real browser: JupyterLab, the tour notebook, run all, move a slider.

Needs Debian's chromium (`.ci/run` installs it); skips without it unless CI is set.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError("CI needs Debian's chromium for the browser tests: apt-get install -y chromium")
    pytest.skip("no chromium on this machine (apt-get install chromium)", allow_module_level=True)

playwright = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a free loopback port, serving a copy of the notebooks."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    port = _free_port()
    jupyter = Path(sys.executable).parent / "jupyter"
    log = open(work / "lab.log", "w")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--IdentityProvider.token=", "--ServerApp.password=", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.workspaces_dir={work / 'ws'}", f"--ServerApp.root_dir={work}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            urllib.request.urlopen(f"{url}/lab", timeout=2)
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.terminate()
                raise RuntimeError(f"JupyterLab did not start: {(work / 'lab.log').read_text()[-2000:]}") from None
            time.sleep(0.5)
    yield url
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


def _timeline_bases(page) -> str:
    return page.evaluate(f"() => {_timeline_js()}")


def test_tour_renders_the_studio_and_a_slider_moves_the_timeline(lab, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1500, "height": 2200})
    page.goto(f"{lab}/lab/tree/notebooks/00_tour.ipynb?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel", timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # run all finishes (the last cell printed the simulation summary); then the Studio, scrolled into
    # view (JupyterLab renders the cells in view), draws its figures
    page.wait_for_function("() => document.body.innerText.includes('--- plan_memory')", timeout=300_000)
    page.wait_for_selector(".ks-studio", state="attached", timeout=60_000)
    page.query_selector(".ks-studio").scroll_into_view_if_needed()
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
    page.close()


def _timeline_js() -> str:
    return ("JSON.stringify([...document.querySelectorAll('.ks-studio .js-plotly-plot')]"
            ".map(e => (e._fullData || []).map(t => t.base ? Array.from(t.base).slice(0, 80) : null)))")
