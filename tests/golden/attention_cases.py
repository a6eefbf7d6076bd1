"""The attention graphs the attention tests build: q, k and v placeholders in one of CANN's layouts, and a
layout's arrays seen as (B, N, S, D) for the NumPy models."""

from __future__ import annotations

import numpy as np

import kernelstudio as ks


def layout_shape(layout: str, b: int, n: int, s: int, d: int) -> tuple[int, ...]:
    return {"BNSD": (b, n, s, d), "BSND": (b, s, n, d), "BSH": (b, s, n * d)}[layout]


def attention(layout: str, b: int, n: int, nkv: int, sq: int, skv: int, d: int, dt: str = "float16",
              causal: bool = False, **kw) -> ks.Tensor:
    """`ks.ops.flash_attention` of placeholders query (n heads), key and value (nkv heads) in `layout`."""
    q = ks.placeholder(layout_shape(layout, b, n, sq, d), dt, name="query")
    k = ks.placeholder(layout_shape(layout, b, nkv, skv, d), dt, name="key")
    v = ks.placeholder(layout_shape(layout, b, nkv, skv, d), dt, name="value")
    heads = dict(num_heads=n, num_kv_heads=nkv) if layout == "BSH" else {}
    return ks.ops.flash_attention(q, k, v, layout=layout, causal=causal, **heads, **kw)


def bnsd_attention(b: int, n: int, s1: int, s2: int, d: int, dt: str = "float16", nkv: int | None = None,
                   **kw) -> ks.Tensor:
    """`attention` in layout BNSD, with nkv defaulting to n."""
    return attention("BNSD", b, n, nkv or n, s1, s2, d, dt, **kw)


def bnsd(x: np.ndarray, layout: str, n: int) -> np.ndarray:
    """x, given in `layout` with n heads, as float32 (B, N, S, D)."""
    x = np.asarray(x, np.float32)
    if layout == "BSH":
        x = x.reshape(x.shape[0], x.shape[1], n, -1)
    return x if layout == "BNSD" else x.transpose(0, 2, 1, 3)
