"""The Studio's target list: every hardware profile, whether this design can lower on it, and why not.

The test is `lower.pipeline.needs_other_chip`, the check `lower()` makes before any pass (a matmul/conv kernel
needs a separated chip: AIC and AIV cores with a FixPipe L0C -> GM path); tests/notebook/test_studio_chrome.py
lowers a design on every profile and compares.
"""

from __future__ import annotations

from typing import Any

from ...hw import get, names
from ...lower.pipeline import needs_other_chip

__all__ = ["target_choices"]


def _cube_ops(design: Any) -> list[str]:
    """Names of the matmul/conv ops that root a cube kernel of the design's plan."""
    sched = getattr(design, "schedule", None)
    kernels = getattr(sched, "kernels", ()) if sched is not None else ()
    return sorted({k.root.op.name.lower() for k in kernels if getattr(k, "root", None) is not None})


def target_choices(design: Any | None) -> list[dict[str, Any]]:
    """Per profile, sorted by name: `name`, `label` (with "(provisional)" for a provisional profile),
    `provisional`, `ok` (the design lowers there), `why` (None, or the reason it does not) and `short` (that reason in a
    few words).
    With no design yet every profile is `ok`: nothing is known to rule one out."""
    cube = _cube_ops(design) if design is not None else []
    out = []
    for name in names():
        p = get(name)
        why = needs_other_chip(design.schedule, p) if cube else None
        short = f"{p.arch} chip; {'/'.join(cube)} kernels need a separated one" if why else None
        out.append({"name": name, "label": f"{name} (provisional)" if p.provisional else name,
                    "provisional": bool(p.provisional), "ok": why is None, "why": why, "short": short})
    return out
