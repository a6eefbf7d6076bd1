"""The notebook layer: `%%ascend_kernel` magic, the Studio widget and its views.

The core library never imports this package; it imports IPython, ipywidgets and plotly lazily.

Stage 12. It may import every stage below it, up to tune/; the public API (kernelstudio/__init__.py) is above it
and is read from sys.modules, not imported."""

from __future__ import annotations

from typing import Any

__all__ = ["get_studio"]


def get_studio(name: str) -> Any:
    """The live Studio of design `name` in this notebook (to move its controls from code)."""
    from IPython import get_ipython

    from ..core.errors import KernelStudioError

    ip = get_ipython()
    magics = ip.magics_manager.registry.get("AscendKernelMagics") if ip is not None else None
    if magics is None or name not in magics.studios:
        known = ", ".join(magics.studios) if magics is not None and magics.studios else "none yet"
        raise KernelStudioError(f"no Studio named {name!r} in this notebook (Studios: {known}); run its "
                                f"%%ascend_kernel {name} cell first")
    return magics.studios[name]
