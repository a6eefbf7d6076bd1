"""`grouped_matmul`: the MoE experts' matmul, x's rows in groups (one per expert), each group @ its expert's
weights, the group sizes run-time data (CANN's GroupedMatmul with one x, one y and a group list).

The sizes are data, so the golden model, `run_tiled` and the CPU twin read them from the group list; the
simulator cannot see data, so the node carries `plan_sizes`: the per-group row counts the plan and the simulator
assume (default: the M rows split evenly). `ks.simulate`'s timeline is the one of that planned distribution.
"""

from __future__ import annotations

from ..core.errors import DTypeError, InputError, ShapeError, UnsupportedError
from ..ir.grouped import GROUP_LIST_TYPES
from ..ir.ops import FLOAT_DTYPES, Op
from .ops import _node, _tensor, check_name
from .tensor import Tensor

__all__ = ["grouped_matmul", "even_split"]


def even_split(rows: int, groups: int) -> tuple[int, ...]:
    """`rows` over `groups` as evenly as they go (the first groups one row more)."""
    q, r = divmod(rows, groups)
    return tuple(q + (g < r) for g in range(groups))


def grouped_matmul(x: Tensor, weights: Tensor, group_list: Tensor, *, group_list_type: str = "count",
                   plan_sizes: tuple[int, ...] | list[int] | None = None, name: str | None = None) -> Tensor:
    """[M, N]: rows [s_g, s_g + c_g) of x @ weights[g] for each group g, rows past the groups' total zero.

    x: [M, K] with the rows grouped by expert (group 0's rows first); weights: [E, K, N] of x's dtype
    (float16, bfloat16 or float32); group_list: [E] int32 or int64, run-time data: each group's row count
    (group_list_type="count") or its end row (="cumsum", non-decreasing). The golden model, run_tiled and the
    twin read the real group list. plan_sizes: the per-group row counts the plan and the simulator assume (E
    ints >= 0 summing to at most M; default the even split of M over E): the simulated timeline is the one of
    this planned distribution, not of any data."""
    nm = check_name("grouped_matmul", name)
    xt = _tensor("grouped_matmul", "x", x)
    w = _tensor("grouped_matmul", "weights", weights)
    gl = _tensor("grouped_matmul", "group_list", group_list)
    if group_list_type not in GROUP_LIST_TYPES:
        raise UnsupportedError(f"grouped_matmul: group_list_type {group_list_type!r} is not one of "
                               f"{', '.join(map(repr, GROUP_LIST_TYPES))}")
    if xt.ndim != 2:
        raise ShapeError(f"grouped_matmul: x {xt.describe()} must be [M, K]: the tokens' rows, grouped by expert")
    if w.ndim != 3:
        raise ShapeError(f"grouped_matmul: weights {w.describe()} must be [E, K, N]: one [K, N] matrix per expert")
    m, k = xt.shape
    e, wk, n = w.shape
    if wk != k:
        raise ShapeError(f"grouped_matmul: x {xt.describe()} has K = {k} but weights {w.describe()} have K = {wk}; "
                         "each expert's matrix is [K, N] with x's K")
    if gl.ndim != 1 or gl.shape[0] != e:
        raise ShapeError(f"grouped_matmul: group_list {gl.describe()} must be [{e}], one entry per expert of the "
                         f"weights {w.describe()}")
    if gl.dtype not in ("int32", "int64"):
        raise DTypeError(f"grouped_matmul: group_list {gl.describe()} must be int32 or int64 (row counts); use "
                         "cast(group_list, 'int32')")
    if xt.dtype not in FLOAT_DTYPES or w.dtype != xt.dtype:
        raise DTypeError(f"grouped_matmul: x {xt.describe()} and weights {w.describe()} must share one of "
                         f"{', '.join(FLOAT_DTYPES)}; cast one to the other's dtype")
    plan = _plan_sizes(plan_sizes, m, e)
    return _node(Op.GROUPED_MATMUL, (xt, w, gl), (m, n), xt.dtype,
                 {"group_list_type": group_list_type, "plan_sizes": plan}, nm)


def _plan_sizes(plan: object, rows: int, groups: int) -> tuple[int, ...]:
    if plan is None:
        return even_split(rows, groups)
    if not isinstance(plan, (tuple, list)) or not all(isinstance(v, int) and not isinstance(v, bool) for v in plan):
        raise InputError(f"grouped_matmul: plan_sizes {plan!r} must be a tuple of {groups} ints (rows per group)")
    sizes = tuple(plan)
    if len(sizes) != groups:
        raise InputError(f"grouped_matmul: plan_sizes has {len(sizes)} entries {sizes} for {groups} groups; give one "
                         "row count per expert")
    neg = [(i, v) for i, v in enumerate(sizes) if v < 0]
    if neg:
        i, v = neg[0]
        raise InputError(f"grouped_matmul: plan_sizes[{i}] is {v}; a group plans 0 or more rows")
    if sum(sizes) > rows:
        raise InputError(f"grouped_matmul: plan_sizes {sizes} sum to {sum(sizes)}, more than x's {rows} rows; plan "
                         f"at most {rows}")
    return sizes
