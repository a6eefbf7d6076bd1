"""`ks.create_schedule`: the fusion pass with the cost-aware choice plugged in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..schedule import schedule as _schedule
from .choose import plan_fusion

__all__ = ["create_schedule"]


def create_schedule(outputs: Any, *, fuse: bool | None = None, keep_out: Iterable[Any] = (),
                    target: Any = None) -> _schedule.Schedule:
    """Run the fusion pass on the graph that computes `outputs` and return its Schedule.

    By default (`fuse=None`) every matmul/conv keeps its epilogue in one kernel only where the
    simulator, on `target` (default: the Studio's target, else ascend910b2), finds that faster than
    running them as separate kernels; each such kernel's notes give both times. `fuse=True` fuses
    wherever the patterns allow, `fuse=False` gives the unfused baseline (one kernel per op or
    library call); `keep_out` lists tensors whose ops stay out of fused kernels."""
    return _schedule.create_schedule(outputs, fuse=fuse, keep_out=keep_out, target=target, planner=plan_fusion)
