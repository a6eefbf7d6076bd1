"""Lowering of the layout and index ops that form kernels of their own (vector family):
transpose of the last two dims, top-k along the last axis, gather along axis 0, and the strided moves of
split's parts and concat (slices.py).
(reshape and broadcast_to are copies through the vector body; see families.py.)"""

from __future__ import annotations

from ..core.errors import UnsupportedError
from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..ir.ops import Op
from ..tileir.expr import Const, E, Load, Var
from ..tileir.program import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
    DeQue,
    EnQue,
    Free,
    Kernel,
    Let,
    Loop,
    Pipe,
    QuePos,
    Reduce,
    Region,
    SetFlag,
    Stmt,
    Tier,
    TopK,
    VecOp,
    WaitFlag,
)
from .config import KernelConfig
from .gating import lower_gating_kernel
from .scatter import lower_scatter_kernel
from .slices import SLICE_OPS, lower_slice_kernel
from .sort import lower_histogram_kernel, lower_sort_kernel
from .ub import ub_buffer as _ub
from .ub import whole_blocks as _pad
from .vector_body import ident

__all__ = ["lower_layout_kernel", "lower_axis_reduce"]

def _arrive(src: Region, dst: Region, src_dtype: str, cdt: str, rows: int, cols: int,
            comment: str) -> tuple[list[Stmt], list[Buffer]]:
    """The VecOps that bring `src` (of `src_dtype`) into the compute dtype in `dst`, and any scratch they
    need: a copy, one Cast, or int8 -> float16 -> cdt (the vector unit converts int8 to half only; every
    int8 value is a float16, so the two steps are exact)."""
    if src_dtype == cdt:
        return [VecOp("copy", dst, (src,), comment=comment)], []
    if src_dtype != "int8":
        return [VecOp("cast", dst, (src,), comment=comment)], []
    h = _ub("tmp_half", "float16", rows, cols, 1, None, "int8 -> float16 step of the arrival cast")
    hr = Region(h.name, Const(0), src.rows, src.cols, Const(h.cols))
    return [VecOp("cast", hr, (src,), comment=f"{comment}: int8 -> float16 (exact)"),
            VecOp("cast", dst, (hr,), comment=f"{comment}: float16 -> {cdt}")], [h]


def _kernel(fk: FusedKernel, names: dict[Node, str], bufs: list[Buffer], body: tuple[Stmt, ...], total: int,
            bd: int, tiling: tuple[tuple[str, int], ...], note: str) -> Kernel:
    loop = Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), body,
                comment=f"parallel_loop: {total} tiles over {bd} cores")
    return Kernel(name=ident(fk.name), family="vector", kernel_type="AIV_ONLY", block_dim=bd,
                  params=tuple(names[i] for i in fk.inputs) + tuple(names[o] for o in fk.outputs),
                  buffers=tuple(bufs), aiv=(loop,), tiling=tiling + (("tiles", total), ("block_dim", bd)),
                  ops=tuple(names[n] for n in fk.nodes), notes=(note,), vec_per_block=1)


def lower_layout_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel | tuple:
    n = fk.nodes[0]
    if n.op is Op.TRANSPOSE:
        return _transpose(fk, names, cfg)
    if n.op is Op.TOPK:
        return _topk(fk, names, cfg)
    if n.op is Op.GATHER:
        return _gather(fk, names, cfg)
    if n.op is Op.SCATTER:
        return lower_scatter_kernel(fk, names, cfg)
    if n.op is Op.MOE_GATING:
        return lower_gating_kernel(fk, names, cfg)
    if n.op in SLICE_OPS:
        return lower_slice_kernel(fk, names, cfg)
    if n.op is Op.SORT:
        return lower_sort_kernel(fk, names, cfg)
    if n.op is Op.HISTOGRAM:
        return lower_histogram_kernel(fk, names, cfg)
    raise UnsupportedError(f"kernel {fk.name}: {n.op.value} is not a layout kernel")


def _transpose(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    n = fk.nodes[0]
    x = n.inputs[0]
    perm = tuple(n.attr("perm"))
    nd = len(perm)
    if nd < 2 or perm[:-2] != tuple(range(nd - 2)) or perm[-2:] != (nd - 1, nd - 2):
        raise UnsupportedError(f"{names[n]} = transpose(perm={list(perm)}): only swapping the last two axes is "
                               "lowered; reshape so the axes to swap are last")
    a_dim, b_dim = x.shape[-2], x.shape[-1]
    batch = x.size // (a_dim * b_dim)
    ta, tb = min(cfg.tile_rows, a_dim), min(cfg.tile_cols, b_dim)
    at, bt = -(-a_dim // ta), -(-b_dim // tb)
    total = batch * at * bt
    bd = max(1, min(cfg.cores, total))
    xi, yo = names[x], names[n]
    bufs = [_ub(f"in_{ident(xi)}", x.dtype, ta, tb, cfg.depth, QuePos.VECIN, f"{xi} tile"),
            _ub(f"out_{ident(yo)}", n.dtype, tb, ta, cfg.depth, QuePos.VECOUT, f"{yo} tile")]
    i_b, o_b = bufs[0].name, bufs[1].name
    base = E.mul(Var("bi"), a_dim * b_dim)
    body: tuple[Stmt, ...] = (
        Let("bi", E.div(Var("t"), at * bt)), Let("ai", E.div(E.mod(Var("t"), at * bt), bt)),
        Let("bj", E.mod(Var("t"), bt)),
        Let("a0", E.mul(Var("ai"), ta)), Let("alen", E.min(ta, E.sub(a_dim, Var("a0")))),
        Let("b0", E.mul(Var("bj"), tb)), Let("blen", E.min(tb, E.sub(b_dim, Var("b0")))),
        Alloc(i_b),
        Copy(Region(i_b, Const(0), Var("alen"), Var("blen"), Const(bufs[0].cols)),
             Region(xi, E.add(base, E.add(E.mul(Var("a0"), b_dim), Var("b0"))), Var("alen"), Var("blen"),
                    Const(b_dim), gm=True), comment=f"copy in {xi}"),
        EnQue(i_b), DeQue(i_b), Alloc(o_b),
        VecOp("transpose", Region(o_b, Const(0), Var("blen"), Var("alen"), Const(bufs[1].cols)),
              (Region(i_b, Const(0), Var("alen"), Var("blen"), Const(bufs[0].cols)),),
              comment=f"{yo} = transpose"),
        EnQue(o_b), Free(i_b), DeQue(o_b),
        Copy(Region(yo, E.add(base, E.add(E.mul(Var("b0"), a_dim), Var("a0"))), Var("blen"), Var("alen"),
                    Const(a_dim), gm=True), Region(o_b, Const(0), Var("blen"), Var("alen"), Const(bufs[1].cols)),
             comment=f"copy out {yo}"),
        Free(o_b))
    return _kernel(fk, names, bufs, body, total, bd,
                   (("batch", batch), ("rows", a_dim), ("cols", b_dim), ("tile_rows", ta), ("tile_cols", tb)),
                   f"transpose of the last two axes in {ta}x{tb} tiles")


def _topk(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    vals = next((m for m in fk.nodes if m.attr("which") == "values"), None)
    idxs = next((m for m in fk.nodes if m.attr("which") == "indices"), None)
    n = fk.nodes[0]
    x = n.inputs[0]
    axis, k = n.attr("axis") % x.ndim, n.attr("k")
    if axis != x.ndim - 1:
        raise UnsupportedError(f"{names[n]} = topk(axis={n.attr('axis')}): only the last axis is lowered; "
                               "transpose the axis last first")
    C = x.shape[-1]
    R = x.size // C
    tr = max(1, min(cfg.tile_rows, R))
    total = -(-R // tr)
    bd = max(1, min(cfg.cores, total))
    xi = names[x]
    bufs = [_ub(f"in_{ident(xi)}", x.dtype, tr, C, cfg.depth, QuePos.VECIN, f"{xi} rows")]
    vb = _ub(f"out_{ident(names[vals])}" if vals is not None else "topk_values", x.dtype, tr, k, cfg.depth,
             QuePos.VECOUT if vals is not None else None, "top-k values")
    ib = _ub(f"out_{ident(names[idxs])}" if idxs is not None else "topk_indices", "int32", tr, k, cfg.depth,
             QuePos.VECOUT if idxs is not None else None, "top-k indices")
    bufs += [vb, ib]
    i_b = bufs[0].name
    stmts: list[Stmt] = [
        Let("r0", E.mul(Var("t"), tr)), Let("rlen", E.min(tr, E.sub(R, Var("r0")))),
        Alloc(i_b), Copy(Region(i_b, Const(0), Var("rlen"), Const(C), Const(bufs[0].cols)),
                         Region(xi, E.mul(Var("r0"), C), Var("rlen"), Const(C), Const(C), gm=True),
                         comment=f"copy in {xi}"),
        EnQue(i_b), DeQue(i_b)]
    outs = [(b, m) for b, m in ((vb, vals), (ib, idxs)) if m is not None]
    stmts += [Alloc(b.name) for b, _ in outs]
    stmts.append(TopK(Region(vb.name, Const(0), Var("rlen"), Const(k), Const(vb.cols)),
                      Region(ib.name, Const(0), Var("rlen"), Const(k), Const(ib.cols)),
                      Region(i_b, Const(0), Var("rlen"), Const(C), Const(bufs[0].cols)), k,
                      comment=f"topk k={k}"))
    stmts += [EnQue(b.name) for b, _ in outs] + [Free(i_b)]
    for b, m in outs:
        stmts += [DeQue(b.name),
                  Copy(Region(names[m], E.mul(Var("r0"), k), Var("rlen"), Const(k), Const(k), gm=True),
                       Region(b.name, Const(0), Var("rlen"), Const(k), Const(b.cols)), comment=f"copy out {names[m]}"),
                  Free(b.name)]
    return _kernel(fk, names, bufs, tuple(stmts), total, bd,
                   (("rows", R), ("cols", C), ("k", k), ("tile_rows", tr)), f"top-{k} of full rows of {C}")


def _gather(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    n = fk.nodes[0]
    x, ind = n.inputs
    if n.attr("axis") % x.ndim != 0:
        raise UnsupportedError(f"{names[n]} = gather(axis={n.attr('axis')}): only axis 0 is lowered "
                               "(rows of a table, as MoE routing uses)")
    E_rows = x.shape[0]
    D = x.size // E_rows
    T = ind.size
    tr, tc = max(1, min(cfg.tile_rows, T)), min(cfg.tile_cols, D)
    rt, ct = -(-T // tr), -(-D // tc)
    total = rt * ct
    bd = max(1, min(cfg.cores, total))
    xi, ii, yo = names[x], names[ind], names[n]
    bufs = [_ub(f"in_{ident(ii)}", ind.dtype, 1, tr, cfg.depth, QuePos.VECIN, f"{ii} for this tile"),
            _ub(f"out_{ident(yo)}", n.dtype, tr, tc, cfg.depth, QuePos.VECOUT, f"gathered rows of {xi}")]
    i_b, o_b = bufs[0].name, bufs[1].name
    div = n.attr("row_divisor", 1)  # moe_init_routing: pair index t*k+j -> token row t
    row = Loop("r", Const(0), Var("rlen"), Const(1), (
        Let("e", E.div(Load(i_b, Var("r")), div) if div != 1 else Load(i_b, Var("r"))),
        Copy(Region(o_b, E.mul(Var("r"), bufs[1].cols), Const(1), Var("clen"), Const(bufs[1].cols)),
             Region(xi, E.add(E.mul(Var("e"), D), Var("c0")), Const(1), Var("clen"), Const(D), gm=True),
             comment=f"row {xi}[{ii}[r]]")), comment="one table row per index (scalar reads the index)")
    body: tuple[Stmt, ...] = (
        Let("r0", E.mul(E.div(Var("t"), ct), tr)), Let("rlen", E.min(tr, E.sub(T, Var("r0")))),
        Let("c0", E.mul(E.mod(Var("t"), ct), tc)), Let("clen", E.min(tc, E.sub(D, Var("c0")))),
        Alloc(i_b), Copy(Region(i_b, Const(0), Const(1), Var("rlen"), Const(bufs[0].cols)),
                         Region(ii, Var("r0"), Const(1), Var("rlen"), Const(T), gm=True), comment=f"copy in {ii}"),
        EnQue(i_b), DeQue(i_b),
        SetFlag(Pipe.MTE2, Pipe.S, 0), WaitFlag(Pipe.MTE2, Pipe.S, 0),  # indices in UB before the scalar reads
        Alloc(o_b),
        SetFlag(Pipe.MTE3, Pipe.MTE2, 0), WaitFlag(Pipe.MTE3, Pipe.MTE2, 0),  # the slot's last copy-out done
        row,
        SetFlag(Pipe.MTE2, Pipe.MTE3, 0), WaitFlag(Pipe.MTE2, Pipe.MTE3, 0),  # rows landed before copy-out
        EnQue(o_b), Free(i_b), DeQue(o_b),
        Copy(Region(yo, E.add(E.mul(Var("r0"), D), Var("c0")), Var("rlen"), Var("clen"), Const(D), gm=True),
             Region(o_b, Const(0), Var("rlen"), Var("clen"), Const(bufs[1].cols)), comment=f"copy out {yo}"),
        Free(o_b))
    return _kernel(fk, names, bufs, body, total, bd,
                   (("rows", T), ("cols", D), ("table_rows", E_rows), ("tile_rows", tr), ("tile_cols", tc)),
                   f"gather of {T} rows of {D} from a {E_rows}-row table"
                   + (f", row = index // {div}" if div != 1 else ""))


# ---- reductions over axes other than the last ------------------------------------------------------
def lower_axis_reduce(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    """reduce_sum/mean/max over adjacent axes a0..a1 of x viewed as [outer, red, inner].

    inner == 1 (trailing axes, or all axes): row reduction of [outer, red] streamed over column
    chunks. inner > 1: each tile owns `tc` columns of one outer slice and accumulates the `red` rows
    into a row vector, one vector instruction per row."""
    n = fk.nodes[0]
    x = n.inputs[0]
    axes = tuple(n.attr("axes"))
    if list(axes) != list(range(axes[0], axes[-1] + 1)):
        raise UnsupportedError(f"{names[n]} = {n.op.value}(axes={list(axes)}): only adjacent axes are lowered; "
                               "reduce in two steps")
    shape = x.shape
    outer = inner = red = 1
    for d in shape[:axes[0]]:
        outer *= d
    for d in shape[axes[0]:axes[-1] + 1]:
        red *= d
    for d in shape[axes[-1] + 1:]:
        inner *= d
    cdt = "float32" if x.dtype in ("float16", "bfloat16", "float32") else "int32"
    op = {"reduce_sum": "sum", "reduce_mean": "sum", "reduce_max": "max"}[n.op.value]
    init = (-3.0e38 if cdt == "float32" else -(2**31)) if op == "max" else 0.0  # below every value of cdt
    xi, yo = names[x], names[n]
    if inner == 1:
        return _row_reduce(fk, names, cfg, x, n, outer, red, cdt, op, init)
    tr, tc = max(1, min(cfg.tile_rows, red)), min(cfg.tile_cols, inner)
    ct = -(-inner // tc)
    total = outer * ct
    bd = max(1, min(cfg.cores, total))
    b_in = _ub(f"in_{ident(xi)}", x.dtype, tr, tc, cfg.depth, QuePos.VECIN, f"{xi} rows")
    b_f = _ub("tmp_full", cdt, tr, tc, 1, None, f"{cdt} rows")
    b_acc = _ub(f"acc_{ident(yo)}", cdt, 1, tc, 1, None, f"{op} over {red} rows")
    b_out = _ub(f"out_{ident(yo)}", n.dtype, 1, tc, cfg.depth, QuePos.VECOUT, f"{yo} to GM")
    acc = Region(b_acc.name, Const(0), Const(1), Var("clen"), Const(b_acc.cols))
    vop = "add" if op == "sum" else "max"
    arrive, extra = _arrive(Region(b_in.name, Const(0), Var("rlen"), Var("clen"), Const(b_in.cols)),
                            Region(b_f.name, Const(0), Var("rlen"), Var("clen"), Const(b_f.cols)), x.dtype, cdt,
                            tr, tc, f"{xi} {x.dtype} -> {cdt}")
    rows = Loop("r", Const(0), Var("rlen"), Const(1), (
        VecOp(vop, acc, (acc, Region(b_f.name, E.mul(Var("r"), b_f.cols), Const(1), Var("clen"),
                                     Const(b_f.cols))), comment=f"{yo} {op}= row r"),),
        comment="one vector instruction per reduced row")
    chunk = Loop("rc", Const(0), Const(-(-red // tr)), Const(1), (
        Let("q0", E.mul(Var("rc"), tr)), Let("rlen", E.min(tr, E.sub(red, Var("q0")))),
        Alloc(b_in.name),
        Copy(Region(b_in.name, Const(0), Var("rlen"), Var("clen"), Const(b_in.cols)),
             Region(xi, E.add(E.mul(Var("o"), red * inner), E.add(E.mul(Var("q0"), inner), Var("c0"))),
                    Var("rlen"), Var("clen"), Const(inner), gm=True), comment=f"copy in {xi}"),
        EnQue(b_in.name), DeQue(b_in.name), *arrive,
        Free(b_in.name), rows), comment=f"the {red} reduced rows in chunks of {tr}")
    tail: list[Stmt] = []
    if n.op.value == "reduce_mean":
        tail.append(VecOp("muls", acc, (acc,), 1.0 / red, comment=f"mean = sum / {red}"))
    out_r = Region(b_out.name, Const(0), Const(1), Var("clen"), Const(b_out.cols))
    tail += [Alloc(b_out.name), VecOp("cast" if n.dtype != cdt else "copy", out_r, (acc,),
                                      comment=f"{yo} {cdt} -> {n.dtype}"),
             EnQue(b_out.name), DeQue(b_out.name),
             Copy(Region(yo, E.add(E.mul(Var("o"), inner), Var("c0")), Const(1), Var("clen"), Const(inner), gm=True),
                  out_r, comment=f"copy out {yo}"), Free(b_out.name)]
    body: tuple[Stmt, ...] = (
        Let("o", E.div(Var("t"), ct)), Let("c0", E.mul(E.mod(Var("t"), ct), tc)),
        Let("clen", E.min(tc, E.sub(inner, Var("c0")))),
        VecOp("duplicate", acc, (), init, comment=f"init {yo}"), chunk, *tail)
    return _kernel(fk, names, [b_in, b_f, *extra, b_acc, b_out], body, total, bd,
                   (("outer", outer), ("red", red), ("inner", inner), ("tile_rows", tr), ("tile_cols", tc)),
                   f"{op} over axes {list(axes)}: {red} rows accumulated into row vectors of {tc} columns")


def _row_reduce(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig, x: Node, n: Node, rows: int, cols: int,
                cdt: str, op: str, init: float) -> Kernel:
    """[rows, cols] row reduction streamed over column chunks (trailing axes, or all axes as one row)."""
    xi, yo = names[x], names[n]
    tr, tc = max(1, min(cfg.tile_rows, rows)), min(cfg.tile_cols, cols)
    total = -(-rows // tr)
    bd = max(1, min(cfg.cores, total))
    b_in = _ub(f"in_{ident(xi)}", x.dtype, tr, tc, cfg.depth, QuePos.VECIN, f"{xi} chunk")
    b_f = _ub("tmp_full", cdt, tr, tc, 1, None, f"{cdt} chunk")
    b_acc = Buffer(f"acc_{ident(yo)}", Tier.UB, cdt, _pad(tr, cdt), 1, 1, None, CoreType.AIV, "row statistic")
    b_out = Buffer(f"out_{ident(yo)}", Tier.UB, n.dtype, _pad(tr, n.dtype), 1, cfg.depth, QuePos.VECOUT, CoreType.AIV,
                   f"{yo} to GM")
    acc = Region(b_acc.name, Const(0), Var("rlen"), Const(1), Const(1))
    full = Region(b_f.name, Const(0), Var("rlen"), Var("clen"), Const(b_f.cols))
    arrive, extra = _arrive(Region(b_in.name, Const(0), Var("rlen"), Var("clen"), Const(b_in.cols)), full, x.dtype,
                            cdt, tr, tc, f"{xi} -> {cdt}")
    loop = Loop("ci", Const(0), Const(-(-cols // tc)), Const(1), (
        Let("c0", E.mul(Var("ci"), tc)), Let("clen", E.min(tc, E.sub(cols, Var("c0")))),
        Alloc(b_in.name),
        Copy(Region(b_in.name, Const(0), Var("rlen"), Var("clen"), Const(b_in.cols)),
             Region(xi, E.add(E.mul(Var("r0"), cols), Var("c0")), Var("rlen"), Var("clen"), Const(cols), gm=True),
             comment=f"copy in {xi}"),
        EnQue(b_in.name), DeQue(b_in.name), *arrive,
        Free(b_in.name),
        Reduce(op, acc, full, accumulate=True, comment=f"{yo} {op}= chunk")),
        comment=f"column chunks of {tc}")
    tail: list[Stmt] = []
    if n.op.value == "reduce_mean":
        tail.append(VecOp("muls", acc, (acc,), 1.0 / cols, comment=f"mean = sum / {cols}"))
    out_r = Region(b_out.name, Const(0), Var("rlen"), Const(1), Const(1))
    tail += [Alloc(b_out.name),
             VecOp("cast" if n.dtype != cdt else "copy", out_r, (acc,), comment=f"{yo} -> {n.dtype}"),
             EnQue(b_out.name), DeQue(b_out.name),
             Copy(Region(yo, Var("r0"), Var("rlen"), Const(1), Const(1), gm=True), out_r, comment=f"copy out {yo}"),
             Free(b_out.name)]
    body: tuple[Stmt, ...] = (
        Let("r0", E.mul(Var("t"), tr)), Let("rlen", E.min(tr, E.sub(rows, Var("r0")))),
        VecOp("duplicate", acc, (), init, comment=f"init {yo}"), loop, *tail)
    return _kernel(fk, names, [b_in, b_f, *extra, b_acc, b_out], body, total, bd,
                   (("rows", rows), ("cols", cols), ("tile_rows", tr), ("tile_cols", tc)),
                   f"{op} of rows of {cols} streamed over column chunks of {tc}")
