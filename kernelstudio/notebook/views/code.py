"""The generated Ascend C: every file, with C++ syntax highlighting as HTML (Pygments)."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["code_files", "highlight_cpp"]


def code_files(design: Any) -> dict[str, str]:
    """path -> text of every generated file (kernel, tiling header, host, launcher)."""
    return dict(design.code.files)


@functools.lru_cache(maxsize=64)
def highlight_cpp(text: str) -> str:
    """`text` as highlighted HTML with inline styles (no stylesheet needed in the front end)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import CppLexer

    fmt = HtmlFormatter(noclasses=True, style="default", linenos="inline", nobackground=True)
    return highlight(text, CppLexer(), fmt)
