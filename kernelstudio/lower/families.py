"""Per-family lowering of one fused kernel into a TileIR Kernel, given its KernelConfig."""

from __future__ import annotations

from ..core.errors import ScheduleError, UnsupportedError
from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..ir.ops import Op
from ..tileir.expr import Const, E, Expr, Var
from ..tileir.program import (
    Kernel,
    Let,
    Loop,
    Stmt,
)
from .config import KernelConfig
from .kernel_facts import row_composite_of, runtime_rows_of
from .operands import gm_operands, gm_region
from .vector_body import Operand, VecConfig, VectorBody, ident

__all__ = ["lower_vector_kernel"]


def lower_vector_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    """A vector-family kernel: row tiles (x column tiles) dealt round robin over AIV cores."""
    if any(n.info.kind.value == "reduce" and fk.view(n) != "col" for n in fk.nodes):
        raise UnsupportedError(f"kernel {fk.name}: only reductions over the last axis are lowered; "
                               "move the reduced axis last with transpose before reducing")
    R, C = fk.rows, fk.cols
    tr, tc = min(cfg.tile_rows, R), min(cfg.tile_cols, C)
    if fk.nodes[0].op is Op.RESHAPE:  # same bytes in the same order: copy on the output's [rows, cols]
        x = fk.nodes[0].inputs[0]
        ins = [Operand(x, names[x], "full", x.dtype, gm_region(names[x], "full", C))]
        _, outs = gm_operands(fk, names, {x})
    else:  # split parts (fusion.partition.slice_view) arrive as strided windows of their inputs
        ins, outs = _with_windows(fk, names)
    windows = [o.node for o in ins if o.node in fk.nodes]
    reduce = fk.has_row_reduction()
    vb = VectorBody(fk, names, ins, outs, VecConfig(tr, tc, cfg.depth, cfg.aligned, cfg.inline_scalars,
                                                          compute_dtype=cfg.compute_dtype), skip=windows)
    rt = -(-R // tr)
    ct = 1 if reduce else -(-C // tc)
    total = rt * ct
    bd = max(1, min(cfg.cores, total))
    lets: list[Stmt]
    pre: list[Stmt] = []
    if cfg.order_by and cfg.order[:1] != ("rows",) and (reduce or ct == 1):
        why = ("its tiles hold whole rows (a row reduction), so rows are the only tile loop" if reduce else
               f"its {C}-wide rows fit one {tc}-column tile, so rows are the only tile loop")
        raise ScheduleError(f"kernel {fk.name}: {cfg.order_by} cannot apply: {why}; drop it, or "
                            + ("split(-1, ...) to tile the columns first" if not reduce else
                               "parallel(cores=...) to change how many cores share the row tiles"))
    row_tiled = (reduce or ct == 1) and fk.nodes[0].op is not Op.RESHAPE and not windows
    runtime = runtime_rows_of(fk, names, cfg.cores) if row_tiled else None
    if reduce or ct == 1:
        rows: Expr = Var("rows") if runtime is not None else Const(R)  # the code reads it from its tiling
        lets = [Let("r0", E.mul(Var("t"), tr)), Let("rlen", E.min(tr, E.sub(rows, E.mul(Var("t"), tr))))]
        if reduce and tc < C:
            body = vb.multipass(Var("r0"), Var("rlen"), Const(0), Const(C), "ci")
            scheme = (f"row reduction: multi-pass over column chunks of {tc} (narrower than the {C}-wide row, "
                      f"by split(-1, ...) or because whole rows do not fit UB); statistics first, then the outputs")
        else:
            pre = vb.hoist(Const(C))  # row vectors (bias, gamma) are the same for every tile
            body = vb.chunk(Var("r0"), Var("rlen"), Const(0), Const(C))
            scheme = ("row reduction: full-row tiles (each tile holds whole rows in UB)" if reduce else "")
    else:
        rows_first = cfg.order[:1] == ("rows",) or cfg.order[:1] == (0,)
        ri = E.div(Var("t"), ct) if rows_first else E.mod(Var("t"), rt)
        ci = E.mod(Var("t"), ct) if rows_first else E.div(Var("t"), rt)
        # a one-row tile has one row (rlen 1), and a kernel of one tile row starts at row 0: constants,
        # so its regions are one contiguous run (one count-form call, a plain DataCopy)
        r0: Expr = Const(0) if rt == 1 else Var("r0")
        rlen: Expr = Const(1) if tr == 1 else Var("rlen")
        lets = ([Let("r0", E.mul(ri, tr))] if rt > 1 else []) + (
            [Let("rlen", E.min(tr, E.sub(R, r0)))] if tr > 1 else []) + [
                Let("c0", E.mul(ci, tc)), Let("clen", E.min(tc, E.sub(C, Var("c0"))))]
        body = vb.chunk(r0, rlen, Var("c0"), Var("clen"))
        scheme = ""
    loop = Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), (*lets, *body),
                comment=f"parallel_loop: {total} tiles of {tr}x{tc} over {bd} cores")
    notes = list(cfg.notes) + ([scheme] if scheme else [])
    composite = row_composite_of(fk, names) if reduce and tc == C else None
    return Kernel(
        name=ident(fk.name), family="vector", kernel_type="AIV_ONLY", block_dim=bd,
        params=tuple(names[i] for i in fk.inputs) + tuple(names[o] for o in fk.outputs),
        buffers=tuple(vb.buffers.values()), aiv=(*pre, loop),
        tiling=(("rows", R), ("cols", C), ("tile_rows", tr), ("tile_cols", tc), ("tiles", total), ("block_dim", bd)),
        ops=tuple(names[n] for n in fk.nodes), notes=tuple(notes), vec_per_block=1, runtime_rows=runtime,
        row_composite=composite)


def _with_windows(fk: FusedKernel, names: dict[Node, str]) -> tuple[list[Operand], list[Operand]]:
    """The kernel's GM operands, each split part of it read as a window of its input's [rows, cols] view
    (along the last axis: columns start.. of rows of the input's width; else rows from start * rows per
    index of the axis): one strided copy per tile, one burst per row (DataCopyPad where a row is not whole
    32-byte blocks). An input only split here is not read whole."""
    parts = [n for n in fk.nodes if n.op is Op.SLICE and n.inputs[0] in fk.inputs]
    inner = [n for n in fk.nodes if n.op is Op.SLICE and n not in parts and n.shape != n.inputs[0].shape]
    if inner:
        raise UnsupportedError(f"kernel {fk.name}: the split part {names[inner[0]]} cuts a tile computed in the "
                               "same kernel; keep its producer out of fusion (create_schedule(..., keep_out=[...]))")
    only_split = {x for x in fk.inputs
                  if all(m in parts for m in fk.nodes if x in m.inputs)}
    ins, outs = gm_operands(fk, names, only_split)
    for n in parts:
        x = n.inputs[0]
        ax, start = n.attr("axis"), n.attr("start")
        if ax == x.ndim - 1:
            region = gm_region(names[x], "full", x.shape[-1], col_base=Const(start))
        else:
            per = 1
            for d in x.shape[ax + 1:-1]:
                per *= d
            region = gm_region(names[x], "full", x.shape[-1], row_base=Const(start * per))
        ins.append(Operand(n, names[n], "full", x.dtype, region))
    return ins, outs
