"""The pipeline timeline figure: the fused plan's lane groups on top, the unfused plan's kernels below (each on
its own time axis), and the legend strip and title line above them (HTML: the figure's top margin is left to
plotly's modebar, which would print over a title there in a narrow cell).

Drawn from `views.timeline.timeline_data`; nothing here computes a time. The figure has no fixed width (it
follows its container); its height grows with the lanes drawn.
"""

from __future__ import annotations

import html
from typing import Any

from ..views.style import HIGHLIGHT, IDLE, LANE_COLORS, WAIT_PATTERN
from .base import CSS as _CSS
from .base import changed, update_figure

__all__ = ["legend_html", "mark_lanes", "new_timeline_figure", "title_html", "update_timeline", "visible_lanes"]

_LANE_PX = 18  # one fused lane
_PLAN_PX = 22  # one unfused kernel lane
_TOP_PX, _MID_PX, _BOTTOM_PX = 30, 78, 40  # the modebar; fused x axis + the unfused title; unfused x axis
_SEPARATOR = "#ced4da"


def new_timeline_figure() -> Any:
    """An empty FigureWidget: trace 0 the fused bars, 1 the unfused plan, 2 the idle gaps, 3 the stage strip
    (the rows above the lanes of a kernel with stages)."""
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_bar(orientation="h", name="fused", hoverinfo="text", xaxis="x", yaxis="y",
                marker={"line": {"width": 0}})
    fig.add_bar(orientation="h", name="unfused plan", hoverinfo="text", xaxis="x2", yaxis="y2",
                marker={"line": {"width": 0}})
    fig.add_bar(orientation="h", name="idle", hoverinfo="text", xaxis="x", yaxis="y",
                marker={"color": IDLE, "line": {"width": 0}})
    fig.add_bar(orientation="h", name="stages", hoverinfo="text", xaxis="x", yaxis="y",
                marker={"line": {"width": 0.5, "color": "#ffffff"}})
    fig.update_layout(barmode="overlay", bargap=0.25, showlegend=False, height=300, dragmode="zoom",
                      margin={"l": 10, "r": 10, "t": _TOP_PX, "b": _BOTTOM_PX}, plot_bgcolor="#ffffff",
                      xaxis={"anchor": "y", "title": {"text": "time (us)", "standoff": 4}, "zeroline": False,
                             "autorange": False, "range": [0, 1]},
                      yaxis={"anchor": "x", "automargin": True, "tickfont": {"size": 10}, "zeroline": False,
                             "showgrid": False, "fixedrange": True},
                      xaxis2={"anchor": "y2", "title": {"text": "time (us), unfused plan", "standoff": 4},
                              "zeroline": False, "autorange": False, "range": [0, 1]},
                      yaxis2={"anchor": "x2", "automargin": True, "tickfont": {"size": 10}, "zeroline": False,
                              "showgrid": False, "fixedrange": True})
    return fig


US_DIGITS = 6  # a bar's start and length are sent to the browser to 1e-6 us: a cycle (0.5 to 1 ns) is 500 to 1000 of
# those, so no zoom shows the difference, and a move's update is about half as long as with every float's 17 digits


def _us(t: float) -> float:
    return round(t, US_DIGITS)


def visible_lanes(tl: dict[str, Any], show_launch: bool) -> list[int]:
    """The fused lanes drawn, top to bottom: the host's launch lane only with `show_launch`."""
    return [i for i, lane in enumerate(tl["lanes"]) if show_launch or not lane["host"]]


def update_timeline(fig: Any, tl: dict[str, Any], *, show_launch: bool = False, keep_range: bool = False,
                    highlight: list[int] | tuple[int, ...] = ()) -> None:
    """Redraw both subplots in one batch. `keep_range` keeps the x ranges the user zoomed to (else the fused
    axis fits the kernel, or the whole run with `show_launch`); `highlight` lanes get a band."""
    shown = visible_lanes(tl, show_launch)
    st = tl.get("stages") or {"rows": [], "bars": []}
    ns = len(st["rows"])  # the stage strip's rows come first
    pos = {li: ns + y for y, li in enumerate(shown)}
    b = tl["bars"]
    keep = [i for i, li in enumerate(b["lane"]) if li in pos]
    un = tl.get("unfused")
    nf, nu = len(shown) + ns, len(un["lanes"]) if un else 0
    height = _TOP_PX + nf * _LANE_PX + _BOTTOM_PX + ((_MID_PX + nu * _PLAN_PX) if un else 0)
    area = height - _TOP_PX - _BOTTOM_PX
    top = [1.0 - nf * _LANE_PX / area, 1.0] if un else [0.0, 1.0]
    ticks = [_stage_tick(r) for r in st["rows"]] + [_tick(tl, li) for li in shown]
    shapes = _shapes(tl, shown, highlight)
    arrows = [{"x": a["t"], "y": pos[a["to_lane"]], "ax": a["t"], "ay": pos[a["from_lane"]], "xref": "x",
               "yref": "y", "axref": "x", "ayref": "y", "showarrow": True, "arrowhead": 2, "arrowsize": 1,
               "arrowwidth": 1.2, "arrowcolor": "#c92a2a", "text": "", "hovertext": a["text"]}
              for a in tl["arrows"] if a["to_lane"] in pos and a["from_lane"] in pos]
    idle = [g for g in tl.get("idle", []) if g["lane"] in pos]
    ub = un["bars"] if un else []
    traces = {  # plotly paths; only those that changed since the last update are sent (render.base)
        0: {"y": [pos[b["lane"][i]] for i in keep], "base": [_us(b["start"][i]) for i in keep],
            "x": [_us(b["end"][i] - b["start"][i]) for i in keep], "width": 0.8,
            "marker.color": [b["color"][i] for i in keep], "hovertext": [b["text"][i] for i in keep],
            "marker.pattern.shape": [WAIT_PATTERN if b["wait"][i] else "" for i in keep],
            "marker.pattern.fillmode": "overlay", "marker.pattern.fgcolor": "#ffffff",
            "marker.pattern.solidity": 0.45},
        2: {"y": [pos[g["lane"]] for g in idle], "base": [_us(g["start"]) for g in idle],
            "x": [_us(g["end"] - g["start"]) for g in idle], "hovertext": [g["text"] for g in idle],
            "marker.color": IDLE, "width": 0.35},
        3: {"y": [x["row"] for x in st["bars"]], "base": [_us(x["start"]) for x in st["bars"]],
            "x": [_us(x["end"] - x["start"]) for x in st["bars"]], "hovertext": [x["text"] for x in st["bars"]],
            "marker.color": [x["color"] for x in st["bars"]], "width": 0.8},
        1: {"y": [x["lane"] for x in ub], "base": [_us(x["start"]) for x in ub],
            "x": [_us(x["end"] - x["start"]) for x in ub], "marker.color": [x["color"] for x in ub],
            "hovertext": [x["text"] for x in ub], "width": 0.7},
    }
    layout: dict[str, Any] = {"height": height, "yaxis.domain": top, "yaxis.tickvals": list(range(nf)),
                              "yaxis.ticktext": ticks, "yaxis.range": [nf - 0.5, -0.5], "xaxis.visible": bool(nf),
                              "xaxis2.visible": bool(un), "yaxis2.visible": bool(un)}
    if un:
        layout.update({"yaxis2.domain": [0.0, nu * _PLAN_PX / area], "yaxis2.tickvals": list(range(nu)),
                       "yaxis2.ticktext": [html.escape(lane["label"]) for lane in un["lanes"]],
                       "yaxis2.range": [nu - 0.5, -0.5]})
    else:  # hidden, on a small domain of its own, with a valid range
        layout.update({"yaxis2.domain": [0.0, 0.01], "yaxis2.tickvals": [], "yaxis2.ticktext": [],
                       "yaxis2.range": [0, 1]})
    layout = changed(fig, "layout", layout)  # the paths the browser never changes: sent when they changed
    if not un:
        layout["xaxis2.range"] = [0, 1]
    if not keep_range:  # else the ranges the user zoomed to stay; a zoom in the browser changes them, so they
        layout["xaxis.range"] = tl["range"]["full" if show_launch else "kernel"]  # are always given
        if un:
            layout["xaxis2.range"] = un["range"]
    # anchored at the plot's right edge, the title runs left over the lane labels' margin: a narrow cell has
    # no room for it right of that margin
    titles = [{"text": html.escape(un["title"]), "xref": "paper", "yref": "paper", "x": 1.0,
               "y": nu * _PLAN_PX / area, "yshift": 6, "xanchor": "right", "yanchor": "bottom",
               "showarrow": False, "font": {"size": 11}}] if un else []
    with fig.batch_update():  # the arrays of objects (shapes, annotations), in a message of their own when they
        _set_shapes(fig, shapes)  # changed; then the bars and axes in one
        if changed(fig, "layout", {"annotations": arrows + titles}):
            fig.layout.annotations = arrows + titles  # assigned: an update would merge them into the old ones
    update_figure(fig, traces, layout)


def mark_lanes(fig: Any, tl: dict[str, Any], *, show_launch: bool = False,
               highlight: list[int] | tuple[int, ...] = ()) -> None:
    """Only the bands of the `highlight` lanes (and the group separators): the bars stay."""
    _set_shapes(fig, _shapes(tl, visible_lanes(tl, show_launch), highlight))


def _set_shapes(fig: Any, shapes: list[dict[str, Any]]) -> None:
    if changed(fig, "layout", {"shapes": shapes}):
        fig.layout.shapes = shapes  # assigned: an update would merge the shapes into the old ones


def _shapes(tl: dict[str, Any], shown: list[int], highlight: list[int] | tuple[int, ...]) -> list[dict[str, Any]]:
    ns = len((tl.get("stages") or {"rows": []})["rows"])
    pos = {li: ns + y for y, li in enumerate(shown)}
    return [_band(pos[li]) for li in highlight if li in pos] + _separators(tl, shown)


def _stage_tick(row: dict[str, Any]) -> str:
    head, _, stage = row["tick"].rpartition("  ")
    name = f'<span style="color:{row["color"]}">■</span> {html.escape(stage)}'
    return f"<b>{html.escape(head)}</b>  {name}" if head else name


def _tick(tl: dict[str, Any], li: int) -> str:
    lane = tl["lanes"][li]
    head, _, pipe = lane["tick"].rpartition("  ")
    return f"<b>{html.escape(head)}</b>  {pipe}" if head else pipe


def _band(y: int) -> dict[str, Any]:
    return {"type": "rect", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": y - 0.5, "y1": y + 0.5,
            "fillcolor": HIGHLIGHT, "line": {"width": 0}, "layer": "below"}


def _separators(tl: dict[str, Any], shown: list[int]) -> list[dict[str, Any]]:
    """A thin line between lane groups (and between the cores of an expanded group), between the stage strip's
    cores and under the strip."""
    rows = (tl.get("stages") or {"rows": []})["rows"]
    cores = [r["core"] for r in rows] + [tl["lanes"][li]["core"] for li in shown]
    strong = {len(rows)} if rows and shown else set()
    out = []
    for y in range(1, len(cores)):
        if cores[y - 1] != cores[y] or y in strong:
            out.append({"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": y - 0.5,
                        "y1": y - 0.5, "line": {"width": 2 if y in strong else 1, "color": _SEPARATOR}})
    return out


def title_html(tl: dict[str, Any]) -> str:
    """What the fused figure draws, in one line above it (it wraps in a narrow cell)."""
    return (f'<div class="ks-timeline-title" style="{_CSS} font-size:12px; color:#343a40;">'
            f'{html.escape(tl["title"])}</div>')


def legend_html(tl: dict[str, Any]) -> str:
    """The colour key above the figure: the pipes drawn (ping, and pong lighter where a pong slot is drawn),
    waits, idle gaps, cross-core flags and launch gaps (each only when drawn)."""
    lg = tl["legend"]
    sw = "display:inline-block;width:12px;height:10px;vertical-align:middle;margin-right:3px;"
    items = []
    for p in lg["pipes"]:
        if p["pipe"] == "LAUNCH":
            continue
        pong = (f'<span style="{sw}background:{p["pong"]};margin-left:-3px;" title="pong slot"></span>'
                if p["pong"] else "")
        hatch = (f"background:repeating-linear-gradient(135deg,{p['color']} 0 3px,#ffffff 3px 5px);"
                 if p["pipe"] == "FLOWCTRL" and lg["waits"] else f"background:{p['color']};")
        items.append(f'<span title="{p["pipe"]}"><span style="{sw}{hatch}"></span>{pong}{p["pipe"]}</span>')
    if any(p["pong"] for p in lg["pipes"]):
        items.append("ping / pong (lighter) slots")
    if lg["waits"]:
        items.append("hatched: waiting, not work (a barrier from each core's arrival)")
    if lg["idle"]:
        items.append(f'<span style="{sw}background:{lg["idle"]};outline:1px solid #ffc9c9;"></span>idle gap')
    if lg["arrows"]:
        items.append('<span style="color:#c92a2a;">&#8594;</span> cross-core flag')
    if lg["launch"]:
        items.append(f'<span style="{sw}background:{LANE_COLORS["LAUNCH"]};"></span>'
                     f'<span style="{sw}background:{lg["launch"]};"></span>host launch gap')
    st = tl.get("stages")
    if st:  # the strip's stages, in pipeline order
        items.append("stages: " + " ".join(f'<span style="{sw}background:{st["colors"][x]};"></span>{html.escape(x)}'
                                           for x in st["stages"]) + " (one bar per block)")
    sep = '<span style="color:#adb5bd;margin:0 6px;">&middot;</span> '
    body = sep.join(f'<span style="white-space:nowrap;">{x}</span>' for x in items)
    if tl.get("alike") is not None:  # a sentence: it wraps
        body += (f'<div style="line-height:1.4;"><b>~xN</b>: N alike cores folded, the busiest drawn (in every '
                 f'kernel, each pipe\'s busy time and the core\'s finish within {tl["alike"]:.0%} of the kernel\'s '
                 f'span of the drawn core\'s); <b>xN</b>: N identical cores</div>')
    return f'<div class="ks-timeline-legend" style="{_CSS} line-height:1.9;">{body}</div>'
