"""What a run reserved on chip: each launch's `InitBuffer` calls per core, as capacity bars of the profile.

A TQue's InitBuffer reserves `num` buffers of `len` bytes, a TBuf's one; both in the memory of their position
(VECIN/VECOUT/VECCALC in UB, A1/B1 in L1, A2 in L0A, B2 in L0B, CO1 in L0C). The twin enforces the same sizes
when it allocates, so a bar past 100 % never gets here: the run stopped with a TwinError.
"""

from __future__ import annotations

from typing import Any

from .. import hw
from ..core.dtypes import block_bytes
from ..twin.calllog import CallLog
from .sync import MEMORY

__all__ = ["TIERS", "buffer_bars"]

TIERS = ("L1", "L0A", "L0B", "L0C", "UB")


def buffer_bars(log: CallLog, target: str | hw.HardwareProfile) -> list[dict[str, Any]]:
    """Per launched kernel and on-chip tier it reserved: `capacity`, `used` (bytes of the core that reserved the
    most), `pct` and one segment per buffer (the form of the Studio's capacity bars)."""
    prof = target if isinstance(target, hw.HardwareProfile) else hw.get(target)
    per_core: dict[tuple[int, int, str], dict[str, list[dict[str, Any]]]] = {}
    for c in log.calls:
        if c.api != "InitBuffer" or c.core == "host":
            continue
        pos = str(c.args.get("buf", ""))
        tier = MEMORY.get(pos)
        if tier is None:
            continue
        num = int(c.args.get("num", 1))
        nbytes = block_bytes(int(c.args.get("len", 0)))
        segs = per_core.setdefault((c.launch, c.block, c.core), {}).setdefault(tier, [])
        name = f"{pos} {'queue' if 'num' in c.args else 'TBuf'} {sum(1 for s in segs if s['slot'] == 0)}"
        segs += [{"buffer": name, "slot": i, "depth": num, "bytes": nbytes,
                  "queue": pos if "num" in c.args else "TBuf", "purpose": f"InitBuffer({pos}, {num}, {nbytes:,} B)"}
                 for i in range(num)]
    bars = []
    for li, launch in enumerate(log.launches):
        for tier in TIERS:
            cores = [t[tier] for (lj, _, _), t in per_core.items() if lj == li and tier in t]
            if not cores:
                continue
            segs = max(cores, key=lambda s: sum(x["bytes"] for x in s))
            used, cap = sum(x["bytes"] for x in segs), prof.capacity_bytes(tier)
            bars.append({"kernel": launch.kernel, "tier": tier, "capacity": cap, "used": used,
                         "pct": 100.0 * used / cap if cap else 0.0, "segments": segs})
    return bars
