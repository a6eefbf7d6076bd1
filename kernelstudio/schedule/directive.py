"""One schedule decision as frozen data: what a Schedule records, saves as JSON and replays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Directive"]


@dataclass(frozen=True, slots=True)
class Directive:
    """One schedule decision for one kernel: kind, axis (name, int, tuple or None), value."""

    kind: str
    kernel: str
    axis: Any = None
    value: Any = None

    def to_json(self) -> dict[str, Any]:
        axis = list(self.axis) if isinstance(self.axis, tuple) else self.axis
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"kind": self.kind, "kernel": self.kernel, "axis": axis, "value": value}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Directive:
        axis = tuple(d["axis"]) if isinstance(d.get("axis"), list) else d.get("axis")
        value = tuple(d["value"]) if isinstance(d.get("value"), list) else d.get("value")
        return Directive(d["kind"], d["kernel"], axis, value)
