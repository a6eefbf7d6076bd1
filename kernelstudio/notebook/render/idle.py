"""The "why units idle" table: one row per (lane group, pipe) with its idle share, top causes and releasers.

Drawn from `views.idle.idle_table`; the Studio's timeline view makes each row's name a button that
highlights the row's lanes.
"""

from __future__ import annotations

import html
from typing import Any

from ..views.style import LANE_COLORS
from .base import CSS as _CSS

__all__ = ["IDLE_COLUMNS", "group_html", "idle_cells", "idle_html", "idle_title"]

IDLE_COLUMNS = "7em 4.2em minmax(0, 1fr)"  # pipe, idle, then the causes beside their releasers
_CAUSES = "display:grid;grid-template-columns:minmax(8em, 1.1fr) minmax(8em, 1fr);column-gap:8px;"
_CELL = "font-size:11.5px;line-height:1.35;padding:2px 4px;"


def idle_title(rows: list[dict[str, Any]]) -> str:
    """The table's heading and column names."""
    if not rows:
        return ""
    grey = f"{_CELL}color:#868e96;"
    head = (f'<span style="{grey}">pipe</span><span style="{grey}">idle</span><div style="{_CAUSES}">'
            f'<span style="{grey}">top causes (% of the kernel)</span><span style="{grey}">released by</span></div>')
    return (f'<div style="{_CSS}"><b>why units idle</b> <span style="color:#868e96;">(one row per lane group '
            f'drawn and pipe, for the core it draws; click a row to mark its lanes)</span></div>'
            f'<div style="{_CSS}display:grid;grid-template-columns:{IDLE_COLUMNS};">{head}</div>')


def idle_cells(row: dict[str, Any]) -> tuple[str, str]:
    """(idle share, causes) of one row as HTML: each cause on a line of its own beside what released it."""
    idle = f'<div style="{_CSS}{_CELL}text-align:right;"><b>{row["idle_pct"]:.0f} %</b></div>'
    pairs = "".join(
        f'<span>{c["pct"]:.0f} % {html.escape(c["what"])}</span>'
        + (f'<span style="color:#495057;" title="{html.escape(c["released_by"])}">'
           f'{html.escape(c["released_short"])}</span>' if c["released_by"] else "<span>&ndash;</span>")
        for c in row["causes"]) or "<span>&ndash;</span><span></span>"
    return idle, f'<div style="{_CSS}{_CELL}{_CAUSES}">{pairs}</div>'


def group_html(row: dict[str, Any]) -> str:
    """The heading of a lane group's rows: its cores (and how many), as the timeline names them."""
    return f'<div style="{_CSS}{_CELL}padding-top:5px;"><b>{html.escape(row["label"])}</b></div>'


def idle_html(rows: list[dict[str, Any]]) -> str:
    """The whole table as static HTML (where no widgets draw it)."""
    if not rows:
        return ""
    cells = []
    for i, r in enumerate(rows):
        if i == 0 or rows[i - 1]["group"] != r["group"]:
            cells.append(f'<div style="grid-column:1 / -1;">{group_html(r)}</div>')
        name = (f'<div style="{_CSS}{_CELL}"><b style="color:{LANE_COLORS.get(r["pipe"], "#495057")};">'
                f'{html.escape(r["pipe"])}</b></div>')
        cells.append(name + "".join(idle_cells(r)))
    return (f'<div class="ks-idle">{idle_title(rows)}<div style="display:grid;grid-template-columns:'
            f'{IDLE_COLUMNS};">{"".join(cells)}</div></div>')
