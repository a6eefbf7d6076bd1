"""The error of a cell magic's own line (`%%ascend_kernel`, `%%ascend_c`): shown as one line, not a traceback."""

from __future__ import annotations

from ..core.errors import KernelStudioError

__all__ = ["MagicUsageError", "check_identifier"]


class MagicUsageError(KernelStudioError):
    """The magic's own line is malformed (name, flags, target)."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31mMagicUsageError\x1b[0m: {self}"]


def check_identifier(name: str, what: str, becomes: str, example: str) -> None:
    """A magic's NAME must be a Python identifier of at most 64 characters (`becomes`: what it is used as)."""
    if not name.isidentifier() or len(name) > 64:
        raise MagicUsageError(f"{what} name {name!r} must be a Python identifier of at most 64 characters (it "
                              f"{becomes}), e.g. {example}")
