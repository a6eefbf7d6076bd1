"""The Studio's views as pure functions `design -> plain data` (tested and benchmarked without a front end).

Renderers (`kernelstudio.notebook.render`, one module per view) draw this data with ipywidgets, plotly and Graphviz.
"""

from __future__ import annotations

from typing import Any

from .capacity import capacity_bars, overflow_bar
from .code import code_files, highlight_cpp
from .dag import dag_dot, render_svg
from .flow import flow_data, sankey_data
from .idle import IDLE_ROWS, first_rows, idle_breakdown, idle_gaps, idle_table, idle_text
from .lanes import ALIKE, MAX_GROUPS
from .metrics import bottleneck, code_diff_lines, metric_cards, what_changed
from .moe import moe_data
from .passes import pass_diff, passes_data
from .roofline import log_ticks, roofline_data
from .timeline import core_groups, timeline_data

__all__ = [
    "ALIKE", "IDLE_ROWS", "MAX_GROUPS", "bottleneck", "capacity_bars", "code_diff_lines", "code_files", "core_groups",
    "dag_dot", "first_rows", "flow_data", "highlight_cpp", "idle_breakdown", "idle_gaps", "idle_table", "idle_text",
    "log_ticks", "metric_cards", "moe_data", "overflow_bar", "pass_diff", "passes_data", "render_svg",
    "roofline_data", "sankey_data", "studio_data", "timeline_data", "what_changed",
]


def studio_data(design: Any, prev: Any | None = None, prev_files: dict[str, str] | None = None,
                *, cores: int | None = None, passes: bool = True) -> dict[str, Any]:
    """Every view's data for one design (and the "what changed" strip against `prev`).

    `passes=False` leaves out the IR after each pass (printed on demand: a Studio prints them only
    while its Passes tab is open); `cores` keeps the first N AI cores of the timeline (None: all, identical
    cores folded into one lane group)."""
    files = code_files(design)
    gaps = idle_gaps(design.sim, cores=cores)
    timeline = timeline_data(design.sim, unfused=design.unfused_sim, cores=cores, gaps=gaps)
    data = {
        "cards": metric_cards(design),
        "changed": what_changed(prev, design, prev_files, files),
        "capacity": capacity_bars(design.program),
        "dag_dot": dag_dot(design),
        "flow": flow_data(design),
        "timeline": timeline,
        "idle": idle_table(design.sim, timeline["groups"], gaps=gaps),
        "roofline": roofline_data(design),
        "passes": passes_data(design.program) if passes else None,
        "files": files,
        "moe": moe_data(design),  # None unless the design is an ks.ops.moe block
    }
    if data["moe"] is not None:
        data["cards"]["moe"] = {k: data["moe"][k] for k in ("cost", "time_us", "balanced_us", "plan_sizes")}
    return data
