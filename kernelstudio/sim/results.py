"""What a simulation returns: columnar events, metrics, traffic per memory edge; plain data."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .events import LANES
from .trace import chrome_trace

__all__ = ["Event", "EventTable", "SimResult", "LANES", "WORK_PIPES", "busiest_pipe"]

WORK_PIPES = ("MTE1", "MTE2", "MTE3", "M", "V", "FIX")  # the pipes that move or compute (not S, not waits)


def busiest_pipe(metrics: dict) -> tuple[str, float]:
    """The working pipe with the highest utilisation of its cores over the whole run (`metrics["pipes"]`), and
    that utilisation; ("", 0.0) for a run with no pipe data."""
    pipes = metrics.get("pipes", {})
    if not pipes:
        return "", 0.0
    best = max(WORK_PIPES, key=lambda p: pipes.get(p, {}).get("utilisation", 0.0))
    return best, pipes.get(best, {}).get("utilisation", 0.0)

_WAIT_PIPES = ("FLOW",)  # pipes whose spans are waits (flags, barriers), not work

# engine pipe -> msprof timeline lane name; "LAUNCH" is the host's gap between kernels


@dataclass(frozen=True, slots=True)
class Event:
    """One instruction (or scalar span, flag wait, launch gap) on one pipe of one core."""

    kernel: str
    core: str
    pipe: str
    start_us: float
    end_us: float
    instr: str
    tile: int
    inner: int
    bytes: int
    flops: int
    slot: int = -1  # queue slot it wrote (else read): 0 ping, 1 pong; -1 none
    why: str = ""  # what held its start back, when something did (see EventTable.why_text)


class EventTable:
    """Events as columns (numpy arrays of equal length) plus the label tables they index.

    Columns: start_us, end_us, core, pipe, instr, kernel (indices into core_labels, pipes,
    instr_text, kernel_names), tile (outermost enclosing loop variable, -1 outside loops), inner
    (innermost loop variable), bytes, flops, slot (queue slot written, else read; -1 none) and why
    (index into `why_text`: what the instruction's start waited on; -1 nothing). An instruction of a kernel stage
    (`instr_stage[instr]`, e.g. "bmm1") has its block in `inner` (the stage loop's variable). The columns are built
    on first use (a simulation with shortcuts holds one copy per block class until then)."""

    def __init__(self, columns: dict[str, np.ndarray] | None, core_labels: tuple[str, ...],
                 pipes: tuple[str, ...], instr_text: tuple[str, ...], kernel_names: tuple[str, ...],
                 build: Callable[[], dict[str, np.ndarray]] | None = None,
                 why_text: list[str] | None = None, instr_stage: tuple[str, ...] = ()) -> None:
        self._columns = columns
        # the kernel stage of each static instruction (its TileIR stage loop's `stage`), "" none; () no stages
        self.instr_stage = instr_stage
        self.why_text = why_text if why_text is not None else []  # filled when the columns are built
        self._build = build
        self.core_labels = core_labels
        self.pipes = pipes
        self.instr_text = instr_text
        self.kernel_names = kernel_names

    @property
    def columns(self) -> dict[str, np.ndarray]:
        if self._columns is None:
            self._columns = self._build()
        return self._columns

    def __len__(self) -> int:
        return len(self.columns["start_us"])

    def __getitem__(self, i: int) -> Event:
        c = self.columns
        return Event(
            kernel=self.kernel_names[int(c["kernel"][i])], core=self.core_labels[int(c["core"][i])],
            pipe=self.pipes[int(c["pipe"][i])], start_us=float(c["start_us"][i]),
            end_us=float(c["end_us"][i]), instr=self.instr_text[int(c["instr"][i])],
            tile=int(c["tile"][i]), inner=int(c["inner"][i]), bytes=int(c["bytes"][i]),
            flops=int(c["flops"][i]), slot=int(c["slot"][i]) if "slot" in c else -1,
            why=self.why_text[int(c["why"][i])] if "why" in c and c["why"][i] >= 0 else "")

    def __iter__(self) -> Iterator[Event]:
        for i in range(len(self)):
            yield self[i]

    def where(self, *, core: str | None = None, pipe: str | None = None,
              kernel: str | None = None) -> EventTable:
        """The events of one core / pipe / kernel (any combination)."""
        m = np.ones(len(self), dtype=bool)
        for col, labels, want in (("core", self.core_labels, core), ("pipe", self.pipes, pipe),
                                  ("kernel", self.kernel_names, kernel)):
            if want is not None:
                idx = labels.index(want) if want in labels else -1
                m &= self.columns[col] == idx
        return self.select(m)

    def select(self, mask: np.ndarray) -> EventTable:
        """The events where `mask` (one bool per event) is true."""
        return EventTable({k: v[mask] for k, v in self.columns.items()}, self.core_labels, self.pipes,
                          self.instr_text, self.kernel_names, why_text=self.why_text,
                          instr_stage=self.instr_stage)

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        """Plain lists (first `limit` events by start time) for views."""
        order = np.argsort(self.columns["start_us"], kind="stable")
        if limit is not None:
            order = order[:limit]
        out: dict[str, Any] = {k: v[order].tolist() for k, v in self.columns.items()}
        out.update(core_labels=list(self.core_labels), pipes=list(self.pipes),
                   instr_text=list(self.instr_text), kernel_names=list(self.kernel_names),
                   why_text=list(self.why_text))
        return out


@dataclass(frozen=True)
class SimResult:
    """Timeline and numbers of one simulated program."""

    program: str
    target: str
    time_us: float
    events: EventTable
    metrics: dict[str, Any]
    traffic: dict[str, int]
    kernels: tuple[dict[str, Any], ...]  # per kernel: name, start_us, end_us, blocks, cores
    stats: dict[str, Any] = field(default_factory=dict)  # simulator effort: instructions, passes

    def to_chrome_trace(self, path: str | None = None, *, max_events: int | None = None) -> dict:
        """Trace-event JSON (Perfetto / chrome://tracing); written to `path` when given."""
        return chrome_trace(self, path, max_events=max_events)

    def to_dict(self, *, max_events: int | None = 20000) -> dict[str, Any]:
        """Plain data for views: numbers, traffic, kernels and (up to max_events) events."""
        return {"program": self.program, "target": self.target, "time_us": self.time_us,
                "metrics": dict(self.metrics), "traffic": dict(self.traffic),
                "kernels": [dict(k) for k in self.kernels], "stats": dict(self.stats),
                "events": self.events.to_dict(max_events)}

    def summary(self) -> str:
        """A few lines: time, throughput, bandwidth, efficiency, busiest pipes, traffic."""
        m = self.metrics
        lines = [
            f"{self.program} on {self.target}: {self.time_us:,.2f} us "
            f"({len(self.kernels)} kernel{'s' if len(self.kernels) != 1 else ''}, "
            f"launch overhead {m['launch_overhead_us']:.1f} us)",
            f"  compute   {m['tflops']:.2f} TFLOPS ({m['cube_flops']:,} cube flops)",
            f"  memory    {m['gm_gbps']:.1f} GB/s GM, {m['gm_bytes']:,} B: HBM {m['hbm_bytes']:,} B "
            f"({m['hbm_gbps']:.1f} GB/s, {m['bandwidth_pct']:.1f}% of HBM peak), L2 {m['l2_bytes']:,} B "
            f"(reads hit L2 {m['l2_hit_ratio']:.1%})",
            f"  roofline  {m['roofline_bound_us']:.2f} us bound ({m['roofline_limiter']}) -> efficiency "
            f"{m['efficiency']:.1%}; traffic amplification {m['traffic_amplification']:.2f}x "
            f"({m['gm_bytes']:,} B moved for {m['compulsory_bytes']:,} B compulsory)",
        ]
        # busiest first; a flag or barrier wait (FLOWCTRL) is time spent waiting, not work: said apart
        busy = sorted(m["pipes"].items(), key=lambda kv: -kv[1]["utilisation"])
        waits = [f"{LANES.get(p, p)} {v['utilisation']:.0%}" for p, v in busy if p in _WAIT_PIPES and v["busy_us"] > 0]
        lines.append("  pipes     " + ", ".join(f"{LANES.get(p, p)} {v['utilisation']:.0%}"
                                              for p, v in busy if v["busy_us"] > 0 and p not in _WAIT_PIPES)
                     + (f"; waiting (not work): {', '.join(waits)}" if waits else ""))
        for k in self.kernels:
            lines.append(f"  kernel    {k['name']}: {k['start_us']:.2f} -> {k['end_us']:.2f} us, "
                         f"{k['blocks']} blocks on {k['cores']} cores")
        if self.traffic:
            lines.append("  traffic   " + ", ".join(f"{e} {b:,} B" for e, b in self.traffic.items()))
        return "\n".join(lines)
