"""The multi-device Studio's views: a ks.multi design (MatmulAllReduce, AllGatherMatmul, MatmulReduceScatter)
-> plain data. Every number is the model's (`Mc2Design` and its `MultiSim`), never recomputed differently.

- `multi_cards`: time, compute, communication (hidden / exposed), the exposed share unoverlapped (the same
  operator in one tile) and overlapped (as split), the serial time of the same tiles, the gain;
- `multi_timeline`: a lane group per device: its compute as one lane (matmul tiles and SyncAlls), or, for
  the devices listed in `expand`, one lane per pipe of the first AI core, read from each tile's single-chip
  simulation; its communication as a lane, each interval cut into the part the compute hides and the part
  it exposes; its vector epilogue when it has one;
- `multi_sweep`: the operator at every tile count CANN allows (and why the others are refused), the best
  count and the count from which splitting costs time;
- `link_table`: every figure of the cluster's link with where it comes from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ...core.errors import KernelStudioError
from ...multi.link import LINK_FIELDS
from ...multi.tiling import MAX_TILES
from ...multi.timeline import union
from ...sim.results import LANES
from .style import LANE_COLORS, LANE_ORDER, shade

__all__ = ["COMM_COLOR", "MULTI_COLORS", "comm_segments", "link_table", "multi_cards", "multi_data",
           "multi_timeline", "multi_sweep"]

COMM_COLOR = "#7048e8"  # the communication engine (HCCL on the AI CPU, or on vector cores)
MULTI_COLORS = {
    "compute": LANE_COLORS["CUBE"], "sync": LANE_COLORS["FLOWCTRL"], "epilogue": LANE_COLORS["VECTOR"],
    "exposed": COMM_COLOR, "hidden": shade(COMM_COLOR, 0.62),
}
_KIND_NAME = {"matmul_allreduce": "MatmulAllReduce", "all_gather_matmul": "AllGatherMatmul",
              "matmul_reduce_scatter": "MatmulReduceScatter"}
_MAX_SPANS = 300  # per pipe lane and tile of an expanded device: more instructions merge into spans


def comm_segments(events: Iterable[Any]) -> list[dict[str, Any]]:
    """One device's communication cut where the compute lane (matmul tiles and SyncAlls) starts and stops:
    each piece `hidden` (the cube works meanwhile) or exposed, with the event it belongs to."""
    events = list(events)
    busy = union((e.start_us, e.end_us) for e in events if e.lane in ("compute", "sync"))
    out = []
    for e in events:
        if e.lane != "comm" or e.end_us <= e.start_us:
            continue
        cuts = sorted({e.start_us, e.end_us, *(t for iv in busy for t in iv if e.start_us < t < e.end_us)})
        for a, b in zip(cuts, cuts[1:], strict=False):
            mid = (a + b) / 2
            hidden = any(c <= mid < d for c, d in busy)
            out.append({"event": e, "start": a, "end": b, "hidden": hidden})
    return out


def _shape(t: Any) -> str:
    return f"{t.name} {list(t.shape)}"


def multi_cards(design: Any, name: str | None = None) -> dict[str, Any]:
    """The cards' numbers: the design as split and the same operator unsplit (one tile: nothing overlaps);
    `name` is the design's in the notebook (default: the operator's kind)."""
    sim, base = design.sim, design.baseline()
    s = design.schedule
    share = sim.exposed_comm_us / sim.time_us if sim.time_us else 0.0
    base_share = base.sim.exposed_comm_us / base.sim.time_us if base.sim.time_us else 0.0
    return {
        "name": name or design.kind, "kind": design.kind, "operator": _KIND_NAME[design.kind],
        "devices": design.cluster.devices, "target": design.cluster.target, "link": design.cluster.link.name,
        "tensors": [_shape(t) for t in (design.x, design.w, design.bias, design.add, design.gamma) if t is not None],
        "dtype": design.dtype, "out_shape": list(design.out_shape),
        "tiles": s.tiles, "tile_rows": list(design.tile_rows), "tail": s.tail, "engine": s.engine,
        "algorithm": s.algorithm,
        "time_us": sim.time_us, "compute_us": sim.compute_us, "comm_us": sim.comm_us,
        "hidden_comm_us": sim.hidden_comm_us, "exposed_comm_us": sim.exposed_comm_us,
        "epilogue_us": sim.epilogue_us, "serial_us": sim.serial_us, "launch_us": sim.launch_us,
        "exposed_share": share, "gain": design.gain,
        "unsplit_time_us": base.sim.time_us, "unsplit_comm_us": base.sim.comm_us,
        "unsplit_exposed_comm_us": base.sim.exposed_comm_us, "unsplit_exposed_share": base_share,
    }


def _pipe_lanes(design: Any, compute: list[Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The first AI core's pipes during every compute event of a device (from each tile's single-chip
    simulation, shifted to the tile's start): the lane names and the bars."""
    bars: list[dict[str, Any]] = []
    for e in compute:
        sim = design.tile_sim(e.tile)
        if sim is None or not len(sim.events):
            continue
        ev = sim.events
        c = ev.columns
        labels = ev.core_labels
        core0 = [i for i, lab in enumerate(labels) if lab.startswith("core0.")]
        shift = e.start_us - sim.metrics["launch_overhead_us"] * len(sim.kernels)
        for ci in core0:
            for pi, pipe in enumerate(ev.pipes):
                name = LANES.get(pipe, pipe)
                if name in ("LAUNCH", "SCALAR"):
                    continue
                sel = (c["core"] == ci) & (c["pipe"] == pi)
                if not sel.any():
                    continue
                order = np.argsort(c["start_us"][sel])
                start, end = c["start_us"][sel][order], c["end_us"][sel][order]
                n = len(start)
                cap = min(n, _MAX_SPANS)
                idx = np.unique((np.arange(cap) * n) // cap)
                s0, s1 = np.minimum.reduceat(start, idx), np.maximum.reduceat(end, idx)
                counts = np.diff(np.concatenate((idx, [n])))
                lane = f"{labels[ci]} {name}"
                for a, b, k in zip(s0.tolist(), s1.tolist(), counts.tolist(), strict=True):
                    bars.append({"lane": lane, "pipe": name, "start": a + shift, "end": b + shift,
                                 "text": f"{lane}, tile {e.tile}: {k} instruction{'s' if k > 1 else ''}, "
                                         f"{b - a:,.2f} us"})
    order = {p: i for i, p in enumerate(LANE_ORDER)}
    lanes = sorted({b["lane"] for b in bars}, key=lambda lane: (lane.split()[0], order.get(lane.split()[-1], 99)))
    return lanes, bars


def multi_timeline(design: Any, *, expand: Iterable[int] | bool = ()) -> dict[str, Any]:
    """A lane group per device, top to bottom; `expand` lists the devices whose compute is drawn per pipe
    (True: every device)."""
    sim = design.sim
    want = set(range(sim.devices)) if expand is True else {int(d) for d in (expand or ())}
    lanes: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    bars: dict[str, list] = {k: [] for k in ("lane", "start", "end", "color", "text", "kind", "wait")}

    def add(lane: int, start: float, end: float, kind: str, text: str, color: str | None = None) -> None:
        bars["lane"].append(lane)
        bars["start"].append(start)
        bars["end"].append(end)
        bars["kind"].append(kind)
        bars["color"].append(color or MULTI_COLORS[kind])
        bars["text"].append(text)
        bars["wait"].append(kind == "sync")

    def new_lane(device: int, name: str, label: str) -> int:
        lanes.append({"device": device, "lane": name, "label": label})
        return len(lanes) - 1

    exposed, hidden = [], []
    for d, events in enumerate(sim.events):
        g = {"device": d, "label": f"device {d}", "expanded": d in want, "lanes": []}
        compute = [e for e in events if e.lane == "compute"]
        if d in want:
            names, pipe_bars = _pipe_lanes(design, compute)
            index = {n: new_lane(d, n, f"dev{d} {n}") for n in names}
            for b in pipe_bars:
                add(index[b["lane"]], b["start"], b["end"], "pipe", b["text"], LANE_COLORS.get(b["pipe"], "#495057"))
            sync_lane = new_lane(d, "sync", f"dev{d} SyncAll")
        else:
            sync_lane = new_lane(d, "compute", f"dev{d} compute")
            for e in compute:
                add(sync_lane, e.start_us, e.end_us, "compute", f"device {d}: {e.name}, {e.us:,.2f} us")
        for e in events:
            if e.lane == "sync":
                add(sync_lane, e.start_us, e.end_us, "sync", f"device {d}: {e.name}, {e.us:,.2f} us (every core "
                                                             "arrives before the Commit)")
        comm_lane = new_lane(d, "comm", f"dev{d} comm")
        dev_exposed = dev_hidden = 0.0
        for seg in comm_segments(events):
            e, a, b = seg["event"], seg["start"], seg["end"]
            how = "hidden: the cube computes meanwhile" if seg["hidden"] else "exposed: nothing computes meanwhile"
            what = f"{e.name}, {e.us:,.2f} us"
            if e.link_bytes:
                what += f", {e.link_bytes:,.0f} B per link"
            if e.reduce_bytes:
                what += f", {e.reduce_bytes:,.0f} B reduced"
            add(comm_lane, a, b, "hidden" if seg["hidden"] else "exposed",
                f"device {d}: {what}; {b - a:,.2f} us of it {how}")
            if seg["hidden"]:
                dev_hidden += b - a
            else:
                dev_exposed += b - a
        exposed.append(dev_exposed)
        hidden.append(dev_hidden)
        epi = [e for e in events if e.lane == "epilogue"]
        if epi:
            lane = new_lane(d, "epilogue", f"dev{d} epilogue")
            for e in epi:
                add(lane, e.start_us, e.end_us, "epilogue", f"device {d}: {e.name}, {e.us:,.2f} us (vector cores)")
        g["lanes"] = [i for i, lane in enumerate(lanes) if lane["device"] == d]
        groups.append(g)
    s = design.schedule
    title = (f"{sim.devices} devices, {s.tiles} tile{'s' if s.tiles > 1 else ''} ({s.engine}, {s.algorithm}): "
             f"{sim.time_us:,.1f} us, communication exposed {sim.exposed_comm_us:,.1f} of {sim.comm_us:,.1f} us")
    return {"title": title, "lanes": lanes, "groups": groups, "bars": bars, "range": [0.0, sim.time_us],
            "exposed_us": exposed, "hidden_us": hidden, "launch_us": sim.launch_us}


def _refusal(design: Any, tiles: int) -> str:
    try:
        design.with_schedule(tiles=tiles)
    except KernelStudioError as e:
        return str(e)
    return ""


def multi_sweep(design: Any, sweep: Iterable[Any] | None = None) -> dict[str, Any]:
    """The operator at every tile count 1..MAX_TILES that CANN's rules allow (`sweep`: designs already
    made with `design.sweep()`), each count refused with its reason, the best, and where splitting stops
    paying: the count from which every larger one is slower than the best by more than 2 %, and the first
    count slower than unsplit."""
    sweep = tuple(design.sweep() if sweep is None else sweep)
    ok = {d.schedule.tiles for d in sweep}
    points = [{"tiles": d.schedule.tiles, "tail": d.schedule.tail, "time_us": d.time_us, "compute_us": d.compute_us,
               "comm_us": d.comm_us, "exposed_comm_us": d.exposed_comm_us, "hidden_comm_us": d.sim.hidden_comm_us,
               "gain": d.gain, "exposed_share": d.exposed_comm_us / d.time_us if d.time_us else 0.0}
              for d in sweep]
    refused = [{"tiles": t, "why": _refusal(design, t)} for t in range(1, MAX_TILES + 1) if t not in ok]
    best = min(points, key=lambda p: p["time_us"]) if points else None
    slower = [p["tiles"] for p in points if best is not None and p["tiles"] > best["tiles"]
              and all(q["time_us"] > best["time_us"] * 1.02 for q in points if q["tiles"] >= p["tiles"])]
    costs = [p["tiles"] for p in points if p["gain"] < 0]
    base = design.baseline()
    return {"points": points, "refused": refused, "current": design.schedule.tiles,
            "best": best["tiles"] if best else None, "best_time_us": best["time_us"] if best else None,
            "unsplit_us": base.time_us, "unsplit_compute_us": base.compute_us, "unsplit_comm_us": base.comm_us,
            "stops_paying": slower[0] if slower else None, "costs_from": costs[0] if costs else None,
            "engine": design.schedule.engine, "algorithm": design.schedule.algorithm,
            "devices": design.cluster.devices}


def link_table(design: Any) -> list[dict[str, Any]]:
    """Every figure of the cluster's link model: its field, value and source ("assumed", "derived from ...")."""
    link = design.cluster.link
    return [{"field": f, "value": getattr(link, f), "source": link.source(f)} for f in LINK_FIELDS]


def multi_data(design: Any, prev: Any | None = None, prev_values: dict[str, Any] | None = None,
               values: dict[str, Any] | None = None, *, name: str | None = None,
               expand: Iterable[int] | bool = (), sweep: Iterable[Any] | None = None) -> dict[str, Any]:
    """Every multi-device view's data, and what changed against `prev` (knob values before and now)."""
    changed = None
    if prev is not None:
        knobs = {k: ((prev_values or {}).get(k), v) for k, v in (values or {}).items()
                 if (prev_values or {}).get(k) != v}
        changed = {"knobs": knobs, "d_time_us": design.time_us - prev.time_us,
                   "d_exposed_comm_us": design.exposed_comm_us - prev.exposed_comm_us,
                   "exposed_share": (prev.exposed_comm_us / prev.time_us, design.exposed_comm_us / design.time_us)}
    return {"cards": multi_cards(design, name), "changed": changed, "timeline": multi_timeline(design, expand=expand),
            "sweep": multi_sweep(design, sweep), "link": link_table(design)}
