"""The order a cube kernel deals its C tiles out to cores, and what each tile reads.

Tile t (of `tiles` = batch x m_tiles x n_tiles C tiles, or batch x m_tiles row blocks when the
epilogue reduces whole rows) runs on block t % block_dim; the Lets below map t to its batch item
`bi`, tile row `mi` and tile column `ni`:

- row-major (the default): t walks the n tiles of a tile row, then the next row;
- column-major (`reorder("n", "m")` or `parallel("n")`): the m tiles of a column, then the next;
- swizzled (`swizzle(group=G, direction="m")`): groups of G tile rows; inside a group the walk goes
  down the G rows of one column, then the next column, and every other group walks the columns
  backwards (a serpentine), so the B column panels at a group boundary are used again at once.
  direction="n" is the same with the roles of rows and columns swapped (groups of G tile columns,
  odd groups walk the rows backwards). The last group holds the rows (columns) that are left.
  This is catlass's GemmIdentityBlockSwizzle<SwizzleOffset=G, SwizzleDirection=0 ("Zn") / 1
  ("Nz")>; CANN's Matmul tiling offers the two plain orders as SetTraverse(FIRSTM / FIRSTN).

Numerics do not depend on the order (every C tile is computed whole by one core); L2 reuse does:
a row-major walk over many columns streams all of B between two uses of a B column panel, a
swizzled walk reuses A and B panels while they are still in L2 (`TileWalk`, read by sim/l2.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.config import AUTO_SWIZZLE_GAIN
from ..core.errors import ScheduleError
from ..ir.ops import itemsize
from ..tileir.expr import Const, E, Expr, Var
from ..tileir.hints import Panel, TileWalk
from ..tileir.program import Kernel, Let, Stmt
from .config import KernelConfig

__all__ = ["tile_walk_lets", "tile_walk", "auto_swizzle", "AUTO_GAIN"]

AUTO_GAIN = AUTO_SWIZZLE_GAIN  # core/config.py: the assumed least saving of HBM reads


def tile_walk_lets(name: str, mn: tuple[int, int], tiles: tuple[int, int], cfg: KernelConfig,
                   row_block: bool, m_tiles: Expr | None = None) -> tuple[list[Stmt], str]:
    """(the Lets that map the tile index t to bi, mi (and ni), a note on the order or ""); `mn` is
    (M, N), `tiles` (tile_m, tile_n). `m_tiles` is the count of tile rows when the code reads it at run
    time (the plain orders only); by default the lowered count."""
    mt, nt = -(-mn[0] // tiles[0]), -(-mn[1] // tiles[1])
    assert m_tiles is None or not cfg.swizzle_group
    mtx: Expr | int = mt if m_tiles is None else m_tiles
    t = Var("t")
    if row_block:
        if cfg.swizzle_group:
            raise ScheduleError(
                f"kernel {name}: swizzle(group={cfg.swizzle_group}, direction={cfg.swizzle_dir!r}) cannot apply: its "
                f"row-reduction epilogue needs whole rows, so each core takes a block of rows ('m', {mt} row "
                f"blocks) and walks all {nt} n tiles itself; there is no C tile order to swizzle. Drop it, or keep "
                "the reduction out of the fusion (create_schedule(..., keep_out=[...]) or fuse=False) to order "
                "the matmul's C tiles")
        return [Let("bi", E.div(t, mtx)), Let("mi", E.mod(t, mtx))], ""
    if not cfg.swizzle_group:
        m_outer = cfg.order[:1] != ("n",)
        per = E.mul(mtx, nt)
        return [Let("bi", E.div(t, per)),
                Let("mi", E.div(E.mod(t, per), nt) if m_outer else E.mod(E.mod(t, per), mtx)),
                Let("ni", E.mod(E.mod(t, per), nt) if m_outer else E.div(E.mod(t, per), mtx))], ""
    g, along = cfg.swizzle_group, cfg.swizzle_dir
    grouped, walked = (mt, nt) if along == "m" else (nt, mt)  # tiles along the grouped / the walked axis
    if g > grouped:
        i = 0 if along == "m" else 1
        what, extent, tile = ("rows", "M", "m") if along == "m" else ("columns", "N", "n")
        raise ScheduleError(
            f"kernel {name}: swizzle(group={g}, direction={along!r}) cannot apply: there are only {grouped} tile "
            f"{what} ({extent}={mn[i]} in tiles of {tiles[i]}); use a group of at most {grouped} (group {grouped} "
            f"walks {'column' if along == 'm' else 'row'}-major), or a smaller split('{tile}', ...)")
    u = E.mod(t, mt * nt)
    pos = Var("grp_pos")  # position along the walked axis inside the group, before the serpentine
    odd = E.mod(Var("grp"), 2)
    walked_idx = E.add(E.mul(odd, E.sub(walked - 1, pos)), E.mul(E.sub(1, odd), pos))
    grouped_idx = E.add(E.mul(Var("grp"), g), E.mod(Var("grp_i"), Var("grp_len")))
    mi, ni = (grouped_idx, walked_idx) if along == "m" else (walked_idx, grouped_idx)
    lets: list[Stmt] = [
        Let("bi", E.div(t, mt * nt)),
        Let("grp", E.div(u, g * walked)),
        Let("grp_len", E.min(g, E.sub(grouped, E.mul(Var("grp"), g)))),
        Let("grp_i", E.mod(u, g * walked)),
        Let("grp_pos", E.div(Var("grp_i"), Var("grp_len"))),
        Let("mi", mi), Let("ni", ni)]
    what, other = ("tile rows", "column") if along == "m" else ("tile columns", "row")
    groups = -(-grouped // g)
    tail = f", the last one {grouped - (groups - 1) * g}" if grouped % g else ""
    note = (f"swizzle: C tiles walked in {groups} group(s) of {g} {what}{tail}; each {other} of a group in turn, "
            f"every other group backwards (catlass GemmIdentityBlockSwizzle<{g}, {0 if along == 'm' else 1}>)")
    return lets, note


def tile_walk(cs: Any, tiles: int, lets: list[Stmt], row_block: bool, nt: int, slices: int,
              grouped: bool = False) -> TileWalk:
    """What each tile reads, for the L2 model: the A row panel and the B column panel of its C tile
    (all of K), keyed by their GM offset. A row block reads its A panel once per n tile and all of
    B. Conv: the weights' row panel only; the input rows of neighbouring pixel tiles overlap by the
    kernel height, so the image is left to the L2 model's mean re-read rule.
    `cs` is the kernel's matmul view (families._CubeShape), `lets` the tile loop's Lets down to m0,
    mlen (n0, nlen), `slices` the L1 loads of one C tile. With `grouped` (l1_c_steps) a walk unit is a
    group of C tiles and its panels span the group (gm0, gmlen, gn0, gnlen)."""
    a_node, b_node = cs.root.inputs
    ia, ib = itemsize(a_node.dtype), itemsize(b_node.dtype)
    m0, mlen, n0, nlen = ((Var("gm0"), Var("gmlen"), Var("gn0"), Var("gnlen")) if grouped
                          else (Var("m0"), Var("mlen"), Var("n0"), Var("nlen")))
    a_off, b_off = cs.panel_key("a", Var("bi")), cs.panel_key("b", Var("bi"))
    if row_block:
        panels = (Panel(cs.a_name, E.add(a_off, m0), E.mul(mlen, cs.K * ia), Const(nt)),
                  Panel(cs.b_name, b_off, Const(cs.K * cs.N * ib)))
    elif cs.conv:  # the weights are the M-side operand; the image's pixel tiles overlap (l2.py's mean rule)
        panels = (Panel(cs.b_name, m0, E.mul(mlen, cs.K * ib)),)
    else:
        panels = (Panel(cs.a_name, E.add(a_off, m0), E.mul(mlen, cs.K * ia)),
                  Panel(cs.b_name, E.add(b_off, n0), E.mul(nlen, cs.K * ib)))
    return TileWalk(tiles, tuple(s for s in lets if isinstance(s, Let)), panels,
                    max(1, slices) * (nt if row_block else 1))


def auto_swizzle(cfg: KernelConfig, emit: Callable[[KernelConfig], Kernel], out_bytes: int,
                 l2_bytes: int) -> KernelConfig:
    """The auto-schedule's C tile order: when the operands together exceed 2/3 of L2 (below that
    every re-read hits whatever the order), each swizzle group of 2, 4, 8, ... tile rows or columns
    is priced by the L2 model (tileir/l2_walk.py, operands cold, the output `out_bytes` spread over the
    tiles) and the one with the fewest HBM reads is kept if it saves at least AUTO_GAIN of the
    row-major order's. `cfg` must be complete (cores, alignment); it comes back unchanged or with
    the swizzle and a note."""
    from ..tileir.l2_walk import walk_hbm_reads

    base = emit(cfg)
    t = dict(base.tiling)
    walk = base.tile_walk
    mt, nt = t.get("m_tiles", 1), t.get("n_tiles", 1)
    if walk is None or cfg.swizzle_group or cfg.order_by or walk.tiles != t["batch"] * mt * nt or min(mt, nt) < 2:
        return cfg
    operands = t["batch"] * (t["M"] + t["N"]) * t["K"] * 2  # an fp16-sized estimate: only a gate
    if 3 * operands <= 2 * l2_bytes:
        return cfg
    other = out_bytes / walk.tiles

    def hbm(k: Kernel) -> float:
        assert k.tile_walk is not None
        return walk_hbm_reads(k.tile_walk, k.block_dim, other, l2_bytes)

    plain = hbm(base)
    best, best_cfg = plain, cfg
    for along, grouped in (("m", mt), ("n", nt)):
        g = 2
        while g <= min(grouped, 64):
            c = cfg.with_(swizzle_group=g, swizzle_dir=along)
            v = hbm(emit(c))
            if v < best:
                best, best_cfg = v, c
            g *= 2
    if best_cfg is cfg or best > (1 - AUTO_GAIN) * plain:
        return cfg
    return best_cfg.noted(
        f"auto swizzle(group={best_cfg.swizzle_group}, direction={best_cfg.swizzle_dir!r}): the operands "
        f"({operands / 2**20:,.0f} MiB) exceed L2 ({l2_bytes / 2**20:,.0f} MiB); the L2 model predicts "
        f"{best / 1e9:,.2f} GB of HBM reads against {plain / 1e9:,.2f} GB in row-major order")
