"""Reduction DSL ops: sum, mean and max over axes."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.ops import Op
from . import shapes as S
from .build import _d, _flag, _node, _tensor, check_name
from .tensor import Tensor

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
