"""UB buffers of the kernels lowered apart (layout, index and slice kernels): columns padded to whole
32-byte blocks, as every UB move and vector instruction needs."""

from __future__ import annotations

from ..core.dtypes import block_elems
from ..tileir.program import Buffer, CoreType, QuePos, Tier

__all__ = ["whole_blocks", "ub_buffer"]


def whole_blocks(n: int, dtype: str) -> int:
    """`n` elements of `dtype` rounded up to whole 32-byte blocks (at least one)."""
    per = block_elems(dtype)
    return max(-(-n // per) * per, per)


def ub_buffer(name: str, dtype: str, rows: int, cols: int, depth: int, q: QuePos | None, purpose: str) -> Buffer:
    """An AIV buffer of `rows` x `cols` (padded) elements: a queue of `depth` slots, or a one-slot TBuf (q None)."""
    return Buffer(name, Tier.UB, dtype, rows, whole_blocks(cols, dtype), depth if q else 1, q, CoreType.AIV, purpose)
