"""Capacity bars: bytes used per on-chip tier of every kernel, one segment per queue slot and one per scratch
area, against the program's own profile (tileir/capacity.py counts them, as the lowering's check does)."""

from __future__ import annotations

from typing import Any

from ...hw import HardwareProfile
from ...tileir.capacity import profile_of, usage
from ...tileir.scratch import scratch_buffers

__all__ = ["TIERS", "capacity_bars", "overflow_bar"]

TIERS = ("L1", "L0A", "L0B", "L0C", "UB")


def _segments(buffers, scratch: dict[str, tuple[int, str]] | None = None) -> list[dict[str, Any]]:
    segs = []
    for b in buffers:
        for slot in range(b.depth):
            segs.append({"buffer": b.name, "slot": slot, "depth": b.depth, "bytes": b.slot_bytes,
                         "queue": b.queue.value if b.queue is not None else "TBuf", "purpose": b.purpose})
    for name, (nbytes, purpose) in sorted((scratch or {}).items()):
        segs.append({"buffer": name, "slot": 0, "depth": 1, "bytes": nbytes, "queue": "TBuf (scratch)",
                     "purpose": purpose})
    return segs


def capacity_bars(program: Any, profile: HardwareProfile | None = None) -> list[dict[str, Any]]:
    """Per kernel and tier (AIC: L1, L0A, L0B, L0C; AIV: UB): capacity, bytes used, percent and the
    slots that fill it (a double-buffered queue shows two segments of half the room each, the vector
    statements' scratch a segment each). `profile` defaults to the one the program was lowered for."""
    prof = profile or profile_of(program)
    bars = []
    for k in program.kernels:
        use = usage(k)
        for tier in TIERS:
            bufs = [b for b in k.buffers if b.tier.value == tier]
            if not bufs and tier != "UB" and k.family == "vector":
                continue
            if not bufs and tier == "UB" and k.family == "cube":
                continue
            used = max((n for (_, t), n in use.items() if t == tier), default=0)  # one core's need
            cap = prof.capacity_bytes(tier)
            scratch = scratch_buffers(k) if tier == "UB" else None
            bars.append({"kernel": k.name, "tier": tier, "capacity": cap, "used": used,
                         "pct": 100.0 * used / cap if cap else 0.0, "segments": _segments(bufs, scratch)})
    return bars


def overflow_bar(err: Exception) -> dict[str, Any] | None:
    """The bar of the tier a `CapacityError` overflowed (past 100 %), from the numbers it carries."""
    need, have = getattr(err, "need", None), getattr(err, "have", None)
    if need is None or have is None:
        return None
    return {"kernel": err.kernel, "tier": err.tier, "capacity": have, "used": need,
            "pct": 100.0 * need / have if have else 0.0, "segments": _segments(getattr(err, "buffers", ()))}
