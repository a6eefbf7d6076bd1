"""An MoE block's per-core load strip (Timeline tab) and its imbalance card: drawn from `views.moe.moe_data`.

One row per grouped-matmul kernel: a column per cube core, as tall as the kernel's span; from the bottom the
core's cube busy time, then its other work until it finished, then (pale red) its wait for the last core.
"""

from __future__ import annotations

import html
from typing import Any

from ..views.style import IDLE, LANE_COLORS, shade
from .base import CSS as _CSS

__all__ = ["imbalance_card", "load_html"]

_COL_PX = 36  # a column's height: the kernel's span
_BUSY = LANE_COLORS["CUBE"]
_WORK = shade(LANE_COLORS["CUBE"], 0.7)


def _swatch(color: str) -> str:
    return (f'<span style="display:inline-block;width:10px;height:10px;vertical-align:middle;margin:0 3px 0 8px;'
            f'background:{color};"></span>')


def _column(c: dict[str, Any], span: float, last: bool) -> str:
    fin = min(max(c["finish_us"] / span, 0.0), 1.0) if span > 0 else 0.0
    busy = min(max(c["busy_us"] / span, 0.0), fin) if span > 0 else 0.0
    tip = (f"{c['core']}: cube busy {c['busy_us']:,.2f} us, done at {c['finish_us']:,.2f} us of {span:,.2f} us"
           f" (waits {max(span - c['finish_us'], 0.0):,.2f} us)" + (" - the last to finish" if last else ""))
    edge = "outline:1px solid #212529;" if last else ""
    return (f'<div class="ks-load-core" title="{html.escape(tip)}" style="flex:1 1 0; min-width:2px; '
            f'height:{_COL_PX}px; display:flex; flex-direction:column-reverse; background:{IDLE}; {edge}">'
            f'<div style="height:{100 * busy:.1f}%; background:{_BUSY};"></div>'
            f'<div style="height:{100 * (fin - busy):.1f}%; background:{_WORK};"></div></div>')


def _row(ld: dict[str, Any]) -> str:
    cores = ld["cores"]
    busy = [c["busy_us"] for c in cores]
    last = cores[ld["last"]]
    head = (f'<b>{html.escape(ld["stage"])}</b> ({html.escape(ld["kernel"])}): {len(cores)} cube cores, busy '
            f'{min(busy):,.2f} .. {max(busy):,.2f} us; last {html.escape(last["core"])} done at '
            f'{last["finish_us"]:,.2f} of {ld["span_us"]:,.2f} us; <b>{ld["idle_pct"]:.0f} %</b> of core time idle '
            'waiting for it')
    cols = "".join(_column(c, ld["span_us"], i == ld["last"]) for i, c in enumerate(cores))
    return (f'<div class="ks-load-row" style="margin:3px 0 6px 0;"><div>{head}</div>'
            f'<div style="display:flex; gap:1px; align-items:flex-end; max-width:100%;">{cols}</div></div>')


def load_html(moe: dict[str, Any] | None) -> str:
    """The per-core load strip of an MoE block's grouped matmuls (empty for another design)."""
    if not moe or not moe["loads"]:
        return ""
    key = (f'<span style="color:#868e96;">per cube core, the kernel\'s span tall:</span>{_swatch(_BUSY)}cube busy'
           f'{_swatch(_WORK)}other work until done{_swatch(IDLE)}waiting for the last core')
    rows = "".join(_row(ld) for ld in moe["loads"])
    return (f'<div class="ks-load" style="{_CSS} font-size:11.5px; line-height:1.5; margin:4px 0;">'
            f'<div><b>per-core load</b> (imbalance {html.escape(str(moe["imbalance"]))}) {key}</div>{rows}</div>')


def imbalance_card(moe: dict[str, Any] | None) -> dict[str, str] | None:
    """The imbalance card's value, label and tooltip (None: not an MoE block)."""
    if not moe or moe["cost"] is None:
        return None
    return {"value": f"{moe['cost']:.2f}x",
            "label": f"imbalance cost ({moe['time_us']:,.1f} vs {moe['balanced_us']:,.1f} us balanced)",
            "title": "this block's time over the same block with every expert given the same rows "
                     f"(imbalance='uniform'; rows per expert here: {', '.join(map(str, moe['plan_sizes']))})"}
