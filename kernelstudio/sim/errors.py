"""The simulator's error: a TileIR program that cannot run (deadlock, queue misuse)."""

from __future__ import annotations

from ..core.errors import KernelStudioError

__all__ = ["SimulationError"]


class SimulationError(KernelStudioError, RuntimeError):
    """A program that would hang or misuse a queue on the chip; the message names kernel and buffer."""
