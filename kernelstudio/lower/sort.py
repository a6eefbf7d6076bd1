"""Lowering of `sort` (ks.argsort / ks.sort) and `histogram` (moe_init_routing's expert counts).

sort: rows of the last axis dealt out in tiles of `tile_rows` rows, tile t on core t % block_dim. Per tile
the rows come in (MTE2), bfloat16 and int32 keys are cast to float32 (TopK sorts half or float; an int32
key is exact below 2**24, which the golden model checks), and one TopK with k = the row length sorts each
row: largest first for descending, smallest first otherwise, equal keys in their original order both ways
(the TopK API's merge sort is stable). Values sorted in float32 are cast back to the input's dtype (exact:
they are the inputs). The indices and/or values go out (MTE3).

Row limit: SORT_MAX_ROW = 4096 elements per row sorted in one tile: a tile (at most 4096 elements) of the rows,
their float32 keys, sorted values and indices, plus TopK's scratch for one row (two 8-byte proposal areas and an
index row, 20 bytes per element: the twin's GetTopKMaxMinTmpSize) sit in UB together. Rows over 2048 are
single-buffered: 176 KB of the 192 KB UB at 4096 int32 keys with values and indices out. Longer rows are sorted
in tiles and merged through a GM workspace (sort_merge.py).

histogram: one core. The ids come in, are cast to float32 keys, and for each bin e a Select writes 1 where
the key is 0 (the keys are shifted down by one per bin: key = id - e), a sum reduces the row into the
bin's count, and an Adds shifts the keys: three vector instructions of the row's length per bin. More than
SORT_MAX_ROW ids come in chunks of that many, each chunk's counts (a row of sums as above) added to the totals. The
counts are cast to int32 and go out. Ids outside [0, bins) match no bin (the golden model refuses them).
"""

from __future__ import annotations

from ..core.errors import UnsupportedError
from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..tileir.expr import Const, E, Var
from ..tileir.program import (
    Alloc,
    Buffer,
    Copy,
    DeQue,
    EnQue,
    Free,
    GmTensor,
    Kernel,
    Let,
    Loop,
    QuePos,
    Reduce,
    Region,
    Stmt,
    TopK,
    VecOp,
)
from .config import KernelConfig
from .sort_merge import lower_sort_tiles
from .ub import ub_buffer as _ub
from .vector_body import ident

__all__ = ["lower_sort_kernel", "lower_histogram_kernel", "SORT_MAX_ROW"]

SORT_MAX_ROW = 4096  # elements per sorted row (module doc)
_NATIVE = ("float16", "float32")  # what TopK sorts


def _rg(b: Buffer, rows: object, cols: object) -> Region:
    return Region(b.name, Const(0), rows if not isinstance(rows, int) else Const(rows),  # type: ignore[arg-type]
                  cols if not isinstance(cols, int) else Const(cols), Const(b.cols))  # type: ignore[arg-type]


def _kernel(fk: FusedKernel, names: dict[Node, str], bufs: list[Buffer], body: tuple[Stmt, ...], total: int,
            bd: int, tiling: tuple[tuple[str, int], ...], note: str) -> Kernel:
    loop = Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), body,
                comment=f"parallel_loop: {total} tiles over {bd} cores")
    return Kernel(name=ident(fk.name), family="vector", kernel_type="AIV_ONLY", block_dim=bd,
                  params=tuple(names[i] for i in fk.inputs) + tuple(names[o] for o in fk.outputs),
                  buffers=tuple(bufs), aiv=(loop,), tiling=tiling + (("tiles", total), ("block_dim", bd)),
                  ops=tuple(names[n] for n in fk.nodes), notes=(note,), vec_per_block=1)


def lower_sort_kernel(fk: FusedKernel, names: dict[Node, str],
                      cfg: KernelConfig) -> Kernel | tuple[Kernel, tuple[GmTensor, ...]]:
    vals = next((m for m in fk.nodes if m.attr("which") == "values"), None)
    idxs = next((m for m in fk.nodes if m.attr("which") == "indices"), None)
    n = fk.nodes[0]
    x = n.inputs[0]
    if n.attr("axis") % x.ndim != x.ndim - 1:
        raise UnsupportedError(f"{names[n]} = sort(axis={n.attr('axis')}) of {x.shape}: only the last axis is "
                               "lowered; transpose the axis to sort last first")
    C = x.shape[-1]
    R = x.size // C
    if C > SORT_MAX_ROW:  # sorted in tiles and merged through a GM workspace
        return lower_sort_tiles(fk, names, cfg)
    largest = bool(n.attr("descending"))
    tr = max(1, min(cfg.tile_rows, R, max(1, SORT_MAX_ROW // C)))
    depth = cfg.depth if C <= SORT_MAX_ROW // 2 else 1  # longer rows: single-buffered, to fit UB
    total = -(-R // tr)
    bd = max(1, min(cfg.cores, total))
    xi = names[x]
    native = x.dtype in _NATIVE
    kdt = x.dtype if native else "float32"
    b_in = _ub(f"in_{ident(xi)}", x.dtype, tr, C, depth, QuePos.VECIN, f"{xi} rows")
    bufs = [b_in]
    b_key = b_in if native else _ub("sort_keys", "float32", tr, C, 1, None, f"{xi} as float32 keys")
    if not native:
        bufs.append(b_key)
    out_v = vals is not None and native
    b_val = _ub(f"out_{ident(names[vals])}" if out_v and vals is not None else "sort_values", kdt, tr, C,
                depth, QuePos.VECOUT if out_v else None, "sorted values")
    b_idx = _ub(f"out_{ident(names[idxs])}" if idxs is not None else "sort_indices", "int32", tr, C, depth,
                QuePos.VECOUT if idxs is not None else None, "sorted indices")
    bufs += [b_val, b_idx]
    b_back = None
    if vals is not None and not native:  # sorted float32 values back to the input's dtype
        b_back = _ub(f"out_{ident(names[vals])}", vals.dtype, tr, C, depth, QuePos.VECOUT,
                     f"sorted values as {vals.dtype}")
        bufs.append(b_back)
    rows = Var("rlen")
    stmts: list[Stmt] = [
        Let("r0", E.mul(Var("t"), tr)), Let("rlen", E.min(tr, E.sub(R, Var("r0")))),
        Alloc(b_in.name), Copy(_rg(b_in, rows, C), Region(xi, E.mul(Var("r0"), C), rows, Const(C), Const(C), gm=True),
                               comment=f"copy in {xi}"),
        EnQue(b_in.name), DeQue(b_in.name)]
    if not native:
        stmts.append(VecOp("cast", _rg(b_key, rows, C), (_rg(b_in, rows, C),),
                           comment=f"{xi} {x.dtype} -> float32 keys (exact)"))
    outs: list[tuple[Buffer, Node]] = []
    if idxs is not None:
        outs.append((b_idx, idxs))
    if vals is not None:
        outs.append((b_back if b_back is not None else b_val, vals))
    stmts += [Alloc(b.name) for b, _ in outs]
    stmts.append(TopK(_rg(b_val, rows, C), _rg(b_idx, rows, C), _rg(b_key, rows, C), C,
                      comment=f"sort rows of {C}, {'descending' if largest else 'ascending'}, stable",
                      largest=largest))
    if b_back is not None:
        stmts.append(VecOp("cast", _rg(b_back, rows, C), (_rg(b_val, rows, C),),
                           comment=f"sorted values float32 -> {x.dtype} (exact)"))
    stmts += [EnQue(b.name) for b, _ in outs] + [Free(b_in.name)]
    for b, m in outs:
        stmts += [DeQue(b.name),
                  Copy(Region(names[m], E.mul(Var("r0"), C), rows, Const(C), Const(C), gm=True), _rg(b, rows, C),
                       comment=f"copy out {names[m]}"),
                  Free(b.name)]
    return _kernel(fk, names, bufs, tuple(stmts), total, bd, (("rows", R), ("cols", C), ("tile_rows", tr)),
                   f"stable {'descending' if largest else 'ascending'} sort of rows of {C} (TopK, k = {C})")


def lower_histogram_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    n = fk.nodes[0]
    ids = n.inputs[0]
    N, bins = ids.size, n.attr("bins")
    ch = min(N, SORT_MAX_ROW)  # ids per chunk: more than one chunk accumulates the counts
    chunks = -(-N // ch)
    ii, yo = names[ids], names[n]
    b_in = _ub(f"in_{ident(ii)}", "int32", 1, ch, 1, QuePos.VECIN, f"{ii}")
    b_key = _ub("hist_keys", "float32", 1, ch, 1, None, "ids - e as float32 (exact)")
    b_one = _ub("hist_ones", "float32", 1, ch, 1, None, "1.0 per id")
    b_zero = _ub("hist_zeros", "float32", 1, ch, 1, None, "0.0 per id")
    b_hit = _ub("hist_hit", "float32", 1, ch, 1, None, "1 where the id is bin e")
    b_acc = _ub("hist_counts", "float32", 1, bins, 1, None, "counts per bin")
    b_out = _ub(f"out_{ident(yo)}", "int32", 1, bins, 1, QuePos.VECOUT, f"{yo} to GM")
    acc = chunks > 1
    b_sum = _ub("hist_chunk_counts", "float32", 1, bins, 1, None, "the chunk's counts per bin") if acc else b_acc
    clen: object = Var("clen") if acc else ch
    key, hit = _rg(b_key, 1, clen), _rg(b_hit, 1, clen)
    per_bin = Loop("e", Const(0), Const(bins), Const(1), (
        VecOp("select", hit, (key, _rg(b_zero, 1, clen), _rg(b_one, 1, clen)), comment="hit = key != 0 ? 0 : 1"),
        Reduce("sum", Region(b_sum.name, Var("e"), Const(1), Const(1), Const(b_sum.cols)), hit,
               comment="chunk_count[e] = sum(hit)" if acc else "count[e] = sum(hit)"),
        VecOp("adds", key, (key,), -1.0, comment="key = id - (e + 1)")),
        comment="one pass over the chunk's ids per bin" if acc else f"one pass over the {N} ids per bin")
    chunk: tuple[Stmt, ...] = (
        Alloc(b_in.name),
        Copy(_rg(b_in, 1, clen), Region(ii, E.mul(Var("ci"), ch) if acc else Const(0), Const(1),
                                        Var("clen") if acc else Const(ch), Const(N), gm=True),
             comment=f"copy in {ii}"),
        EnQue(b_in.name), DeQue(b_in.name),
        VecOp("cast", key, (_rg(b_in, 1, clen),), comment=f"{ii} int32 -> float32 (exact below 2**24)"),
        Free(b_in.name),
        per_bin,
        *([VecOp("add", _rg(b_acc, 1, bins), (_rg(b_acc, 1, bins), _rg(b_sum, 1, bins)),
                 comment="counts += the chunk's counts")] if acc else []))
    ones = (VecOp("duplicate", _rg(b_one, 1, ch), (), 1.0, comment="ones"),
            VecOp("duplicate", _rg(b_zero, 1, ch), (), 0.0, comment="zeros"))
    if acc:
        counted: tuple[Stmt, ...] = (
            *ones, VecOp("duplicate", _rg(b_acc, 1, bins), (), 0.0, comment="counts start at zero"),
            Loop("ci", Const(0), Const(chunks), Const(1),
                 (Let("clen", E.min(ch, E.sub(N, E.mul(Var("ci"), ch)))), *chunk),
                 comment=f"the {N} ids in {chunks} chunks of {ch}, counts accumulated"))
    else:
        counted = (*chunk[:-1], *ones, per_bin)  # one chunk: the counts directly
    body: tuple[Stmt, ...] = (
        *counted,
        Alloc(b_out.name),
        VecOp("cast", _rg(b_out, 1, bins), (_rg(b_acc, 1, bins),), comment=f"{yo} float32 -> int32 (exact)"),
        EnQue(b_out.name), DeQue(b_out.name),
        Copy(Region(yo, Const(0), Const(1), Const(bins), Const(bins), gm=True), _rg(b_out, 1, bins),
             comment=f"copy out {yo}"),
        Free(b_out.name))
    note = (f"histogram of {N} ids into {bins} bins (select + sum per bin"
            + (f", {chunks} chunks of {ch} accumulated)" if acc else ")"))
    bufs = [b_in, b_key, b_one, b_zero, b_hit, b_acc, b_out] + ([b_sum] if acc else [])
    return _kernel(fk, names, bufs, body, 1, 1,
                   (("ids", N), ("bins", bins)), note)
