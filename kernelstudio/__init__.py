"""kernelstudio: design fused Cube+Vector operators for Ascend NPUs."""

from __future__ import annotations

from . import errors
from .errors import *  # noqa: F403

__all__ = [*errors.__all__]
__version__ = "0.1.0"
