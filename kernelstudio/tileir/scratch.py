"""The vector core's scratch buffers, decided once from the TileIR.

Some vector statements need UB scratch beyond the kernel's named buffers when they are spelt in
Ascend C: row reductions and per-row broadcasts a work area (vec_calls.py: WholeReduce partials, Brcb
blocks), Select a bit mask (and the condition spread over a row
when it is broadcast), the block Transpose two 16x16 blocks, TopK its tmpLocal, a source-index row
and a padded row. `scratch_buffers(k)` is the one place that decides them: lowering counts them in
the UB capacity check, and the code generator allocates exactly these (and checks each request fits).
"""

from __future__ import annotations

from ..core.dtypes import BLOCK_BYTES, block_bytes, itemsize
from .expr import Const, static_value
from .memo import KernelMemo
from .program import Kernel, MrgSort, Reduce, Region, TopK, VecOp, walk
from .vec_calls import work_of
from .vector_ops import OPS

__all__ = ["scratch_buffers", "scratch_bytes", "statement_scratch", "topk_inner", "topk_tmp_bytes", "round32",
           "REDUCE_WORK", "TRANSPOSE_BLOCK", "MRGSORT_CHUNK", "SORT_TMP"]

REDUCE_WORK = "workBuf"
TRANSPOSE_BLOCK = 16  # Transpose moves 16 x 16 blocks of 2-byte elements


def round32(n: int) -> int:
    return max(block_bytes(n), BLOCK_BYTES)


MRGSORT_CHUNK = 64  # (key, index) pairs MrgSort's packing Gather moves per call (codegen/merge.py)
SORT_TMP = "topkTmpBuf"  # TopK's tmpLocal; MrgSort's packed lists take the same TBuf (never live at once)

TOPK_INNER_ALIGN = 32  # TopK sorts rows of a multiple of 32 elements (TopKInfo.inner)


def topk_inner(n: int) -> int:
    """The row length TopK sorts for rows of `n` elements: `n` padded to a multiple of 32 elements."""
    return -(-n // TOPK_INNER_ALIGN) * TOPK_INNER_ALIGN


def topk_tmp_bytes(inner: int, outter: int = 1) -> int:
    """tmpLocal bytes TopK needs (the twin's GetTopKMaxMinTmpSize: two proposal areas + one index row)."""
    return block_bytes(2 * 8 * inner * outter + 4 * inner)


def _broadcast(src: Region, dst: Region) -> bool:
    """A select operand read as one value per row or one value for the tile."""
    return src.cols == Const(1) and dst.cols != Const(1)


_DECIDED = KernelMemo()  # a kernel and its copies (the program holds copies of what lowering sized) share it


def scratch_buffers(k: Kernel) -> dict[str, tuple[int, str]]:
    """VECCALC TBufs the vector program of `k` needs besides its own buffers: member -> (bytes, purpose)."""
    return dict(_DECIDED.get((k.buffers, k.tiling, k.aiv), lambda: _decide(k)))


def _decide(k: Kernel) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    bufs = {b.name: b for b in k.buffers}
    for s in walk(k.aiv):
        for member, (nbytes, purpose) in _statement_scratch(k, s, bufs).items():
            old = out.get(member, (0, purpose))[0]
            out[member] = (max(old, nbytes), purpose)
    return out


def statement_scratch(k: Kernel, s: object) -> dict[str, tuple[int, str]]:
    """The scratch TBufs vector statement `s` of kernel `k` needs: member -> (bytes, 32-byte rounded; purpose).
    The code generator asks for what it writes from this answer."""
    return _statement_scratch(k, s, {b.name: b for b in k.buffers})


def _statement_scratch(k: Kernel, s: object, bufs: dict) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}

    def need(member: str, nbytes: int, purpose: str) -> None:
        out[member] = (round32(nbytes), purpose)

    if isinstance(s, (Reduce, VecOp)):
        work, dtype = work_of(k, s)
        if work:
            need(REDUCE_WORK, work * itemsize(dtype), "WholeReduce partials and Brcb blocks")
    form = OPS[s.op].form if isinstance(s, VecOp) and s.op in OPS else ""
    if form == "select":
        dst = bufs[s.dst.buf]
        cap = dst.slot_elems
        need("selMaskBuf", -(-cap // 8), "select mask, one bit per element")
        if _broadcast(s.srcs[0], s.dst):
            need("selCondBuf", cap * itemsize(dst.dtype), "select condition spread over a row")
    elif form == "transpose":
        if itemsize(bufs[s.dst.buf].dtype) == 2:
            need("transBuf", 2 * TRANSPOSE_BLOCK * TRANSPOSE_BLOCK * 2, "Transpose: one 16x16 block in, one out")
    elif isinstance(s, TopK):
        tiling = dict(k.tiling)
        n = static_value(s.src.cols, tiling)
        if n is None:
            return out  # the code generator refuses a row length that is not a tiling constant
        inner, isz = topk_inner(n), itemsize(bufs[s.src.buf].dtype)
        need(SORT_TMP, topk_tmp_bytes(inner), "TopK tmpLocal (GetTopKMaxMinTmpSize)")
        need("topkIndexBuf", inner * 4, "TopK source indices 0..inner-1")
        if not (static_value(s.src.stride, tiling) == inner and n == inner):
            need("topkRowBuf", inner * isz, f"one row padded to {inner} with -inf")
    elif isinstance(s, MrgSort):
        n = static_value(s.src_keys.cols, dict(k.tiling))
        if n is None:
            return out  # the code generator refuses a run length that is not a tiling constant
        need(SORT_TMP, 2 * n * 8, "TopK tmpLocal; MrgSort's runs and merged run as 8-byte (key, index) pairs")
        need("mrgStageBuf", 2 * MRGSORT_CHUNK * 4, "MrgSort packing: a chunk of keys, then of indices")
        need("mrgOffsetBuf", 2 * MRGSORT_CHUNK * 4, "MrgSort packing: Gather's byte offsets")
    return out


def scratch_bytes(k: Kernel) -> int:
    """Total UB bytes of `scratch_buffers(k)`."""
    return sum(n for n, _ in scratch_buffers(k).values())
