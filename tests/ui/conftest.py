"""Real-browser fixtures: one JupyterLab server per test module, Debian chromium driven by playwright.

Without /usr/bin/chromium (or playwright) the browser tests skip, except when CI is set: there they fail.
"""

from __future__ import annotations

import os

import pytest

from .lab import CHROMIUM_ARGS, Lab, chromium_path, jupyter_lab


def _need(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what}: the browser tests must run in CI (.ci/run installs chromium)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """A JupyterLab server on a free port, rooted in a temporary folder; yields (base_url, root)."""
    if chromium_path() is None:
        _need("chromium is not installed (apt-get install chromium)")
    root = tmp_path_factory.mktemp("lab")
    with jupyter_lab(root, tmp_path_factory.mktemp("lab_state")) as base:
        yield base, root


@pytest.fixture(scope="module")
def browser(lab_server):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("playwright is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def lab(lab_server, browser, tmp_path):
    """A fresh browser page on the shared server; saves `panel.png` under the test's tmp dir at the end and
    fails the test when the page had an uncaught exception or a console error (lab.ALLOWED_CONSOLE_ERRORS
    lists the few allowed)."""
    base, root = lab_server
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    page = context.new_page()
    session = Lab(page, base, root)
    yield session
    try:
        page.screenshot(path=str(tmp_path / "panel.png"))
        session.screenshot = tmp_path / "panel.png"
    finally:
        context.close()  # first: kernels shut down under an open page make JupyterLab log canceled requests
        session.shutdown_kernels()
    session.errors.check()
