"""Hardware profiles: Ascend chips as data (profiles/*.toml) plus calibrated cycle costs.

    ks.hw.get("ascend910b2")        # HardwareProfile; every number has profile.source(field)
    ks.hw.names()                   # all known profile names
    ks.hw.get("ascend910b2").costs  # CostModel: move_cycles, mmad_cycles, vector_cycles

Stage 1. It may import core/ only.
"""

from __future__ import annotations

import difflib
import functools
from importlib import resources

from ..core.errors import TargetError
from .costs import CostModel
from .profile import HardwareProfile, MoveCurveSpec, profile_from_toml

__all__ = ["get", "names", "HardwareProfile", "CostModel", "MoveCurveSpec"]


@functools.cache
def _registry() -> dict[str, HardwareProfile]:
    out = {}
    for entry in sorted(resources.files(__name__).joinpath("profiles").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            profile = profile_from_toml(entry.read_text(encoding="utf-8"), origin=entry.name)
            out[profile.name] = profile
    return out


def names() -> tuple[str, ...]:
    """Names of every known hardware profile, sorted."""
    return tuple(_registry())


def get(name: str) -> HardwareProfile:
    """The profile called `name` (case-insensitive), or TargetError listing the known names."""
    registry = _registry()
    if not isinstance(name, str):
        raise TargetError(f"a target is a profile name (a str), got {type(name).__name__} {name!r}; known: "
                          f"{', '.join(registry)}")
    key = name.strip().lower()
    if key in registry:
        return registry[key]
    close = difflib.get_close_matches(str(key), registry, n=1, cutoff=0.0)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise TargetError(f"unknown hardware target {name!r}; known: {', '.join(registry)}{hint}")
