"""Errors of multi-device designs: each names the thing, the numbers and a way out."""

from __future__ import annotations

from ..core.errors import KernelStudioError, ScheduleError

__all__ = ["ClusterError", "LinkError", "TilingError"]


class ClusterError(KernelStudioError, ValueError):
    """A cluster that cannot hold the design: a device count, a target, a link that does not fit."""


class LinkError(KernelStudioError, ValueError):
    """A link model with a missing, non-positive or unsourced figure, or an unknown algorithm."""


class TilingError(ScheduleError):
    """An MC2 split that CANN refuses: too many tiles, rows off the 128-row grid, too little per
    communication."""
