"""The multi-device Studio drawn: its header, cards and "what changed" strip (HTML), the per-device timeline and
the tile-count sweep (plotly), the link figures with their sources (HTML).

Drawn from `views.multi`'s data; nothing here computes a number.
"""

from __future__ import annotations

import html
from typing import Any

from ..views.multi import MULTI_COLORS
from ..views.style import WAIT_PATTERN
from .base import CSS as _CSS
from .base import MONO as _MONO

__all__ = ["multi_cards_html", "multi_changed_html", "multi_header_html", "multi_legend_html", "link_html",
           "new_multi_timeline_figure", "new_sweep_figure", "sweep_note_html", "sweep_title_html",
           "update_multi_timeline", "update_sweep"]

_LANE_PX = 20
_TOP_PX, _BOTTOM_PX = 10, 44
_SEPARATOR = "#ced4da"


def _card(value: str, label: str, title: str = "", color: str = "") -> str:
    style = f" color:{color};" if color else ""
    return (f'<div class="ks-card" title="{html.escape(title)}" style="display:inline-block; margin:2px 16px 2px 0; '
            f'vertical-align:top;"><div style="font-size:17px; font-weight:600;{style}">{value}</div>'
            f'<div style="font-size:10.5px; color:#868e96;">{label}</div></div>')


def multi_header_html(c: dict[str, Any]) -> str:
    """The title line: name, operator, cluster and link, tensors, the split as set."""
    rows = ", ".join(f"{r:,}" for r in c["tile_rows"])
    short = f', short tile {c["tail"]}' if len(set(c["tile_rows"])) > 1 else ""  # an even split has none
    return (f'<div class="ks-header" style="{_CSS}"><b style="font-size:14px;">{html.escape(c["name"])}</b> &middot; '
            f'{c["operator"]} on {c["devices"]} x {html.escape(c["target"])} (link {html.escape(c["link"])}) '
            f'&middot; {html.escape(", ".join(c["tensors"]))} {c["dtype"]} &middot; {c["tiles"]} '
            f'tile{"s" if c["tiles"] > 1 else ""} of [{rows}] rows{short}, {c["engine"]}, '
            f'{c["algorithm"]}</div>')


def multi_cards_html(c: dict[str, Any]) -> str:
    """Time, compute, communication (hidden / exposed), the exposed share unsplit -> split, serial, gain."""
    gain_col = "#2b8a3e" if c["gain"] > 0 else ("#c92a2a" if c["gain"] < 0 else "")
    parts = [
        _card(f"{c['time_us']:,.1f} us", f"time per device, {c['tiles']} tile{'s' if c['tiles'] > 1 else ''}",
              f"launch to the last event, one device (the devices are symmetric); launch {c['launch_us']:.1f} us"),
        _card(f"{c['compute_us']:,.1f} us", "compute (matmul tiles + SyncAll)",
              "the cube's matmul tiles, each from the single-chip simulator, and the SyncAll after each"),
        _card(f"{c['comm_us']:,.1f} us", f"communication: {c['hidden_comm_us']:,.1f} hidden, "
              f"{c['exposed_comm_us']:,.1f} exposed",
              "the communication engine busy: each Commit's issue and the algorithm's steps"),
        _card(f"{c['unsplit_exposed_share']:.1%} &rarr; {c['exposed_share']:.1%}",
              f"communication exposed, of total: unoverlapped (1 tile, {c['unsplit_time_us']:,.1f} us) &rarr; "
              f"overlapped ({c['tiles']} tile{'s' if c['tiles'] > 1 else ''})",
              f"unsplit: {c['unsplit_exposed_comm_us']:,.1f} of {c['unsplit_time_us']:,.1f} us; as split: "
              f"{c['exposed_comm_us']:,.1f} of {c['time_us']:,.1f} us", MULTI_COLORS["exposed"]),
        _card(f"{c['gain']:+.1%}", f"vs unsplit ({c['unsplit_time_us']:,.1f} us)",
              "the share of the unsplit time the split saves", gain_col),
        _card(f"{c['serial_us']:,.1f} us", "serial: the same tiles, nothing overlapped"),
    ]
    if c["epilogue_us"]:
        parts.insert(3, _card(f"{c['epilogue_us']:,.1f} us", "epilogue (vector cores)"))
    return f'<div class="ks-cards" style="{_CSS}">{"".join(parts)}</div>'


def multi_changed_html(ch: dict[str, Any] | None) -> str:
    if ch is None:
        return f'<div class="ks-changed" style="{_CSS} color:#868e96;">move a control to see what it changes</div>'
    knobs = ", ".join(f"{html.escape(k)} {html.escape(str(a))} &rarr; {html.escape(str(b))}"
                      for k, (a, b) in ch["knobs"].items())
    dt, de = ch["d_time_us"], ch["d_exposed_comm_us"]

    def col(x: float) -> str:
        return "#2b8a3e" if x < 0 else ("#c92a2a" if x > 0 else "#495057")

    s0, s1 = ch["exposed_share"]
    return (f'<div class="ks-changed" style="{_CSS}"><b>what changed:</b> {knobs or "nothing"} &nbsp;'
            f'<span style="color:{col(dt)}; font-weight:600;">{dt:+,.1f} us</span> time &nbsp; '
            f'<span style="color:{col(de)}; font-weight:600;">{de:+,.1f} us</span> exposed communication '
            f'({s0:.1%} &rarr; {s1:.1%} of total)</div>')


def multi_legend_html(tl: dict[str, Any]) -> str:
    """The colour key of what the timeline draws (pipes of an expanded device in their usual colours)."""
    sw = "display:inline-block;width:12px;height:10px;vertical-align:middle;margin-right:3px;"
    kinds = set(tl["bars"]["kind"])
    items = [(MULTI_COLORS[k], text) for k, text in (
        ("compute", "compute (matmul tile)"), ("sync", "SyncAll (hatched: waiting)"),
        ("exposed", "communication exposed"), ("hidden", "communication hidden under compute"),
        ("epilogue", "vector epilogue")) if k in kinds]
    if "pipe" in kinds:
        items.append(("linear-gradient(90deg,#37b24d 0 33%,#e8590c 33% 66%,#ae3ec9 66%)",
                      "an expanded device's pipes (MTE, CUBE, FIXP)"))
    body = '<span style="color:#adb5bd;margin:0 6px;">&middot;</span> '.join(
        f'<span style="white-space:nowrap;"><span style="{sw}background:{c};"></span>{t}</span>' for c, t in items)
    title = f'<div class="ks-multi-title" style="font-weight:600;">{html.escape(tl["title"])}</div>'
    return f'<div class="ks-timeline-legend" style="{_CSS} line-height:1.9;">{title}{body}</div>'


def new_multi_timeline_figure() -> Any:
    """An empty FigureWidget: one horizontal-bar trace for every lane of every device."""
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_bar(orientation="h", name="devices", hoverinfo="text",  # a hairline parts tiles and steps
                marker={"line": {"width": 0.6, "color": "#ffffff"}})
    fig.update_layout(barmode="overlay", bargap=0.2, showlegend=False, height=300, dragmode="zoom",
                      margin={"l": 10, "r": 10, "t": _TOP_PX, "b": _BOTTOM_PX}, plot_bgcolor="#ffffff",
                      title={"text": "", "font": {"size": 12}, "x": 0.005, "xanchor": "left", "y": 0.995,
                             "yanchor": "top", "xref": "container", "yref": "container"},
                      xaxis={"title": {"text": "time (us)", "standoff": 4}, "zeroline": False, "autorange": False,
                             "range": [0, 1]},
                      yaxis={"automargin": True, "tickfont": {"size": 10}, "zeroline": False, "showgrid": False,
                             "fixedrange": True})
    return fig


def update_multi_timeline(fig: Any, tl: dict[str, Any], *, keep_range: bool = False) -> None:
    """Redraw every lane; the x axis fits the run unless `keep_range`."""
    b = tl["bars"]
    n = len(tl["lanes"])
    ticks = []
    for i, lane in enumerate(tl["lanes"]):
        head, _, rest = lane["label"].partition(" ")
        first = i == 0 or tl["lanes"][i - 1]["device"] != lane["device"]
        ticks.append(f"<b>{html.escape(head)}</b> {html.escape(rest)}" if first else html.escape(rest))
    seps = [{"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": i - 0.5, "y1": i - 0.5,
             "line": {"width": 1, "color": _SEPARATOR}}
            for i in range(1, n) if tl["lanes"][i]["device"] != tl["lanes"][i - 1]["device"]]
    with fig.batch_update():
        fig.data[0].update(y=b["lane"], base=b["start"], x=[e - s for s, e in zip(b["start"], b["end"], strict=True)],
                           width=[0.78] * len(b["lane"]), marker_color=b["color"], hovertext=b["text"],
                           marker_line_width=[0 if k == "pipe" else 0.6 for k in b["kind"]],
                           marker_pattern={"shape": [WAIT_PATTERN if w else "" for w in b["wait"]],
                                           "fillmode": "overlay", "fgcolor": "#ffffff", "solidity": 0.45})
        fig.layout.height = _TOP_PX + n * _LANE_PX + _BOTTOM_PX
        fig.layout.yaxis.update(tickvals=list(range(n)), ticktext=ticks, range=[n - 0.5, -0.5])
        fig.layout.shapes = seps
        if not keep_range:
            fig.layout.xaxis.range = tl["range"]


def new_sweep_figure() -> Any:
    """An empty FigureWidget: time, exposed and hidden communication, compute against the tile count."""
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_scatter(name="time", mode="lines+markers", line={"color": "#212529", "width": 2}, hoverinfo="text")
    fig.add_scatter(name="communication exposed", mode="lines+markers",
                    line={"color": MULTI_COLORS["exposed"], "width": 2}, hoverinfo="text")
    fig.add_scatter(name="communication hidden", mode="lines+markers",
                    line={"color": MULTI_COLORS["hidden"], "width": 2, "dash": "dot"}, hoverinfo="text")
    fig.add_scatter(name="compute", mode="lines+markers", line={"color": MULTI_COLORS["compute"], "width": 1.5,
                                                                "dash": "dash"}, hoverinfo="text")
    fig.add_scatter(name="this setting", mode="markers", hoverinfo="text",
                    marker={"size": 15, "symbol": "circle-open", "color": "#1c7ed6", "line": {"width": 2.5}})
    fig.add_scatter(name="best", mode="markers", hoverinfo="text",
                    marker={"size": 13, "symbol": "star", "color": "#2b8a3e"})
    fig.add_scatter(name="refused by CANN's rules", mode="markers", hoverinfo="text",
                    marker={"size": 8, "symbol": "x-thin-open", "color": "#adb5bd", "line": {"width": 2}})
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 10, "b": 90}, plot_bgcolor="#ffffff",
                      legend={"orientation": "h", "y": -0.23, "yanchor": "top", "x": 0, "font": {"size": 11}},
                      title={"text": "", "font": {"size": 12}, "x": 0.005, "xanchor": "left", "y": 0.995,
                             "yanchor": "top", "xref": "container", "yref": "container"},
                      xaxis={"title": {"text": "tiles (M split)", "standoff": 4}, "dtick": 1, "zeroline": False},
                      yaxis={"title": {"text": "us per device"}, "automargin": True, "rangemode": "tozero",
                             "gridcolor": "#f1f3f5"})
    return fig


def update_sweep(fig: Any, sw: dict[str, Any]) -> None:
    """Draw the sweep: the lines, this setting, the best, the unsplit time, where splitting stops paying."""
    pts = sw["points"]
    xs = [p["tiles"] for p in pts]
    right = max(xs + [r["tiles"] for r in sw["refused"]], default=1) + 0.5

    def text(p: dict[str, Any]) -> str:
        return (f"{p['tiles']} tiles (short tile {p['tail']}): {p['time_us']:,.1f} us, gain {p['gain']:+.1%}; "
                f"communication {p['comm_us']:,.1f} us, {p['exposed_comm_us']:,.1f} exposed "
                f"({p['exposed_share']:.1%} of the time), compute {p['compute_us']:,.1f} us")

    texts = [text(p) for p in pts]
    cur = [p for p in pts if p["tiles"] == sw["current"]]
    best = [p for p in pts if p["tiles"] == sw["best"]]
    top = max([p["time_us"] for p in pts] + [sw["unsplit_us"]], default=1.0)
    shapes, notes = [], []
    if sw["stops_paying"] is not None:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": sw["stops_paying"] - 0.5,
                       "x1": right, "y0": 0, "y1": 1, "fillcolor": "rgba(250,82,82,0.07)",
                       "line": {"width": 0}, "layer": "below"})
        notes.append({"x": sw["stops_paying"] - 0.5, "y": 1, "xref": "x", "yref": "paper", "xanchor": "left",
                      "yanchor": "top", "showarrow": False, "font": {"size": 11, "color": "#c92a2a"},
                      "text": f"from {sw['stops_paying']} tiles: over 2 % slower than the best"})
    shapes.append({"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": sw["unsplit_us"],
                   "y1": sw["unsplit_us"], "line": {"width": 1, "dash": "dot", "color": "#868e96"}})
    notes.append({"x": 1, "y": sw["unsplit_us"], "xref": "paper", "yref": "y", "xanchor": "right",
                  "yanchor": "bottom", "showarrow": False, "font": {"size": 10, "color": "#868e96"},
                  "text": f"unsplit {sw['unsplit_us']:,.1f} us"})
    with fig.batch_update():
        fig.data[0].update(x=xs, y=[p["time_us"] for p in pts], hovertext=texts)
        fig.data[1].update(x=xs, y=[p["exposed_comm_us"] for p in pts], hovertext=texts)
        fig.data[2].update(x=xs, y=[p["hidden_comm_us"] for p in pts], hovertext=texts)
        fig.data[3].update(x=xs, y=[p["compute_us"] for p in pts], hovertext=texts)
        fig.data[4].update(x=[p["tiles"] for p in cur], y=[p["time_us"] for p in cur],
                           hovertext=[f"this setting: {text(p)}" for p in cur])
        fig.data[5].update(x=[p["tiles"] for p in best], y=[p["time_us"] for p in best],
                           hovertext=[f"best: {text(p)}" for p in best])
        fig.data[6].update(x=[r["tiles"] for r in sw["refused"]], y=[top * 0.04] * len(sw["refused"]),
                           hovertext=[r["why"] for r in sw["refused"]])
        fig.layout.shapes = shapes
        fig.layout.annotations = notes
        fig.layout.yaxis.range = [0, top * 1.1]
        fig.layout.xaxis.range = [0.5, right]


def sweep_title_html(sw: dict[str, Any]) -> str:
    """Above the sweep (HTML, so it wraps in a narrow cell): the cluster, engine, algorithm and the best."""
    text = (f"tile-count sweep: {sw['devices']} devices, {sw['engine']}, {sw['algorithm']}; best {sw['best']} tiles "
            f"({sw['best_time_us']:,.1f} us)" if sw["best"] is not None else "no tile count allowed")
    return f'<div class="ks-multi-title" style="{_CSS} font-weight:600;">{html.escape(text)}</div>'


def sweep_note_html(sw: dict[str, Any]) -> str:
    """Under the sweep: the best, where splitting stops paying and costs time, the balance, the refused counts."""
    lines = []
    if sw["best"] is not None:
        gain = 1 - sw["best_time_us"] / sw["unsplit_us"] if sw["unsplit_us"] else 0.0
        lines.append(f"best: {sw['best']} tiles, {sw['best_time_us']:,.1f} us ({gain:.1%} less than unsplit, "
                     f"{sw['unsplit_us']:,.1f} us).")
    if sw["stops_paying"] is not None:
        lines.append(f"Overlap stops paying from {sw['stops_paying']} tiles: each tile's Commit issue and the "
                     "algorithm's per-step latency add more than the overlap hides.")
    if sw["costs_from"] is not None:
        lines.append(f"From {sw['costs_from']} tiles the split is slower than no split at all.")
    comp, comm = sw["unsplit_compute_us"], sw["unsplit_comm_us"]
    if comp and comm:
        lines.append(f"Unsplit, compute is {comp:,.1f} us and communication {comm:,.1f} us (ratio "
                     f"{max(comp, comm) / min(comp, comm):.1f}): overlap hides at most the smaller of the two.")
    if sw["refused"]:
        refused = ", ".join(str(r["tiles"]) for r in sw["refused"])
        first = html.escape(sw["refused"][0]["why"])
        lines.append(f'<span title="{first}">Refused by CANN\'s tiling rules: {refused} tiles (hover for the '
                     "first reason).</span>")
    body = "".join(f"<div>{line}</div>" for line in lines)
    return f'<div class="ks-sweep-note" style="{_CSS} color:#495057;">{body}</div>'


def _figure(field: str, v: Any) -> str:
    """A link figure in the unit its field names (bytes/s as GB/s, as the README and the sources print them)."""
    if field.endswith("_bytes_per_s"):
        return f"{v / 1e9:,.2f} GB/s"
    if field.endswith("_us"):
        return f"{v:,.2f} us"
    return f"{v:,}" if isinstance(v, int) else f"{v:,.4g}"


def link_html(rows: list[dict[str, Any]]) -> str:
    """The link's figures with their sources; "assumed" ones marked."""
    cells = []
    for r in rows:
        value = html.escape(_figure(r["field"], r["value"]))
        src = html.escape(r["source"])
        mark = "color:#c92a2a;" if r["source"].startswith("assumed") else ""
        cells.append(f'<tr style="vertical-align:top;"><td style="{_MONO} padding:2px 10px 2px 0; white-space:nowrap;">'
                     f'{r["field"]}</td>'
                     f'<td style="{_MONO} padding:2px 10px 2px 0; text-align:right; white-space:nowrap;" '
                     f'title="{html.escape(repr(r["value"]))}">{value}</td>'
                     f'<td style="padding:2px 0; {mark}">{src}</td></tr>')
    return (f'<div class="ks-link" style="{_CSS} max-width:100%; overflow-wrap:anywhere;"><table style="'
            f'border-collapse:collapse;">{"".join(cells)}</table><div style="color:#868e96; margin-top:4px;">'
            "set a figure with ks.multi.Cluster(...).with_link(field=value): its source becomes \"user\"</div></div>")
