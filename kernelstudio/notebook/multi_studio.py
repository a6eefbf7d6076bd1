"""The Studio of a multi-device design: an `%%ascend_kernel` cell whose output is a ks.multi design
(MatmulAllReduce, AllGatherMatmul, MatmulReduceScatter) gets this widget instead of the single-chip one.

Controls from the cell's knobs (tile count, tail, engine, algorithm, device count: whatever the cell made a
knob), the cards, a per-device timeline (compute collapsed to a lane per device, expanded to its pipes on a
click; communication hidden and exposed shaded apart), the tile-count sweep, the link figures with their
sources and the generated MC2 Ascend C (ks.multi.codegen: kernel, tiling, host, the sub-operators and the
rank launcher), redrawn while its tab is open and on opening it after a move. Moving a control re-runs
the cell; a setting CANN's rules refuse shows its error in the banner and keeps the last good views, as the
single-chip Studio does.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ..core.errors import KernelStudioError
from ..multi.codegen import codegen as mc2_codegen
from ..multi.design import Mc2Design
from . import render as R
from .cell import CellError
from .live import LiveControls
from .render import multi as RM
from .session import StudioSession
from .studio import _control
from .views import code as VC
from .views import multi as VM

__all__ = ["MultiStudio"]

_TABS = ("Timeline", "Tile sweep", "Link", "Ascend C")


class MultiStudio(LiveControls, W.VBox):
    """One multi-device design's live views; `session` holds the cell and its last good design."""

    def __init__(self, session: StudioSession, *, listeners: list[Callable[[MultiStudio], None]] | None = None) -> None:
        self.session = session
        self.listeners = list(listeners or [])
        self.error: str | None = None
        self.data: dict[str, Any] = {}
        self.expanded: set[int] = set()
        self._prev: tuple[Any, dict[str, Any]] | None = None
        self._sweeps: dict[tuple, tuple[Any, ...]] = {}
        self._seq = 0
        self._hold = False
        self._scheduled = False
        self._knob_widgets: dict[str, W.Widget] = {}
        self.header = W.HTML(layout=W.Layout(flex="0 1 auto", min_width="0"))
        self.trace_button = W.Button(description="trace", icon="download", tooltip="Chrome trace for Perfetto "
                                     "(a process per device, a thread per lane)",
                                     layout=W.Layout(width="auto", flex="0 0 auto"))
        self.trace_button.on_click(lambda _: self._offer_trace())
        self.trace_link = W.HTML(layout=W.Layout(flex="0 1 auto", min_width="0"))
        self.tune_button = W.Button(description="Tune", icon="search", tooltip="search the knobs with ks.tune "
                                    "(the multi-device model times each setting)",
                                    layout=W.Layout(width="auto", flex="0 0 auto"))
        self.tune_button.on_click(lambda _: self.open_tune())
        self.tune_box = W.VBox()
        self.tune_panel: Any = None
        self.advice_button = W.Button(description="Advice", icon="lightbulb-o", tooltip="why the advisor has no "
                                      "moves for a multi-device design", layout=W.Layout(width="auto", flex="0 0 auto"))
        self.advice_button.on_click(lambda _: self.open_advice().refresh())
        self.insight_box = W.VBox()  # the Advice strip, once opened
        self.advice_strip: Any = None
        self.controls = W.HBox(layout=W.Layout(flex_flow="row wrap", align_items="center"))
        self.banner = W.HTML()
        self.cards = W.HTML()
        self.changed = W.HTML()
        self.expand_box = W.HBox(layout=W.Layout(flex_flow="row wrap", align_items="center"))
        self.legend = W.HTML()
        self.timeline = RM.new_multi_timeline_figure()
        self.sweep = RM.new_sweep_figure()
        for fig in (self.timeline, self.sweep):  # responsive: the labextension autosizes them to their cell
            fig._config = {**fig._config, "responsive": True}
        self.sweep_note = W.HTML()
        self.sweep_title = W.HTML()
        self.link = W.HTML()
        self.file_pick = W.ToggleButtons(style={"button_width": "auto"})
        self.code_view = W.HTML()
        self.files: dict[str, str] = {}
        self._code_of: Any = None  # the design whose code the tab shows
        self.tabs = W.Tab(children=[W.VBox([self.expand_box, self.legend, self.timeline]),
                                    W.VBox([self.sweep_title, self.sweep, self.sweep_note]), self.link,
                                    W.VBox([self.file_pick, self.code_view])])
        self.tabs.titles = _TABS
        self.tabs.selected_index = 0
        self.file_pick.observe(lambda ch: self._show_file(), names="value")
        self.tabs.observe(lambda ch: self._draw_code(), names="selected_index")
        super().__init__([W.HBox([self.header, self.advice_button, self.tune_button, self.trace_button,
                                  self.trace_link], layout=W.Layout(align_items="center", flex_flow="row wrap")),
                          self.controls, self.tune_box, self.insight_box, self.banner, self.cards, self.changed,
                          self.tabs])
        self.add_class("ks-studio")
        self.add_class("ks-multi-studio")
        self._build_controls()
        if isinstance(session.design, Mc2Design):
            self._show(session.design)

    def open_advice(self) -> Any:
        """Show the Advice strip under the controls: it says why a multi-device design gets no moves."""
        if self.advice_strip is None:
            from .advice_view import AdviceStrip

            self.advice_strip = AdviceStrip(self)
            self.insight_box.children = (self.advice_strip,)
        return self.advice_strip

    # --- controls ---------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        values = self.session.values
        self._knob_widgets = {}
        for name, k in self.session.knobs.items():
            w = _control(k, values.get(name, k.default))
            w.observe(lambda ch: self.request(), names="value")
            self._knob_widgets[name] = w
        self.controls.children = list(self._knob_widgets.values())

    @property
    def tune_target(self) -> str:
        """The chip the Tune panel tunes on: the cluster's (the cell names it)."""
        d = self.session.design
        return d.cluster.target if isinstance(d, Mc2Design) else self.session.target

    def expand(self, device: int, on: bool = True) -> None:
        """Draw device `device`'s compute per pipe (`on`) or as one lane again."""
        (self.expanded.add if on else self.expanded.discard)(device)
        d = self.session.design
        if isinstance(d, Mc2Design):
            self.data["timeline"] = VM.multi_timeline(d, expand=sorted(self.expanded))
            RM.update_multi_timeline(self.timeline, self.data["timeline"], keep_range=True)
            self.legend.value = RM.multi_legend_html(self.data["timeline"])
            self._expand_buttons(d)

    def _expand_buttons(self, d: Mc2Design) -> None:
        buttons = []
        for dev in range(d.cluster.devices):
            on = dev in self.expanded
            how = "as one lane" if on else "per pipe (its first AI core)"
            b = W.ToggleButton(value=on, description=f"device {dev}", icon="caret-down" if on else "caret-right",
                               tooltip=f"draw device {dev}'s compute {how}", layout=W.Layout(width="auto"))
            b.observe(lambda ch, dev=dev: self.expand(dev, ch["new"]), names="value")
            buttons.append(b)
        self.expand_box.children = [W.HTML('<span style="color:#868e96;">&nbsp;compute per pipe:</span>'), *buttons]

    # --- live rebuilds ----------------------------------------------------------------------------
    def _rebuild(self) -> Mc2Design:
        before = self.session.design, dict(self.session.values), dict(self.session.knobs)
        d = self.session.rebuild(self.knob_values(), strict=False)
        if not isinstance(d, Mc2Design):
            self.session.design, self.session.values, self.session.knobs = before
            raise KernelStudioError(f"design {self.session.name}: at these knobs the cell's output is no longer "
                                    "a ks.multi design; this Studio shows multi-device designs only (re-run "
                                    "the cell to get the single-chip Studio)")
        return d

    def _refusal(self, e: KernelStudioError) -> tuple[str, Any]:
        # a refusal from the library, raised in the cell: its own message, as the single-chip banner shows it
        cause = e.cause if isinstance(e, CellError) else None
        return (str(cause) if isinstance(cause, KernelStudioError) else str(e)), None

    def _fail(self, message: str, overflow: Any = None) -> None:
        self.error = message
        self.banner.value = R.banner_html(message)
        for fn in self.listeners:
            fn(self)

    def _sweep(self, d: Mc2Design) -> tuple[Any, ...]:
        """The tile-count sweep of this operator and cluster at these engine, algorithm and tail settings."""
        s = d.schedule_json()
        knobs = json.loads(s)
        key = (d.describe(), knobs["engine"], knobs["algorithm"], knobs["tail"])
        if key not in self._sweeps:
            if len(self._sweeps) > 16:
                self._sweeps.clear()
            self._sweeps[key] = d.sweep()
        return self._sweeps[key]

    # --- views ------------------------------------------------------------------------------------
    def _show(self, d: Mc2Design) -> None:
        self.error = None
        prev, prev_values = self._prev if self._prev is not None else (None, None)
        self.expanded = {e for e in self.expanded if e < d.cluster.devices}
        values = dict(self.session.values)
        self.data = VM.multi_data(d, prev, prev_values, values, name=self.session.name,
                                  expand=sorted(self.expanded), sweep=self._sweep(d))
        self._prev = (d, values)
        self.banner.value = ""
        self.header.value = RM.multi_header_html(self.data["cards"])
        self.cards.value = RM.multi_cards_html(self.data["cards"])
        self.changed.value = RM.multi_changed_html(self.data["changed"])
        self._expand_buttons(d)
        RM.update_multi_timeline(self.timeline, self.data["timeline"])
        self.legend.value = RM.multi_legend_html(self.data["timeline"])
        RM.update_sweep(self.sweep, self.data["sweep"])
        self.sweep_note.value = RM.sweep_note_html(self.data["sweep"])
        self.sweep_title.value = RM.sweep_title_html(self.data["sweep"])
        self.link.value = RM.link_html(self.data["link"])
        self._draw_code()
        self.trace_link.value = ""
        for fn in self.listeners:
            fn(self)

    # --- the generated code ---------------------------------------------------------------------
    def code_files(self) -> dict[str, str]:
        """path -> text of the design's generated MC2 operator: the MC2 kernel, its tiling header and host
        file first, then the sub-operators' files and main.cpp (the rank launcher)."""
        d = self.session.design
        if not isinstance(d, Mc2Design):
            return {}
        files = mc2_codegen(d).files
        first = [p for p in files if p.startswith(("op_kernel/", "op_host/")) and not p.split("/")[1].startswith(
            "mc2_")]
        return {p: files[p] for p in (*first, *(p for p in files if p not in first))}

    def _draw_code(self) -> None:
        """Fill the Ascend C tab from the design shown, when that tab is open and behind it."""
        d = self.session.design
        if self.tabs.selected_index != _TABS.index("Ascend C") or d is self._code_of or not isinstance(d, Mc2Design):
            return
        try:
            self.files = self.code_files()
        except KernelStudioError as e:  # a design the MC2 generator does not emit: say so in the tab
            self.files, self._code_of = {}, d
            self.file_pick.options = []
            self.code_view.value = (f'<div class="ks-code-refused" style="color:#c92a2a;">no generated code at this '
                                    f"setting: {html.escape(str(e))}</div>")
            return
        self._code_of = d
        current = self.file_pick.value
        if list(self.file_pick.options) != list(self.files):
            self.file_pick.options = list(self.files)
        self.file_pick.value = current if current in self.files else next(iter(self.files))
        self._show_file()

    def _show_file(self) -> None:
        path = self.file_pick.value
        if path in self.files:
            self.code_view.value = R.code_html(VC.highlight_cpp(self.files[path]))

    def _offer_trace(self) -> None:
        d = self.session.design
        if not isinstance(d, Mc2Design):
            return
        data = base64.b64encode(json.dumps(d.sim.to_chrome_trace()).encode()).decode()
        name = self.session.name
        self.trace_link.value = (f'<a download="{name}.trace.json" href="data:application/json;base64,{data}">'
                                 f"save {name}.trace.json</a> (open in ui.perfetto.dev)")

    # --- outside a front end ----------------------------------------------------------------------
    def summary(self) -> str:
        """Text of the Studio for consoles and notebook runs without a widget front end."""
        d = self.session.design
        if not isinstance(d, Mc2Design):
            return f"design {self.session.name}: not built ({self.error})"
        c = VM.multi_cards(d, self.session.name)
        lines = [d.summary(),
                 f"communication exposed: {c['unsplit_exposed_share']:.1%} of {c['unsplit_time_us']:,.1f} us "
                 f"unsplit -> {c['exposed_share']:.1%} of {c['time_us']:,.1f} us with {c['tiles']} tile"
                 f"{'s' if c['tiles'] > 1 else ''} "
                 f"(gain {c['gain']:+.1%})"]
        if self.session.knobs:
            lines.append("knobs: " + ", ".join(f"{n}={self.session.values.get(n)!r} of {list(k.choices)}"
                                               for n, k in self.session.knobs.items()))
        if self.error:
            lines.append(f"not applied: {self.error}")
        return "\n".join(lines)
