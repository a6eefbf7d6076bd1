"""Shared look of the HTML views: fonts and the byte unit a kernel engineer reads."""

from __future__ import annotations

__all__ = ["CSS", "MONO", "nbytes"]

CSS = ("font-family: var(--jp-ui-font-family, Helvetica, Arial, sans-serif); font-size: 12px; "
        "color: var(--jp-ui-font-color1, #212529);")
MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 11.5px;"


def nbytes(n: float) -> str:
    """Bytes in the unit a kernel engineer reads (B, KB, MB, GB; powers of 1000 as msprof prints)."""
    a = abs(n)
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if a >= div:
            return f"{n / div:,.2f} {unit}"
    return f"{n:,.0f} B"

