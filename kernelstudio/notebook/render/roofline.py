"""The roofline figure: roofs with their values as labels, the ridge marked, the plans as points."""

from __future__ import annotations

from typing import Any

from .base import changed, update_figure

__all__ = ["new_roofline_figure", "update_roofline"]

_POINT_COLORS = {"fused plan": "#e8590c", "unfused plan": "#868e96"}


def new_roofline_figure() -> Any:
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_scatter(mode="lines", name="roof", line={"color": "#495057", "width": 2}, hoverinfo="text")
    fig.add_scatter(mode="lines+markers", name="ridge", line={"color": "#adb5bd", "width": 1, "dash": "dot"},
                    marker={"size": [0, 9], "color": "#495057", "symbol": "diamond"}, hoverinfo="text")
    fig.add_scatter(mode="markers+text", name="plans", textposition="top center", cliponaxis=False,
                    marker={"size": 11, "color": ["#e8590c"]}, hoverinfo="text")
    fig.update_layout(height=400, margin={"l": 60, "r": 20, "t": 36, "b": 50}, showlegend=False,
                      xaxis={"type": "log", "tickmode": "array", "showgrid": True},
                      yaxis={"type": "log", "tickmode": "array", "showgrid": True},
                      title={"x": 0.0, "xanchor": "left", "font": {"size": 13}})
    return fig


def update_roofline(fig: Any, rf: dict[str, Any]) -> None:
    """Redraw from `views.roofline_data`."""
    pts = [p for p in rf["points"] if p["intensity"] > 0 and p["tflops"] > 0]  # a log axis has no zero
    lb = rf["labels"]
    traces = {  # plotly paths; only those that changed since the last update are sent (render.base)
        0: {"x": rf["roof"]["x"], "y": rf["roof"]["y"],
            "hovertext": [lb["hbm"]["hover"], lb["ridge"]["hover"], lb["peak"]["hover"]]},
        1: {"x": rf["ridge_line"]["x"], "y": rf["ridge_line"]["y"], "hovertext": ["", lb["ridge"]["hover"]]},
        2: {"x": [p["intensity"] for p in pts], "y": [p["tflops"] for p in pts], "text": [p["label"] for p in pts],
            "marker.color": [_POINT_COLORS.get(p["label"], "#1c7ed6") for p in pts],
            "hovertext": [f"{p['label']}: {p['tflops']:.2f} TFLOPS, {p['intensity']:,.1f} FLOP/B, "
                          f"{p['time_us']:.2f} us" for p in pts]},
    }
    layout = changed(fig, "layout", {  # the paths the browser never changes: sent when they changed
        "xaxis.title.text": rf["x_title"], "xaxis.tickvals": rf["x_ticks"]["vals"],
        "xaxis.ticktext": rf["x_ticks"]["text"], "yaxis.title.text": rf["y_title"],
        "yaxis.tickvals": rf["y_ticks"]["vals"], "yaxis.ticktext": rf["y_ticks"]["text"],
        "title.text": (f"fused plan: roofline bound {rf['bound_us']:.2f} us ({rf['limiter'] or 'no'} "
                       f"limit), efficiency {rf['efficiency']:.1%}")})
    layout.update({"xaxis.range": rf["x_range"], "yaxis.range": rf["y_range"]})  # a zoom in the browser changes these
    annotations = [
        {"x": a["x_log10"], "y": a["y_log10"], "xref": "x", "yref": "y", "text": a["text"],
         "hovertext": a["hover"], "showarrow": False, "xanchor": a["xanchor"], "yanchor": a["yanchor"],
         "xshift": 5 if a["xanchor"] == "left" else 0, "yshift": -3 if a["yanchor"] == "top" else 2,
         "font": {"size": 11, "color": "#343a40"}} for a in lb.values()]
    if changed(fig, "layout", {"annotations": annotations}):
        fig.layout.annotations = annotations  # assigned: an update would merge them into the old ones
    update_figure(fig, traces, layout)
