"""The feasibility map: predicted time over two knobs (the others at the best configuration's values, or
the default's), illegal cells with their reason — which buffer overflows by how many bytes, or which rule
fails. The default and the best are outlined in their own cells only when they lie in the slice drawn;
otherwise a note says where they are.

`feasibility_data` is pure data (tested without plotly); `feasibility_figure` draws it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import TuneError
from .space import config_json

__all__ = ["feasibility_data", "feasibility_figure", "short_reason"]


def short_reason(kind: str | None, error: str | None, info: dict[str, Any]) -> str:
    """One line: "L0B over by 65,536 B (131,072 needed, 65,536 available)", or the failing rule."""
    if info.get("need") is not None and info.get("have") is not None:
        need, have = int(info["need"]), int(info["have"])
        return f"{info.get('tier', 'buffer')} over by {need - have:,} B ({need:,} B needed, {have:,} B available)"
    msg = (error or kind or "illegal").splitlines()[0]
    m = re.match(r"(?:kernel|program) \w+: (.*)", msg)
    body = (m.group(1) if m else msg).split(";")[0].strip()
    return body[:120]


def _label(v: Any) -> str:
    return str(v)


def _slice_base(result: Any, at: str | Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """The configuration whose other knobs fix the slice: the best's, the default's, or given values."""
    if isinstance(at, str):
        if at not in ("best", "default"):
            raise TuneError(f"feasibility map: at={at!r}; use 'best', 'default' or a dict of knob values")
        return dict(result.best.config) if at == "best" and result.feasible else dict(result.default_config)
    unknown = [k for k in at if k not in names]
    if unknown:
        raise TuneError(f"feasibility map: at= names {unknown[0]!r}, not a knob of {result.name}; its knobs are "
                        f"{', '.join(names)}")
    return dict(result.default_config, **at)


def _where(what: str, cfg: dict[str, Any], base: dict[str, Any], x: str, y: str, time: str) -> str:
    other = ", ".join(f"{k}={v!r}" for k, v in cfg.items() if k not in (x, y) and base.get(k) != v)
    return f"the {what} ({time}) is not in this slice: it has {other}"


def _title_lines(note: str) -> str:
    """A note in the title, broken at its clauses so it fits a narrow plot."""
    return note.replace("; ", ";<br>")


def feasibility_data(result: Any, x: str, y: str, *, at: str | Mapping[str, Any] = "best") -> dict[str, Any]:
    """Cells over the choices of knobs `x` and `y`, the other knobs at the best configuration's values
    (`at="best"`), the default's (`at="default"`) or given ones (a dict); configurations not tried yet are
    evaluated now (in this process, through the same cache and database). `default_xy` / `best_xy` are the
    cells of the default and the best when the slice holds them (else None, and `default_note` /
    `best_note` say where they are). `result` is a TuneResult (typed loosely: result.py calls this module)."""
    names = [k.name for k in result.knobs]
    for axis, v in (("x", x), ("y", y)):
        if v not in names:
            raise TuneError(f"feasibility map: {axis}={v!r} is not a knob of {result.name}; its knobs are "
                            f"{', '.join(names)}")
    if x == y:
        raise TuneError(f"feasibility map: x and y are both {x!r}; pick two different knobs of {', '.join(names)}")
    knobs = {k.name: k for k in result.knobs}
    base = _slice_base(result, at, names)
    xs, ys = list(knobs[x].choices), list(knobs[y].choices)
    configs = [dict(base, **{x: xv, y: yv}) for yv in ys for xv in xs]
    known = {config_json(t.config): t for t in result.history}
    outcomes: dict[int, Any] = {}
    missing = []
    for i, c in enumerate(configs):
        t = known.get(config_json(c))
        if t is not None:
            outcomes[i] = (t.time_us, t.kind, t.error, t.info)
        else:
            missing.append(i)
    if missing:
        _evaluate_missing(result, configs, missing, outcomes)
    default = result.default_config
    best = result.best.config if result.feasible else None
    cells = []
    for j, yv in enumerate(ys):
        row = []
        for i, xv in enumerate(xs):
            n = j * len(xs) + i
            time_us, kind, error, info = outcomes[n]
            cfg = configs[n]
            row.append({
                "x": xv, "y": yv, "config": cfg, "time_us": time_us, "feasible": time_us is not None,
                "kind": kind, "error": error,
                "reason": None if time_us is not None else short_reason(kind, error, info or {}),
                "tier": (info or {}).get("tier"),
                "overflow_bytes": (int(info["need"]) - int(info["have"])
                                   if info and info.get("need") is not None and info.get("have") is not None
                                   else None),
                "is_default": cfg == default, "is_best": best is not None and cfg == best,
            })
        cells.append(row)
    in_slice = lambda cfg: all(cfg[k] == v for k, v in base.items() if k not in (x, y))  # noqa: E731
    d = result.default
    d_time = (f"{d.time_us:.2f} us" if d.ok else f"illegal: {d.kind}") if d.config == default else "not tried"
    default_note = None if in_slice(default) else (
        _where("default", default, base, x, y, d_time) + "; feasibility_map(..., at='default') draws its slice")
    best_note = None
    if best is not None and not in_slice(best):
        best_note = (_where("best", best, base, x, y, f"{result.best.time_us:.2f} us")
                     + "; feasibility_map(..., at='best') draws its slice")
    return {"x": x, "y": y, "xs": xs, "ys": ys, "base": base, "cells": cells, "target": result.target,
            "name": result.name,
            "default_xy": (default[x], default[y]) if default_note is None else None, "default_note": default_note,
            "best_xy": (best[x], best[y]) if best is not None and best_note is None else None,
            "best_note": best_note}


def _evaluate_missing(result: Any, configs: list[dict[str, Any]], missing: list[int],
                      outcomes: dict[int, Any]) -> None:
    from .db import open_db
    from .executors import InlineRunner

    ev = result._ev
    sub = [configs[i] for i in missing]
    dbh = open_db(ev.db_arg)
    try:
        def on_trial(k: int, out: Any, cached: bool) -> None:
            outcomes[missing[k]] = (out.time_us, out.kind, out.error, out.info)

        ev.evaluate(sub, InlineRunner(ev.build_fn, ev.target), dbh, on_trial)
    finally:
        if dbh is not None and dbh is not ev.db_arg:
            dbh.close()


def _outline(data: dict[str, Any], xy: tuple[Any, Any], inset: float, color: str, dash: str,
             name: str) -> dict[str, Any]:
    """A rectangle around one cell (category axes place cell i at i), so the cell's number stays readable."""
    i, j = data["xs"].index(xy[0]), data["ys"].index(xy[1])
    return {"type": "rect", "xref": "x", "yref": "y", "x0": i - 0.5 + inset, "x1": i + 0.5 - inset,
            "y0": j - 0.5 + inset, "y1": j + 0.5 - inset, "line": {"color": color, "width": 3, "dash": dash},
            "fillcolor": "rgba(0,0,0,0)", "name": name, "showlegend": True}


def feasibility_figure(data: dict[str, Any]) -> Any:
    """Plotly heatmap of `feasibility_data`: time per legal cell, grey illegal cells with the reason on hover
    and in the cell, the default (black outline) and best (orange dashed outline) cells outlined when this
    slice holds them, and a note under the title where it does not."""
    import plotly.graph_objects as go

    xl, yl = [_label(v) for v in data["xs"]], [_label(v) for v in data["ys"]]
    z, grey, hover, text = [], [], [], []
    for row in data["cells"]:
        z.append([c["time_us"] for c in row])
        grey.append([None if c["feasible"] else 1 for c in row])
        hover.append([(f"{c['time_us']:.2f} us" if c["feasible"] else f"illegal: {c['reason']}")
                      + ("<br>the default" if c["is_default"] else "") + ("<br>the best" if c["is_best"] else "")
                      + "<br>" + ", ".join(f"{k}={v!r}" for k, v in c["config"].items()) for c in row])
        text.append([f"{c['time_us']:.2f}" if c["feasible"] else _cell_text(c) for c in row])
    fig = go.Figure()
    fig.add_trace(go.Heatmap(x=xl, y=yl, z=grey, colorscale=[[0, "#d0d0d0"], [1, "#d0d0d0"]], showscale=False,
                             hoverinfo="skip", name="illegal"))
    fig.add_trace(go.Heatmap(x=xl, y=yl, z=z, colorscale="Viridis_r", colorbar={"title": "us"}, text=text,
                             texttemplate="%{text}", hovertext=hover, hoverinfo="text", name="predicted time"))
    if data["default_xy"] is not None:
        fig.add_shape(**_outline(data, data["default_xy"], 0.03, "black", "solid", "default"))
    if data["best_xy"] is not None:
        fig.add_shape(**_outline(data, data["best_xy"], 0.12, "#f08c00", "dash", "best"))
    others = ", ".join(f"{k}={v!r}" for k, v in data["base"].items() if k not in (data["x"], data["y"]))
    notes = [_title_lines(n) for n in (data.get("default_note"), data.get("best_note")) if n]
    sub = "<br>".join(([f"other knobs: {others}"] if others else []) + notes)
    lines = sub.count("<br>") + 1 if sub else 0
    # one title line at the top; the slice and the notes in a box between it and the plot
    if sub:
        fig.add_annotation(text=sub, x=0, y=1, xref="paper", yref="paper", xanchor="left", yanchor="bottom",
                           align="left", showarrow=False, yshift=6, font={"size": 11, "color": "#495057"})
    fig.update_layout(title={"text": f"{data['name']} on {data['target']}: predicted time (grey: illegal)",
                             "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 12}},
                      xaxis={"title": data["x"], "type": "category"}, yaxis={"title": data["y"], "type": "category"},
                      legend={"orientation": "h", "y": -0.2}, height=380 + 16 * lines,
                      margin={"t": 56 + 16 * lines})
    return fig


def _cell_text(c: dict[str, Any]) -> str:
    if c["overflow_bytes"] is not None:
        return f"{c['tier']} +{c['overflow_bytes']:,} B"
    return (c["reason"] or "illegal")[:28]
