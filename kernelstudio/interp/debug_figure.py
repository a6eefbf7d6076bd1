"""The per-tile error heatmap of `ks.debug`: one cell per stored tile, the first bad tile outlined.

Drawn from a DebugReport's `TensorErrors` (plain arrays); nothing here computes an error. A plain plotly Figure
(plotly imported when drawn), so the report that owns it needs no layer above the interpreter.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["debug_heatmap", "heatmap_data"]


def heatmap_data(report: Any, tensor: str | None = None) -> dict[str, Any]:
    """The figure's data: tile grid of max abs error (log10, inf shown as the top of the scale), hover text."""
    t = report.tensor_errors(tensor)
    err = np.asarray(t.max_abs, dtype=np.float64)
    finite = err[np.isfinite(err) & (err > 0)]
    top = float(np.log10(finite.max())) + 1.0 if finite.size else 0.0
    floor = float(np.log10(finite.min())) - 1.0 if finite.size else -1.0
    with np.errstate(divide="ignore"):
        z = np.where(err > 0, np.log10(np.where(np.isfinite(err), err, 1.0)), floor)
    z = np.where(np.isinf(err), top, z)
    tr, tc = t.tile_shape
    hover = [[f"tile ({i}, {j}) rows {i * tr}:{(i + 1) * tr} cols {j * tc}:{(j + 1) * tc}<br>max abs "
              f"{_num(err[i, j])}, max rel {_num(float(t.max_rel[i, j]))}<br>{int(t.bad[i, j])} elements off"
              for j in range(err.shape[1])] for i in range(err.shape[0])]
    first = report.first_tile.tile if report.first_tile and report.first_tile.tensor == t.tensor else None
    return {"tensor": t.tensor, "z": z.tolist(), "hover": hover, "first": first, "shape": err.shape,
            "title": f"{report.program}: max abs error per tile of {t.tensor} (log10; "
                     f"atol {report.atol:g}, rtol {report.rtol:g})"}


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


def debug_heatmap(report: Any, tensor: str | None = None) -> Any:
    """A plotly Figure of `heatmap_data` (tile rows down, tile columns across)."""
    import plotly.graph_objects as go

    d = heatmap_data(report, tensor)
    fig = go.Figure(go.Heatmap(z=d["z"], hovertext=d["hover"], hoverinfo="text", colorscale="Reds",
                               colorbar={"title": "log10 |err|"}))
    if d["first"] is not None:
        i, j = d["first"]
        fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                      line={"color": "#1c7ed6", "width": 3})
    fig.update_layout(title={"text": d["title"], "x": 0.0, "xanchor": "left", "font": {"size": 13}},
                      xaxis={"title": "tile column"}, yaxis={"title": "tile row", "autorange": "reversed"},
                      height=max(260, min(700, 40 + 18 * d["shape"][0])), margin={"l": 60, "r": 20, "t": 40, "b": 50})
    return fig
