"""The Studio widget: controls from the cell's knobs, metric cards, capacity bars and the view tabs.

Moving a control re-runs the cell body with the new knob values and refreshes every view in place.
Moves are coalesced (a burst of slider events builds once, with the latest values) and a result
that finishes after a newer move was requested is dropped. A bad setting shows its error in a
banner and keeps the last good views. The views in sight (strips, the open tab) are redrawn first;
the hidden tabs once the controls have rested for `REST_S`, or at once when one is opened.
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ..core.errors import KernelStudioError
from ..schedule.knobs import Knob
from . import render as R
from . import views as V
from .live import LiveControls
from .render.strips import header_html, plan_html
from .session import StudioSession
from .timeline_view import TimelineView
from .views.targets import target_choices

__all__ = ["Studio"]

_TABS = ("Fused DAG", "Memory flow", "Timeline", "Roofline", "Passes", "Ascend C")
REST_S = 0.25  # the hidden tabs are redrawn once the controls have rested this long (s)


def _toggle_look(w: W.ToggleButton, name: str) -> None:
    """On reads as on at a glance: a filled, checked "name: on"; off is a plain "name: off" (its look in one message
    to the front end)."""
    with w.hold_sync():
        w.description = f"{name}: {'on' if w.value else 'off'}"
        w.icon = "check-square-o" if w.value else "square-o"
        w.button_style = "info" if w.value else ""
        w.tooltip = f"knob {name} is {'on' if w.value else 'off'}; click to turn it {'off' if w.value else 'on'}"


def _control(k: Knob, value: Any) -> W.Widget:
    """A slider for numeric choices, a toggle for on/off, a dropdown otherwise."""
    layout = W.Layout(width="auto")
    style = {"description_width": "initial"}
    if set(k.choices) <= {False, True} and len(k.choices) == 2:
        w = W.ToggleButton(value=bool(value), layout=W.Layout(width="auto", flex="0 0 auto"))
        _toggle_look(w, k.name)
        w.observe(lambda ch: _toggle_look(w, k.name), names="value")
        return w
    if all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in k.choices):
        return W.SelectionSlider(options=list(k.choices), value=value, description=k.name, style=style,
                                 continuous_update=True, layout=W.Layout(width="300px"))
    opts = [(str(c), c) for c in k.choices]
    return W.Dropdown(options=opts, value=value, description=k.name, style=style, layout=layout)


class Studio(LiveControls, W.VBox):
    """One design's live views; `session` holds the cell and its last good build."""

    def __init__(self, session: StudioSession, *, listeners: list[Callable[[Studio], None]] | None = None) -> None:
        self.session = session
        self.listeners = list(listeners or [])
        self.error: str | None = None
        self._prev = None
        self._prev_files: dict[str, str] | None = None
        self._files: dict[str, str] = {}
        self._data: dict[str, Any] = {}
        self._seq = 0  # moves requested
        self._done = 0  # the move the views show
        self._hold = False  # set_knobs moves several controls: build once, after the last
        self._scheduled = False  # a build is queued on the event loop
        self._knob_widgets: dict[str, W.Widget] = {}
        self._stale: set[int] = set()  # tabs whose view is behind the design shown
        self._pending: asyncio.TimerHandle | None = None  # their redraw, once the controls rest
        self.header = W.HTML()  # name, target, kernels; the fusion choices below it in `plan`
        self.plan = W.HTML()
        self.trace_link = W.HTML()
        fixed = W.Layout(width="auto", flex="0 0 auto")  # a button keeps its words: the header wraps instead
        self.trace_button = W.Button(description="trace", icon="download", tooltip="Chrome trace for Perfetto",
                                     layout=fixed)
        self.trace_button.on_click(lambda _: self._offer_trace())
        self.tune_button = W.Button(description="Tune", icon="search", tooltip="search the knobs with ks.tune",
                                    layout=W.Layout(width="auto", flex="0 0 auto"))
        self.tune_button.on_click(lambda _: self.open_tune())
        self.tune_box = W.VBox()
        self.tune_panel: Any = None
        self.advice_button = W.Button(description="Advice", icon="lightbulb-o", layout=fixed,
                                      tooltip="moves that would make this design faster, each simulated")
        self.advice_button.on_click(lambda _: self.open_advice().refresh())
        self.what_if_button = W.Button(description="What if", icon="microchip", layout=fixed,
                                       tooltip="change the chip's numbers (UB, L1, HBM, cores, ...) and compare chips")
        self.what_if_button.on_click(lambda _: self.open_what_if())
        self.insight_box = W.VBox()  # the Advice strip and the what-if panel, once opened
        self.advice_strip: Any = None
        self.what_if_panel: Any = None
        self._syncing_targets = False  # the target list is being redrawn, not moved by the user
        self.target = W.Dropdown(options=[(session.target, session.target)], value=session.target,
                                 description="target", layout=W.Layout(width="auto", flex="0 0 auto"))
        self.target_note = W.HTML(layout=W.Layout(flex="1 1 200px", min_width="0"))
        self._sync_targets(session.design)
        self.compare = W.Checkbox(value=session.compare, description="compare with unfused", indent=False,
                                  layout=W.Layout(width="auto"))
        self.l2 = W.ToggleButtons(options=[("L2 cold", "cold"), ("L2 warm", "warm")], value=session.l2,
                                  tooltips=["the run starts with nothing in L2: inputs come from HBM",
                                            "the run starts with L2 as the previous run left it, as a benchmark "
                                            "loop that reuses its inputs measures"],
                                  style={"button_width": "auto"}, layout=W.Layout(width="auto"))
        self.controls = W.HBox(layout=W.Layout(flex_flow="row wrap", align_items="center"))
        self.banner = W.HTML()
        self.cards = W.HTML()
        self.changed = W.HTML()
        self.capacity = W.HTML()
        self.dag = R.new_dag_view()
        self.flow = R.new_flow_figure()
        self.timeline_view = TimelineView()  # controls, legend, figure and the "why units idle" table
        self.timeline = self.timeline_view.figure
        self.roofline = R.new_roofline_figure()
        for fig in (self.timeline, self.roofline):  # responsive: the labextension autosizes them
            fig._config = {**fig._config, "responsive": True}  # to their cell's width (labextension/src/fit.ts)
        self.pass_pick = W.Dropdown(description="IR after", layout=W.Layout(width="auto"))  # a pass, or an analysis
        self.pass_view = W.HTML()
        self._picking = False  # the pass list is being redrawn, not picked from by the user
        self.file_pick = W.ToggleButtons(style={"button_width": "auto"})
        self.code_view = W.HTML()
        self.tabs = W.Tab(children=[
            self.dag, self.flow, self.timeline_view, self.roofline,
            W.VBox([self.pass_pick, self.pass_view]), W.VBox([self.file_pick, self.code_view])])
        self.tabs.titles = _TABS
        self.tabs.selected_index = 2
        # each tab's redraw from the design shown (`_data`, `_prev`), by title: a tab without one has nothing to redraw
        self._drawers: dict[str, Callable[[], None]] = {
            "Fused DAG": self._draw_dag,
            "Memory flow": lambda: R.update_flow(self.flow, self._data["flow"]),
            "Timeline": lambda: self.timeline_view.update(self._data, sim=self._prev.sim,
                                                          unfused=self._prev.unfused_sim),
            "Roofline": lambda: R.update_roofline(self.roofline, self._data["roofline"]),
            "Passes": self._draw_passes,
            "Ascend C": self._draw_code,
        }
        self.pass_pick.observe(lambda ch: self._show_pass(), names="value")
        self.file_pick.observe(lambda ch: self._show_file(), names="value")
        self.tabs.observe(lambda ch: self._tab_changed(), names="selected_index")
        self.target.observe(lambda ch: self._target_changed(ch["old"], ch["new"]), names="value")
        self.compare.observe(lambda ch: self.request(), names="value")
        self.l2.observe(lambda ch: self.request(), names="value")
        self.header.layout = W.Layout(flex="0 1 auto", min_width="0")
        self.trace_link.layout = W.Layout(flex="0 1 auto", min_width="0")
        super().__init__([W.HBox([self.header, self.advice_button, self.what_if_button, self.tune_button,
                                  self.trace_button, self.trace_link],
                                 layout=W.Layout(align_items="center", flex_flow="row wrap")), self.plan,
                          self.controls, self.tune_box, self.insight_box, self.banner, self.cards, self.changed,
                          self.capacity, self.tabs])
        self.add_class("ks-studio")
        self._build_controls()
        if session.design is not None:
            self._show(session.design)
            self._settle()  # the first drawing has every tab

    # --- advice and what-if -------------------------------------------------------------------------
    def open_advice(self) -> Any:
        """Show the Advice strip (the advisor's simulated moves, each with Apply) under the controls."""
        if self.advice_strip is None:
            from .advice_view import AdviceStrip

            self.advice_strip = AdviceStrip(self)
            self.insight_box.children = (self.advice_strip, *self.insight_box.children)
        return self.advice_strip

    def show_measured(self, measured: Any) -> Any:
        """msprof's outputs of this design's kernel (an OPPROF_* folder or one of its files) in a Measured tab, next
        to the simulation of the setting shown (redrawn as knobs move); returns the comparison."""
        from ..ascendc.measured import compare_measured
        from ..ascendc.msprof import read_msprof
        from .measured_view import MeasuredView

        run = read_msprof(measured)
        if "Measured" not in self.tabs.titles:
            self.measured_view = MeasuredView()
            self.tabs.children = (*self.tabs.children, self.measured_view)
            self.tabs.titles = (*_TABS, "Measured")
        self._drawers["Measured"] = lambda: self.measured_view.update(compare_measured(self._prev, run))
        self._drawers["Measured"]()
        return self.measured_view.cmp

    def open_what_if(self) -> Any:
        """Show the what-if panel (the profile's numbers as controls, chips side by side) under the controls."""
        if self.what_if_panel is None:
            from .whatif_view import WhatIfPanel

            self.what_if_panel = WhatIfPanel(self)
            self.insight_box.children = (*self.insight_box.children, self.what_if_panel)
        return self.what_if_panel

    # --- controls ---------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        d = self.session.design
        values = d.knobs if d is not None else {}
        self._knob_widgets = {}
        for name, k in self.session.knobs.items():
            w = _control(k, values.get(name, k.default))
            w.observe(lambda ch: self.request(), names="value")
            self._knob_widgets[name] = w
        self.controls.children = [*self._knob_widgets.values(), self.target, self.compare, self.l2,
                                  self.target_note]

    def _sync_targets(self, design: Any | None) -> None:
        """List the targets this design lowers on ("(provisional)" marked); the others, and why, in a note."""
        choices = target_choices(design)
        options = [(c["label"], c["name"]) for c in choices if c["ok"] or c["name"] == self.target.value]
        missing = [c for c in choices if not c["ok"] and c["name"] != self.target.value]
        note = "; ".join(c["why"] for c in missing)
        if options != list(self.target.options):
            self._syncing_targets = True
            try:
                value = self.target.value
                self.target.options = options
                self.target.value = value
            finally:
                self._syncing_targets = False
        self.target.tooltip = f"not listed: {note}" if note else "every profile lowers this design"
        self.target_note.value = ('<span style="color:#868e96; font-size:11px;">not listed: '
                                  + html.escape("; ".join(f"{c['name']} ({c['short']})" for c in missing))
                                  + "</span>" if missing else "")
        self.target_note.tooltip = note or None

    def _target_changed(self, old: str, new: str) -> None:
        if self._syncing_targets:
            return
        if self.tune_panel is not None:
            self.tune_panel.clear(f"target changed from {old} to {new}: the results tuned on {old} were cleared "
                                  f"(press Run to tune on {new})")
        self.request()

    def _rebuild(self) -> Any:
        # a control whose knob this setting no longer reaches (declared under an `if`) is ignored
        return self.session.rebuild(self.knob_values(), target=self.target.value, compare=self.compare.value,
                                    strict=False, l2=self.l2.value)

    def _refusal(self, e: KernelStudioError) -> tuple[str, Any]:
        return str(e), V.overflow_bar(e)

    def _fail(self, message: str, overflow: dict[str, Any] | None) -> None:
        self.error = message
        self.banner.value = R.banner_html(message, overflow)
        for fn in self.listeners:  # the side panel marks its code as the last valid setting
            fn(self)

    # --- views ------------------------------------------------------------------------------------
    def _show(self, d: Any) -> None:
        self.error = None
        for fn in self.listeners:  # first: the side panel gets the code before the heavier views update
            fn(self)
        data = V.sight_data(d, self._prev, self._files or None)  # each tab's data computed as it is drawn
        self._data = data
        self._prev_files, self._files = self._files, data["files"]
        self._prev = d
        self.banner.value = ""
        self.header.value = header_html(data["cards"])
        self.plan.value = plan_html(data["cards"])
        self._sync_targets(d)
        self.cards.value = R.cards_html(data["cards"])
        self.changed.value = R.changed_html(data["changed"])
        self.capacity.value = R.capacity_html(data["capacity"])
        self.trace_link.value = ""
        self._stale = set(range(len(self.tabs.children)))
        self._draw_tab(self.tabs.selected_index)
        self._later()

    def _draw_tab(self, i: int | None) -> None:
        """Redraw tab `i`'s view from the design shown, when it is behind it."""
        if i not in self._stale:
            return
        self._stale.discard(i)
        draw = self._drawers.get(self.tabs.titles[i])
        if draw is not None:
            draw()

    def _draw_dag(self) -> None:
        try:
            R.update_dag(self.dag, V.render_svg(self._data["dag_dot"]))
        except KernelStudioError as e:
            R.update_dag(self.dag, None, str(e))

    def _draw_passes(self) -> None:
        """The IR after each pass is printed only while the Passes tab is open."""
        if self.tabs.selected_index == _TABS.index("Passes"):
            self._load_passes()
        elif self.pass_pick.options or self.pass_view.value:
            self.pass_pick.options, self.pass_view.value = [], ""

    def _draw_code(self) -> None:
        files = list(self._data["files"])
        current = self.file_pick.value
        if list(self.file_pick.options) != files:
            self.file_pick.options = files
        self.file_pick.value = current if current in files else files[0]
        self._show_file()

    def _later(self) -> None:
        """Redraw the hidden tabs once the controls have rested for REST_S (each move puts it off again); at
        once where no event loop runs (a move from code outside a kernel)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            self._settle()
            return
        self._pending = loop.call_later(REST_S, self._settle)

    def _settle(self) -> None:
        """Redraw every tab that is behind the design shown, now."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        for i in sorted(self._stale):
            self._draw_tab(i)

    def _show_file(self) -> None:
        path = self.file_pick.value
        if path in self._files:
            self.code_view.value = R.code_html(V.highlight_cpp(self._files[path]))

    def _tab_changed(self) -> None:
        self._draw_tab(self.tabs.selected_index)  # a tab opened while it was behind: redrawn now
        if self.tabs.selected_index == _TABS.index("Passes") and not self.pass_pick.options:
            self._load_passes()

    def _load_passes(self) -> None:
        d = self.session.design
        if d is None:
            return
        self._passes = V.passes_data(d.program)
        keep = self.pass_pick.value
        names = [f"{p['name']} (+{p['added']} -{p['removed']})" if p["kind"] == "pass" else
                 f"{p['name']} (analysis)" for p in self._passes]  # short: the Studio may be narrow
        options = list(zip(names, range(len(names)), strict=True))
        last_pass = max(i for i, p in enumerate(self._passes) if p["kind"] == "pass")
        self._picking = True  # the picker's own moves below do not each print a pass: one print, at the end
        try:
            with self.pass_pick.hold_sync():  # the new list and the pick in one message to the front end
                if list(self.pass_pick.options) != options:
                    self.pass_pick.options = options
                self.pass_pick.value = keep if isinstance(keep, int) and keep < len(names) else last_pass
        finally:
            self._picking = False
        self._show_pass()

    def _show_pass(self) -> None:
        if self._picking:
            return
        i = self.pass_pick.value
        if isinstance(i, int) and 0 <= i < len(getattr(self, "_passes", [])):
            self.pass_view.value = R.diff_html(self._passes[i]["diff"])

    def _offer_trace(self) -> None:
        d = self.session.design
        if d is None:
            return
        trace = d.sim.to_chrome_trace(max_events=200_000)
        data = base64.b64encode(json.dumps(trace).encode()).decode()
        self.trace_link.value = (f'<a download="{d.name}.trace.json" href="data:application/json;base64,{data}">'
                                 f"save {d.name}.trace.json</a> (open in ui.perfetto.dev)")

    # --- outside a front end ----------------------------------------------------------------------
    def summary(self) -> str:
        """Text of the Studio for consoles and notebook runs without a widget front end."""
        d = self.session.design
        if d is None:
            return f"design {self.session.name}: not built ({self.error})"
        lines = [d.report(show=False)] if d.unfused_sim is not None else [d.sim.summary()]
        if self.session.knobs:
            lines.append("knobs: " + ", ".join(f"{n}={d.knobs.get(n)!r} of {list(k.choices)}"
                                               for n, k in self.session.knobs.items()))
        if self.error:
            lines.append(f"not applied: {self.error}")
        return "\n".join(lines)
