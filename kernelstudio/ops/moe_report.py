"""What an MoE block's simulated timeline says: the time per stage, the load of each core in the grouped
matmuls, and the cost of imbalance against the perfectly balanced block (same tokens, uniform plan).

    rep = moe_report(design.program, design.sim, balanced.sim)   # balanced: the block built with "uniform"
    print(format_moe_report(rep))

Plain data from a lowered program and its SimResult; the caller builds both blocks.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from .moe import STAGES

__all__ = ["MoeReport", "stage_of", "stage_times", "core_loads", "moe_report", "format_moe_report"]

_ORDER = tuple(STAGES)


def stage_of(node_name: str) -> str | None:
    """The block stage a graph node belongs to, by its name (None: a helper node of no stage of its own)."""
    for stage, prefixes in STAGES.items():
        for p in prefixes:
            if node_name == p or node_name.startswith(p if p.endswith("_") else p + "_"):
                return stage
    return None


def _kernel_stages(program: Any) -> list[tuple[str, ...]]:
    """The stages of each kernel of `program`, in launch order. A kernel of helper nodes only (the reshape
    and transpose before the finalize's gather, say) counts under the next kernel's stages: the kernels run
    in graph order, and a stage's helpers come right before its named node."""
    own = [tuple(s for s in _ORDER if s in {stage_of(n) for n in k.ops}) for k in program.kernels]
    out: list[tuple[str, ...]] = []
    nxt: tuple[str, ...] = ("other",)
    for st in reversed(own):
        nxt = st or nxt
        out.append(nxt)
    return out[::-1]


def stage_times(program: Any, sim: Any) -> list[tuple[str, str, float]]:
    """(kernel, its stages joined by '+', simulated us: its span, launch gap excluded) per kernel, in launch
    order."""
    spans = {k["name"]: k["end_us"] - k["start_us"] for k in sim.kernels}
    return [(k.name, "+".join(st), spans.get(k.name, 0.0))
            for k, st in zip(program.kernels, _kernel_stages(program), strict=True)]


@dataclass(frozen=True)
class CoreLoad:
    """One grouped-matmul kernel's cores: cube-busy us and when each finished, from the kernel's start."""

    kernel: str
    stage: str
    span_us: float
    busy_us: tuple[float, ...]  # per cube core, in core order: time its cube unit (pipe M) computed
    finish_us: tuple[float, ...]

    @property
    def idle_pct(self) -> float:
        """Share of the cores' time in this kernel spent waiting for the last core to finish."""
        cores = len(self.finish_us)
        if not cores or self.span_us <= 0:
            return 0.0
        return 100.0 * sum(self.span_us - f for f in self.finish_us) / (cores * self.span_us)


def core_loads(program: Any, sim: Any, stages: tuple[str, ...] = ("gate_up", "down")) -> list[CoreLoad]:
    """The per-core load of every kernel that computes one of `stages` (the grouped matmuls by default); a
    cube core with no work in the kernel counts as finished at 0."""
    out = []
    spans = {k["name"]: (k["start_us"], k["end_us"]) for k in sim.kernels}
    cube = sorted((c for c in sim.events.core_labels if "cube" in c), key=_core_index)
    for k, ks in zip(program.kernels, _kernel_stages(program), strict=True):
        if not set(ks) & set(stages) or k.name not in spans:
            continue
        t0, t1 = spans[k.name]
        ev = sim.events.where(kernel=k.name)
        c = ev.columns
        work = ~np.isin(c["pipe"], [i for i, p in enumerate(ev.pipes) if p in _NOT_WORK])
        is_cube = c["pipe"] == (ev.pipes.index(_CUBE) if _CUBE in ev.pipes else -1)
        busy, fin = {}, {}
        for label in cube:
            on = work & (c["core"] == ev.core_labels.index(label))
            fin[label] = float(c["end_us"][on].max() - t0) if on.any() else 0.0
            cu = on & is_cube
            busy[label] = float((c["end_us"][cu] - c["start_us"][cu]).sum())
        out.append(CoreLoad(k.name, "+".join(ks), t1 - t0, tuple(busy.values()), tuple(fin.values())))
    return out


_NOT_WORK = ("S", "FLOW", "LAUNCH")  # scalar bookkeeping, flag waits, launch gaps: not a core's work
_CUBE = "M"  # the cube unit's pipe (Mmad)


def _core_index(label: str) -> tuple[int, str]:
    digits = "".join(ch for ch in label.split(".")[0] if ch.isdigit())
    return (int(digits) if digits else 0, label)


@dataclass(frozen=True)
class MoeReport:
    time_us: float
    balanced_us: float | None
    stages: tuple[tuple[str, str, float], ...]
    loads: tuple[CoreLoad, ...]

    @property
    def imbalance_cost(self) -> float | None:
        """time / balanced time (1.0: imbalance costs nothing)."""
        return None if not self.balanced_us else self.time_us / self.balanced_us

    def per_stage(self) -> dict[str, float]:
        """us per stage label (a kernel holding several stages counts under their joined label)."""
        acc: dict[str, float] = defaultdict(float)
        for _, st, us in self.stages:
            acc[st] += us
        return dict(acc)


def moe_report(program: Any, sim: Any, balanced_sim: Any = None) -> MoeReport:
    """Stage times, grouped-matmul core loads and (given the balanced block's sim) the imbalance cost."""
    return MoeReport(sim.time_us, None if balanced_sim is None else balanced_sim.time_us,
                     tuple(stage_times(program, sim)), tuple(core_loads(program, sim)))


def format_moe_report(rep: MoeReport) -> str:
    """The report as text: per-stage us and share, each grouped matmul's core loads, the imbalance cost."""
    total = sum(us for _, _, us in rep.stages) or 1.0
    lines = [f"MoE block: {rep.time_us:,.1f} us = {total:,.1f} us in {len(rep.stages)} kernels + "
             f"{rep.time_us - total:,.1f} us of launch gaps"]
    for st, us in rep.per_stage().items():
        lines.append(f"  {st:24} {us:10,.1f} us  {100 * us / total:5.1f} %")
    for ld in rep.loads:
        busy = np.asarray(ld.busy_us)
        fin = np.asarray(ld.finish_us)
        if not len(fin):
            continue
        last = int(np.argmax(fin))
        lines.append(f"  {ld.stage} ({ld.kernel}): {len(fin)} cube cores, busy {busy.min():,.1f} .. "
                     f"{busy.max():,.1f} us, last core {last} done at {fin[last]:,.1f} us of {ld.span_us:,.1f}; "
                     f"idle {ld.idle_pct:.0f} %"
                     " of core time waiting for it")
    if rep.imbalance_cost is not None:
        lines.append(f"  imbalance cost: {rep.time_us:,.1f} us vs {rep.balanced_us:,.1f} us balanced "
                     f"({rep.imbalance_cost:.2f}x)")
    return "\n".join(lines)
