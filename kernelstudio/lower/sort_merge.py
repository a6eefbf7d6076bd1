"""Lowering of `sort` rows longer than one UB tile: tiles sorted in UB, then merged through a GM workspace.

MoeInitRouting sorts T x k (token, expert) pairs in one row (32,768 at T = 4096, top-8), longer than the
4,096 elements one TopK sorts in UB (sort.py). CANN's MoeInitRoutingV2 sorts such a row the same way in
outline: each vector core sorts tiles of the row in UB, and MrgSort merges the sorted runs through a GM
workspace. Here, one vector kernel of three phases, a SyncAll between them:

1. tiles: the row is cut into n tiles of `tile` elements (dealt over the cores); each is cast to float32
   keys, sorted by one TopK (k = tile, indices offset by the tile's first column, equal keys by index) and
   written to the workspace as a sorted run of (key, index) pairs. The last tile of a row that is not a
   multiple of the tile is padded with +inf keys (-inf descending) whose indices lie past the row: they
   sort after every element of the row and are never copied out.
2. merges: n stages of odd-even merge-split (Baudet and Stevenson's block odd-even transposition sort): stage
   s pairs tiles (a, a + 1) for every a of the stage's parity; a core loads the two sorted runs (adjacent in
   the workspace: one copy of 2 x tile pairs), merges them with one MrgSort (keys, then indices on equal
   keys: a total order, so the result is the stable sort) and writes the lower half back to tile a, the
   upper to tile a + 1. After n stages the workspace row is sorted. A SyncAll ends each stage. Each merge
   holds 2 x tile pairs in UB, whatever the row's length; the price is n stages of about n / 2 merges
   (a merge tree would do log2(n) passes but its merges of long runs need a streaming MrgSort whose
   progress depends on the data).
3. out: each tile's indices (and keys, cast back to the input's dtype: exact, they are the inputs) are
   copied from the workspace to the outputs, the padding left behind.

Rows longer than SORT_MAX_TILES tiles are refused (n^2 / 2 merges), naming the numbers.
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
    MrgSort,
    QuePos,
    Region,
    Stmt,
    SyncAll,
    TopK,
    VecOp,
)
from .config import KernelConfig
from .ub import ub_buffer as _ub
from .vector_body import ident

__all__ = ["lower_sort_tiles", "SORT_TILE", "SORT_MAX_TILES"]

SORT_TILE = 2048  # elements per tile of a long row (module doc): the tile's TopK and a merge of two fit UB
SORT_MAX_TILES = 256  # tiles per row the merge network takes (n stages of n / 2 merges)


def _rg(b: Buffer, cols: object, offset: object = 0) -> Region:
    c = cols if not isinstance(cols, int) else Const(cols)
    o = offset if not isinstance(offset, int) else Const(offset)
    return Region(b.name, o, Const(1), c, Const(b.cols))  # type: ignore[arg-type]


def _gm(name: str, offset: object, cols: object, stride: int) -> Region:
    c = cols if not isinstance(cols, int) else Const(cols)
    return Region(name, offset, Const(1), c, Const(stride), gm=True)  # type: ignore[arg-type]


def lower_sort_tiles(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig,
                     tile: int = 0) -> tuple[Kernel, tuple[GmTensor, ...]]:
    """The three-phase kernel of the module doc for rows longer than one tile, and its two workspaces."""
    tile = tile or SORT_TILE
    vals = next((m for m in fk.nodes if m.attr("which") == "values"), None)
    idxs = next((m for m in fk.nodes if m.attr("which") == "indices"), None)
    n = fk.nodes[0]
    x = n.inputs[0]
    C = x.shape[-1]
    R = x.size // C
    nt = -(-C // tile)
    if nt > SORT_MAX_TILES:
        raise UnsupportedError(f"{names[n]}: sorting rows of {C} elements: {nt} tiles of {tile}; the merge of "
                               f"sorted tiles takes up to {SORT_MAX_TILES} tiles ({SORT_MAX_TILES * tile} elements "
                               "per row); sort shorter rows and merge them yourself")
    largest = bool(n.attr("descending"))
    W = nt * tile  # workspace row: the row padded to whole tiles
    xi, kname = names[x], ident(fk.name)
    ws_k = GmTensor(f"{kname}_ws_keys", (R, W), "float32", "workspace")
    ws_i = GmTensor(f"{kname}_ws_indices", (R, W), "int32", "workspace")
    pad = float("-inf") if largest else float("inf")
    bd = max(1, min(cfg.cores, R * nt))
    # phase 1 buffers
    b_in = _ub(f"in_{ident(xi)}", x.dtype, 1, tile, 1, QuePos.VECIN, f"a tile of {xi}")
    b_key = _ub("sort_keys", "float32", 1, tile, 1, None, f"the tile as float32 keys, padded with {pad}")
    b_tv = _ub("sort_values", "float32", 1, tile, 1, QuePos.VECOUT, "the tile's sorted keys")
    b_ti = _ub("sort_indices", "int32", 1, tile, 1, QuePos.VECOUT, "the tile's sorted indices")
    # phase 2 buffers: two adjacent runs in, one merged run out
    m_ik = _ub("merge_in_keys", "float32", 1, 2 * tile, 1, QuePos.VECIN, "two sorted runs' keys")
    m_ii = _ub("merge_in_indices", "int32", 1, 2 * tile, 1, QuePos.VECIN, "two sorted runs' indices")
    m_k = _ub("merge_keys", "float32", 1, 2 * tile, 1, QuePos.VECOUT, "the merged run's keys")
    m_i = _ub("merge_indices", "int32", 1, 2 * tile, 1, QuePos.VECOUT, "the merged run's indices")
    bufs = [b_in, b_key, b_tv, b_ti, m_ik, m_ii, m_k, m_i]
    r, t, c0, clen = Var("r"), Var("t"), Var("c0"), Var("clen")
    where = (Let("r", E.div(Var("w"), nt)), Let("t", E.mod(Var("w"), nt)), Let("c0", E.mul(t, tile)),
             Let("clen", E.min(tile, E.sub(C, c0))))
    ws_at = E.add(E.mul(r, W), c0)
    arrive: list[Stmt] = []
    if C % tile:
        arrive.append(VecOp("duplicate", _rg(b_key, tile), (), scalar=pad,
                            comment=f"padding: {pad} keys sort after the row"))
    to_keys = "copy" if x.dtype == "float32" else "cast"
    arrive.append(VecOp(to_keys, _rg(b_key, clen), (_rg(b_in, clen),),
                        comment=f"{xi} {x.dtype} -> float32 keys (exact)"))
    sort_tiles = Loop("w", Var("blk"), Const(R * nt), Var("block_dim"), (
        *where,
        Alloc(b_in.name), Copy(_rg(b_in, clen), _gm(xi, E.add(E.mul(r, C), c0), clen, C), comment=f"copy in {xi}"),
        EnQue(b_in.name), DeQue(b_in.name), *arrive, Free(b_in.name),
        Alloc(b_tv.name), Alloc(b_ti.name),
        TopK(_rg(b_tv, tile), _rg(b_ti, tile), _rg(b_key, tile), tile, index_base=c0, largest=largest,
             comment=f"sort the tile ({'descending' if largest else 'ascending'}, stable), global indices"),
        EnQue(b_tv.name), EnQue(b_ti.name),
        DeQue(b_tv.name), Copy(_gm(ws_k.name, ws_at, tile, W), _rg(b_tv, tile), comment="sorted run's keys"),
        Free(b_tv.name),
        DeQue(b_ti.name), Copy(_gm(ws_i.name, ws_at, tile, W), _rg(b_ti, tile), comment="sorted run's indices"),
        Free(b_ti.name)),
        comment=f"phase 1: {R * nt} tiles of {tile} sorted in UB over {bd} cores")
    # phase 2: odd-even merge-split stages
    pairs = E.div(E.sub(nt, Var("parity")), 2)
    at2 = E.add(E.mul(Var("r"), W), E.mul(Var("a"), tile))
    two = 2 * tile
    merge = Loop("w", Var("blk"), E.mul(R, pairs), Var("block_dim"), (
        Let("r", E.div(Var("w"), pairs)), Let("a", E.add(E.mul(E.mod(Var("w"), pairs), 2), Var("parity"))),
        Alloc(m_ik.name), Copy(_rg(m_ik, two), _gm(ws_k.name, at2, two, W), comment="runs a and a + 1: keys"),
        Alloc(m_ii.name), Copy(_rg(m_ii, two), _gm(ws_i.name, at2, two, W), comment="runs a and a + 1: indices"),
        EnQue(m_ik.name), EnQue(m_ii.name), DeQue(m_ik.name), DeQue(m_ii.name),
        Alloc(m_k.name), Alloc(m_i.name),
        MrgSort(_rg(m_k, two), _rg(m_i, two), _rg(m_ik, two), _rg(m_ii, two), Const(tile), largest,
                comment="merge the two runs (keys, then indices)"),
        Free(m_ik.name), Free(m_ii.name), EnQue(m_k.name), EnQue(m_i.name),
        DeQue(m_k.name), Copy(_gm(ws_k.name, at2, two, W), _rg(m_k, two), comment="lower half to a, upper to a + 1"),
        Free(m_k.name),
        DeQue(m_i.name), Copy(_gm(ws_i.name, at2, two, W), _rg(m_i, two), comment="indices likewise"),
        Free(m_i.name)),
        comment="the stage's merge-splits over the cores")
    stages = Loop("s", Const(0), Const(nt), Const(1), (
        Let("parity", E.mod(Var("s"), 2)), merge, SyncAll("every merge of the stage is in the workspace")),
        comment=f"phase 2: {nt} odd-even stages of merge-splits")
    # phase 3: the sorted row out, the padding left behind
    out_body: list[Stmt] = [*where]
    if idxs is not None:
        o_ii = _ub("out_in_indices", "int32", 1, tile, 1, QuePos.VECIN, "sorted indices from the workspace")
        o_i = _ub(f"out_{ident(names[idxs])}", "int32", 1, tile, 1, QuePos.VECOUT, f"{names[idxs]} to GM")
        bufs += [o_ii, o_i]
        out_body += [Alloc(o_ii.name), Copy(_rg(o_ii, clen), _gm(ws_i.name, ws_at, clen, W), comment="sorted indices"),
                     EnQue(o_ii.name), DeQue(o_ii.name), Alloc(o_i.name),
                     VecOp("copy", _rg(o_i, clen), (_rg(o_ii, clen),), comment="to the output queue"),
                     Free(o_ii.name), EnQue(o_i.name), DeQue(o_i.name),
                     Copy(_gm(names[idxs], E.add(E.mul(r, C), c0), clen, C), _rg(o_i, clen),
                          comment=f"copy out {names[idxs]}"),
                     Free(o_i.name)]
    if vals is not None:
        back = "copy" if vals.dtype == "float32" else "cast"
        o_ik = _ub("out_in_keys", "float32", 1, tile, 1, QuePos.VECIN, "sorted keys from the workspace")
        o_v = _ub(f"out_{ident(names[vals])}", vals.dtype, 1, tile, 1, QuePos.VECOUT, f"{names[vals]} to GM")
        bufs += [o_ik, o_v]
        out_body += [Alloc(o_ik.name), Copy(_rg(o_ik, clen), _gm(ws_k.name, ws_at, clen, W), comment="sorted keys"),
                     EnQue(o_ik.name), DeQue(o_ik.name), Alloc(o_v.name),
                     VecOp(back, _rg(o_v, clen), (_rg(o_ik, clen),),
                           comment=f"keys float32 -> {vals.dtype} (exact: they are the inputs)"),
                     Free(o_ik.name), EnQue(o_v.name), DeQue(o_v.name),
                     Copy(_gm(names[vals], E.add(E.mul(r, C), c0), clen, C), _rg(o_v, clen),
                          comment=f"copy out {names[vals]}"),
                     Free(o_v.name)]
    out = Loop("w", Var("blk"), Const(R * nt), Var("block_dim"), tuple(out_body),
               comment="phase 3: the sorted rows out of the workspace")
    body = (sort_tiles, SyncAll("every tile is a sorted run in the workspace"), stages, out)
    order = "descending" if largest else "ascending"
    note = (f"stable {order} sort of rows of {C} elements: {nt} tiles of {tile} sorted in UB (TopK), {nt} odd-even "
            f"stages of two-run MrgSort merges through a GM workspace, over {bd} cores with a SyncAll between stages")
    k = Kernel(name=kname, family="vector", kernel_type="AIV_ONLY", block_dim=bd,
               params=tuple(names[i] for i in fk.inputs) + tuple(names[o] for o in fk.outputs)
               + (ws_k.name, ws_i.name),
               buffers=tuple(bufs), aiv=body,
               tiling=(("rows", R), ("cols", C), ("tile", tile), ("n_tiles", nt), ("block_dim", bd)),
               ops=tuple(names[m] for m in fk.nodes), notes=(note,), vec_per_block=1)
    return k, (ws_k, ws_i)
