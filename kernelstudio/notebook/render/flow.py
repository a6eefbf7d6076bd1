"""The memory-flow Sankeys: the fused plan and the unfused plan as two figures, one above the other, each
with its own title; node labels carry the bytes in (and out, where they differ), hovers say why."""

from __future__ import annotations

from typing import Any

from .base import nbytes as _b

__all__ = ["new_flow_figure", "update_flow"]

_PLANS = ("fused", "unfused")
_MMAD_LINK = "rgba(134,142,150,0.22)"


def new_flow_figure() -> Any:
    """An ipywidgets box of two Sankey FigureWidgets (fused, unfused); `update_flow` fills them."""
    import ipywidgets as W
    import plotly.graph_objects as go

    figs = []
    for _ in _PLANS:
        fig = go.FigureWidget()
        fig.add_sankey(arrangement="snap", valueformat=",.0f", valuesuffix=" B",
                       node={"pad": 14, "thickness": 12, "line": {"width": 0},
                             "hovertemplate": "%{customdata}<extra></extra>"},
                       link={"hovertemplate": "%{customdata}<extra></extra>"}, textfont={"size": 10})
        fig.update_layout(height=320, margin={"l": 8, "r": 8, "t": 52, "b": 8}, font={"size": 10},
                          title={"x": 0.0, "xanchor": "left", "xref": "paper", "font": {"size": 13},
                                 "subtitle": {"font": {"size": 11, "color": "#555555"}}})
        figs.append(fig)
    box = W.VBox(figs, layout=W.Layout(width="100%"))
    box.add_class("ks-flow")
    return box


def _label(node: dict[str, Any]) -> str:
    """The node's name over its bytes (in, and out where they differ): two short lines fit between columns."""
    if node["kind"] == "source":
        return f"{node['short']}<br>{_b(node['out'])}"
    if node["kind"] == "sink" or node["in"] == node["out"]:
        return f"{node['short']}<br>{_b(node['in'])}"
    return f"{node['short']}<br>{_b(node['in'])} →<br>{_b(node['out'])}"


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _title(plan: str, d: dict[str, Any] | None) -> tuple[str, str]:
    """(title, subtitle) of one plan's figure."""
    if d is None:
        return f"<b>{plan} plan</b>: not simulated", "compare is off"
    kernels = f"{d['kernels']} kernel{'s' if d['kernels'] != 1 else ''}"
    return (f"<b>{plan} plan</b> ({kernels}): GM {_b(d['gm_bytes'])} = HBM {_b(d['hbm_bytes'])} + L2 "
            f"{_b(d['l2_bytes'])}",
            f"reads hit L2 {d['l2_hit_ratio']:.1%}; {_b(d['total_bytes'])} moved between tiers; hover a node or a "
            "band for its bytes")


def update_flow(box: Any, flow: dict[str, Any]) -> None:
    """Redraw both Sankeys from `views.flow_data`."""
    for fig, plan in zip(box.children, _PLANS, strict=True):
        d = flow[plan]
        with fig.batch_update():
            fig.layout.title.text, fig.layout.title.subtitle.text = _title(plan, d)
            if d is None:
                fig.data[0].update(node={"label": [], "color": [], "customdata": []},
                                   link={"source": [], "target": [], "value": [], "customdata": []})
                fig.layout.height = 70
                continue
            nodes, links = d["nodes"], d["links"]
            fig.layout.height = 320
            fig.data[0].update(
                node={"label": [_label(n) for n in nodes], "color": [n["color"] for n in nodes],
                      "customdata": [n["hover"] for n in nodes]},
                link={"source": [lk["source"] for lk in links], "target": [lk["target"] for lk in links],
                      "value": [lk["bytes"] for lk in links], "label": [lk["edge"] for lk in links],
                      "customdata": [lk["hover"] for lk in links],
                      "color": [_MMAD_LINK if "Mmad" in lk["edge"] else _rgba(nodes[lk["source"]]["color"], 0.3)
                                for lk in links]})
