"""msprof's operator outputs, read into typed data: `OpBasicInfo.csv` and `PipeUtilization.csv` of `msprof op`
(a run on an NPU), and the `trace.json` of `msprof op simulator` (Chrome trace-event JSON, one process per core,
one thread per pipe).

    run = ks.ascendc.read_msprof("OPPROF_20250928085610_QJFCRNITGIYOFIZI")   # a folder, or one of its files
    run.basic.task_duration_us, run.pipes.rows[0].pipe_us["V"], run.trace.busy_us("core0.veccore0", "V")

Formats as the public msprof documentation gives them: every time column is in microseconds and says so in its
name (`aiv_vec_time(us)`), a `*_ratio` column is that pipe's share of the sub-core's cycles, `NA` marks a
column that does not apply to the row (the cube columns of a vector sub-core); a trace event's `ts` and `dur`
are microseconds, as the trace-event format defines them. Pipe columns map to the simulator's pipe names:
cube (`aic_cube_time`, older releases `aic_mac_time`) -> M, `aiv_vec` -> V, scalar -> S, `mte1/2/3` -> MTE1/2/3,
`fixpipe` -> FIX. A file that is not one of these, or a value that is not a number where one belongs, is an
MsprofFormatError naming the file, the line and column and what was expected.

Stage 10: imports core/ only (the comparison with a simulation lives in measured.py).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..core.errors import KernelStudioError

__all__ = ["MsprofFormatError", "OpBasicInfo", "SubCoreTimes", "PipeUtilization", "TraceSpan", "MeasuredTrace",
           "MsprofRun", "read_op_basic_info", "read_pipe_utilization", "read_trace", "read_msprof",
           "LANE_PIPES", "PIPE_COLUMNS"]

# a trace lane (thread name) -> the simulator's pipe; CACHEMISS and ALL are lanes but no pipe
LANE_PIPES = {"SCALAR": "S", "CUBE": "M", "VECTOR": "V", "MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3",
              "FIXP": "FIX", "FIXPIPE": "FIX", "FLOWCTRL": "FLOW"}
# PipeUtilization column stem -> (unit, pipe); `<stem>_time(us)` is its time, `<stem>_ratio` its share
PIPE_COLUMNS = {"aic_cube": ("cube", "M"), "aic_mac": ("cube", "M"), "aic_scalar": ("cube", "S"),
                "aic_mte1": ("cube", "MTE1"), "aic_mte2": ("cube", "MTE2"), "aic_mte3": ("cube", "MTE3"),
                "aic_fixpipe": ("cube", "FIX"), "aiv_vec": ("vector", "V"), "aiv_scalar": ("vector", "S"),
                "aiv_mte2": ("vector", "MTE2"), "aiv_mte3": ("vector", "MTE3")}
_UNIT_PREFIX = {"cube": "aic", "vector": "aiv"}
_MISSING = {"", "NA", "N/A", "-", "NONE"}
_BASIC_NEEDS = ("Op Name", "Task Duration(us)")
_PIPE_NEEDS = ("block_id", "sub_block_id")
MAX_FILE_BYTES = 1 << 30  # a trace larger than this is not one kernel's run


class MsprofFormatError(KernelStudioError, ValueError):
    """An msprof output that is not the documented format: the message names the file, the line and column
    (or the trace event) and what was expected there."""


@dataclass(frozen=True)
class OpBasicInfo:
    """One row of OpBasicInfo.csv: the operator, its task duration on the device and the launch it ran with."""

    op_name: str
    op_type: str
    task_duration_us: float  # the device task: scheduling onto the cores, running, signalling the end
    block_dim: int | None
    mix_block_dim: int | None  # the second unit's block dim of a mixed cube + vector operator; None if not mixed
    device_id: int | None
    pid: int | None
    current_freq_mhz: float | None
    rated_freq_mhz: float | None
    path: str = ""

    @property
    def clock_ratio(self) -> float | None:
        """Rated over current frequency (2.25 when a 1800 MHz chip ran at 800): how much slower every measured
        time is than at the rated clock; None when either is not given."""
        if not self.current_freq_mhz or not self.rated_freq_mhz:
            return None
        return self.rated_freq_mhz / self.current_freq_mhz


@dataclass(frozen=True)
class SubCoreTimes:
    """One row of PipeUtilization.csv: one sub-core (`cube0`, `vector0`, `vector1`) of one block, its time and
    each pipe's time in microseconds (a pipe given only as a ratio is ratio x the sub-core's time)."""

    block_id: int
    sub_block: str
    unit: str  # "cube" or "vector"
    time_us: float | None
    total_cycles: int | None
    pipe_us: Mapping[str, float]
    ratios: Mapping[str, float]
    line: int = 0


@dataclass(frozen=True)
class PipeUtilization:
    """PipeUtilization.csv: per sub-core times (`rows`), with per-unit means and maxima over the sub-cores."""

    rows: tuple[SubCoreTimes, ...]
    path: str = ""

    def of(self, unit: str) -> list[SubCoreTimes]:
        """The rows of one unit ("cube" or "vector") that ran (their time is given)."""
        return [r for r in self.rows if r.unit == unit and r.time_us is not None]

    def pipes(self, unit: str) -> list[str]:
        """The pipes of `unit` some row gives a time for, in the simulator's order."""
        have = {p for r in self.of(unit) for p in r.pipe_us}
        return [p for p in ("MTE2", "MTE1", "M", "FIX", "V", "MTE3", "S") if p in have]

    def pipe_us(self, unit: str, pipe: str, how: str = "mean") -> float | None:
        """The mean (or "max") time of `pipe` over the sub-cores of `unit` that give it; None when none does."""
        vals = [r.pipe_us[pipe] for r in self.of(unit) if pipe in r.pipe_us]
        return _reduce(vals, how)

    def time_us(self, unit: str, how: str = "mean") -> float | None:
        """The mean (or "max") time of the sub-cores of `unit`."""
        return _reduce([r.time_us for r in self.of(unit) if r.time_us is not None], how)


@dataclass(frozen=True, slots=True)
class TraceSpan:
    """One complete event of a trace: an instruction (or span) on one lane of one core."""

    core: str
    lane: str  # the thread's name: VECTOR, MTE2, ... (CACHEMISS and ALL have no pipe)
    pipe: str | None  # the simulator's pipe of the lane
    start_us: float
    end_us: float
    name: str


@dataclass(frozen=True)
class MeasuredTrace:
    """A trace.json: its complete events (`spans`), per core and lane, times as written (microseconds)."""

    spans: tuple[TraceSpan, ...]
    path: str = ""
    ignored: int = 0  # events of other phases (flows, instants, counters) left out

    @property
    def cores(self) -> list[str]:
        return sorted({s.core for s in self.spans}, key=_core_key)

    @property
    def start_us(self) -> float:
        return min((s.start_us for s in self.spans), default=0.0)

    @property
    def end_us(self) -> float:
        return max((s.end_us for s in self.spans), default=0.0)

    def busy_us(self, core: str, pipe: str) -> float:
        """The time `pipe` of `core` is busy: the union of its spans (nested or overlapping spans count once)."""
        return _union([(s.start_us, s.end_us) for s in self.spans if s.core == core and s.pipe == pipe])

    def of(self, core: str) -> list[TraceSpan]:
        return [s for s in self.spans if s.core == core]


@dataclass(frozen=True)
class MsprofRun:
    """What msprof wrote for one kernel: any of OpBasicInfo.csv, PipeUtilization.csv and trace.json."""

    basic: OpBasicInfo | None = None
    pipes: PipeUtilization | None = None
    trace: MeasuredTrace | None = None
    source: str = ""
    files: Mapping[str, str] = field(default_factory=dict)  # kind -> path read


# ---- OpBasicInfo.csv ---------------------------------------------------------------------------------------
def read_op_basic_info(path: str | os.PathLike[str]) -> tuple[OpBasicInfo, ...]:
    """The rows of an OpBasicInfo.csv (one per operator run; msprof op writes one)."""
    name, header, rows = _csv(path, _BASIC_NEEDS, "OpBasicInfo.csv (columns Op Name, Op Type, Task Duration(us), "
                                                   "Block Dim, ...)")
    out = []
    for line, cells in rows:
        get = _getter(name, header, cells, line)
        dur = get("Task Duration(us)", float, required=True)
        if dur is not None and dur < 0:
            raise MsprofFormatError(f"{name}: line {line}, column {header.index('Task Duration(us)') + 1} "
                                    f"(Task Duration(us)): {dur:g} is negative; expected a duration in us >= 0")
        out.append(OpBasicInfo(
            op_name=str(get("Op Name", str, required=True)), op_type=str(get("Op Type", str) or ""),
            task_duration_us=float(dur or 0.0), block_dim=get("Block Dim", int),
            mix_block_dim=get("Mix Block Dim", int),
            device_id=get("Device Id", int) if "Device Id" in header else get("Device ID", int),
            pid=get("Pid", int) if "Pid" in header else get("PID", int),
            current_freq_mhz=get("Current Freq", float), rated_freq_mhz=get("Rated Freq", float), path=name))
    if not out:
        raise MsprofFormatError(f"{name}: no data row under the header; expected one row per operator run")
    return tuple(out)


# ---- PipeUtilization.csv -----------------------------------------------------------------------------------
def read_pipe_utilization(path: str | os.PathLike[str]) -> PipeUtilization:
    """The per sub-core rows of a PipeUtilization.csv."""
    what = ("PipeUtilization.csv (columns block_id, sub_block_id, then aic_*/aiv_* times in us and ratios such as "
            "aiv_vec_time(us), aiv_vec_ratio)")
    name, header, rows = _csv(path, _PIPE_NEEDS, what)
    known = [c for c in header if _pipe_column(c) is not None or c in ("aic_time(us)", "aiv_time(us)")]
    if not known:
        raise MsprofFormatError(f"{name}: line 1 has none of the time or ratio columns of {what}; "
                                f"its columns are {[c for c in header if c][:12]}")
    out = []
    for line, cells in rows:
        get = _getter(name, header, cells, line)
        block = get("block_id", int, required=True)
        sub = str(get("sub_block_id", str, required=True))
        unit = "cube" if sub.lower().startswith(("cube", "aic")) else "vector" if sub.lower().startswith(
            ("vec", "aiv")) else None
        if unit is None:
            raise MsprofFormatError(f"{name}: line {line}, column {header.index('sub_block_id') + 1} (sub_block_id): "
                                    f"{sub!r} is neither a cube nor a vector sub-core; expected cube0, vector0, ...")
        pre = _UNIT_PREFIX[unit]
        total = get(f"{pre}_time(us)", float)
        pipe_us: dict[str, float] = {}
        ratios: dict[str, float] = {}
        for col in header:
            parsed = _pipe_column(col)
            if parsed is None:
                continue
            (u, pipe), kind = parsed
            if u != unit:
                continue
            v = get(col, float)
            if v is None:
                continue
            if v < 0:
                raise MsprofFormatError(f"{name}: line {line}, column {header.index(col) + 1} ({col}): {v:g} is "
                                        "negative; expected a time in us or a share of cycles >= 0")
            (pipe_us if kind == "time" else ratios)[pipe] = v
        if total is not None:
            for pipe, r in ratios.items():
                pipe_us.setdefault(pipe, r * total)
        cycles = get(f"{pre}_total_cycles", float)
        out.append(SubCoreTimes(int(block), sub, unit, total, None if cycles is None else int(cycles),
                                MappingProxyType(pipe_us), MappingProxyType(ratios), line))
    if not out:
        raise MsprofFormatError(f"{name}: no data row under the header; expected one row per block and sub-core")
    return PipeUtilization(tuple(out), name)


def _pipe_column(col: str) -> tuple[tuple[str, str], str] | None:
    for suffix, kind in (("_time(us)", "time"), ("_ratio", "ratio")):
        if col.endswith(suffix) and col[:-len(suffix)] in PIPE_COLUMNS:
            return PIPE_COLUMNS[col[:-len(suffix)]], kind
    return None


# ---- trace.json --------------------------------------------------------------------------------------------
def read_trace(path: str | os.PathLike[str], *, core: str | None = None) -> MeasuredTrace:
    """The complete ("X") events of a simulator trace.json, each on its core and lane. A process is a core and a
    thread a pipe: by their names when pid/tid are strings, else through the process_name/thread_name metadata
    (the event's `cat` when a thread has no name). `core` names a process the file leaves unnamed (a per-core
    trace.json in its `coreN.veccoreM/` folder)."""
    name, text = _read(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise MsprofFormatError(f"{name}: line {e.lineno}, column {e.colno}: not JSON ({e.msg}); expected a "
                                "Chrome trace-event file (an object with traceEvents, or a list of events)") from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise MsprofFormatError(f"{name}: line 1: a JSON {type(doc).__name__} without a traceEvents list; expected a "
                                "Chrome trace-event file (an object with traceEvents, or a list of events)")
    procs: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for ev in events:
        if isinstance(ev, dict) and ev.get("ph") == "M" and isinstance(ev.get("args"), dict):
            label = ev["args"].get("name")
            if ev.get("name") == "process_name" and isinstance(label, str):
                procs[ev.get("pid")] = label
            elif ev.get("name") == "thread_name" and isinstance(label, str):
                threads[(ev.get("pid"), ev.get("tid"))] = label
    spans, ignored = [], 0
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise MsprofFormatError(f"{name}: traceEvents[{i}] is a {type(ev).__name__}; expected an event object")
        if ev.get("ph") != "X":
            ignored += ev.get("ph") != "M"
            continue
        ts, dur = _number(ev, "ts", name, i), _number(ev, "dur", name, i)
        if dur < 0:
            raise MsprofFormatError(f"{name}: traceEvents[{i}] has dur {dur:g}; expected a duration in us >= 0")
        pid, tid = ev.get("pid"), ev.get("tid")
        where = pid if isinstance(pid, str) else procs.get(pid, core or f"pid {pid}")
        lane = tid if isinstance(tid, str) else threads.get((pid, tid)) or (
            ev["cat"] if isinstance(ev.get("cat"), str) else f"tid {tid}")
        spans.append(TraceSpan(where, lane, LANE_PIPES.get(lane.upper()), float(ts), float(ts) + float(dur),
                               str(ev.get("name", ""))))
    if not spans:
        raise MsprofFormatError(f"{name}: no complete (\"ph\": \"X\") event among its {len(events)} events; "
                                "expected the simulator's per-pipe instruction events")
    return MeasuredTrace(tuple(spans), name, ignored)


def _number(ev: dict, key: str, name: str, i: int) -> float:
    v = ev.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise MsprofFormatError(f"{name}: traceEvents[{i}] ({ev.get('name', '?')!r}) has {key} {v!r}; expected a "
                                "number of microseconds")
    return float(v)


# ---- a folder --------------------------------------------------------------------------------------------
def read_msprof(path: str | os.PathLike[str] | MsprofRun) -> MsprofRun:
    """msprof's outputs for one kernel: a folder holding OpBasicInfo.csv / PipeUtilization.csv / trace.json (an
    `OPPROF_*` folder, its `simulator/` folder, or a folder with exactly one `OPPROF_*` in it), or one such
    file. At least one of the three must be there. With no summary trace.json, the per-core ones in
    `simulator/coreN.{cube,vec}coreM/` are read together."""
    if isinstance(path, MsprofRun):
        return path
    p = Path(os.fspath(path))
    per_core: list[tuple[str, Path]] = []
    if not p.exists():
        raise MsprofFormatError(f"{p}: no such file or folder; give msprof's OPPROF_* output folder or one of its "
                                "OpBasicInfo.csv, PipeUtilization.csv, trace.json")
    if p.is_file():
        found = {_kind(p): p}
        if None in found:
            raise MsprofFormatError(f"{p}: not an msprof file this reads; expected OpBasicInfo.csv, "
                                    "PipeUtilization.csv or trace.json (the name tells which)")
    else:
        folder = _opprof_folder(p)
        found = {}
        for cand in (folder, folder / "simulator"):
            if not cand.is_dir():
                continue
            for f in sorted(cand.iterdir()):
                k = _kind(f)
                if k is not None and f.is_file():
                    found.setdefault(k, f)
        per_core = _per_core_traces(folder) if "trace" not in found else []
        if per_core:
            found["trace"] = per_core[0][1].parent.parent
        if not found:
            raise MsprofFormatError(f"{folder}: no OpBasicInfo.csv, PipeUtilization.csv or trace.json in it (nor in "
                                    "its simulator/ folder); give the OPPROF_* folder msprof op wrote")
    basic = None
    if "basic" in found:
        rows = read_op_basic_info(found["basic"])
        if len(rows) > 1:
            raise MsprofFormatError(f"{found['basic']}: {len(rows)} operator rows "
                                    f"({', '.join(r.op_name for r in rows[:6])}); expected one kernel's run")
        basic = rows[0]
    pipes = read_pipe_utilization(found["pipes"]) if "pipes" in found else None
    if "trace" in found and found["trace"].is_dir():
        parts = [read_trace(f, core=name) for name, f in per_core]
        trace: MeasuredTrace | None = MeasuredTrace(tuple(s for t in parts for s in t.spans), str(found["trace"]),
                                                    sum(t.ignored for t in parts))
    else:
        trace = read_trace(found["trace"]) if "trace" in found else None
    return MsprofRun(basic, pipes, trace, str(p), MappingProxyType({k: str(v) for k, v in found.items()}))


def _per_core_traces(folder: Path) -> list[tuple[str, Path]]:
    """(core, path) of each `simulator/coreN.{cube,vec}coreM/trace.json` of an OPPROF_* folder (or its simulator/)."""
    sim = folder if folder.name == "simulator" else folder / "simulator"
    if not sim.is_dir():
        return []
    return sorted(((d.name, d / "trace.json") for d in sim.iterdir()
                   if _CORE.fullmatch(d.name) and (d / "trace.json").is_file()), key=lambda t: _core_key(t[0]))


def _opprof_folder(p: Path) -> Path:
    if any(_kind(f) for f in p.iterdir()) or (p / "simulator").is_dir():
        return p
    runs = sorted(d for d in p.iterdir() if d.is_dir() and d.name.startswith("OPPROF_"))
    if len(runs) > 1:
        raise MsprofFormatError(f"{p}: {len(runs)} OPPROF_* folders ({', '.join(d.name for d in runs[:4])}); "
                                "give the one of the run to compare")
    return runs[0] if runs else p


def _kind(f: Path) -> str | None:
    n = f.name
    if n.startswith("OpBasicInfo") and n.endswith(".csv"):
        return "basic"
    if n.startswith("PipeUtilization") and n.endswith(".csv"):
        return "pipes"
    if n == "trace.json":
        return "trace"
    return None


# ---- csv plumbing ------------------------------------------------------------------------------------------
def _read(path: str | os.PathLike[str]) -> tuple[str, str]:
    name = os.fspath(path)
    try:
        size = os.path.getsize(name)
        if size > MAX_FILE_BYTES:
            raise MsprofFormatError(f"{name}: {size:,} bytes, more than {MAX_FILE_BYTES:,}; expected one kernel's "
                                    "output")
        with open(name, encoding="utf-8-sig") as f:
            return name, f.read()
    except UnicodeDecodeError as e:
        raise MsprofFormatError(f"{name}: byte {e.start} is not UTF-8 text; expected msprof's CSV or JSON "
                                "output") from None
    except OSError as e:
        raise MsprofFormatError(f"{name}: cannot read it ({e.strerror or e})") from None


def _csv(path: str | os.PathLike[str], needs: tuple[str, ...], what: str
         ) -> tuple[str, list[str], list[tuple[int, list[str]]]]:
    name, text = _read(path)
    try:
        lines = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise MsprofFormatError(f"{name}: not CSV ({e}); expected {what}") from None
    if not lines or not any(c.strip() for c in lines[0]):
        raise MsprofFormatError(f"{name}: line 1 is empty; expected the header of {what}")
    header = [c.strip() for c in lines[0]]
    missing = [n for n in needs if n not in header]
    if missing:
        raise MsprofFormatError(f"{name}: line 1 has no column {', '.join(repr(m) for m in missing)}; expected "
                                f"{what}; its columns are {[c for c in header if c][:12]}")
    rows = []
    for i, cells in enumerate(lines[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        cells = [c.strip() for c in cells]
        extra = [c for c in cells[len(header):] if c]
        if extra or len(cells) < len([c for c in header if c]):
            raise MsprofFormatError(f"{name}: line {i} has {len(cells)} cells for the header's {len(header)} columns"
                                    f"; expected one cell per column of line 1")
        rows.append((i, cells))
    return name, header, rows


def _getter(name: str, header: list[str], cells: list[str], line: int) -> Any:
    def get(col: str, kind: type, *, required: bool = False) -> Any:
        if col not in header:
            return None
        j = header.index(col)
        raw = cells[j] if j < len(cells) else ""
        if raw.upper() in _MISSING:
            if required:
                raise MsprofFormatError(f"{name}: line {line}, column {j + 1} ({col}) is empty; expected "
                                        + ("a number" if kind is not str else "a name"))
            return None
        if kind is str:
            return raw
        try:
            v = float(raw)
        except ValueError:
            raise MsprofFormatError(f"{name}: line {line}, column {j + 1} ({col}): {raw!r} is not a number; expected "
                                    + ("a whole number" if kind is int else "a number (us, MHz or a ratio)")
                                    + " or NA") from None
        if kind is int:
            if v != int(v):
                raise MsprofFormatError(f"{name}: line {line}, column {j + 1} ({col}): {raw!r}; expected a whole "
                                        "number")
            return int(v)
        return v
    return get


def _reduce(vals: list[float], how: str) -> float | None:
    if how not in ("mean", "max"):
        raise KernelStudioError(f"how={how!r}: expected 'mean' or 'max'")
    if not vals:
        return None
    return max(vals) if how == "max" else sum(vals) / len(vals)


def _union(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for s, e in sorted(spans):
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    return total


_CORE = re.compile(r"core(\d+)\.(cube|vec)core(\d+)")


def _core_key(label: str) -> tuple:
    m = _CORE.fullmatch(label)
    return (int(m.group(1)), m.group(2) != "cube", int(m.group(3)), "") if m else (1 << 30, 0, 0, label)
