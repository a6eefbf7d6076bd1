"""Lowering of `scatter` (dsl/cache.py): each token's row written into its slot of a paged cache, in place.

The tokens are dealt out in tiles of `tile_rows` tokens x `tile_cols` row elements (PA_NZ: a multiple of
c0), tile t on core t % block_dim. Per tile: the slots and the values come in (MTE2), the scalar waits for
both (MTE2 -> S, MTE2 -> MTE3), then, one token at a time, it reads the slot from UB and MTE3 writes the
token's row there: one contiguous copy for PA_BSND, `cols / c0` chunks of c0 elements `block_size * c0`
apart for PA_NZ. MTE3 -> MTE2 before the slot's buffers take the next tile.

The kernel writes into the cache's own GM tensor: the program's output is that input tensor, and the
kernel's parameters are (cache, index, values).
"""

from __future__ import annotations

from ..core.dtypes import BLOCK_BYTES, itemsize
from ..core.errors import UnsupportedError
from ..fusion.partition import FusedKernel
from ..ir.golden import scatter_slots
from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import Op
from ..tileir.expr import Const, E, Load, Var
from ..tileir.program import (
    Alloc,
    Copy,
    DeQue,
    EnQue,
    Free,
    Kernel,
    Let,
    Loop,
    Pipe,
    QuePos,
    Region,
    SetFlag,
    Stmt,
    WaitFlag,
)
from .config import KernelConfig
from .ub import ub_buffer
from .vector_body import ident

__all__ = ["lower_scatter_kernel", "alias_in_place", "check_in_place"]


def alias_in_place(graph: Graph, names: dict[Node, str]) -> None:
    """Name each in-place node after the input it updates: its result is that tensor."""
    for n in graph.nodes:
        if n.op is Op.SCATTER:
            names[n] = names[n.inputs[n.attr("inplace")]]


def check_in_place(graph: Graph) -> None:
    """An updated cache is read by its scatter alone (the update destroys the rows another reader would see)."""
    for n in graph.nodes:
        if n.op is not Op.SCATTER:
            continue
        cache = n.inputs[0]
        others = [m for m in graph.nodes if m is not n and cache in m.inputs]
        if others:
            m = others[0]
            raise UnsupportedError(
                f"scatter {graph.names[n]}: the cache {graph.names[cache]} is updated in place, and "
                f"{graph.names[m]} ({m.op.value}) reads it too; read the scatter's result instead, or give that "
                "reader its own copy of the cache")


def lower_scatter_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    n = fk.nodes[0]
    cache, ind, vals = n.inputs
    layout = n.attr("layout")
    slots, bs, row = scatter_slots(cache.shape, layout)
    tokens = ind.size
    c0 = BLOCK_BYTES // itemsize(n.dtype)
    tr = max(1, min(cfg.tile_rows, tokens))
    tc = min(cfg.tile_cols, row)
    if layout == "PA_NZ":
        tc = max(c0, tc // c0 * c0)
    rt, ct = -(-tokens // tr), -(-row // tc)
    total = rt * ct
    bd = max(1, min(cfg.cores, total))
    co, ii, vi = names[cache], names[ind], names[vals]
    bufs = [ub_buffer(f"in_{ident(ii)}", ind.dtype, 1, tr, cfg.depth, QuePos.VECIN,
                      f"slots of this tile's tokens ({ii})"),
            ub_buffer(f"in_{ident(vi)}", vals.dtype, tr, tc, cfg.depth, QuePos.VECIN, f"rows of {vi} to write")]
    i_b, v_b = bufs[0].name, bufs[1].name
    v_cols = bufs[1].cols
    src = Region(v_b, E.mul(Var("r"), v_cols), Const(1), Var("clen"), Const(v_cols))
    if layout == "PA_NZ":  # the row window [c0, c0 + clen) as clen / c0 chunks, block_size * c0 apart
        chunks = E.div(Var("clen"), c0)
        dst = Region(co, E.add(E.add(E.mul(E.div(Var("s"), bs), row * bs), E.mul(E.div(Var("c0"), c0), bs * c0)),
                               E.mul(E.mod(Var("s"), bs), c0)), chunks, Const(c0), Const(bs * c0), gm=True)
        src = Region(v_b, E.mul(Var("r"), v_cols), chunks, Const(c0), Const(c0))
    else:
        dst = Region(co, E.add(E.mul(Var("s"), row), Var("c0")), Const(1), Var("clen"), Const(row), gm=True)
    rows = Loop("r", Const(0), Var("rlen"), Const(1), (
        Let("s", Load(i_b, Var("r"))),
        Copy(dst, src, comment=f"row r of {vi} -> {co} slot {ii}[r]")),
        comment="one cache slot per token (the scalar reads the slot)")
    body: tuple[Stmt, ...] = (
        Let("r0", E.mul(E.div(Var("t"), ct), tr)), Let("rlen", E.min(tr, E.sub(tokens, Var("r0")))),
        Let("c0", E.mul(E.mod(Var("t"), ct), tc)), Let("clen", E.min(tc, E.sub(row, Var("c0")))),
        Alloc(i_b),
        Copy(Region(i_b, Const(0), Const(1), Var("rlen"), Const(bufs[0].cols)),
             Region(ii, Var("r0"), Const(1), Var("rlen"), Const(tokens), gm=True), comment=f"copy in {ii}"),
        EnQue(i_b), DeQue(i_b),
        Alloc(v_b),
        Copy(Region(v_b, Const(0), Var("rlen"), Var("clen"), Const(v_cols)),
             Region(vi, E.add(E.mul(Var("r0"), row), Var("c0")), Var("rlen"), Var("clen"), Const(row), gm=True),
             comment=f"copy in {vi}"),
        EnQue(v_b), DeQue(v_b),
        SetFlag(Pipe.MTE2, Pipe.S, 0), WaitFlag(Pipe.MTE2, Pipe.S, 0),  # slots in UB before the scalar reads
        SetFlag(Pipe.MTE2, Pipe.MTE3, 0), WaitFlag(Pipe.MTE2, Pipe.MTE3, 0),  # rows in UB before they go out
        rows,
        SetFlag(Pipe.MTE3, Pipe.MTE2, 0), WaitFlag(Pipe.MTE3, Pipe.MTE2, 0),  # rows out before the slot refills
        Free(v_b), Free(i_b))
    loop = Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), body,
                comment=f"parallel_loop: {total} tiles over {bd} cores")
    # tiling names of their own (a user's tensor may be called "slots" or "tokens")
    tiling = (("scatter_tokens", tokens), ("scatter_row", row), ("cache_slots", slots), ("cache_block_size", bs),
              ("tile_rows", tr), ("tile_cols", tc), ("tiles", total), ("block_dim", bd))
    return Kernel(name=ident(fk.name), family="vector", kernel_type="AIV_ONLY", block_dim=bd,
                  params=(co, ii, vi), buffers=tuple(bufs), aiv=(loop,), tiling=tiling,
                  ops=tuple(names[m] for m in fk.nodes), vec_per_block=1,
                  inplace_bytes=tokens * row * itemsize(n.dtype),
                  notes=(f"scatter of {tokens} rows of {row} into a {layout} cache of {slots} slots, in place",))
