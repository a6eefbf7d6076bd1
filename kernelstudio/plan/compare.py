"""Two plans of one graph side by side: the engine's fused plan (`create_schedule`) and the unfused baseline
(`create_schedule(..., fuse=False)`: one kernel per op or library call), each lowered and simulated, with
the fusion pass's recorded reasons for every op that shares a kernel in the fused plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..hw import HardwareProfile
from ..sim.results import busiest_pipe
from ..sim.simulate import simulate
from .create import create_schedule
from .depth import lower

__all__ = ["PlanRow", "SharedKernel", "PlanReport", "compare_plans"]


@dataclass(frozen=True, slots=True)
class PlanRow:
    """One plan's simulated numbers."""

    plan: str  # "fused" | "unfused"
    kernels: int
    time_us: float
    hbm_bytes: int
    roofline_pct: float  # roofline bound / simulated time, in percent
    busiest_pipe: str
    busiest_pipe_pct: float  # that pipe's utilisation of its cores, in percent
    launch_us: float  # of time_us, the launch gaps between kernels (the profile's assumed per-launch cost)
    longest_kernel: str
    longest_kernel_us: float


@dataclass(frozen=True, slots=True)
class SharedKernel:
    """A fused-plan kernel holding more than one op: each op's name and the fusion rule that put it there."""

    kernel: str
    family: str
    ops: tuple[tuple[str, str], ...]  # (op name, rule name)
    notes: tuple[str, ...] = ()  # the pass's cost-aware decision for this kernel, when it made one


@dataclass(frozen=True, slots=True)
class PlanReport:
    name: str
    target: str
    rows: tuple[PlanRow, PlanRow]  # fused, unfused
    shared: tuple[SharedKernel, ...]

    @property
    def fused(self) -> PlanRow:
        return self.rows[0]

    @property
    def unfused(self) -> PlanRow:
        return self.rows[1]

    def table(self) -> str:
        """The two plans as a text table."""
        head = ("plan", "kernels", "time (us)", "HBM (MB)", "% of roofline", "busiest pipe")
        body = [(r.plan, str(r.kernels), f"{r.time_us:.1f}", f"{r.hbm_bytes / 1e6:.1f}", f"{r.roofline_pct:.1f}",
                 f"{r.busiest_pipe} {r.busiest_pipe_pct:.0f}%") for r in self.rows]
        widths = [max(len(x[i]) for x in (head, *body)) for i in range(len(head))]
        line = lambda r: "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
        return "\n".join([f"{self.name} on {self.target}", line(head), *(line(r) for r in body)])

    def sharing(self) -> str:
        """Which ops share a kernel in the fused plan, and the rule that joined each."""
        out = []
        for k in self.shared:
            out.append(f"{k.kernel} ({k.family}): " + ", ".join(f"{op} [{rule}]" for op, rule in k.ops))
            out.extend(f"  note: {n}" for n in k.notes)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table() + "\nops sharing a kernel in the fused plan:\n" + self.sharing()


def _row(plan: str, prog: Any, l2: str) -> PlanRow:
    r = simulate(prog, l2=l2)
    pipe, util = busiest_pipe(r.metrics)
    top = max(r.kernels, key=lambda k: k["time_us"])
    return PlanRow(plan, len(prog.kernels), r.time_us, int(r.metrics["hbm_bytes"]), 100 * r.metrics["efficiency"],
                   pipe, 100 * util, r.metrics["launch_overhead_us"], top["name"], top["time_us"])


def compare_plans(outputs: Sequence[Any], target: str | HardwareProfile = DEFAULT_TARGET, *,
                  name: str | None = None, l2: str = "cold") -> PlanReport:
    """Lower and simulate `outputs` as the fused plan and as the unfused baseline (module doc)."""
    outs = list(outputs)
    fused = create_schedule(outs, target=target)
    base = create_schedule(outs, fuse=False)
    fp, up = lower(fused, target, name=name), lower(base, target, name=name)
    names = fused.graph.names
    shared = tuple(SharedKernel(k.name, k.family, tuple((names[n], r.name) for n, r in k.reasons),
                                 k.notes)
                   for k in fused.kernels if len(k.nodes) > 1)
    tgt = target if isinstance(target, str) else target.name
    return PlanReport(name or fp.name, tgt, (_row("fused", fp, l2), _row("unfused", up, l2)), shared)
