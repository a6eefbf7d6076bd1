"""What the code generator may write differently for a kernel, read from its fusion graph at lowering time
(never from the instructions): the tensors whose rows the code takes at run time (`Kernel.runtime_rows`: a
row-tiled vector kernel's, the rows of a matmul's A and C and of its epilogue's tensors, or a conv's
images), and the one softmax / layer_norm / rms_norm a vector kernel is, for the high-level API
(`Kernel.row_composite`)."""

from __future__ import annotations

from collections import Counter

from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..ir.ops import Op
from ..tileir.hints import RowComposite, RuntimeRows
from ..tileir.memo import KernelMemo

__all__ = ["row_composite_of", "runtime_rows_of", "runtime_m_of", "runtime_batch_of"]


# the primitive ops each row composite expands into (composites.py), before its optional gamma and beta
_ROW_COMPOSITE_OPS = {
    "softmax": Counter({Op.REDUCE_MAX: 1, Op.SUB: 1, Op.EXP: 1, Op.REDUCE_SUM: 1, Op.DIV: 1}),
    "layer_norm": Counter({Op.REDUCE_MEAN: 2, Op.SUB: 1, Op.SQUARE: 1, Op.ADD: 1, Op.RSQRT: 1, Op.MUL: 1}),
    "rms_norm": Counter({Op.SQUARE: 1, Op.REDUCE_MEAN: 1, Op.ADD: 1, Op.RSQRT: 1, Op.MUL: 1}),
}


def row_composite_of(fk: FusedKernel, names: dict[Node, str]) -> RowComposite | None:
    """The kernel's one row composite, when its nodes are exactly one whole softmax / layer_norm / rms_norm
    call reading one full tensor (plus gamma and beta row vectors of its dtype) and writing one; else None."""
    comps = {n.composite for n in fk.nodes}
    if len(comps) != 1 or len(fk.outputs) != 1:
        return None
    (comp,) = comps
    if comp is None or comp.name not in _ROW_COMPOSITE_OPS:
        return None
    out = fk.outputs[0]
    full = [i for i in fk.inputs if fk.input_view(i) == "full"]
    if (len(full) != 1 or out is not fk.nodes[-1] or fk.view(out) != "full" or fk.input_period(full[0]) is not None
            or full[0].dtype != out.dtype or out.dtype not in ("float16", "float32")):
        return None
    x = full[0]
    affine = {}  # Op.MUL -> gamma, Op.ADD -> beta: a composite node reading a row vector
    for n in fk.nodes:
        for i in n.inputs:
            if i in fk.inputs and i is not x:
                if fk.input_view(i) != "row" or i.dtype != x.dtype or n.op not in (Op.MUL, Op.ADD) or n.op in affine:
                    return None
                affine[n.op] = i
    if len(affine) != len(fk.inputs) - 1 or (comp.name != "layer_norm" and Op.ADD in affine) or (
            comp.name == "softmax" and affine):
        return None
    want = _ROW_COMPOSITE_OPS[comp.name] + Counter(affine.keys())
    if Counter(n.op for n in fk.nodes) != want:
        return None
    eps = [i.attr("value") for n in fk.nodes if n.op is Op.ADD for i in n.inputs if i.op is Op.CONST]
    if comp.name != "softmax" and len(eps) != 1:
        return None
    g, b = affine.get(Op.MUL), affine.get(Op.ADD)
    return RowComposite(comp.name, names[x], names[out], names[g] if g is not None else "",
                        names[b] if b is not None else "", float(eps[0]) if eps else 0.0)


def _scaled(fk: FusedKernel, names: dict[Node, str], nodes: tuple[Node, ...]) -> list[str] | None:
    """The names of `nodes` (GM tensors of the kernel) that hold the kernel's rows in their leading dims (a
    full tile or a column vector); None when one repeats or gathers rows, or sits on the space otherwise.
    Row vectors and scalars hold none."""
    rd = fk.row_dims
    lead = fk.space[:rd]
    scaled = []
    for node in nodes:
        view = fk.input_view(node) if node in fk.inputs else fk.view(node)
        if node in fk.inputs and (fk.input_period(node) is not None or fk.input_row_map(node) is not None):
            return None
        if node not in fk.inputs and tuple(node.shape) in ((*lead, *fk.space[rd:]), (*lead, *(1,) * (len(
                fk.space) - rd))):
            scaled.append(names[node])  # an output holds the rows (at one row its view may read "row")
            continue
        if view in ("row", "scalar"):
            continue
        tail = fk.space[rd:] if view == "full" else (1,) * (len(fk.space) - rd)
        if view not in ("full", "col") or tuple(node.shape) != (*lead, *tail):
            return None
        scaled.append(names[node])
    return scaled


def runtime_rows_of(fk: FusedKernel, names: dict[Node, str], cores: int) -> RuntimeRows | None:
    """The tensors of a row-tiled vector kernel that scale with its row count, when every tensor either
    holds the kernel's rows in its leading dims (a full tile or a column vector) or none at all (a row
    vector or a scalar); None when a tensor repeats or gathers rows (its rows are not the kernel's), and
    when the kernel's rows are no dimension at all (a 1-D tensor is one row: nothing to take at run time)."""
    if fk.row_dims == 0:
        return None
    scaled = _scaled(fk, names, (*fk.inputs, *fk.outputs))
    return RuntimeRows(fk.row_dims, tuple(dict.fromkeys(scaled)), cores) if scaled else None


_SCALED = KernelMemo(size=8)  # runtime_m_of's scaled tensors per (fused kernel, names), both kept alive with it


def runtime_m_of(fk: FusedKernel, names: dict[Node, str], cores: int, per_row_tile: int,
                 ws_per_core: int) -> RuntimeRows | None:
    """The tensors of a matmul (or matmul + epilogue) kernel that scale with its M, when A [*lead, K] is
    read untransposed, B is one [K, N] matrix (so every row of C is A's row times B, whatever the leading
    dims) and every epilogue tensor holds C's rows or none; None otherwise (conv, batched or transposed
    operands, repeating rows), and the kernel keeps its shapes."""
    root = fk.root
    if root is None or root.op is not Op.MATMUL or root.attr("transpose_a", False):
        return None
    a, b = root.inputs
    lead = tuple(root.shape[:-1])
    if len(b.shape) != 2 or tuple(a.shape[:-1]) != lead or tuple(fk.space) != tuple(root.shape) or (
            fk.row_dims != len(lead)):
        return None
    # a function of the kernel and its names alone, asked by every emit of the kernel (probes, passes)
    rest = _SCALED.get((fk, names), lambda: _scaled(fk, names, tuple(n for n in (*fk.inputs, *fk.outputs)
                                                                       if n is not a and n is not b)))
    if rest is None:
        return None
    return RuntimeRows(len(lead), tuple(dict.fromkeys([names[a], *rest])), cores, rows="M", tile="tile_m",
                       row_tiles="m_tiles", per_row_tile=per_row_tile, ws_per_core=ws_per_core)


def runtime_batch_of(fk: FusedKernel, names: dict[Node, str], cores: int, per_image: int,
                     ws_per_core: int) -> RuntimeRows | None:
    """The tensors of a conv (or conv + epilogue) kernel that scale with its batch: the feature map, and every
    epilogue tensor of the output's whole shape; tensors with fewer dims (a [Cout, 1, 1] bias) or a batch of
    one broadcast to every image (the lowering reads their rows modulo Cout). None when a tensor's batch is
    neither (its images are not the run's) or it gathers rows."""
    root = fk.root
    if root is None or root.op is not Op.CONV2D:
        return None
    x, w = root.inputs
    space, n = tuple(root.shape), root.shape[0]
    scaled = [names[x]]
    for node in (*fk.inputs, *fk.outputs):
        shape = tuple(node.shape)
        if node in fk.inputs and fk.input_row_map(node) is not None:
            return None
        if node is x or node is w or len(shape) < len(space) or (shape[0] == 1 and n > 1):
            continue
        if shape != space:
            return None
        scaled.append(names[node])
    return RuntimeRows(1, tuple(dict.fromkeys(scaled)), cores, rows="batch", tile="", per_row_tile=per_image,
                       ws_per_core=ws_per_core)
