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
    "roofline_data", "sankey_data", "sight_data", "studio_data", "timeline_data", "ViewData", "what_changed",
]


def studio_data(design: Any, prev: Any | None = None, prev_files: dict[str, str] | None = None,
                *, cores: int | None = None, passes: bool = True) -> dict[str, Any]:
    """Every view's data for one design (and the "what changed" strip against `prev`).

    `passes=False` leaves out the IR after each pass (printed on demand: a Studio prints them only
    while its Passes tab is open); `cores` keeps the first N AI cores of the timeline (None: all, identical
    cores folded into one lane group)."""
    data = sight_data(design, prev, prev_files, cores=cores)
    return {key: data[key] if key != "passes" else passes_data(design.program) if passes else None for key in _KEYS}


_KEYS = ("cards", "changed", "capacity", "dag_dot", "flow", "timeline", "idle", "roofline", "passes", "files", "moe")


class ViewData(dict):
    """`studio_data` for a Studio: the strips' data (cards, what changed, capacity) and the code at once, each
    tab's data when first read (a hidden tab is drawn once the controls rest), the same values as
    `studio_data`'s; "passes" is None (the Passes tab prints them itself)."""

    def __init__(self, fields: dict[str, Any], later: dict[str, Any]) -> None:
        super().__init__(fields)
        self._later = later

    def __missing__(self, key: str) -> Any:
        if key not in self._later:
            raise KeyError(key)
        self[key] = value = self._later[key]()
        return value

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[key] if key in self or key in self._later else default


def sight_data(design: Any, prev: Any | None = None, prev_files: dict[str, str] | None = None,
               *, cores: int | None = None) -> ViewData:
    """The data of the views in sight after a move (cards, what changed, capacity, code); each tab's data
    (DAG, flow, timeline with its idle table, roofline) is computed when first read."""
    files = code_files(design)
    gaps: list[Any] = []

    def timeline() -> dict[str, Any]:
        g, tl = _timeline_of(design, cores)
        gaps[:] = [g]
        return tl

    def idle() -> list[Any]:
        groups = data["timeline"]["groups"]  # computes the gaps once with the timeline
        return idle_table(design.sim, groups, gaps=gaps[0])

    data = ViewData({"cards": metric_cards(design), "changed": what_changed(prev, design, prev_files, files),
                     "capacity": capacity_bars(design.program), "passes": None, "files": files,
                     "moe": moe_data(design)},  # None unless the design is an ks.ops.moe block
                    {"dag_dot": lambda: dag_dot(design), "flow": lambda: flow_data(design), "timeline": timeline,
                     "idle": idle, "roofline": lambda: roofline_data(design)})
    if data["moe"] is not None:
        data["cards"]["moe"] = {k: data["moe"][k] for k in ("cost", "time_us", "balanced_us", "plan_sizes")}
    return data


# the idle gaps and timeline of the simulations shown last (a knob moved back to a setting the Studio session has
# built gets a new Design on the same simulation objects): (id(sim), id(unfused), cores) -> (sim, unfused, gaps,
# timeline); the simulations are kept so that their ids stay theirs
_TIMELINES: dict[tuple[int, int, int | None], tuple[Any, Any, list[Any], dict[str, Any]]] = {}
_TIMELINES_KEPT = 16


def _timeline_of(design: Any, cores: int | None) -> tuple[list[Any], dict[str, Any]]:
    """`idle_gaps` and `timeline_data` of the design's simulations, computed once per pair of simulation
    objects (read only: the views never change them)."""
    key = (id(design.sim), id(design.unfused_sim), cores)
    hit = _TIMELINES.get(key)
    if hit is not None and hit[0] is design.sim and hit[1] is design.unfused_sim:
        return hit[2], hit[3]
    gaps = idle_gaps(design.sim, cores=cores)
    tl = timeline_data(design.sim, unfused=design.unfused_sim, cores=cores, gaps=gaps)
    while len(_TIMELINES) >= _TIMELINES_KEPT:
        _TIMELINES.pop(next(iter(_TIMELINES)))
    _TIMELINES[key] = (design.sim, design.unfused_sim, gaps, tl)
    return gaps, tl
