"""Chrome trace-event JSON of a SimResult, laid out like msprof's simulator timeline.

One process per core (`core0.cubecore0`, `core0.veccore1`, ... and `host` for launch gaps), one
thread per pipe lane (SCALAR, MTE1, MTE2, MTE3, CUBE, VECTOR, FIXP, FLOWCTRL), complete events
("ph": "X") with `ts`/`dur` in microseconds, and process_name / thread_name metadata so Perfetto
and chrome://tracing label the rows."""

from __future__ import annotations

import json
from typing import Any, Protocol

import numpy as np

from .events import LANES


class Traced(Protocol):
    """What a trace is made of (a SimResult has it): the events and the run they belong to."""

    events: Any
    program: str
    target: str
    time_us: float

__all__ = ["chrome_trace"]

_LANE_ORDER = ("SCALAR", "CUBE", "VECTOR", "MTE1", "MTE2", "MTE3", "FIXP", "FLOWCTRL", "LAUNCH")


def chrome_trace(result: Traced, path: str | None = None, *, max_events: int | None = None) -> dict:
    """Build (and optionally write) the trace; `max_events` keeps the earliest events only."""
    if max_events is not None and (isinstance(max_events, bool) or not isinstance(max_events, (int, np.integer))
                                   or max_events < 0):
        from ..core.errors import InputError

        raise InputError(f"to_chrome_trace: max_events must be an int >= 0 or None, got {max_events!r}")
    ev = result.events
    c = ev.columns
    order = np.argsort(c["start_us"], kind="stable")
    if max_events is not None:
        order = order[:max_events]
    out: list[dict] = []
    cores = sorted({int(x) for x in c["core"][order]})
    pid_of = {core: i + 1 for i, core in enumerate(cores)}
    for core in cores:
        pid = pid_of[core]
        out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                    "args": {"name": ev.core_labels[core]}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                    "args": {"sort_index": pid}})
        pipes = sorted({int(p) for p in c["pipe"][order][c["core"][order] == core]})
        for p in pipes:
            lane = LANES.get(ev.pipes[p], ev.pipes[p])
            tid = _LANE_ORDER.index(lane) + 1 if lane in _LANE_ORDER else 100 + p
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": lane}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                        "args": {"sort_index": tid}})
    tid_of = {}
    for p, name in enumerate(ev.pipes):
        lane = LANES.get(name, name)
        tid_of[p] = _LANE_ORDER.index(lane) + 1 if lane in _LANE_ORDER else 100 + p
    cols = [c[k][order].tolist() for k in ("start_us", "end_us", "core", "pipe", "instr", "kernel",
                                           "tile", "inner", "bytes", "flops")]
    for s, e, core, pipe, instr, kernel, tile, inner, nbytes, flops in zip(*cols, strict=True):
        args = {"kernel": ev.kernel_names[kernel], "tile": tile}
        if inner >= 0:
            args["inner"] = inner
        if nbytes:
            args["bytes"] = nbytes
        if flops:
            args["flops"] = flops
        out.append({"ph": "X", "name": ev.instr_text[instr], "cat": LANES.get(ev.pipes[pipe], "?"),
                    "pid": pid_of[core], "tid": tid_of[pipe], "ts": s, "dur": e - s, "args": args})
    trace = {"traceEvents": out, "displayTimeUnit": "ns",
             "otherData": {"program": result.program, "target": result.target,
                           "time_us": result.time_us}}
    if path is not None:
        from ..core.files import write_text

        write_text(path, json.dumps(trace))
    return trace
