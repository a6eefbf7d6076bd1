"""Sorting and MoE routing: `argsort`, `sort` and `moe_init_routing` (CANN's MoeInitRoutingV2, dropless).

`moe_init_routing(x, expert_ids, num_experts)` orders the T*k (token, slot) pairs by expert id so each
expert's rows are contiguous for a grouped matmul. With the pairs numbered i = t*k + j (expert_ids
flattened row-major) and `sorted_row_idx` their stable ascending argsort by expert id (equal ids keep
the pair order), it returns, as MoeInitRoutingV2 defines them:

- expanded_x [T*k, H]: expanded_x[p] = x[sorted_row_idx[p] // k], the token of the pair at sorted place p;
- expanded_row_idx [T*k] int32: expanded_row_idx[sorted_row_idx[p]] = p, i.e. for pair i its row in
  expanded_x (the inverse permutation);
- expert_tokens_count [num_experts] int32: the pairs per expert (V2's count mode, not the cumsum).

It expands into four nodes, each its own kernel: the sort of the ids (a vector TopK over the whole row; rows
longer than one UB tile, T*k > 4096, sorted in tiles and merged through a GM workspace: lower/sort_merge.py),
a second sort that inverts the permutation, a histogram of the ids and a gather of x's rows by
sorted_row_idx // k (index-driven row copies).
"""

from __future__ import annotations

from ..core.errors import DTypeError, ShapeError, UnsupportedError
from ..ir.ops import FLOAT_DTYPES, Op
from . import shapes as S
from .ops import _d, _node, _tensor, check_name
from .tensor import Tensor

__all__ = ["argsort", "sort", "moe_init_routing"]

_SORT_DTYPES = ("float16", "bfloat16", "float32", "int32")


def _sort_node(op: str, x: object, axis: object, descending: object, which: str, name: str | None) -> Tensor:
    nm = check_name(op, name)
    t = _tensor(op, "x", x)
    if t.dtype not in _SORT_DTYPES:
        raise DTypeError(f"{op}: x {t.describe()} must be one of {', '.join(_SORT_DTYPES)}; cast it first "
                         "(cast(x, 'float32'))")
    if not isinstance(descending, bool):
        raise DTypeError(f"{op}: descending must be True or False, got {descending!r}")
    if t.ndim == 0:
        raise ShapeError(f"{op}: x {t.describe()} is a scalar; sort a tensor of at least one dim")
    ax = S.normalize_axis(op, axis, t.ndim, _d(t))
    dtype = "int32" if which == "indices" else t.dtype
    return _node(Op.SORT, (t,), t.shape, dtype, {"axis": ax, "descending": descending, "which": which}, nm)


def argsort(x: Tensor, axis: int = -1, *, descending: bool = False, stable: bool = True,
            name: str | None = None) -> Tensor:
    """int32 indices that sort `x` along `axis` (np.argsort(x, axis, kind="stable")): equal values keep their
    order, in either direction. float16, bfloat16, float32 or int32 (|values| < 2**24, checked when
    evaluated: the kernel sorts float32 keys). The kernel sorts the last axis: rows of up to 4096 in one TopK,
    longer ones in tiles merged through a GM workspace (lower/sort_merge.py)."""
    if stable is not True:
        raise UnsupportedError(f"argsort: stable={stable!r}; only the stable sort is offered (the vector Sort merges "
                         "stably), pass stable=True")
    return _sort_node("argsort", x, axis, descending, "indices", name)


def sort(x: Tensor, axis: int = -1, *, descending: bool = False, name: str | None = None) -> Tensor:
    """The values of `x` sorted along `axis` (stable; see `argsort`)."""
    return _sort_node("sort", x, axis, descending, "values", name)


def moe_init_routing(x: Tensor, expert_ids: Tensor, num_experts: int, *,
                     name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(expanded_x [T*k, H], expanded_row_idx [T*k] int32, expert_tokens_count [num_experts] int32) of
    tokens x [T, H] routed to experts expert_ids [T, k] (module doc). Ids must lie in [0, num_experts)
    (checked when evaluated). With name="r" the outputs are r_x, r_row_idx and r_count."""
    nm = check_name("moe_init_routing", name)
    xt = _tensor("moe_init_routing", "x", x)
    ids = _tensor("moe_init_routing", "expert_ids", expert_ids)
    if xt.dtype not in FLOAT_DTYPES:
        raise DTypeError(f"moe_init_routing: x {xt.describe()} must be float16, bfloat16 or float32 (token "
                         "features); cast it first")
    if ids.dtype != "int32":
        raise DTypeError(f"moe_init_routing: expert_ids {ids.describe()} must be int32 (one expert per token and "
                         "slot, as top-k gating gives them); use cast(expert_ids, 'int32')")
    if xt.ndim != 2:
        raise ShapeError(f"moe_init_routing: x {xt.describe()} must be 2-D [T, H], one row per token; reshape it")
    if ids.ndim != 2 or ids.shape[0] != xt.shape[0]:
        raise ShapeError(f"moe_init_routing: expert_ids {ids.describe()} must be 2-D [T, k] with T = {xt.shape[0]} "
                         f"tokens, as x {xt.describe()}")
    experts = S._as_int(num_experts)
    if experts is None or experts < 1:
        raise ShapeError(f"moe_init_routing: num_experts={num_experts!r} must be an int >= 1 (the experts the ids "
                         "name)")
    tokens, k = ids.shape
    pairs = tokens * k
    flat = _node(Op.RESHAPE, (ids,), (pairs,), "int32", None, f"{nm}_ids" if nm else "")
    order = _node(Op.SORT, (flat,), (pairs,), "int32", {"axis": 0, "descending": False, "which": "indices"},
                  f"{nm}_sorted_row_idx" if nm else "")
    row_idx = _node(Op.SORT, (order,), (pairs,), "int32", {"axis": 0, "descending": False, "which": "indices"},
                    f"{nm}_row_idx" if nm else "")
    expanded = _node(Op.GATHER, (xt, order), (pairs, xt.shape[1]), xt.dtype, {"axis": 0, "row_divisor": k},
                     f"{nm}_x" if nm else "")
    count = _node(Op.HISTOGRAM, (flat,), (experts,), "int32", {"bins": experts, "per_row": k},
                  f"{nm}_count" if nm else "")
    return expanded, row_idx, count
