"""On-chip capacity: the bytes a kernel holds per core type and tier (every buffer slot, and the vector
statements' scratch) against the sizes of the Program's own profile (a user's `with_overrides` kept).

The one count that the lowering's capacity check, the auto-schedule's fit probes, the Studio's capacity bars
and the code generator read.
"""

from __future__ import annotations

from typing import Any

from ..hw import HardwareProfile
from ..hw import get as get_profile
from .program import Kernel
from .scratch import scratch_buffers

__all__ = ["profile_of", "usage", "fits"]


def profile_of(prog: Any) -> HardwareProfile:
    """The profile a Program was lowered for: its own (overrides included), else its target's."""
    profile = getattr(prog, "profile", None)
    return profile if profile is not None else get_profile(prog.target)


def usage(k: Kernel) -> dict[tuple[str, str], int]:
    """Bytes per (core type, tier) of a kernel's buffers, depth included, plus the scratch its vector
    statements need in UB (reduce work areas, select masks, ...)."""
    u: dict[tuple[str, str], int] = {}
    for b in k.buffers:
        key = (b.core.value, b.tier.value)
        u[key] = u.get(key, 0) + b.nbytes
    extra = sum(n for n, _ in scratch_buffers(k).values())
    if extra:
        u[("aiv", "UB")] = u.get(("aiv", "UB"), 0) + extra
    return u


def fits(k: Kernel, profile: HardwareProfile) -> bool:
    """Whether every tier of `k` fits on `profile`."""
    return all(need <= profile.capacity_bytes(tier) for (_, tier), need in usage(k).items())
