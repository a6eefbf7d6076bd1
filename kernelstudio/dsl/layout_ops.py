"""Layout and index DSL ops: reshape, transpose, broadcast_to, split/concat along an axis, topk and
gather."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.errors import DTypeError, ShapeError
from ..ir.ops import Op
from . import shapes as S
from .build import _d, _node, _tensor, check_name
from .tensor import Tensor

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

