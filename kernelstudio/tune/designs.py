"""`ks.save_design` and `ks.designs`: the saved-designs table of the design database."""

from __future__ import annotations

from typing import Any

from .db import DesignRecord, open_db
from .errors import DesignDBError

__all__ = ["save_design", "designs"]


def save_design(design: Any, name: str | None = None, *, db: Any = None) -> DesignRecord:
    """Store a built design (`ks.build(...)`, a Studio's design, `result.best.design`) under `name`
    (default: the design's name) with its target, knob values, predicted time, graph and schedule."""
    from ..ir.printer import format_graph
    from ..plan.build import Design

    if not isinstance(design, Design):
        raise DesignDBError(f"save_design takes a built design (ks.build(out, target) or result.best.design), got "
                            f"{type(design).__name__}; build it first")
    label = design.name if name is None else name
    if not isinstance(label, str) or not label.strip():
        raise DesignDBError(f"save_design: name must be a non-empty string, got {label!r}; pass name='my_kernel'")
    dbh = open_db(db if db is not False else None)
    try:
        return dbh.save_design(label, design.target, design.knobs, float(design.sim.time_us),
                               format_graph(list(design.graph.outputs)), design.schedule.to_json())
    finally:
        if dbh is not db:
            dbh.close()


def designs(*, db: Any = None, target: str | None = None) -> list[DesignRecord]:
    """Saved designs (name, target, config, time_us, date), oldest first; `target` filters."""
    dbh = open_db(db if db is not False else None)
    try:
        rows = dbh.designs()
    finally:
        if dbh is not db:
            dbh.close()
    return [r for r in rows if target is None or r.target == target]
