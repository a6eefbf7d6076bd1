"""Lowering of ks.concat, and of ks.split's parts (slice) that do not fuse: kernels of strided moves,
GM -> UB -> GM. (A part along the last axis, or of whole rows, starts a vector kernel that reads it as a
strided window of its input instead: lower/families.py, fusion.partition.slice_view.)

A tensor cut along `axis` is viewed as [outer, axis * inner] (outer: the dims before the axis, inner: the
ones after): a part along the axis is a band of columns of that view, from column start * inner, width
size * inner. So a slice along the last axis is a column offset into every row, and along axis 0 (outer = 1)
a row offset into the flattened tensor. Each band moves in tiles of rows x columns: one strided GM read into
a UB buffer (DataCopy with a row stride, DataCopyPad where the band's width or offset is not whole 32-byte
blocks), one strided GM write from it. No vector instruction runs: the data only moves, and the moves cost
their bursts (one per row of a tile).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UnsupportedError
from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..ir.ops import Op
from ..tileir.expr import Const, E, Var
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

__all__ = ["lower_slice_kernel", "SLICE_OPS"]

SLICE_OPS = (Op.SLICE, Op.CONCAT)


@dataclass(frozen=True, slots=True)
class _Band:
    """rows x width elements from src (row stride src_stride, first at src_off) to dst likewise."""

    src: str
    src_off: int
    src_stride: int
    dst: str
    dst_off: int
    dst_stride: int
    rows: int
    width: int


def _view(shape: tuple[int, ...], axis: int) -> tuple[int, int]:
    """(outer, inner) of `shape` around `axis`."""
    outer = inner = 1
    for d in shape[:axis]:
        outer *= d
    for d in shape[axis + 1:]:
        inner *= d
    return outer, inner


def _bands(n: Node, names: dict[Node, str]) -> list[_Band]:
    ax = n.attr("axis")
    if n.op is Op.SLICE:
        x = n.inputs[0]
        outer, inner = _view(x.shape, ax)
        size = n.shape[ax]
        return [_Band(names[x], n.attr("start") * inner, x.shape[ax] * inner, names[n], 0, size * inner, outer,
                      size * inner)]
    outer, inner = _view(n.shape, ax)
    bands, at = [], 0
    for x in n.inputs:
        w = x.shape[ax] * inner
        bands.append(_Band(names[x], 0, w, names[n], at, n.shape[ax] * inner, outer, w))
        at += w
    return bands


def _tiles(b: _Band, cfg: KernelConfig) -> tuple[int, int, int, int]:
    """(tile rows, tile cols, row tiles, col tiles) of a band."""
    tr, tc = max(1, min(cfg.tile_rows, b.rows)), min(cfg.tile_cols, b.width)
    return tr, tc, -(-b.rows // tr), -(-b.width // tc)


def lower_slice_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    n = fk.nodes[0]
    if n.op not in SLICE_OPS or len(fk.nodes) != 1:
        raise UnsupportedError(f"kernel {fk.name}: {n.op.value} is not a slice/concat kernel")
    bands = _bands(n, names)
    shapes = [_tiles(b, cfg) for b in bands]
    tr = max(s[0] for s in shapes)
    tc = max(s[1] for s in shapes)
    buf = ub_buffer(f"move_{ident(names[n])}", n.dtype, tr, tc, cfg.depth, QuePos.VECOUT,
                    f"a tile of {names[n]} on its way through UB")
    totals = [rt * ct for _, _, rt, ct in shapes]
    bd = max(1, min(cfg.cores, max(totals)))
    loops: list[Stmt] = []
    for j, (b, (btr, btc, _rt, ct), total) in enumerate(zip(bands, shapes, totals, strict=True)):
        ub = Region(buf.name, Const(0), Var("rlen"), Var("clen"), Const(buf.cols))
        body: tuple[Stmt, ...] = (
            Let("r0", E.mul(E.div(Var("t"), ct), btr)), Let("rlen", E.min(btr, E.sub(b.rows, Var("r0")))),
            Let("c0", E.mul(E.mod(Var("t"), ct), btc)), Let("clen", E.min(btc, E.sub(b.width, Var("c0")))),
            Alloc(buf.name),
            SetFlag(Pipe.MTE3, Pipe.MTE2, 0), WaitFlag(Pipe.MTE3, Pipe.MTE2, 0),  # the slot's last copy-out done
            Copy(ub, Region(b.src, E.add(E.add(E.mul(Var("r0"), b.src_stride), b.src_off), Var("c0")), Var("rlen"),
                            Var("clen"), Const(b.src_stride), gm=True), comment=f"copy in {b.src} (strided)"),
            SetFlag(Pipe.MTE2, Pipe.MTE3, 0), WaitFlag(Pipe.MTE2, Pipe.MTE3, 0),  # landed before copy-out
            EnQue(buf.name), DeQue(buf.name),
            Copy(Region(b.dst, E.add(E.add(E.mul(Var("r0"), b.dst_stride), b.dst_off), Var("c0")), Var("rlen"),
                        Var("clen"), Const(b.dst_stride), gm=True), ub, comment=f"copy out {b.dst} (strided)"),
            Free(buf.name))
        what = (f"{b.src} columns {b.src_off}..{b.src_off + b.width} of {b.src_stride}" if n.op is Op.SLICE else
                f"{b.src} into {b.dst} columns {b.dst_off}..{b.dst_off + b.width} of {b.dst_stride}")
        loops.append(Loop("t", Var("blk"), Const(total), Var("block_dim"), body,
                          comment=f"parallel_loop: part {j}: {what}, {total} tiles of {btr}x{btc} over {bd} cores"))
    verb = "slice" if n.op is Op.SLICE else f"concat of {len(bands)}"
    note = (f"{verb} along axis {n.attr('axis')}: {len(bands)} band(s) of rows x columns moved GM -> UB -> GM "
            f"with strided copies (no vector work)")
    b0 = bands[0]
    return Kernel(name=ident(fk.name), family="vector", kernel_type="AIV_ONLY", block_dim=bd,
                  params=tuple(names[i] for i in fk.inputs) + tuple(names[o] for o in fk.outputs),
                  buffers=(buf,), aiv=tuple(loops),
                  tiling=(("rows", b0.rows), ("cols", b0.width), ("tile_rows", tr), ("tile_cols", tc),
                          ("tiles", max(totals)), ("block_dim", bd)),
                  ops=tuple(names[m] for m in fk.nodes), notes=(note,), vec_per_block=1)
