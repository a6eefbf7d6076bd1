"""The tuner's plots: predicted time of every configuration tried (`TuneResult.figure`), and of a
dynamic kernel over a swept dimension (`ShapeSweep.figure`)."""

from __future__ import annotations

from typing import Any

__all__ = ["tune_figure", "sweep_figure"]


def tune_figure(result: Any) -> Any:
    """Scatter of configurations (in the order tried) vs predicted time with the running best, or, for
    more than two knobs, parallel coordinates of the knobs coloured by time. `result` is a TuneResult (typed
    loosely: result.py calls this module)."""
    import plotly.graph_objects as go

    ok = [t for t in result.history if t.ok]
    if len(result.knobs) > 2 and ok:
        dims = []
        for k in result.knobs:
            labels = [str(c) for c in k.choices]
            dims.append({"label": k.name, "values": [k.choices.index(t.config[k.name]) for t in ok],
                         "tickvals": list(range(len(labels))), "ticktext": labels,
                         "range": [0, max(len(labels) - 1, 1)]})
        times = [t.time_us for t in ok]
        dims.append({"label": "time (us)", "values": times})
        fig = go.Figure(go.Parcoords(line={"color": times, "colorscale": "Viridis_r", "showscale": True,
                                           "colorbar": {"title": "us"}}, dimensions=dims))
        n_bad = len(result.history) - len(ok)
        fig.update_layout(title=f"{result.name} on {result.target}: {len(ok)} legal configurations "
                                f"({n_bad} illegal not shown); best {result.best_time_us:.2f} us",
                          height=420)
        return fig
    label = [", ".join(f"{k}={v!r}" for k, v in t.config.items()) for t in result.history]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[t.index for t in ok], y=[t.time_us for t in ok], mode="markers", name="legal",
                             text=[label[t.index] for t in ok], hovertemplate="%{text}<br>%{y:.2f} us"))
    run, best = [], float("inf")
    for t in result.history:
        if t.ok:
            best = min(best, t.time_us)
        run.append(best if best < float("inf") else None)
    fig.add_trace(go.Scatter(x=[t.index for t in result.history], y=run, mode="lines", name="best so far",
                             line={"shape": "hv"}))
    bad = [t for t in result.history if not t.ok]
    if bad and ok:
        top = max(t.time_us for t in ok)
        fig.add_trace(go.Scatter(x=[t.index for t in bad], y=[top * 1.05] * len(bad), mode="markers", name="illegal",
                                 marker={"symbol": "x", "color": "grey"},
                                 text=[f"{label[t.index]}<br>{t.kind}" for t in bad], hovertemplate="%{text}"))
    if result.feasible:
        b = result._best_trial
        fig.add_trace(go.Scatter(x=[b.index], y=[b.time_us], mode="markers", name="best",
                                 marker={"symbol": "star", "size": 16, "color": "gold", "line": {"width": 1}}))
    fig.update_layout(title=f"{result.name} on {result.target}: {result.strategy} search",
                      xaxis_title="configuration (order tried)", yaxis_title="predicted time (us)", height=400)
    return fig


def sweep_figure(sweep: Any) -> Any:
    """Predicted time (log axes) per bucket of a `ShapeSweep`, with % of the roofline and the tail
    efficiency below."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4])
    for bucket in dict.fromkeys(r["bucket"] for r in sweep.rows):
        pts = [r for r in sweep.rows if r["bucket"] == bucket]
        fig.add_trace(go.Scatter(x=[r["value"] for r in pts], y=[r["time_us"] for r in pts], mode="lines+markers",
                                 name=f"{bucket}: time (us)", legendgroup=bucket,
                                 hovertemplate=f"{sweep.dim}=%{{x}}<br>%{{y:.2f}} us<br>bucket {bucket}"),
                      row=1, col=1)
    xs = [r["value"] for r in sweep.rows]
    fig.add_trace(go.Scatter(x=xs, y=[r["roofline_pct"] for r in sweep.rows], name="% of roofline bound",
                             mode="lines+markers"), row=2, col=1)
    fig.add_trace(go.Scatter(x=xs, y=[100 * r["tail_efficiency"] for r in sweep.rows], name="tail efficiency (%)",
                             mode="lines+markers", line={"dash": "dot"}), row=2, col=1)
    fig.update_xaxes(type="log", title_text=sweep.dim, row=2, col=1)
    fig.update_xaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", title_text="predicted time (us)", row=1, col=1)
    fig.update_yaxes(title_text="%", range=[0, 105], row=2, col=1)
    fixed = ", ".join(f"{k}={v}" for k, v in sweep.fixed.items())
    fig.update_layout(title=f"sweep of {sweep.dim} ({fixed})", height=520)
    return fig
