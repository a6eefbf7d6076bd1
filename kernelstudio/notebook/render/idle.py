"""The "why units idle" table: one row per (lane group, pipe) with its idle share, top causes and releasers.

Drawn from `views.idle.idle_table`; the Studio's timeline view makes each row's name a button that
highlights the row's lanes.
"""

from __future__ import annotations

import html
from typing import Any

from ..views.style import LANE_COLORS
from .base import CSS as _CSS

__all__ = ["IDLE_COLUMNS", "idle_cells", "idle_html", "idle_title", "row_name"]

IDLE_COLUMNS = "minmax(12em, max-content) 4em minmax(14em, 1fr) minmax(14em, 1fr)"  # group+pipe, idle, causes, by
_CELL = "font-size:11.5px;line-height:1.35;padding:2px 4px;"


def idle_title(rows: list[dict[str, Any]]) -> str:
    """The table's heading and column names."""
    if not rows:
        return ""
    head = "".join(f'<span style="{_CELL}color:#868e96;">{h}</span>'
                   for h in ("core group &middot; pipe", "idle", "top causes (% of the kernel)", "released by"))
    return (f'<div style="{_CSS}"><b>why units idle</b> <span style="color:#868e96;">(one row per group of '
            f'identical cores and pipe; click a row to mark its lanes)</span></div>'
            f'<div style="display:grid;grid-template-columns:{IDLE_COLUMNS};">{head}</div>')


def idle_cells(row: dict[str, Any]) -> tuple[str, str, str]:
    """(idle share, causes, released by) of one row as HTML; a cause and its releaser share a line."""
    idle = f'<div style="{_CSS}{_CELL}text-align:right;"><b>{row["idle_pct"]:.0f} %</b></div>'
    causes = "<br>".join(f'{c["pct"]:.0f} % {html.escape(c["what"])}' for c in row["causes"]) or "&ndash;"
    by = "<br>".join(html.escape(c["released_by"]) or "&ndash;" for c in row["causes"]) or "&ndash;"
    return (idle, f'<div style="{_CSS}{_CELL}">{causes}</div>',
            f'<div style="{_CSS}{_CELL}color:#495057;">{by}</div>')


def row_name(row: dict[str, Any]) -> str:
    """The row's group and pipe, as its button says them."""
    return f"{row['label']} {row['pipe']}"


def idle_html(rows: list[dict[str, Any]]) -> str:
    """The whole table as static HTML (where no widgets draw it)."""
    if not rows:
        return ""
    cells = []
    for r in rows:
        name = (f'<div style="{_CSS}{_CELL}"><b style="color:{LANE_COLORS.get(r["pipe"], "#495057")};">'
                f'{html.escape(row_name(r))}</b></div>')
        cells.append(name + "".join(idle_cells(r)))
    return (f'<div class="ks-idle">{idle_title(rows)}<div style="display:grid;grid-template-columns:'
            f'{IDLE_COLUMNS};">{"".join(cells)}</div></div>')
