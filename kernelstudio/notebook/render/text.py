"""Text views: generated code, a pass's IR diff and the DAG's SVG box."""

from __future__ import annotations

import html

from .base import MONO as _MONO

__all__ = ["code_html", "dag_html", "diff_html"]


def code_html(highlighted: str) -> str:
    return (f'<div class="ks-code" style="max-height:520px; overflow:auto; border:1px solid #e9ecef; '
            f'{_MONO}">{highlighted}</div>')


def diff_html(diff: list[tuple[str, str]]) -> str:
    """A pass's IR with added lines green and removed lines red."""
    colors = {"+": "#d3f9d8", "-": "#ffe3e3", " ": "transparent"}
    lines = "".join(f'<span style="display:block; background:{colors[k]};">{k} {html.escape(t)}</span>'
                    for k, t in diff)
    return (f'<div class="ks-pass" style="max-height:560px; overflow:auto;"><pre style="margin:0; '
            f'line-height:1.35; {_MONO}">{lines}</pre></div>')


def dag_html(svg: str) -> str:
    """The DAG's SVG in a scrolling box (big graphs keep their readable size)."""
    return f'<div class="ks-dag" style="max-height:640px; overflow:auto;">{svg}</div>'

