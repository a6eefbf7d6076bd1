"""The Studio of a user's own Ascend C: a twin run (`ks.ascendc.load`) with its simulated timeline and idle causes,
the sync checker's findings with their file:line, and the source with those lines marked.

`AscendCStudio(kernel, measured=None)` shows one AscendCKernel (with `measured`, msprof's output folder of the same
kernel, a Measured tab: measured_view.py); the target list offers the profiles of the chip the twin compiled
for (another chip's memory sizes would change the run itself: re-run with `--target`), and L2 cold / warm re-times
the same call log. A refused choice shows its error over the views it already has.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any, cast

import ipywidgets as W

from ..ascendc.buffers import buffer_bars
from ..ascendc.measured import MeasuredComparison, compare_measured
from ..ascendc.msprof import read_msprof
from ..core.errors import KernelStudioError
from ..hw import get as get_profile
from ..hw import names as target_names
from ..sim.results import busiest_pipe
from . import render as R
from . import views as V
from .measured_view import MeasuredView
from .render.base import CSS, MONO
from .timeline_view import TimelineView
from .views.roofline import run_roofline

__all__ = ["AscendCStudio", "findings_html", "source_html", "same_chip_targets"]

_TABS = ("Timeline", "Roofline", "Sync check", "Source")
_UNRECORDED = "an unrecorded line"
_KIND_COLOR = {"race": "#c92a2a", "deadlock": "#c92a2a", "hang": "#c92a2a", "lost-signal": "#e67700"}


def same_chip_targets(target: str) -> list[str]:
    """Profiles a run compiled for `target` can be simulated on (same memory sizes and core counts)."""
    from ..twin.runner import chip_flags

    mine = chip_flags(target)
    return [t for t in target_names() if chip_flags(t) == mine]


def _sites(findings: Sequence[Any]) -> dict[tuple[str, int], list[str]]:
    """(file, line) -> the kinds of the findings that name that line."""
    marks: dict[tuple[str, int], list[str]] = {}
    for f in findings:
        for site in f.lines:
            if not site:
                continue
            path, _, line = site.rpartition(":")
            if line.isdigit():
                marks.setdefault((path, int(line)), []).append(f.kind)
    return marks


def findings_html(findings: Sequence[Any]) -> str:
    """The sync checker's findings, one block each: kind, where, what happens, the calls with their file:line."""
    if not findings:
        return (f'<div class="ks-sync" style="{CSS} color:#2b8a3e;">No sync findings: every hand-off between '
                "pipes and cores in this run is waited for, no flag is left unconsumed, and no barrier is "
                "redundant.</div>")
    blocks = []
    for f in findings:
        color = _KIND_COLOR.get(f.kind, "#495057")
        times = f" &middot; {f.occurrences} times" if f.occurrences > 1 else ""
        calls = "".join(f'<li style="{MONO}">{html.escape(c.what)} at <b>{html.escape(c.site or _UNRECORDED)}</b> '
                        f"(call #{c.index + 1})</li>" for c in f.calls)
        blocks.append(f'<div class="ks-finding" style="margin:4px 0 8px 0;"><span style="color:{color}; '
                      f'font-weight:600;">[{html.escape(f.kind)}]</span> {html.escape(f.core)} of block {f.block}'
                      f'{times}: {html.escape(f.message)}<ul style="margin:2px 0 0 0;">{calls}</ul></div>')
    n = len(findings)
    return (f'<div class="ks-sync" style="{CSS} line-height:1.45;"><div style="color:#868e96;">{n} '
            f'finding{"s" if n != 1 else ""} '
            f"of the sync checker on this run's call log</div>{''.join(blocks)}</div>")


def source_html(files: dict[str, str], findings: Sequence[Any]) -> str:
    """Each source file with line numbers; a line a finding names is marked and titled with the kinds."""
    marks = _sites(findings)
    parts = []
    for name, text in files.items():
        named = sorted({n for (p, n) in marks if p == name or p.endswith("/" + name) or name.endswith("/" + p)})
        rows = []
        for i, line in enumerate(text.splitlines(), 1):
            kinds = next((k for (p, n), k in marks.items() if n == i and (p == name or p.endswith("/" + name)
                                                                            or name.endswith("/" + p))), None)
            style = (f' style="background:#fff3bf;" title="{html.escape(", ".join(sorted(set(kinds))))}"'
                     if kinds else "")
            rows.append(f'<span class="ks-src-line"{style}><span style="color:#adb5bd;">{i:4d} </span>'
                        f"{html.escape(line)}</span>")
        where = (f' <span style="font-weight:400; color:#e67700;">lines a finding names: '
                 f'{", ".join(map(str, named))}</span>' if named else "")
        parts.append(f'<div style="{CSS} font-weight:600; margin-top:6px;">{html.escape(name)}{where}</div>'
                     f'<pre style="margin:0; line-height:1.35; white-space:pre; overflow-x:auto; {MONO}">'
                     + "\n".join(rows) + "</pre>")
    return ('<div class="ks-source" style="max-height:520px; overflow:auto; border:1px solid #e9ecef;">'
            + "".join(parts) + "</div>")


def _busiest(sim: Any) -> tuple[str, float]:
    """The busiest pipe and its busy share of the kernel's own time (the launch gap left out) on the cores used."""
    name, util = busiest_pipe(sim.metrics)
    kernel_us = sum(k["time_us"] for k in sim.kernels)
    return (name, util * sim.time_us / kernel_us) if name and kernel_us else ("", 0.0)


class AscendCStudio(W.VBox):
    """One run of a user's kernel: header, target and L2 controls, cards, and the Timeline / Sync / Source tabs."""

    def __init__(self, kernel: Any, *, sources: dict[str, str] | None = None, checked: bool = False,
                 title: str | None = None, measured: Any = None) -> None:
        self.kernel = kernel
        self.title = title or kernel.name  # the %%ascend_c NAME; the entry's own name when it differs is shown too
        self.checked = checked  # the outputs were compared with a reference (load raised if they differed)
        self.sources = dict(sources) if sources is not None else _user_files(kernel)
        self.findings = kernel.check_sync()
        self.sim = kernel.sim
        self.error: str | None = None
        self.header = W.HTML()
        targets = same_chip_targets(kernel.target)
        self.target = W.Dropdown(options=targets, value=kernel.target, description="target",
                                 layout=W.Layout(width="auto"))
        self.l2 = W.ToggleButtons(options=[("L2 cold", "cold"), ("L2 warm", "warm")], value="cold",
                                  style={"button_width": "auto"}, layout=W.Layout(width="auto"))
        self.banner = W.HTML()
        self.cards = W.HTML()
        self.capacity = W.HTML()
        self.timeline_view = TimelineView()
        self.roofline = R.new_roofline_figure()
        for fig in (self.timeline_view.figure, self.roofline):  # the labextension sizes them to their cell
            fig._config = {**fig._config, "responsive": True}  # (labextension/src/fit.ts)
        self.sync_view = W.HTML(findings_html(self.findings))
        self.source_view = W.HTML(source_html(self.sources, self.findings))
        self.tabs = W.Tab(children=[self.timeline_view, self.roofline, self.sync_view, self.source_view])
        self.tabs.titles = _TABS
        self.measured = read_msprof(measured) if measured is not None else None  # msprof's run, if given
        self.comparison: MeasuredComparison | None = None
        self.measured_view = MeasuredView()
        if self.measured is not None:
            self._add_measured_tab()
        self.target.observe(lambda ch: self.retime(), names="value")
        self.l2.observe(lambda ch: self.retime(), names="value")
        controls = W.HBox([self.target, self.l2], layout=W.Layout(flex_flow="row wrap", align_items="center"))
        super().__init__([self.header, controls, self.banner, self.cards, self.capacity, self.tabs])
        self.add_class("ks-studio")
        self.add_class("ks-ascendc")
        self._show()

    def show_measured(self, measured: Any) -> MeasuredComparison:
        """Read msprof's outputs of this kernel (an OPPROF_* folder or one of its files) and show them next to the
        simulation: the Measured tab and the measured time by the simulated one; returns the comparison."""
        self.measured = read_msprof(measured)
        self._add_measured_tab()
        self._show()  # sets self.comparison
        return cast(MeasuredComparison, self.comparison)

    def _add_measured_tab(self) -> None:
        if self.measured_view not in self.tabs.children:
            self.tabs.children = (*self.tabs.children, self.measured_view)
            self.tabs.titles = (*_TABS, "Measured")

    def retime(self) -> None:
        """Simulate the call log again on the chosen target and L2 protocol; an error keeps the last views."""
        try:
            sim = self.kernel.simulate(self.target.value, l2=self.l2.value)
        except KernelStudioError as e:
            self.error = f"{type(e).__name__}: {e}"
            self.banner.value = R.banner_html(self.error)
            return
        self.sim, self.error = sim, None
        self.banner.value = ""
        self._show()

    def _show(self) -> None:
        k, sim = self.kernel, self.sim
        outs = ", ".join(f"{html.escape(n)} {tuple(a.shape)} {a.dtype}" for n, a in k.outputs.items())
        check = ('<span style="color:#2b8a3e;">outputs match the reference</span>' if self.checked
                 else '<span style="color:#868e96;">outputs not checked (give a reference)</span>')
        entry = f" (entry {html.escape(k.name)})" if k.name != self.title else ""
        self.header.value = (f'<div class="ks-header" style="{CSS}"><b style="font-size:14px;">'
                             f'{html.escape(self.title)}</b>{entry} &middot; your Ascend C on the CPU twin &middot; '
                             f'block_dim {k.block_dim} &middot; '
                             f'{len(k.log):,} calls &middot; outputs: {outs} &middot; {check}</div>')
        pipe, util = _busiest(sim)
        n = len(self.findings)
        self.cards.value = (
            f'<div style="{CSS}">' + _card(f"{sim.time_us:,.2f} us", f"simulated time on {self.target.value}, "
                                           f"L2 {self.l2.value}", "the twin's call log, each call timed by the "
                                           "simulator that times designed kernels")
            + _card(pipe or "-", f"busiest pipe ({util:.0%} busy in the kernel)",
                                          "busy time over the kernel's own time (the launch gap left out) on the "
                                          "cores it ran on")
            + _card(str(n), "sync findings", "races, lost signals, hangs, deadlocks, redundant barriers")
            + self._measured_card() + "</div>")
        notes = sim.stats.get("trace_notes", [])
        if notes:
            self.cards.value += (f'<div style="{CSS} color:#868e96;">not timed: '
                                 f'{html.escape("; ".join(dict.fromkeys(notes)))}</div>')
        self.capacity.value = R.capacity_html(buffer_bars(k.log, self.target.value))
        R.update_roofline(self.roofline, run_roofline(sim, get_profile(self.target.value)))
        gaps = V.idle_gaps(sim, cores=None)
        tl = V.timeline_data(sim, gaps=gaps)
        self.timeline_view.update({"timeline": tl, "idle": V.idle_table(sim, tl["groups"], gaps=gaps)}, sim=sim)

    def _measured_card(self) -> str:
        """The measured task time by the simulated one (and the Measured tab redrawn), when msprof's run is given."""
        if self.measured is None:
            return ""
        self.comparison = cmp = compare_measured(self.kernel, self.measured, sim=self.sim)
        self.measured_view.update(cmp)
        if cmp.measured_task_us is None:
            return _card("-", "measured (no OpBasicInfo.csv)", "msprof's Task Duration is in OpBasicInfo.csv")
        return _card(f"{cmp.measured_task_us:,.2f} us", f"measured by msprof, x{cmp.task_ratio:.2f} the simulated "
                     "kernel", "Task Duration of OpBasicInfo.csv over the simulated kernel time (launch gap left "
                     "out); the Measured tab compares pipe by pipe")

    def summary(self) -> str:
        """Plain text of what the Studio shows (for terminals and tests)."""
        pipe, util = _busiest(self.sim)
        lines = [f"{self.title}: {self.sim.time_us:,.2f} us on {self.target.value} (L2 {self.l2.value}), "
                 f"busiest pipe {pipe} {util:.0%}, {len(self.findings)} sync findings"]
        lines += [str(f) for f in self.findings]
        if self.comparison is not None:
            lines.append(self.comparison.table())
        return "\n".join(lines)


def _card(value: str, label: str, title: str = "") -> str:
    return (f'<div class="ks-card" title="{html.escape(title)}" style="display:inline-block; margin:2px 14px 2px 0;">'
            f'<div style="font-size:17px; font-weight:600;">{html.escape(value)}</div>'
            f'<div style="font-size:10.5px; color:#868e96;">{html.escape(label)}</div></div>')


def _user_files(kernel: Any) -> dict[str, str]:
    """The kernel's own source files (not the launcher the twin adds), by the name the user knows them by."""
    named = dict(kernel.files)
    return {named.get(p, p): t for p, t in kernel.code.files.items()
            if p in named and re.search(r"\.(cpp|h|hpp|cc)$", p)}
