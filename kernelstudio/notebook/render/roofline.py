"""The roofline figure."""

from __future__ import annotations

from typing import Any

__all__ = ["new_roofline_figure", "update_roofline"]


def new_roofline_figure() -> Any:
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_scatter(mode="lines", name="roof", line={"color": "#495057"}, hoverinfo="text")
    fig.add_scatter(mode="markers+text", name="plans", textposition="top center",
                    marker={"size": 11, "color": ["#e8590c"]}, hoverinfo="text")
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 30, "b": 40}, showlegend=False,
                      xaxis={"type": "log", "title": "flops per compulsory GM byte"},
                      yaxis={"type": "log", "title": "TFLOPS"})
    return fig


def update_roofline(fig: Any, rf: dict[str, Any]) -> None:
    pts = rf["points"]
    xs = [p["intensity"] for p in pts if p["intensity"] > 0] or [1.0]
    lo, hi = min(min(xs) / 4, rf["ridge"] / 100), max(max(xs) * 4, rf["ridge"] * 10)
    bw_t = rf["hbm_bytes_per_s"] / 1e12
    roof_x = [lo, rf["ridge"], hi]
    roof_y = [lo * bw_t, rf["peak_tflops"], rf["peak_tflops"]]
    with fig.batch_update():
        fig.data[0].update(x=roof_x, y=roof_y, hovertext=[
            f"HBM {rf['hbm_bytes_per_s'] / 1e9:,.0f} GB/s ({rf['hbm_source']})",
            f"ridge {rf['ridge']:.0f} flops/B", f"{rf['peak_dtype']} cube peak {rf['peak_tflops']:.1f} TFLOPS"])
        fig.data[1].update(x=[max(p["intensity"], 1e-3) for p in pts], y=[max(p["tflops"], 1e-6) for p in pts],
                           text=[p["label"] for p in pts],
                           marker_color=["#e8590c" if p["label"] == "fused plan" else
                                         ("#868e96" if p["label"] == "unfused plan" else "#1c7ed6") for p in pts],
                           hovertext=[f"{p['label']}: {p['tflops']:.2f} TFLOPS, {p['intensity']:.1f} flops/B, "
                                      f"{p['time_us']:.2f} us" for p in pts])
