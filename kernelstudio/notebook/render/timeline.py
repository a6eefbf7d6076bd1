"""The pipeline timeline figure."""

from __future__ import annotations

from typing import Any

from ..views.style import LANE_COLORS, shade

__all__ = ["new_timeline_figure", "update_timeline"]

_IDLE = "rgba(250,82,82,0.13)"  # idle gaps: faint, hoverable


def new_timeline_figure() -> Any:
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_bar(orientation="h", name="fused", hoverinfo="text", marker={"line": {"width": 0}})
    fig.add_bar(orientation="h", name="unfused plan", hoverinfo="text", marker={"line": {"width": 0}})
    fig.add_bar(orientation="h", name="idle", hoverinfo="text", marker={"color": _IDLE, "line": {"width": 0}})
    fig.update_layout(barmode="overlay", bargap=0.25, showlegend=False, height=420, margin={"l": 10, "r": 10, "t": 24,
                      "b": 30}, xaxis={"title": "time (us)", "zeroline": False},
                      yaxis={"type": "category", "automargin": True, "tickfont": {"size": 10}}, dragmode="zoom",
                      plot_bgcolor="#ffffff", title={"text": "", "font": {"size": 12}})
    return fig


def update_timeline(fig: Any, tl: dict[str, Any]) -> None:
    """Redraw lanes, bars, the unfused plan and cross-core arrows in one batch."""
    lanes = [lane["label"] for lane in tl["lanes"]]
    b = tl["bars"]
    y = [lanes[i] for i in b["lane"]]
    un = tl.get("unfused")
    uy, ubase, ux, ucol, utext = [], [], [], [], []
    if un:
        for k in un["kernels"]:
            uy.append("unfused plan")
            ubase.append(k["start"])
            ux.append(k["end"] - k["start"])
            ucol.append(LANE_COLORS["CUBE"] if k["family"] != "vector" else LANE_COLORS["VECTOR"])
            utext.append(f"unfused kernel {k['name']} ({k['family']})<br>{k['start']:.2f} - {k['end']:.2f} us")
        for g in un["gaps"]:
            uy.append("unfused plan")
            ubase.append(g["start"])
            ux.append(g["end"] - g["start"])
            ucol.append(shade(LANE_COLORS["LAUNCH"], 0.6))
            utext.append(f"{g['name']} (launch gap, assumed)<br>{g['start']:.2f} - {g['end']:.2f} us")
    order = lanes + (["unfused plan"] if un else [])
    height = max(260, 18 * len(order) + 80)
    lod = tl["lod"]
    shown = f"cores {', '.join(map(str, tl['cores_shown']))} of {tl['cores_total']}" if tl["cores_total"] else ""
    note = f"; {len(lod)} lane(s) merged into spans (level of detail; full detail in the trace)" if lod else ""
    arrows = [{"x": a["t"], "y": lanes[a["to_lane"]], "ax": a["t"], "ay": lanes[a["from_lane"]], "xref": "x",
               "yref": "y", "axref": "x", "ayref": "y", "showarrow": True, "arrowhead": 2, "arrowsize": 1,
               "arrowwidth": 1.2, "arrowcolor": "#c92a2a", "text": "", "hovertext": a["text"]} for a in tl["arrows"]]
    with fig.batch_update():
        fig.data[0].update(y=y, base=b["start"], x=[e - s for s, e in zip(b["start"], b["end"], strict=True)],
                           marker_color=b["color"], hovertext=b["text"])
        fig.data[1].update(y=uy, base=ubase, x=ux, marker_color=ucol, hovertext=utext)
        idle = tl.get("idle", [])
        fig.data[2].update(y=[lanes[g["lane"]] for g in idle], base=[g["start"] for g in idle],
                           x=[g["end"] - g["start"] for g in idle], hovertext=[g["text"] for g in idle],
                           marker_color=[_IDLE] * len(idle), width=[0.35] * len(idle))
        fig.layout.yaxis.categoryorder = "array"
        fig.layout.yaxis.categoryarray = list(reversed(order))
        fig.layout.height = height
        fig.layout.annotations = arrows
        fig.layout.title.text = f"fused timeline ({shown}{note}); red arrows: cross-core flags"

