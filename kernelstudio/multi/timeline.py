"""The per-device timeline of an MC2 operator: the compute lane and the communication lane, joined at
the points the MC2 kernel synchronises (op_kernel/matmul_all_reduce_base.h).

Compute, then communicate (MatmulAllReduce, MatmulReduceScatter): tile i's matmul, then SyncAll of
every core, then Commit of tile i's collective; the engine (the AI CPU server, or vector cores in AIV
mode) runs the collectives one after another, each an issue and the steps of its algorithm. After the
matmul loop the vector cores run the epilogue tile by tile, each once its tile's collective is done (the
generated code's Wait per tile, then the epilogue on its rows, as CANN's MatmulAllReduceAddRmsNorm does).
Communicate, then compute (AllGatherMatmul): the local rows' matmul runs while the gathers run; tile
i's matmul on the gathered rows starts once its gather is done and the cube is free.

Every operation starts as early as its inputs and its unit allow (each unit keeps program order), so the
overlapped time is never above the same operations run one after another (`serial_us`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..core.files import write_text
from .algorithms import Step

__all__ = ["Event", "TileWork", "MultiSim", "run_timeline", "union"]

LANES = ("compute", "sync", "comm", "epilogue")


@dataclass(frozen=True, slots=True)
class Event:
    """One interval on one device: a lane, what ran, the tile, start and end (us), bytes it moved."""

    device: int
    lane: str  # "compute" | "sync" | "comm" | "epilogue"
    name: str
    tile: int  # -1: the local rows of an AllGatherMatmul
    start_us: float
    end_us: float
    link_bytes: float = 0.0  # per link, for a communication step
    reduce_bytes: float = 0.0

    @property
    def us(self) -> float:
        return self.end_us - self.start_us


@dataclass(frozen=True, slots=True)
class TileWork:
    """What one tile asks of a device: its matmul, its collective's steps, its epilogue."""

    compute_us: float
    steps: tuple[Step, ...]
    epilogue_us: float = 0.0


@dataclass(frozen=True)
class MultiSim:
    """A simulated multi-device operator. Times are one device's (the devices are symmetric)."""

    devices: int
    time_us: float  # launch to the end of the last event
    compute_us: float  # the cube's matmul tiles and the SyncAlls between them
    comm_us: float  # the engine busy: issues and steps
    epilogue_us: float
    exposed_comm_us: float  # communication while the cube is not computing
    serial_us: float  # the same tiles with nothing overlapped
    launch_us: float
    events: tuple[tuple[Event, ...], ...]  # per device

    @property
    def hidden_comm_us(self) -> float:
        return self.comm_us - self.exposed_comm_us

    def to_dict(self) -> dict[str, Any]:
        """Plain data for views: the numbers and every device's events."""
        numbers = {f: getattr(self, f) for f in ("devices", "time_us", "compute_us", "comm_us", "epilogue_us",
                                                  "exposed_comm_us", "hidden_comm_us", "serial_us", "launch_us")}
        events = [[{"lane": e.lane, "name": e.name, "tile": e.tile, "start_us": e.start_us, "end_us": e.end_us,
                    "link_bytes": e.link_bytes, "reduce_bytes": e.reduce_bytes} for e in dev] for dev in self.events]
        return {**numbers, "events": events}

    def to_chrome_trace(self, path: str | None = None) -> dict[str, Any]:
        """Trace-event JSON (Perfetto / chrome://tracing): one process per device, one thread per lane;
        written to `path` when given."""
        out: list[dict[str, Any]] = []
        for d, events in enumerate(self.events):
            out.append({"ph": "M", "name": "process_name", "pid": d + 1, "tid": 0, "args": {"name": f"device {d}"}})
            for t, lane in enumerate(LANES, 1):
                out.append({"ph": "M", "name": "thread_name", "pid": d + 1, "tid": t, "args": {"name": lane}})
            out += [{"ph": "X", "name": e.name, "pid": d + 1, "tid": LANES.index(e.lane) + 1, "ts": e.start_us,
                     "dur": e.us, "args": {"tile": e.tile, "link_bytes": e.link_bytes, "reduce_bytes": e.reduce_bytes}}
                    for e in events]
        trace = {"traceEvents": out, "displayTimeUnit": "ns"}
        if path is not None:
            write_text(path, json.dumps(trace))
        return trace

    def summary(self) -> str:
        """A few lines: time, compute, communication hidden and exposed, the serial time."""
        share = self.exposed_comm_us / self.time_us if self.time_us else 0.0
        return (f"{self.devices} devices: {self.time_us:,.1f} us (serial {self.serial_us:,.1f} us)\n"
                f"  compute {self.compute_us:,.1f} us, communication {self.comm_us:,.1f} us "
                f"({self.hidden_comm_us:,.1f} hidden, {self.exposed_comm_us:,.1f} exposed = {share:.0%} of the "
                f"time), epilogue {self.epilogue_us:,.1f} us")


def union(ivs: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of the intervals (start, end) as sorted, disjoint intervals; empty ones dropped."""
    out: list[tuple[float, float]] = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        elif b > a:
            out.append((a, b))
    return out


def _measure_outside(intervals: Sequence[tuple[float, float]], cover: Sequence[tuple[float, float]]) -> float:
    """Length of the union of `intervals` not covered by the union of `cover`."""
    total = 0.0
    cov = union(cover)
    for a, b in union(intervals):
        covered = sum(max(0.0, min(b, d) - max(a, c)) for c, d in cov)
        total += (b - a) - covered
    return max(total, 0.0)


def _comm(events: list[Event], tile: int, t: float, issue_us: float, steps: tuple[Step, ...]) -> float:
    """Append tile `tile`'s collective from `t`; the end time."""
    if not steps:
        return t
    events.append(Event(0, "comm", f"issue (tile {tile})", tile, t, t + issue_us))
    t += issue_us
    for i, s in enumerate(steps):
        events.append(Event(0, "comm", f"{s.phase} step {i}", tile, t, t + s.us, s.link_bytes, s.reduce_bytes))
        t += s.us
    return t


def run_timeline(order: str, tiles: Sequence[TileWork], *, devices: int, launch_us: float, sync_us: float,
                 issue_us: float, local: TileWork | None = None) -> MultiSim:
    """The timeline of `tiles` ("compute_first": MatmulAllReduce/ReduceScatter; "comm_first":
    AllGatherMatmul, whose `local` rows compute while the first gather runs)."""
    ev: list[Event] = []
    cube = engine = vec = launch_us
    if order == "compute_first":
        done = []  # when each tile's collective has finished
        for i, w in enumerate(tiles):
            ev.append(Event(0, "compute", f"matmul tile {i}", i, cube, cube + w.compute_us))
            cube += w.compute_us
            if w.steps or w.epilogue_us:
                ev.append(Event(0, "sync", f"SyncAll (tile {i})", i, cube, cube + sync_us))
                cube += sync_us  # Commit of tile i after every core has arrived
            engine = _comm(ev, i, max(cube, engine), issue_us, w.steps)
            done.append(engine)
        for i, w in enumerate(tiles):  # after the matmul loop, each tile once its collective is done
            if w.epilogue_us:
                start = max(done[i], cube, vec)
                ev.append(Event(0, "epilogue", f"epilogue tile {i}", i, start, start + w.epilogue_us))
                vec = start + w.epilogue_us
    else:
        if local is not None:
            ev.append(Event(0, "compute", "matmul local rows", -1, cube, cube + local.compute_us))
            cube += local.compute_us
        for i, w in enumerate(tiles):
            engine = _comm(ev, i, engine, issue_us, w.steps)  # every gather is committed at the start
            start = max(cube, engine)  # Wait for tile i's gather
            ev.append(Event(0, "compute", f"matmul tile {i}", i, start, start + w.compute_us))
            cube = start + w.compute_us
    end = max((e.end_us for e in ev), default=launch_us)
    busy = [(e.start_us, e.end_us) for e in ev if e.lane in ("compute", "sync")]
    comm = [(e.start_us, e.end_us) for e in ev if e.lane == "comm"]
    lane_sum = {lane: sum(e.us for e in ev if e.lane == lane) for lane in LANES}
    compute = lane_sum["compute"] + lane_sum["sync"]
    per_device = tuple(tuple(replace(e, device=d) for e in ev) for d in range(devices))
    return MultiSim(devices=devices, time_us=end, compute_us=compute, comm_us=lane_sum["comm"],
                    epilogue_us=lane_sum["epilogue"], exposed_comm_us=_measure_outside(comm, busy),
                    serial_us=launch_us + compute + lane_sum["comm"] + lane_sum["epilogue"],
                    launch_us=launch_us, events=per_device)
