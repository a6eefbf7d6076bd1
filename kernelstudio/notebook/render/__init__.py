"""Thin renderers: view data (kernelstudio.notebook.views) -> HTML fragments and plotly figure updates.

Nothing here computes a number; every figure is drawn from the plain data the views return. One module per
view: strips (cards, what changed, capacity, banner), text (code, IR diff, DAG box), dag (its zoom), idle, timeline,
flow, roofline.
"""

from __future__ import annotations

from .dag import new_dag_view, update_dag
from .flow import new_flow_figure, update_flow
from .idle import IDLE_COLUMNS, group_html, idle_cells, idle_html, idle_title
from .load import imbalance_card, load_html
from .roofline import new_roofline_figure, update_roofline
from .strips import banner_html, capacity_html, cards_html, changed_html
from .text import code_html, dag_html, diff_html
from .timeline import legend_html, mark_lanes, new_timeline_figure, title_html, update_timeline, visible_lanes

__all__ = [
    "IDLE_COLUMNS", "banner_html", "capacity_html", "cards_html", "changed_html", "code_html", "dag_html",
    "diff_html", "group_html", "idle_cells", "idle_html", "idle_title", "imbalance_card", "legend_html", "load_html",
    "mark_lanes", "new_dag_view", "new_flow_figure", "new_roofline_figure", "new_timeline_figure", "title_html",
    "update_dag", "update_flow", "update_roofline", "update_timeline", "visible_lanes",
]
