"""Checks shared by the public entry points: the object a call needs (the step before it was
skipped?), the input arrays of `evaluate` / `run_tiled` / `twin.run` (and the arrays of other
frameworks they take), and numbers that may arrive as NumPy scalars."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .dtypes import is_float
from .errors import InputError, StageError

__all__ = [
    "need",
    "check_inputs",
    "input_array",
    "as_int",
    "as_bool",
    "as_number",
    "fmt_shape",
]

# What each kind of object is, and the call that turns it into the next stage.
_NEXT = {
    "Tensor": ("a Tensor (a graph output)", "s = ks.create_schedule(out)"),
    "Schedule": ("a Schedule", "prog = ks.lower(s, target=...)"),
    "Program": ("a Program (TileIR)", "code = ks.codegen(prog)"),
    "CodeBundle": ("a CodeBundle (generated Ascend C)", ""),
    "Design": ("a Design from ks.build", ""),
}
_ORDER = ("Tensor", "Schedule", "Program", "CodeBundle")


def fmt_shape(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _kind(obj: Any) -> str:
    return type(obj).__name__


def _wrong_stage(call: str, want: str, obj: Any) -> StageError:
    """A StageError naming what `obj` is and the calls that lead from it to `want`."""
    kind = _kind(obj)
    want_text = _NEXT[want][0]
    if kind == "Design":
        attr = {"Schedule": "d.schedule", "Program": "d.program", "CodeBundle": "d.code"}.get(want, "")
        return StageError(f"{call} takes {want_text}, got a Design from ks.build; pass {attr}")
    if kind in _ORDER and _ORDER.index(kind) < _ORDER.index(want):
        steps = [_NEXT[k][1] for k in _ORDER[_ORDER.index(kind):_ORDER.index(want)]]
        return StageError(f"{call} takes {want_text}, got {_NEXT[kind][0]}; call {' then '.join(steps)} first")
    if kind in _ORDER:
        return StageError(f"{call} takes {want_text}, got {_NEXT[kind][0]}, a later stage; pass the "
                          f"{want} it was made from")
    return StageError(f"{call} takes {want_text}, got {kind} {_short(obj)}")


def _short(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 40 else text[:37] + "..."


def need(obj: Any, cls: type, call: str) -> Any:
    """`obj` if it is a `cls` (Schedule, Program, CodeBundle), else a StageError saying which call makes one.
    The caller passes the class: this stage sits below every stage that defines one."""
    if isinstance(obj, cls):
        return obj
    raise _wrong_stage(call, cls.__name__, obj)


# --- input arrays -----------------------------------------------------------------------------------


def check_inputs(what: str, expected: Sequence[tuple[str, tuple[int, ...], str]],
                 inputs: Any) -> dict[str, np.ndarray]:
    """The arrays of `inputs` (name -> array-like) for `expected` (name, shape, dtype), checked.

    Shared by evaluate, run_tiled and twin.run: a mapping, exactly the expected names, each value an
    array `input_array` can read, of real numbers, of the expected shape. Values are not rounded here:
    any real dtype is taken (a float32 array for a bfloat16 or float16 placeholder, float64 for float32,
    floats for an int placeholder) and each caller rounds it to the placeholder's dtype (nearest even;
    truncate and wrap for ints), as `round_to` does."""
    want = ", ".join(f"{n}{fmt_shape(s)} {d}" for n, s, d in expected) or "(none)"
    if not isinstance(inputs, Mapping):
        raise InputError(f"{what}: inputs must be a mapping name -> array, got {type(inputs).__name__}; "
                         f"expected {want}")
    names = [n for n, _, _ in expected]
    missing = [n for n in names if n not in inputs]
    unexpected = [k for k in inputs if k not in names]
    if missing or unexpected:
        parts = [f"missing {missing}"] if missing else []
        parts += [f"unexpected {unexpected}"] if unexpected else []
        raise InputError(f"{what} takes inputs {names}: {'; '.join(parts)}; expected inputs: {want}")
    out: dict[str, np.ndarray] = {}
    for name, shape, dtype in expected:
        arr = input_array(what, name, shape, dtype, inputs[name])
        if arr.shape != tuple(shape):
            raise InputError(f"{what}: input {name!r} has shape {fmt_shape(arr.shape)} but placeholder {name} is "
                             f"{fmt_shape(shape)} {dtype}; reshape the array or rebuild for this shape")
        out[name] = arr
    return out


_BUILTIN = (list, tuple, int, float, bool, complex, str, bytes, type(None), np.generic)


def input_array(what: str, name: str, shape: Sequence[int], dtype: str, value: Any) -> np.ndarray:
    """`value`, the input for placeholder `name` (`shape`, `dtype`), as a NumPy array of real numbers.

    NumPy arrays (of bfloat16 too), scalars and nested lists are read by NumPy; another framework's array
    (a torch CPU tensor, a JAX array) through its `__array__`, or when that is missing or fails through
    DLPack (`np.from_dlpack`), so its framework is never imported here. The shape is not checked."""
    want = f"{fmt_shape(shape)} {dtype}"
    arr = _read_array(what, name, want, value)
    if arr.dtype.kind == "c":
        raise InputError(f"{what}: input {name!r} has dtype {arr.dtype}; {dtype} takes real numbers, "
                         "complex values would lose their imaginary part; pass x.real if that is meant")
    if arr.dtype.kind not in "biuf" and not is_float(arr.dtype):
        got = "None" if value is None else str(arr.dtype)
        raise InputError(f"{what}: input {name!r} has dtype {got}; expected numbers for {dtype} "
                         f"{fmt_shape(shape)}; pass a NumPy array of numbers (real dtypes are rounded to {dtype})")
    return arr


def _read_array(what: str, name: str, want: str, value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    kind = type(value)
    label = f"{kind.__module__}.{kind.__qualname__}" if kind.__module__ != "builtins" else kind.__qualname__
    failed = ""
    if isinstance(value, _BUILTIN) or hasattr(value, "__array__") or hasattr(value, "__array_interface__"):
        try:
            return np.asarray(value)
        except (TypeError, ValueError, RuntimeError) as e:
            if isinstance(value, _BUILTIN) or not hasattr(value, "__dlpack__"):
                first = str(e).split(".")[0]
                if isinstance(value, _BUILTIN):
                    raise InputError(f"{what}: input {name!r} is not a rectangular array of numbers ({first}); "
                                     f"pass a NumPy array of shape {want}") from None
                raise _unreadable(what, name, want, label, f"its __array__ failed: {first}") from None
            failed = f"its __array__ failed ({str(e).split('.')[0]}), "
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, ValueError, RuntimeError, BufferError, AttributeError) as e:
            raise _unreadable(what, name, want, label, f"{failed}DLPack failed: {str(e).split('.')[0]}") from None
    arr = np.asarray(value)
    if arr.dtype == object:
        raise _unreadable(what, name, want, label, "it has neither __array__ nor __dlpack__")
    return arr


def _unreadable(what: str, name: str, want: str, label: str, why: str) -> InputError:
    return InputError(f"{what}: input {name!r} has type {label}, which NumPy cannot read ({why}); placeholder "
                      f"{name} is {want}: pass a NumPy array (from a device tensor: move it to host memory first; "
                      "a bfloat16 tensor NumPy cannot take through DLPack: upcast it to float32, which is exact)")


# --- numbers that may be NumPy scalars ---------------------------------------------------------------


def as_int(value: Any) -> int | None:
    """`value` as a Python int if it is an integer (Python or NumPy, not bool), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    return None


def as_bool(value: Any) -> bool | None:
    """`value` as a Python bool if it is a bool (Python or NumPy), else None."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return None


def as_number(value: Any, what: str, *, positive: bool = False, error: type[Exception] = InputError) -> float:
    """`value` as a finite float (Python or NumPy number, not bool); positive when asked."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise error(f"{what} must be a number, got {type(value).__name__} {_short(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise error(f"{what} must be finite, got {v}")
    if positive and v <= 0:
        raise error(f"{what} must be > 0, got {value!r}")
    return v
