"""Real-browser fixtures: one JupyterLab server per test module, Debian chromium driven by playwright.

Without /usr/bin/chromium (or playwright) the browser tests skip, except when CI is set: there they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .lab import Lab

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def chromium_path() -> str | None:
    for candidate in (os.environ.get("KS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _need(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what}: the browser tests must run in CI (.ci/run installs chromium)")
    pytest.skip(what)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """A JupyterLab server on a free port, rooted in a temporary folder; yields (base_url, root)."""
    if chromium_path() is None:
        _need("chromium is not installed (apt-get install chromium)")
    root = tmp_path_factory.mktemp("lab")
    work = tmp_path_factory.mktemp("lab_state")
    port = _free_port()
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
           "--IdentityProvider.token=", "--ServerApp.password=", "--LabApp.expose_app_in_browser=True",
           f"--LabApp.workspaces_dir={work / 'workspaces'}", f"--ServerApp.root_dir={root}",
           "--ServerApp.disable_check_xsrf=True"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    settings = work / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(work / "runtime"), "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "JUPYTERLAB_SETTINGS_DIR": str(work / "settings")}
    log = open(work / "server.log", "wb")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/status", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            log.close()
            raise RuntimeError(f"JupyterLab did not start; see {work / 'server.log'}:\n"
                               + (work / "server.log").read_text()[-3000:])
        time.sleep(0.3)
    yield base, root
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


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
    """A fresh browser page on the shared server; saves `panel.png` under the test's tmp dir at the end."""
    base, root = lab_server
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    page = context.new_page()
    session = Lab(page, base, root)
    yield session
    try:
        page.screenshot(path=str(tmp_path / "panel.png"))
        session.screenshot = tmp_path / "panel.png"
    finally:
        session.shutdown_kernels()
        context.close()
