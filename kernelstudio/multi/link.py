"""The link model of a cluster: HCCL's alpha-beta-gamma costs per algorithm, every figure with its source.

    link = get_link("hccs_910b")           # from links.toml; derived figures say how they were derived
    link.source("mesh_link_bytes_per_s")   # 'derived from the ops-transformer 910B full-mesh fit: ...'
    link.with_overrides(mesh_alpha_us=10)  # a user's figure; its source becomes "user"

alpha is the fixed cost of one step of an algorithm, beta the time per byte on one link (1 / link
bandwidth), gamma the time per byte of the reduction. A collective's steps are built from them in
algorithms.py. The chip profiles' own hccs_bytes_per_s and hccs_latency_us (assumed figures) are not read:
a link is data of its own, of the cluster rather than of one chip.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..core.checks import as_int, as_number
from ..core.errors import TargetError
from .errors import LinkError

__all__ = ["Link", "LINK_SOURCE_TAGS", "LINK_FIELDS", "ALGORITHMS", "get_link", "link_names"]

# A link figure's source starts with one of these.
LINK_SOURCE_TAGS = ("[ops-transformer]", "[hccl]", "measured", "assumed", "derived", "user")
ALGORITHMS = ("mesh", "ring")
_MIB = float(1 << 20)

_FLOAT_FIELDS = (
    "mesh_alpha_us", "mesh_link_bytes_per_s", "mesh_reduce_bytes_per_s",
    "ring_alpha_us", "ring_link_bytes_per_s", "ring_reduce_bytes_per_s",
    "aicpu_issue_us", "aiv_issue_us",
)
_INT_FIELDS = ("max_devices", "aiv_comm_cores")
LINK_FIELDS = _FLOAT_FIELDS + _INT_FIELDS


@dataclass(frozen=True, kw_only=True, slots=True)
class Link:
    """The links between the devices of a cluster and the engines that drive them."""

    name: str
    display_name: str
    max_devices: int
    mesh_alpha_us: float  # one step of a mesh algorithm (all peers at once)
    mesh_link_bytes_per_s: float  # 1 / beta: one link, one direction
    mesh_reduce_bytes_per_s: float  # 1 / gamma: the reduction of received data
    ring_alpha_us: float
    ring_link_bytes_per_s: float
    ring_reduce_bytes_per_s: float
    aicpu_issue_us: float  # the AI CPU server's cost to pick up one Commit
    aiv_issue_us: float  # the same when HCCL runs on vector cores
    aiv_comm_cores: int  # vector cores AIV-mode HCCL takes from the device
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        for f in _FLOAT_FIELDS:
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or v != v or v == float("inf"):
                raise LinkError(f"link {self.name}: {f} must be a positive finite number, got {v!r}")
        for f in _INT_FIELDS:
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise LinkError(f"link {self.name}: {f} must be a positive whole number, got {v!r}")
        have = {k for k, _ in self.sources}
        missing = [f for f in LINK_FIELDS if f not in have]
        if missing:
            raise LinkError(f"link {self.name}: no source for {', '.join(missing)}; every figure says where it "
                            f"comes from (a tag of {', '.join(LINK_SOURCE_TAGS)})")
        bad = [k for k, s in self.sources if not s.startswith(LINK_SOURCE_TAGS)]
        if bad:
            raise LinkError(f"link {self.name}: the source of {', '.join(bad)} must start with one of "
                            f"{', '.join(LINK_SOURCE_TAGS)}")

    def params(self, algorithm: str) -> tuple[float, float, float]:
        """(alpha in us, beta in us per byte, gamma in us per byte) of `algorithm` ("mesh" or "ring")."""
        if algorithm not in ALGORITHMS:
            raise LinkError(f"unknown algorithm {algorithm!r}; HCCL algorithms modelled: {', '.join(ALGORITHMS)}")
        alpha = getattr(self, f"{algorithm}_alpha_us")
        return (alpha, 1e6 / getattr(self, f"{algorithm}_link_bytes_per_s"),
                1e6 / getattr(self, f"{algorithm}_reduce_bytes_per_s"))

    def issue_us(self, engine: str) -> float:
        """The cost of one Commit on the communication engine ("aicpu" or "aiv")."""
        return self.aiv_issue_us if engine == "aiv" else self.aicpu_issue_us

    def source(self, field_name: str) -> str:
        """Where `field_name`'s value comes from."""
        for key, text in self.sources:
            if key == field_name:
                return text
        raise LinkError(f"link {self.name}: no field {field_name!r}; fields: {', '.join(LINK_FIELDS)}")

    def with_overrides(self, **fields: Any) -> Link:
        """A copy with some figures changed (e.g. mesh_link_bytes_per_s=40e9); their source becomes "user"."""
        unknown = [k for k in fields if k not in LINK_FIELDS]
        if unknown:
            raise LinkError(f"link {self.name}: cannot set {', '.join(map(repr, unknown))}; "
                            f"settable figures: {', '.join(LINK_FIELDS)}")
        values: dict[str, Any] = {}
        for k, v in fields.items():
            if k in _INT_FIELDS:
                n = as_int(v)
                if n is None:
                    raise LinkError(f"link {self.name}: {k} must be a whole number, got {v!r:.40}")
                values[k] = n
            else:
                values[k] = as_number(v, f"link {self.name}: {k}", positive=True, error=LinkError)
        sources = tuple((k, "user" if k in fields else s) for k, s in self.sources)
        return dataclasses.replace(self, **values, sources=sources)

    def describe(self) -> str:
        """One line per figure: name, value, source."""
        return "\n".join(f"  {f:<24} {getattr(self, f):>14,.6g}  {self.source(f)}" for f in LINK_FIELDS)


def _figure(table: dict[str, Any], key: str, where: str) -> tuple[Any, str]:
    entry = table.get(key)
    if not isinstance(entry, dict) or "value" not in entry or "source" not in entry:
        raise LinkError(f"{where}: {key} must be {{ value = ..., source = \"...\" }}")
    return entry["value"], str(entry["source"])


def _from_fit(fit: dict[str, Any], where: str) -> dict[str, tuple[float, str]]:
    """The mesh/ring figures a published fit of collective time implies (see links.toml)."""
    slope, s_slope = _figure(fit, "slope_us_per_mib", where)
    offset, _ = _figure(fit, "offset_us", where)
    p0, _ = _figure(fit, "fitting_rank", where)
    factor, _ = _figure(fit, "full_mesh_time_factor", where)
    growth, _ = _figure(fit, "allreduce_growth", where)
    tag = (f"derived from the ops-transformer 910B full-mesh fit (t = {slope:.4f} us/MiB x S + {offset:.3f} us "
           f"at {p0} ranks)")
    # A mesh AllGather of S MiB is one step moving S/p0 MiB on every link: alpha + (S/p0) beta = fit / factor.
    beta = slope * p0 / factor  # us per MiB on one link
    alpha = offset / factor
    # A mesh AllReduce is 2 alpha + 2 (S/p0) beta + ((p0-1)/p0) S gamma (+ one issue) = growth x fit.
    gamma = (growth - 1.0) * slope * p0 / (p0 - 1)
    issue = (growth - 1.0) * offset
    out = {
        "mesh_alpha_us": (alpha, f"{tag}: offset / FULL_MESH_TIME_FACTOR = {offset:.3f} / {factor:g}, one mesh "
                                 "step of an AllGather"),
        "mesh_link_bytes_per_s": (_MIB / (beta * 1e-6), f"{tag}: slope x ranks / FULL_MESH_TIME_FACTOR = "
                                  f"{beta:.3f} us per MiB on one link ({s_slope})"),
        "mesh_reduce_bytes_per_s": (_MIB / (gamma * 1e-6), f"{tag}: the AllReduce's growth {growth:g} beyond "
                                    f"its two mesh steps, ({growth:g} - 1) x slope x {p0}/{p0 - 1} = "
                                    f"{gamma:.3f} us per MiB reduced"),
        "aicpu_issue_us": (issue, f"{tag}: the AllReduce's growth applied to the offset, ({growth:g} - 1) x "
                                  f"{offset:.3f} us, taken as the AI CPU's cost per Commit"),
    }
    same = "derived: the ring runs on the same HCCS links; no public 910B ring fit, so the mesh figure"
    for f in ("alpha_us", "link_bytes_per_s", "reduce_bytes_per_s"):
        out[f"ring_{f}"] = (out[f"mesh_{f}"][0], f"{same} ({out[f'mesh_{f}'][1]})")
    return out


def link_from_toml(name: str, table: dict[str, Any]) -> Link:
    """One [name] table of links.toml as a Link."""
    where = f"links.toml [{name}]"
    figures: dict[str, tuple[Any, str]] = {}
    if "fit" in table:
        figures.update(_from_fit(table["fit"], f"{where}.fit"))
    for key in table.get("link", {}):
        figures[key] = _figure(table["link"], key, f"{where}.link")
    figures["max_devices"] = _figure(table, "max_devices", where)
    missing = [f for f in LINK_FIELDS if f not in figures]
    if missing:
        raise LinkError(f"{where}: no value for {', '.join(missing)} (give a [fit] or the figure itself)")
    values = {k: (int(v) if k in _INT_FIELDS else float(v)) for k, (v, _) in figures.items() if k in LINK_FIELDS}
    return Link(name=name, display_name=str(table.get("display_name", name)), **values,
                sources=tuple((k, figures[k][1]) for k in LINK_FIELDS))


@functools.cache
def _registry() -> dict[str, Link]:
    text = resources.files(__package__).joinpath("links.toml").read_text(encoding="utf-8")
    return {name: link_from_toml(name, table) for name, table in tomllib.loads(text).items()}


def link_names() -> tuple[str, ...]:
    """Names of the known link models."""
    return tuple(_registry())


def get_link(name: str) -> Link:
    """The link model called `name`, or a TargetError naming the known ones."""
    registry = _registry()
    if isinstance(name, str) and name in registry:
        return registry[name]
    close = difflib.get_close_matches(str(name), registry, n=1, cutoff=0.0)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise TargetError(f"unknown link model {name!r}; known: {', '.join(registry)}{hint}")
