"""The Fused DAG tab: the SVG fitted to its box by default, with a zoom control re-rendering it in place."""

from __future__ import annotations

import html
from typing import Any

from .text import dag_html

__all__ = ["ZOOMS", "new_dag_view", "update_dag"]

# the zoom control's choices: label -> scale of the SVG's natural size (None: fit the box)
ZOOMS: dict[str, float | None] = {"fit": None, "50 %": 0.5, "75 %": 0.75, "100 %": 1.0, "150 %": 1.5,
                                   "200 %": 2.0}


def new_dag_view() -> Any:
    """A box of the zoom control and the DAG's HTML; `update_dag` gives it the SVG."""
    import ipywidgets as W

    zoom = W.ToggleButtons(options=list(ZOOMS), value="fit", tooltips=["the whole graph in the box"] +
                           [f"{k} of the drawing's size" for k in list(ZOOMS)[1:]],
                           style={"button_width": "auto"}, layout=W.Layout(width="auto"))
    view = W.HTML(layout=W.Layout(width="100%"))
    box = W.VBox([zoom, view], layout=W.Layout(width="100%"))
    box.add_class("ks-dag-view")
    box.svg = ""
    zoom.observe(lambda _: _redraw(box), names="value")
    return box


def update_dag(box: Any, svg: str | None, error: str = "") -> None:
    """Show `svg` at the box's current zoom (or `error` when the graph could not be drawn)."""
    box.svg = svg or ""
    if svg is None:
        box.children[1].value = f"<pre>{html.escape(error)}</pre>"
        return
    _redraw(box)


def _redraw(box: Any) -> None:
    if box.svg:
        box.children[1].value = dag_html(box.svg, ZOOMS[box.children[0].value])
