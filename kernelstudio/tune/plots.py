"""The tuning plot: predicted time of every configuration tried."""

from __future__ import annotations

from typing import Any

__all__ = ["tune_figure"]


def tune_figure(result: Any) -> Any:
    """Scatter of configurations (in the order tried) vs predicted time with the running best, or, for
    more than two knobs, parallel coordinates of the knobs coloured by time."""
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
