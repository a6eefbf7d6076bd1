"""The memory-flow Sankeys: the fused plan above the unfused plan, each an SVG with its own title.

Drawn here rather than with plotly's Sankey, which writes its labels over the bands beside each node: every
node carries its name and bytes (in, and out where they differ) above it, bands and nodes say their bytes
and why on hover, and both plans share one scale (pixels per byte), so the plan that moves more is taller.
The drawing stretches to its container's width (never narrower than `MIN_WIDTH_PX`, scrolling instead);
text keeps its size: bands and nodes live in an inner SVG stretched horizontally, labels in the outer one.
"""

from __future__ import annotations

import html
from typing import Any

from .base import CSS as _CSS
from .base import nbytes as _b

__all__ = ["MIN_WIDTH_PX", "flow_html", "new_flow_figure", "update_flow"]

_PLANS = ("fused", "unfused")
MIN_WIDTH_PX = 420
_UNITS = 1000.0  # width of the stretched inner drawing, in its own units
_NODE_W = 9.0  # node width, inner units
_LABEL_H = 40  # room above each node for its three label lines, px
_TOP = 6 + _LABEL_H  # the top labels of every other column sit one label block higher (they never collide)
_TALLEST = 230  # px of the tallest column of either plan
_MIN_H = 2.0
_MMAD_LINK = "#868e96"


def new_flow_figure() -> Any:
    """An ipywidgets box of two HTML views (fused, unfused); `update_flow` fills them."""
    import ipywidgets as W

    box = W.VBox([W.HTML() for _ in _PLANS])
    box.add_class("ks-flow")
    return box


def update_flow(box: Any, flow: dict[str, Any]) -> None:
    """Redraw both Sankeys from `views.flow_data`."""
    per_byte = _scale([flow[p] for p in _PLANS])
    for child, plan in zip(box.children, _PLANS, strict=True):
        child.value = flow_html(plan, flow[plan], per_byte)


def _scale(plans: list[dict[str, Any] | None]) -> float:
    """Pixels per byte that make the tallest column of any plan `_TALLEST` px."""
    tallest = max((_column_bytes(d) for d in plans if d is not None), default=0)
    return _TALLEST / tallest if tallest else 0.0


def _column_bytes(d: dict[str, Any]) -> int:
    cols: dict[int, int] = {}
    for n in d["nodes"]:
        cols[n["column"]] = cols.get(n["column"], 0) + max(n["in"], n["out"])
    return max(cols.values(), default=0)


def _title(plan: str, d: dict[str, Any] | None) -> tuple[str, str]:
    if d is None:
        return f"<b>{plan} plan</b>: not simulated", "compare is off"
    kernels = f"{d['kernels']} kernel{'s' if d['kernels'] != 1 else ''}"
    return (f"<b>{plan} plan</b> ({kernels}): GM {_b(d['gm_bytes'])} = HBM {_b(d['hbm_bytes'])} + L2 "
            f"{_b(d['l2_bytes'])}",
            f"reads hit L2 {d['l2_hit_ratio']:.1%}; {_b(d['total_bytes'])} moved between tiers; hover a node or "
            "a band for its bytes and why")


def _short_bytes(n: float) -> str:
    """Bytes in three significant figures (786 KB, 1.13 MB): a label's number; the hover has them all."""
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.3g} {unit}"
    return f"{n:.0f} B"


def _label_lines(node: dict[str, Any]) -> list[str]:
    if node["kind"] == "source":
        return [node["short"], _short_bytes(node["out"])]
    if node["kind"] == "sink" or node["in"] == node["out"]:
        return [node["short"], _short_bytes(node["in"])]
    return [node["short"], f"in {_short_bytes(node['in'])}", f"out {_short_bytes(node['out'])}"]


def flow_html(plan: str, d: dict[str, Any] | None, per_byte: float) -> str:
    """One plan's titled Sankey (an SVG) at `per_byte` pixels per byte."""
    title, sub = _title(plan, d)
    head = (f'<div style="font-size:13px;">{title}</div>'
            f'<div style="font-size:11px; color:#555; margin-bottom:4px;">{html.escape(sub)}</div>')
    if d is None or not d["nodes"]:
        return (f'<div class="ks-flow-plan" data-plan="{plan}" style="{_CSS} white-space:normal; margin:6px 0;">'
                f'{head}</div>')
    geo = _layout(d, per_byte)
    svg = _svg(d, geo)
    return (f'<div class="ks-flow-plan" data-plan="{plan}" style="{_CSS} white-space:normal; margin:6px 0 10px;">{head}'
            f'<div style="overflow-x:auto; padding-right:6px;">{svg}</div></div>')


def _layout(d: dict[str, Any], per_byte: float) -> dict[str, Any]:
    """Node boxes (x in inner units, y/height in px) and each link's band ends on its two nodes."""
    nodes, links = d["nodes"], d["links"]
    ncols = max(n["column"] for n in nodes) + 1
    span = _UNITS - _NODE_W
    x = [span * n["column"] / max(ncols - 1, 1) for n in nodes]
    h = [max(_MIN_H, max(n["in"], n["out"]) * per_byte) for n in nodes]
    y = [0.0] * len(nodes)
    bottom: dict[int, float] = {}
    for i, n in enumerate(nodes):  # stacked in view order, each under its label
        top = bottom.get(n["column"], _TOP) + _LABEL_H
        y[i] = top
        bottom[n["column"]] = top + h[i] + 8
    out_at = list(y)
    in_at = list(y)
    bands = []
    # bands leave a node in the order of their targets' height, and enter in the order of their sources'
    for lk in sorted(links, key=lambda lk: (y[lk["target"]], y[lk["source"]])):
        w = max(1.0, lk["bytes"] * per_byte)
        s0 = out_at[lk["source"]]
        out_at[lk["source"]] += w
        bands.append([lk, s0, w, None])
    for band in sorted(bands, key=lambda b: (y[b[0]["source"]], b[1])):
        band[3] = in_at[band[0]["target"]]
        in_at[band[0]["target"]] += band[2]
    height = max(bottom.values()) + 4
    return {"x": x, "y": y, "h": h, "bands": bands, "height": height}


def _band_path(x0: float, y0: float, x1: float, y1: float, w: float) -> str:
    xm = (x0 + x1) / 2
    return (f"M{x0:.1f},{y0:.1f} C{xm:.1f},{y0:.1f} {xm:.1f},{y1:.1f} {x1:.1f},{y1:.1f} "
            f"L{x1:.1f},{y1 + w:.1f} C{xm:.1f},{y1 + w:.1f} {xm:.1f},{y0 + w:.1f} {x0:.1f},{y0 + w:.1f} Z")


def _svg(d: dict[str, Any], geo: dict[str, Any]) -> str:
    nodes = d["nodes"]
    x, y, h, height = geo["x"], geo["y"], geo["h"], geo["height"]
    last = max(n["column"] for n in nodes)
    parts = [f'<svg class="ks-sankey" width="100%" height="{height:.0f}" '
             f'style="min-width:{MIN_WIDTH_PX}px; display:block; font-size:10px;" '
             f'xmlns="http://www.w3.org/2000/svg">',
             f'<svg x="0" y="0" width="100%" height="{height:.0f}" viewBox="0 0 {_UNITS:.0f} {height:.0f}" '
             f'preserveAspectRatio="none">']
    for lk, s0, w, t0 in geo["bands"]:
        src, dst = lk["source"], lk["target"]
        color = _MMAD_LINK if "Mmad" in lk["edge"] else nodes[src]["color"]
        path = _band_path(x[src] + _NODE_W, s0, x[dst], t0, w)
        parts.append(f'<path class="ks-band" d="{path}" fill="{color}" fill-opacity="0.28" data-source="{src}" '
                     f'data-target="{dst}" data-bytes="{lk["bytes"]}"><title>{html.escape(lk["hover"])}</title></path>')
    for i, n in enumerate(nodes):
        parts.append(f'<rect class="ks-node" x="{x[i]:.1f}" y="{y[i]:.1f}" width="{_NODE_W:.0f}" '
                     f'height="{h[i]:.1f}" fill="{n["color"]}" data-node="{i}" data-kind="{n["kind"]}" '
                     f'data-name="{html.escape(n["name"])}"><title>{html.escape(n["hover"])}</title></rect>')
    parts.append("</svg>")
    tops = {min((j for j, m in enumerate(nodes) if m["column"] == c), key=lambda j: y[j])
            for c in {m["column"] for m in nodes}}
    for i, n in enumerate(nodes):  # labels above their nodes, in the unstretched outer SVG
        pct = 100 * (x[i] + (0 if n["column"] == 0 else _NODE_W if n["column"] == last else _NODE_W / 2)) / _UNITS
        anchor = "start" if n["column"] == 0 else "end" if n["column"] == last else "middle"
        lines = _label_lines(n)
        lift = _LABEL_H if i in tops and n["column"] % 2 else 0  # every other column's top label one block up
        first = y[i] - 4 - 12 * (len(lines) - 1) - lift
        if lift:  # a faint leader from the lifted label down to its node
            mid = 100 * (x[i] + _NODE_W / 2) / _UNITS
            parts.append(f'<line x1="{mid:.2f}%" x2="{mid:.2f}%" y1="{y[i] - _LABEL_H + 2:.0f}" y2="{y[i]:.0f}" '
                         f'stroke="#ced4da" stroke-width="1"/>')
        weight = ['font-weight="bold"'] + [""] * (len(lines) - 1)
        spans = "".join(f'<tspan x="{pct:.2f}%" y="{first + 12 * k:.0f}" {wt}>{html.escape(t)}</tspan>'
                        for k, (t, wt) in enumerate(zip(lines, weight, strict=True)))
        parts.append(f'<text class="ks-node-label" text-anchor="{anchor}" fill="#343a40">{spans}'
                     f'<title>{html.escape(n["hover"])}</title></text>')
    parts.append("</svg>")
    return "".join(parts)
