"""Drive JupyterLab in a real browser: open notebooks, run them, move sliders, read the Ascend C panel."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import nbformat

PANEL = "#kernelstudio-ascend-c"
BOOT_MS = 120_000     # cold page + kernel + first build; generous for a loaded 2-core machine
STEP_MS = 30_000


class Lab:
    """One browser page on a JupyterLab server."""

    def __init__(self, page: Any, base: str, root: Path) -> None:
        self.page = page
        self.base = base
        self.root = root
        self.console: list[str] = []
        self.screenshot: Path | None = None
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("dialog", lambda d: d.accept())

    # --- notebooks -------------------------------------------------------------------------------
    def write_notebook(self, name: str, cells: list[str]) -> str:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, self.root / name)
        return name

    def open(self, name: str, *, reset: bool = True) -> None:
        """Open `name` (on a fresh workspace unless reset=False) and wait for its kernel to be idle."""
        self.page.goto(f"{self.base}/lab/tree/{name}{'?reset' if reset else ''}")
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=BOOT_MS)
        self.wait_notebook(name)

    def wait_notebook(self, name: str) -> None:
        self.page.wait_for_function(
            """name => { const w = window.jupyterapp?.shell?.currentWidget;
                 return w && w.context && w.context.path.endsWith(name)
                   && w.sessionContext.session?.kernel?.status === 'idle'; }""",
            arg=name, timeout=BOOT_MS)

    def open_another(self, name: str) -> None:
        """Open a second notebook in the same page (a new tab in the main area)."""
        self.page.evaluate("name => window.jupyterapp.commands.execute('docmanager:open', {path: name})", name)
        self.wait_notebook(name)

    def activate(self, name: str) -> None:
        self.page.evaluate(
            """name => { const app = window.jupyterapp;
                 for (const w of app.shell.widgets('main')) {
                   if (w.context && w.context.path.endsWith(name)) { app.shell.activateById(w.id); return; } }
                 throw new Error('no open notebook ' + name); }""", name)

    def run_all(self) -> None:
        """Run every cell of the current notebook and wait until they have run."""
        self.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

    def save(self) -> None:
        self.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        self.page.wait_for_timeout(300)

    def restart_kernel(self) -> None:
        self.page.evaluate("""async () => { const w = window.jupyterapp.shell.currentWidget;
                                 await w.sessionContext.session.kernel.restart(); }""")
        self.page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'",
            timeout=BOOT_MS)

    def execute(self, code: str) -> None:
        """Run `code` in the current notebook's kernel (not as a cell) and wait until it is done."""
        status = self.page.evaluate(
            """async code => { const w = window.jupyterapp.shell.currentWidget;
                 const reply = await w.sessionContext.session.kernel.requestExecute({code}).done;
                 return reply.content.status; }""", code)
        assert status == "ok", f"kernel code failed ({status}): {code[:200]}"

    # --- widgets ---------------------------------------------------------------------------------
    def move_slider(self, description: str, key: str = "ArrowRight") -> None:
        """Press `key` on the handle of the ipywidgets slider labelled `description`."""
        slider = self.page.locator(".widget-slider", has=self.page.locator(".widget-label", has_text=description))
        handle = slider.first.locator(".noUi-handle")
        handle.scroll_into_view_if_needed()
        handle.focus()
        handle.press(key)

    # --- the Ascend C panel ------------------------------------------------------------------------
    def panel(self) -> dict[str, str]:
        """The panel's data attributes (design, seq, file, changed) and its header text."""
        return self.page.evaluate(
            """sel => { const p = document.querySelector(sel); if (!p) return {};
                 const h = p.querySelector('.ks-panel-header');
                 return {...p.dataset, header: h ? h.innerText : '', visible: String(p.offsetWidth > 0)}; }""",
            PANEL)

    def wait_panel(self, design: str, *, after_seq: int | None = None, timeout_ms: int = STEP_MS) -> dict[str, str]:
        """Wait until the panel shows `design` (with a seq other than `after_seq`) and is on screen."""
        self.page.wait_for_function(
            """([sel, design, seq]) => { const p = document.querySelector(sel);
                 return p && p.offsetWidth > 0 && p.dataset.design === design
                   && (seq === null || p.dataset.seq !== String(seq)); }""",
            arg=[PANEL, design, after_seq], timeout=timeout_ms)
        return self.panel()

    def changed_lines(self) -> list[str]:
        """Text of the highlighted (changed) lines the editor has rendered."""
        return self.page.locator(f"{PANEL} .ks-changed-line").all_inner_texts()

    def highlighted_tokens(self) -> int:
        """How many syntax-highlighted spans the panel's editor shows (0 when no C++ mode is active)."""
        return self.page.evaluate(
            "sel => document.querySelectorAll(sel + ' .cm-line span[class]').length", PANEL)

    def click_tab(self, path: str) -> None:
        self.page.locator(f"{PANEL} .ks-panel-tab[data-path='{path}']").click()

    def warnings(self, needle: str) -> list[str]:
        return [m for m in self.console if needle in m]

    # --- clean-up ---------------------------------------------------------------------------------
    def shutdown_kernels(self) -> None:
        with urllib.request.urlopen(f"{self.base}/api/sessions", timeout=10) as r:
            sessions = json.load(r)
        for s in sessions:
            req = urllib.request.Request(f"{self.base}/api/sessions/{s['id']}", method="DELETE")
            try:
                urllib.request.urlopen(req, timeout=10).close()
            except OSError:
                pass  # already gone
        time.sleep(0.2)
