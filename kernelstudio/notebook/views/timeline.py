"""The profiler-style timeline: one lane per core x pipe, grouped per core as msprof/Insight show it.

`timeline_data(sim)` turns a simulation's events into bars (lane, start, end, colour, hover text),
cross-core flag arrows and, when asked, the unfused plan's kernels and launch gaps on the same time
axis. Past `max_per_lane` events a lane's adjacent events are merged into spans (level of detail);
the merged counts are reported and the full detail stays in the Chrome trace.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from ...sim.results import LANES
from .style import LANE_COLORS, LANE_ORDER, PONG, shade

__all__ = ["core_sort_key", "timeline_data"]

_CORE_RE = re.compile(r"core(\d+)\.(cube|vec)core(\d+)")


@functools.lru_cache(maxsize=4096)
def core_sort_key(label: str) -> tuple:
    """core0.cubecore0 < core0.veccore0 < core0.veccore1 < core1.cubecore0 ...; host first."""
    m = _CORE_RE.fullmatch(label)
    if not m:
        return (-1, 0, 0, label)
    return (int(m.group(1)), 0 if m.group(2) == "cube" else 1, int(m.group(3)), label)


@functools.lru_cache(maxsize=4096)
def _core_number(label: str) -> int:
    m = _CORE_RE.fullmatch(label)
    return int(m.group(1)) if m else -1


def _merge(start: np.ndarray, end: np.ndarray, nbytes: np.ndarray, cap: int) -> tuple[np.ndarray, ...]:
    """Merge sorted events into at most `cap` spans of adjacent events: (start, end, bytes, count)."""
    n = len(start)
    group = (np.arange(n) * cap) // n
    cuts = np.flatnonzero(np.diff(group)) + 1
    idx = np.concatenate(([0], cuts))
    return (np.minimum.reduceat(start, idx), np.maximum.reduceat(end, idx), np.add.reduceat(nbytes, idx),
            np.diff(np.concatenate((idx, [n]))))


def timeline_data(sim: Any, *, unfused: Any | None = None, cores: int | None = 2,
                  max_per_lane: int = 2000, gaps: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Bars, lanes, arrows and level-of-detail notes of `sim` (the first `cores` AI cores; None = all).

    `gaps` (from `idle.idle_gaps`) become hoverable idle spans on their lanes."""
    ev = sim.events
    c = ev.columns
    core_labels = ev.core_labels
    pipe_names = [LANES.get(p, p) for p in ev.pipes]
    present = sorted({int(x) for x in np.unique(c["core"])} if len(ev) else set(),
                     key=lambda i: core_sort_key(core_labels[i] if i < len(core_labels) else "host"))
    numbers = sorted({_core_number(core_labels[i]) for i in present if i < len(core_labels)} - {-1})
    shown = set(numbers if cores is None else numbers[:cores])
    lanes: list[dict[str, Any]] = []
    bars: dict[str, list] = {k: [] for k in ("lane", "start", "end", "color", "text", "pipe")}
    lod: dict[str, int] = {}
    lane_of: dict[tuple[int, int], int] = {}
    # one sort of the shown cores' events into lanes: cores in `present` order, pipes in LANE_ORDER
    # (others after, by name), each lane by start time
    label_of = [core_labels[ci] if ci < len(core_labels) else "host" for ci in range(max(present, default=0) + 1)]
    shown_ids = [ci for ci in present if _core_number(label_of[ci]) in shown or _core_number(label_of[ci]) < 0]
    core_rank = np.full(max(present, default=0) + 1, -1, dtype=np.int64)
    core_rank[shown_ids] = np.arange(len(shown_ids))
    by_name = {p: i for i, p in enumerate(LANE_ORDER)}
    named = sorted(set(pipe_names) - set(LANE_ORDER))
    pipe_rank = np.array([by_name[p] if p in by_name else len(LANE_ORDER) + named.index(p) for p in pipe_names]
                         or [0], dtype=np.int64)
    idx = np.flatnonzero(core_rank[c["core"]] >= 0) if len(ev) else np.empty(0, dtype=np.int64)
    idx = idx[np.lexsort((c["start_us"][idx], pipe_rank[c["pipe"][idx]], core_rank[c["core"][idx]]))]
    cuts = np.flatnonzero((np.diff(c["core"][idx]) != 0) | (np.diff(c["pipe"][idx]) != 0)) + 1
    for sel in np.split(idx, cuts) if len(idx) else []:
        ci, pi = int(c["core"][sel[0]]), int(c["pipe"][sel[0]])
        label, pname = label_of[ci], pipe_names[pi]
        li = len(lanes)
        lane_of[(ci, pi)] = li
        lanes.append({"core": label, "pipe": pname, "label": f"{label} {pname}", "events": int(len(sel))})
        _lane_bars(bars, li, pname, sel, c, ev, max_per_lane, lod, lanes[-1]["label"])
    arrows = _cross_arrows(c, core_labels, pipe_names, lane_of)
    lane_index = {lane["label"]: i for i, lane in enumerate(lanes)}
    idle = [{"lane": lane_index[f"{g['core']} {g['pipe']}"], "start": g["start"], "end": g["end"],
             "text": f"idle {(g['end'] - g['start']) * 1000:.1f} ns, waiting for {g['cause']}"
                     + (f"<br>released by {g['released_by']}" if g["released_by"] else "")}
            for g in (gaps or []) if f"{g['core']} {g['pipe']}" in lane_index]
    out: dict[str, Any] = {"lanes": lanes, "bars": bars, "arrows": arrows, "lod": lod, "idle": idle,
                           "time_us": sim.time_us, "cores_shown": sorted(shown), "cores_total": len(numbers),
                           "unfused": None}
    if unfused is not None:
        out["unfused"] = _plan_lanes(unfused)
    return out


def _lane_bars(bars: dict, li: int, pname: str, sel: np.ndarray, c: dict, ev: Any, cap: int,
               lod: dict, lane_label: str) -> None:
    instr_text, why_text = ev.instr_text, ev.why_text
    color = LANE_COLORS.get(pname, "#adb5bd")
    start, end = c["start_us"][sel], c["end_us"][sel]
    if len(sel) > cap:
        s, e, b, n = _merge(start, end, c["bytes"][sel], cap)
        lod[lane_label] = int(len(sel))
        for i in range(len(s)):
            bars["lane"].append(li)
            bars["start"].append(float(s[i]))
            bars["end"].append(float(e[i]))
            bars["color"].append(color)
            bars["pipe"].append(pname)
            bars["text"].append(f"{n[i]} instructions merged (zoom in the Chrome trace for detail)<br>"
                                f"{s[i]:.3f} - {e[i]:.3f} us, {int(b[i]):,} B")
        return
    # plain Python values: indexing numpy arrays element by element is what makes a lane slow
    n = len(sel)
    col = lambda name, fill: c[name][sel].tolist() if name in c else [fill] * n  # noqa: E731
    starts, ends, slots = start.tolist(), end.tolist(), col("slot", -1)
    instrs, tiles, inners = col("instr", 0), col("tile", -1), col("inner", -1)
    nbytes, flops, whys = col("bytes", 0), col("flops", 0), col("why", -1)
    pong = shade(color, PONG)
    bars["lane"].extend([li] * n)
    bars["start"].extend(starts)
    bars["end"].extend(ends)
    bars["pipe"].extend([pname] * n)
    bars["color"].extend([pong if slot == 1 else color for slot in slots])
    # the columns are integer arrays: tolist() gives Python ints, and the text is one string per bar
    nwhy = len(why_text)
    bars["text"].extend([
        f"{instr_text[ins]}<br>{st:.3f} - {en:.3f} us ({(en - st) * 1000:.1f} ns)"
        + (f"<br>tile {tile}, inner {inner}" + ("" if slot < 0 else ", slot pong" if slot == 1 else ", slot ping")
           if tile >= 0 else "")
        + (f"<br>{b:,} B" if b else "") + (f"<br>{fl:,} flops" if fl else "")
        + (f"<br>started after: {why_text[w]}" if 0 <= w < nwhy else "")
        for st, en, slot, ins, tile, inner, b, fl, w in zip(starts, ends, slots, instrs, tiles, inners, nbytes,
                                                             flops, whys, strict=True)])


def _cross_arrows(c: dict, core_labels: tuple, pipe_names: list, lane_of: dict) -> list[dict[str, Any]]:
    """An arrow for every cross-core wait that stalled: from the partner's instruction that ended at
    the release time (the set's pipe) to the waiting core's FLOWCTRL lane."""
    arrows: list[dict[str, Any]] = []
    if "FLOWCTRL" not in pipe_names:
        return arrows
    flow = pipe_names.index("FLOWCTRL")
    waits = np.flatnonzero(c["pipe"] == flow)
    for w in waits:
        ci = int(c["core"][w])
        if (ci, flow) not in lane_of:
            continue
        t = float(c["end_us"][w])
        num = _core_number(core_labels[ci])
        partners = [i for i, lab in enumerate(core_labels) if i != ci and _core_number(lab) == num
                    and ("cube" in lab) != ("cube" in core_labels[ci])]
        best = None
        for p in partners:
            hit = np.flatnonzero((c["core"] == p) & (np.abs(c["end_us"] - t) < 1e-9) & (c["pipe"] != flow))
            if len(hit):
                best = int(hit[-1])
                break
        if best is None:
            continue
        key = (int(c["core"][best]), int(c["pipe"][best]))
        if key not in lane_of:
            continue
        arrows.append({"t": t, "from_lane": lane_of[key], "to_lane": lane_of[(ci, flow)],
                       "text": f"cross-core flag: {core_labels[key[0]]} {pipe_names[key[1]]} -> "
                               f"{core_labels[ci]} at {t:.3f} us"})
    return arrows


def _plan_lanes(sim: Any) -> dict[str, Any]:
    """The unfused plan as kernel spans and launch gaps on one time axis."""
    kernels = [{"name": k["name"], "family": k["family"], "start": k["start_us"], "end": k["end_us"]}
               for k in sim.kernels]
    gaps = []
    c = sim.events.columns
    if "LAUNCH" in sim.events.pipes:
        li = sim.events.pipes.index("LAUNCH")
        for i in np.flatnonzero(c["pipe"] == li):
            gaps.append({"start": float(c["start_us"][i]), "end": float(c["end_us"][i]),
                         "name": sim.events.instr_text[int(c["instr"][i])]})
    return {"kernels": kernels, "gaps": gaps, "time_us": sim.time_us}
