"""The attention pattern: `matmul(cast(softmax(matmul(q, k^T) * scale)), v)` per (batch, head), which the fusion
pass makes ONE kernel of the "attention" family (a cube-vector-cube kernel with the online softmax,
lower/attention.py) instead of Q K^T with the softmax in one kernel and P V in a second.

What matches (each intermediate used inside the pattern alone, never a graph output):

    s  = matmul(q, k, transpose_b=True)      float32, q and k float16 / bfloat16; k's batch dims q's or 1 (GQA:
                                             q (B, Nkv, G, S1, D) against k (B, Nkv, 1, S2, D))
    x  = mul(s, c)                           c a scalar constant > 0 (the scale)
    x  = where(mask, fill, mul(s, c))        optional: mask an (S1, S2) tensor (nonzero: masked), fill a constant
                                             (CANN's atten_mask, causal attention)
    mx = reduce_max(x, last axis, keepdims); e = exp(sub(x, mx)); sm = reduce_sum(e, last axis, keepdims)
    p  = cast(div(e, sm), q.dtype)
    o  = matmul(p, v)                        v of k's shape, in q's dtype; D (q's last dim) a multiple of 16

"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import Op

__all__ = ["AttentionMatch", "attention_matches", "attention_parts", "CAUSAL_MASK"]

ATTENTION_DTYPES = ("float16", "bfloat16")
# the composite name of ks.ops.flash_attention's causal where: its mask is the top-left causal one (the op promises
# it, as CANN's sparse_mode 2 does), so the fused kernel skips the blocks wholly above the diagonal
CAUSAL_MASK = "causal_mask"


@dataclass(frozen=True, slots=True)
class AttentionMatch:
    """One matched attention: its compute nodes in graph order and the parts the lowering reads."""

    nodes: tuple[Node, ...]  # bmm1 ... bmm2, every compute node of the pattern
    q: Node
    k: Node
    v: Node
    bmm1: Node
    bmm2: Node
    scale: float
    mask: Node | None = None  # the where's condition, (S1, S2)
    fill: float = 0.0  # what a masked score becomes
    causal: bool = False  # the mask is the top-left causal one (the where is ks.ops.flash_attention's "causal_mask")

    @property
    def batch(self) -> tuple[int, ...]:
        return tuple(self.q.shape[:-2])

    @property
    def s1(self) -> int:
        return self.q.shape[-2]

    @property
    def s2(self) -> int:
        return self.k.shape[-2]

    @property
    def d(self) -> int:
        return self.q.shape[-1]


def _last_axis_keep(n: Node) -> bool:
    return n.attr("axes") == (n.inputs[0].ndim - 1,) and bool(n.attr("keepdims"))


def _match_at(graph: Graph, bmm2: Node) -> AttentionMatch | None:
    if bmm2.op is not Op.MATMUL or bmm2.attr("transpose_a") or bmm2.attr("transpose_b"):
        return None
    p, v = bmm2.inputs
    if p.op is not Op.CAST or p.inputs[0].op is not Op.DIV:
        return None
    div = p.inputs[0]
    e, sm = div.inputs
    if e.op is not Op.EXP or sm.op is not Op.REDUCE_SUM or sm.inputs[0] is not e or not _last_axis_keep(sm):
        return None
    sub = e.inputs[0]
    if sub.op is not Op.SUB:
        return None
    x, mx = sub.inputs
    if mx.op is not Op.REDUCE_MAX or mx.inputs[0] is not x or not _last_axis_keep(mx):
        return None
    where = None
    if x.op is Op.WHERE:
        where = x
        mask, fill, x = where.inputs
        if fill.op is not Op.CONST or fill.shape != () or mask.op is Op.CONST or mask.ndim != 2:
            return None
    if x.op is not Op.MUL:
        return None
    s, c = x.inputs
    if c.op is not Op.CONST or c.shape != () or s.op is not Op.MATMUL:
        return None
    scale = float(c.attr("value"))
    if not scale > 0 or not s.attr("transpose_b") or s.attr("transpose_a") or s.dtype != "float32":
        return None
    q, k = s.inputs
    if (q.dtype not in ATTENTION_DTYPES or k.dtype != q.dtype or v.dtype != q.dtype or p.dtype != q.dtype
            or bmm2.dtype != q.dtype):
        return None
    if q.ndim < 3 or k.shape != v.shape or k.ndim != q.ndim or q.shape[-1] != k.shape[-1]:
        return None
    if any(kb not in (1, qb) for qb, kb in zip(q.shape[:-2], k.shape[:-2], strict=True)):
        return None  # K and V broadcast over query batch dims (GQA: (B, Nkv, 1) against (B, Nkv, G)) or match them
    if v.shape[-1] != q.shape[-1] or q.shape[-1] % 16:
        return None
    if where is not None and tuple(where.inputs[0].shape) != (q.shape[-2], k.shape[-2]):
        return None
    nodes = (s, x, *((where,) if where is not None else ()), mx, sub, e, sm, div, p, bmm2)
    inner = set(nodes[:-1])
    for n in nodes[:-1]:
        if n in graph.outputs or any(u not in inner and u is not bmm2 for u in graph.users[n]):
            return None
    order = {n: i for i, n in enumerate(graph.nodes)}
    return AttentionMatch(tuple(sorted(nodes, key=order.__getitem__)), q, k, v, s, bmm2, scale, *_mask_of(where))


def attention_matches(graph: Graph) -> tuple[AttentionMatch, ...]:
    """Every attention of the graph (module doc), in graph order of their P V matmul."""
    return tuple(m for n in graph.nodes if n.op is Op.MATMUL and (m := _match_at(graph, n)) is not None)


def attention_parts(nodes: tuple[Node, ...]) -> AttentionMatch:
    """The match an attention kernel's nodes form (graph order: Q K^T first, P V last)."""
    bmm1, bmm2 = nodes[0], nodes[-1]
    x = next(n for n in nodes if n.op is Op.MUL)
    where = next((n for n in nodes if n.op is Op.WHERE), None)
    return AttentionMatch(tuple(nodes), bmm1.inputs[0], bmm1.inputs[1], bmm2.inputs[1], bmm1, bmm2,
                          float(x.inputs[1].attr("value")), *_mask_of(where))


def _mask_of(where: Node | None) -> tuple:
    """(mask, fill, causal) of the pattern's where, or () without one."""
    if where is None:
        return ()
    causal = where.composite is not None and where.composite.name == CAUSAL_MASK
    return where.inputs[0], float(where.inputs[1].attr("value")), causal
