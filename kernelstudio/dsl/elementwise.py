"""Elementwise DSL ops: binary arithmetic with NumPy broadcasting, unary math, cast (with an optional
dequantizing scale) and where."""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..core.errors import DTypeError, ShapeError
from ..ir.ops import FLOAT_DTYPES, Op
from . import shapes as S
from .build import (
    _FLOAT_MAX,
    Operand,
    _check_dtype,
    _d,
    _describe,
    _node,
    _operands,
    _scalar_or_tensor,
    _tensor,
    check_name,
    composite_scope,
    const,
)
from .tensor import Tensor


def _binary(op: Op, a: object, b: object, name: str | None) -> Tensor:
    nm = check_name(op.value, name)
    (ta, tb), dtype = _operands(op.value, (("a", a), ("b", b)))
    if op is Op.DIV and dtype not in FLOAT_DTYPES:
        raise DTypeError(
            f"div: {_describe(*(v for v in (a, b) if isinstance(v, Tensor)))} are integers; "
            "div needs a float dtype: cast(x, 'float32') first"
        )
    shape = S.broadcast_shapes(op.value, [(_d(t), t.shape) for t in (ta, tb)])
    return _node(op, (ta, tb), shape, dtype, name=nm)


def add(a: Operand, b: Operand, name: str | None = None) -> Tensor:
    """a + b with NumPy broadcasting."""
    return _binary(Op.ADD, a, b, name)


def sub(a: Operand, b: Operand, name: str | None = None) -> Tensor:
    """a - b with NumPy broadcasting."""
    return _binary(Op.SUB, a, b, name)


def mul(a: Operand, b: Operand, name: str | None = None) -> Tensor:
    """a * b with NumPy broadcasting."""
    return _binary(Op.MUL, a, b, name)


def div(a: Operand, b: Operand, name: str | None = None) -> Tensor:
    """a / b with NumPy broadcasting (float dtypes only)."""
    return _binary(Op.DIV, a, b, name)


def maximum(a: Operand, b: Operand, name: str | None = None) -> Tensor:
    """Elementwise max(a, b)."""
    return _binary(Op.MAXIMUM, a, b, name)


def minimum(a: Operand, b: Operand, name: str | None = None) -> Tensor:
    """Elementwise min(a, b)."""
    return _binary(Op.MINIMUM, a, b, name)


def _unary(op: Op, x: object, name: str | None, float_only: bool, attrs: dict | None = None) -> Tensor:
    nm = check_name(op.value, name)
    t = _tensor(op.value, "x", x)
    if float_only:
        S.require_float(op.value, _d(t), t.dtype)
    return _node(op, (t,), t.shape, t.dtype, attrs, nm)


def neg(x: Tensor, name: str | None = None) -> Tensor:
    """-x."""
    return _unary(Op.NEG, x, name, False)


def abs(x: Tensor, name: str | None = None) -> Tensor:  # noqa: A001 - the DSL name users expect
    """|x|."""
    return _unary(Op.ABS, x, name, False)


def exp(x: Tensor, name: str | None = None) -> Tensor:
    """e**x (float)."""
    return _unary(Op.EXP, x, name, True)


def log(x: Tensor, name: str | None = None) -> Tensor:
    """Natural log (float)."""
    return _unary(Op.LOG, x, name, True)


def sqrt(x: Tensor, name: str | None = None) -> Tensor:
    """Square root (float)."""
    return _unary(Op.SQRT, x, name, True)


def rsqrt(x: Tensor, name: str | None = None) -> Tensor:
    """1 / sqrt(x) (float)."""
    return _unary(Op.RSQRT, x, name, True)


def reciprocal(x: Tensor, name: str | None = None) -> Tensor:
    """1 / x (float)."""
    return _unary(Op.RECIPROCAL, x, name, True)


def square(x: Tensor, name: str | None = None) -> Tensor:
    """x * x."""
    return _unary(Op.SQUARE, x, name, False)


def erf(x: Tensor, name: str | None = None) -> Tensor:
    """The error function (float)."""
    return _unary(Op.ERF, x, name, True)


def tanh(x: Tensor, name: str | None = None) -> Tensor:
    """Hyperbolic tangent (float)."""
    return _unary(Op.TANH, x, name, True)


def sigmoid(x: Tensor, name: str | None = None) -> Tensor:
    """1 / (1 + exp(-x)) (float)."""
    return _unary(Op.SIGMOID, x, name, True)


def relu(x: Tensor, name: str | None = None) -> Tensor:
    """max(x, 0)."""
    return _unary(Op.RELU, x, name, False)


def leaky_relu(x: Tensor, alpha: float = 0.01, name: str | None = None) -> Tensor:
    """x if x >= 0 else alpha * x (float)."""
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise DTypeError(f"leaky_relu: alpha must be a real number (e.g. 0.01), got {alpha!r}")
    return _unary(Op.LEAKY_RELU, x, name, True, {"alpha": float(alpha)})


def cast(x: Tensor, dtype: str, name: str | None = None, *, scale: float | Tensor | None = None,
         rounding: str | None = None) -> Tensor:
    """x converted to `dtype` (floats round to nearest even; float -> int truncates toward zero).

    ``rounding="rint"`` (float -> int8 / int32 only) rounds to nearest even and saturates to the integer
    range instead: the quantizing cast (Ascend C's Cast with CAST_RINT), e.g. a per-token dynamic
    quantization ``cast(x / s, "int8", rounding="rint")`` with ``s = reduce_max(abs(x), -1) / 127``.

    Casting to the tensor's own dtype returns `x` unchanged when no name is given.

    ``scale=s`` dequantizes: the result is ``dtype(float32(x) * float32(s))`` for a float `dtype`,
    e.g. ``cast(matmul(a_int8, b_int8), "float16", scale=0.02)``. `s` is a Python number (one
    cast node; the kernels run Cast to float32, Muls, Cast) or a float tensor that broadcasts to
    x's shape, e.g. a per-channel ``[N]`` vector (cast to float32, a multiply, cast to `dtype`).
    """
    nm = check_name("cast", name)
    t = _tensor("cast", "x", x)
    dt = _check_dtype(dtype, lambda: f"cast of {t.describe()}: target dtype")
    if rounding is not None:
        return _rounding_cast(t, dt, rounding, scale, nm)
    if scale is None:
        if dt == t.dtype and not nm:
            return t
        return _node(Op.CAST, (t,), t.shape, dt, name=nm)
    if dt not in FLOAT_DTYPES:
        raise DTypeError(
            f"cast of {t.describe()} to {dt} with scale: a scaled cast produces a float; cast to "
            f"'float32' with the scale, then cast(y, '{dt}')"
        )
    if isinstance(scale, Tensor):
        return _cast_by_tensor(t, dt, scale, nm)
    s = _scalar_or_tensor("cast", "scale", scale)
    try:
        s64 = float(s)
    except OverflowError:  # an int beyond any float
        s64 = math.inf
    if not (math.isfinite(s64) and builtins.abs(s64) <= _FLOAT_MAX["float32"]):
        raise DTypeError(
            f"cast of {t.describe()}: scale {scale!r} is not a finite float32 number "
            f"(|scale| <= {_FLOAT_MAX['float32']:g}); pass a finite scale"
        )
    return _node(Op.CAST, (t,), t.shape, dt, {"scale": float(np.float32(s64))}, nm)


ROUNDINGS = ("rint",)


def _rounding_cast(t: Tensor, dt: str, rounding: object, scale: object, nm: str) -> Tensor:
    if rounding not in ROUNDINGS:
        raise DTypeError(f"cast of {t.describe()}: rounding={rounding!r}; the one rounding a cast takes is 'rint' "
                         "(nearest even, saturating), or leave it out (truncation toward zero)")
    if dt not in ("int8", "int32") or t.dtype not in FLOAT_DTYPES:
        raise DTypeError(f"cast of {t.describe()} to {dt} with rounding='rint': a rounding cast takes a float "
                         "tensor to int8 or int32; other casts round as they are")
    if scale is not None:
        raise DTypeError(f"cast of {t.describe()} to {dt}: scale= dequantizes to a float; to quantize, divide "
                         "(or multiply) by the scale first, then cast(y, 'int8', rounding='rint')")
    return _node(Op.CAST, (t,), t.shape, dt, {"rounding": "rint"}, nm)


def _cast_by_tensor(t: Tensor, dt: str, scale: Tensor, nm: str) -> Tensor:
    if scale.dtype not in FLOAT_DTYPES:
        raise DTypeError(
            f"cast of {t.describe()}: scale {scale.describe()} must be a float tensor; "
            "use cast(scale, 'float32') first"
        )
    shape = S.broadcast_shapes("cast", [(_d(t), t.shape), (_d(scale), scale.shape)])
    if shape != t.shape:
        raise ShapeError(
            f"cast of {t.describe()}: scale {scale.describe()} broadcasts the result to "
            f"{S.fmt_shape(shape)}; the scale must broadcast to x's shape {S.fmt_shape(t.shape)}, "
            "e.g. a vector of x's last dimension"
        )
    with composite_scope("dequant"):
        x32 = t if t.dtype == "float32" else _node(Op.CAST, (t,), t.shape, "float32")
        s32 = scale if scale.dtype == "float32" else _node(Op.CAST, (scale,), scale.shape, "float32")
        y = _node(Op.MUL, (x32, s32), shape, "float32", name="" if dt != "float32" else nm)
        return y if dt == "float32" else _node(Op.CAST, (y,), shape, dt, name=nm)


def where(cond: Tensor, a: Operand, b: Operand, name: str | None = None) -> Tensor:
    """cond != 0 ? a : b, with NumPy broadcasting of all three.

    a and b meet in their promoted dtype; if both are Python scalars the result takes cond's dtype
    (float32 when cond is an integer tensor and a scalar is a float).
    """
    nm = check_name("where", name)
    c = _tensor("where", "cond", cond)
    va, vb = _scalar_or_tensor("where", "a", a), _scalar_or_tensor("where", "b", b)
    if not isinstance(va, Tensor) and not isinstance(vb, Tensor):
        dtype = c.dtype
        if dtype not in FLOAT_DTYPES and (isinstance(va, float) or isinstance(vb, float)):
            dtype = "float32"
        ta, tb = const(va, dtype, "where: a"), const(vb, dtype, "where: b")
    else:
        (ta, tb), dtype = _operands("where", (("a", va), ("b", vb)))
    shape = S.broadcast_shapes("where", [(_d(t), t.shape) for t in (c, ta, tb)])
    return _node(Op.WHERE, (c, ta, tb), shape, dtype, name=nm)

