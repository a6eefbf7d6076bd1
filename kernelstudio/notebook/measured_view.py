"""The Studio's Measured tab: msprof's measurement of a kernel next to its simulation (`ks.ascendc.compare_measured`).

- `measured_html(cmp)`: the task time measured and predicted, and the per-pipe table (measured us, predicted us,
  measured / predicted) with a pair of bars per row on one scale, then what differs between the two runs;
- `measured_lanes(cmp, core)`: plain data for one core's lanes from the simulator's trace.json, each pipe twice
  (measured, then predicted, both from the core's first event), when a trace.json was read;
- `MeasuredView`: both, with a core picker when the trace has several cores.

Nothing here computes a time: the numbers are the comparison's and the trace's.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from ..ascendc.measured import MeasuredComparison
from .render.base import CSS
from .views.style import LANE_COLORS, shade

__all__ = ["measured_html", "measured_lanes", "measured_figure", "MeasuredView", "MEASURED", "PREDICTED"]

MEASURED, PREDICTED = "#343a40", "#adb5bd"  # the pair of bars of a row: msprof's, the simulator's
_ORDER = ("MTE2", "MTE1", "CUBE", "FIXP", "VECTOR", "MTE3", "SCALAR", "FLOWCTRL")
_LANE_OF = {"M": "CUBE", "V": "VECTOR", "S": "SCALAR", "FIX": "FIXP", "FLOW": "FLOWCTRL"}
_BAR_PX = 120
_LANE_PX, _MARGIN_PX = 17, 76


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v:,.3f}"


def _ratio_html(r: float | None) -> str:
    if r is None:
        return '<span style="color:#adb5bd;">-</span>'
    color = "#c92a2a" if r > 1.5 else "#1c7ed6" if r < 1 / 1.5 else "#212529"
    return f'<span style="color:{color}; font-weight:600;">{r:.2f}x</span>'


def measured_html(cmp: MeasuredComparison) -> str:
    """The task line, the per-pipe table with paired bars, the notes and the files read."""
    t = cmp.task_ratio
    if cmp.measured_task_us is not None:
        task = (f'<div class="ks-measured-task" style="margin:2px 0 6px 0;"><b>{cmp.measured_task_us:,.3f} us</b> '
                f"measured (msprof Task Duration) &middot; <b>{cmp.predicted_task_us:,.3f} us</b> simulated on "
                f"{html.escape(cmp.target)} (the kernel, launch gap left out) &middot; {_ratio_html(t)}</div>")
    else:
        task = ('<div class="ks-measured-task" style="color:#868e96; margin:2px 0 6px 0;">no OpBasicInfo.csv: no '
                "task time to compare</div>")
    top = max([v for r in cmp.rows for v in (r.measured_us, r.predicted_us) if v] or [1.0])
    cell = "padding:1px 8px; white-space:nowrap; text-align:{};"
    head = "".join(f'<th style="padding:1px 8px; text-align:{a};">{h}</th>' for h, a in (
        ("unit", "left"), ("pipe", "left"), ("measured us", "right"), ("predicted us", "right"),
        ("measured / predicted", "right"), ("", "left")))
    body = []
    for r in cmp.rows:
        lane = r.lane if r.pipe != "core" else "whole sub-core"
        color = LANE_COLORS.get(r.lane, "#495057")
        pair = (("measured", r.measured_us, MEASURED), ("predicted", r.predicted_us, PREDICTED))
        bars = "".join(f'<div title="{who} {_us(v)} us" style="height:6px; margin:1px 0; '
                       f'width:{max(1, round(_BAR_PX * (v or 0) / top))}px; background:{c};"></div>'
                       for who, v, c in pair)
        tip = (f"{r.cores_measured} sub-core(s) measured ({r.source}), {r.cores_predicted} simulated; busiest "
               f"{_us(r.measured_max_us)} / {_us(r.predicted_max_us)} us")
        weight = "font-weight:600;" if r.pipe == "core" else ""
        body.append(f'<tr class="ks-measured-row" title="{html.escape(tip)}" style="{weight}">'
                    f'<td style="{cell.format("left")}">{r.unit}</td>'
                    f'<td style="{cell.format("left")} color:{color};">{html.escape(lane)}</td>'
                    f'<td style="{cell.format("right")}">{_us(r.measured_us)}</td>'
                    f'<td style="{cell.format("right")}">{_us(r.predicted_us)}</td>'
                    f'<td style="{cell.format("right")}">{_ratio_html(r.ratio)}</td>'
                    f'<td style="{cell.format("left")}">{bars}</td></tr>')
    table = (f'<table class="ks-measured-table" style="border-collapse:collapse;"><tr>{head}</tr>{"".join(body)}'
             "</table>" if body else '<div style="color:#868e96;">no PipeUtilization.csv or trace.json to compare '
             "pipe by pipe</div>")
    key = (f'<div style="color:#868e96; margin-top:4px;"><span style="color:{MEASURED};">&#9632;</span> measured '
           f'(msprof) &nbsp; <span style="color:{PREDICTED};">&#9632;</span> predicted (simulator) &middot; per '
           "sub-core, mean over the sub-cores of the unit that ran (hover a row for the busiest)</div>")
    notes = "".join(f'<div style="color:#e67700;">{html.escape(n)}</div>' for n in cmp.notes)
    files = ", ".join(f"{html.escape(p)}" for p in cmp.measured.files.values())
    return (f'<div class="ks-measured" style="{CSS} line-height:1.45;">{task}{table}{key}{notes}'
            f'<div style="color:#adb5bd; margin-top:4px;">read: {files}</div></div>')


def measured_lanes(cmp: MeasuredComparison, core: str | None = None, *, max_per_lane: int = 400) -> dict[str, Any]:
    """One core's lanes, each pipe measured (trace.json) above predicted (the simulation's core of the same name,
    else its first core of the same unit), both from the core's first event; None-free plain data with `lanes`
    (tick text), `bars` (y, start, end, color, text) and `core`. Past `max_per_lane` events a lane keeps its
    first ones and `cut` counts the rest. Empty lanes when no trace.json was read."""
    trace = cmp.measured.trace
    out: dict[str, Any] = {"core": None, "predicted_core": None, "lanes": [], "cut": 0,
                           "bars": {k: [] for k in ("y", "start", "end", "color", "text")}}
    if trace is None or not trace.spans:
        return out
    cores = trace.cores
    core = core if core in cores else cores[0]
    ev = cmp.sim.events
    labels = [lab for lab in ev.core_labels if lab != "host"]
    kind = core.split(".")[-1].rstrip("0123456789") if "." in core else ""
    twin = core if core in labels else next((lab for lab in labels if kind and lab.split(".")[-1].startswith(kind)
                                             and len(ev.where(core=lab))), None)
    out["core"], out["predicted_core"] = core, twin
    measured: dict[str, list[tuple[float, float, str]]] = {}
    mine = trace.of(core)
    t0 = min(s.start_us for s in mine)
    for s in mine:
        measured.setdefault(s.lane.upper(), []).append((s.start_us - t0, s.end_us - t0, s.name))
    predicted: dict[str, list[tuple[float, float, str]]] = {}
    if twin is not None:
        sub = ev.where(core=twin)
        c = sub.columns
        if len(sub):
            p0 = float(c["start_us"].min())
            for i in range(len(sub)):
                lane = _LANE_OF.get(sub.pipes[int(c["pipe"][i])], sub.pipes[int(c["pipe"][i])])
                predicted.setdefault(lane, []).append((float(c["start_us"][i]) - p0, float(c["end_us"][i]) - p0,
                                                       sub.instr_text[int(c["instr"][i])]))
    lanes = [lane for lane in _ORDER if lane in measured or lane in predicted]
    lanes += sorted(lane for lane in measured if lane not in lanes)
    b = out["bars"]
    for lane in lanes:
        sides = [("measured", measured.get(lane, []), core)]
        if lane in _ORDER:  # a lane of no pipe (CACHEMISS, ALL) has nothing simulated to pair with
            sides.append(("predicted", predicted.get(lane, []), twin))
        for who, spans, pick in sides:
            y = len(out["lanes"])
            out["lanes"].append(f"{who} {lane}")
            color = LANE_COLORS.get(lane, "#495057")
            color = color if who == "measured" else shade(color, 0.55)
            spans = sorted(spans)
            out["cut"] += max(0, len(spans) - max_per_lane)
            for s, e, name in spans[:max_per_lane]:
                b["y"].append(y)
                b["start"].append(s)
                b["end"].append(e)
                b["color"].append(color)
                b["text"].append(f"{who} &middot; {html.escape(str(pick))} {lane}<br>{html.escape(name)}<br>"
                                 f"{s:.3f} - {e:.3f} us ({e - s:.3f} us)")
    return out


def measured_figure(data: dict[str, Any], *, widget: bool = False) -> Any:
    """A plotly figure of `measured_lanes`' data (a FigureWidget with `widget`)."""
    import plotly.graph_objects as go

    fig = (go.FigureWidget if widget else go.Figure)()
    _draw(fig, data)
    return fig


def _draw(fig: Any, data: dict[str, Any]) -> None:
    b, lanes = data["bars"], data["lanes"]
    n = max(len(lanes), 1)
    end = max(b["end"], default=1.0) or 1.0
    title = (f"{data['core']}: measured (trace.json) above predicted ({data['predicted_core'] or 'no simulated core'})"
             f", each from its first event" + (f"; {data['cut']} events past the first 400 a lane not drawn"
                                               if data["cut"] else "")) if data["core"] else "no trace.json read"
    with fig.batch_update():
        fig.data = []
        fig.add_bar(orientation="h", y=b["y"], base=b["start"], x=[e - s for s, e in zip(b["start"], b["end"],
                                                                                          strict=True)],
                    marker={"color": b["color"], "line": {"width": 0}}, hovertext=b["text"], hoverinfo="text",
                    width=[0.75] * len(b["y"]), name="spans")
        fig.update_layout(barmode="overlay", showlegend=False, plot_bgcolor="#ffffff", height=_MARGIN_PX + n * _LANE_PX,
                          margin={"l": 10, "r": 10, "t": 30, "b": 40},
                          title={"text": html.escape(title), "font": {"size": 12}, "x": 0.005},
                          xaxis={"title": {"text": "time from the core's first event (us)", "standoff": 4},
                                 "range": [0, 1.02 * end], "zeroline": False},
                          yaxis={"tickvals": list(range(len(lanes))), "ticktext": lanes, "range": [n - 0.5, -0.5],
                                 "automargin": True, "tickfont": {"size": 10}, "showgrid": False, "fixedrange": True})


class MeasuredView(W.VBox):
    """The Measured tab: the table (`table`), a core picker and the lanes figure (`figure`) when a trace was read."""

    def __init__(self) -> None:
        import plotly.graph_objects as go

        self.table = W.HTML()
        self.core = W.Dropdown(description="core", options=[], layout=W.Layout(width="auto"))
        self.figure = go.FigureWidget()
        self.figure._config = {**self.figure._config, "responsive": True}  # sized to its cell (labextension fit.ts)
        self.cmp: MeasuredComparison | None = None
        self._quiet = False
        self.lanes: dict[str, Any] = {}
        self.core.observe(lambda ch: self._lanes(), names="value")
        self.lanes_box = W.VBox([self.core, self.figure])  # hidden when no trace.json was read
        super().__init__([self.table, self.lanes_box])
        self.add_class("ks-measured-view")

    def update(self, cmp: MeasuredComparison) -> None:
        """Show `cmp`: its table, and its trace's lanes for the core picked (kept when the trace has it)."""
        self.cmp = cmp
        self.table.value = measured_html(cmp)
        trace = cmp.measured.trace
        cores = trace.cores if trace is not None else []
        keep = self.core.value if self.core.value in cores else (cores[0] if cores else None)
        self._quiet = True  # the picker's own change redraws; here one redraw follows
        try:
            if list(self.core.options) != cores:
                self.core.options = cores
            self.core.value = keep
        finally:
            self._quiet = False
        self.core.layout.display = "" if len(cores) > 1 else "none"
        self.lanes_box.layout.display = "" if cores else "none"
        self._lanes()

    def _lanes(self) -> None:
        if self.cmp is None or self._quiet:
            return
        self.lanes = measured_lanes(self.cmp, self.core.value)
        _draw(self.figure, self.lanes)
