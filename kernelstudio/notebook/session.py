"""A Studio session: one `%%ascend_kernel` cell, rebuilt for each set of knob values and target.

Pure library code (no widgets): `StudioSession.rebuild(values)` runs the cell body, lowers,
simulates and returns a `Design`; the unfused baseline does not depend on the knobs, so it is
built once per (graph, target) and reused. The last good design is kept: a bad setting raises,
and the caller shows the error over the views it already has.

Two layers sit on top of the cell: `overrides` (hardware profile fields changed for a what-if, applied
to the target's profile) and `directives` (schedule directives replayed on the cell's schedule after it
runs, as an applied piece of advice). Both are kept across rebuilds until changed.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..hw import HardwareProfile
from ..hw import get as get_profile
from ..hw import names as target_names
from ..ir.graph import Graph
from ..multi.design import Mc2Design
from ..plan.build import Design, build, build_unfused
from ..plan.choose import graph_only, planning_target
from ..schedule.knobs import Knob
from ..schedule.schedule import Directive, Schedule
from .cell import run_cell

_DESIGNS_KEPT = 16  # designs a session keeps for knob values revisited

__all__ = ["StudioSession"]


@dataclass
class StudioSession:
    """The cell `source` of design `name`, the notebook namespace it reads, and its last good build."""

    name: str
    source: str
    target: str = DEFAULT_TARGET
    compare: bool = True
    l2: str = "cold"  # the measurement protocol the designs are simulated with (ks.simulate's l2=)
    user_ns: Mapping[str, Any] | None = None
    knobs: dict[str, Knob] = field(default_factory=dict)
    design: Design | Mc2Design | None = None  # the last good design (a ks.multi design when the cell makes one)
    values: dict[str, Any] = field(default_factory=dict)  # the knob values of the last good design
    overrides: dict[str, Any] = field(default_factory=dict)  # profile field -> value: a what-if on the target
    directives: tuple[Directive, ...] = ()  # replayed on the cell's schedule after it runs (applied advice)
    keep_out: tuple[str, ...] = ()  # graph names of ops kept out of fused kernels before `directives` (advice)
    _baseline: dict[tuple, tuple] = field(default_factory=dict, repr=False)
    # the designs built lately, by what they were built from: a knob moved back to a value shown before is
    # not lowered, simulated or generated again (each move still gets a Design object of its own)
    _designs: OrderedDict[tuple, Design] = field(default_factory=OrderedDict, repr=False)

    def build(self, values: Mapping[str, Any] | None = None, *, target: str | None = None,
              compare: bool | None = None, strict: bool = True, l2: str | None = None,
              overrides: Mapping[str, Any] | None = None,
              directives: tuple[Directive, ...] | None = None) -> Design | Mc2Design:
        """Run the cell with these knob values (others at their defaults) and build the design, leaving the
        session as it was (a sweep calls this); `rebuild` is the same and keeps the result. A value for
        a knob the cell never declares is a KnobError unless `strict=False`. `overrides` and `directives`
        replace the session's (None: keep them). A cell whose output is a ks.multi design returns that
        design (it simulates itself; target, compare, l2, overrides and directives do not apply)."""
        return self._build(values, target, compare, strict, l2, overrides, directives)[0]

    def rebuild(self, values: Mapping[str, Any] | None = None, *, target: str | None = None,
                compare: bool | None = None, strict: bool = True, l2: str | None = None,
                overrides: Mapping[str, Any] | None = None,
                directives: tuple[Directive, ...] | None = None) -> Design | Mc2Design:
        """`build`, and on success the session's design, knobs, knob values, target, compare flag, L2
        protocol, overrides and directives move to the new ones; on error (a `KernelStudioError`) nothing
        changes."""
        ovr = dict(self.overrides if overrides is None else overrides)
        dirs = tuple(self.directives if directives is None else directives)
        d, knobs, tgt, cmp_, used = self._build(values, target, compare, strict, l2, ovr, dirs)
        self.design, self.knobs, self.target, self.compare, self.values = d, knobs, tgt, cmp_, used
        self.overrides, self.directives = ovr, dirs
        if isinstance(d, Design):
            self.l2 = d.sim.metrics["l2_start"]
        return d

    def problem(self, values: Mapping[str, Any] | None = None) -> str:
        """The text of the graph the cell makes at these knob values (others at their defaults): which operator
        it is. Runs the cell only, with fusion left unplanned: no lowering or simulation. "" for a cell whose
        output is a ks.multi design."""
        with graph_only():
            res = run_cell(self.source, name=self.name, user_ns=self.user_ns, values=values, strict=False)
        if res.multi is not None:
            return ""
        if res.schedule is not None:
            return res.schedule.graph.text()
        return Graph([getattr(o, "node", o) for o in res.outputs]).text()

    def profile(self, target: str | None = None, overrides: Mapping[str, Any] | None = None) -> HardwareProfile:
        """The hardware the session builds for: the target's profile with the what-if overrides applied."""
        base = get_profile(self.target if target is None else target)
        ovr = self.overrides if overrides is None else overrides
        return base.with_overrides(**ovr) if ovr else base

    @property
    def multi(self) -> bool:
        """True when the last good design is a multi-device one (ks.multi)."""
        return isinstance(self.design, Mc2Design)

    def _build(self, values: Mapping[str, Any] | None, target: str | None, compare: bool | None,
               strict: bool, l2: str | None = None, overrides: Mapping[str, Any] | None = None,
               directives: tuple[Directive, ...] | None = None
               ) -> tuple[Design | Mc2Design, dict[str, Knob], str, bool, dict[str, Any]]:
        tgt = self.target if target is None else target
        cmp_ = self.compare if compare is None else compare
        start = self.l2 if l2 is None else l2
        if tgt not in target_names():
            from ..core.errors import TargetError

            raise TargetError(f"unknown target {tgt!r}; choose one of {', '.join(target_names())}")
        ovr = self.overrides if overrides is None else overrides
        dirs = self.directives if directives is None else directives
        hw = self.profile(tgt, ovr) if ovr else tgt  # a what-if: the changed profile, under the target's name
        with planning_target(hw):  # create_schedule in the cell picks fused or split plans for this target
            res = run_cell(self.source, name=self.name, user_ns=self.user_ns, values=values, strict=strict)
        if res.multi is not None:
            return res.multi, res.knobs, tgt, cmp_, dict(res.values)
        sched = (_with_directives(res.schedule, list(res.outputs), dirs, hw, self.keep_out)
                 if dirs or self.keep_out else res.schedule)
        key = (sched.graph.text(), sched.fuse, self.keep_out, sched.to_json(), tgt, tuple(sorted(ovr.items())), start) \
            if sched is not None else None  # a cell with no schedule: build makes the default one each time
        d = self._designs.get(key) if key is not None else None
        if d is None:
            d = build(list(res.outputs), hw, schedule=sched, name=self.name, compare=False, l2=start)
        else:  # its program, simulation and (once generated) code; name, knobs and baseline set below
            d = dataclasses.replace(d, schedule=sched, unfused_schedule=None, unfused_program=None, unfused_sim=None)
            self._designs.move_to_end(key)
        if key is not None:
            self._designs[key] = d  # the latest: the code a Studio generated for it comes with the next copy
            if len(self._designs) > _DESIGNS_KEPT:
                self._designs.popitem(last=False)
        d.name, d.knobs = self.name, dict(res.values)
        if cmp_:
            # the graph's text is its structure (composite ids renumbered per graph), a stable key
            key = (d.schedule.graph.text(), tgt, tuple(sorted(ovr.items())), start)
            if key not in self._baseline:
                if len(self._baseline) > 8:
                    self._baseline.clear()
                self._baseline[key] = build_unfused(list(res.outputs), hw, name=self.name, l2=start)
            d.unfused_schedule, d.unfused_program, d.unfused_sim = self._baseline[key]
        return d, res.knobs, tgt, cmp_, dict(res.values)


def _with_directives(schedule: Schedule | None, outputs: list, directives: tuple[Directive, ...],
                     target: Any, keep_out: tuple[str, ...] = ()) -> Schedule:
    """The cell's schedule (or the auto schedule of its outputs) with the ops named in `keep_out` kept out of
    fused kernels (dropping the directives the re-planned kernels refuse) and `directives` appended, on a copy."""
    from ..plan.create import create_schedule

    if schedule is None:
        with planning_target(target):
            out = create_schedule(list(outputs))
    else:
        out = _copy(schedule)
    with planning_target(target):
        for name in keep_out:
            out.keep_out_of_fusion(out.graph.node(name), drop_refused=True)
    for d in directives:
        out.apply(d)  # a directive the schedule refuses is a ScheduleError: the session keeps its design
    return out


def _copy(schedule: Schedule) -> Schedule:
    import copy

    out = copy.copy(schedule)  # the plan and graph are shared (immutable here); only the directives grow
    out.directives = tuple(schedule.directives)
    return out
