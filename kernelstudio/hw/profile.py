"""HardwareProfile: one Ascend chip as data, loaded from a TOML file with a source for every number."""

from __future__ import annotations

import dataclasses
import functools
import math
import tomllib
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import TargetError, UnsupportedError
from . import _calibration as cal
from .costs import CostModel, MoveCurveSpec

__all__ = ["HardwareProfile", "MoveCurveSpec", "profile_from_toml", "SOURCE_TAGS"]

# A source string must start with one of these.
SOURCE_TAGS = ("[ini]", "[devkit]", "[mskpp]", "[catlass]", "measured", "assumed", "derived", "user")

_INT_FIELDS = (
    "aic_cores", "aiv_cores", "aiv_per_aic", "standalone_aiv_cores", "hbm_bytes", "l2_bytes",
    "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "ub_bytes", "cube_macs_per_cycle",
)
_FLOAT_FIELDS = (
    "clock_mhz", "hbm_bytes_per_s", "l2_read_bytes_per_cycle", "l2_write_bytes_per_cycle",
    "aiv_l2_read_bytes_per_s", "launch_overhead_us", "scalar_issue_cycles", "hccs_bytes_per_s", "hccs_latency_us",
    "sync_all_us",
)
_BOOL_FIELDS = ("provisional", "has_l0c_to_ub")
_STR_SPEC_FIELDS = ("arch",)
# Fields of the [spec] table: each is {value = ..., source = "...", note = "..."(optional)}.
SPEC_FIELDS = _STR_SPEC_FIELDS + _BOOL_FIELDS + _INT_FIELDS + _FLOAT_FIELDS
_META_SOURCE = "profile metadata"

_TIERS = {
    "L1": "l1_bytes", "L0A": "l0a_bytes", "L0B": "l0b_bytes", "L0C": "l0c_bytes", "UB": "ub_bytes",
    "L2": "l2_bytes", "GM": "hbm_bytes",
}
# Cube throughput relative to fp16 (k of one fractal: fp16 16, int8 32, hf32 8, fp32 4).
_CUBE_RATE = {"float16": 1.0, "bfloat16": 1.0, "int8": 2.0, "hfloat32": 0.5, "float32": 0.25}


@dataclass(frozen=True, kw_only=True, slots=True)
class HardwareProfile:
    """An Ascend chip: core counts, clock, memory sizes and rates, and which measured curves time it."""

    name: str
    display_name: str
    arch: str  # "separated" (AIC and AIV are different cores) | "coupled" (one core, L0C -> UB)
    provisional: bool
    aic_cores: int
    aiv_cores: int
    aiv_per_aic: int
    standalone_aiv_cores: int  # vector-only cores outside the AI cores (310P)
    clock_mhz: float
    hbm_bytes: int
    l2_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    ub_bytes: int
    hbm_bytes_per_s: float  # whole chip
    l2_read_bytes_per_cycle: float  # per core
    l2_write_bytes_per_cycle: float  # per core
    aiv_l2_read_bytes_per_s: float  # whole chip: L2 hits read into the vector cores' UB, every vector core reading
    has_l0c_to_ub: bool
    cube_macs_per_cycle: int  # fp16, per core
    launch_overhead_us: float
    scalar_issue_cycles: float  # per issued instruction
    hccs_bytes_per_s: float  # per link
    hccs_latency_us: float
    sync_all_us: float  # the all-core barrier of a mixed kernel (SyncAll<false>), once every core has arrived
    move_curves: tuple[MoveCurveSpec, ...] = ()
    mmad_curve: str = ""
    mmad_curve_source: str = ""
    vector_curve_chip: str = ""
    vector_curve_source: str = ""
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
    notes: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        _validate(self)

    # --- derived quantities -------------------------------------------------------------------
    @property
    def clock_hz(self) -> float:
        """Core clock in Hz."""
        return self.clock_mhz * 1e6

    def peak_flops(self, dtype: str = "float16") -> float:
        """Chip cube peak in FLOP/s (derived: AIC cores x MAC/cycle x 2 x clock x dtype factor)."""
        if dtype not in _CUBE_RATE:
            raise UnsupportedError(
                f"{self.name}: no cube rate for dtype {dtype!r}; known: {', '.join(_CUBE_RATE)}"
            )
        return self.aic_cores * self.cube_macs_per_cycle * 2 * self.clock_hz * _CUBE_RATE[dtype]

    def capacity_bytes(self, tier: str) -> int:
        """Capacity of one memory tier (per core for L1/L0A/L0B/L0C/UB; whole chip for L2/GM)."""
        key = tier.upper() if isinstance(tier, str) else tier
        if key not in _TIERS:
            raise UnsupportedError(
                f"{self.name}: unknown memory tier {tier!r}; known tiers: {', '.join(_TIERS)}"
            )
        return getattr(self, _TIERS[key])

    # --- provenance ---------------------------------------------------------------------------
    def source(self, field_name: str) -> str:
        """Where the value of `field_name` comes from ([ini] ..., [mskpp] ..., assumed ..., derived ...)."""
        if field_name in ("name", "display_name"):
            return _META_SOURCE
        for key, text in self.sources:
            if key == field_name:
                return text
        raise TargetError(
            f"{self.name}: no field {field_name!r}; fields with a source: "
            f"{', '.join(('name', 'display_name', *SPEC_FIELDS))}"
        )

    def note(self, field_name: str) -> str:
        """Remarks on `field_name` (other sources that disagree, caveats); "" when there are none."""
        self.source(field_name)  # raises for unknown fields
        return dict(self.notes).get(field_name, "")

    def with_overrides(self, **fields: Any) -> HardwareProfile:
        """A copy with some spec fields changed (e.g. launch_overhead_us=8.0); their source becomes "user"."""
        valid = ("display_name", *SPEC_FIELDS)
        unknown = [k for k in fields if k not in valid]
        if unknown:
            raise TargetError(
                f"{self.name}: cannot override {', '.join(map(repr, unknown))}; "
                f"valid fields: {', '.join(valid)}"
            )
        values = {k: _plain(k, v) for k, v in fields.items()}
        sources = tuple((k, "user" if k in fields else s) for k, s in self.sources)
        notes = tuple((k, n) for k, n in self.notes if k not in fields)
        return dataclasses.replace(self, **values, sources=sources, notes=notes)

    @property
    def costs(self) -> CostModel:
        """The cycle-cost lookups for this profile (built once per distinct profile)."""
        return _cost_model(self)


@functools.lru_cache(maxsize=64)
def _cost_model(profile: HardwareProfile) -> CostModel:
    return CostModel(profile)


def _plain(key: str, v: Any) -> Any:
    """An override value with NumPy scalars made Python ones (ints stay ints for int fields)."""
    import numpy as np

    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        v = int(v)
    elif isinstance(v, np.floating):
        v = float(v)
    return float(v) if key in _FLOAT_FIELDS and _is_number(v) else v


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _validate(p: HardwareProfile) -> None:
    def bad(msg: str) -> TargetError:
        return TargetError(f"hardware profile {p.name}: {msg}")

    for f in _INT_FIELDS:
        v = getattr(p, f)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise bad(f"{f} must be a non-negative int, got {v!r}")
    for f in _FLOAT_FIELDS:
        v = getattr(p, f)
        if not _is_number(v) or not math.isfinite(v) or v < 0:
            raise bad(f"{f} must be a finite non-negative number, got {v!r}")
    for f in _BOOL_FIELDS:
        if not isinstance(getattr(p, f), bool):
            raise bad(f"{f} must be true or false, got {getattr(p, f)!r}")
    if p.arch not in ("separated", "coupled"):
        raise bad(f"arch must be 'separated' or 'coupled', got {p.arch!r}")
    if not isinstance(p.name, str) or not p.name.strip():
        raise bad(f"name must be a non-empty string, got {p.name!r}")
    if p.vector_curve_chip and p.vector_curve_chip not in cal.vector_chips():
        raise bad(f"[vector] chip {p.vector_curve_chip!r} has no measured vector curves; known chips: "
                  f"{', '.join(cal.vector_chips())}")
    if p.mmad_curve and p.mmad_curve not in cal.mmad_rows():
        raise bad(f"[mmad] curve {p.mmad_curve!r} is not a measured Mmad curve; known: "
                  f"{', '.join(sorted(cal.mmad_rows()))}")
    unknown = [f"{m.src}->{m.dst} {c!r}" for m in p.move_curves for c in (m.curve, m.nd2nz_curve)
               if c and c not in cal.move_rows()]
    if unknown:
        raise bad(f"moves {', '.join(unknown)}: no such measured move curve; known: "
                  f"{', '.join(sorted(cal.move_rows()))}")
    want = 2 if p.arch == "separated" else 1
    if p.aiv_per_aic != want:
        raise bad(f"a {p.arch} chip has aiv_per_aic={want}, got {p.aiv_per_aic}")
    if p.aiv_cores != p.aic_cores * p.aiv_per_aic:
        raise bad(f"aiv_cores={p.aiv_cores} must be aic_cores x aiv_per_aic = {p.aic_cores * p.aiv_per_aic}")
    # rates and sizes the simulator divides by, or that bound every tile
    for f in ("aic_cores", "clock_mhz", "cube_macs_per_cycle", "ub_bytes", "hbm_bytes_per_s",
              "l2_read_bytes_per_cycle", "l2_write_bytes_per_cycle", "aiv_l2_read_bytes_per_s",
              "hbm_bytes", "l1_bytes", "l0a_bytes",
              "l0b_bytes", "l0c_bytes", "hccs_bytes_per_s"):
        if getattr(p, f) <= 0:
            raise bad(f"{f} must be positive, got {getattr(p, f)!r}; it is a rate or size the simulator "
                      "divides by")


def _scale(v: Any, path: str, bad: Any) -> float:
    """A move curve's bandwidth_scale: a positive finite number (measured bytes/cycle are multiplied by it)."""
    if not _is_number(v) or not math.isfinite(float(v)) or float(v) <= 0:
        raise bad(f"moves.{path!r} bandwidth_scale must be a positive number (it multiplies the measured "
                  f"bytes per cycle), got {v!r}")
    return float(v)


def profile_from_toml(text: str, origin: str = "<toml>") -> HardwareProfile:
    """Build a HardwareProfile from TOML text (or UTF-8 bytes); every spec value must carry a source."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise TargetError(f"hardware profile {origin}: the TOML bytes are not UTF-8 ({e.reason} at byte "
                              f"{e.start}); pass the file's text") from None
    if not isinstance(text, str):
        raise TargetError(f"hardware profile {origin}: give the TOML as text, got {type(text).__name__}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"hardware profile {origin}: invalid TOML: {e}") from None

    def bad(msg: str) -> TargetError:
        return TargetError(f"hardware profile {origin}: {msg}")

    for key in ("name", "display_name", "spec", "moves", "mmad", "vector"):
        if key not in doc:
            raise bad(f"missing {key!r}")
    spec = doc["spec"]
    missing = [f for f in SPEC_FIELDS if f not in spec]
    extra = [f for f in spec if f not in SPEC_FIELDS]
    if missing or extra:
        raise bad(f"[spec] missing {missing} / unknown {extra}; expected exactly {', '.join(SPEC_FIELDS)}")
    values: dict[str, Any] = {}
    sources, notes = [], []
    for f in SPEC_FIELDS:
        entry = spec[f]
        if not isinstance(entry, dict) or "value" not in entry or "source" not in entry:
            raise bad(f"spec.{f} must be {{ value = ..., source = \"...\" }}, got {entry!r}")
        src = str(entry["source"]).strip()
        if not src.startswith(SOURCE_TAGS):
            raise bad(f"spec.{f} source {src!r} must start with one of {', '.join(SOURCE_TAGS)}")
        v = entry["value"]
        values[f] = float(v) if f in _FLOAT_FIELDS and _is_number(v) else v
        sources.append((f, src))
        if entry.get("note"):
            notes.append((f, str(entry["note"])))
    if not isinstance(doc["name"], str) or not doc["name"].strip():
        raise bad(f"name must be a non-empty string (the target's name), got {doc['name']!r}")
    for table, keys in (("mmad", ("curve", "source")), ("vector", ("chip", "source")), ("moves", ())):
        if not isinstance(doc[table], dict):
            raise bad(f"[{table}] must be a table, got {doc[table]!r}")
        missing_keys = [k for k in keys if k not in doc[table]]
        if missing_keys:
            raise bad(f"[{table}] needs {' and '.join(f'{k} = ...' for k in keys)}; it has no "
                      f"{', '.join(missing_keys)}")
    moves = []
    for path, entry in doc["moves"].items():
        src, _, dst = path.partition("->")
        if not dst or not isinstance(entry, dict) or "curve" not in entry or "source" not in entry:
            raise bad(f"moves.{path!r} must be \"SRC->DST\" = {{ curve = ..., source = ... }}")
        moves.append(
            MoveCurveSpec(
                src=src.strip().upper(), dst=dst.strip().upper(), curve=entry["curve"],
                nd2nz_curve=entry.get("nd2nz_curve", ""),
                bandwidth_scale=_scale(entry.get("bandwidth_scale", 1.0), path, bad), source=entry["source"],
            )
        )
    return HardwareProfile(
        name=doc["name"], display_name=doc["display_name"], **values, move_curves=tuple(moves),
        mmad_curve=doc["mmad"]["curve"], mmad_curve_source=doc["mmad"]["source"],
        vector_curve_chip=doc["vector"]["chip"], vector_curve_source=doc["vector"]["source"],
        sources=tuple(sources), notes=tuple(notes),
    )
