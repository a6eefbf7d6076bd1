"""`lower_cube_kernel`: a cube or cube_vector kernel (matmul/conv root, optional AIV epilogue) as TileIR.

plan.py makes the decisions (tiles, grid, L1 level, buffers), k_loop.py writes one C tile's k loop; here the
tile walk, then the cube part and the hand-off: FixPipe to GM (a cube kernel), to a whole-C workspace and one
SyncAll (sync_all), or to a per-core workspace slot behind cross-core flags with the AIV epilogue."""

from __future__ import annotations

from ...fusion.partition import FusedKernel
from ...ir.node import Node
from ...tileir.expr import Const, E, Expr, Var
from ...tileir.hints import TileWalk
from ...tileir.program import (
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    GmTensor,
    If,
    Kernel,
    Let,
    Loop,
    Pipe,
    Region,
    Stmt,
    SyncAll,
)
from ..config import KernelConfig
from ..tile_order import tile_walk, tile_walk_lets
from ..vector_body import ident
from .epilogue import mixed_epilogue
from .groups import group_cols, group_rows, panel_load
from .k_loop import c_tile
from .plan import CubePlan, plan_cube
from .shape import AIV_PER_BLOCK, aiv_rows_expr

__all__ = ["lower_cube_kernel", "FLAG_FULL", "FLAG_FREE"]

FLAG_FULL, FLAG_FREE = 0, 1  # cross-core flag ids: a C tile is in the workspace / its slot is free again


def lower_cube_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> tuple[Kernel, GmTensor | None]:
    """A cube or cube_vector kernel; returns the kernel and its workspace tensor (mixed kernels)."""
    p = plan_cube(fk, names, cfg)
    if cfg.aic_only:  # a capacity probe of the auto-schedule: the cube's buffers and tiling are all it reads
        cs = p.cs
        return Kernel(name=ident(fk.name), family=fk.family, kernel_type="AIC_ONLY", block_dim=p.bd,
                      params=(cs.a_name, cs.b_name, names[cs.root]), buffers=tuple(p.bufs.values()), aic=(),
                      aiv=(), tiling=p.tiling, ops=(names[cs.root],), notes=cfg.notes, vec_per_block=1), None
    if cfg.aiv_only and p.mixed:  # a UB probe of the auto-schedule: the epilogue's buffers and statements
        vb, pre, chunk_loop, _, vr, vc = mixed_epilogue(fk, names, p.cs, cfg, p.rt, p.row_block or p.sync,
                                                       AIV_PER_BLOCK * p.per_aiv if p.sync else p.tm, p.tn,
                                                       p.ws_name, p.ws_dtype, p.slot_base)
        return Kernel(name=ident(fk.name), family=fk.family, kernel_type="MIX_AIC_1_2", block_dim=p.bd,
                      params=(), buffers=tuple(vb.buffers.values()), aic=(), aiv=(*pre, chunk_loop),
                      tiling=(*p.tiling, ("vec_rows", vr), ("vec_cols", vc), ("ws_depth", p.depth)),
                      ops=(), notes=cfg.notes, vec_per_block=AIV_PER_BLOCK), None
    lets, walk = _walk(p)
    if not p.mixed or p.sync:
        return _to_gm(p, lets, walk)
    return _with_epilogue(p, lets, walk)


def _grouped(p: CubePlan) -> bool:
    return p.grp.grouped and not p.row_block


def _walk_lets(p: CubePlan, m: Expr, m_tiles: Expr | None) -> tuple[list[Stmt], str]:
    """The Lets from t to the unit's extent, for M = `m` in `m_tiles` tile rows (None: the lowered ones).
    With l1_c_steps, mi / ni index groups of gsm x gsn C tiles, walked (and swizzled) as units; m0 / n0 per
    C tile inside a group come from groups.py."""
    tm, tn, gsm, gsn, cs = p.tm, p.tn, p.gsm, p.gsn, p.cs
    unit = (tm * gsm, tn * gsn) if _grouped(p) else (tm, tn)
    lets, order_note = tile_walk_lets(p.fk.name, (cs.M, cs.N), unit, p.cfg, p.row_block, m_tiles)
    if _grouped(p):  # the group's extent
        lets += [Let("gm0", E.mul(Var("mi"), gsm * tm)), Let("gmlen", E.min(gsm * tm, E.sub(m, Var("gm0")))),
                 Let("gn0", E.mul(Var("ni"), gsn * tn)),
                 Let("gnlen", E.min(gsn * tn, E.sub(cs.N, Var("gn0"))))]
    else:
        lets += [Let("m0", E.mul(Var("mi"), tm)), Let("mlen", E.min(tm, E.sub(m, Var("m0"))))]
    if not p.row_block and not _grouped(p):
        lets += [Let("n0", E.mul(Var("ni"), tn)), Let("nlen", E.min(tn, E.sub(cs.N, Var("n0"))))]
    return lets, order_note


def _walk(p: CubePlan) -> tuple[list[Stmt], TileWalk]:
    """The tile walk's Lets (noting the order on the plan's config) and the walk the L2 model reads."""
    cs = p.cs
    m_runtime = p.rt is not None and bool(p.rt.row_tiles)
    # the count of walk rows at run time: tile rows, or group rows of l1_c_steps (RuntimeRows.row_tiles)
    row_tiles = Var(p.rt.row_tiles) if p.rt is not None and m_runtime else None
    lets, order_note = _walk_lets(p, cs.m_expr, row_tiles)
    if order_note:
        p.cfg = p.cfg.noted(order_note)
    # the L2 model walks the lowered shape: its Lets hold no run-time values
    walk = tile_walk(cs, p.total, _walk_lets(p, Const(cs.M), None)[0] if m_runtime else lets, p.row_block, p.nt,
                     -(-p.kt // max(p.sa, p.sb)), grouped=_grouped(p))
    return lets, walk


def _kernel(p: CubePlan, aic: tuple[Stmt, ...], aiv: tuple[Stmt, ...], kernel_type: str, vec: int,
            params: tuple[str, ...], ops: tuple[str, ...], walk: TileWalk, ws: GmTensor | None,
            vec_tiling: tuple[tuple[str, int], ...] = ()) -> tuple[Kernel, GmTensor | None]:
    return Kernel(name=ident(p.fk.name), family=p.fk.family, kernel_type=kernel_type, block_dim=p.bd,
                  params=params, buffers=tuple(p.bufs.values()), aic=aic, aiv=aiv, tiling=(*p.tiling, *vec_tiling),
                  ops=ops, notes=p.cfg.notes, vec_per_block=vec, tile_walk=walk, runtime_rows=p.rt), ws


def _mixed_params(p: CubePlan) -> tuple[tuple[str, ...], tuple[str, ...]]:
    cs, fk, names = p.cs, p.fk, p.names
    params = (*dict.fromkeys([cs.a_name, cs.b_name, *(names[i] for i in fk.inputs if i is not cs.root)]),
              *(names[o] for o in fk.outputs), p.ws_name)
    return params, tuple(names[n] for n in fk.nodes)


def _to_gm(p: CubePlan, lets: list[Stmt], walk: TileWalk) -> tuple[Kernel, GmTensor | None]:
    """A cube kernel's C tiles FixPiped to its output; with sync_all to a whole-C workspace, then one SyncAll
    and the epilogue's rows over every vector core."""
    cs, names, bufs, tm, tn, bd, total = p.cs, p.names, p.bufs, p.tm, p.tn, p.bd, p.total
    out_node = cs.root
    n0, nlen = Var("n0"), Var("nlen")
    out_name = p.ws_name if p.sync else names[out_node]
    dst = (Region(out_name, cs.c_offset(Var("bi"), Var("m0"), n0), Var("mlen"), nlen, Const(cs.ldc), gm=True)
           if not p.sync else
           Region(out_name, E.add(E.mul(E.add(E.mul(Var("bi"), cs.m_expr), Var("m0")), cs.N), n0),
                  Var("mlen"), nlen, Const(cs.N), gm=True))
    fix_out = Copy(dst, Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols)),
                   comment=(f"FixPipe: C tile -> workspace ({cs.acc_dtype} -> {p.ws_dtype})" if p.sync else
                            f"FixPipe: {out_name} {cs.acc_dtype} -> {out_node.dtype}"))
    if p.grp.grouped:
        stmts = group_rows(cs, bufs, p.grp, tm, tn, p.tk, p.mm_comment, p.a_off, p.b_off,
                           [EnQue("c"), DeQue("c"), fix_out, Free("c")])
    else:
        stmts = [*c_tile(p, n0, nlen), fix_out, Free("c")]
    what = (f"groups of {p.gsm}x{p.gsn} C tiles of {tm}x{tn}" if p.grp.grouped else f"C tiles of {tm}x{tn}")
    aic = (Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), (*lets, *stmts),
                comment=f"parallel_loop: {total} {what} over {bd} cores"),)
    if not p.sync:
        return _kernel(p, aic, (), "AIC_ONLY", 1, (cs.a_name, cs.b_name, out_name), (names[out_node],), walk, None)
    per_aiv = p.per_aiv
    # with M at run time (p.rt) the workspace holds the run's rows and each AIV's share is computed from M and
    # the launch's block dim; the epilogue's chunks keep the lowered share's size
    lead = tuple(cs.root.inputs[0].shape[:-1]) if p.rt is not None else (cs.batch * cs.M,)
    ws = GmTensor(p.ws_name, (*lead, cs.N), p.ws_dtype, "workspace")
    aic = (*aic, SyncAll("sync_all: every C tile is in the workspace before any AIV reads a row"))
    vb, pre, chunk_loop, _, vr, vc = mixed_epilogue(p.fk, names, cs, p.cfg, None, True, AIV_PER_BLOCK * per_aiv, tn,
                                                   p.ws_name, p.ws_dtype, p.slot_base)
    share: list[Stmt] = []
    rows_of_aiv: Expr | int = per_aiv
    if p.rt is not None:
        aivs = E.mul(Var("block_dim"), AIV_PER_BLOCK)
        share = [Let("aiv_rows", E.div(E.add(cs.m_expr, E.sub(aivs, 1)), aivs))]
        rows_of_aiv = Var("aiv_rows")
    aiv = (*pre, SyncAll("sync_all: wait for every C tile"), *share,
           Let("m0", E.mul(E.add(E.mul(Var("blk"), AIV_PER_BLOCK), Var("sub")), rows_of_aiv)), Let("bi", Const(0)),
           Let("rs", Const(0)), Let("rl", E.max(0, E.min(rows_of_aiv, E.sub(E.mul(cs.batch, cs.m_expr), Var("m0"))))),
           chunk_loop)
    bufs.update(vb.buffers)
    rows = (f"full rows ({cs.N} columns) in chunks of {vr}" if vc >= cs.N else
            f"multi-pass over column chunks of {vc}")
    p.cfg = p.cfg.noted(f"sync_all: {total} {what} over {bd} cores into a whole-C workspace, one SyncAll, then "
                        f"the epilogue over {2 * bd} AIVs, {per_aiv} rows each ({rows})")
    params, ops = _mixed_params(p)
    return _kernel(p, aic, aiv, "MIX_AIC_1_2", AIV_PER_BLOCK, params, ops, walk, ws,
                   (("vec_rows", vr), ("vec_cols", vc), ("ws_depth", 1)))


def _with_epilogue(p: CubePlan, lets: list[Stmt], walk: TileWalk) -> tuple[Kernel, GmTensor | None]:
    """A mixed kernel: each unit (a C tile, or a row block of them) FixPiped to the core's workspace slot,
    handed to the two vector cores of its block by cross-core flags, the slot reused once both read it."""
    cs, bufs, tm, tn, depth, bd, unit_cols = p.cs, p.bufs, p.tm, p.tn, p.depth, p.bd, p.unit_cols
    ws_name, ws_dtype, slot_base = p.ws_name, p.ws_dtype, p.slot_base
    ws = GmTensor(ws_name, (bd, depth, tm, unit_cols), ws_dtype, "workspace")
    # the core's count of units so far picks its workspace slot
    unit_lets = [Let("j", E.div(E.sub(Var("t"), Var("blk")), Var("block_dim") if p.rt is not None else bd)),
                 Let("slot", E.mod(Var("j"), depth))]
    wait_free = If(E.min(E.max(E.sub(Var("j"), depth - 1), 0), 1), (CrossWait(FLAG_FREE),),
                   comment=f"workspace slot reused: wait until both AIVs read it (depth {depth})")
    if p.row_block:
        n0, nlen = E.mul(Var("ni"), tn), Var("nlen")
        tile = c_tile(p, Var("n0"), nlen)
        fix = Copy(Region(ws_name, E.add(slot_base, Var("n0")), Var("mlen"), nlen, Const(unit_cols), gm=True),
                   Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols)),
                   comment=f"FixPipe: C tile -> workspace ({cs.acc_dtype} -> {ws_dtype})")
        n_loop = Loop("ni", Const(0), Var("n_tiles"), Const(1),
                      (Let("n0", n0), Let("nlen", E.min(tn, E.sub(cs.N, Var("n0")))), *tile, fix, Free("c")),
                      comment=f"all {p.nt} n tiles of the row block: the epilogue needs whole rows")
        if p.grp.grouped:  # A's row panel stays in L1 across the n tiles of each group
            cols = group_cols(cs, bufs, p.grp, p.tk, p.mm_comment, p.a_off, p.b_off, tn,
                              [EnQue("c"), DeQue("c"), fix, Free("c")])
            n_loop = Loop("ng", Const(0), Const(p.nt_w), Const(1), (
                Let("gn0", E.mul(Var("ng"), p.gsn * tn)), Let("gnlen", E.min(p.gsn * tn, E.sub(cs.N, Var("gn0")))),
                *panel_load(cs, bufs, "a", Var("m0"), Var("mlen"), p.a_off), cols, Free("a1")),
                comment=f"all {p.nt} n tiles of the row block in groups of {p.gsn} (l1_c_steps): the epilogue "
                        "needs whole rows")
        body = [*unit_lets, wait_free, n_loop, CrossSet(FLAG_FULL, Pipe.FIX)]
    else:
        fix = Copy(Region(ws_name, slot_base, Var("mlen"), Var("nlen"), Const(unit_cols), gm=True),
                   Region("c", Const(0), Var("mlen"), Var("nlen"), Const(bufs["c"].cols)),
                   comment=f"FixPipe: C tile -> workspace ({cs.acc_dtype} -> {ws_dtype})")
        body = [*unit_lets, *c_tile(p, Var("n0"), Var("nlen")), wait_free, fix, Free("c"),
                CrossSet(FLAG_FULL, Pipe.FIX)]
    aic = (Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), (*lets, *body),
                comment=f"parallel_loop: {p.total} {'row blocks' if p.row_block else 'C tiles'} over {bd} cores"),)
    # ---- the AIV epilogue
    vb, pre, chunk_loop, scheme, vr, vc = mixed_epilogue(p.fk, p.names, cs, p.cfg, p.rt, p.row_block, tm, tn,
                                                        ws_name, ws_dtype, slot_base)
    aiv_body = [*lets, *unit_lets, CrossWait(FLAG_FULL),
                Let("half", aiv_rows_expr(Var("mlen"))), Let("rs", E.mul(Var("sub"), Var("half"))),
                Let("rl", E.max(0, E.min(Var("half"), E.sub(Var("mlen"), Var("rs"))))),
                chunk_loop, CrossSet(FLAG_FREE, Pipe.MTE2)]
    aiv = (*pre, Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), tuple(aiv_body),
                      comment="same walk as the cube core; each AIV takes half the rows"))
    bufs.update(vb.buffers)
    p.cfg = p.cfg.noted(scheme)
    params, ops = _mixed_params(p)
    return _kernel(p, aic, aiv, "MIX_AIC_1_2", AIV_PER_BLOCK, params, ops, walk, ws,
                   (("vec_rows", vr), ("vec_cols", vc), ("ws_depth", depth)))
