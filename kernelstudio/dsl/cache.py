"""Paged caches: `scatter` writes one row per token into the slot its index names, in place.

A paged KV cache is `blocks` blocks of `block_size` slots; slot s is row s % block_size of block
s // block_size. Two layouts, as CANN's cache operators name them:

- "PA_BSND": cache (blocks, block_size, *row) (e.g. (blocks, block_size, 1, Hckv) in MlaProlog); a
  slot's row is contiguous.
- "PA_NZ": cache (blocks, row // c0, block_size, c0) with c0 = 32 bytes of the dtype (16 for float16 /
  bfloat16, 8 for float32, 32 for int8): element j of a slot's row sits at [block, j // c0, slot % block_size,
  j % c0], so a row is row // c0 chunks of c0 elements, block_size * c0 apart.

The result is the cache with the tokens' rows written. The graph says so: the node's `inplace` attribute
names the input it updates (0, the cache), and the lowering writes into the cache's own memory (the
program returns the input tensor). The cache must be a placeholder read by nothing else, since the update
destroys the old rows.
"""

from __future__ import annotations

import math

from ..core.dtypes import BLOCK_BYTES, itemsize
from ..core.errors import DTypeError, ShapeError, UnsupportedError
from ..ir.ops import Op
from .ops import _node, _tensor, check_name
from .tensor import Tensor

__all__ = ["scatter", "LAYOUTS", "INDEX_DTYPES"]

LAYOUTS = ("PA_BSND", "PA_NZ")
INDEX_DTYPES = ("int32", "int64")  # CANN's cache operators take an int64 slot index


def scatter(cache: Tensor, index: Tensor, values: Tensor, layout: str = "PA_BSND",
            name: str | None = None) -> Tensor:
    """`cache` with row t of `values` written to the slot `index[t]`, for every token t (module doc).

    index: int32 or int64 (T,), distinct slots in [0, blocks * block_size) (checked when evaluated); values:
    (T, *row) of the cache's dtype, its row as many elements as a slot holds (a (T, 512) row fills a
    (blocks, block_size, 1, 512) cache: no reshape needed)."""
    nm = check_name("scatter", name)
    c = _tensor("scatter", "cache", cache)
    idx = _tensor("scatter", "index", index)
    v = _tensor("scatter", "values", values)
    if layout not in LAYOUTS:
        raise UnsupportedError(f"scatter: layout {layout!r} is not one of {', '.join(LAYOUTS)}")
    if c.node.op is not Op.PLACEHOLDER:
        raise UnsupportedError(f"scatter: the cache {c.describe()} is computed; a paged cache is a program input "
                               "updated in place: pass its ks.placeholder")
    if idx.dtype not in INDEX_DTYPES:
        raise DTypeError(f"scatter: index {idx.describe()} must be int32 or int64 (one cache slot per token); use "
                         "cast(index, 'int32')")
    if idx.ndim != 1:
        raise ShapeError(f"scatter: index {idx.describe()} must be 1-D, one slot per token (T,)")
    if v.dtype != c.dtype:
        raise DTypeError(f"scatter: values {v.describe()} and cache {c.describe()} must share a dtype; cast the "
                         f"values to {c.dtype}")
    tokens = idx.shape[0]
    if v.ndim < 2 or v.shape[0] != tokens:
        raise ShapeError(f"scatter: values {v.describe()} must be (T, *row) with T = {tokens} rows, one per index")
    row = math.prod(v.shape[1:])
    if layout == "PA_BSND":
        if c.ndim < 3 or math.prod(c.shape[2:]) != row:
            raise ShapeError(f"scatter: a PA_BSND cache is (blocks, block_size, *row) with rows of the values' "
                             f"{row} elements; got cache {c.describe()}")
    else:
        c0 = BLOCK_BYTES // itemsize(c.dtype)
        if c.ndim != 4 or c.shape[3] != c0 or c.shape[1] * c0 != row:
            raise ShapeError(f"scatter: a PA_NZ cache of {c.dtype} is (blocks, {row} // {c0}, block_size, {c0}) for "
                             f"rows of {row} elements; got cache {c.describe()}"
                             + (f" ({row} is not a multiple of {c0}: pad the row)" if row % c0 else ""))
    return _node(Op.SCATTER, (c, idx, v), c.shape, c.dtype, {"layout": layout, "inplace": 0}, nm)
