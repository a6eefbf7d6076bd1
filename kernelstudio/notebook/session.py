"""A Studio session: one `%%ascend_kernel` cell, rebuilt for each set of knob values and target.

Pure library code (no widgets): `StudioSession.rebuild(values)` runs the cell body, lowers,
simulates and returns a `Design`; the unfused baseline does not depend on the knobs, so it is
built once per (graph, target) and reused. The last good design is kept: a bad setting raises,
and the caller shows the error over the views it already has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..hw import names as target_names
from ..multi.design import Mc2Design
from ..plan.build import Design, build, build_unfused
from ..plan.choose import planning_target
from ..schedule.knobs import Knob
from .cell import run_cell

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
    _baseline: dict[tuple, tuple] = field(default_factory=dict, repr=False)

    def build(self, values: Mapping[str, Any] | None = None, *, target: str | None = None,
              compare: bool | None = None, strict: bool = True, l2: str | None = None) -> Design | Mc2Design:
        """Run the cell with these knob values (others at their defaults) and build the design, leaving the
        session as it was (a sweep calls this); `rebuild` is the same and keeps the result. A value for
        a knob the cell never declares is a KnobError unless `strict=False`. A cell whose output is a
        ks.multi design returns that design (it simulates itself; target, compare and l2 do not apply)."""
        return self._build(values, target, compare, strict, l2)[0]

    def rebuild(self, values: Mapping[str, Any] | None = None, *, target: str | None = None,
                compare: bool | None = None, strict: bool = True, l2: str | None = None) -> Design | Mc2Design:
        """`build`, and on success the session's design, knobs, knob values, target, compare flag and L2
        protocol move to the new ones; on error (a `KernelStudioError`) nothing changes."""
        d, knobs, tgt, cmp_, used = self._build(values, target, compare, strict, l2)
        self.design, self.knobs, self.target, self.compare, self.values = d, knobs, tgt, cmp_, used
        if isinstance(d, Design):
            self.l2 = d.sim.metrics["l2_start"]
        return d

    @property
    def multi(self) -> bool:
        """True when the last good design is a multi-device one (ks.multi)."""
        return isinstance(self.design, Mc2Design)

    def _build(self, values: Mapping[str, Any] | None, target: str | None, compare: bool | None,
               strict: bool, l2: str | None = None
               ) -> tuple[Design | Mc2Design, dict[str, Knob], str, bool, dict[str, Any]]:
        tgt = self.target if target is None else target
        cmp_ = self.compare if compare is None else compare
        start = self.l2 if l2 is None else l2
        if tgt not in target_names():
            from ..core.errors import TargetError

            raise TargetError(f"unknown target {tgt!r}; choose one of {', '.join(target_names())}")
        with planning_target(tgt):  # create_schedule in the cell picks fused or split plans for this target
            res = run_cell(self.source, name=self.name, user_ns=self.user_ns, values=values, strict=strict)
        if res.multi is not None:
            return res.multi, res.knobs, tgt, cmp_, dict(res.values)
        d = build(list(res.outputs), tgt, schedule=res.schedule, name=self.name, compare=False, l2=start)
        d.name, d.knobs = self.name, dict(res.values)
        if cmp_:
            # the graph's text is its structure (composite ids renumbered per graph), a stable key
            key = (d.schedule.graph.text(), tgt, start)
            if key not in self._baseline:
                if len(self._baseline) > 8:
                    self._baseline.clear()
                self._baseline[key] = build_unfused(list(res.outputs), tgt, name=self.name, l2=start)
            d.unfused_schedule, d.unfused_program, d.unfused_sim = self._baseline[key]
        return d, res.knobs, tgt, cmp_, dict(res.values)
