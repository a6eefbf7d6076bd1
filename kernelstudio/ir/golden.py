"""The golden model: a NumPy evaluation of the graph that every back end is checked against.

Precision semantics (a promise to users):

- Every node computes in float32 from its inputs: float16/bfloat16 inputs are upcast to float32
  exactly; integer nodes compute in int64 and then wrap to their dtype like a C cast.
- matmul and conv2d multiply and accumulate in float32 (np.matmul / tensordot on float32), as the
  cube unit does with fp32 accumulation; int8 operands multiply and accumulate exactly in integers
  (int64, then wrapped to the int32 result), as the cube accumulates int8 x int8 in int32.
- A scaled cast (``cast(x, "float16", scale=s)``) is float32(x) * float32(s), rounded to its dtype.
- A rounding cast (``cast(x, "int8", rounding="rint")``) rounds to nearest even and saturates to the
  integer range (Cast with CAST_RINT); a plain float -> int cast truncates toward zero.
- Each node's result is rounded to the node's dtype (`dtypes.round_to`: nearest even for floats,
  truncation toward zero then wrap for float -> int). So a float16 tensor always holds float16
  values, and a composite such as layer_norm on float16 rounds each of its primitive steps.
- Scalar constants are rounded to their node's dtype too (0.1 in a float16 graph is 0.0999755859375).
- `evaluate(out, inputs, rounding=plan)` follows a plan's rounding points instead (the precision model
  the back ends implement; `ks.evaluate(out, inputs, schedule=s)` makes the plan of `s`,
  schedule/rounding.py): float values stay float32 inside a fused kernel and are rounded where the
  plan stores them to GM (a kernel's outputs; the kernel itself goes on with the float32 value),
  casts them, or where the cube unit writes its result; scalar constants stay float32; a mean is a
  float32 row sum times float32(1/count) and sigmoid is 1/(1+exp(-x)), as the kernels compute them.
  It then equals `run_tiled` bit for bit for vector kernels that reduce whole rows; matmul/conv
  (k-tile order) and multi-pass row reductions (column-chunk order) agree within rounding.
- Arrays are returned in their dtype's NumPy dtype (`dtypes.numpy_dtype`): float16, `ml_dtypes.bfloat16`,
  float32, int8, int32. Inputs may be any real dtype (a float32 array for a bfloat16 placeholder, as
  older code passes): each is rounded to its placeholder's dtype first, as every node's result is.

`random_inputs` draws, per placeholder and deterministically from (seed, placeholder name):
float tensors from a standard normal, divided by sqrt(K) for placeholders used as the second
(weight) operand of matmul (K = contraction length) or conv2d (K = I*kh*kw), so products stay
near unit scale; |N(0,1)| + 0.5 for inputs of log, sqrt, rsqrt, reciprocal and divisors of div;
0 or 1 for where conditions; valid indices in [0, dim) for gather indices (and ids in [0, bins) for a
histogram's, as moe_init_routing's expert ids), distinct cache slots for the index of a scatter (as many as it
has rows, drawn from every slot of the cache), a grouped matmul's group list spreading x's rows over its groups
at random (counts or their cumsum); small integers
(int8 in [-4, 4], int32 in [-8, 8]) otherwise. Roles are found through cast/reshape/transpose/
broadcast_to between the placeholder and its use.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..core import dtypes as _dt
from ..core import gating
from ..core.errors import InputError
from .graph import Graph, as_nodes
from .grouped import grouped_matmul_rule, random_group_list
from .node import Node
from .ops import FLOAT_DTYPES, Op
from .sorting import histogram_rule, sort_rule

__all__ = ["GOLDEN", "RoundingPlan", "evaluate", "named_placeholders", "random_inputs"]

Rule = Callable[[Node, Sequence[np.ndarray]], np.ndarray]

_erf64 = np.frompyfunc(math.erf, 1, 1)


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# --- rules: one per op; args are upcast (float32 / int64), results get rounded by the caller ----


def _erf(a: np.ndarray) -> np.ndarray:
    return np.asarray(_erf64(a.astype(np.float64)), dtype=np.float64).astype(np.float32)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(a))  # never overflows
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


def _reduce(fn: Callable[..., np.ndarray]) -> Rule:
    return lambda n, a: fn(a[0], axis=n.attr("axes"), keepdims=n.attr("keepdims"))


def _cast(n: Node, a: np.ndarray) -> np.ndarray:
    # the conversion is the rounding to the node's dtype; a scaled cast (dequantization) multiplies
    # float32(x) by the float32 scale first, as the kernels' Cast + Muls do
    # a rounding cast (quantization) rounds to nearest even and saturates, as Cast with CAST_RINT does
    if n.attr("rounding", None) == "rint":
        info = np.iinfo(_dt.numpy_dtype(n.dtype))
        return np.clip(np.rint(a.astype(np.float64)), info.min, info.max)
    scale = n.attr("scale")
    return a if scale is None else a.astype(np.float32) * np.float32(scale)


def _matmul(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    a, b = args
    if n.attr("transpose_a"):
        a = np.swapaxes(a, -1, -2)
    if n.attr("transpose_b"):
        b = np.swapaxes(b, -1, -2)
    if n.attr("batch_axis", None) is not None:  # per head: a [M, heads, K] @ b [heads, K, N] -> [M, heads, N]
        return np.swapaxes(np.matmul(np.swapaxes(a, 0, 1), b), 0, 1)
    return np.matmul(a, b)


def _conv2d(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    x, w = args
    pt, pb, pl, pr = n.attr("padding")
    sh, sw = n.attr("stride")
    _, _, kh, kw = w.shape
    ho, wo = n.shape[2], n.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    win = sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw][:, :, :ho, :wo]
    out = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))  # N, Ho, Wo, O
    return out.transpose(0, 3, 1, 2)


def _topk(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    a, ax, k = args[0], n.attr("axis"), n.attr("k")
    order = np.argsort(-a, axis=ax, kind="stable")  # descending; ties keep the lower index first
    idx = np.take(order, np.arange(k), axis=ax)
    return idx if n.attr("which") == "indices" else np.take_along_axis(a, idx, axis=ax)


def _moe_gating(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    logits, bias = args
    scores = gating.sigmoid32(logits)
    sel = scores + np.asarray(bias, np.float32)
    w, ids = gating.gate_select(scores, sel, n.attr("k"), n.attr("groups"), n.attr("topk_groups"),
                                n.attr("group_select"))
    if n.attr("which") == "ids":
        return ids
    return gating.gate_weights(w, n.attr("renorm"), n.attr("route_scale"), n.attr("eps"))


def _gather(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    x, idx = args
    ax = n.attr("axis")
    dim = x.shape[ax]
    idx = idx // n.attr("row_divisor", 1)  # moe_init_routing: row t of x for the pair index t*k+j
    bad = (idx < 0) | (idx >= dim)
    if bad.any():
        raise InputError(
            f"gather{' ' + n.name if n.name else ''}: index {int(idx[bad].flat[0])} is out of range "
            f"[0, {dim}) for axis {ax} of the gathered tensor {_fmt(x.shape)}"
        )
    return np.take(x, idx, axis=ax)


def scatter_slots(cache_shape: Sequence[int], layout: str) -> tuple[int, int, int]:
    """(slots, block size, row elements) of a paged cache: PA_BSND (blocks, block size, *row), PA_NZ
    (blocks, row / c0, block size, c0)."""
    if layout == "PA_NZ":
        nb, chunks, bs, c0 = cache_shape
        return nb * bs, bs, chunks * c0
    nb, bs = cache_shape[0], cache_shape[1]
    return nb * bs, bs, math.prod(cache_shape[2:])


def scatter_offsets(slots: np.ndarray, cache_shape: Sequence[int], layout: str) -> np.ndarray:
    """The flat element offsets in the cache of each slot's row: one row of offsets per slot."""
    _, bs, row = scatter_slots(cache_shape, layout)
    j = np.arange(row)
    if layout == "PA_NZ":
        c0 = cache_shape[3]
        b, o = slots // bs, slots % bs
        return (b * row * bs)[:, None] + (j // c0 * bs * c0)[None, :] + (o * c0)[:, None] + (j % c0)[None, :]
    return slots[:, None] * row + j[None, :]


def _scatter(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    cache, idx, values = args
    layout = n.attr("layout")
    slots, _, row = scatter_slots(cache.shape, layout)
    who = f"scatter{' ' + n.name if n.name else ''}"
    flat = np.asarray(idx).reshape(-1).astype(np.int64)
    bad = (flat < 0) | (flat >= slots)
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        raise InputError(f"{who}: token {t} has cache slot {int(flat[t])}, outside [0, {slots}) (blocks x block "
                         f"size of the cache {_fmt(cache.shape)}); pass slots in [0, {slots})")
    uniq, counts = np.unique(flat, return_counts=True)
    if (counts > 1).any():
        s = int(uniq[counts > 1][0])
        a, b = np.flatnonzero(flat == s)[:2].tolist()
        raise InputError(f"{who}: tokens {a} and {b} both write cache slot {s}; each slot takes one token (the "
                         "cores write their tokens in parallel); give every token its own slot")
    out = np.array(cache, copy=True).reshape(-1)
    out[scatter_offsets(flat, cache.shape, layout)] = np.asarray(values).reshape(len(flat), row)
    return out.reshape(cache.shape)


GOLDEN: dict[Op, Rule] = {
    Op.PLACEHOLDER: lambda n, a: a[0],  # the evaluator passes the fed value as the only arg
    Op.CONST: lambda n, a: np.asarray(n.attr("value")),
    Op.NEG: lambda n, a: -a[0],
    Op.ABS: lambda n, a: np.abs(a[0]),
    Op.EXP: lambda n, a: np.exp(a[0]),
    Op.LOG: lambda n, a: np.log(a[0]),
    Op.SQRT: lambda n, a: np.sqrt(a[0]),
    Op.RSQRT: lambda n, a: np.float32(1) / np.sqrt(a[0]),
    Op.RECIPROCAL: lambda n, a: np.float32(1) / a[0],
    Op.SQUARE: lambda n, a: a[0] * a[0],
    Op.ERF: lambda n, a: _erf(a[0]),
    Op.TANH: lambda n, a: np.tanh(a[0]),
    Op.SIGMOID: lambda n, a: _sigmoid(a[0]),
    Op.RELU: lambda n, a: np.maximum(a[0], 0),
    Op.LEAKY_RELU: lambda n, a: np.where(a[0] >= 0, a[0], a[0] * np.float32(n.attr("alpha"))),
    Op.CAST: lambda n, a: _cast(n, a[0]),
    Op.ADD: lambda n, a: a[0] + a[1],
    Op.SUB: lambda n, a: a[0] - a[1],
    Op.MUL: lambda n, a: a[0] * a[1],
    Op.DIV: lambda n, a: a[0] / a[1],
    Op.MAXIMUM: lambda n, a: np.maximum(a[0], a[1]),
    Op.MINIMUM: lambda n, a: np.minimum(a[0], a[1]),
    Op.WHERE: lambda n, a: np.where(a[0] != 0, a[1], a[2]),
    Op.REDUCE_SUM: _reduce(np.sum),
    Op.REDUCE_MEAN: _reduce(np.mean),
    Op.REDUCE_MAX: _reduce(np.max),
    Op.MATMUL: _matmul,
    Op.CONV2D: _conv2d,
    Op.RESHAPE: lambda n, a: a[0].reshape(n.shape),
    Op.TRANSPOSE: lambda n, a: np.transpose(a[0], n.attr("perm")),
    Op.BROADCAST_TO: lambda n, a: np.broadcast_to(a[0], n.shape),
    Op.SLICE: lambda n, a: np.take(a[0], np.arange(n.attr("start"), n.attr("start") + n.shape[n.attr("axis")]),
                                   axis=n.attr("axis")),
    Op.CONCAT: lambda n, a: np.concatenate(a, axis=n.attr("axis")),
    Op.TOPK: _topk,
    Op.GATHER: _gather,
    Op.SCATTER: _scatter,
    Op.GROUPED_MATMUL: grouped_matmul_rule,
    Op.SORT: sort_rule,
    Op.HISTOGRAM: histogram_rule,
    Op.MOE_GATING: _moe_gating,
}


def _mean_as_planned(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    # the kernels sum a row in float32, then multiply by float32(1 / count) (a Muls, not a division)
    a, axes = args[0], n.attr("axes")
    count = int(np.prod([a.shape[i] for i in (axes if isinstance(axes, tuple) else (axes,))]))
    total = np.sum(a, axis=axes, keepdims=n.attr("keepdims"))
    return total * np.float32(1.0 / count) if a.dtype == np.float32 else total / count


def _sigmoid_as_planned(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    # the kernels compute 1 / (1 + exp(-x)) in float32 (exp(-x) may overflow to inf: the result is 0)
    a = args[0]
    one = a.dtype.type(1) if a.dtype.kind == "f" else 1.0
    return one / (one + np.exp(-a))


# Rules that differ when the golden model follows a plan's arithmetic (evaluate(..., schedule=s)).
PLAN_RULES: dict[Op, Rule] = {Op.REDUCE_MEAN: _mean_as_planned, Op.SIGMOID: _sigmoid_as_planned}


def _upcast(a: np.ndarray, dtype: str) -> np.ndarray:
    return a.astype(np.float32 if dtype in FLOAT_DTYPES else np.int64, copy=False)


# --- inputs ---------------------------------------------------------------------------------------


def named_placeholders(graph: Graph, what: str) -> dict[str, Node]:
    by_user_name: dict[str, Node] = {}
    for p in graph.placeholders:
        if p.name and (q := by_user_name.setdefault(p.name, p)) is not p:
            raise InputError(
                f"{what}: two different placeholders are both named {p.name!r} "
                f"({_fmt(q.shape)} {q.dtype} and {_fmt(p.shape)} {p.dtype}); give each a unique name"
            )
    return {graph.name(p): p for p in graph.placeholders}


def _expected(phs: Mapping[str, Node]) -> str:
    return ", ".join(f"{k}{_fmt(p.shape)} {p.dtype}" for k, p in phs.items()) or "(none)"


def _feeds(graph: Graph, inputs: Mapping[str, object]) -> dict[Node, np.ndarray]:
    from ..core.checks import check_inputs

    phs = named_placeholders(graph, "evaluate")
    arrays = check_inputs("evaluate", [(k, p.shape, p.dtype) for k, p in phs.items()], inputs)
    feeds = {}
    for name, p in phs.items():
        with np.errstate(all="ignore"):  # out-of-range values overflow to inf / wrap, as documented
            feeds[p] = _dt.round_to(p.dtype, arrays[name])
    return feeds


# --- public ---------------------------------------------------------------------------------------


def evaluate(outputs: object, inputs: Mapping[str, object], *,
             rounding: RoundingPlan | None = None) -> np.ndarray | tuple[np.ndarray, ...]:
    """Golden values of `outputs` (a Tensor, or a tuple/list of them) for `inputs` (name -> array).

    Returns one array, or a tuple for a tuple/list of outputs. See the module doc for precision:
    by default every node rounds to its dtype (the framework reference). With a `rounding` plan the
    model follows it instead: a float value is rounded where the plan stores it (a kernel's output
    written to GM) or casts it, and stays float32 inside a fused kernel, as the generated code keeps it.
    (`ks.evaluate(..., schedule=s)` makes that plan from a schedule: schedule/rounding.py.)
    """
    nodes, single = as_nodes(outputs)
    graph = Graph(nodes)
    plan = rounding
    feeds = _feeds(graph, inputs)
    remaining = {n: len(graph.users[n]) for n in graph.nodes}
    keep = set(nodes)
    env: dict[Node, np.ndarray] = {}
    raw: dict[Node, np.ndarray] = {}  # float32 values of stored nodes, as their own kernel goes on using them
    with np.errstate(all="ignore"):
        for n in graph.nodes:
            if n.op is Op.PLACEHOLDER:
                args: list[np.ndarray] = [feeds[n]]
            else:
                args = [_upcast(raw[i] if i in raw and plan.home.get(i) == plan.home.get(n) else env[i], i.dtype)
                        for i in n.inputs]
            rule = PLAN_RULES.get(n.op, GOLDEN[n.op]) if plan is not None else GOLDEN[n.op]
            value = rule(n, args)
            if plan is None or n in plan.everywhere or n.dtype not in FLOAT_DTYPES:
                env[n] = _dt.round_to(n.dtype, value)  # astype: a fresh array
            elif n in plan.stored:  # rounded in GM; the kernel that computed it keeps the float32 value
                env[n] = _dt.round_to(n.dtype, value)
                raw[n] = np.asarray(value, dtype=np.float32)
            else:  # kept in float32 on chip: not rounded to the node's dtype
                env[n] = np.asarray(value, dtype=np.float32)
            for i in dict.fromkeys(n.inputs):  # free intermediates after their last use
                remaining[i] -= 1
                if remaining[i] == 0 and i not in keep:
                    del env[i]
                    raw.pop(i, None)
    results = tuple(env[n] for n in nodes)
    return results[0] if single else results


@dataclass(frozen=True)
class RoundingPlan:
    """Where a plan rounds: `everywhere` (inputs, casts, cube results: every reader sees the rounded
    value), `stored` (kernel outputs: rounded in GM, float32 inside their own kernel), `home` (kernel
    index of every computed node)."""

    everywhere: frozenset[Node]
    stored: frozenset[Node]
    home: Mapping[Node, int]


def _source(node: Node) -> Node | None:
    """The placeholder a value comes from through value-preserving layout ops and casts."""
    while node.op in (Op.CAST, Op.RESHAPE, Op.TRANSPOSE, Op.BROADCAST_TO):
        node = node.inputs[0]
    return node if node.op is Op.PLACEHOLDER else None


def _roles(graph: Graph) -> tuple[dict[Node, int], dict[Node, int], set[Node], set[Node], dict[Node, int]]:
    """(weight -> K, indices -> dim, positive inputs, where conditions, scatter slots -> cache slots)."""
    weight: dict[Node, int] = {}
    index: dict[Node, int] = {}
    slots: dict[Node, int] = {}
    positive: set[Node] = set()
    cond: set[Node] = set()
    for n in graph.nodes:
        if n.op is Op.MATMUL:
            b = n.inputs[1]
            k = b.shape[-1] if n.attr("transpose_b") else b.shape[-2]
            if (p := _source(b)) is not None:
                weight[p] = max(weight.get(p, 1), k)
        elif n.op is Op.CONV2D:
            w = n.inputs[1]
            if (p := _source(w)) is not None:
                weight[p] = max(weight.get(p, 1), w.shape[1] * w.shape[2] * w.shape[3])
        elif n.op is Op.GATHER:
            dim = n.inputs[0].shape[n.attr("axis")]
            if (p := _source(n.inputs[1])) is not None:
                index[p] = min(index.get(p, dim), dim)
        elif n.op is Op.HISTOGRAM and (p := _source(n.inputs[0])) is not None:
            index[p] = min(index.get(p, n.attr("bins")), n.attr("bins"))
        elif n.op is Op.SCATTER:
            total = scatter_slots(n.inputs[0].shape, n.attr("layout"))[0]
            if (p := _source(n.inputs[1])) is not None:
                slots[p] = min(slots.get(p, total), total)
        elif n.op is Op.GROUPED_MATMUL:  # its weights [E, K, N]: K
            if (p := _source(n.inputs[1])) is not None:
                weight[p] = max(weight.get(p, 1), n.inputs[1].shape[1])
        elif n.op is Op.WHERE and (p := _source(n.inputs[0])) is not None:
            cond.add(p)
        elif n.op in (Op.LOG, Op.SQRT, Op.RSQRT, Op.RECIPROCAL, Op.DIV):
            p = _source(n.inputs[-1])  # the divisor for div
            if p is not None:
                positive.add(p)
    return weight, index, positive, cond, slots


def random_inputs(outputs: object, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic random values for every placeholder of `outputs`, by name (see module doc)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"random_inputs: seed must be an int >= 0, got {seed!r}")
    nodes, _ = as_nodes(outputs)
    graph = Graph(nodes)
    weight, index, positive, cond, slots = _roles(graph)
    lists = {p: (n.inputs[0].shape[0], n.attr("group_list_type")) for n in graph.nodes
             if n.op is Op.GROUPED_MATMUL and (p := _source(n.inputs[2])) is not None}
    out: dict[str, np.ndarray] = {}
    for name, p in named_placeholders(graph, "random_inputs").items():
        rng = np.random.default_rng([int(seed), zlib.crc32(name.encode())])
        isfloat = p.dtype in FLOAT_DTYPES
        if p in lists:  # a grouped matmul's group list: the rows spread over the groups at random
            v: np.ndarray = random_group_list(rng, p.size, *lists[p])
        elif p in slots:  # distinct slots: as many as the tokens, from the whole cache
            v = rng.choice(slots[p], size=p.size, replace=False).reshape(p.shape)
        elif p in index:
            v = rng.integers(0, index[p], size=p.shape)
        elif p in cond:
            v = rng.integers(0, 2, size=p.shape)
        elif isfloat:
            v = rng.standard_normal(p.shape)
            if p in positive:
                v = np.abs(v) + 0.5
            if p in weight:
                v = v / math.sqrt(weight[p])
        else:
            hi = 4 if p.dtype == "int8" else 8
            v = rng.integers(-hi, hi + 1, size=p.shape)
        out[name] = _dt.round_to(p.dtype, np.asarray(v))
    return out
