"""Named knobs: a value with a default and its choices that a Studio or a tuner can set.

`knob("tile_m", 64, [16, 32, 64, 128])` returns the live value inside a `knob_values(...)`
context (the Studio re-runs a cell body in one with slider values) and the default elsewhere.
Every knob met in a context is recorded, so the caller learns the design's search space.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import KnobError

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
    bad = next((c for c in (default, *ch) if not _plain(c)), _NONE)
    if bad is not _NONE:
        what = "default" if bad is default else "choice"
        hint = f" (write the list {bad!r} as a tuple)" if isinstance(bad, list) else ""
        raise KnobError(f"knob {name}: {what} {_short(bad)} is not a plain value; a knob's default and choices are "
                        f"numbers, strings, bools or tuples of them (sliders and the tuner compare and store them)"
                        f"{hint}")
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
        match = _choice(value, ch)
        if match is _NONE:
            raise KnobError(f"knob {name}: value {value!r} is not among its choices {list(ch)}")
        return match
    return default


_NONE = object()


def _plain(v: Any) -> bool:
    """A value a knob may take: hashable, comparable and printable (numbers, strings, bools, tuples of them)."""
    if v is None or isinstance(v, (bool, int, float, str, np.bool_, np.integer, np.floating)):
        return True
    return isinstance(v, tuple) and all(_plain(x) for x in v)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    return type(v).__name__


def _choice(value: Any, choices: tuple[Any, ...]) -> Any:
    """The choice equal to `value` and of the same kind (16.0 is not the int choice 16, True is not 1);
    NumPy scalars match their Python counterparts. `_NONE` when there is none."""
    for c in choices:
        if _kind(c) == _kind(value):
            try:
                if bool(c == value):
                    return c
            except (TypeError, ValueError):
                continue
    return _NONE


@contextlib.contextmanager
def knob_values(values: Mapping[str, Any] | None = None, *, strict: bool = True) -> Iterator[KnobContext]:
    """Run a design with these knob values; yields the context whose `.seen` lists every knob met.

    With `strict` (the default) a value for a knob the design never declared (a misspelt name) is a
    KnobError when the block ends without another error."""
    if values is not None and not isinstance(values, Mapping):
        raise KnobError(f"knob_values takes a mapping knob name -> value, got {type(values).__name__}")
    ctx = KnobContext(dict(values or {}))
    token = _CTX.set(ctx)
    try:
        yield ctx
    finally:
        _CTX.reset(token)
    unused = [k for k in ctx.values if k not in ctx.seen]
    if strict and unused:
        hints = []
        for k in unused:
            close = difflib.get_close_matches(str(k), list(ctx.seen), n=1)
            hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        known = ", ".join(ctx.seen) or "none"
        raise KnobError(f"knob_values: no knob named {', '.join(hints)} was met in the design; knobs met: "
                        f"{known}; fix the name or pass strict=False to allow values for knobs a design may skip")
