"""What the advisor reads off a built design, per kernel: where its pipes idle and on what, its roofline
position, its on-chip capacity use, and the plan's current choices (tiles, queue depth, L1 steps, cores).

All numbers come from the design's own simulation and lowering; nothing is re-simulated here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..sim.idle import TAIL, idle_gaps
from ..sim.program import SYNC_WAIT
from ..tileir.capacity import profile_of, usage

__all__ = ["Wait", "KernelEvidence", "gather"]

_FLAG = "(its set had not arrived)"
_PLANS = re.compile(r"fused ([0-9,.]+) us (with sync_all \(row blocks|in row blocks \(sync_all): "
                    r"(?:([0-9,.]+) us|(does not lower))\)")


@dataclass(frozen=True, slots=True)
class Wait:
    """Idle time of one pipe of a kernel's first core of one kind (cube or vector), charged to one cause."""

    core: str  # e.g. "core0.veccore0"
    pipe: str  # "MTE2", "CUBE", "VECTOR", ...
    kind: str  # "fill" (a DeQue waited for its EnQue), "slot" (an AllocTensor for a Free), "flag", "sync", "tail",
    #            "scalar", "other"
    what: str  # the buffer (fill, slot) or the cause's text
    by: str  # the pipe whose instruction released the wait ("" when none)
    us: float
    pct: float  # of the kernel's span
    by_cube: bool = False  # the releasing pipe is on a cube core (else on a vector core)
    credit_us: float = 0.0  # its own time plus the waits downstream that it holds up (set by `gather`)

    def text(self) -> str:
        """`VECTOR idle 77 % waiting for in_out_ws filled by MTE2` and the like."""
        what = {"fill": f"waiting for {self.what} filled" + (f" by {self.by}" if self.by else ""),
                "slot": f"waiting for a free slot of {self.what}" + (f" (freed by {self.by})" if self.by else ""),
                "flag": "waiting for the cube's flag" + (f" ({self.by})" if self.by else ""),
                "sync": "waiting at the all-core barrier",
                "tail": "with no work left (load imbalance or a short pipe)",
                "scalar": "waiting for the scalar to issue"}.get(self.kind, f"waiting: {self.what}")
        return f"{self.pipe} idle {self.pct:.0f} % {what} ({self.us:.2f} us)"


@dataclass(frozen=True)
class KernelEvidence:
    """One kernel of a design as the advisor's rules see it."""

    name: str
    family: str  # "vector" | "cube" | "cube_vector" | "attention"
    root: str  # "matmul", "conv2d" or "" (vector kernels)
    root_name: str  # the graph name of the matmul/conv ("" for vector kernels)
    span_us: float  # the kernel's simulated time
    tiling: dict[str, Any]
    block_dim: int
    max_cores: int  # cube cores for matmul/conv and attention kernels, vector cores otherwise
    queue_depth: int  # the smallest depth of its queued buffers (1: single-buffered somewhere)
    limiter: str  # roofline limiter
    efficiency: float  # of the roofline bound
    amplification: float  # GM traffic / compulsory bytes
    l2_hit: float
    capacity: dict[str, tuple[int, int]]  # tier -> (bytes used, bytes on the chip), the fullest core type
    waits: tuple[Wait, ...]
    sync_all: bool | None  # None when the kernel cannot take sync_all
    math_f32: bool  # vector math runs in float32 scratch while the kernel's data is narrower
    notes: tuple[str, ...] = field(default=())
    directives: tuple[Any, ...] = field(default=())  # the schedule's directives for this kernel

    def stated(self, kind: str) -> Any:
        """The value the schedule's last `kind` directive for this kernel gives, or None."""
        return next((d.value for d in reversed(self.directives) if d.kind == kind), None)

    def planned_margin(self) -> float:
        """How much slower the planner (plan/choose.py's note) estimated the fused kernel's plan that this
        kernel does not use (row blocks or the all-core barrier) than the one it uses, at auto schedules;
        negative when the kernel uses the plan the planner found slower, 0.0 when the notes do not say."""
        note = next((n for n in self.notes if n.startswith("fusion pays")), "")
        m = _PLANS.search(note)
        if m is None or self.sync_all is None:
            return 0.0
        chosen = float(m.group(1).replace(",", ""))
        other = float("inf") if m.group(4) else float(m.group(3).replace(",", ""))
        uses_choice = self.sync_all == (m.group(2) == "with sync_all (row blocks")
        return other - chosen if uses_choice else chosen - other

    @property
    def cube(self) -> bool:
        return "tile_m" in self.tiling

    def t(self, key: str, default: int = 0) -> int:
        v = self.tiling.get(key, default)
        return int(v) if isinstance(v, (int, float)) else default

    def wait_us(self, kind: str, pipes: tuple[str, ...] = ()) -> float:
        return sum(w.us for w in self.waits if w.kind == kind and (not pipes or w.pipe in pipes))

    def top(self, kinds: tuple[str, ...], pipes: tuple[str, ...] = ()) -> Wait | None:
        """The largest wait of these kinds (on these pipes), or None."""
        ws = [w for w in self.waits if w.kind in kinds and (not pipes or w.pipe in pipes)]
        return max(ws, key=lambda w: w.us) if ws else None

    def fullest(self, tiers: tuple[str, ...]) -> tuple[str, float]:
        """The fullest of these tiers and its share used (("", 0.0) when the kernel holds none of them)."""
        shares = [(t, self.capacity[t][0] / self.capacity[t][1]) for t in tiers if t in self.capacity]
        return max(shares, key=lambda x: x[1]) if shares else ("", 0.0)

    def used(self, tier: str) -> str:
        """`UB 61 % used (120,064 of 196,608 B)`, or "" when the kernel holds nothing there."""
        if tier not in self.capacity:
            return ""
        need, have = self.capacity[tier]
        return f"{tier} {100 * need / have:.0f} % used ({need:,} of {have:,} B)"


def _classify(cause: str) -> tuple[str, str]:
    if cause.startswith("a free slot of "):
        return "slot", cause[len("a free slot of "):].split(" (")[0]
    if cause.endswith("filled (its EnQue)"):
        return "fill", cause.split(" filled")[0]
    if cause.endswith(_FLAG):
        return "flag", cause
    if cause.endswith(SYNC_WAIT):
        return "sync", cause
    if cause == TAIL:
        return "tail", cause
    if "scalar" in cause:
        return "scalar", cause
    return "other", cause


def _releaser(by: str) -> tuple[str, bool]:
    """The pipe of a releaser text ("core0.cubecore0 MTE1: copy ...", "the last core to arrive, core3.cubecore0
    FIXP: ...") and whether it is on a cube core."""
    head = by.split(":")[0].split()
    if len(head) < 2:
        return "", False
    return head[-1], "cubecore" in head[-2]


def _credit(waits: list[Wait]) -> list[Wait]:
    """Split each wait for a fill, a flag or the barrier along the chain of waits that held up its releasing
    pipe: the share passed up one link is the share of its span that the releasing pipe itself waited, the
    rest stays with the wait. A rule answering the root of a stall then outranks one answering its symptoms,
    and a pipe that barely waits passes little on."""
    chained = ("fill", "flag", "sync")
    by_pipe: dict[tuple[bool, str], Wait] = {}
    for w in waits:
        if w.kind in chained and w.pct >= 5:
            key = ("cubecore" in w.core, w.pipe)
            if key not in by_pipe or w.us > by_pipe[key].us:
                by_pipe[key] = w
    credit = {id(w): 0.0 for w in waits}
    for w in waits:
        left, cur, seen = w.us, w, {id(w)}
        while cur.kind in chained:
            up = by_pipe.get((cur.by_cube, cur.by))
            if up is None or id(up) in seen:
                break
            passed = left * min(1.0, up.pct / 100)
            credit[id(cur)] += left - passed
            left, cur = passed, up
            seen.add(id(up))
        credit[id(cur)] += left
    return [replace(w, credit_us=credit[id(w)]) for w in waits]


def _waits(sim: Any) -> dict[str, tuple[Wait, ...]]:
    """Per kernel: the waits of its first cube core and first vector core, largest first."""
    spans = {k["name"]: k["end_us"] - k["start_us"] for k in sim.kernels}
    acc: dict[tuple[str, str, str, str, str], list[Any]] = {}
    for g in idle_gaps(sim, cores=1):
        if not g["core"].endswith("core0"):
            continue  # the second vector core of an AI core does the same work as the first
        kind, what = _classify(g["cause"])
        key = (g["kernel"], g["core"], g["pipe"], kind, what)
        slot: list[Any] = acc.setdefault(key, [0.0, {}])
        d = g["end"] - g["start"]
        slot[0] += d
        by = _releaser(g["released_by"])
        slot[1][by] = slot[1].get(by, 0.0) + d
    out: dict[str, list[Wait]] = {}
    for (kern, core, pipe, kind, what), (us, by) in acc.items():
        span = spans.get(kern) or 1.0
        (top, on_cube) = max(by.items(), key=lambda kv: kv[1])[0]
        out.setdefault(kern, []).append(Wait(core, pipe, kind, what, top, us, 100.0 * us / span, on_cube))
    return {k: tuple(sorted(_credit(v), key=lambda w: -w.us)) for k, v in out.items()}


def _capacity(k: Any, profile: Any) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for (_, tier), need in usage(k).items():
        have = profile.capacity_bytes(tier)
        if tier not in out or need / have > out[tier][0] / out[tier][1]:
            out[tier] = (need, have)
    return out


def gather(design: Any) -> tuple[KernelEvidence, ...]:
    """The evidence of every kernel of a built design (`ks.build`'s Design)."""
    prog, sim, sched = design.program, design.sim, design.schedule
    profile = profile_of(prog)
    waits = _waits(sim)
    sims = {k["name"]: k for k in sim.kernels}
    fused = {k.name: k for k in sched.kernels}
    out = []
    for k in prog.kernels:
        sk = sims.get(k.name, {})
        fk = fused.get(k.name)
        tiling = dict(k.tiling)
        root = fk.root.op.value if fk is not None and fk.root is not None else ""
        root_name = sched.graph.names.get(fk.root, "") if root else ""
        cube = "tile_m" in tiling
        queued = [b.depth for b in k.buffers if b.queue is not None]
        can_sync = fk is not None and fk.can_sync_all
        sync_on = any(n.startswith("sync_all:") for n in k.notes) if can_sync else None
        data = {b.dtype for b in k.buffers if b.queue is not None and b.core.value == "aiv"}
        f32 = any(b.dtype == "float32" and b.queue is None and b.core.value == "aiv" for b in k.buffers)
        out.append(KernelEvidence(
            name=k.name, family=k.family, root=root, root_name=root_name,
            span_us=float(sk.get("time_us", 0.0)), tiling=tiling, block_dim=int(k.block_dim),
            max_cores=profile.aic_cores if cube or k.family == "attention" else profile.aiv_cores,
            queue_depth=min(queued) if queued else 2, limiter=str(sk.get("roofline_limiter", "")),
            efficiency=float(sk.get("efficiency", 0.0)), amplification=float(sk.get("traffic_amplification", 1.0)),
            l2_hit=float(sk.get("l2_hit_ratio", 0.0)), capacity=_capacity(k, profile), waits=waits.get(k.name, ()),
            sync_all=sync_on, math_f32=f32 and bool(data) and "float32" not in data, notes=tuple(k.notes),
            directives=sched.for_kernel(k.name)))
    return tuple(out)
