"""Hardware what-if: the profile's headline numbers as data for controls, and `what_if` to change them.

    rows = whatif_table(ks.hw.get("ascend910b2"))   # label, unit, value, choices, source per field
    p = what_if(ks.hw.get("ascend910b2"), ub_bytes=128 * 1024, hbm_bytes_per_s=2.0e12)

`what_if` is `HardwareProfile.with_overrides` (the changed fields' source becomes "user") with checks a
slider can meet: an unknown field, a value of the wrong kind or one outside the field's allowed range is a
`WhatIfError` naming the field, the value, the range and a way out. The slider ranges below are choices
for exploring, not facts about any chip: each says "assumed" in its row's `range_source`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core.errors import TargetError
from .profile import HardwareProfile

__all__ = ["WhatIfError", "WhatIfField", "WHATIF_FIELDS", "whatif_field", "whatif_table", "what_if",
           "format_value"]

KIB, MIB = 1024, 1024 * 1024
BLOCK_BYTES = 32  # one DataCopy block: UB and L1 addresses and lengths are whole 32 B blocks (HARDWARE.md)
RANGE_SOURCE = "assumed: a range for exploring, wider than the chips in profiles/ (not a fact about any chip)"


class WhatIfError(TargetError):
    """A what-if change the profile cannot take: an unknown field, or a value outside its allowed range."""


def _steps(lo: float, hi: float, step: float) -> tuple[float, ...]:
    n = int(round((hi - lo) / step))
    return tuple(lo + i * step for i in range(n + 1))


@dataclass(frozen=True, slots=True)
class WhatIfField:
    """One profile field a what-if control changes: how to show it and which values it may take.

    `scale` divides the stored value for display in `unit` (bytes -> KiB); `choices` are the slider's
    stops in stored units; `lo`/`hi` the values `what_if` accepts (inclusive); `multiple` the granule."""

    name: str  # the HardwareProfile field
    label: str
    unit: str
    scale: float
    choices: tuple[float, ...]
    lo: float
    hi: float
    integer: bool = False
    multiple: int = 1
    why_lo: str = ""  # why nothing below `lo` works

    def display(self, value: float) -> str:
        """The value in the field's display unit ("192 KiB", "1.26 TB/s"; bytes below 1 KiB as "32 B")."""
        if self.unit in ("KiB", "MiB") and value < KIB:
            return f"{format_value(value)} B"
        if self.unit == "KiB" and value >= MIB and not value % MIB:
            return f"{format_value(value / MIB)} MiB"
        return f"{format_value(value / self.scale)} {self.unit}"

    def stops(self, profile: HardwareProfile) -> list[float]:
        """The slider's stops with the profile's own value among them (910B HBM 1.26 TB/s is off the grid)."""
        own = getattr(profile, self.name)
        vals = {(int(v) if self.integer else float(v)) for v in self.choices}
        vals.add(own)
        return sorted(vals)

    def check(self, value: Any, profile: HardwareProfile) -> int | float:
        """`value` as the field's type, or a WhatIfError naming the field, value, range and a way out."""
        import numpy as np

        if isinstance(value, np.generic):
            value = value.item()
        rng = f"{self.display(self.lo)} .. {self.display(self.hi)}"
        here = f"{profile.name} has {self.display(getattr(profile, self.name))}"
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise WhatIfError(f"what_if {self.name}={value!r}: give a finite number (allowed {rng}; {here})")
        if self.integer and value != int(value):
            raise WhatIfError(f"what_if {self.name}={value!r}: must be a whole number (allowed {rng}; {here}); "
                              f"round it, e.g. {self.name}={int(value)}")
        if value < self.lo or value > self.hi:
            why = f" ({self.why_lo})" if value < self.lo and self.why_lo else ""
            raise WhatIfError(f"what_if {self.name}={value!r} ({self.display(value)}) is outside {rng}{why}; "
                              f"{here}: pick a value in range, or leave {self.name} out to keep the profile's")
        if self.multiple > 1 and int(value) % self.multiple:
            down = int(value) // self.multiple * self.multiple
            raise WhatIfError(f"what_if {self.name}={value!r}: must be a multiple of {self.multiple} B "
                              f"(one {self.multiple} B block); {here}: try {self.name}={max(down, self.multiple)}")
        return int(value) if self.integer else float(value)


def _bytes_field(name: str, label: str, lo_kib: int, hi_kib: int, step_kib: int, *, multiple: int = BLOCK_BYTES,
                 why: str = "") -> WhatIfField:
    return WhatIfField(name, label, "KiB", KIB, _steps(lo_kib * KIB, hi_kib * KIB, step_kib * KIB),
                       lo=multiple, hi=64 * MIB, integer=True, multiple=multiple, why_lo=why)


_ONE_BLOCK = "smaller than one 32 B block: no buffer fits"
# The what-if fields, in the order the Studio shows them. Ranges: assumed (RANGE_SOURCE).
WHATIF_FIELDS: tuple[WhatIfField, ...] = (
    _bytes_field("ub_bytes", "UB (per vector core)", 64, 512, 32, why=_ONE_BLOCK),
    _bytes_field("l1_bytes", "L1 (per cube core)", 128, 2048, 128, why=_ONE_BLOCK),
    _bytes_field("l0a_bytes", "L0A (per cube core)", 16, 256, 16, multiple=512,
                 why="smaller than one 512 B L0A fractal"),
    _bytes_field("l0b_bytes", "L0B (per cube core)", 16, 256, 16, multiple=512,
                 why="smaller than one 512 B L0B fractal"),
    _bytes_field("l0c_bytes", "L0C (per cube core)", 32, 512, 32, multiple=1024,
                 why="smaller than one 16x16 fp32 fractal (1 KiB)"),
    WhatIfField("hbm_bytes_per_s", "HBM bandwidth (chip)", "TB/s", 1e12, _steps(0.4e12, 4.0e12, 0.2e12),
                lo=1e9, hi=1e14, why_lo="below 1 GB/s the simulator's times mean nothing"),
    WhatIfField("l2_bytes", "L2 (chip)", "MiB", MIB,
                tuple(m * MIB for m in (16, 32, 48, 64, 96, 128, 192, 256, 384, 512)),
                lo=1 * MIB, hi=4096 * MIB, integer=True, multiple=BLOCK_BYTES,
                why_lo="the L2 model needs at least 1 MiB to hold a workspace tile"),
    WhatIfField("aic_cores", "cube cores (AIC)", "cores", 1, tuple(float(i) for i in range(1, 65)),
                lo=1, hi=256, integer=True, why_lo="a chip needs at least one core"),
    WhatIfField("aiv_cores", "vector cores (AIV)", "cores", 1, (), lo=1, hi=512, integer=True,
                why_lo="a chip needs at least one core"),
    WhatIfField("clock_mhz", "clock", "MHz", 1, _steps(800, 2400, 50), lo=100, hi=5000,
                why_lo="below 100 MHz no chip of this kind runs"),
    WhatIfField("launch_overhead_us", "launch gap", "us", 1, _steps(0.0, 30.0, 0.5), lo=0.0, hi=10_000.0),
    WhatIfField("sync_all_us", "SyncAll barrier", "us", 1, _steps(0.0, 5.0, 0.25), lo=0.0, hi=10_000.0),
)
_BY_NAME = {f.name: f for f in WHATIF_FIELDS}


def format_value(v: float) -> str:
    """A number as a control shows it: whole numbers without a point, others with up to 3 significant
    decimals (1.26, 0.25, 192)."""
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.1f}"


def whatif_field(name: str) -> WhatIfField:
    """The row of what-if field `name`, or a WhatIfError listing them."""
    if name not in _BY_NAME:
        raise WhatIfError(f"what_if: {name!r} is not a what-if field; they are {', '.join(_BY_NAME)} "
                          "(profile.with_overrides changes the other spec fields)")
    return _BY_NAME[name]


def _aiv_stops(profile: HardwareProfile) -> list[float]:
    per = profile.aiv_per_aic
    return sorted({per * int(c) for c in _BY_NAME["aic_cores"].choices} | {profile.aiv_cores})


def whatif_table(profile: HardwareProfile) -> list[dict[str, Any]]:
    """One row per what-if field: `field`, `label`, `unit`, `scale`, `value` (stored), `display`,
    `choices` (stored units, the profile's own value among them), `lo`/`hi`, `source` and `note` (the
    profile's provenance of the value, for a hover), `range_source` (the slider range is assumed)."""
    if not isinstance(profile, HardwareProfile):
        raise WhatIfError(f"whatif_table: give a HardwareProfile (ks.hw.get(name)), got {type(profile).__name__}")
    rows = []
    for f in WHATIF_FIELDS:
        value = getattr(profile, f.name)
        stops = _aiv_stops(profile) if f.name == "aiv_cores" else f.stops(profile)
        rows.append({"field": f.name, "label": f.label, "unit": f.unit, "scale": f.scale, "value": value,
                     "display": f.display(value), "choices": stops, "lo": f.lo, "hi": f.hi,
                     "source": profile.source(f.name), "note": profile.note(f.name), "range_source": RANGE_SOURCE})
    return rows


def _cores(profile: HardwareProfile, changes: dict[str, Any]) -> None:
    """Cube and vector cores move together: a separated chip has `aiv_per_aic` (2) vector cores per cube core."""
    per = profile.aiv_per_aic
    aic, aiv = changes.get("aic_cores"), changes.get("aiv_cores")
    if aic is not None and aiv is None:
        changes["aiv_cores"] = aic * per
    elif aiv is not None and aic is None:
        if aiv % per:
            raise WhatIfError(f"what_if aiv_cores={aiv}: {profile.name} has {per} vector cores per cube core "
                              f"({profile.arch} chip), so aiv_cores must be a multiple of {per}; try "
                              f"aiv_cores={max(per, aiv // per * per)} or set aic_cores")
        changes["aic_cores"] = aiv // per
    elif aic is not None and aiv is not None and aiv != aic * per:
        raise WhatIfError(f"what_if aic_cores={aic}, aiv_cores={aiv}: {profile.name} has {per} vector cores per "
                          f"cube core, so aiv_cores must be {aic * per}; give only one of them")
    if "aic_cores" in changes:
        _BY_NAME["aic_cores"].check(changes["aic_cores"], profile)


def what_if(profile: HardwareProfile | str, **changes: Any) -> HardwareProfile:
    """`profile` with what-if fields changed (their source becomes "user"); a bad field or value is a
    WhatIfError. Cube and vector core counts move together (one gives the other)."""
    from . import get

    base = get(profile) if isinstance(profile, str) else profile
    if not isinstance(base, HardwareProfile):
        raise WhatIfError(f"what_if: give a HardwareProfile or a profile name, got {type(profile).__name__}")
    values: dict[str, Any] = {}
    for name, v in changes.items():
        values[name] = whatif_field(name).check(v, base)
    _cores(base, values)
    same = {k: v for k, v in values.items() if getattr(base, k) != v}
    if not same:
        return base
    try:
        return base.with_overrides(**same)
    except TargetError as e:  # the profile's own checks (cannot happen within the ranges, kept as a net)
        raise WhatIfError(f"what_if on {base.name}: {e}; pick values within the fields' ranges") from None
