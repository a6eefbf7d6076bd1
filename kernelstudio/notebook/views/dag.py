"""The fused DAG: DOT with one cluster per kernel (fusion reason and notes as its tooltip), and SVG."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ...ir.printer import to_dot

__all__ = ["dag_dot", "kernel_tooltip", "render_svg"]


def kernel_tooltip(kernel: Any, program_kernel: Any | None = None) -> str:
    """Why the ops of `kernel` share it: family, the fusion rules used (with counts), lowering notes."""
    rules = Counter(r.name for _, r in kernel.reasons)
    first = {r.name: r.reason for _, r in kernel.reasons}
    lines = [f"{kernel.name}: {kernel.family}" + (f" ({program_kernel.kernel_type}, block_dim "
                                                   f"{program_kernel.block_dim})" if program_kernel else "")]
    for name, n in rules.items():
        lines.append(f"{name} x{n}: {first[name]}")
    if program_kernel is not None:
        lines.extend(f"note: {n}" for n in program_kernel.notes)
    return "\n".join(lines)


def dag_dot(design: Any) -> str:
    """DOT of the design's graph, kernels as clusters with their fusion reasons as tooltips."""
    sched = design.schedule
    pks = {k.name: k for k in design.program.kernels}
    clusters = [(f"{k.name} ({k.family})", k.nodes, kernel_tooltip(k, pks.get(k.name))) for k in sched.kernels]
    return to_dot(sched.outputs, clusters=clusters)


def _renderer() -> list[str]:
    dot = shutil.which("dot")
    if dot:
        return [dot]
    pure = Path(sys.executable).parent / "graphviz-pure"
    if pure.exists():
        return [str(pure)]
    found = shutil.which("graphviz-pure")
    if found:
        return [found]
    from ...core.errors import UnsupportedError

    raise UnsupportedError("no Graphviz renderer: install the graphviz system package (apt-get install graphviz) "
                           "or the graphviz-pure wheel (pip install graphviz-pure)")


@functools.lru_cache(maxsize=32)
def render_svg(dot_text: str) -> str:
    """SVG of a DOT text (Graphviz `dot` when on PATH, else the graphviz-pure wheel), cached by text."""
    proc = subprocess.run([*_renderer(), "-Tsvg"], input=dot_text.encode(), capture_output=True, timeout=60)
    if proc.returncode != 0:
        from ...core.errors import UnsupportedError

        raise UnsupportedError(f"Graphviz could not draw the DAG: {proc.stderr.decode(errors='replace')[:300]}")
    svg = proc.stdout.decode()
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
