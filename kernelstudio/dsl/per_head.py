"""The shape rule of a per-head matmul: A [M, heads, K] (the heads side by side in each row) times
B [heads, K, N] gives C [M, heads, N], head h of C's rows being A's head-h columns times B[h]."""

from __future__ import annotations

from ..core.checks import fmt_shape
from ..core.errors import ShapeError

__all__ = ["PER_HEAD_AXIS", "per_head_shape"]

PER_HEAD_AXIS = 1  # the axis of A and C that holds the heads: [rows, heads, cols]


def per_head_shape(a: tuple[object, tuple[int, ...]], b: tuple[object, tuple[int, ...]], batch_axis: object,
                   transposed: bool) -> tuple[int, int, int]:
    """The result shape of ``matmul(a, b, batch_axis=1)``, or a ShapeError naming the numbers."""
    (an, sa), (bn, sb) = a, b
    if isinstance(batch_axis, bool) or not isinstance(batch_axis, int) or batch_axis not in (1, -2):
        raise ShapeError(f"matmul: batch_axis={batch_axis!r} is not supported; batch_axis=1 takes A as "
                         "[rows, heads, K] with the heads in its middle axis, and None (the default) batches over "
                         "leading dims")
    if transposed:
        raise ShapeError(f"matmul: batch_axis=1 reads {an} as [rows, heads, K] and {bn} as [heads, K, N]; "
                         "transpose_a/transpose_b cannot combine with it (store the weight as [heads, K, N])")
    if len(sa) != 3 or len(sb) != 3:
        raise ShapeError(f"matmul: batch_axis=1 needs {an} [rows, heads, K] and {bn} [heads, K, N] (3 dims each), "
                         f"got {an}{fmt_shape(sa)} and {bn}{fmt_shape(sb)}; reshape a [rows, heads*K] matrix "
                         "to [rows, heads, K]")
    if sa[1] != sb[0]:
        raise ShapeError(f"matmul: {an}{fmt_shape(sa)} has {sa[1]} heads (axis 1) but {bn}{fmt_shape(sb)} has "
                         f"{sb[0]} (axis 0); give one [K, N] weight per head")
    if sa[2] != sb[1]:
        raise ShapeError(f"matmul: inner dimensions differ: {an}{fmt_shape(sa)} per head @ {bn}{fmt_shape(sb)} "
                         f"needs {an}.shape[2] == {bn}.shape[1] ({sa[2]} != {sb[1]})")
    return sa[0], sa[1], sb[2]
