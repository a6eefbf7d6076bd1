"""The "why units idle" table: per lane group and pipe, its idle share and what released each wait.

The gaps and their per-cause totals are computed by the simulator's stage (`sim/idle.py`: `idle_gaps`,
`idle_breakdown`, re-exported here) so that the advisor below the notebook reads the same numbers; this
module shapes them into the timeline's table rows and text.
"""

from __future__ import annotations

from typing import Any

from ...sim.idle import idle_breakdown, idle_gaps
from .style import LANE_ORDER

__all__ = ["IDLE_ROWS", "first_rows", "idle_breakdown", "idle_gaps", "idle_table", "idle_text"]

IDLE_ROWS = 12  # rows the table shows before "show all rows" (whole lane groups, at least one)


def idle_table(sim: Any, groups: list[dict[str, Any]], *, gaps: list[dict[str, Any]] | None = None,
               top: int = 3) -> list[dict[str, Any]]:
    """One row per (lane group, pipe) of the timeline's `groups` (`timeline.core_groups`; a group the timeline
    hides has none): the idle share of the core the timeline draws for the group (its members do the same, or
    alike, work), its `top` causes with their share and what
    released each (`released_short`: without the instruction's comment, and without the core's name when
    it is the row's own core), largest first. Causes that round to 0 % are dropped; rows follow the
    timeline's order.

    `gaps` are `idle_gaps(sim, cores=None)` when given (they must cover the groups' first cores)."""
    first = {g.get("drawn", g["members"][0]): gi for gi, g in enumerate(groups)
             if g["kind"] != "host" and not g.get("hidden")}
    gaps = idle_gaps(sim, cores=None) if gaps is None else gaps
    rows = []
    for r in idle_breakdown(sim, gaps=[g for g in gaps if g["core"] in first]):
        gi = first[r["core"]]
        causes = [{"what": c["what"], "pct": c["pct"], "released_by": c["released_by"],
                   "released_short": _short(c["released_by"], r["core"])}
                  for c in r["causes"] if round(c["pct"]) >= 1][:top]
        rows.append({"group": gi, "label": groups[gi]["label"], "count": groups[gi]["count"], "core": r["core"],
                     "pipe": r["pipe"], "idle_pct": r["idle_pct"], "idle_us": r["idle_us"], "causes": causes})
    rank = {p: i for i, p in enumerate(LANE_ORDER)}
    rows.sort(key=lambda r: (r["group"], rank.get(r["pipe"], len(rank)), r["pipe"]))
    return rows


def first_rows(rows: list[dict[str, Any]], rank: list[int], limit: int = IDLE_ROWS) -> list[dict[str, Any]]:
    """The rows of whole lane groups, taken in `rank` order (the timeline's: each kernel's last core first, then
    the busiest) while they fit in `limit` rows (the first group always), shown in the table's order."""
    per: dict[int, int] = {}
    for r in rows:
        per[r["group"]] = per.get(r["group"], 0) + 1
    keep: set[int] = set()
    n = 0
    for gi in [g for g in rank if g in per] + [g for g in per if g not in rank]:
        if keep and n + per[gi] > limit:
            break
        keep.add(gi)
        n += per[gi]
    return [r for r in rows if r["group"] in keep]


def _short(who: str, core: str) -> str:
    """A releaser as a table cell says it: no instruction comment, no core name when it is the row's."""
    text = who.split("  #")[0]
    return text[len(core) + 1:] if text.startswith(core + " ") else text


def idle_text(rows: list[dict[str, Any]], *, pipes: tuple[str, ...] | None = None, causes: int = 2) -> str:
    """`idle_table` rows as text, one line per row (of `pipes` only, when given): the lane group, the pipe,
    its idle share and its top `causes`, each with what released it."""
    lines = []
    for r in rows:
        if pipes is not None and r["pipe"] not in pipes:
            continue
        why = "; ".join(f"{c['pct']:.0f} % {c['what']}" + (f" - released by {c['released_short']}"
                                                           if c["released_short"] else "")
                        for c in r["causes"][:causes])
        lines.append(f"{r['label']:<24} {r['pipe']:<6} idle {r['idle_pct']:3.0f} %: {why}")
    return "\n".join(lines)

