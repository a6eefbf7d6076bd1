"""Cube DSL ops: matmul (batched, per-head) and conv2d."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.ops import Op
from . import shapes as S
from .build import _describe, _flag, _n, _node, _operands, _tensor, check_name
from .per_head import PER_HEAD_AXIS, per_head_shape
from .tensor import Tensor

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

