"""`ks.build`: one call from a graph to everything a user looks at — schedule, TileIR program,
simulated timeline, the unfused baseline for comparison, and (on first use) the Ascend C."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .hw import HardwareProfile
from .lower.pipeline import lower
from .lower.tileir import Program
from .schedule.schedule import Schedule, create_schedule
from .sim import SimResult, report_table, simulate

__all__ = ["Design", "build"]


@dataclass
class Design:
    """A built design: fused and unfused plans, each lowered and simulated."""

    schedule: Schedule
    program: Program
    sim: SimResult
    unfused_schedule: Schedule
    unfused_program: Program
    unfused_sim: SimResult
    _code: Any = field(default=None, repr=False)

    @property
    def graph(self):
        return self.schedule.graph

    @property
    def code(self):
        """The generated Ascend C (a CodeBundle), produced on first access."""
        if self._code is None:
            from .codegen import codegen

            self._code = codegen(self.program)
        return self._code

    def report(self, *, show: bool = True) -> str:
        """The fused-vs-unfused table (time, TFLOPS, bandwidth, launch overhead, GM traffic, speedup)."""
        text = report_table(self.sim, self.unfused_sim, self.program, self.unfused_program)
        if show:
            print(text)
        return text


def build(outputs: Any, target: str | HardwareProfile = "ascend910b2", *, schedule: Schedule | None = None,
          name: str | None = None) -> Design:
    """Schedule (or take `schedule`), lower, simulate, and do the same for the unfused baseline."""
    from .errors import ScheduleError
    from .validate import need_schedule

    outs = outputs if isinstance(outputs, Sequence) and not hasattr(outputs, "node") else (outputs,)
    base = create_schedule(list(outs), fuse=False)  # checks that `outputs` are tensors
    if schedule is None:
        sched = create_schedule(list(outs))
    else:
        sched = need_schedule(schedule, "build(schedule=...)")
        if tuple(sched.graph.outputs) != tuple(base.graph.outputs):
            want = ", ".join(base.graph.names[o] for o in base.graph.outputs)
            got = ", ".join(sched.graph.names[o] for o in sched.graph.outputs)
            raise ScheduleError(f"build: the schedule computes {got} but the outputs passed are {want}; "
                                f"pass the schedule made by ks.create_schedule of these outputs")
    prog = lower(sched, target, name=name)
    base_prog = lower(base, target, name=name)
    return Design(sched, prog, simulate(prog), base, base_prog, simulate(base_prog))
