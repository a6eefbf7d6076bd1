"""The memory-flow Sankey figure."""

from __future__ import annotations

from typing import Any

from .base import nbytes as _b

__all__ = ["new_flow_figure", "update_flow"]


def new_flow_figure() -> Any:
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_sankey(domain={"x": [0.0, 0.48]}, arrangement="snap", valueformat=",.0f", valuesuffix=" B")
    fig.add_sankey(domain={"x": [0.52, 1.0]}, arrangement="snap", valueformat=",.0f", valuesuffix=" B")
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 30, "b": 10}, font={"size": 11})
    return fig


def update_flow(fig: Any, flow: dict[str, Any]) -> None:
    def sk(trace: Any, d: dict[str, Any] | None) -> None:
        if d is None:
            trace.update(node={"label": [], "color": []}, link={"source": [], "target": [], "value": []})
            return
        trace.update(node={"label": d["nodes"], "color": d["colors"], "pad": 12, "thickness": 14},
                     link={"source": [lk["source"] for lk in d["links"]], "target": [lk["target"] for lk in d["links"]],
                           "value": [lk["bytes"] for lk in d["links"]], "label": [lk["edge"] for lk in d["links"]],
                           "color": ["rgba(134,142,150,0.25)" if "Mmad" in lk["edge"] else "rgba(28,126,214,0.35)"
                                     for lk in d["links"]]})

    f, u = flow["fused"], flow["unfused"]
    with fig.batch_update():
        sk(fig.data[0], f)
        sk(fig.data[1], u)
        fig.layout.annotations = [
            {"x": 0.24, "y": 1.07, "xref": "paper", "yref": "paper", "showarrow": False,
             "text": f"fused: GM {_b(f['gm_bytes'])}, {_b(f['total_bytes'])} through all tiers"},
            {"x": 0.76, "y": 1.07, "xref": "paper", "yref": "paper", "showarrow": False,
             "text": f"unfused: GM {_b(u['gm_bytes'])}, {_b(u['total_bytes'])} through all tiers" if u
             else "unfused: (compare is off)"},
        ]

