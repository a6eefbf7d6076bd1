"""Thin renderers: view data (kernelstudio.notebook.views) -> HTML fragments and plotly figure updates.

Nothing here computes a number; every figure is drawn from the plain data the views return.
"""

from __future__ import annotations

import html
from typing import Any

from .views.style import LANE_COLORS, TIER_COLORS, shade

__all__ = [
    "banner_html", "capacity_html", "cards_html", "changed_html", "code_html", "dag_html", "diff_html", "idle_html",
    "new_flow_figure", "new_roofline_figure", "new_timeline_figure", "update_flow", "update_roofline",
    "update_timeline",
]

_CSS = ("font-family: var(--jp-ui-font-family, Helvetica, Arial, sans-serif); font-size: 12px; "
        "color: var(--jp-ui-font-color1, #212529);")
_MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 11.5px;"


def _b(n: float) -> str:
    """Bytes in the unit a kernel engineer reads (B, KB, MB, GB; powers of 1000 as msprof prints)."""
    a = abs(n)
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if a >= div:
            return f"{n / div:,.2f} {unit}"
    return f"{n:,.0f} B"


def _card(value: str, label: str, title: str = "") -> str:
    return (f'<div class="ks-card" title="{html.escape(title)}" style="display:inline-block; margin:2px 14px 2px 0;">'
            f'<div style="font-size:17px; font-weight:600;">{value}</div>'
            f'<div style="font-size:10.5px; color:#868e96;">{label}</div></div>')


def cards_html(cards: dict[str, Any]) -> str:
    """The metric cards: time, TFLOPS, GB/s (% HBM), GM bytes, speedup, roofline bound and efficiency."""
    parts = [
        _card(f"{cards['time_us']:,.2f} us", "predicted time", f"launch overhead {cards['launch_overhead_us']:.1f} us "
              "(assumed, profile field launch_overhead_us)"),
        _card(f"{cards['tflops']:,.2f}", "TFLOPS (cube)"),
        _card(f"{cards.get('hbm_gbps', cards['gm_gbps']):,.0f} GB/s",
              f"HBM ({cards['bandwidth_pct']:.1f} % of peak), GM {cards['gm_gbps']:,.0f} GB/s",
              "HBM: bytes that missed L2; GM: every byte moved to or from global memory (L2 hits included)"),
        _card(_b(cards["gm_bytes"]), f"GM traffic (HBM {_b(cards['hbm_bytes'])})"),
    ]
    if cards["speedup"] is not None:
        parts.append(_card(f"{cards['speedup']:.2f}x", "vs unfused",
                           f"unfused plan {cards['unfused_time_us']:,.2f} us, {_b(cards['unfused_gm_bytes'])} GM"))
    limiter = f" ({cards['roofline_limiter']})" if "roofline_limiter" in cards else ""
    parts.append(_card(f"{cards['roofline_bound_us']:,.2f} us", f"roofline bound{limiter}",
                       "max(cube flops / cube peak, vector work / vector peak, compulsory bytes / HBM bandwidth)"))
    parts.append(_card(f"{cards['efficiency']:.1%}", "of roofline"))
    if "traffic_amplification" in cards:
        parts.append(_card(f"{cards['traffic_amplification']:.2f}x", "traffic amplification"))
    if "l2_hit_ratio" in cards:
        parts.append(_card(f"{cards['l2_hit_ratio']:.0%}", "L2 hit ratio"))
    parts.append(_card(cards["bottleneck"], "busiest pipe"))
    return f'<div class="ks-cards" style="{_CSS}">{"".join(parts)}</div>'


def changed_html(ch: dict[str, Any] | None) -> str:
    """The "what changed" strip after a knob move."""
    if ch is None:
        return f'<div class="ks-changed" style="{_CSS} color:#868e96;">move a control to see what it changes</div>'
    knobs = ", ".join(f"{k} {html.escape(str(a))} &rarr; {html.escape(str(b))}" for k, (a, b) in ch["knobs"].items())
    dt, db = ch["d_time_us"], ch["d_gm_bytes"]
    col = "#2b8a3e" if dt < 0 else ("#c92a2a" if dt > 0 else "#495057")
    b0, b1 = ch["bottleneck"]
    neck = f"bottleneck {b0} &rarr; {b1}" if b0 != b1 else f"bottleneck {b1}"
    add, rem = ch["code_lines"]
    return (f'<div class="ks-changed" style="{_CSS}"><b>what changed:</b> {knobs or "nothing"} &nbsp;'
            f'<span style="color:{col}; font-weight:600;">{dt:+,.2f} us</span> &nbsp; {"+" if db >= 0 else "-"}'
            f'{_b(abs(db))} GM &nbsp; {neck} &nbsp; code: +{add} / -{rem} lines</div>')


def _bar(bar: dict[str, Any], over: bool = False) -> str:
    cap = bar["capacity"] or 1
    width = 260
    segs = []
    palette = TIER_COLORS.get(bar["tier"], "#868e96")
    for i, s in enumerate(bar["segments"]):
        w = max(1.0, width * s["bytes"] / cap)
        color = shade(palette, 0.45) if s["slot"] == 1 else shade(palette, 0.1 if i % 2 else 0.0)
        tip = (f"{s['buffer']} slot {s['slot'] + 1}/{s['depth']} ({s['queue']}): {s['bytes']:,} B"
               + (f" - {s['purpose']}" if s["purpose"] else ""))
        segs.append(f'<div title="{html.escape(tip)}" style="display:inline-block; height:10px; width:{w:.1f}px; '
                    f'background:{color}; border-right:1px solid #ffffff;"></div>')
    pct = bar["pct"]
    label_col = "#c92a2a" if over or pct > 100 else "#495057"
    return (f'<div style="display:flex; align-items:center; margin:1px 0;">'
            f'<span style="width:150px; {_MONO}">{html.escape(bar["kernel"][:12])} {bar["tier"]}</span>'
            f'<div style="position:relative; width:{width}px; height:10px; background:#f1f3f5; '
            f'white-space:nowrap; overflow:visible;">{"".join(segs)}'
            f'<div style="position:absolute; left:{width}px; top:-2px; height:14px; border-left:2px solid #212529;">'
            f'</div></div><span style="margin-left:8px; color:{label_col};">{pct:.0f} % '
            f'({bar["used"]:,} / {bar["capacity"]:,} B)</span></div>')


def capacity_html(bars: list[dict[str, Any]]) -> str:
    """Bytes used vs capacity per kernel and tier; each queue slot a segment (double buffering halves room)."""
    rows = "".join(_bar(b) for b in bars)
    return f'<div class="ks-capacity" style="{_CSS}">{rows}</div>'


def banner_html(message: str | None, overflow: dict[str, Any] | None = None) -> str:
    """The error banner over the last good views (empty when there is no error)."""
    if not message:
        return ""
    bar = _bar(overflow, over=True) if overflow else ""
    return (f'<div class="ks-banner" style="{_CSS} background:#fff5f5; border:1px solid #ffa8a8; '
            f'border-radius:4px; padding:6px 8px; margin:4px 0;"><b style="color:#c92a2a;">not applied:</b> '
            f'{html.escape(message)}<div style="color:#868e96;">the views below show the last good setting</div>'
            f'{bar}</div>')


def code_html(highlighted: str) -> str:
    return (f'<div class="ks-code" style="max-height:520px; overflow:auto; border:1px solid #e9ecef; '
            f'{_MONO}">{highlighted}</div>')


def diff_html(diff: list[tuple[str, str]]) -> str:
    """A pass's IR with added lines green and removed lines red."""
    colors = {"+": "#d3f9d8", "-": "#ffe3e3", " ": "transparent"}
    lines = "".join(f'<span style="display:block; background:{colors[k]};">{k} {html.escape(t)}</span>'
                    for k, t in diff)
    return (f'<div class="ks-pass" style="max-height:560px; overflow:auto;"><pre style="margin:0; '
            f'line-height:1.35; {_MONO}">{lines}</pre></div>')


def dag_html(svg: str) -> str:
    """The DAG's SVG in a scrolling box (big graphs keep their readable size)."""
    return f'<div class="ks-dag" style="max-height:640px; overflow:auto;">{svg}</div>'


def idle_html(idle: list[dict[str, Any]]) -> str:
    """The idle breakdown: per pipe, how long it idled and what it waited on."""
    if not idle:
        return ""
    rows = []
    for r in idle:
        causes = "; ".join(f"{c['pct']:.0f} % {html.escape(c['cause'])}" for c in r["causes"][:4])
        rows.append(f'<div><b style="color:{LANE_COLORS.get(r["pipe"], "#495057")};">{r["core"]} {r["pipe"]}</b> '
                    f'idle {r["idle_pct"]:.0f} %: {causes}</div>')
    return f'<div class="ks-idle" style="{_CSS}"><b>why units idle</b>{"".join(rows)}</div>'


# --- plotly figures -------------------------------------------------------------------------------
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
