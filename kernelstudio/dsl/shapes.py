"""Shape and dtype inference for the DSL ops.

Each function takes shapes/dtypes plus a short description of the tensors involved
(``x[64,256]``) and either returns the inferred result or raises a ShapeError/DTypeError whose
message names the op, the tensors, the numbers and what would be valid.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence

from ..core.dtypes import check_dtype
from ..core.errors import DTypeError, ShapeError
from ..ir.ops import FLOAT_DTYPES

__all__ = [
    "Label",
    "fmt_shape",
    "check_shape",
    "promote",
    "broadcast_shapes",
    "normalize_axis",
    "normalize_axes",
    "reduce_shape",
    "matmul_shape",
    "conv2d_geometry",
    "reshape_shape",
    "check_perm",
    "check_broadcast_to",
    "gather_shape",
    "require_float",
    "CUBE_INPUT_DTYPES",
    "cube_out_dtype",
]

Shape = tuple[int, ...]


class Label:
    """A tensor description formatted only when a message is built (naming walks the graph)."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], str]):
        self._make = make

    def __str__(self) -> str:
        return self._make()


def fmt_shape(shape: Sequence[int]) -> str:
    """``[64,256]``: the compact shape form used in messages and printed graphs."""
    return "[" + ",".join(str(d) for d in shape) + "]"


def _as_int(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)  # int, numpy integers
    except TypeError:
        return None


def check_shape(op: str, shape: object, what: str = "shape", allow_minus_one: bool = False) -> Shape:
    """A shape as a tuple of positive ints (an int means a 1-D shape)."""
    dims = (shape,) if _as_int(shape) is not None else shape
    if not isinstance(dims, (tuple, list)):
        raise ShapeError(f"{op}: {what} must be a tuple of ints >= 1, got {shape!r}")
    out = []
    for d in dims:
        i = _as_int(d)
        if i is None or (i < 1 and not (allow_minus_one and i == -1)):
            raise ShapeError(
                f"{op}: {what} {tuple(dims)!r} has dimension {d!r}; every dimension must be an int >= 1"
                + (" (or one -1)" if allow_minus_one else "")
            )
        out.append(i)
    return tuple(out)


def promote(a: str, b: str) -> str:
    """The dtype two operands meet in.

    same -> same; float16/bfloat16 with float32 -> float32; float16 with bfloat16 -> float32;
    int with float -> the float; int8 with int32 -> int32.
    """
    if a == b:
        return a
    fa, fb = a in FLOAT_DTYPES, b in FLOAT_DTYPES
    if fa and fb:
        return "float32"
    if fa != fb:
        return a if fa else b
    return "int32"


def broadcast_shapes(op: str, operands: Sequence[tuple[object, Shape]]) -> Shape:
    """NumPy broadcasting of ``(description, shape)`` operands."""
    ndim = max((len(s) for _, s in operands), default=0)
    out = []
    for i in range(-ndim, 0):
        dim = 1
        for _, s in operands:
            d = s[i] if -i <= len(s) else 1
            if d == 1:
                continue
            if dim not in (1, d):
                desc = " and ".join(str(name) for name, _ in operands)
                raise ShapeError(
                    f"{op}: shapes do not broadcast: {desc}; dimension {i} is {dim} vs {d}. "
                    "Each dimension (aligned from the right) must be equal or 1; "
                    "use reshape or broadcast_to to line them up"
                )
            dim = d
        out.append(dim)
    return tuple(out)


def normalize_axis(op: str, axis: object, ndim: int, desc: object, what: str = "axis") -> int:
    """A single axis in ``[-ndim, ndim)`` as a non-negative int."""
    a = _as_int(axis)
    if a is None:
        raise ShapeError(f"{op}: {what} must be an int, got {axis!r} (for {desc})")
    if not -ndim <= a < ndim:
        rng = f"[{-ndim}, {ndim - 1}]" if ndim else "none (the tensor is 0-d)"
        raise ShapeError(f"{op}: {what} {a} is out of range for {desc} with {ndim} dims; valid: {rng}")
    return a % ndim


def normalize_axes(op: str, axis: object, ndim: int, desc: object) -> tuple[int, ...]:
    """None (all), an int or a tuple of ints -> sorted tuple of distinct non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = [normalize_axis(op, a, ndim, desc) for a in items]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: axis {tuple(items)!r} names the same dimension twice (for {desc})")
    return tuple(sorted(axes))


def reduce_shape(shape: Shape, axes: tuple[int, ...], keepdims: bool) -> Shape:
    """Shape after reducing `axes` (kept as 1 with keepdims)."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def matmul_shape(
    a: tuple[object, Shape], b: tuple[object, Shape], transpose_a: bool, transpose_b: bool
) -> Shape:
    """Result shape of ``a @ b`` with optional transposes of the last two dims; batch dims broadcast."""
    (an, sa), (bn, sb) = a, b
    for name, s in ((an, sa), (bn, sb)):
        if len(s) < 2:
            raise ShapeError(
                f"matmul: {name}{fmt_shape(s)} has {len(s)} dims; matmul needs >= 2 dims on both "
                "operands (reshape a vector to [1,n] or [n,1])"
            )
    ka, kb = (-2 if transpose_a else -1), (-1 if transpose_b else -2)
    m = sa[-1] if transpose_a else sa[-2]
    n = sb[-2] if transpose_b else sb[-1]
    ta, tb = ("^T" if transpose_a else ""), ("^T" if transpose_b else "")
    if sa[ka] != sb[kb]:
        raise ShapeError(
            f"matmul: inner dimensions differ: {an}{fmt_shape(sa)}{ta} @ {bn}{fmt_shape(sb)}{tb} needs "
            f"{an}.shape[{ka}] == {bn}.shape[{kb}] ({sa[ka]} != {sb[kb]})"
        )
    batch = broadcast_shapes(
        "matmul (batch dims)", [(f"{an}{fmt_shape(sa)}", sa[:-2]), (f"{bn}{fmt_shape(sb)}", sb[:-2])]
    )
    return (*batch, m, n)


def _pair(op: str, what: str, v: object) -> tuple[int, int]:
    i = _as_int(v)
    if i is not None:
        return i, i
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(_as_int(e) is not None for e in v):
        return _as_int(v[0]), _as_int(v[1])  # type: ignore[return-value]
    raise ShapeError(f"{op}: {what} must be an int or a pair of ints (h, w), got {v!r}")


def conv2d_geometry(
    x: tuple[object, Shape], w: tuple[object, Shape], stride: object, padding: object
) -> tuple[Shape, tuple[int, int], tuple[int, int, int, int]]:
    """(output shape, stride (sh, sw), padding (pt, pb, pl, pr)) of an NCHW x OIHW convolution.

    ``padding="SAME"`` follows TensorFlow: output = ceil(in / stride), the extra row/column of
    padding goes after (bottom/right).
    """
    (xn, xs), (wn, ws) = x, w
    for name, s, layout in ((xn, xs, "NCHW"), (wn, ws, "OIHW")):
        if len(s) != 4:
            raise ShapeError(f"conv2d: {name}{fmt_shape(s)} has {len(s)} dims; expected 4 ({layout})")
    n, c, h, wd = xs
    o, i, kh, kw = ws
    if c != i:
        raise ShapeError(
            f"conv2d: channel mismatch: {xn}{fmt_shape(xs)} (NCHW) has C={c} but "
            f"{wn}{fmt_shape(ws)} (OIHW) expects I={i}; grouped convolution is not supported"
        )
    sh, sw = _pair("conv2d", "stride", stride)
    if sh < 1 or sw < 1:
        raise ShapeError(f"conv2d: stride {(sh, sw)} must be >= 1 in both dims")
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            pad = (0, 0, 0, 0)
        elif mode == "SAME":
            ph = max((math.ceil(h / sh) - 1) * sh + kh - h, 0)
            pw = max((math.ceil(wd / sw) - 1) * sw + kw - wd, 0)
            pad = (ph // 2, ph - ph // 2, pw // 2, pw - pw // 2)
        else:
            raise ShapeError(f"conv2d: padding {padding!r} is not 'SAME' or 'VALID' (or ints)")
    elif isinstance(padding, (tuple, list)) and len(padding) == 4:
        vals = [_as_int(p) for p in padding]
        if any(v is None for v in vals):
            raise ShapeError(f"conv2d: padding {padding!r} must hold ints (pt, pb, pl, pr)")
        pad = tuple(vals)  # type: ignore[assignment]
    else:
        try:
            ph, pw = _pair("conv2d", "padding", padding)
        except ShapeError:
            raise ShapeError(
                f"conv2d: padding {padding!r} must be an int, (ph, pw), (pt, pb, pl, pr), 'SAME' or 'VALID'"
            ) from None
        pad = (ph, ph, pw, pw)
    if min(pad) < 0:
        raise ShapeError(f"conv2d: padding {pad} (pt, pb, pl, pr) must be >= 0")
    hp, wp = h + pad[0] + pad[1], wd + pad[2] + pad[3]
    if kh > hp or kw > wp:
        raise ShapeError(
            f"conv2d: kernel {kh}x{kw} of {wn}{fmt_shape(ws)} is larger than the padded input "
            f"{hp}x{wp} of {xn}{fmt_shape(xs)} (padding {pad}); pad more or use a smaller kernel"
        )
    ho, wo = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    return (n, o, ho, wo), (sh, sw), pad  # type: ignore[return-value]


def reshape_shape(desc: object, src: Shape, shape: object) -> Shape:
    """Target shape of a reshape, resolving one -1."""
    tgt = check_shape("reshape", shape, "target shape", allow_minus_one=True)
    size = math.prod(src)
    if tgt.count(-1) > 1:
        raise ShapeError(f"reshape: target shape {fmt_shape(tgt)} has more than one -1 (for {desc})")
    if -1 in tgt:
        known = math.prod(d for d in tgt if d != -1)
        if size % known:
            raise ShapeError(
                f"reshape: cannot reshape {desc} ({size} elements) to {fmt_shape(tgt)}: "
                f"{size} is not divisible by {known}"
            )
        tgt = tuple(size // known if d == -1 else d for d in tgt)
    if math.prod(tgt) != size:
        raise ShapeError(
            f"reshape: cannot reshape {desc} ({size} elements) to {fmt_shape(tgt)} "
            f"({math.prod(tgt)} elements); the element counts must match"
        )
    return tgt


def check_perm(desc: object, ndim: int, perm: object) -> tuple[int, ...]:
    """A permutation of range(ndim) (negative entries allowed); None reverses the dims."""
    if perm is None:
        return tuple(reversed(range(ndim)))
    items = perm if isinstance(perm, (tuple, list)) else None
    ints = [_as_int(p) for p in items] if items is not None else None
    if ints is None or any(p is None for p in ints):
        raise ShapeError(f"transpose: perm must be a tuple of ints, got {perm!r} (for {desc})")
    norm = sorted(p % ndim if ndim and -ndim <= p < ndim else p for p in ints)  # type: ignore[operator]
    if len(ints) != ndim or norm != list(range(ndim)):
        raise ShapeError(
            f"transpose: perm {tuple(ints)} is not a permutation of {tuple(range(ndim))} for {desc} "
            f"with {ndim} dims"
        )
    return tuple(p % ndim for p in ints)  # type: ignore[operator]


def check_broadcast_to(desc: object, src: Shape, shape: object) -> Shape:
    """Target shape of broadcast_to; `src` must broadcast to it without growing it."""
    tgt = check_shape("broadcast_to", shape, "target shape")
    ok = len(src) <= len(tgt) and all(s in (1, t) for s, t in zip(reversed(src), reversed(tgt), strict=False))
    if not ok:
        raise ShapeError(
            f"broadcast_to: cannot broadcast {desc} to {fmt_shape(tgt)}; each dim of the source "
            "(aligned from the right) must equal the target dim or be 1, and the target needs at least "
            f"{len(src)} dims"
        )
    return tgt


def gather_shape(xs: Shape, ids: Shape, axis: int) -> Shape:
    """np.take shape: x.shape[:axis] + indices.shape + x.shape[axis+1:]."""
    return (*xs[:axis], *ids, *xs[axis + 1:])


def require_float(op: str, desc: object, dtype: str) -> None:
    """DTypeError unless `dtype` is a float dtype."""
    if dtype not in FLOAT_DTYPES:
        raise DTypeError(
            f"{op}: {desc} is {dtype}; {op} needs a float tensor ({', '.join(FLOAT_DTYPES)}); "
            f"use cast(x, 'float32') first"
        )


# What the cube unit multiplies, and how FixPipe may convert its L0C accumulator on the way out.
CUBE_INPUT_DTYPES = ("float16", "bfloat16", "float32", "int8")


def cube_out_dtype(op: str, desc: object, in_dtype: str, out_dtype: object) -> str:
    """The result dtype of a matmul/conv2d whose operands meet in `in_dtype`.

    The cube unit multiplies float16, bfloat16 or float32 accumulating in float32 in L0C, and int8
    accumulating in int32. FixPipe converts the accumulator on its way to memory: float32 -> float16,
    bfloat16 or float32 for float inputs; int8 inputs leave as int32 (FixPipe's scaled int32 ->
    int8/float16 quantization is not modelled: dequantize with cast(x, 'float16', scale=...) after).
    `out_dtype` None: `in_dtype` for floats, int32 for int8.
    """
    if in_dtype not in CUBE_INPUT_DTYPES:
        raise DTypeError(
            f"{op}: {desc} meet in {in_dtype}; the cube unit multiplies {', '.join(CUBE_INPUT_DTYPES)} only; "
            "cast the operands to int8 (if their values fit -128..127) or to float32 first"
        )
    if out_dtype is None:
        return "int32" if in_dtype == "int8" else in_dtype
    dt = check_dtype(out_dtype, f"{op}: out_dtype")
    if in_dtype == "int8" and dt != "int32":
        raise DTypeError(
            f"{op}: out_dtype={dt!r} is not possible for int8 inputs {desc}: int8 x int8 accumulates in int32 "
            f"and leaves the cube as int32 (quantizing to {dt} in FixPipe is not modelled); use "
            f"out_dtype='int32' (the default) and dequantize after, e.g. cast(y, '{dt}', scale=0.01)"
            if dt in FLOAT_DTYPES else
            f"{op}: out_dtype={dt!r} is not possible for int8 inputs {desc}: int8 x int8 accumulates in int32 "
            "and leaves the cube as int32 (requantizing to int8 in FixPipe is not modelled); use "
            "out_dtype='int32' (the default), then cast(y, 'float16', scale=...) and cast(..., 'int8') after"
        )
    if in_dtype != "int8" and dt not in FLOAT_DTYPES:
        raise DTypeError(
            f"{op}: out_dtype={dt!r} is not possible for {in_dtype} inputs {desc}: they accumulate in float32 "
            f"and leave the cube as {', '.join(FLOAT_DTYPES)}; use one of those and cast(y, '{dt}') after"
        )
    return dt
