"""`ks.grouped_load`: how a grouped matmul's planned group sizes load the cores, and its `imbalance`: the
simulated kernel time of the node's plan_sizes over the time of the same M rows split evenly over the groups
(dsl/grouped.py `even_split`), both lowered with the same tiles and simulated on the same target.

The simulator prices the plan, not data (the group list is read at run time), so this is a planning figure: what
a skewed routing would cost against a balanced one. `core_end_us` gives each cube core's finish time in the
planned run (0 for a core with no tile): the cores that idle while the largest group's tiles finish.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.config import DEFAULT_TARGET
from ..core.errors import UnsupportedError
from ..dsl.grouped import even_split
from ..dsl.tensor import Tensor
from ..ir.ops import Op
from ..sim import SimResult, simulate
from .create import create_schedule
from .depth import lower

__all__ = ["GroupedLoad", "grouped_load"]


@dataclass(frozen=True)
class GroupedLoad:
    """The planned and the even distribution of one grouped matmul, simulated with the same tiles."""

    plan_sizes: tuple[int, ...]
    even_sizes: tuple[int, ...]
    planned_us: float  # the kernel's simulated time for plan_sizes
    even_us: float  # ... for the even split of the same rows
    core_end_us: dict[str, float]  # cube core -> when its last tile ends in the planned run (0: no tile)
    tiles: dict[str, int]  # tile_m, tile_n, tile_k both runs used
    planned: SimResult
    even: SimResult

    @property
    def imbalance(self) -> float:
        """planned_us / even_us: above 1, the plan's skew costs that factor against a balanced routing."""
        return self.planned_us / self.even_us

    @property
    def idle_cores(self) -> tuple[str, ...]:
        """Cube cores with no tile in the planned run."""
        return tuple(c for c, t in self.core_end_us.items() if t == 0.0)

    def summary(self) -> str:
        busy = len(self.core_end_us) - len(self.idle_cores)
        return (f"grouped matmul: planned {self.planned_us:.3f} us vs even {self.even_us:.3f} us "
                f"(imbalance {self.imbalance:.2f}x); {busy} of {len(self.core_end_us)} cube cores take tiles")


def grouped_load(out: Tensor, *, tiles: dict[str, int] | None = None, target: str = DEFAULT_TARGET) -> GroupedLoad:
    """Simulate the grouped matmul `out` with its plan_sizes and with the even split of the same rows.

    tiles: {"tile_m", "tile_n", "tile_k"} for both (default: what the auto-schedule picks for the planned run)."""
    if not isinstance(out, Tensor) or out.node.op is not Op.GROUPED_MATMUL:
        raise UnsupportedError(f"grouped_load: {out!r} is not the result of ks.grouped_matmul; pass the tensor "
                               "grouped_matmul returned")
    n = out.node
    plan = tuple(n.attr("plan_sizes"))
    even = even_split(sum(plan), len(plan)) if sum(plan) else plan
    even_t = Tensor(replace(n, attrs=tuple(sorted({**dict(n.attrs), "plan_sizes": even}.items()))))
    if tiles is None:
        probe = lower(create_schedule(out), target)
        t = dict(probe.kernels[0].tiling)
        tiles = {k: t[k] for k in ("tile_m", "tile_n", "tile_k")}
    sims = []
    for tensor in (out, even_t):
        s = create_schedule(tensor)
        s[tensor].split("m", tiles["tile_m"]).split("n", tiles["tile_n"]).split("k", tiles["tile_k"])
        sims.append(simulate(lower(s, target)))
    planned, balanced = sims
    return GroupedLoad(plan, even, planned.kernels[0]["time_us"], balanced.kernels[0]["time_us"],
                       core_end_us(planned), dict(tiles), planned, balanced)


def core_end_us(sim: SimResult) -> dict[str, float]:
    """Each cube core's last event end after the first kernel's start (0.0: the core did nothing)."""
    start = sim.kernels[0]["start_us"]
    ends = {c: 0.0 for c in sim.events.core_labels if "cube" in c}
    for e in sim.events:
        if e.core in ends and e.kernel == sim.kernels[0]["name"] and e.pipe not in ("S", "FLOW"):
            ends[e.core] = max(ends[e.core], e.end_us - start)
    return ends
