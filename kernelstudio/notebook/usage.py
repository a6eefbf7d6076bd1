"""The error of a cell magic's own line (`%%ascend_kernel`, `%%ascend_c`): shown as one line, not a traceback."""

from __future__ import annotations

from ..core.errors import KernelStudioError

__all__ = ["MagicUsageError"]


class MagicUsageError(KernelStudioError):
    """The magic's own line is malformed (name, flags, target)."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31mMagicUsageError\x1b[0m: {self}"]
