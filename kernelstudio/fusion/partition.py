"""The fusion pass: partition a graph into kernels of three families.

- `cube`: a matmul/conv2d alone (GM -> L1 -> L0A/L0B -> Mmad -> FixPipe -> GM).
- `cube_vector`: a matmul/conv2d plus an epilogue of elementwise, broadcast and last-axis
  row-reduction ops on its [rows, cols] result, run on the vector cores (MIX_AIC_1_2).
- `vector`: elementwise / broadcast / row-reduction ops on one [rows, cols] iteration space.
- `attention`: softmax(Q K^T * scale) V per (batch, head) as one cube-vector-cube kernel with the online
  softmax (fusion/attention.py says what matches; lower/attention.py lowers it), with the layout glue of
  ks.ops.flash_attention (BSND / BSH, GQA's grouped heads) that it reads through in place. A matmul/conv in
  `split` that is the P V matmul of an attention, or any of its ops kept out, leaves that attention to the
  other rules (and its glue to kernels of its own).

Inside a kernel every tensor maps onto the kernel's iteration space as a full tile, a row vector
[1, cols], a column vector [rows, 1] (row statistics) or a scalar; that is what lets one tile loop
compute them all. Rules are data (fusion/rules.py); each kernel records why each op is in it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.errors import ScheduleError
from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import Kind, Op
from .attention import attention_matches
from .rules import FusionRule, rule

__all__ = ["FusedKernel", "FusionPlan", "partition", "view_kind", "row_period", "row_map"]


def view_kind(shape: tuple[int, ...], space: tuple[int, ...], row_dims: int | None = None) -> str | None:
    """How a tensor of `shape` sits on the iteration space viewed as [rows, cols], where rows are
    the first `row_dims` dims of `space` (default all but the last): "full", "row" ([1, cols]),
    "col" ([rows, 1]), "scalar" or None (not representable)."""
    try:  # a pure function of three small values, asked for every operand of every node the fusion and lowering meet
        return _view_kind_kept(shape, space, row_dims)
    except TypeError:  # a shape given as a list
        return _view_kind(shape, space, row_dims)


def _view_kind(shape: tuple[int, ...], space: tuple[int, ...], row_dims: int | None) -> str | None:
    if len(shape) > len(space):
        return None
    if not space:
        return "scalar"
    p = len(space) - 1 if row_dims is None else row_dims
    s = (1,) * (len(space) - len(shape)) + tuple(shape)
    lead_s, last_s, lead_o, last_o = s[:p], s[p:], space[:p], space[p:]
    row_full, row_one = lead_s == lead_o, all(d == 1 for d in lead_s)
    col_full, col_one = last_s == last_o, all(d == 1 for d in last_s)
    if row_full and col_full:
        return "full"
    if row_one and col_full:
        return "row"
    if row_full and col_one:
        return "col"
    if row_one and col_one:
        return "scalar"
    if row_period(shape, space, row_dims) is not None and (col_full or col_one):
        return "full" if col_full else "col"  # repeats every row_period rows (e.g. a per-channel bias)
    if row_map(shape, space, row_dims) is not None and col_full:
        return "full"  # broadcast along inner row dims: gathered row by row (whole 32-byte rows in UB)
    return None


_view_kind_kept = functools.lru_cache(maxsize=1024)(_view_kind)


def row_map(shape: tuple[int, ...], space: tuple[int, ...],
            row_dims: int | None = None) -> tuple[tuple[int, int, int], ...] | None:
    """For a tensor broadcast along some row dims of the space in a way no single strided window can
    read ([64,1,512] on [64,8,512]): per row dim (space extent, rows of the space inside it, the
    tensor's row stride or 0 where it broadcasts). None for tensors that need no row map."""
    if len(shape) > len(space) or not space:
        return None
    p = len(space) - 1 if row_dims is None else row_dims
    s = ((1,) * (len(space) - len(shape)) + tuple(shape))
    lead_s, lead_o = s[:p], space[:p]
    if lead_s == lead_o or all(d == 1 for d in lead_s) or row_period(shape, space, row_dims) is not None:
        return None
    if any(a != b and a != 1 for a, b in zip(lead_s, lead_o, strict=True)):
        return None
    out = []
    for d in range(p):
        inner_o = 1
        for e in lead_o[d + 1:]:
            inner_o *= e
        stride = 1
        for e in lead_s[d + 1:]:
            stride *= e
        out.append((lead_o[d], inner_o, stride if lead_s[d] != 1 else 0))
    return tuple(out)


def row_period(shape: tuple[int, ...], space: tuple[int, ...], row_dims: int | None = None) -> int | None:
    """For a tensor whose row dims are 1s followed by the space's trailing row dims (a [C,1,1] bias on
    [N,C,H,W], a [S,D] table on [B,S,D]): the number of rows after which its rows repeat. None when
    the tensor has no such periodic layout (including when it is simply full or broadcast)."""
    if len(shape) > len(space) or not space:
        return None
    p = len(space) - 1 if row_dims is None else row_dims
    lead_s = ((1,) * (len(space) - len(shape)) + tuple(shape))[:p]
    lead_o = space[:p]
    for j in range(1, p):
        if all(d == 1 for d in lead_s[:j]) and lead_s[j:] == lead_o[j:] and lead_s[:j] != lead_o[:j]:
            n = 1
            for d in lead_o[j:]:
                n *= d
            if n > 1:  # a period of one row is a plain row broadcast ([64] on [4096,1,64])
                return n
    return None


@dataclass(frozen=True, slots=True)
class FusedKernel:
    """One kernel of a fusion plan."""

    name: str
    family: str  # "vector" | "cube" | "cube_vector" | "attention"
    nodes: tuple[Node, ...]  # topological order
    root: Node | None  # the matmul/conv of cube families (attention: the P V matmul)
    space: tuple[int, ...]  # the iteration space (the cube result for cube families)
    row_dims: int  # rows = prod(space[:row_dims]), cols = prod(space[row_dims:])
    views: tuple[tuple[Node, str], ...]  # view of every node on the space
    inputs: tuple[Node, ...]  # tensors read from GM (placeholders or other kernels' outputs)
    outputs: tuple[Node, ...]  # tensors written to GM (graph outputs or used by other kernels)
    reasons: tuple[tuple[Node, FusionRule], ...]  # why each node is here
    notes: tuple[str, ...] = ()  # plan-level notes (the cost-aware fusion decision), shown with the kernel
    # the cost-aware choice for a matmul + row-reduction epilogue: C tiles over every core, SyncAll, rows
    # over every AIV (the schedule's sync_all(...) overrides it)
    sync_all: bool = False

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(n.op.value for n in self.nodes)

    @property
    def can_sync_all(self) -> bool:
        """A matmul fused with an epilogue that reduces whole rows: it may take the sync_all plan."""
        return (self.family == "cube_vector" and self.root is not None and self.root.op is Op.MATMUL
                and self.has_row_reduction())

    def view(self, node: Node) -> str:
        for n, v in self.views:  # the node itself first (equal nodes have equal shapes, so equal views)
            if n is node:
                return v
        for n, v in self.views:
            if n == node:
                return v
        raise KeyError(node)

    @property
    def rows(self) -> int:
        n = 1
        for d in self.space[: self.row_dims]:
            n *= d
        return n

    @property
    def cols(self) -> int:
        n = 1
        for d in self.space[self.row_dims:]:
            n *= d
        return n

    def input_view(self, node: Node) -> str | None:
        return view_kind(node.shape, self.space, self.row_dims)

    def input_row_map(self, node: Node) -> tuple[tuple[int, int, int], ...] | None:
        return row_map(node.shape, self.space, self.row_dims)

    def input_period(self, node: Node) -> int | None:
        """Rows after which `node`'s rows repeat on this kernel's space (see row_period)."""
        return row_period(node.shape, self.space, self.row_dims)

    @property
    def row_periods(self) -> tuple[int, ...]:
        return tuple(p for i in self.inputs if (p := self.input_period(i)) is not None)

    def has_row_reduction(self) -> bool:
        return any(n.info.kind is Kind.REDUCE for n in self.nodes)


@dataclass(frozen=True, slots=True)
class FusionPlan:
    graph: Graph
    kernels: tuple[FusedKernel, ...]
    fused: bool

    def kernel_of(self, node: Node) -> FusedKernel:
        for k in self.kernels:
            if any(n is node or n == node for n in k.nodes):
                return k
        raise ScheduleError(f"tensor {self.graph.names.get(node, '?')} is not computed by any kernel "
                            "(placeholders and constants are inputs, not kernels)")


class _Group:
    def __init__(self, idx: int, first: Node, family: str, space: tuple[int, ...], closed: bool):
        self.idx = idx
        self.nodes: list[Node] = []
        self.views: dict[Node, str] = {}
        self.reasons: dict[Node, FusionRule] = {}
        self.family = family
        self.root = first if family == "cube" else None
        self.space = space
        self.row_dims = 2 if first.op is Op.CONV2D else max(len(space) - 1, 0)
        self.closed = closed
        self.deps: set[int] = set()


_LAYOUT_OPS = {Op.RESHAPE, Op.TRANSPOSE, Op.BROADCAST_TO, Op.SLICE, Op.CONCAT, Op.TOPK, Op.GATHER, Op.SCATTER,
               Op.SORT, Op.HISTOGRAM, Op.MOE_GATING}


def slice_view(n: Node) -> bool:
    """A split part (slice) that a vector kernel reads as a strided window of its input: along the last
    axis (a column band of every row) or with nothing before its axis (whole rows). Other slices move in
    kernels of their own (lower/slices.py)."""
    if n.op is not Op.SLICE:
        return False
    ax = n.attr("axis")
    return ax == n.ndim - 1 or all(d == 1 for d in n.shape[:ax])


def _is_row_reduce(n: Node) -> bool:
    axes = n.attr("axes")
    return n.info.kind is Kind.REDUCE and axes == (n.inputs[0].ndim - 1,)


def _reduce_space(n: Node) -> tuple[tuple[int, ...], int]:
    """([outer, reduced, inner], row dims) of a reduction over adjacent axes; ([outer, reduced], 1) when
    nothing follows the reduced axes (a row reduction of that view)."""
    shape, axes = n.inputs[0].shape, tuple(n.attr("axes"))
    lo, hi = (axes[0], axes[-1]) if axes else (0, len(shape) - 1)
    outer = red = inner = 1
    for d in shape[:lo]:
        outer *= d
    for d in shape[lo:hi + 1]:
        red *= d
    for d in shape[hi + 1:]:
        inner *= d
    return ((outer, red), 1) if inner == 1 else ((outer, red, inner), 2)


def _node_view(n: Node, g: _Group) -> str | None:
    """The view `n` would have in group `g`, or None if it does not fit g's [rows, cols] tiles."""
    for i in n.inputs:
        if i.op is Op.CONST:
            continue
        k = view_kind(i.shape, g.space, g.row_dims)
        if k is None or (i in g.views and g.views[i] != k):
            return None  # e.g. a keepdims=False statistic used as a row vector
    if row_map(n.shape, g.space, g.row_dims) is not None:
        return None  # a result smaller than the tiles: it starts a kernel of its own shape
    if n.info.kind is Kind.REDUCE:
        row_reduce = _is_row_reduce(n) and g.row_dims == len(g.space) - 1
        if not row_reduce or view_kind(n.inputs[0].shape, g.space, g.row_dims) != "full":
            return None
        return "col"
    return view_kind(n.shape, g.space, g.row_dims)


def _same_gating(a: Node, b: Node) -> bool:
    """Two moe_gating nodes of one call (they differ in `which` only)."""
    return {k: v for k, v in a.attrs if k != "which"} == {k: v for k, v in b.attrs if k != "which"}


def partition(graph: Graph, *, fuse: bool = True, keep_out: Iterable[Node] = (),
              split: Iterable[Node] = ()) -> FusionPlan:
    """Group the graph's compute nodes into kernels (see module doc). The matmul/conv nodes in `split`
    take no epilogue: their consumers start vector kernels (the cost-aware choice, plan/choose.py)."""
    return _partition(graph, fuse, tuple(keep_out), frozenset(split), frozenset())


def _partition(graph: Graph, fuse: bool, keep_out: tuple[Node, ...], split: frozenset[Node],
               torn_roots: frozenset[Node]) -> FusionPlan:
    """`partition`; `torn_roots` are matmul/conv nodes in `split` because a composite op of their
    epilogue did not fit their kernel whole (rule composite_whole)."""
    kept = set(keep_out)
    lone = set(split)
    groups: list[_Group] = []
    group_of: dict[Node, _Group] = {}
    by_composite: dict[object, _Group] = {}

    def new_group(n: Node, why: str) -> _Group:
        if n.info.kind is Kind.CUBE:
            # a grouped matmul's kernel takes no epilogue (its rows' groups are data)
            g = _Group(len(groups), n, "cube", n.shape, closed=n.op is Op.GROUPED_MATMUL)
        elif n.op in (Op.TOPK, Op.SORT) and (sib := next((g for g in groups if g.closed and g.nodes[0].op is n.op
                                                and g.nodes[0].inputs == n.inputs
                                                and g.nodes[0].attr("k") == n.attr("k")
                                                and g.nodes[0].attr("axis") == n.attr("axis")
                                                and g.nodes[0].attr("descending") == n.attr("descending")), None)):
            add(sib, n, rule("layout_boundary"), "full")  # values and indices of one topk / sort: one kernel
            return sib
        elif n.op is Op.MOE_GATING and (sib := next((g for g in groups if g.closed and g.nodes[0].op is n.op
                                                     and g.nodes[0].inputs == n.inputs
                                                     and _same_gating(g.nodes[0], n)), None)):
            add(sib, n, rule("layout_boundary"), "full")  # weights and ids of one gating: one kernel
            return sib
        elif slice_view(n):  # a strided window of the input, read into UB; elementwise consumers join it
            g = _Group(len(groups), n, "vector", n.shape, closed=False)
        elif n.op in _LAYOUT_OPS or (n.info.kind is Kind.REDUCE and not _is_row_reduce(n)):
            space = n.inputs[0].shape if n.info.kind is Kind.REDUCE else n.shape
            if n.op is Op.SCATTER:  # tokens x their row: the values written, not the cache
                space = (n.inputs[2].shape[0], math.prod(n.inputs[2].shape[1:]))
            g = _Group(len(groups), n, "vector", space, closed=True)
            if n.info.kind is Kind.REDUCE:  # iterate the reduction as [outer, reduced, inner]
                g.space, g.row_dims = _reduce_space(n)
            if n.op is Op.BROADCAST_TO:
                for p in range(len(n.shape) - 1, 0, -1):
                    if view_kind(n.inputs[0].shape, n.shape, p):
                        g.row_dims = p
                        break
        elif n.info.kind is Kind.REDUCE:
            g = _Group(len(groups), n, "vector", n.inputs[0].shape, closed=False)
        else:
            g = _Group(len(groups), n, "vector", n.shape, closed=False)
            # a [rows, cols] split every operand maps onto, strided windows preferred to row gathers
            ins = [i for i in n.inputs if i.op is not Op.CONST]
            splits = [p for p in range(len(n.shape) - 1, 0, -1) if all(view_kind(i.shape, n.shape, p) for i in ins)]
            clean = [p for p in splits if not any(row_map(i.shape, n.shape, p) for i in ins)]
            if clean or splits:
                g.row_dims = (clean or splits)[0]
        groups.append(g)
        add(g, n, rule(why), "full" if g.closed else (_node_view(n, g) or "full"))
        if n.composite is not None and not g.closed:  # a layout op's kernel takes no other op
            by_composite[n.composite] = g
        return g

    def add(g: _Group, n: Node, why: FusionRule, view: str) -> None:
        g.nodes.append(n)
        g.views[n] = view
        g.reasons[n] = why
        group_of[n] = g
        for i in n.inputs:
            if i in group_of and group_of[i] is not g:
                g.deps.add(group_of[i].idx)

    def depends_on(a: _Group, b: _Group) -> bool:
        stack, seen = [a.idx], set()
        while stack:
            i = stack.pop()
            if i == b.idx:
                return True
            if i in seen:
                continue
            seen.add(i)
            stack.extend(groups[i].deps)
        return False

    order = {n: i for i, n in enumerate(graph.nodes)}
    att = {n: m for m in (attention_matches(graph) if fuse else ())
           if m.bmm2 not in lone and not any(x in kept for x in m.nodes) for n in m.nodes}
    att_groups: dict[Node, _Group] = {}

    def merge(p: _Group, target: _Group) -> None:
        """Fold vector group `p` into `target`: two branches of the same inputs rejoin at a node of both."""
        p.reasons[p.nodes[0]] = rule("branch_join")
        for m in p.nodes:
            group_of[m] = target
        target.views.update(p.views)
        target.reasons.update(p.reasons)
        target.nodes = sorted(target.nodes + p.nodes, key=order.__getitem__)
        target.deps |= p.deps
        for g in groups:
            if p.idx in g.deps:
                g.deps.discard(p.idx)
                if g is not target:
                    g.deps.add(target.idx)
        for key, g in list(by_composite.items()):
            if g is p:
                by_composite[key] = target
        p.nodes, p.views, p.reasons, p.deps = [], {}, {}, set()

    for n in graph.nodes:
        if n.info.kind is Kind.LEAF:
            continue
        if n in att:  # one closed kernel for the whole attention
            m = att[n]
            if m.bmm2 not in att_groups:
                g = att_groups[m.bmm2] = _Group(len(groups), n, "attention", m.bmm2.shape, closed=True)
                g.root = m.bmm2
                groups.append(g)
            add(att_groups[m.bmm2], n, rule("attention_layout" if n in m.glue else "attention"), "full")
            continue
        if n.info.kind is Kind.CUBE:
            new_group(n, "cube_root" if groups else "new_kernel")
            continue
        if slice_view(n):
            new_group(n, "slice_window")
            continue
        if n.op in _LAYOUT_OPS:
            new_group(n, "layout_boundary")
            continue
        if n.info.kind is Kind.REDUCE and not _is_row_reduce(n):
            new_group(n, "non_row_reduction")
            continue
        if not fuse:
            same = by_composite.get(n.composite) if n.composite is not None else None
            view = _node_view(n, same) if same is not None else None
            others = [group_of[i] for i in n.inputs if i in group_of and group_of[i] is not same]
            if same is None or view is None or any(depends_on(o, same) for o in others):
                new_group(n, "unfused")
            else:
                add(same, n, rule("composite"), view)
            continue
        if n in kept:
            new_group(n, "kept_out")
            continue
        producers = [group_of[i] for i in n.inputs if i in group_of]
        if not producers:
            new_group(n, "new_kernel")
            continue
        target = max(producers, key=lambda g: g.idx)
        for p in sorted(set(producers) - {target}, key=lambda g: -g.idx):
            if _joinable(p, target, kept, depends_on, groups):
                merge(p, target)
        why = "space_mismatch"
        view = None
        if not target.closed and not any(group_of.get(i) is target and i in kept for i in n.inputs):
            view = _node_view(n, target)
            if view is not None and any(depends_on(p, target) for p in producers if p is not target):
                view, why = None, "cycle"
        if view is not None and target.family == "cube" and target.root in lone:
            view, why = None, "composite_whole" if target.root in torn_roots else "cost_split"
        if view is None:
            new_group(n, why)
            continue
        if target.family == "cube":
            target.family = "cube_vector"
            name = "cube_epilogue"
        else:
            name = "row_reduction" if (n.info.kind is Kind.REDUCE or any(
                target.views.get(i) == "col" for i in n.inputs)) else "elementwise_chain"
            if target.family == "cube_vector":
                name = "cube_epilogue"
        add(target, n, rule(name), view)

    # a composite op (layer_norm, rms_norm, ...) goes into a matmul/conv kernel whole or not at all: a
    # part left outside would read the cube's result back from GM, moving more bytes than no fusion
    members: dict[object, list[Node]] = {}  # each composite's compute nodes, found once
    for n in graph.nodes:
        if n.composite is not None and n.info.kind is not Kind.LEAF:
            members.setdefault(n.composite, []).append(n)
    torn = {g.root for g in groups if g.family == "cube_vector" and g.root not in lone
            and any(n.composite is not None and any(group_of.get(m) is not g for m in members.get(n.composite, ()))
                    for n in g.nodes)}
    if torn:
        return _partition(graph, fuse, keep_out, frozenset(lone | torn), torn_roots | torn)
    return FusionPlan(graph, tuple(_finish(graph, g, group_of) for g in _in_order(groups)), fuse)


def _joinable(p: _Group, target: _Group, kept: set[Node], depends_on, groups: list[_Group]) -> bool:
    """Whether vector group `p` can fold into vector group `target` (both feed one node): the same open
    [rows, cols] tiles, no kept-out op, and no third kernel between them (that would make a cycle)."""
    if p.family != "vector" or target.family != "vector" or p.closed or target.closed:
        return False
    if p.space != target.space or p.row_dims != target.row_dims or any(m in kept for m in p.nodes):
        return False
    if depends_on(p, target):
        return False
    return not any(d != p.idx and depends_on(groups[d], p) for d in target.deps)


def _in_order(groups: list[_Group]) -> list[_Group]:
    """The live groups, each after the groups it reads (a merge can move a kernel after its readers)."""
    live = {g.idx: g for g in groups if g.nodes}
    done: set[int] = set()
    out: list[_Group] = []
    while len(out) < len(live):
        g = next(g for i, g in sorted(live.items()) if i not in done and g.deps <= done)
        done.add(g.idx)
        out.append(g)
    return out


def _finish(graph: Graph, g: _Group, group_of: dict[Node, _Group]) -> FusedKernel:
    members = set(g.nodes)
    inputs: list[Node] = []
    for n in g.nodes:
        for i in n.inputs:
            if i not in members and i.op is not Op.CONST and i not in inputs:
                inputs.append(i)
    outs = [n for n in g.nodes
            if n in graph.outputs or any(u not in members for u in graph.users[n])]
    head = g.root if g.root is not None else g.nodes[-1]
    name = graph.names[head] if g.family == "cube" else graph.names[g.nodes[-1]]
    if g.family == "cube_vector":
        name = graph.names[g.nodes[-1]]
    return FusedKernel(
        name=name, family=g.family, nodes=tuple(g.nodes), root=g.root, space=g.space, row_dims=g.row_dims,
        views=tuple(g.views.items()), inputs=tuple(inputs), outputs=tuple(outs),
        reasons=tuple(g.reasons.items()),
    )

