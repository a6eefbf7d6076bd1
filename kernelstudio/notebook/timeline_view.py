"""The Studio's Timeline tab: zoom controls, the lane groups to expand, the colour key, the figure and the
"why units idle" table whose rows mark their lanes on the figure.

`update(data, sim=..., unfused=...)` redraws from `views.studio_data`'s "timeline" and "idle"; the
simulations are kept to redraw when a lane group is expanded. A knob move resets the zoom to the kernel
unless "pin zoom" is on.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from . import render as R
from . import views as V
from .views.style import LANE_COLORS

__all__ = ["TimelineView"]

_PICKED = "#ffe066"  # the idle row whose lanes are marked (the mark itself: views.style.HIGHLIGHT)


def _toggle(description: str, tooltip: str) -> W.ToggleButton:
    return W.ToggleButton(value=False, description=description, tooltip=tooltip, layout=W.Layout(width="auto"))


class TimelineView(W.VBox):
    """Controls, legend, the timeline figure (`figure`) and the idle table (`rows`: one Button per row)."""

    def __init__(self) -> None:
        self.figure = R.new_timeline_figure()
        self.zoom_kernel = W.Button(description="zoom to kernel", icon="compress",
                                    tooltip="fit the fused kernel (the host launch folded out)",
                                    layout=W.Layout(width="auto"))
        self.show_launch = _toggle("show launch", "widen the axis to the host's launch before the kernel")
        self.pin_zoom = _toggle("pin zoom", "keep the zoom when a knob moves (else it resets to the kernel)")
        self.more = _toggle("show more cores", "draw every lane group (else the busiest and each kernel's last core)")
        self.more.layout.display = "none"  # shown when the timeline leaves groups out
        self.more.observe(lambda ch: self._show_all(ch["new"]), names="value")
        self.title = W.HTML()
        self.load = W.HTML()  # an MoE block's per-core load in its grouped matmuls
        self.groups_box = W.HBox(layout=W.Layout(flex_flow="row wrap", align_items="center"))
        self.legend = W.HTML()
        self.idle_head = W.HTML()
        self.idle_grid = W.VBox()  # per lane group: its heading and a grid of its rows
        self.rows: list[W.Button] = []
        self._row_pool: list[tuple[W.Button, tuple[W.HTML, ...]]] = []  # row widgets kept for the next move
        self._block_pool: list[tuple[W.HTML, W.GridBox]] = []
        self._keys: list[tuple[str, str]] = []  # (group label, pipe) of each row drawn
        self._drawn_idle: list[dict[str, Any]] | None = None
        self._drawn_groups: tuple | None = None
        self._group_pool: list[W.ToggleButton] = []  # lane-group toggles kept for the next move
        self._group_labels: list[str] = []  # the group each toggle of the pool stands for now
        self._groups_head = W.HTML('<span style="color:#868e96;">&nbsp;lane groups:</span>')
        self.tl: dict[str, Any] = {}
        self.idle: list[dict[str, Any]] = []  # the rows shown (`all_idle`: every drawn group's)
        self.all_idle: list[dict[str, Any]] = []
        self.all_rows = _toggle("show all rows", "list every drawn lane group's rows (else the first groups')")
        self.all_rows.layout.display = "none"  # shown when rows are left out
        self.all_rows.observe(lambda ch: self._rows_changed(), names="value")
        self.expanded: set[str] = set()
        self.highlighted: tuple[str, str] | None = None  # (group label, pipe) of the row picked
        self._sim: Any = None
        self._gaps: list[dict[str, Any]] | None = None
        self._unfused: Any = None
        self.zoom_kernel.on_click(lambda _: self._fit(launch=False))
        self.show_launch.observe(lambda ch: self._fit(launch=ch["new"]), names="value")
        controls = W.HBox([self.zoom_kernel, self.show_launch, self.pin_zoom, self.more, self.groups_box],
                          layout=W.Layout(flex_flow="row wrap", align_items="center"))
        super().__init__([controls, self.load, self.legend, self.title, self.figure, self.idle_head, self.idle_grid,
                          self.all_rows])
        self.add_class("ks-timeline")

    # --- data in ----------------------------------------------------------------------------------
    def update(self, data: dict[str, Any], *, sim: Any = None, unfused: Any = None) -> None:
        """Redraw from studio data (its "timeline" and "idle"); `sim`/`unfused` let a group be expanded later."""
        self._sim, self._unfused = sim, unfused
        tl, idle = data["timeline"], data.get("idle", [])
        labels = {g["label"] for g in tl["groups"]}
        self.expanded &= labels
        if (self.expanded or self.more.value) and sim is not None:
            tl = self._timeline()
            if self.more.value:
                idle = V.idle_table(sim, tl["groups"], gaps=self._gaps)
        self.tl = tl
        self._set_rows(idle)
        self.load.value = R.load_html(data.get("moe"))
        self._group_buttons()
        self._idle_rows()
        if self.highlighted not in {(r["label"], r["pipe"]) for r in self.idle}:
            self.highlighted = None
        self._draw(keep_range=self.pin_zoom.value)

    def _timeline(self) -> dict[str, Any]:
        self._gaps = V.idle_gaps(self._sim, cores=None)
        return V.timeline_data(self._sim, unfused=self._unfused, gaps=self._gaps, expand=sorted(self.expanded),
                               max_groups=None if self.more.value else V.MAX_GROUPS)

    def _show_all(self, on: bool) -> None:
        """Draw every lane group (`on`), or only the first MAX_GROUPS of `views.lanes.rank_groups` again."""
        if self._sim is None:
            return
        self.tl = self._timeline()
        self._set_rows(V.idle_table(self._sim, self.tl["groups"], gaps=self._gaps))
        self._group_buttons()
        self._idle_rows()
        self._draw(keep_range=True)

    # --- drawing ----------------------------------------------------------------------------------
    def _draw(self, *, keep_range: bool) -> None:
        R.update_timeline(self.figure, self.tl, show_launch=self.show_launch.value, keep_range=keep_range,
                          highlight=self.highlight_lanes())
        self.legend.value = R.legend_html(self.tl)
        self.title.value = R.title_html(self.tl)
        hidden = self.tl.get("hidden", {"groups": 0, "cores": 0})
        if self.more.value:
            self.more.description = "fewer cores"
        elif hidden["groups"]:
            self.more.description = f"show {hidden['cores']} more cores"
        self.more.layout.display = None if hidden["groups"] or self.more.value else "none"

    def _fit(self, *, launch: bool) -> None:
        if launch != self.show_launch.value:
            self.show_launch.value = launch  # observed: redraws
            return
        if self.tl:
            self._draw(keep_range=False)

    def highlight_lanes(self) -> list[int]:
        """The lanes of the row picked: its pipe on every drawn core of its group."""
        if self.highlighted is None or not self.tl:
            return []
        label, pipe = self.highlighted
        gi = next((i for i, g in enumerate(self.tl["groups"]) if g["label"] == label), None)
        if gi is None:
            return []
        return [li for li in self.tl["groups"][gi]["lanes"] if self.tl["lanes"][li]["pipe"] == pipe]

    # --- lane groups ------------------------------------------------------------------------------
    def _group_buttons(self) -> None:
        """A toggle per folded lane group; a move keeps the buttons (their text updated) and leaves them alone
        when the groups and their state are the same."""
        groups = [g for g in self.tl["groups"] if g["count"] >= 2 and not g.get("hidden")]
        key = tuple((g["label"], g["count"], tuple(g["members"]), g["label"] in self.expanded) for g in groups)
        if key == self._drawn_groups:
            return
        self._drawn_groups = key
        self._group_labels = [g["label"] for g in groups]  # before a value is set: its observer reads them
        while len(self._group_pool) < len(groups):
            self._group_pool.append(self._new_group_button(len(self._group_pool)))
        for b, g in zip(self._group_pool, groups, strict=False):
            on = g["label"] in self.expanded
            with b.hold_sync():  # its changed properties in one message to the front end
                b.description, b.icon = g["label"], "caret-down" if on else "caret-right"
                b.tooltip = f"{g['count']} identical cores: {', '.join(g['members'])}; click to draw them one by one"
                b.value = on
        children = [self._groups_head, *self._group_pool[:len(groups)]] if groups else []
        if list(self.groups_box.children) != children:
            self.groups_box.children = children

    def _new_group_button(self, i: int) -> W.ToggleButton:
        b = W.ToggleButton(value=False, layout=W.Layout(width="auto"))
        b.observe(lambda ch: self.expand(self._group_labels[i], ch["new"]), names="value")
        return b

    def expand(self, label: str, on: bool = True) -> None:
        """Draw the group `label` core by core (`on`), or folded again."""
        if (label in self.expanded) == on or self._sim is None:
            return
        (self.expanded.add if on else self.expanded.discard)(label)
        self.tl = self._timeline()
        for b in self.groups_box.children[1:]:
            if b.description == label:
                b.value, b.icon = on, "caret-down" if on else "caret-right"
        self._draw(keep_range=True)

    # --- why units idle ---------------------------------------------------------------------------
    def _set_rows(self, rows: list[dict[str, Any]]) -> None:
        """Keep every row; show the first groups' (`views.first_rows`) unless "show all rows" is on."""
        self.all_idle = rows
        shown = rows if self.all_rows.value else V.first_rows(rows, self.tl.get("rank", []))
        self.idle = shown
        left = len(rows) - len(shown)
        self.all_rows.description = "fewer rows" if self.all_rows.value else f"show all {len(rows)} rows ({left} more)"
        self.all_rows.layout.display = None if left or self.all_rows.value else "none"

    def _rows_changed(self) -> None:
        self._set_rows(self.all_idle)
        self._idle_rows()

    def _idle_rows(self) -> None:
        """One grid per lane group (its heading above it), a Button per row naming the pipe. A move reuses the
        widgets of the rows before it (creating a widget costs more than setting its values): row i keeps
        its button and cells, and a table whose rows did not change is left alone."""
        self.idle_head.value = R.idle_title(self.idle)
        if self.idle == self._drawn_idle:
            return
        self._drawn_idle = self.idle
        self._keys = [(r["label"], r["pipe"]) for r in self.idle]
        while len(self._row_pool) < len(self.idle):
            self._row_pool.append(self._new_row(len(self._row_pool)))
        self.rows = []
        blocks: list[W.Widget] = []
        cells: list[W.Widget] = []
        for i, r in enumerate(self.idle):
            b, html_cells = self._row_pool[i]
            with b.hold_sync():  # its changed properties in one message to the front end
                b.description, b.tooltip = r["pipe"], f"mark the {r['pipe']} lanes of {r['label']}"
            b.style.text_color = LANE_COLORS.get(r["pipe"], "#495057")
            for w, text in zip(html_cells, R.idle_cells(r), strict=True):
                w.value = text
            self.rows.append(b)
            cells += [b, *html_cells]
            if i + 1 == len(self.idle) or self.idle[i + 1]["group"] != r["group"]:
                heading, grid = self._block(len(blocks) // 2)
                heading.value = R.group_html(r)
                if list(grid.children) != cells:
                    grid.children = cells
                blocks += [heading, grid]
                cells = []
        if list(self.idle_grid.children) != blocks:
            self.idle_grid.children = blocks
        self._mark_rows()

    def _new_row(self, i: int) -> tuple[W.Button, tuple[W.HTML, ...]]:
        b = W.Button(layout=W.Layout(width="auto", height="24px", margin="1px 4px 1px 0"))
        b.style.font_weight = "bold"
        b.on_click(lambda _: self.pick(*self._keys[i]))  # the row's key now: the widget outlives a move
        return b, (W.HTML(), W.HTML())

    def _block(self, j: int) -> tuple[W.HTML, W.GridBox]:
        """The heading and grid of the j-th lane group's rows (reused across moves)."""
        while len(self._block_pool) <= j:
            self._block_pool.append((W.HTML(), W.GridBox(layout=W.Layout(
                grid_template_columns=R.IDLE_COLUMNS, grid_gap="0px 0px", align_items="flex-start"))))
        return self._block_pool[j]

    def pick(self, label: str, pipe: str) -> None:
        """Mark the lanes of the row (`label`, `pipe`) on the figure; picking it again clears the mark."""
        self.highlighted = None if self.highlighted == (label, pipe) else (label, pipe)
        self._mark_rows()
        R.mark_lanes(self.figure, self.tl, show_launch=self.show_launch.value, highlight=self.highlight_lanes())

    def _mark_rows(self) -> None:
        for b, r in zip(self.rows, self.idle, strict=True):
            b.style.button_color = _PICKED if self.highlighted == (r["label"], r["pipe"]) else None
