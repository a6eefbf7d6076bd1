"""Measured next to predicted: msprof's outputs of a kernel's run on an NPU (msprof.py) against the simulation of
the same kernel, pipe by pipe.

    cmp = ks.ascendc.compare_measured(k, "OPPROF_20250928085610_QJFCRNITGIYOFIZI")   # k from ks.ascendc.load
    print(cmp.table())          # per unit and pipe: measured us, predicted us, measured / predicted
    cmp.task_ratio              # OpBasicInfo's Task Duration over the simulated kernel time

What is compared with what (both sides the same statistic):
- a pipe's time: PipeUtilization's `<unit>_<pipe>_time(us)` of each sub-core, averaged over the sub-cores of that
  unit that ran, against the simulated busy time of that pipe on each core of that unit that ran, averaged the same
  way (the busiest sub-core is kept too, `measured_max_us` / `predicted_max_us`); with no PipeUtilization.csv, the
  trace.json's busy time per core and pipe stands in for it;
- a sub-core's time: `aic_time(us)` / `aiv_time(us)` against each simulated core's span, first to last event;
- the task: OpBasicInfo's Task Duration against the simulated kernel time (the host's launch gap left out: msprof
  times the device task).
Differences msprof states are named in `notes`: another block dim, another operator name, a chip clocked below its
rated frequency (every measured time then longer by rated / current).

Stage 10: reads a SimResult (sim/) and msprof.py; an AscendCKernel or a Design is read through its `.sim`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import InputError
from ..sim import SimResult
from .msprof import MsprofRun, read_msprof

__all__ = ["PipeComparison", "MeasuredComparison", "compare_measured", "predicted_core_pipes"]

_CORE = re.compile(r"core(\d+)\.(cube|vec)core(\d+)")
_PIPES = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3", "S")
_UNIT_PIPES = {"cube": ("MTE2", "MTE1", "M", "FIX", "MTE3", "S"), "vector": ("MTE2", "V", "MTE3", "S")}
_NAMES = {"M": "CUBE", "V": "VECTOR", "S": "SCALAR", "FIX": "FIXP"}


@dataclass(frozen=True)
class PipeComparison:
    """One row of the table: a unit's pipe (or its sub-cores' whole time, pipe "core"), measured and predicted."""

    unit: str  # "cube" or "vector"
    pipe: str  # the simulator's pipe (MTE2, M, V, ...) or "core"
    measured_us: float | None  # mean over the unit's sub-cores that ran
    predicted_us: float | None
    measured_max_us: float | None
    predicted_max_us: float | None
    cores_measured: int
    cores_predicted: int
    source: str  # "PipeUtilization.csv" or "trace.json"

    @property
    def ratio(self) -> float | None:
        """Measured over predicted (above 1: the chip took longer than the simulation says)."""
        if self.measured_us is None or not self.predicted_us:
            return None
        return self.measured_us / self.predicted_us

    @property
    def lane(self) -> str:
        return "core" if self.pipe == "core" else _NAMES.get(self.pipe, self.pipe)


@dataclass(frozen=True)
class MeasuredComparison:
    """msprof's measurement of a kernel next to its simulation: the task time, and per unit and pipe a row."""

    kernel: str
    target: str
    measured: MsprofRun
    sim: SimResult
    rows: tuple[PipeComparison, ...]
    measured_task_us: float | None
    predicted_task_us: float
    notes: tuple[str, ...]
    block_dim: int | None = None

    @property
    def task_ratio(self) -> float | None:
        """Task Duration over the simulated kernel time."""
        if self.measured_task_us is None or not self.predicted_task_us:
            return None
        return self.measured_task_us / self.predicted_task_us

    def row(self, unit: str, pipe: str) -> PipeComparison | None:
        return next((r for r in self.rows if r.unit == unit and r.pipe == pipe), None)

    def table(self) -> str:
        """The comparison as text: the task line, one line per unit and pipe, then the notes."""
        out = [f"{self.kernel} on {self.target}: measured next to predicted ({self.measured.source})"]
        if self.measured_task_us is not None:
            out.append(f"task       measured {self.measured_task_us:10.3f} us   predicted "
                       f"{self.predicted_task_us:10.3f} us   x{_fmt_ratio(self.task_ratio)}")
        out.append(f"{'unit':<7}{'pipe':<8}{'measured us':>12}{'predicted us':>14}{'ratio':>8}  per core, mean of "
                   "the cores that ran")
        for r in self.rows:
            out.append(f"{r.unit:<7}{r.lane:<8}{_fmt(r.measured_us):>12}{_fmt(r.predicted_us):>14}"
                       f"{_fmt_ratio(r.ratio):>8}")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the task times and ratio, the rows (with their ratio), the notes."""
        return {"kernel": self.kernel, "target": self.target, "source": self.measured.source,
                "measured_task_us": self.measured_task_us, "predicted_task_us": self.predicted_task_us,
                "task_ratio": self.task_ratio, "notes": list(self.notes),
                "rows": [{"unit": r.unit, "pipe": r.pipe, "lane": r.lane, "measured_us": r.measured_us,
                          "predicted_us": r.predicted_us, "measured_max_us": r.measured_max_us,
                          "predicted_max_us": r.predicted_max_us, "ratio": r.ratio, "cores_measured": r.cores_measured,
                          "cores_predicted": r.cores_predicted, "source": r.source} for r in self.rows]}

    def __repr__(self) -> str:
        return (f"MeasuredComparison({self.kernel!r}, task x{_fmt_ratio(self.task_ratio)}, {len(self.rows)} rows, "
                f"{len(self.notes)} notes)")


def compare_measured(run: Any, measured: str | os.PathLike[str] | MsprofRun, *, sim: SimResult | None = None
                     ) -> MeasuredComparison:
    """msprof's outputs (`measured`: an OPPROF_* folder, one of its files, or a read MsprofRun) of a kernel next to
    the simulation of the same kernel: `run` is an `ks.ascendc.load` kernel, a designed kernel (`ks.build`'s
    Design), or a SimResult; `sim` replaces its simulation (another target or L2 protocol of the same run)."""
    result = sim if sim is not None else (run if isinstance(run, SimResult) else getattr(run, "sim", None))
    if not isinstance(result, SimResult):
        raise InputError(f"compare_measured: {type(run).__name__} has no simulation; pass a kernel from "
                         "ks.ascendc.load, a Design from ks.build, or a SimResult")
    m = read_msprof(measured)
    name = getattr(run, "name", None) or result.program
    block_dim = getattr(run, "block_dim", None)
    cores = predicted_core_pipes(result)
    rows: list[PipeComparison] = []
    for unit in ("cube", "vector"):
        mine = {c: v for c, v in cores.items() if v["unit"] == unit}
        if m.pipes is not None:
            ran = m.pipes.of(unit)
            if not ran and not mine:
                continue
            rows.append(_row(unit, "core", [r.time_us for r in ran if r.time_us is not None],
                             [v["span"] for v in mine.values()], "PipeUtilization.csv"))
            for pipe in _UNIT_PIPES[unit]:
                got = [r.pipe_us[pipe] for r in ran if pipe in r.pipe_us]
                want = [v["pipes"].get(pipe, 0.0) for v in mine.values()]
                if got or any(want):
                    rows.append(_row(unit, pipe, got, want, "PipeUtilization.csv"))
        elif m.trace is not None:
            traced = [c for c in m.trace.cores if _unit(c) == unit]
            if not traced and not mine:
                continue
            for pipe in _UNIT_PIPES[unit]:
                got = [m.trace.busy_us(c, pipe) for c in traced if any(s.pipe == pipe for s in m.trace.of(c))]
                want = [v["pipes"].get(pipe, 0.0) for v in mine.values()]
                if got or any(want):
                    rows.append(_row(unit, pipe, got, want, "trace.json"))
    task = sum(float(k["time_us"]) for k in result.kernels) if result.kernels else float(result.time_us)
    return MeasuredComparison(name, result.target, m, result, tuple(rows),
                              m.basic.task_duration_us if m.basic is not None else None, task,
                              tuple(_notes(m, name, block_dim, cores)), block_dim)


def predicted_core_pipes(sim: SimResult) -> dict[str, dict[str, Any]]:
    """Per core that ran (label -> unit, span first to last event, busy us per pipe) of a simulation."""
    ev = sim.events
    c = ev.columns
    out: dict[str, dict[str, Any]] = {}
    if not len(ev):
        return out
    dur = c["end_us"] - c["start_us"]
    for ci, label in enumerate(ev.core_labels):
        unit = _unit(label)
        if unit is None:
            continue
        mask = c["core"] == ci
        if not mask.any():
            continue
        pipes = {}
        for pi, pipe in enumerate(ev.pipes):
            if pipe in _PIPES:
                sel = mask & (c["pipe"] == pi)
                if sel.any():
                    pipes[pipe] = float(np.sum(dur[sel]))
        out[label] = {"unit": unit, "span": float(c["end_us"][mask].max() - c["start_us"][mask].min()),
                      "pipes": pipes}
    return out


def _unit(label: str) -> str | None:
    m = _CORE.fullmatch(label)
    return None if m is None else ("cube" if m.group(2) == "cube" else "vector")


def _row(unit: str, pipe: str, got: list[float], want: list[float], source: str) -> PipeComparison:
    return PipeComparison(unit, pipe, _mean(got), _mean(want), max(got) if got else None, max(want) if want else None,
                          len(got), len(want), source)


def _mean(vals: list[float]) -> float | None:
    return sum(vals) / len(vals) if vals else None


def _notes(m: MsprofRun, name: str, block_dim: int | None, cores: dict[str, dict[str, Any]]) -> list[str]:
    notes = []
    b = m.basic
    if b is not None:
        op = re.sub(r"_\d+$", "", b.op_name)  # msprof numbers each launch of an operator: add_custom_0
        if op != name and b.op_name != name:
            notes.append(f"msprof measured operator {b.op_name!r}, the simulation is of {name!r}: check they are "
                         "the same kernel")
        if block_dim is not None and b.block_dim is not None and b.block_dim != block_dim:
            notes.append(f"msprof's run had Block Dim {b.block_dim}, the simulated run {block_dim}: the per-core "
                         "times split different work")
        if b.clock_ratio is not None and abs(b.clock_ratio - 1.0) > 1e-9:
            notes.append(f"the chip ran at {b.current_freq_mhz:g} MHz of its rated {b.rated_freq_mhz:g} MHz: every "
                         f"measured time is x{b.clock_ratio:.2f} what it takes at the rated clock")
    if m.pipes is not None:
        measured = {u: len(m.pipes.of(u)) for u in ("cube", "vector")}
        predicted = {u: sum(1 for v in cores.values() if v["unit"] == u) for u in ("cube", "vector")}
        for u in ("cube", "vector"):
            if measured[u] and predicted[u] and measured[u] != predicted[u]:
                notes.append(f"{measured[u]} {u} sub-core(s) measured, {predicted[u]} simulated: means over "
                             "different counts")
            elif measured[u] and not predicted[u]:
                notes.append(f"msprof measured {measured[u]} {u} sub-core(s); the simulation ran none")
    if m.trace is not None and m.pipes is None and not any(_unit(c) for c in m.trace.cores):
        notes.append(f"trace.json names no coreN.cubecoreM / coreN.veccoreM process (it has "
                     f"{', '.join(m.trace.cores[:4])}); its lanes are shown but not compared")
    return notes


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:,.3f}"


def _fmt_ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"
