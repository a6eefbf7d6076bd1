"""The decisions of one cube or cube_vector kernel before any statement is written: its tiles and grid,
its L1 level (k steps, C-tile groups), whether the code takes M at run time, its buffers and tiling
values. kernel.py and k_loop.py write the statements from this plan."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...core.errors import ScheduleError, UnsupportedError
from ...fusion.partition import FusedKernel
from ...ir.node import Node
from ...ir.ops import itemsize
from ...tileir.expr import E, Expr, Var
from ...tileir.hints import RuntimeRows
from ...tileir.program import Buffer, CoreType, QuePos, Tier
from ..config import KernelConfig
from ..kernel_facts import runtime_batch_of, runtime_m_of
from ..vector_body import ident
from .groups import GroupShape
from .shape import CubeShape, pad16, sync_rows_per_aiv

__all__ = ["CubePlan", "plan_cube"]


@dataclass
class CubePlan:
    """Everything the statements of one cube-rooted kernel are written from."""

    fk: FusedKernel
    names: dict[Node, str]
    cfg: KernelConfig
    cs: CubeShape
    tm: int
    tn: int
    tk: int
    mt: int  # C tiles along m, n; k tiles
    nt: int
    kt: int
    mixed: bool  # cube_vector: an AIV epilogue follows the cube part
    sync: bool  # sync_all: a plain matmul over every core into a whole-C workspace, then SyncAll
    row_block: bool  # a row-reduction epilogue: each core takes whole rows of C
    gsm: int  # C tiles per L1 group along m, n (l1_c_steps)
    gsn: int
    mt_w: int  # the walk's grid: groups (= C tiles without l1_c_steps)
    nt_w: int
    units_n: int
    total: int  # units the cores share
    bd: int  # block dim
    depth: int
    rt: RuntimeRows | None  # M (a conv: its batch) taken at run time
    grp: GroupShape
    sa: int  # k tiles one L1 load of A / B brings (stepKa / stepKb)
    sb: int
    slab_rows: int = 0  # a conv: input rows one pixel tile needs
    bufs: dict[str, Buffer] = field(default_factory=dict)
    tiling: tuple[tuple[str, int], ...] = ()

    @property
    def a_off(self) -> Expr:
        return self.cs.batch_offset("a", Var("bi"))

    @property
    def b_off(self) -> Expr:
        return self.cs.batch_offset("b", Var("bi"))

    @property
    def mm_comment(self) -> str:
        return f"{self.names[self.cs.root]} = {self.cs.root.op.value}"

    @property
    def cin_valid(self) -> int:
        """A conv whose channels are padded to whole C0 blocks: its img2col reads zeros past these."""
        cs = self.cs
        return cs.cin if cs.conv and cs.cin_pad != cs.cin else 0

    @property
    def unit_cols(self) -> int:
        """Columns of one unit a mixed kernel hands to its vector cores: whole rows, or one C tile."""
        return self.cs.N if self.row_block else self.tn

    @property
    def ws_name(self) -> str:
        return f"{ident(self.fk.name)}_ws"

    @property
    def ws_dtype(self) -> str:
        # FixPipe converts the accumulator to the matmul's own dtype on the way out, exactly what the
        # unfused matmul kernel stores: half the workspace bytes of a float32 hand-off
        return self.cs.root.dtype

    @property
    def slot_base(self) -> Expr:
        """Element offset of the unit's slot in the workspace (sync_all: an AIV's rows start at row m0)."""
        if self.sync:
            return E.mul(Var("m0"), self.cs.N)
        return E.mul(E.add(E.mul(Var("blk"), self.depth), Var("slot")), self.tm * self.unit_cols)

    @property
    def per_aiv(self) -> int:
        """sync_all: each AIV takes this many of the batch x M rows of C (the last ones fewer, maybe none)."""
        return sync_rows_per_aiv(self.cs.batch * self.cs.M, self.bd)

    def buf(self, name: str, tier: Tier, dtype: str, rows: int, cols: int, d: int, q: QuePos, purpose: str) -> str:
        self.bufs[name] = Buffer(name, tier, dtype, rows, cols, d, q, CoreType.AIC, purpose)
        return name


def plan_cube(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> CubePlan:
    """The plan of a cube or cube_vector kernel, its cube buffers declared and its tiling values set."""
    cs = CubeShape(fk, names)
    tm, tn, tk = min(cfg.tile_m, pad16(cs.M)), min(cfg.tile_n, pad16(cs.N)), min(cfg.tile_k, pad16(cs.K))
    if not cfg.aligned:
        tm, tn, tk = min(cfg.tile_m, cs.M), min(cfg.tile_n, cs.N), min(cfg.tile_k, cs.K)
    mt, nt, kt = -(-cs.M // tm), -(-cs.N // tn), -(-cs.K // tk)
    mixed = fk.family == "cube_vector"
    # sync_all: the cube part is a plain matmul over every core into a whole-C workspace, then SyncAll
    sync = mixed and cfg.sync_all
    if sync and cs.per_head:
        raise UnsupportedError(
            f"kernel {fk.name}: sync_all cannot apply to the per-head matmul {names[cs.root]} (batch_axis=1, "
            f"{cs.batch} heads of {cs.M}x{cs.K} @ {cs.K}x{cs.N}): its vector cores would take rows across the "
            f"heads' column bands, {cs.ldc} elements apart; drop sync_all(True) (the epilogue then takes each C "
            "tile from its cube core) or keep the epilogue out of the fusion (create_schedule(..., keep_out=["
            f"{names[cs.root]}]))")
    row_block = mixed and fk.has_row_reduction() and not cfg.aic_only and not sync
    if row_block and cfg.order_by and cfg.order[:1] != ("m",):
        raise ScheduleError(f"kernel {fk.name}: {cfg.order_by} cannot apply: its row-reduction epilogue needs "
                            "whole rows, so each core takes a block of rows ('m') and walks all of 'n' itself; "
                            "drop it (rows are spread over cores already), take sync_all(True) (C tiles over every "
                            "core in any order, then the rows), or keep the reduction out of the fusion "
                            "(create_schedule(..., keep_out=[...]) or fuse=False) to tile 'n' freely")
    # the L1 level across C tiles (l1_c_steps, groups.py): a core walks groups of gsm x gsn C
    # tiles; a row-reduction epilogue's unit is a row block already (groups along n inside it); an
    # elementwise epilogue hands over one C tile at a time (no groups), as does a conv
    gsm = 1 if ((mixed and not sync) or cs.conv) else max(1, min(cfg.step_m, mt))
    gsn = 1 if (cs.conv or (mixed and not sync and not fk.has_row_reduction())) else max(1, min(cfg.step_n, nt))
    mt_w, nt_w = -(-mt // gsm), -(-nt // gsn)
    units_n = 1 if row_block else nt_w
    total = cs.batch * mt_w * units_n
    bd = max(1, min(cfg.cores, total))
    depth = cfg.depth
    # the code may take M at run time (kernel_facts.runtime_m_of) when one batch is dealt out in plain
    # row-major or column-major order of single tile rows; the TileIR then reads M and m_tiles from its tiling
    # (a conv: its batch, whose images the walk deals out whole)
    # (sync_all: its whole-C workspace, [*A's leading dims, N], holds the run's rows too)
    # (sync_all in l1_c_steps groups: the walk deals out group rows of gsm tile rows, counted at run time in
    # "m_groups" of "group_m" rows each)
    rt = None
    if (gsm == 1 or sync) and not cfg.swizzle_group and not (cfg.aic_only or cfg.aiv_only or (sync and cs.conv)):
        unit_cols = cs.N if row_block else tn
        ws_bytes = depth * tm * unit_cols * itemsize(cs.root.dtype) if mixed and not sync else 0
        if cs.conv:
            rt = runtime_batch_of(fk, names, cfg.cores, mt_w * units_n, ws_bytes)
        elif cs.batch == 1:
            rt = runtime_m_of(fk, names, cfg.cores, units_n, ws_bytes)
            if rt is not None and sync:
                rt = replace(rt, tensors=(*rt.tensors, f"{ident(fk.name)}_ws"))
            if rt is not None and gsm > 1:
                rt = replace(rt, tile="group_m", row_tiles="m_groups")
    if rt is not None and rt.row_tiles:
        cs.m_expr = Var("M")
    # the L1 level: one load of A (B) brings sa (sb) k tiles; the larger step must be a multiple of
    # the smaller (TCubeTiling stepKa / stepKb)
    # conv: the weights (A) load in slabs; the img2col source already holds every channel's rows
    sa, sb = max(1, min(cfg.step_ka, kt)), 1 if cs.conv else max(1, min(cfg.step_kb, kt))
    if max(sa, sb) % min(sa, sb):
        sa = sb = min(sa, sb)
    grp = GroupShape(gsm, gsn, kt, sa, sb)
    p = CubePlan(fk, names, cfg, cs, tm, tn, tk, mt, nt, kt, mixed, sync, row_block, gsm, gsn, mt_w, nt_w, units_n,
                 total, bd, depth, rt, grp, grp.sa, grp.sb)  # a resident panel loads all k tiles at once
    _declare_buffers(p)
    p.tiling = _tiling(p)
    return p


def _declare_buffers(p: CubePlan) -> None:
    cs, cfg, tm, tn, tk, kt, depth, grp = p.cs, p.cfg, p.tm, p.tn, p.tk, p.kt, p.depth, p.grp
    sa, sb, gsm, gsn, dt = p.sa, p.sb, p.gsm, p.gsn, cs.in_dtype
    da1, db1 = cfg.depth_a1 or depth, cfg.depth_b1 or depth
    a_rows, a_cols = (tk, tm) if cs.ta else (tm, tk)
    a1_rows, a1_cols = (tk * sa, tm) if cs.ta else (tm, tk * sa)
    p.buf("a1", Tier.L1, dt, a1_rows, a1_cols, da1, QuePos.A1,
          f"A row panel of {cs.a_name} (all {kt} k tiles), resident across up to {gsn} C tiles along n"
          if grp.a_res else
          f"A {'slab' if sa > 1 else 'tile'} of {cs.a_name if not cs.conv else cs.b_name}"
          + (f" ({sa} k tiles)" if sa > 1 else ""))
    d0 = cfg.depth_l0 or depth  # L0A/L0B slots
    p.buf("a2", Tier.L0A, dt, a_rows, a_cols, d0, QuePos.A2, "A fractal for Mmad")
    if cs.conv:
        spanned = -(-tn // cs.ow) + 1
        p.slab_rows = min((spanned - 1) * cs.stride[0] + cs.kh, cs.h + cs.pad[0] + cs.pad[1])
        p.buf("slab", Tier.L1, dt, cs.cin_pad * p.slab_rows, cs.w, depth, QuePos.B1,
              f"input rows of {cs.a_name} for one pixel tile (img2col source)")
        p.buf("b2", Tier.L0B, dt, tn, tk, d0, QuePos.B2, "img2col patches")
    else:
        b_rows, b_cols = (tn, tk) if cs.tb else (tk, tn)
        bw = tn * (gsn if grp.b_res else 1)  # B's panel spans the group's columns
        b1_rows, b1_cols = (bw, tk * sb) if cs.tb else (tk * sb, bw)
        p.buf("b1", Tier.L1, dt, b1_rows, b1_cols, db1, QuePos.B1,
              f"B column panel of {cs.b_name} (all {kt} k tiles, {gsn} C tiles wide), resident across up to {gsm} "
              "tile rows" if grp.b_res else
              f"B {'slab' if sb > 1 else 'tile'} of {cs.b_name}" + (f" ({sb} k tiles)" if sb > 1 else ""))
        p.buf("b2", Tier.L0B, dt, b_rows, b_cols, d0, QuePos.B2, "B fractal for Mmad")
    c_depth = 2 if depth == 2 and 2 * tm * tn * itemsize(cs.acc_dtype) <= cfg.l0c_bytes else 1
    p.buf("c", Tier.L0C, cs.acc_dtype, tm, tn, c_depth, QuePos.CO1, "C accumulator")


def _tiling(p: CubePlan) -> tuple[tuple[str, int], ...]:
    cs = p.cs
    tiling = (("M", cs.M), ("N", cs.N), ("K", cs.K), ("batch", cs.batch), ("tile_m", p.tm), ("tile_n", p.tn),
              ("tile_k", p.tk), ("m_tiles", p.mt), ("n_tiles", p.nt), ("k_tiles", p.kt), ("tiles", p.total),
              ("block_dim", p.bd))
    if p.sa > 1 or p.sb > 1:
        tiling += (("step_ka", p.sa), ("step_kb", p.sb))
    if p.grp.grouped:
        tiling += (("step_m", p.gsm), ("step_n", p.gsn))
    if p.rt is not None and p.rt.row_tiles == "m_groups":  # the walk's unit rows and their count
        tiling += (("group_m", p.gsm * p.tm), ("m_groups", p.mt_w))
    return tiling
