"""Double buffering that pays: `ks.lower` with the auto-schedule's queue depth checked by the simulator.

By default every queue has two slots. When a vector kernel's auto tiles fit UB once but not twice, the
lowering chooses smaller tiles so that they fit twice (and says so in the kernel's notes). Smaller tiles
overlap copies with compute but issue more instructions, and a row reduction may turn multi-pass; which
wins depends on the kernel. Here both plans are lowered and simulated, and the faster one is kept, with
both times in the notes. A kernel whose `double_buffer(...)` the user stated is never second-guessed.

Only the kernels whose plans differ are simulated (a program of those kernels alone, both ways): the other
kernels are the same in both plans, and simulating a whole many-kernel program twice dominated `ks.lower`
(the DeepSeek MoE block at 128 tokens: minutes of lowering, all but a second of it in the two simulations;
bench/bench_moe.py prints the lowering seconds). The kernels alone start with a cold L2, as the first kernel
of a program does.
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
    t_two, t_one = simulate(_only(prog, smaller)).time_us, simulate(_only(alt, smaller)).time_us
    how = "simulated" if len(smaller) == len(prog.kernels) else f"simulated: the {_kernels(smaller)} alone"
    keep = alt if t_one < t_two else prog
    verdict = (f"double_buffer: one slot with the larger tiles, {t_one:.2f} us, beats two slots of smaller tiles, "
               f"{t_two:.2f} us ({how}); double_buffer(True) asks for the two slots"
               if keep is alt else
               f"double_buffer: two slots of smaller tiles, {t_two:.2f} us, beat one slot with the larger tiles, "
               f"{t_one:.2f} us ({how})")
    kernels = tuple(replace(k, notes=(*k.notes, verdict)) if k.name in smaller else k for k in keep.kernels)
    return replace(keep, kernels=kernels)


def _only(prog: Program, names: list[str]) -> Program:
    """`prog` with only the kernels named (the rest are the same in both plans)."""
    if len(names) == len(prog.kernels):
        return prog
    return replace(prog, kernels=tuple(k for k in prog.kernels if k.name in names))


def _kernels(names: list[str]) -> str:
    return f"kernel {names[0]}" if len(names) == 1 else "kernels " + ", ".join(names)
