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

Layout glue (ks.ops.flash_attention's reshapes and transposes between the user's BSND / BSH tensors, or GQA's
grouped heads, and the (batch..., S, D) operands, all in its `ATTENTION_LAYOUT` composite) joins the match when
each of its tensors is used only on the way to the pattern: a chain of them on q, k, v (ending in the operand)
and on o (starting at the P V matmul). The kernel then reads the user's tensors in place: `AttentionMatch.view`
gives each operand's element strides inside the tensor read or written (a row of D contiguous elements, rows
`row_stride` apart, batch dims at their own strides). A chain whose view is no strided window (D not contiguous)
is left out, and the glue stays kernels of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import Op

__all__ = ["AttentionMatch", "attention_matches", "attention_parts", "CAUSAL_MASK", "ATTENTION_LAYOUT"]

ATTENTION_DTYPES = ("float16", "bfloat16")
# the composite name of ks.ops.flash_attention's causal where: its mask is the top-left causal one (the op promises
# it, as CANN's sparse_mode 2 does), so the fused kernel skips the blocks wholly above the diagonal
CAUSAL_MASK = "causal_mask"
# the composite name of ks.ops.flash_attention's layout glue (reshapes and transposes to and from (B, N, S, D) and
# GQA's (B, Nkv, G, S, D)): the fused kernel reads and writes the user's tensors through it in place
ATTENTION_LAYOUT = "attention_layout"
_GLUE_OPS = (Op.RESHAPE, Op.TRANSPOSE)


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
    glue: tuple[Node, ...] = ()  # the layout glue read through (module doc), graph order
    sources: tuple[Node, Node, Node] | None = None  # the tensors q, k, v are views of (None: q, k, v themselves)
    out: Node | None = None  # the tensor the output is written into (None: bmm2's own)
    strides: tuple[tuple[int, ...], ...] = ()  # element strides of q, k, v, bmm2 in those tensors (() : dense)

    @property
    def q_in(self) -> Node:
        return self.sources[0] if self.sources else self.q

    @property
    def k_in(self) -> Node:
        return self.sources[1] if self.sources else self.k

    @property
    def v_in(self) -> Node:
        return self.sources[2] if self.sources else self.v

    @property
    def o_out(self) -> Node:
        return self.out if self.out is not None else self.bmm2

    def view(self, which: str) -> tuple[int, ...]:
        """Element strides of operand `which` ("q", "k", "v", "o": bmm2's result) in the tensor read or written;
        dense strides when no glue is read through."""
        i = "qkvo".index(which)
        if self.strides:
            return self.strides[i]
        node = (self.q, self.k, self.v, self.bmm2)[i]
        return dense_strides(node.shape)

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
    core = set(nodes)
    glue: list[Node] = []
    srcs, strides = [], []
    for operand, users in ((q, {s}), (k, {s}), (v, {bmm2})):
        chain = _chain_in(graph, operand, users)
        view = _view_in(chain, operand) if chain else None
        if view is None:
            chain, view = [], dense_strides(operand.shape)
        glue += chain
        srcs.append(chain[0].inputs[0] if chain else operand)
        strides.append(view)
    chain = _chain_out(graph, bmm2)
    view = _view_out(chain, bmm2) if chain else None
    if view is None:
        chain, view = [], dense_strides(bmm2.shape)
    glue += chain
    strides.append(view)
    if not glue:
        return AttentionMatch(tuple(sorted(nodes, key=order.__getitem__)), q, k, v, s, bmm2, scale, *_mask_of(where))
    every = tuple(sorted(core | set(glue), key=order.__getitem__))
    return AttentionMatch(every, q, k, v, s, bmm2, scale, *_mask_of(where) or (None, 0.0, False),
                          glue=tuple(sorted(set(glue), key=order.__getitem__)), sources=tuple(srcs),
                          out=chain[-1] if chain else None, strides=tuple(strides))


def attention_matches(graph: Graph) -> tuple[AttentionMatch, ...]:
    """Every attention of the graph (module doc), in graph order of their P V matmul. Its layout glue is part
    of it: keeping any of its nodes out of fusion (the output tensor of a BSND attention, say) leaves the whole
    attention to the other rules, as for its other ops."""
    return tuple(m for n in graph.nodes if n.op is Op.MATMUL and (m := _match_at(graph, n)) is not None)


def attention_parts(nodes: tuple[Node, ...]) -> AttentionMatch:
    """The match an attention kernel's nodes form (graph order: glue, Q K^T, ..., P V, glue)."""
    mms = [n for n in nodes if n.op is Op.MATMUL]
    bmm1, bmm2 = mms[0], mms[-1]
    x = next(n for n in nodes if n.op is Op.MUL)
    where = next((n for n in nodes if n.op is Op.WHERE), None)
    q, k, v = bmm1.inputs[0], bmm1.inputs[1], bmm2.inputs[1]
    glue = tuple(n for n in nodes if n.op in _GLUE_OPS)
    core = tuple(n for n in nodes if n.op not in _GLUE_OPS)
    mask = _mask_of(where)
    if not glue:
        return AttentionMatch(core, q, k, v, bmm1, bmm2, float(x.inputs[1].attr("value")), *mask)
    members = set(glue)
    srcs, strides = [], []
    for operand in (q, k, v):
        chain = []
        n = operand
        while n in members:
            chain.insert(0, n)
            n = n.inputs[0]
        srcs.append(n)
        strides.append(_view_in(chain, operand) if chain else dense_strides(operand.shape))
    chain, n = [], bmm2
    while (nxt := next((g for g in glue if g.inputs[0] is n), None)) is not None:
        chain.append(nxt)
        n = nxt
    strides.append(_view_out(chain, bmm2) if chain else dense_strides(bmm2.shape))
    return AttentionMatch(tuple(nodes), q, k, v, bmm1, bmm2, float(x.inputs[1].attr("value")),
                          *mask or (None, 0.0, False), glue=glue, sources=tuple(srcs), out=chain[-1] if chain else None,
                          strides=tuple(strides))


def dense_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a dense row-major tensor of `shape`."""
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def _is_glue(n: Node) -> bool:
    return n.op in _GLUE_OPS and n.composite is not None and n.composite.name == ATTENTION_LAYOUT


def _chain_in(graph: Graph, operand: Node, users: set[Node]) -> list[Node]:
    """The glue nodes from a tensor read to `operand` (first to last), each used only by the next (the last by
    `users`, the pattern's nodes); [] when none."""
    chain: list[Node] = []
    n, allowed = operand, users
    while _is_glue(n) and n not in graph.outputs and set(graph.users[n]) <= allowed:
        chain.insert(0, n)
        n, allowed = n.inputs[0], {n}
    return chain


def _chain_out(graph: Graph, bmm2: Node) -> list[Node]:
    """The glue nodes from the P V matmul to the tensor written (first to last), each the only user of the one
    before; [] when none (or bmm2 is itself a graph output)."""
    chain: list[Node] = []
    n = bmm2
    while n not in graph.outputs and len(graph.users[n]) == 1:
        (u,) = graph.users[n]
        if not _is_glue(u):
            break
        chain.append(u)
        n = u
    return chain


def _probe(shape: tuple[int, ...]) -> np.ndarray:
    """A view of `shape` with dense element strides over one byte (never read: reshape and transpose only move
    strides, and a reshape that would copy raises)."""
    return as_strided(np.empty(1, np.int8), shape=shape, strides=dense_strides(shape))


def _strided(x: np.ndarray) -> tuple[int, ...] | None:
    """x's element strides when its last dim is contiguous (a row of D elements), else None."""
    st = tuple(int(v) for v in x.strides)
    return st if x.shape[-1] == 1 or st[-1] == 1 else None


def _apply(x: np.ndarray, n: Node, inverse: bool) -> np.ndarray | None:
    try:
        if n.op is Op.RESHAPE:
            return np.reshape(x, n.inputs[0].shape if inverse else n.shape, copy=False)
        perm = tuple(n.attr("perm"))
        return np.transpose(x, tuple(np.argsort(perm)) if inverse else perm)
    except ValueError:  # a reshape of a view that is no strided window
        return None


def _view_in(chain: list[Node], operand: Node) -> tuple[int, ...] | None:
    """`operand`'s element strides in the tensor the chain starts from."""
    x: np.ndarray | None = _probe(tuple(chain[0].inputs[0].shape))
    for n in chain:
        x = _apply(x, n, False) if x is not None else None
    return _strided(x) if x is not None and tuple(x.shape) == tuple(operand.shape) else None


def _view_out(chain: list[Node], bmm2: Node) -> tuple[int, ...] | None:
    """The P V result's element strides in the tensor the chain ends in (the chain undone, last to first)."""
    x: np.ndarray | None = _probe(tuple(chain[-1].shape))
    for n in reversed(chain):
        x = _apply(x, n, True) if x is not None else None
    return _strided(x) if x is not None and tuple(x.shape) == tuple(bmm2.shape) else None


def _mask_of(where: Node | None) -> tuple:
    """(mask, fill, causal) of the pattern's where, or () without one."""
    if where is None:
        return ()
    causal = where.composite is not None and where.composite.name == CAUSAL_MASK
    return where.inputs[0], float(where.inputs[1].attr("value")), causal
