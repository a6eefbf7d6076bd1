"""Errors a user can cause. Every message names the thing, the numbers and a way out."""

from __future__ import annotations

__all__ = [
    "KernelStudioError",
    "ShapeError",
    "DTypeError",
    "ScheduleError",
    "CapacityError",
    "UnsupportedError",
    "InputError",
    "TargetError",
    "KnobError",
    "TwinError",
    "CompileError",
    "StageError",
    "VerifyError",
]


class KernelStudioError(Exception):
    """Base class of every error kernelstudio raises for a user mistake."""


class ShapeError(KernelStudioError, ValueError):
    """Tensor shapes that do not fit the operation."""


class DTypeError(KernelStudioError, TypeError):
    """A dtype the operation does not accept or that is unknown."""


class ScheduleError(KernelStudioError, ValueError):
    """A schedule directive that is illegal for the kernel (axis, factor, cores, order)."""


class CapacityError(ScheduleError):
    """A buffer that does not fit its on-chip memory tier."""


class UnsupportedError(KernelStudioError, NotImplementedError):
    """Something valid in general that this tool or target does not handle."""


class InputError(KernelStudioError, ValueError):
    """Input arrays that do not match the graph's placeholders."""


class TargetError(KernelStudioError, KeyError):
    """An unknown hardware target."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class KnobError(KernelStudioError, ValueError):
    """A malformed knob: bad name, default not among the choices, wrong value type."""


class TwinError(KernelStudioError, RuntimeError):
    """A check of the CPU twin failed while running generated code (overflow, misalignment, queues)."""


class CompileError(KernelStudioError, RuntimeError):
    """Generated code did not compile against the CPU twin."""


class StageError(KernelStudioError, TypeError):
    """An object from the wrong stage of the flow (a Tensor where a Program is needed): a step was
    skipped; the message names the call to make first."""


class VerifyError(KernelStudioError, RuntimeError):
    """A TileIR program that breaks the IR's own rules (an undeclared buffer, unpaired queue operations or
    flags, an unbound variable): a fault of the pass that built it, not of the user's design. The message
    names the pass, the kernel, the statement and what is wrong."""
