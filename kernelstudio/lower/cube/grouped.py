"""Lowering of `grouped_matmul` (dsl/grouped.py): the MoE experts' matmul as one cube kernel whose tile list is
read from the group list at run time.

The output tiles (tile_m x tile_n) are enumerated group by group (a group's tile rows start at its first row, so
its last tile row is short when its count is not a multiple of tile_m) and dealt round-robin over the block_dim
cores, the deal going on across groups (tile t of the whole list to core t % block_dim, as CANN's GroupedMatmul
deals them), not one expert per core. Each core walks the groups in order, reading each group's size from
GM (a scalar read of the group list), and takes the group's tiles j with (base + j) % block_dim == its index,
base being the tiles of the groups before. Per tile: the k loop of A rows [m0, +mlen) of x and B = weights[g]
(k_loop.c_tile), FixPipe to the output rows.

The output's rows past the groups' total are zero: the two vector cores of each block fill them (a zeroed UB
tile copied out in chunks), dealt over all the vector cores of the launch, apart from the cube's rows.

The simulator cannot see the group list: the kernel's `planned_loads` gives it the node's plan_sizes (as counts
or their cumsum), so its timeline is the one of the planned distribution.
"""

from __future__ import annotations

import itertools

from ...core.dtypes import itemsize
from ...fusion.partition import FusedKernel
from ...ir.node import Node
from ...tileir.expr import Const, E, Expr, Load, Var
from ...tileir.program import (
    Buffer,
    Copy,
    Free,
    Kernel,
    Let,
    Loop,
    Pipe,
    Region,
    SetFlag,
    Stmt,
    VecOp,
    WaitFlag,
)
from ..config import KernelConfig
from ..ub import ub_buffer
from ..vector_body import ident
from .groups import GroupShape
from .k_loop import c_tile
from .plan import CubePlan, _declare_buffers
from .shape import AIV_PER_BLOCK, CubeShape, pad16

__all__ = ["lower_grouped_kernel", "GroupedShape", "planned_tiles", "ZERO_CHUNK_BYTES"]

ZERO_CHUNK_BYTES = 16 * 1024  # the zeroed UB tile the vector cores copy over the rows past the total (assumed)


class GroupedShape(CubeShape):
    """The matmul view of a grouped matmul: x [M, K] @ weights[g] [K, N] per group, B's offset by group."""

    def __init__(self, fk: FusedKernel, names: dict[Node, str]):  # noqa: D107 - no CubeShape init: 3 inputs
        root = fk.root
        assert root is not None
        x, w, gl = root.inputs
        self.root, self.conv, self.per_head, self.ta, self.tb = root, False, False, False, False
        self.a_name, self.b_name, self.gl_name = names[x], names[w], names[gl]
        self.in_dtype, self.acc_dtype = x.dtype, "float32"
        self.M, self.K = x.shape
        self.E, _, self.N = w.shape
        self.batch, self.ob, self.a_batch, self.b_batch = 1, (), (), ()
        self.lda, self.ldc = self.K, self.N
        self.m_expr = Const(self.M)

    def batch_offset(self, which: str, bi: Expr) -> Expr:
        """Group `bi`'s weights in B; x's rows are addressed by m0 alone."""
        return E.mul(bi, self.K * self.N) if which == "b" else Const(0)

    def panel_key(self, which: str, bi: Expr) -> Expr:
        return self.batch_offset(which, bi)


def planned_tiles(sizes: tuple[int, ...], tm: int, nt: int) -> list[tuple[int, int, int]]:
    """The output tiles of a distribution in deal order: (group, tile row in the group, tile column)."""
    return [(g, mi, ni) for g, c in enumerate(sizes) for mi in range(-(-c // tm)) for ni in range(nt)]


def lower_grouped_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> tuple[Kernel, None]:
    root = fk.root
    assert root is not None
    cs = GroupedShape(fk, names)
    M, N, K, G = cs.M, cs.N, cs.K, cs.E
    tm, tn, tk = min(cfg.tile_m, pad16(M)), min(cfg.tile_n, pad16(N)), min(cfg.tile_k, pad16(K))
    if not cfg.aligned:
        tm, tn, tk = min(cfg.tile_m, M), min(cfg.tile_n, N), min(cfg.tile_k, K)
    nt, kt = -(-N // tn), -(-K // tk)
    plan_sizes = tuple(root.attr("plan_sizes"))
    total = len(planned_tiles(plan_sizes, tm, nt))
    # the most tiles any distribution of M rows over G groups makes: every group adds at most one short tile row
    bound = (M // tm + min(G, M)) * nt
    bd = max(1, min(cfg.cores, bound))
    sa, sb = max(1, min(cfg.step_ka, kt)), max(1, min(cfg.step_kb, kt))
    if max(sa, sb) % min(sa, sb):
        sa = sb = min(sa, sb)
    grp = GroupShape(1, 1, kt, sa, sb)
    p = CubePlan(fk, names, cfg, cs, tm, tn, tk, -(-M // tm), nt, kt, False, False, False, 1, 1, -(-M // tm), nt,
                 nt, total, bd, cfg.depth, None, grp, grp.sa, grp.sb)
    _declare_buffers(p)
    tiling = (("M", M), ("N", N), ("K", K), ("batch", 1), ("groups", G), ("tile_m", tm), ("tile_n", tn),
              ("tile_k", tk), ("n_tiles", nt), ("k_tiles", kt), ("tiles", total), ("block_dim", bd),
              ("cumsum", int(root.attr("group_list_type") == "cumsum")))
    if sa > 1 or sb > 1:
        tiling += (("step_ka", sa), ("step_kb", sb))
    list_type = root.attr("group_list_type")
    gl = cs.gl_name
    planned = tuple(itertools.accumulate(plan_sizes)) if list_type == "cumsum" else plan_sizes
    out = names[root]
    notes = (*cfg.notes, f"grouped matmul: {G} groups' tiles of {tm}x{tn} dealt round-robin over {bd} cores, the "
             f"deal going on across groups; group sizes read from {gl} ({list_type}) at run time; the simulator "
             f"takes the planned sizes {plan_sizes} ({total} tiles)")
    if cfg.aic_only:
        return Kernel(name=ident(fk.name), family=fk.family, kernel_type="AIC_ONLY", block_dim=bd,
                      params=(cs.a_name, cs.b_name, gl, out), buffers=tuple(p.bufs.values()), aic=(), aiv=(),
                      tiling=tiling, ops=(out,), notes=notes, vec_per_block=1), None
    aic = _cube_program(p, gl, list_type, out)
    zero, aiv = _zero_tail(cs, gl, list_type, out, root.dtype)
    return Kernel(name=ident(fk.name), family=fk.family, kernel_type="MIX_AIC_1_2", block_dim=bd,
                  params=(cs.a_name, cs.b_name, gl, out), buffers=(*p.bufs.values(), zero), aic=aic, aiv=aiv,
                  tiling=(*tiling, ("zero_rows", zero.rows)), ops=(out,), notes=notes, vec_per_block=AIV_PER_BLOCK,
                  planned_loads=((gl, planned),)), None


def _count(gl: str, list_type: str, g: Expr, row0: Expr) -> Expr:
    """Group g's rows: its count, or its end row less the rows before it."""
    return Load(gl, g) if list_type == "count" else E.sub(Load(gl, g), row0)


def _cube_program(p: CubePlan, gl: str, list_type: str, out: str) -> tuple[Stmt, ...]:
    cs, tm, tn, nt = p.cs, p.tm, p.tn, p.nt
    g, j, cnt, base, row0, bdim = Var("g"), Var("j"), Var("cnt"), Var("base"), Var("row0"), Var("block_dim")
    fix = Copy(Region(out, cs.c_offset(Const(0), Var("m0"), Var("n0")), Var("mlen"), Var("nlen"), Const(cs.N),
                      gm=True),
               Region("c", Const(0), Var("mlen"), Var("nlen"), Const(p.bufs["c"].cols)),
               comment=f"FixPipe: {out} {cs.acc_dtype} -> {cs.root.dtype}")
    tile = (Let("mi", E.div(j, nt)), Let("ni", E.mod(j, nt)),
            Let("m0", E.add(row0, E.mul(Var("mi"), tm))), Let("mlen", E.min(tm, E.sub(cnt, E.mul(Var("mi"), tm)))),
            Let("n0", E.mul(Var("ni"), tn)), Let("nlen", E.min(tn, E.sub(cs.N, Var("n0")))), Let("bi", g),
            *c_tile(p, Var("n0"), Var("nlen")), fix, Free("c"))
    # this core's first tile of the group: the j with (base + j) % block_dim == blk
    first = E.mod(E.sub(E.add(Var("blk"), bdim), E.mod(base, bdim)), bdim)
    group = (Let("cnt", _count(gl, list_type, g, row0)),
             Let("gtiles", E.mul(E.div(E.add(cnt, tm - 1), tm), nt)),
             Loop("j", first, Var("gtiles"), bdim, tile,
                  comment="parallel_loop: the group's tiles, dealt on from the groups before"),
             Let("base", E.add(base, Var("gtiles"))), Let("row0", E.add(row0, cnt)))
    return (Let("base", Const(0)), Let("row0", Const(0)),
            Loop("g", Const(0), Const(cs.E), Const(1), group,
                 comment=f"the {cs.E} groups in order, each one's size read from {gl}"))


def _zero_tail(cs: GroupedShape, gl: str, list_type: str, out: str, dtype: str) -> tuple[Buffer, tuple[Stmt, ...]]:
    """The AIV program: rows [total, M) of the output set to zero, chunks of rows over every vector core."""
    row_bytes = max(1, cs.N * itemsize(dtype))
    rows = max(1, min(cs.M, ZERO_CHUNK_BYTES // row_bytes))
    zero = ub_buffer("zero", dtype, rows, cs.N, 1, None, f"{rows} zero rows copied over {out}'s rows past the total")
    if list_type == "count":
        total: list[Stmt] = [Let("total", Const(0)),
                             Loop("g", Const(0), Const(cs.E), Const(1),
                                  (Let("total", E.add(Var("total"), Load(gl, Var("g")))),),
                                  comment=f"the groups' total rows: the sum of {gl}")]
    else:
        total = [Let("total", Load(gl, Const(cs.E - 1)))]
    aivs = E.mul(Var("block_dim"), AIV_PER_BLOCK)
    left = E.sub(cs.M, Var("total"))
    chunk = (Let("z0", E.add(Var("total"), E.mul(Var("zc"), rows))), Let("zlen", E.min(rows, E.sub(cs.M, Var("z0")))),
             Copy(Region(out, E.mul(Var("z0"), cs.N), Var("zlen"), Const(cs.N), Const(cs.N), gm=True),
                  Region("zero", Const(0), Var("zlen"), Const(cs.N), Const(zero.cols)),
                  comment=f"zero rows of {out} past the groups' total"))
    aiv = (*total,
           VecOp("duplicate", Region("zero", Const(0), Const(rows), Const(zero.cols), Const(zero.cols)), (),
                 scalar=0.0, comment="a tile of zeros"),
           SetFlag(Pipe.V, Pipe.MTE3, 0), WaitFlag(Pipe.V, Pipe.MTE3, 0),
           Loop("zc", E.add(E.mul(Var("blk"), AIV_PER_BLOCK), Var("sub")), E.div(E.add(left, rows - 1), rows), aivs,
                chunk, comment="the rows past the total in chunks, over every vector core"))
    return zero, aiv

