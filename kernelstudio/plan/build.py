"""`ks.build`: one call from a graph to everything a user looks at — schedule, TileIR program,
simulated timeline, the unfused baseline for comparison, and (on first use) the Ascend C."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..hw import HardwareProfile
from ..schedule.schedule import Schedule, _node_of
from ..sim import SimResult, report_table, simulate
from ..tileir.program import Program
from .create import create_schedule
from .depth import lower

__all__ = ["Design", "build", "build_unfused"]


@dataclass
class Design:
    """A built design: fused and unfused plans, each lowered and simulated."""

    schedule: Schedule
    program: Program
    sim: SimResult
    unfused_schedule: Schedule | None = None  # None when built with compare=False
    unfused_program: Program | None = None
    unfused_sim: SimResult | None = None
    name: str = ""  # the design's name (the %%ascend_kernel NAME, or the program's)
    knobs: dict[str, Any] = field(default_factory=dict)  # knob name -> value this design was built with
    _code: Any = field(default=None, repr=False)

    @property
    def graph(self):
        return self.schedule.graph

    @property
    def code(self):
        """The generated Ascend C (a CodeBundle), produced on first access."""
        if self._code is None:
            from ..codegen import codegen

            self._code = codegen(self.program)
        return self._code

    @property
    def target(self) -> str:
        return self.program.target

    def advise(self, build_fn: Any = None, **kwargs: Any) -> list:
        """Moves that make this design faster, each simulated, ranked by gain (`kernelstudio.plan.advise.advise`)."""
        from .advise import advise

        return advise(self, build_fn, **kwargs)

    def report(self, *, show: bool = True) -> str:
        """The fused-vs-unfused table (time, TFLOPS, bandwidth, launch overhead, GM traffic, speedup)."""
        if self.unfused_sim is None or self.unfused_program is None:
            text = self.sim.summary()
            if show:
                print(text)
            return text
        text = report_table(self.sim, self.unfused_sim, self.program, self.unfused_program)
        if show:
            print(text)
        return text


def build(outputs: Any, target: str | HardwareProfile = DEFAULT_TARGET, *, schedule: Schedule | None = None,
          name: str | None = None, compare: bool = True, l2: str = "cold") -> Design:
    """Schedule (or take `schedule`), lower, simulate, and (unless `compare=False`) do the same for the
    unfused baseline. `l2` is the measurement protocol both are simulated with (`ks.simulate`)."""
    from ..core.checks import need
    from ..core.errors import ScheduleError

    outs = outputs if isinstance(outputs, Sequence) and not hasattr(outputs, "node") else (outputs,)
    base = None
    if schedule is None:
        sched = create_schedule(list(outs), target=target)
    else:
        sched = need(schedule, Schedule, "build(schedule=...)")
        nodes = tuple(_node_of(o) for o in outs) if outs else ()  # a non-tensor is a ScheduleError
        if tuple(sched.graph.outputs) != nodes:
            base = create_schedule(list(outs), fuse=False)
            want = ", ".join(base.graph.names[o] for o in base.graph.outputs)
            got = ", ".join(sched.graph.names[o] for o in sched.graph.outputs)
            raise ScheduleError(f"build: the schedule computes {got} but the outputs passed are {want}; "
                                f"pass the schedule made by ks.create_schedule of these outputs")
    prog = lower(sched, target, name=name)
    d = Design(sched, prog, simulate(prog, l2=l2), name=name or prog.name)
    if compare:
        base = base or create_schedule(list(outs), fuse=False)
        base_prog = lower(base, target, name=name)
        d.unfused_schedule, d.unfused_program, d.unfused_sim = base, base_prog, simulate(base_prog, l2=l2)
    return d


def build_unfused(outputs: list, target: str | HardwareProfile, *, name: str | None = None, l2: str = "cold"
                  ) -> tuple[Schedule, Program, SimResult]:
    """The unfused baseline of `outputs`: one kernel per op or library call, lowered and simulated."""
    base = create_schedule(list(outputs), fuse=False)
    base_prog = lower(base, target, name=name)
    return base, base_prog, simulate(base_prog, l2=l2)
