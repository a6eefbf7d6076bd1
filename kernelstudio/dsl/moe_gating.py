"""MoE gating and finalize: which experts a token goes to, and how their outputs come back together.

- `moe_gating_topk`: CANN's MoeGatingTopK with normType sigmoid (DeepSeek-V3: 256 experts in 8 groups,
  4 groups kept, top-8, route scale 2.5); one op with its own vector kernel (lower/gating.py).
- `moe_gating_topk_softmax`: CANN's MoeGatingTopKSoftmax (Mixtral): softmax, then top-k; a composite
  of `softmax` and `topk`.
- `moe_finalize_routing`: CANN's MoeFinalizeRouting without the expert bias: a composite of `gather`,
  `transpose`, `mul`, `reduce_sum` and `add`.

The operator definitions followed are those of the public CANN ops-transformer docs (aclnnMoeGatingTopK,
aclnnMoeGatingTopKSoftmax, aclnnMoeFinalizeRouting, aclnnMoeInitRouting); each function's doc says what.
"""

from __future__ import annotations

from ..core.dtypes import FLOAT_DTYPES
from ..core.errors import DTypeError, ShapeError, UnsupportedError
from ..core.gating import DEFAULT_EPS, check_gating
from ..ir.ops import Op
from . import ops as O
from .composites import softmax
from .tensor import Tensor

__all__ = ["moe_gating_topk", "moe_gating_topk_softmax", "moe_finalize_routing"]

SCORES = ("sigmoid",)
ROW_ORDERS = ("k_major", "token_major")


def _logits(op: str, logits: object) -> Tensor:
    t = O._tensor(op, "logits", logits)
    if t.dtype not in FLOAT_DTYPES:
        raise DTypeError(f"{op}: logits {t.describe()} must be float16, bfloat16 or float32 (the router's "
                         "output); cast them first")
    if t.ndim != 2:
        raise ShapeError(f"{op}: logits {t.describe()} must be 2-D [tokens, experts]; reshape(logits, "
                         f"(-1, {t.shape[-1] if t.ndim else 1})) first")
    return t


def moe_gating_topk(logits: Tensor, bias: Tensor, k: int, *, groups: int = 1, topk_groups: int = 1,
                    group_select: str = "top2_sum", renorm: bool = True, route_scale: float = 1.0,
                    score: str = "sigmoid", name: str | None = None) -> tuple[Tensor, Tensor]:
    """(weights [T, k] float32, expert_ids [T, k] int32) of each token's `k` experts, best first.

    As aclnnMoeGatingTopK defines it with normType 1 (sigmoid): scores = sigmoid(logits); the selection
    values are scores + bias (the correction bias, [E], of the logits' dtype); with groups > 1 each group
    of E / groups experts scores the sum of its two largest selection values (group_select "top2_sum",
    groupSelectMode 1; "max": its largest, mode 0), the `topk_groups` best groups are kept and the others
    masked; the k largest selection values among the kept experts are chosen. The weights are the chosen
    experts' scores (without the bias), divided by (their sum + 1e-20) when `renorm`, times `route_scale`
    (routedScalingFactor). Ties go to the lower group index, then the lower expert index. All arithmetic
    is float32. With ``name="g"`` the ids are named "g_ids".
    """
    op = "moe_gating_topk"
    nm = O.check_name(op, name)
    t = _logits(op, logits)
    b = O._tensor(op, "bias", bias)
    if score not in SCORES:
        raise UnsupportedError(f"{op}: score={score!r} is not lowered; only 'sigmoid' (DeepSeek-V3). For softmax "
                               "gating use moe_gating_topk_softmax")
    if b.dtype != t.dtype:
        raise DTypeError(f"{op}: bias {b.describe()} must have the logits' dtype {t.dtype} (as MoeGatingTopK "
                         f"asks); cast(bias, '{t.dtype}')")
    tokens, experts = t.shape
    if b.shape != (experts,):
        raise ShapeError(f"{op}: bias {b.describe()} must be 1-D ({experts},), one value per expert of logits "
                         f"{t.describe()}")
    kk, g, kg = O.S._as_int(k), O.S._as_int(groups), O.S._as_int(topk_groups)
    if kk is None or g is None or kg is None:
        raise ShapeError(f"{op}: k={k!r}, groups={groups!r} and topk_groups={topk_groups!r} must be ints")
    if kk < 1 or kk > experts:
        raise ShapeError(f"{op}: k={kk} must be in 1..{experts}, the experts of logits {t.describe()}")
    why = check_gating(experts, kk, g, kg, group_select)
    if why:
        raise ShapeError(f"{op}: {why}")
    attrs = {"k": kk, "groups": g, "topk_groups": kg, "group_select": group_select, "renorm": bool(renorm),
             "route_scale": float(route_scale), "eps": DEFAULT_EPS}
    w = O._node(Op.MOE_GATING, (t, b), (tokens, kk), "float32", {**attrs, "which": "weights"}, nm)
    ids = O._node(Op.MOE_GATING, (t, b), (tokens, kk), "int32", {**attrs, "which": "ids"},
                  f"{nm}_ids" if nm else "")
    return w, ids


def moe_gating_topk_softmax(logits: Tensor, k: int, *, renorm: bool = False,
                            name: str | None = None) -> tuple[Tensor, Tensor]:
    """(weights [T, k], expert_ids [T, k] int32): softmax over the experts, then the k largest, best first,
    ties to the lower index (aclnnMoeGatingTopKSoftmax; its `finished` input is not modelled). With
    `renorm` the k weights are divided by their sum (Mixtral's routing). The weights have the logits' dtype.
    A composite: softmax, topk (and reduce_sum, div); each runs as its own kernels."""
    op = "moe_gating_topk_softmax"
    nm = O.check_name(op, name)
    t = _logits(op, logits)
    kk = O.S._as_int(k)
    if kk is None or not 1 <= kk <= t.shape[1]:
        raise ShapeError(f"{op}: k={k!r} must be an int in 1..{t.shape[1]}, the experts of logits {t.describe()}")
    probs = softmax(t, -1)
    w, ids = O.topk(probs, kk, -1)
    if renorm:
        w = O.div(w, O.reduce_sum(w, -1, keepdims=True))
    if nm:
        w = O.reshape(w, w.shape, name=nm)
        ids = O.reshape(ids, ids.shape, name=f"{nm}_ids")
    return w, ids


def moe_finalize_routing(expert_out: Tensor, weights: Tensor, expanded_row_idx: Tensor, *,
                         shared: Tensor | None = None, row_order: str = "k_major",
                         name: str | None = None) -> Tensor:
    """out [T, H] = shared + sum_j weights[t, j] * expert_out[expanded_row_idx[j * T + t]].

    As aclnnMoeFinalizeRouting defines it (skip1 = shared, no skip2, no expert bias): expert_out
    [T * k, H] holds the expert outputs in the order MoeInitRouting sorted the rows into, and
    expanded_row_idx [T * k] int32 is MoeInitRouting's expandedRowIdx: for the original index i = j * T + t
    (token t's j-th expert), the position its row was sorted to (expandedRowIdx[sortedRowIdx[p]] = p).
    `weights` is cast to expert_out's dtype (CANN's scales share it). Values must lie in [0, T * k)
    (checked when evaluated). `row_order="token_major"` numbers the pairs i = t * k + j instead, as
    `ks.moe_init_routing` (MoeInitRoutingV2) does, so its expanded_row_idx can be passed as it is.
    A composite: gather the rows, (transpose the weights,) multiply and reduce over j."""
    op = "moe_finalize_routing"
    nm = O.check_name(op, name)
    x = O._tensor(op, "expert_out", expert_out)
    w = O._tensor(op, "weights", weights)
    idx = O._tensor(op, "expanded_row_idx", expanded_row_idx)
    if row_order not in ROW_ORDERS:
        raise UnsupportedError(f"{op}: row_order={row_order!r} is not one of {', '.join(ROW_ORDERS)}")
    if x.dtype not in FLOAT_DTYPES or w.dtype not in FLOAT_DTYPES:
        raise DTypeError(f"{op}: expert_out {x.describe()} and weights {w.describe()} must be floating point")
    if w.ndim != 2:
        raise ShapeError(f"{op}: weights {w.describe()} must be 2-D [tokens, k]")
    tokens, k = w.shape
    if x.ndim != 2 or x.shape[0] != tokens * k:
        raise ShapeError(f"{op}: expert_out {x.describe()} must be [tokens * k, H] = [{tokens * k}, H] for "
                         f"weights {w.describe()}")
    if idx.dtype != "int32":
        raise DTypeError(f"{op}: expanded_row_idx {idx.describe()} must be int32 (MoeInitRouting's "
                         "expandedRowIdx); cast(expanded_row_idx, 'int32')")
    if idx.shape != (tokens * k,):
        raise ShapeError(f"{op}: expanded_row_idx {idx.describe()} must be 1-D ({tokens * k},), one position "
                         "per (token, expert) pair")
    hidden = x.shape[1]
    if shared is not None:
        s = O._tensor(op, "shared", shared)
        if s.dtype != x.dtype or s.shape != (tokens, hidden):
            raise ShapeError(f"{op}: shared {s.describe()} must be [{tokens}, {hidden}] {x.dtype}, like the "
                             "output")
    wc = w if w.dtype == x.dtype else O.cast(w, x.dtype)
    if row_order == "k_major":
        rows = O.reshape(O.gather(x, idx, 0), (k, tokens, hidden))  # row j * T + t: token t's j-th expert
        acc = O.reduce_sum(O.mul(rows, O.reshape(O.transpose(wc), (k, tokens, 1))), 0)
    else:
        rows = O.reshape(O.gather(x, idx, 0), (tokens, k, hidden))  # row t * k + j
        acc = O.reduce_sum(O.mul(rows, O.reshape(wc, (tokens, k, 1))), 1)
    if shared is None:
        return O.reshape(acc, acc.shape, name=nm) if nm else acc
    return O.add(shared, acc, name=nm or None)
