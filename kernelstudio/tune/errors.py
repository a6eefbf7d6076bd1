"""Errors of the tuner and the design database (both `KernelStudioError`s)."""

from __future__ import annotations

from typing import Any

from ..core.errors import KernelStudioError

__all__ = ["TuneError", "DesignDBError"]


class TuneError(KernelStudioError, ValueError):
    """A tuning request that cannot run: bad budget or strategy, a build_fn without knobs, no feasible
    configuration. `result` holds the partial TuneResult when there is one."""

    def __init__(self, message: str, *, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class DesignDBError(KernelStudioError, RuntimeError):
    """The design database file cannot be used: not SQLite, corrupted, or of another schema version.
    The file is never modified when this is raised."""
