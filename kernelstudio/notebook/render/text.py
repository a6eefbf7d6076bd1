"""Text views: generated code, a pass's IR diff and the DAG's SVG box."""

from __future__ import annotations

import html
import re
from itertools import groupby
from operator import itemgetter

from .base import MONO as _MONO

__all__ = ["code_html", "dag_html", "diff_html"]


def code_html(highlighted: str) -> str:
    return (f'<div class="ks-code" style="max-height:520px; overflow:auto; border:1px solid #e9ecef; '
            f'{_MONO}">{highlighted}</div>')


_DIFF_OPEN = {k: f'<span style="display:block; background:{c};">{k} '
              for k, c in (("+", "#d3f9d8"), ("-", "#ffe3e3"), (" ", "transparent"))}
_DIFF_NEXT = {k: "</span>" + v for k, v in _DIFF_OPEN.items()}  # a line's end and the next line's start


def diff_html(diff: list[tuple[str, str]]) -> str:
    """A pass's IR with added lines green and removed lines red."""
    parts = []
    for k, run in groupby(diff, key=itemgetter(0)):  # a run of lines of one kind: escaped and wrapped at once
        texts = [t for _, t in run]
        text = "\n".join(texts)
        if text.count("\n") == len(texts) - 1:  # no line breaks inside a line (as printed)
            parts.append(_DIFF_OPEN[k] + html.escape(text).replace("\n", _DIFF_NEXT[k]) + "</span>")
        else:
            parts.extend(_DIFF_OPEN[k] + html.escape(t) + "</span>" for t in texts)
    lines = "".join(parts)
    # long IR lines scroll sideways rather than wrap (a wrapped line reads as two); the marked lines' colour
    # spans the widest line
    return (f'<div class="ks-pass" style="max-height:560px; overflow:auto;"><pre style="margin:0; '
            f'display:inline-block; min-width:100%; box-sizing:border-box; white-space:pre; line-height:1.35; '
            f'{_MONO}">{lines}</pre></div>')


def dag_html(svg: str, zoom: float | None = None) -> str:
    """The DAG's SVG in its box: fitted (`zoom` None: the whole graph scaled to the box's width, and down to
    75 % of the window's height when it is taller; never past its natural size) or at `zoom` times its
    natural size, scrolling."""
    w, h = _natural_size(svg)
    if zoom is None:
        size = (f'width="100%" height="100%" style="display:block; margin:auto; width:100%; height:auto; '
                f'max-width:{w:.0f}pt; max-height:75vh;"')
        box = "overflow:hidden;"
    else:
        size = f'width="{w * zoom:.0f}pt" height="{h * zoom:.0f}pt" style="display:block; margin:auto;"'
        box = "max-height:75vh; overflow:auto;"
    sized = _SVG_SIZE.sub(f"<svg {size}", svg, count=1)
    return f'<div class="ks-dag" style="{box} width:100%;">{sized}</div>'


_SVG_SIZE = re.compile(r'<svg\s+width="[^"]*"\s+height="[^"]*"')
_VIEWBOX = re.compile(r'viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"')


def _natural_size(svg: str) -> tuple[float, float]:
    """Graphviz's drawing size in points, from the SVG's viewBox."""
    m = _VIEWBOX.search(svg)
    return (float(m.group(3)), float(m.group(4))) if m else (600.0, 400.0)
