"""`lower_cube_kernel`: a cube or cube_vector kernel (matmul/conv root, optional AIV epilogue) as TileIR."""

from __future__ import annotations

from ...core.errors import ScheduleError
from ...fusion.partition import FusedKernel
from ...ir.node import Node
from ...ir.ops import itemsize
from ...tileir.expr import Const, E, Expr, Var
from ...tileir.program import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    GmTensor,
    If,
    Img2Col,
    Kernel,
    Let,
    Loop,
    Mmad,
    Pipe,
    QuePos,
    Region,
    Stmt,
    SyncAll,
    Tier,
)
from ..config import KernelConfig
from ..kernel_facts import runtime_batch_of, runtime_m_of
from ..tile_order import tile_walk, tile_walk_lets
from ..vector_body import ident
from .epilogue import mixed_epilogue
from .groups import GroupShape, group_cols, group_rows, l1_k_loops, panel_load
from .shape import AIV_PER_BLOCK, CubeShape, aiv_rows_expr, sync_rows_per_aiv

__all__ = ["lower_cube_kernel", "FLAG_FULL", "FLAG_FREE"]

FLAG_FULL, FLAG_FREE = 0, 1  # cross-core flag ids: a C tile is in the workspace / its slot is free again


def _pad16(n: int) -> int:
    return -(-n // 16) * 16


def lower_cube_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> tuple[Kernel, GmTensor | None]:
    """A cube or cube_vector kernel; returns the kernel and its workspace tensor (mixed kernels)."""
    cs = CubeShape(fk, names)
    tm, tn, tk = min(cfg.tile_m, _pad16(cs.M)), min(cfg.tile_n, _pad16(cs.N)), min(cfg.tile_k, _pad16(cs.K))
    if not cfg.aligned:
        tm, tn, tk = min(cfg.tile_m, cs.M), min(cfg.tile_n, cs.N), min(cfg.tile_k, cs.K)
    mt, nt, kt = -(-cs.M // tm), -(-cs.N // tn), -(-cs.K // tk)
    mixed = fk.family == "cube_vector"
    # sync_all: the cube part is a plain matmul over every core into a whole-C workspace, then SyncAll
    sync = mixed and cfg.sync_all
    row_block = mixed and fk.has_row_reduction() and not cfg.aic_only and not sync
    if row_block and cfg.order_by and cfg.order[:1] != ("m",):
        raise ScheduleError(f"kernel {fk.name}: {cfg.order_by} cannot apply: its row-reduction epilogue needs "
                            "whole rows, so each core takes a block of rows ('m') and walks all of 'n' itself; "
                            "drop it (rows are spread over cores already), take sync_all(True) (C tiles over every "
                            "core in any order, then the rows), or keep the reduction out of the fusion "
                            "(create_schedule(..., keep_out=[...]) or fuse=False) to tile 'n' freely")
    # the L1 level across C tiles (l1_c_steps, cube_groups.py): a core walks groups of gsm x gsn C
    # tiles; a row-reduction epilogue's unit is a row block already (groups along n inside it); an
    # elementwise epilogue hands over one C tile at a time (no groups), as does a conv
    gsm = 1 if ((mixed and not sync) or cs.conv) else max(1, min(cfg.step_m, mt))
    gsn = 1 if (cs.conv or (mixed and not sync and not fk.has_row_reduction())) else max(1, min(cfg.step_n, nt))
    mt_w, nt_w = -(-mt // gsm), -(-nt // gsn)  # the walk's grid: groups (= C tiles without l1_c_steps)
    units_n = 1 if row_block else nt_w
    total = cs.batch * mt_w * units_n
    bd = max(1, min(cfg.cores, total))
    depth = cfg.depth
    dt = cs.in_dtype
    bufs: dict[str, Buffer] = {}
    # the code may take M at run time (kernel_facts.runtime_m_of) when one batch is dealt out in plain
    # row-major or column-major order of single tile rows; the TileIR then reads M and m_tiles from its tiling
    # (a conv: its batch, whose images the walk deals out whole)
    rt = None
    if gsm == 1 and not cfg.swizzle_group and not (cfg.aic_only or cfg.aiv_only or sync):
        unit_cols = cs.N if row_block else tn
        ws_bytes = depth * tm * unit_cols * itemsize(cs.root.dtype) if mixed else 0
        if cs.conv:
            rt = runtime_batch_of(fk, names, cfg.cores, mt_w * units_n, ws_bytes)
        elif cs.batch == 1:
            rt = runtime_m_of(fk, names, cfg.cores, units_n, ws_bytes)
    if rt is not None and rt.row_tiles:
        cs.m_expr = Var("M")

    def buf(name: str, tier: Tier, dtype: str, rows: int, cols: int, d: int, q: QuePos, purpose: str) -> str:
        bufs[name] = Buffer(name, tier, dtype, rows, cols, d, q, CoreType.AIC, purpose)
        return name

    # the L1 level: one load of A (B) brings sa (sb) k tiles; the larger step must be a multiple of
    # the smaller (TCubeTiling stepKa / stepKb)
    # conv: the weights (A) load in slabs; the img2col source already holds every channel's rows
    sa, sb = max(1, min(cfg.step_ka, kt)), 1 if cs.conv else max(1, min(cfg.step_kb, kt))
    if max(sa, sb) % min(sa, sb):
        sa = sb = min(sa, sb)
    grp = GroupShape(gsm, gsn, kt, sa, sb)
    sa, sb = grp.sa, grp.sb  # a resident panel loads all k tiles at once
    da1, db1 = cfg.depth_a1 or depth, cfg.depth_b1 or depth
    a_rows, a_cols = (tk, tm) if cs.ta else (tm, tk)
    a1_rows, a1_cols = (tk * sa, tm) if cs.ta else (tm, tk * sa)
    buf("a1", Tier.L1, dt, a1_rows, a1_cols, da1, QuePos.A1,
        f"A row panel of {cs.a_name} (all {kt} k tiles), resident across up to {gsn} C tiles along n"
        if grp.a_res else
        f"A {'slab' if sa > 1 else 'tile'} of {cs.a_name if not cs.conv else cs.b_name}"
        + (f" ({sa} k tiles)" if sa > 1 else ""))
    d0 = cfg.depth_l0 or depth  # L0A/L0B slots
    buf("a2", Tier.L0A, dt, a_rows, a_cols, d0, QuePos.A2, "A fractal for Mmad")
    if cs.conv:
        spanned = -(-tn // cs.ow) + 1
        slab_rows = min((spanned - 1) * cs.stride[0] + cs.kh, cs.h + cs.pad[0] + cs.pad[1])
        buf("slab", Tier.L1, dt, cs.cin_pad * slab_rows, cs.w, depth, QuePos.B1,
            f"input rows of {cs.a_name} for one pixel tile (img2col source)")
        buf("b2", Tier.L0B, dt, tn, tk, d0, QuePos.B2, "img2col patches")
    else:
        b_rows, b_cols = (tn, tk) if cs.tb else (tk, tn)
        bw = tn * (gsn if grp.b_res else 1)  # B's panel spans the group's columns
        b1_rows, b1_cols = (bw, tk * sb) if cs.tb else (tk * sb, bw)
        buf("b1", Tier.L1, dt, b1_rows, b1_cols, db1, QuePos.B1,
            f"B column panel of {cs.b_name} (all {kt} k tiles, {gsn} C tiles wide), resident across up to {gsm} "
            "tile rows" if grp.b_res else
            f"B {'slab' if sb > 1 else 'tile'} of {cs.b_name}" + (f" ({sb} k tiles)" if sb > 1 else ""))
        buf("b2", Tier.L0B, dt, b_rows, b_cols, d0, QuePos.B2, "B fractal for Mmad")
    c_depth = 2 if depth == 2 and 2 * tm * tn * itemsize(cs.acc_dtype) <= cfg.l0c_bytes else 1
    buf("c", Tier.L0C, cs.acc_dtype, tm, tn, c_depth, QuePos.CO1, "C accumulator")
    tiling = (("M", cs.M), ("N", cs.N), ("K", cs.K), ("batch", cs.batch), ("tile_m", tm), ("tile_n", tn),
              ("tile_k", tk), ("m_tiles", mt), ("n_tiles", nt), ("k_tiles", kt), ("tiles", total),
              ("block_dim", bd))
    if sa > 1 or sb > 1:
        tiling += (("step_ka", sa), ("step_kb", sb))
    if grp.grouped:
        tiling += (("step_m", gsm), ("step_n", gsn))
    if cfg.aic_only:  # a capacity probe of the auto-schedule: the cube's buffers and tiling are all it reads
        return Kernel(name=ident(fk.name), family=fk.family, kernel_type="AIC_ONLY", block_dim=bd,
                      params=(cs.a_name, cs.b_name, names[cs.root]), buffers=tuple(bufs.values()), aic=(), aiv=(),
                      tiling=tiling, ops=(names[cs.root],), notes=cfg.notes, vec_per_block=1), None
    if mixed:
        unit_cols = cs.N if row_block else tn
        ws_name = f"{ident(fk.name)}_ws"
        # FixPipe converts the accumulator to the matmul's own dtype on the way out, exactly
        # what the unfused matmul kernel stores: half the workspace bytes of a float32 hand-off
        ws_dtype = cs.root.dtype
        slot_base = E.mul(E.add(E.mul(Var("blk"), depth), Var("slot")), tm * unit_cols)
        if sync:  # the whole C, row after row: an AIV's rows start at row m0
            slot_base = E.mul(Var("m0"), cs.N)
    # sync_all: each AIV takes `per_aiv` of the batch x M rows of C (the last ones fewer, maybe none)
    per_aiv = sync_rows_per_aiv(cs.batch * cs.M, bd)
    if cfg.aiv_only and mixed:  # a UB probe of the auto-schedule: the epilogue's buffers and statements
        vb, pre, chunk_loop, _, vr, vc = mixed_epilogue(fk, names, cs, cfg, rt, row_block or sync,
                                                   2 * per_aiv if sync else tm, tn, ws_name, ws_dtype, slot_base)
        return Kernel(name=ident(fk.name), family=fk.family, kernel_type="MIX_AIC_1_2", block_dim=bd,
                      params=(), buffers=tuple(vb.buffers.values()), aic=(), aiv=(*pre, chunk_loop),
                      tiling=(*tiling, ("vec_rows", vr), ("vec_cols", vc), ("ws_depth", depth)),
                      ops=(), notes=cfg.notes, vec_per_block=AIV_PER_BLOCK), None

    # ---- tile walk
    t = Var("t")
    # with l1_c_steps, mi / ni index groups of gsm x gsn C tiles (mt_w x nt_w of them), walked (and
    # swizzled) as units; m0 / n0 per C tile inside a group come from cube_groups.py
    grouped = grp.grouped and not row_block
    unit = (tm * gsm, tn * gsn) if grouped else (tm, tn)

    def walk_lets(m: Expr, m_tiles: Expr | None) -> tuple[list[Stmt], str]:
        """The Lets from t to the unit's extent, for M = `m` in `m_tiles` tile rows (None: the lowered ones)."""
        lets, order_note = tile_walk_lets(fk.name, (cs.M, cs.N), unit, cfg, row_block, m_tiles)
        if grouped:  # the group's extent
            lets += [Let("gm0", E.mul(Var("mi"), gsm * tm)), Let("gmlen", E.min(gsm * tm, E.sub(m, Var("gm0")))),
                     Let("gn0", E.mul(Var("ni"), gsn * tn)),
                     Let("gnlen", E.min(gsn * tn, E.sub(cs.N, Var("gn0"))))]
        else:
            lets += [Let("m0", E.mul(Var("mi"), tm)), Let("mlen", E.min(tm, E.sub(m, Var("m0"))))]
        if not row_block and not grouped:
            lets += [Let("n0", E.mul(Var("ni"), tn)), Let("nlen", E.min(tn, E.sub(cs.N, Var("n0"))))]
        return lets, order_note

    m_runtime = rt is not None and bool(rt.row_tiles)
    lets, order_note = walk_lets(cs.m_expr, Var("m_tiles") if m_runtime else None)
    if order_note:
        cfg = cfg.noted(order_note)
    # the L2 model walks the lowered shape: its Lets hold no run-time values
    walk = tile_walk(cs, total, walk_lets(Const(cs.M), None)[0] if m_runtime else lets, row_block, nt,
                     -(-kt // max(sa, sb)), grouped=grouped)
    a_off = cs.batch_offset("a", Var("bi"))
    b_off = cs.batch_offset("b", Var("bi"))
    mm_comment = f"{names[cs.root]} = {cs.root.op.value}"

    # a conv whose channels are padded to whole C0 blocks: its img2col reads zeros past the real ones
    cin_valid = cs.cin if cs.conv and cs.cin_pad != cs.cin else 0

    def c_tile(n0: Expr, nlen: Expr) -> list[Stmt]:
        ko, k0, klen = Var("ko"), Var("k0"), Var("klen")
        s: list[Stmt] = []
        if cs.conv:
            # pixel tile [n0, n0+nlen) spans output rows oh_a..oh_b; load the input rows it needs
            s += [Let("oh_a", E.div(n0, cs.ow)),
                  Let("h0", E.sub(E.mul(Var("oh_a"), cs.stride[0]), cs.pad[0])),
                  Let("h_lo", E.max(Var("h0"), 0)),
                  Let("h_hi", E.min(cs.h, E.add(Var("h0"), slab_rows))),
                  Alloc("slab"),
                  Copy(Region("slab", E.mul(E.sub(Var("h_lo"), Var("h0")), cs.w), Const(cs.cin),
                              E.mul(E.sub(Var("h_hi"), Var("h_lo")), cs.w), Const(slab_rows * cs.w)),
                       Region(cs.a_name, E.add(a_off, E.mul(Var("h_lo"), cs.w)), Const(cs.cin),
                              E.mul(E.sub(Var("h_hi"), Var("h_lo")), cs.w), Const(cs.h * cs.w), gm=True),
                       comment="input rows for this pixel tile (img2col source)"),
                  EnQue("slab"), DeQue("slab")]
        k_body: list[Stmt] = [Let("k0", E.mul(ko, tk)), Let("klen", E.min(tk, E.sub(cs.K, Var("k0"))))]
        a_valid = None
        if cs.conv:  # A = weights [Cout, K]
            a_src, a_valid = cs.weights(Var("m0"), Var("mlen"), k0, klen)
        elif cs.ta:
            a_src = Region(cs.a_name, E.add(a_off, E.add(E.mul(k0, cs.M), Var("m0"))), klen, Var("mlen"),
                           Const(cs.M), gm=True)
        else:
            a_src = Region(cs.a_name, E.add(a_off, E.add(E.mul(Var("m0"), cs.K), k0)), Var("mlen"), klen,
                           Const(cs.K), gm=True)
        a_dims = (a_src.rows, a_src.cols)
        a1 = Region("a1", Const(0), a_dims[0], a_dims[1], Const(bufs["a1"].cols))
        a2 = Region("a2", Const(0), a_dims[0], a_dims[1], Const(bufs["a2"].cols))
        k_body += [Alloc("a1"), Copy(a1, a_src, nd2nz=True, comment="split_loop: k tile of A", valid_cols=a_valid),
                   EnQue("a1")]
        if cs.conv:
            b2 = Region("b2", Const(0), nlen, klen, Const(bufs["b2"].cols))
            k_body += [DeQue("a1"), Alloc("a2"), Copy(a2, a1), EnQue("a2"), Free("a1"),
                       Alloc("b2"),
                       Img2Col(b2, Region("slab", Const(0), Const(cs.cin_pad), Const(slab_rows * cs.w),
                                          Const(slab_rows * cs.w)),
                               cs.cin_pad, cs.h, cs.w, cs.kh, cs.kw, cs.stride, cs.pad, cs.ow, slab_rows,
                               n0, nlen, k0, klen, Var("h0"), comment="img2col: patches of this pixel tile",
                               cin_valid=cin_valid),
                       EnQue("b2")]
        else:
            if cs.tb:
                b_src = Region(cs.b_name, E.add(b_off, E.add(E.mul(n0, cs.K), k0)), nlen, klen, Const(cs.K),
                               gm=True)
            else:
                b_src = Region(cs.b_name, E.add(b_off, E.add(E.mul(k0, cs.N), n0)), klen, nlen, Const(cs.N),
                               gm=True)
            b1 = Region("b1", Const(0), b_src.rows, b_src.cols, Const(bufs["b1"].cols))
            b2 = Region("b2", Const(0), b_src.rows, b_src.cols, Const(bufs["b2"].cols))
            k_body += [Alloc("b1"), Copy(b1, b_src, nd2nz=True, comment="split_loop: k tile of B"), EnQue("b1"),
                       DeQue("a1"), Alloc("a2"), Copy(a2, a1), EnQue("a2"), Free("a1"),
                       DeQue("b1"), Alloc("b2"), Copy(b2, b1), EnQue("b2"), Free("b1")]
        c = Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols))
        k_body += [DeQue("a2"), DeQue("b2"),
                   Mmad(c, a2, b2, Var("mlen"), klen, nlen, E.sub(1, E.min(ko, 1)),
                        b_layout="nk" if (cs.tb or cs.conv) else "kn", a_layout="km" if cs.ta else "mk",
                        comment=f"{names[cs.root]} = {cs.root.op.value}"),
                   Free("a2"), Free("b2")]
        if not cs.conv and (sa > 1 or sb > 1):
            s += [Alloc("c"), *l1_k_loops(cs, bufs, tk, sa, sb, n0, nlen, a_off, b_off, names)]
        elif cs.conv and sa > 1:
            kx = Var("kx")
            slen = E.min(tk * sa, E.sub(cs.K, E.mul(kx, tk)))
            cols = Const(bufs["a1"].cols)
            w_src, w_valid = cs.weights(Var("m0"), Var("mlen"), E.mul(kx, tk), slen)
            a2 = Region("a2", Const(0), Var("mlen"), klen, Const(bufs["a2"].cols))
            b2 = Region("b2", Const(0), nlen, klen, Const(bufs["b2"].cols))
            inner = (Let("k0", E.mul(ko, tk)), Let("klen", E.min(tk, E.sub(cs.K, Var("k0")))),
                     Alloc("a2"), Copy(a2, Region("a1", E.mul(E.sub(ko, kx), tk), Var("mlen"), klen, cols),
                                       comment="L1 -> L0A: one k tile of the resident weight slab"),
                     EnQue("a2"), Alloc("b2"),
                     Img2Col(b2, Region("slab", Const(0), Const(cs.cin_pad), Const(slab_rows * cs.w),
                                        Const(slab_rows * cs.w)),
                             cs.cin_pad, cs.h, cs.w, cs.kh, cs.kw, cs.stride, cs.pad, cs.ow, slab_rows,
                             n0, nlen, k0, klen, Var("h0"), comment="img2col: patches of this pixel tile",
                             cin_valid=cin_valid),
                     EnQue("b2"), DeQue("a2"), DeQue("b2"),
                     Mmad(Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols)), a2, b2, Var("mlen"),
                          klen, nlen, E.sub(1, E.min(ko, 1)), b_layout="nk", a_layout="mk",
                          comment=f"{names[cs.root]} = {cs.root.op.value}"),
                     Free("a2"), Free("b2"))
            s += [Alloc("c"), Loop("kx", Const(0), Var("k_tiles"), Const(sa), (
                Alloc("a1"), Copy(Region("a1", Const(0), Var("mlen"), slen, cols), w_src, nd2nz=True,
                                  comment=f"L1: {sa} k tiles of the weights from k tile kx", valid_cols=w_valid),
                EnQue("a1"), DeQue("a1"),
                Loop("ko", kx, E.min(E.add(kx, sa), Var("k_tiles")), Const(1), inner,
                     comment=f"split_loop: k in tiles of {tk} from the L1 slab"),
                Free("a1")), comment=f"L1: weights in slabs of {sa} k tiles of {tk}")]
        else:
            s += [Alloc("c"), Loop("ko", Const(0), Var("k_tiles"), Const(1), tuple(k_body),
                                   comment=f"split_loop: k in tiles of {tk}")]
        if cs.conv:
            s.append(Free("slab"))
        s += [EnQue("c"), DeQue("c")]
        return s

    out_node = cs.root
    stmts: list[Stmt] = []
    ws: GmTensor | None = None
    aiv: tuple[Stmt, ...] = ()
    if not mixed or sync:
        n0, nlen = Var("n0"), Var("nlen")
        out_name = ws_name if sync else names[out_node]
        dst = Region(out_name, E.add(E.mul(E.add(E.mul(Var("bi"), cs.m_expr), Var("m0")), cs.N), n0),
                     Var("mlen"), nlen, Const(cs.N), gm=True)
        fix_out = Copy(dst, Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols)),
                       comment=(f"FixPipe: C tile -> workspace ({cs.acc_dtype} -> {ws_dtype})" if sync else
                                f"FixPipe: {out_name} {cs.acc_dtype} -> {out_node.dtype}"))
        if grp.grouped:
            stmts = group_rows(cs, bufs, grp, tm, tn, tk, mm_comment, a_off, b_off,
                               [EnQue("c"), DeQue("c"), fix_out, Free("c")])
        else:
            stmts = [*c_tile(n0, nlen), fix_out, Free("c")]
        what = (f"groups of {gsm}x{gsn} C tiles of {tm}x{tn}" if grp.grouped else f"C tiles of {tm}x{tn}")
        aic = (Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), (*lets, *stmts),
                    comment=f"parallel_loop: {total} {what} over {bd} cores"),)
        kernel_type, vec = "AIC_ONLY", 1
        params = (cs.a_name, cs.b_name, out_name)
        ops = (names[out_node],)
        if sync:
            ws = GmTensor(ws_name, (cs.batch * cs.M, cs.N), ws_dtype, "workspace")
            aic = (*aic, SyncAll("sync_all: every C tile is in the workspace before any AIV reads a row"))
            vb, pre, chunk_loop, _, vr, vc = mixed_epilogue(fk, names, cs, cfg, None, True, AIV_PER_BLOCK * per_aiv, tn,
                                                       ws_name, ws_dtype, slot_base)
            aiv = (*pre, SyncAll("sync_all: wait for every C tile"),
                   Let("m0", E.mul(E.add(E.mul(Var("blk"), AIV_PER_BLOCK), Var("sub")), per_aiv)), Let("bi", Const(0)),
                   Let("rs", Const(0)), Let("rl", E.max(0, E.min(per_aiv, E.sub(cs.batch * cs.M, Var("m0"))))),
                   chunk_loop)
            bufs.update(vb.buffers)
            kernel_type, vec = "MIX_AIC_1_2", AIV_PER_BLOCK
            params = (*dict.fromkeys([cs.a_name, cs.b_name, *(names[i] for i in fk.inputs if i is not out_node)]),
                      *(names[o] for o in fk.outputs), ws_name)
            ops = tuple(names[n] for n in fk.nodes)
            rows = (f"full rows ({cs.N} columns) in chunks of {vr}" if vc >= cs.N else
                    f"multi-pass over column chunks of {vc}")
            cfg = cfg.noted(f"sync_all: {total} {what} over {bd} cores into a whole-C workspace, one SyncAll, then "
                            f"the epilogue over {2 * bd} AIVs, {per_aiv} rows each ({rows})")
    else:
        ws = GmTensor(ws_name, (bd, depth, tm, unit_cols), ws_dtype, "workspace")
        # the core's count of units so far picks its workspace slot
        unit_lets = [Let("j", E.div(E.sub(t, Var("blk")), Var("block_dim") if rt is not None else bd)),
                     Let("slot", E.mod(Var("j"), depth))]
        wait_free = If(E.min(E.max(E.sub(Var("j"), depth - 1), 0), 1), (CrossWait(FLAG_FREE),),
                       comment=f"workspace slot reused: wait until both AIVs read it (depth {depth})")
        if row_block:
            n0, nlen = E.mul(Var("ni"), tn), Var("nlen")
            tile = c_tile(Var("n0"), nlen)
            fix = Copy(Region(ws_name, E.add(slot_base, Var("n0")), Var("mlen"), nlen, Const(unit_cols), gm=True),
                       Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols)),
                       comment=f"FixPipe: C tile -> workspace ({cs.acc_dtype} -> {ws_dtype})")
            n_loop = Loop("ni", Const(0), Var("n_tiles"), Const(1),
                          (Let("n0", n0), Let("nlen", E.min(tn, E.sub(cs.N, Var("n0")))), *tile, fix, Free("c")),
                          comment=f"all {nt} n tiles of the row block: the epilogue needs whole rows")
            if grp.grouped:  # A's row panel stays in L1 across the n tiles of each group
                cols = group_cols(cs, bufs, grp, tk, mm_comment, a_off, b_off, tn,
                                  [EnQue("c"), DeQue("c"), fix, Free("c")])
                n_loop = Loop("ng", Const(0), Const(nt_w), Const(1), (
                    Let("gn0", E.mul(Var("ng"), gsn * tn)), Let("gnlen", E.min(gsn * tn, E.sub(cs.N, Var("gn0")))),
                    *panel_load(cs, bufs, "a", Var("m0"), Var("mlen"), a_off), cols, Free("a1")),
                    comment=f"all {nt} n tiles of the row block in groups of {gsn} (l1_c_steps): the epilogue "
                            "needs whole rows")
            body = [*unit_lets, wait_free, n_loop, CrossSet(FLAG_FULL, Pipe.FIX)]
        else:
            fix = Copy(Region(ws_name, slot_base, Var("mlen"), Var("nlen"), Const(unit_cols), gm=True),
                       Region("c", Const(0), Var("mlen"), Var("nlen"), Const(bufs["c"].cols)),
                       comment=f"FixPipe: C tile -> workspace ({cs.acc_dtype} -> {ws_dtype})")
            body = [*unit_lets, *c_tile(Var("n0"), Var("nlen")), wait_free, fix, Free("c"),
                    CrossSet(FLAG_FULL, Pipe.FIX)]
        aic = (Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), (*lets, *body),
                    comment=f"parallel_loop: {total} {'row blocks' if row_block else 'C tiles'} over {bd} cores"),)
        # ---- the AIV epilogue
        vb, pre, chunk_loop, scheme, vr, vc = mixed_epilogue(fk, names, cs, cfg, rt, row_block, tm, tn, ws_name,
                                                        ws_dtype, slot_base)
        aiv_body = [*lets, *unit_lets, CrossWait(FLAG_FULL),
                    Let("half", aiv_rows_expr(Var("mlen"))), Let("rs", E.mul(Var("sub"), Var("half"))),
                    Let("rl", E.max(0, E.min(Var("half"), E.sub(Var("mlen"), Var("rs"))))),
                    chunk_loop, CrossSet(FLAG_FREE, Pipe.MTE2)]
        aiv = (*pre, Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), tuple(aiv_body),
                          comment="same walk as the cube core; each AIV takes half the rows"))
        bufs.update(vb.buffers)
        kernel_type, vec = "MIX_AIC_1_2", AIV_PER_BLOCK
        params = (*dict.fromkeys([cs.a_name, cs.b_name, *(names[i] for i in fk.inputs if i is not out_node)]),
                  *(names[o] for o in fk.outputs), ws_name)
        ops = tuple(names[n] for n in fk.nodes)
        cfg = cfg.noted(scheme)
    if mixed:
        tiling += (("vec_rows", vr), ("vec_cols", vc), ("ws_depth", 1 if sync else depth))
    return Kernel(name=ident(fk.name), family=fk.family, kernel_type=kernel_type, block_dim=bd,
                  params=params, buffers=tuple(bufs.values()), aic=aic, aiv=aiv, tiling=tiling, ops=ops,
                  notes=cfg.notes, vec_per_block=vec, tile_walk=walk, runtime_rows=rt), ws

