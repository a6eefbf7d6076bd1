"""Named knobs: a value with a default and its choices that a Studio or a tuner can set.

`knob("tile_m", 64, [16, 32, 64, 128])` returns the live value inside a `knob_values(...)`
context (the Studio re-runs a cell body in one with slider values) and the default elsewhere.
Every knob met in a context is recorded, so the caller learns the design's search space.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import KnobError

__all__ = ["Knob", "KnobContext", "knob", "knob_values"]


@dataclass(frozen=True, slots=True)
class Knob:
    name: str
    default: Any
    choices: tuple[Any, ...]


@dataclass
class KnobContext:
    values: dict[str, Any] = field(default_factory=dict)
    seen: dict[str, Knob] = field(default_factory=dict)


_CTX: contextvars.ContextVar[KnobContext | None] = contextvars.ContextVar("ks_knobs", default=None)


def knob(name: str, default: Any, choices: Sequence[Any]) -> Any:
    """The live value of knob `name` (see module doc)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise KnobError(f"knob name {name!r} must be an identifier such as 'tile_m'")
    if isinstance(choices, (str, bytes)) or not isinstance(choices, Sequence) or len(choices) == 0:
        raise KnobError(f"knob {name}: choices must be a non-empty list, got {choices!r}")
    ch = tuple(choices)
    if default not in ch:
        raise KnobError(f"knob {name}: default {default!r} is not among its choices {list(ch)}; "
                        "add it to the choices or pick one of them")
    ctx = _CTX.get()
    if ctx is None:
        return default
    prev = ctx.seen.get(name)
    if prev is not None and (prev.default, prev.choices) != (default, ch):
        raise KnobError(f"knob {name} is declared twice with different settings: "
                        f"default {prev.default!r} choices {list(prev.choices)} vs "
                        f"default {default!r} choices {list(ch)}; give one of them another name")
    ctx.seen[name] = Knob(name, default, ch)
    if name in ctx.values:
        value = ctx.values[name]
        if value not in ch:
            raise KnobError(f"knob {name}: value {value!r} is not among its choices {list(ch)}")
        return value
    return default


@contextlib.contextmanager
def knob_values(values: Mapping[str, Any] | None = None) -> Iterator[KnobContext]:
    """Run a design with these knob values; yields the context whose `.seen` lists every knob met."""
    ctx = KnobContext(dict(values or {}))
    token = _CTX.set(ctx)
    try:
        yield ctx
    finally:
        _CTX.reset(token)
