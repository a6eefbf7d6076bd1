"""Double buffering that pays: `ks.lower` with the auto-schedule's queue depth checked by the simulator.

By default every queue has two slots. When a vector kernel's auto tiles fit UB once but not twice, the
lowering chooses smaller tiles so that they fit twice (and says so in the kernel's notes). Smaller tiles
overlap copies with compute but issue more instructions, and a row reduction may turn multi-pass; which
wins depends on the kernel. Here both plans are lowered and simulated, and the faster one is kept, with
both times in the notes. A kernel whose `double_buffer(...)` the user stated is never second-guessed.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from ..core.config import DEFAULT_TARGET
from ..hw import HardwareProfile
from ..lower.pipeline import lower as lower_pipeline
from ..lower.tiling import SMALLER_FOR_TWO_SLOTS
from ..schedule.directive import Directive
from ..schedule.schedule import Schedule
from ..sim import simulate
from ..tileir.program import Program

__all__ = ["lower"]


def lower(schedule: Schedule, target: str | HardwareProfile = DEFAULT_TARGET, *, name: str | None = None) -> Program:
    """Run the pass pipeline (`kernelstudio.lower.pipeline.lower`); where a vector kernel's tiles were made
    smaller only so that its queues get two slots, also lower it single-buffered with the larger tiles and
    keep whichever the simulator finds faster. The returned Program's `passes` are those of the plan kept."""
    prog = lower_pipeline(schedule, target, name=name)
    smaller = [k.name for k in prog.kernels if any(n.startswith(SMALLER_FOR_TWO_SLOTS) for n in k.notes)]
    if not smaller:
        return prog
    one_slot = copy.copy(schedule)
    one_slot.directives = (*schedule.directives, *(Directive("double_buffer", k, None, False) for k in smaller))
    alt = lower_pipeline(one_slot, target, name=name)
    t_two, t_one = simulate(prog).time_us, simulate(alt).time_us
    keep = alt if t_one < t_two else prog
    verdict = (f"double_buffer: one slot with the larger tiles, {t_one:.2f} us, beats two slots of smaller tiles, "
               f"{t_two:.2f} us (simulated); double_buffer(True) asks for the two slots"
               if keep is alt else
               f"double_buffer: two slots of smaller tiles, {t_two:.2f} us, beat one slot with the larger tiles, "
               f"{t_one:.2f} us (simulated)")
    kernels = tuple(replace(k, notes=(*k.notes, verdict)) if k.name in smaller else k for k in keep.kernels)
    return replace(keep, kernels=kernels)
