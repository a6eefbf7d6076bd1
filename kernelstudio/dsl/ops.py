"""DSL op constructors: each checks its arguments, infers shape and dtype, and adds one graph node.

Operands may be Tensors or (where sensible) Python ints/floats, which become ``const`` nodes of
the other operand's dtype. Tensors of different dtypes meet in the promoted dtype (see
`shapes.promote`) through explicit ``cast`` nodes, so every elementwise node computes on inputs
of its own dtype. Every op takes an optional ``name=`` (an identifier); unnamed nodes get
readable names from the graph ("matmul", "add_1", ...).
"""

from __future__ import annotations

import builtins
import itertools
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import reduce as _fold

import numpy as np

from ..core import names as _names
from ..core.dtypes import check_dtype
from ..core.errors import DTypeError, ShapeError
from ..ir.node import Composite, Node
from ..ir.ops import DTYPES, FLOAT_DTYPES, Op
from . import shapes as S
from .per_head import PER_HEAD_AXIS, per_head_shape
from .tensor import Tensor, bind_ops

__all__ = [
    "placeholder", "add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "exp", "log",
    "sqrt", "rsqrt", "reciprocal", "square", "erf", "tanh", "sigmoid", "relu", "leaky_relu", "cast",
    "where", "reduce_sum", "reduce_mean", "reduce_max", "matmul", "conv2d", "reshape", "transpose",
    "broadcast_to", "split", "concat", "topk", "gather", "composite_scope",
]

Scalar = int | float
Operand = Tensor | int | float

_COMPOSITE: ContextVar[Composite | None] = ContextVar("kernelstudio_composite", default=None)
_placeholder_uids = itertools.count()
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
_INT_RANGE = {"int8": (-128, 127), "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


@contextmanager
def composite_scope(name: str) -> Iterator[Composite]:
    """Tag every node built inside the block with one `Composite` (the outermost scope wins)."""
    current = _COMPOSITE.get()
    if current is not None:
        yield current
        return
    comp = Composite.new(name)
    token = _COMPOSITE.set(comp)
    try:
        yield comp
    finally:
        _COMPOSITE.reset(token)


# --- argument checking ---------------------------------------------------------------------------


def check_name(op: str, name: object) -> str:
    """A node name: None -> "" (the graph names it), else a C identifier (`kernelstudio.core.names`)."""
    if name is None:
        return ""
    return _names.check_name(op, name)


def _scalar_or_tensor(op: str, what: str, v: object) -> Operand:
    if isinstance(v, Tensor):
        return v
    if isinstance(v, (bool, np.bool_)):
        raise DTypeError(f"{op}: {what} is the bool {v!r}; bool scalars are not supported, use 1 or 0")
    if isinstance(v, (complex, np.complexfloating)):
        raise DTypeError(f"{op}: {what} is the complex number {v!r}; complex values are not supported")
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    raise DTypeError(
        f"{op}: {what} is a {type(v).__module__}.{type(v).__qualname__}; pass a Tensor "
        "(from placeholder or another op) or a Python int/float"
    )


def _tensor(op: str, what: str, v: object) -> Tensor:
    t = _scalar_or_tensor(op, what, v)
    if not isinstance(t, Tensor):
        raise DTypeError(
            f"{op}: {what} is the scalar {t!r}; {op} needs a Tensor here (from placeholder or another op)"
        )
    return t


def _flag(op: str, what: str, v: object) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise DTypeError(f"{op}: {what} must be True or False, got {v!r}")
    return bool(v)


_INT64_READERS = (Op.SCATTER, Op.GROUPED_MATMUL)  # ops that read an int64 index input as it is


def _node(op: Op, inputs: Sequence[Tensor], shape: Sequence[int], dtype: str,
          attrs: dict[str, object] | None = None, name: str = "") -> Tensor:
    if dtype == "int64" and op is not Op.PLACEHOLDER or op not in _INT64_READERS and any(
            t.dtype == "int64" for t in inputs):
        who = next((t for t in inputs if t.dtype == "int64"), None)
        raise DTypeError(f"{op.value}: {who.describe() if who is not None else 'its result'} is int64; int64 "
                         "tensors are index inputs (a placeholder read by ks.scatter or ks.grouped_matmul) and "
                         "nothing computes on them; give this op an int32 placeholder instead")
    return Tensor(Node(op, tuple(t.node for t in inputs), tuple(shape), dtype,
                       tuple(sorted((attrs or {}).items())), name, _COMPOSITE.get()))


def const(value: Scalar, dtype: str, op: str = "const") -> Tensor:
    """A scalar constant node (shape ()) of `dtype`; the value must fit the dtype."""
    if dtype in FLOAT_DTYPES:
        v: Scalar = float(value)
        if math.isfinite(v) and builtins.abs(v) > _FLOAT_MAX[dtype]:
            raise DTypeError(
                f"{op}: scalar {value!r} overflows {dtype} (max {_FLOAT_MAX[dtype]:g}); "
                "cast the tensor to float32 first"
            )
    else:
        if isinstance(value, float):
            raise DTypeError(f"{op}: float scalar {value!r} cannot be a {dtype} constant; use an int")
        v = int(value)
        lo, hi = _INT_RANGE[dtype]
        if not lo <= v <= hi:
            raise DTypeError(f"{op}: scalar {v} does not fit {dtype} ({lo}..{hi}); cast the tensor to int32")
    return _node(Op.CONST, (), (), dtype, {"value": v})


def _operands(op: str, args: Sequence[tuple[str, object]]) -> tuple[list[Tensor], str]:
    """Tensors for `args` in their promoted dtype (scalars -> consts, other dtypes -> casts)."""
    vals = [_scalar_or_tensor(op, what, v) for what, v in args]
    tensors = [v for v in vals if isinstance(v, Tensor)]
    if not tensors:
        raise DTypeError(
            f"{op}: needs at least one Tensor operand, got only Python scalars "
            f"{tuple(vals)!r}; compute constants in Python"
        )
    dtype = _fold(S.promote, (t.dtype for t in tensors))
    out = []
    for (what, _), v in zip(args, vals, strict=True):
        if isinstance(v, Tensor):
            out.append(v if v.dtype == dtype else _node(Op.CAST, (v,), v.shape, dtype))
        elif isinstance(v, float) and dtype not in FLOAT_DTYPES:
            names = ", ".join(t.describe() for t in tensors)
            raise DTypeError(
                f"{op}: float scalar {v!r} ({what}) cannot combine with integer tensor {names}; "
                f"cast the tensor to a float dtype first, e.g. cast(x, 'float32')"
            )
        else:
            try:
                out.append(const(v, dtype, f"{op}: {what}"))
            except DTypeError as e:
                raise DTypeError(f"{e} (the other operand: {_describe(*tensors)})") from None
    return out, dtype


def _check_dtype(dtype: object, what: Callable[[], str]) -> str:
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    return check_dtype(dtype, what())


def _describe(*ts: Tensor) -> str:
    return " and ".join(t.describe() for t in ts)


def _d(t: Tensor) -> S.Label:
    return S.Label(t.describe)


def _n(t: Tensor) -> S.Label:
    return S.Label(lambda: t.name)


# --- leaves ----------------------------------------------------------------------------------------


def placeholder(shape: int | Sequence[int], dtype: str, name: str | None = None) -> Tensor:
    """A graph input of `shape` and `dtype` (float16, bfloat16, float32, int8, int32).

    Inputs are passed to `evaluate` by name. Unnamed placeholders stay distinct (each carries a
    unique ``uid`` attr) and the graph names them "input", "input_1", ... in topological order;
    give each placeholder a unique name to address it stably.
    """
    nm = check_name("placeholder", name)
    label = f"placeholder {nm!r}" if nm else "placeholder"
    shp = S.check_shape(label, shape)
    dt = check_dtype(dtype, f"{label}: dtype")
    attrs = {} if nm else {"uid": next(_placeholder_uids)}
    return _node(Op.PLACEHOLDER, (), shp, dt, attrs, nm)


# --- elementwise -------------------------------------------------------------------------------


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


def cast(x: Tensor, dtype: str, name: str | None = None, *, scale: float | Tensor | None = None) -> Tensor:
    """x converted to `dtype` (floats round to nearest even; float -> int truncates toward zero).

    Casting to the tensor's own dtype returns `x` unchanged when no name is given.

    ``scale=s`` dequantizes: the result is ``dtype(float32(x) * float32(s))`` for a float `dtype`,
    e.g. ``cast(matmul(a_int8, b_int8), "float16", scale=0.02)``. `s` is a Python number (one
    cast node; the kernels run Cast to float32, Muls, Cast) or a float tensor that broadcasts to
    x's shape, e.g. a per-channel ``[N]`` vector (cast to float32, a multiply, cast to `dtype`).
    """
    nm = check_name("cast", name)
    t = _tensor("cast", "x", x)
    dt = _check_dtype(dtype, lambda: f"cast of {t.describe()}: target dtype")
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


# --- reductions ------------------------------------------------------------------------------------


def _reduce(op: Op, x: object, axis: object, keepdims: object, name: str | None) -> Tensor:
    nm = check_name(op.value, name)
    t = _tensor(op.value, "x", x)
    kd = _flag(op.value, "keepdims", keepdims)
    if op is Op.REDUCE_MEAN:
        S.require_float(op.value, _d(t), t.dtype)
    axes = S.normalize_axes(op.value, axis, t.ndim, _d(t))
    return _node(op, (t,), S.reduce_shape(t.shape, axes, kd), t.dtype, {"axes": axes, "keepdims": kd}, nm)


def reduce_sum(x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Sum over `axis` (None: all axes)."""
    return _reduce(Op.REDUCE_SUM, x, axis, keepdims, name)


def reduce_mean(x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False,
                name: str | None = None) -> Tensor:
    """Mean over `axis` (None: all axes; float only)."""
    return _reduce(Op.REDUCE_MEAN, x, axis, keepdims, name)


def reduce_max(x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Max over `axis` (None: all axes)."""
    return _reduce(Op.REDUCE_MAX, x, axis, keepdims, name)


# --- cube ------------------------------------------------------------------------------------------


def matmul(a: Tensor, b: Tensor, transpose_a: bool = False, transpose_b: bool = False,
           name: str | None = None, *, out_dtype: str | None = None, batch_axis: int | None = None) -> Tensor:
    """a @ b over the last two dims (optionally transposed); leading dims broadcast as batch.

    ``batch_axis=1``: a per-head matmul, a [rows, heads, K] @ b [heads, K, N] -> [rows, heads, N] (each
    head's columns of a's rows times its own weight), read and written in place with no transpose.

    Operands meet in their promoted dtype: float16, bfloat16 or float32 (accumulated in float32, as
    the cube's L0C does) or int8 (accumulated exactly in int32). The result dtype is `out_dtype`:
    by default the input dtype for floats and int32 for int8. Floats may leave as any float dtype;
    int8 products leave as int32 only: dequantize with ``cast(y, "float16", scale=s)`` after.
    """
    nm = check_name("matmul", name)
    ta, tb = _tensor("matmul", "a", a), _tensor("matmul", "b", b)
    flags = {"transpose_a": _flag("matmul", "transpose_a", transpose_a),
             "transpose_b": _flag("matmul", "transpose_b", transpose_b)}
    if batch_axis is None:
        shape = S.matmul_shape((_n(ta), ta.shape), (_n(tb), tb.shape), flags["transpose_a"],
                               flags["transpose_b"])
    else:
        shape = per_head_shape((_n(ta), ta.shape), (_n(tb), tb.shape), batch_axis,
                               flags["transpose_a"] or flags["transpose_b"])
        flags["batch_axis"] = PER_HEAD_AXIS
    (ca, cb), dtype = _operands("matmul", (("a", ta), ("b", tb)))
    out = S.cube_out_dtype("matmul", S.Label(lambda: _describe(ta, tb)), dtype, out_dtype)
    return _node(Op.MATMUL, (ca, cb), shape, out, flags, nm)


def conv2d(x: Tensor, w: Tensor, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, name: str | None = None, *,
           out_dtype: str | None = None) -> Tensor:
    """2-D convolution of NCHW `x` with OIHW `w` (cross-correlation, no groups, no dilation).

    stride: int or (sh, sw); padding: int, (ph, pw), (pt, pb, pl, pr), "SAME" (TensorFlow
    semantics: output = ceil(in / stride)) or "VALID". Dtypes follow `matmul`: float inputs
    accumulate in float32, int8 inputs in int32 (the default `out_dtype` for int8).
    """
    nm = check_name("conv2d", name)
    tx, tw = _tensor("conv2d", "x", x), _tensor("conv2d", "w", w)
    shape, st, pad = S.conv2d_geometry((_n(tx), tx.shape), (_n(tw), tw.shape), stride, padding)
    (cx, cw), dtype = _operands("conv2d", (("x", tx), ("w", tw)))
    out = S.cube_out_dtype("conv2d", S.Label(lambda: _describe(tx, tw)), dtype, out_dtype)
    return _node(Op.CONV2D, (cx, cw), shape, out, {"stride": st, "padding": pad}, nm)


# --- layout ----------------------------------------------------------------------------------------


def reshape(x: Tensor, shape: int | Sequence[int], name: str | None = None) -> Tensor:
    """x with a new shape of the same size (one dim may be -1)."""
    nm = check_name("reshape", name)
    t = _tensor("reshape", "x", x)
    tgt = S.reshape_shape(_d(t), t.shape, shape)
    return _node(Op.RESHAPE, (t,), tgt, t.dtype, name=nm)


def transpose(x: Tensor, perm: Sequence[int] | None = None, name: str | None = None) -> Tensor:
    """x with dims permuted (None reverses them)."""
    nm = check_name("transpose", name)
    t = _tensor("transpose", "x", x)
    p = S.check_perm(_d(t), t.ndim, perm)
    return _node(Op.TRANSPOSE, (t,), tuple(t.shape[i] for i in p), t.dtype, {"perm": p}, nm)


def broadcast_to(x: Tensor, shape: int | Sequence[int], name: str | None = None) -> Tensor:
    """x broadcast (NumPy rules) to `shape`."""
    nm = check_name("broadcast_to", name)
    t = _tensor("broadcast_to", "x", x)
    tgt = S.check_broadcast_to(_d(t), t.shape, shape)
    return _node(Op.BROADCAST_TO, (t,), tgt, t.dtype, name=nm)


def split(x: Tensor, sizes: int | Sequence[int], axis: int = -1, name: str | None = None) -> tuple[Tensor, ...]:
    """x cut along `axis` into consecutive parts: `sizes` lists their lengths (summing to x.shape[axis]),
    or an int n cuts it into n equal parts (as ``np.split(x, n)``). With ``name="q"`` the parts are named
    "q_0", "q_1", ..."""
    nm = check_name("split", name)
    t = _tensor("split", "x", x)
    ax = S.normalize_axis("split", axis, t.ndim, _d(t))
    dim = t.shape[ax]
    n = S._as_int(sizes) if not isinstance(sizes, (list, tuple)) else None
    if n is not None:
        if n < 1 or dim % n:
            raise ShapeError(
                f"split: {t.describe()} has {dim} along axis {ax}, which does not cut into {n} equal parts; "
                f"pass the part sizes as a list (e.g. [{dim // max(n, 1) * (max(n, 1) - 1)}, "
                f"{dim - dim // max(n, 1) * (max(n, 1) - 1)}]) or a number of parts dividing {dim}")
        parts = [dim // n] * n
    else:
        if not isinstance(sizes, (list, tuple)) or not sizes:
            raise ShapeError(f"split: sizes must be a non-empty list of ints or an int number of parts, got "
                             f"{sizes!r} (for {t.describe()})")
        ints = [S._as_int(v) for v in sizes]
        if any(v is None or v < 1 for v in ints):
            raise ShapeError(f"split: sizes {list(sizes)!r} must be positive ints (for {t.describe()})")
        parts = [int(v) for v in ints]  # type: ignore[arg-type]
        if sum(parts) != dim:
            raise ShapeError(
                f"split: sizes {parts} sum to {sum(parts)} but {t.describe()} has {dim} along axis {ax}; "
                f"make them sum to {dim} (e.g. [{', '.join(map(str, parts[:-1] + [parts[-1] + dim - sum(parts)]))}]"
                f"{'' if parts[-1] + dim - sum(parts) > 0 else ' with positive sizes'})")
    out, start = [], 0
    for i, size in enumerate(parts):
        shape = tuple(size if j == ax else d for j, d in enumerate(t.shape))
        out.append(_node(Op.SLICE, (t,), shape, t.dtype, {"axis": ax, "start": start}, f"{nm}_{i}" if nm else ""))
        start += size
    return tuple(out)


def concat(tensors: Sequence[Tensor], axis: int = -1, name: str | None = None) -> Tensor:
    """The tensors joined along `axis` (as ``np.concatenate``): the same dtype, rank and dims elsewhere."""
    nm = check_name("concat", name)
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or not tensors:
        raise ShapeError(f"concat: tensors must be a non-empty list of Tensors, got {tensors!r}; "
                         "e.g. concat([x, y], axis=-1)")
    ts = [_tensor("concat", f"tensors[{i}]", v) for i, v in enumerate(tensors)]
    first = ts[0]
    ax = S.normalize_axis("concat", axis, first.ndim, _d(first))
    for i, t in enumerate(ts[1:], 1):
        if t.dtype != first.dtype:
            raise DTypeError(f"concat: tensors[{i}] {t.describe()} is {t.dtype} but tensors[0] {first.describe()} "
                             f"is {first.dtype}; cast them to one dtype first (cast(x, '{first.dtype}'))")
        same = t.ndim == first.ndim and all(a == b for j, (a, b) in enumerate(zip(t.shape, first.shape, strict=True))
                                            if j != ax)
        if not same:
            raise ShapeError(
                f"concat: tensors[{i}] {t.describe()} does not match tensors[0] {first.describe()} outside axis "
                f"{ax}; every dim but the joined one must be equal (reshape or broadcast_to them first)")
    if len(ts) == 1:
        return first
    shape = tuple(sum(t.shape[ax] for t in ts) if j == ax else d for j, d in enumerate(first.shape))
    return _node(Op.CONCAT, tuple(ts), shape, first.dtype, {"axis": ax}, nm)


# --- index / MoE -------------------------------------------------------------------------------------


def topk(x: Tensor, k: int, axis: int = -1, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The k largest values along `axis`, descending, and their int32 indices.

    Ties go to the lower index first. With ``name="t"`` the indices are named "t_indices".
    """
    nm = check_name("topk", name)
    t = _tensor("topk", "x", x)
    ax = S.normalize_axis("topk", axis, t.ndim, _d(t))
    kk = S._as_int(k)
    if kk is None or not 1 <= kk <= t.shape[ax]:
        raise ShapeError(
            f"topk: k={k!r} is invalid for {t.describe()} along axis {ax} of size {t.shape[ax]}; "
            f"k must be an int in 1..{t.shape[ax]}"
        )
    shape = tuple(kk if i == ax else d for i, d in enumerate(t.shape))
    values = _node(Op.TOPK, (t,), shape, t.dtype, {"k": kk, "axis": ax, "which": "values"}, nm)
    indices = _node(Op.TOPK, (t,), shape, "int32", {"k": kk, "axis": ax, "which": "indices"},
                    f"{nm}_indices" if nm else "")
    return values, indices


def gather(x: Tensor, indices: Tensor, axis: int = 0, name: str | None = None) -> Tensor:
    """np.take(x, indices, axis): shape x.shape[:axis] + indices.shape + x.shape[axis+1:].

    Indices must be int32 or int8 and lie in [0, x.shape[axis]) (checked when evaluated).
    """
    nm = check_name("gather", name)
    t = _tensor("gather", "x", x)
    idx = _tensor("gather", "indices", indices)
    if idx.dtype not in ("int32", "int8"):
        raise DTypeError(
            f"gather: indices {idx.describe()} must be int32 or int8; use cast(indices, 'int32')"
        )
    ax = S.normalize_axis("gather", axis, t.ndim, _d(t))
    shape = S.gather_shape(t.shape, idx.shape, ax)
    return _node(Op.GATHER, (t, idx), shape, t.dtype, {"axis": ax}, nm)


bind_ops(sys.modules[__name__])  # Tensor operators call the constructors above
