"""Cost-aware fusion: keep a matmul/conv and its epilogue in one kernel only where the simulator says
it pays.

For every cube_vector kernel of the pattern-based plan, the split plan runs the matmul/conv as a cube
kernel and its epilogue as vector kernel(s) reading the result back from GM; for every attention kernel
(one cube-vector-cube kernel, fusion/attention.py) the split plan is Q K^T with the softmax in one kernel and
P V in a second, P through GM; a matmul whose epilogue
reduces whole rows fuses in two plans, row blocks or sync_all (C tiles over every core, one all-core
barrier, rows over every vector core). The plans are lowered with their auto schedules and simulated
on the target; a kernel stays fused, in its faster plan, unless its split form is faster still (launch
gaps included: they are real time between kernels). The decision and both times are
written into the kernels' notes. Decisions are cached by graph structure and target, so re-running a
cell whose knobs only move tiles costs nothing here.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..core.config import DEFAULT_TARGET, FUSION_CACHE_LIMIT
from ..core.errors import KernelStudioError
from ..fusion.partition import FusedKernel, FusionPlan, partition
from ..hw import HardwareProfile
from ..hw import get as get_profile
from ..ir.graph import Graph
from ..ir.node import Node
from ..schedule.schedule import Schedule
from ..sim import simulate
from .depth import lower

__all__ = ["FusionChoice", "choose_fusion", "plan_fusion", "planning_target", "current_target", "graph_only"]

_TARGET: contextvars.ContextVar[Any] = contextvars.ContextVar("kernelstudio_planning_target", default=None)
_CACHE: dict[tuple, tuple[tuple[int, ...], tuple[tuple[int, float, float, str, bool, float], ...]]] = {}
_GRAPH_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("kernelstudio_graph_only", default=False)


@contextlib.contextmanager
def graph_only() -> Iterator[None]:
    """`create_schedule` calls inside this block keep every kernel fused without simulating the plans: for
    code that runs a cell only for the graph it makes (which operator it is), not for its schedule."""
    token = _GRAPH_ONLY.set(True)
    try:
        yield
    finally:
        _GRAPH_ONLY.reset(token)


@contextlib.contextmanager
def planning_target(target: Any) -> Iterator[None]:
    """`create_schedule` calls inside this block pick fused or split plans for `target` (a profile
    name or HardwareProfile) unless given their own `target=`; the Studio wraps the cell body in it."""
    token = _TARGET.set(target)
    try:
        yield
    finally:
        _TARGET.reset(token)


def current_target() -> Any:
    """The target fusion decisions are made for: the innermost `planning_target`, else ascend910b2."""
    t = _TARGET.get()
    return DEFAULT_TARGET if t is None else t


@dataclass(frozen=True, slots=True)
class FusionChoice:
    """One cube_vector decision: the matmul/conv root, whether it stays fused, both plans' times."""

    root: Node
    fused: bool
    fused_us: float  # the fused kernel (its better plan), launch gap included (inf if it did not lower)
    split_us: float  # the cube kernel and its epilogue kernel(s), launch gaps included
    target: str
    why: str = ""  # set when a plan could not be lowered or simulated
    sync_all: bool = False  # the fused kernel's better plan is sync_all (a row-reduction epilogue)
    other_us: float = float("nan")  # its other plan (row blocks, or sync_all), when both were compared

    def note(self) -> str:
        if self.why:
            return self.why
        plan = ""
        if self.other_us == self.other_us:  # both fused plans compared: say which won
            other = f"{self.other_us:,.2f} us" if self.other_us < float("inf") else "does not lower"
            plan = f" with sync_all (row blocks: {other})" if self.sync_all else f" in row blocks (sync_all: {other})"

        if self.fused:
            return (f"fusion pays on {self.target}: fused {self.fused_us:,.2f} us{plan} vs split "
                    f"{self.split_us:,.2f} us (cube kernel + epilogue kernel(s), auto schedules, launch gaps "
                    "included)")
        return (f"kept apart on {self.target}: split {self.split_us:,.2f} us vs fused {self.fused_us:,.2f} us{plan} "
                "(auto schedules, launch gaps included); create_schedule(..., fuse=True) forces one kernel")


def _profile(target: Any) -> Any:
    return target if isinstance(target, HardwareProfile) else get_profile(target)


def _kernel_times(plan_schedule: Any, profile: Any) -> tuple[list[float] | None, str]:
    """Per-kernel time (launch gap included) of a schedule with auto tiles, or (None, why)."""
    try:
        sim = simulate(lower(plan_schedule, profile))
    except KernelStudioError as e:
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    gap = profile.launch_overhead_us
    return [float(k["time_us"]) + gap for k in sim.kernels], ""


def choose_fusion(graph: Graph, keep_out: tuple[Node, ...], target: Any
                  ) -> tuple[tuple[FusionChoice, ...], FusionPlan]:
    """Decide, for each cube_vector kernel of the fused plan, whether it stays fused on `target`; also
    returns the fully fused plan (the schedule's plan when nothing is split)."""

    fused = partition(graph, fuse=True, keep_out=keep_out)
    cands = [k for k in fused.kernels if k.family in ("cube_vector", "attention")]
    if not cands or _GRAPH_ONLY.get():
        return (), fused
    profile = _profile(target)
    if profile.arch != "separated":
        return (), fused  # matmul/conv kernels do not lower there at all; lower() says so
    order = {n: i for i, n in enumerate(graph.nodes)}
    key = (graph.text(), tuple(order[n] for n in keep_out if n in order), profile)
    try:
        hit = _CACHE.get(key)
    except TypeError:  # an unhashable profile: no caching
        key, hit = None, None
    if hit is None:
        hit = _decide(graph, keep_out, profile, fused, cands)
        if key is not None:
            if len(_CACHE) >= FUSION_CACHE_LIMIT:
                _CACHE.clear()
            _CACHE[key] = hit
    split_roots, rows = hit
    nodes = graph.nodes
    return tuple(FusionChoice(nodes[i], i not in split_roots, f_us, s_us, profile.name, why, sync, other)
                 for i, f_us, s_us, why, sync, other in rows), fused


def _decide(graph: Graph, keep_out: tuple[Node, ...], profile: Any, fused: FusionPlan,
            cands: list[FusedKernel]) -> tuple[tuple[int, ...], tuple]:
    order = {n: i for i, n in enumerate(graph.nodes)}
    roots = tuple(k.root for k in cands)
    split = partition(graph, fuse=True, keep_out=keep_out, split=roots)
    f_times, f_why = _kernel_times(Schedule(graph.outputs, fuse=True, keep_out=keep_out), profile)
    s_times, s_why = _kernel_times(Schedule(graph.outputs, fuse=True, keep_out=keep_out, split=roots), profile)
    # a matmul + row-reduction epilogue fuses in two plans: row blocks (the lowering's default) or sync_all
    syncable = [k for k in cands if k.can_sync_all]
    y_times = None
    if syncable:
        y_sched = Schedule(graph.outputs, fuse=True, keep_out=keep_out)
        for k in syncable:
            y_sched[k.name].sync_all(True)
        y_times, _ = _kernel_times(y_sched, profile)
    owner = {n: k.root for k in cands for n in k.nodes}
    split_us = {r: 0.0 for r in roots}
    if s_times is not None:
        for k, t in zip(split.kernels, s_times, strict=True):
            r = owner.get(k.nodes[0])
            if r is not None:
                split_us[r] += t
    rows, out = [], []
    for k in cands:
        i = fused.kernels.index(k)
        f_us = f_times[i] if f_times is not None else float("inf")
        sync, other = False, float("nan")
        if k in syncable:
            y_us = y_times[i] if y_times is not None else float("inf")
            sync, other = y_us < f_us, max(f_us, y_us)
            f_us = min(f_us, y_us)
        s_us = split_us[k.root] if s_times is not None else float("inf")
        why = ""
        fused_lowers = f_us < float("inf")  # in row blocks or with sync_all
        if not fused_lowers and s_times is not None:
            why = f"kept apart on {profile.name}: the fused plan does not lower ({f_why})"
        elif s_times is None:
            why = "" if fused_lowers else f"kept fused: neither plan lowers with auto schedules ({f_why})"
        keep = not (s_us < f_us)
        if not keep:
            out.append(order[k.root])
        rows.append((order[k.root], f_us, s_us, why, sync, other))
    return tuple(out), tuple(rows)


def annotate(plan: FusionPlan, choices: tuple[FusionChoice, ...]) -> FusionPlan:
    """The plan with each decision's note on the kernels it concerns (the fused kernel, or the cube
    kernel and the epilogue kernels that start right after it)."""
    if not choices:
        return plan
    by_root = {c.root: c for c in choices}
    kernels = []
    for k in plan.kernels:
        c = by_root.get(k.root) if k.root is not None else None
        if c is None:  # an epilogue kernel split off a root it reads
            c = next((by_root[i] for n in k.nodes for i in n.inputs if i in by_root and not by_root[i].fused), None)
        if c is None:
            kernels.append(k)
            continue
        sync = c.fused and c.sync_all and k.root is c.root
        kernels.append(replace(k, notes=(*k.notes, c.note()), sync_all=sync))
    return replace(plan, kernels=tuple(kernels))


def plan_fusion(graph: Graph, keep_out: tuple[Node, ...], target: Any) -> tuple[tuple[FusionChoice, ...], FusionPlan]:
    """The Schedule's planner for `fuse=None`: each matmul/conv epilogue fused or split on `target` (None: the
    innermost `planning_target`, else the default target), the plan annotated with every decision."""
    choices, fused = choose_fusion(graph, keep_out, current_target() if target is None else target)
    split = tuple(c.root for c in choices if not c.fused)
    plan = partition(graph, fuse=True, keep_out=keep_out, split=split) if split else fused
    return choices, annotate(plan, choices)
