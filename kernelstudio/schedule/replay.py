"""Reading saved schedules (`Schedule.to_json` text) back: every malformed entry is a ScheduleError
that says which entry and what is wrong, before any directive is applied."""

from __future__ import annotations

import json
from typing import Any

from ..core.errors import ScheduleError
from .directive import Directive

__all__ = ["parse_directives"]

_KEYS = ("kind", "kernel", "axis", "value")


def _axis(v: Any, where: str) -> Any:
    if isinstance(v, list):
        if not all(isinstance(a, (str, int)) and not isinstance(a, bool) for a in v):
            raise ScheduleError(f"{where}: axis {v!r} must list axis names or ints")
        return tuple(v)
    if v is None or (isinstance(v, (str, int)) and not isinstance(v, bool)):
        return v
    raise ScheduleError(f"{where}: axis {v!r} must be a name, an int, a list of them or null")


def parse_directives(text: Any) -> list:
    """The Directives saved in `text` (a JSON list of {kind, kernel, axis, value} objects)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise ScheduleError(f"replay takes the JSON text from Schedule.to_json(), got {type(text).__name__}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScheduleError(f"replay: the saved schedule is not valid JSON ({e.msg} at line {e.lineno} "
                            f"column {e.colno}); pass the text Schedule.to_json() wrote") from None
    if not isinstance(doc, list):
        raise ScheduleError(f"replay: the saved schedule must be a JSON list of directives, got a "
                            f"{type(doc).__name__}")
    out = []
    for i, d in enumerate(doc):
        where = f"replay: directive {i}"
        if not isinstance(d, dict):
            raise ScheduleError(f"{where} must be an object with keys {', '.join(_KEYS)}, got {d!r}")
        missing = [k for k in ("kind", "kernel") if k not in d]
        extra = sorted(k for k in d if k not in _KEYS)
        if missing or extra:
            raise ScheduleError(f"{where}: missing keys {missing}, unknown keys {extra}; expected {', '.join(_KEYS)}")
        if not isinstance(d["kind"], str) or not isinstance(d["kernel"], str):
            raise ScheduleError(f"{where}: kind and kernel must be strings, got {d['kind']!r}, {d['kernel']!r}")
        value = d.get("value")
        if isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            value = tuple(value)  # a pair such as l1_k_steps(a, b), saved as a JSON list
        elif isinstance(value, (dict, list)):
            raise ScheduleError(f"{where}: value {value!r} must be a number, a list of numbers, a bool or null")
        out.append(Directive(d["kind"], d["kernel"], _axis(d.get("axis"), where), value))
    return out
