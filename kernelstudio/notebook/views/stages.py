"""The stage strip: when each stage of a staged kernel (the fused attention kernel's bmm1, vec1, bmm2, vec2) ran,
block by block, on one cube core and one vector core.

A kernel's lowering marks its stages on TileIR loops (`Loop.stage`: each iteration is that stage of block
`var`); the simulator's events of those loops carry the stage (`EventTable.instr_stage`) and the block (the
`inner` column). Here a span is one stage of one block of one task on one core: from its first instruction's
start to its last one's end (its work only: no flag waits, no scalar issue). Kernels without stages give none.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .style import LANE_COLORS, shade

__all__ = ["STAGE_COLORS", "merged", "overlap_us", "stage_data", "stage_spans"]

# bmm stages in the cube's colour, vec stages in the vector's; the second of each pair lighter
STAGE_COLORS = (LANE_COLORS["CUBE"], LANE_COLORS["VECTOR"], shade(LANE_COLORS["CUBE"], 0.45),
                shade(LANE_COLORS["VECTOR"], 0.45), LANE_COLORS["FIXP"], LANE_COLORS["MTE2"])
_NOT_WORK = ("S", "FLOW", "LAUNCH")


def stage_spans(sim: Any, core: str) -> list[dict[str, Any]]:
    """The stage spans of `core` (a core label, "core0.cubecore0"), by start: kernel, stage, task (the outermost
    loop's index), block, start and end (us) and the instructions it holds; [] when no kernel has stages."""
    ev = sim.events
    stages = ev.instr_stage
    if not stages or core not in ev.core_labels:
        return []
    c = ev.columns
    work = np.array([p not in _NOT_WORK for p in ev.pipes], dtype=bool)
    staged = np.array([bool(s) for s in stages], dtype=bool)
    sel = np.flatnonzero((c["core"] == ev.core_labels.index(core)) & work[c["pipe"]] & staged[c["instr"]])
    spans: dict[tuple, dict[str, Any]] = {}
    for i, k, t, b, ins, st, en in zip(sel.tolist(), c["kernel"][sel].tolist(), c["tile"][sel].tolist(),
                                      c["inner"][sel].tolist(), c["instr"][sel].tolist(),
                                      c["start_us"][sel].tolist(), c["end_us"][sel].tolist(), strict=True):
        key = (k, t, stages[ins], b)
        s = spans.get(key)
        if s is None:
            spans[key] = {"kernel": ev.kernel_names[k], "core": core, "stage": stages[ins], "task": t, "block": b,
                          "start": st, "end": en, "instructions": 1, "first": i}
        else:
            s["start"], s["end"] = min(s["start"], st), max(s["end"], en)
            s["instructions"] += 1
    out = sorted(spans.values(), key=lambda s: (s["start"], s["first"]))
    for s in out:
        del s["first"]
    return out


def merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Intervals merged where they touch or overlap, by start."""
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def overlap_us(x: list[tuple[float, float]], y: list[tuple[float, float]]) -> float:
    """How long some interval of `x` and some interval of `y` run at once (us)."""
    return sum(max(0.0, min(b, d) - max(a, c)) for a, b in merged(x) for c, d in merged(y))


def stage_data(sim: Any, cores: list[str]) -> dict[str, Any] | None:
    """The strip of `cores` (e.g. the drawn cube core and vector core): one row per (core, stage), stages in the
    order they first start; bars with the block and task in the hover; None when no span is found."""
    rows: list[dict[str, Any]] = []
    bars: list[dict[str, Any]] = []
    per_core = [(core, stage_spans(sim, core)) for core in cores]
    order: dict[str, int] = {}
    for s in sorted((s for _, spans in per_core for s in spans), key=lambda s: s["start"]):
        order.setdefault(s["stage"], len(order))  # by first start: the pipeline's order (bmm1, vec1, bmm2, vec2)
    if not order:
        return None
    colors = {st: STAGE_COLORS[i % len(STAGE_COLORS)] for i, st in enumerate(sorted(order, key=order.get))}
    for core, spans in per_core:
        mine = sorted({s["stage"] for s in spans}, key=order.get)
        row_of = {}
        for k, st in enumerate(mine):
            row_of[st] = len(rows)
            rows.append({"core": core, "stage": st, "color": colors[st],
                         "tick": f"{core}  {st}" if k == 0 else st, "spans": 0})
        for s in spans:
            rows[row_of[s["stage"]]]["spans"] += 1
            bars.append({"row": row_of[s["stage"]], "start": s["start"], "end": s["end"], "color": colors[s["stage"]],
                         "stage": s["stage"], "block": s["block"], "task": s["task"],
                         "text": f"{s['stage']} of block {s['block']} (task {s['task']}) on {core}<br>"
                                 f"{s['start']:.3f} - {s['end']:.3f} us ({(s['end'] - s['start']) * 1000:.1f} ns), "
                                 f"{s['instructions']} instructions"})
    stages = sorted(order, key=order.get)
    return {"rows": rows, "bars": bars, "stages": stages, "colors": colors,
            "blocks": len({(b["task"], b["block"]) for b in bars})}
