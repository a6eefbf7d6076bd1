"""A cluster: N devices of one chip profile joined by a link model."""

from __future__ import annotations

from dataclasses import dataclass

from .. import hw
from ..core.checks import as_int
from ..core.config import DEFAULT_TARGET
from ..hw import HardwareProfile
from .errors import ClusterError
from .link import Link, get_link

__all__ = ["Cluster", "DEVICE_COUNTS", "DEFAULT_LINK"]

DEVICE_COUNTS = (1, 2, 4, 8)  # what aclnnMatmulAllReduce accepts on the 910B (ops-transformer docs)
DEFAULT_LINK = "hccs_910b"


@dataclass(frozen=True, slots=True, init=False)
class Cluster:
    """`devices` NPUs of the profile `target`, joined by `link` (a name from links.toml or a Link)."""

    devices: int
    profile: HardwareProfile
    link: Link

    def __init__(self, devices: int = 8, target: str | HardwareProfile = DEFAULT_TARGET,
                 link: str | Link = DEFAULT_LINK) -> None:
        count = as_int(devices)
        if count not in DEVICE_COUNTS:
            raise ClusterError(f"Cluster: devices={devices!r} is not a device count MC2 supports; use one of "
                               f"{', '.join(map(str, DEVICE_COUNTS))}")
        profile = target if isinstance(target, HardwareProfile) else hw.get(target)
        if not isinstance(link, Link):
            link = get_link(link)
        devices = int(count)
        if devices > link.max_devices:
            raise ClusterError(f"Cluster: {devices} devices, but link {link.name} joins at most "
                               f"{link.max_devices} ({link.source('max_devices')}); use devices <= "
                               f"{link.max_devices}")
        object.__setattr__(self, "devices", devices)
        object.__setattr__(self, "profile", profile)
        object.__setattr__(self, "link", link)

    @property
    def target(self) -> str:
        return self.profile.name

    def with_link(self, **figures: float) -> Cluster:
        """The same cluster with some link figures set by the user (see Link.with_overrides)."""
        return Cluster(self.devices, self.profile, self.link.with_overrides(**figures))

    def __repr__(self) -> str:
        return f"Cluster(devices={self.devices}, target={self.profile.name!r}, link={self.link.name!r})"
