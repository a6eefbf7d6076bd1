"""One design on several chips, drawn: every target's timeline on one shared time axis (a row group per
target, its cores folded as the Studio's timeline folds them), and `compare_targets` with that figure.

The lanes and bars come from `views.timeline.timeline_data` (the Studio's own timeline data); nothing here
computes a time. A target where the design does not lower gets a one-line row that says why.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ...tune.whatif import DEFAULT_TARGETS, TargetComparison
from ...tune.whatif import compare_targets as _compare_data
from ..views.style import WAIT_PATTERN
from ..views.timeline import timeline_data

__all__ = ["compare_data", "comparison_figure", "compare_targets", "comparison_html"]

_LANE_PX, _MARGIN_PX = 16, 90
_GROUP_SEP = "#495057"
_HEADER_FILL = "#f1f3f5"
_USER = " color:#e8590c; font-weight:600;"  # a what-if value (its source is "user")


def compare_data(cmp: TargetComparison, *, max_per_lane: int = 400) -> dict[str, Any]:
    """Per row of `cmp`: a header lane (the target and its time, or that it did not lower and why), then its
    lanes (tick text) and bars on the shared axis; and the axis range (0 to the slowest target's end). Plain
    data, no plotly."""
    lanes: list[dict[str, Any]] = []
    bars: dict[str, list] = {k: [] for k in ("y", "start", "end", "color", "text", "wait")}
    groups = []
    end = 0.0
    for r in cmp.rows:
        y0 = len(lanes)
        sim = cmp.sims.get(r.label)
        if sim is None:
            lanes.append({"tick": f"<b>{html.escape(r.label)}</b>  not lowered", "why": r.why, "header": True})
            groups.append({"label": r.label, "first": y0, "last": y0, "ok": False, "why": r.why, "time_us": None})
            continue
        lanes.append({"tick": f"<b>{html.escape(r.label)}</b>  {sim.time_us:,.2f} us", "why": "", "header": True})
        tl = timeline_data(sim, max_per_lane=max_per_lane)
        for lane in tl["lanes"]:
            head, _, pipe = lane["tick"].rpartition("  ")
            lanes.append({"tick": f"{html.escape(head)}  {pipe}" if head else pipe, "why": "", "header": False})
        b = tl["bars"]
        for i, li in enumerate(b["lane"]):
            bars["y"].append(y0 + 1 + li)
            bars["start"].append(b["start"][i])
            bars["end"].append(b["end"][i])
            bars["color"].append(b["color"][i])
            bars["wait"].append(b["wait"][i])
            bars["text"].append(f"{html.escape(r.label)}<br>{b['text'][i]}")
        end = max(end, float(sim.time_us))
        groups.append({"label": r.label, "first": y0, "last": len(lanes) - 1, "ok": True, "why": "",
                       "time_us": float(sim.time_us)})
    return {"lanes": lanes, "bars": bars, "groups": groups, "range": [0.0, 1.02 * end if end else 1.0],
            "title": f"{cmp.design} on {len(cmp.rows)} targets, one time axis (us, launch gap included)"}


def comparison_figure(cmp: TargetComparison, *, widget: bool = False) -> Any:
    """A plotly figure (a FigureWidget with `widget`): one horizontal bar per instruction (or merged span),
    a row group per target under a header lane with its time (or why it did not lower), the x axis shared."""
    import plotly.graph_objects as go

    data = compare_data(cmp)
    b, lanes = data["bars"], data["lanes"]
    fig = (go.FigureWidget if widget else go.Figure)()
    fig.add_bar(orientation="h", y=b["y"], base=b["start"], x=[e - s for s, e in zip(b["start"], b["end"],
                                                                                      strict=True)],
                marker={"color": b["color"], "line": {"width": 0},
                        "pattern": {"shape": [WAIT_PATTERN if w else "" for w in b["wait"]], "fillmode": "overlay",
                                    "fgcolor": "#ffffff", "solidity": 0.45}},  # a wait is hatched, as in the Studio
                hovertext=b["text"], hoverinfo="text",
                width=[0.8] * len(b["y"]), name="instructions")
    shapes, notes = [], []
    for g in data["groups"]:
        y = g["first"]
        shapes.append({"type": "rect", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": y - 0.5,
                       "y1": y + 0.5, "fillcolor": _HEADER_FILL, "line": {"width": 0}, "layer": "below"})
        if y:
            shapes.append({"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": y - 0.5,
                           "y1": y - 0.5, "line": {"width": 1.5, "color": _GROUP_SEP}})
        if not g["ok"]:
            short = g["why"] if len(g["why"]) <= 110 else g["why"][:107] + "..."
            notes.append({"text": html.escape(short), "hovertext": html.escape(g["why"]), "xref": "x domain",
                          "yref": "y", "x": 0.005, "y": y, "xanchor": "left", "yanchor": "middle", "showarrow": False,
                          "font": {"size": 11, "color": "#c92a2a"}})
    n = max(len(lanes), 1)
    fig.update_layout(barmode="overlay", showlegend=False, plot_bgcolor="#ffffff",
                      height=_MARGIN_PX + n * _LANE_PX, margin={"l": 10, "r": 10, "t": 40, "b": 40},
                      title={"text": html.escape(data["title"]), "font": {"size": 12}, "x": 0.005},
                      xaxis={"title": {"text": "time (us)", "standoff": 4}, "range": data["range"],
                             "zeroline": False},
                      yaxis={"tickvals": list(range(len(lanes))), "ticktext": [lane["tick"] for lane in lanes],
                             "range": [n - 0.5, -0.5], "automargin": True, "tickfont": {"size": 10},
                             "showgrid": False, "fixedrange": True},
                      shapes=shapes, annotations=notes)
    return fig


def comparison_html(cmp: TargetComparison) -> str:
    """The comparison's table as an HTML table (times and rates), with each profile number's source on hover
    and the reason in the row of a target the design does not lower on."""
    head = ("target", "time (us)", "TFLOPS", "HBM GB/s", "% HBM", "bound", "busiest", "efficiency")
    cell = 'style="padding:2px 8px; text-align:{};"'
    out = ['<table style="border-collapse:collapse; font-size:12px;"><tr>'
           + "".join(f"<th {cell.format('left' if i in (0, 5, 6, 8) else 'right')}>{h}</th>"
                     for i, h in enumerate(head)) + "</tr>"]
    best = cmp.best
    for r in cmp.rows:
        hl = " &middot; ".join(f'<span title="{html.escape(f)}: {html.escape(s)}" style="white-space:nowrap; '
                       f'border-bottom:1px dotted #adb5bd;{_USER if s == "user" else ""}">'
                       f"{html.escape(_short(f, v))}</span>" for f, v, s in r.headline)
        # the profile's headline numbers (source on hover) on a line of their own under the target's row
        profile = (f'<tr><td colspan="8" style="padding:0 8px 6px 20px; font-size:11px; color:#495057; '
                   f'line-height:1.6;">{hl}</td></tr>')
        if not r.ok:
            out.append(f'<tr><td {cell.format("left")}>{html.escape(r.label)}</td>'
                       f'<td colspan="7" {cell.format("left")} title="{html.escape(r.why)}">'
                       f'<span style="color:#c92a2a;">{html.escape(r.why[:140])}</span></td></tr>' + profile)
            continue
        weight = "font-weight:600;" if best is not None and r is best else ""
        vals = (f"{r.time_us:,.2f}", f"{r.tflops:.2f}", f"{r.hbm_gbps:,.1f}", f"{r.bandwidth_pct:.1f}", r.bound,
                r.busiest, f"{r.efficiency:.1%}")
        out.append(f'<tr style="{weight}"><td {cell.format("left")}>{html.escape(r.label)}</td>'
                   + "".join(f"<td {cell.format('left' if i in (4, 5) else 'right')}>{html.escape(v)}</td>"
                             for i, v in enumerate(vals)) + "</tr>" + profile)
    out.append("</table>")
    return "".join(out)


def _short(f: str, v: Any) -> str:
    return {"aic_cores": f"{v} AIC", "aiv_cores": f"{v} AIV", "clock_mhz": f"{v:,.0f} MHz",
            "hbm_bytes_per_s": f"HBM {v / 1e12:.2f} TB/s", "l2_bytes": f"L2 {v / 2**20:,.0f} MiB",
            "ub_bytes": f"UB {v / 1024:,.0f} KiB", "launch_overhead_us": f"launch {v:g} us"}.get(f, f"{f} {v}")


def compare_targets(design: Any, targets: Sequence[Any] = DEFAULT_TARGETS, *, l2: str = "cold",
                    config: dict[str, Any] | None = None, name: str | None = None,
                    figure: bool = True) -> TargetComparison:
    """Build `design` (a build function, its output tensor(s), or a Schedule) on each target (profile names or
    HardwareProfiles, what-if ones too) and return the comparison: `rows` with time, TFLOPS, GB/s, bound and
    efficiency (or why it does not lower), `table()` as text, and `figure`, the timelines on one time axis
    (plotly; `figure=False` leaves it None)."""
    cmp = _compare_data(design, targets, l2=l2, config=config, name=name)
    if figure:
        cmp.figure = comparison_figure(cmp)
    return cmp

