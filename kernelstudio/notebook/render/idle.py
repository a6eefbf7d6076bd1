"""The "why units idle" view."""

from __future__ import annotations

import html
from typing import Any

from ..views.style import LANE_COLORS
from .base import CSS as _CSS

__all__ = ["idle_html"]


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

