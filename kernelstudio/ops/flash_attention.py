"""Attention as CANN's FlashAttentionScore defines its forward output, written with the DSL's ops.

    S = Q K^T * scale          float32, per (batch, head)
    S[mask != 0] = -1e30       causal: CANN's atten_mask input, 1 above the diagonal (top-left aligned)
    P = softmax(S)             float32, cast to the input dtype
    O = P V                    the input dtype

The fusion pass makes the graph (causal or not, GQA included) ONE cube-vector-cube kernel that walks S_kv in blocks
with the online softmax (fusion/attention.py, lower/attention.py; `flash_reference.online_softmax_attention` is its
NumPy model), where the simulator finds it faster than the two-kernel plan (Q K^T with the softmax and its cast in
one kernel, P V in a second, P through HBM), which `Schedule.keep_out_of_fusion` of the P V matmul gives back.

GQA: Nq query heads share Nkv key/value heads, query head h reading kv head h // (Nq / Nkv) as in CANN. Layouts
(CANN's input_layout): "BNSD" (B, N, S, D), "BSND" (B, S, N, D), "BSH" (B, S, N * D); the output has the query's
layout. The layout glue (the transposes and reshapes to (B, N, S, D), GQA's grouping of the query heads) is built
in the `ATTENTION_LAYOUT` composite; the fused kernel reads through it, addressing the user's tensors in place (a
query tile is rows of D elements N * D apart in BSND / BSH), so every layout and GQA is ONE kernel. Where the
attention is not fused (its P V matmul kept out), the glue runs as copy kernels of its own.
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import FLOAT_DTYPES
from ..core.errors import DTypeError, InputError, ShapeError, UnsupportedError
from ..dsl import composites as K
from ..dsl import ops as O
from ..dsl.tensor import Tensor
from ..fusion.attention import ATTENTION_LAYOUT, CAUSAL_MASK
from ..ir.golden import random_inputs

__all__ = ["flash_attention", "flash_attention_inputs", "FA_LAYOUTS", "MASK_FILL"]

FA_LAYOUTS = ("BNSD", "BSND", "BSH")
MASK_FILL = -1e30  # what a masked score becomes (float32): exp of it less the row max is 0


def _int(what: str, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ShapeError(f"flash_attention: {what}={v!r} must be an int >= 1")
    return v


def _swap_sn(x: Tensor, b: int, s: int, n: int, d: int) -> Tensor:
    """(B, S, N, D) -> (B, N, S, D) as two swaps of the last two axes (the transposes the lowering takes)."""
    t = O.transpose(O.reshape(x, (b, s, n * d)), (0, 2, 1))  # (B, N*D, S)
    return O.transpose(O.reshape(t, (b, n, d, s)), (0, 1, 3, 2))


def _swap_ns(x: Tensor, b: int, n: int, s: int, d: int, name: str | None) -> Tensor:
    """(B, N, S, D) -> (B, S, N * D), the inverse of `_swap_sn` (before its first reshape)."""
    t = O.reshape(O.transpose(x, (0, 1, 3, 2)), (b, n * d, s))
    return O.transpose(t, (0, 2, 1), name=name)


def _to_bnsd(x: Tensor, what: str, layout: str, heads: int | None) -> tuple[Tensor, tuple[int, int, int, int]]:
    """x as (B, N, S, D) and those four numbers, with the error naming x's shape if it does not fit the layout."""
    want = 3 if layout == "BSH" else 4
    if len(x.shape) != want:
        raise ShapeError(f"flash_attention: {what} has shape {tuple(x.shape)} but layout={layout!r} takes {want} dims "
                         f"({', '.join(layout)}); reshape it or pass the layout it is in")
    if layout == "BNSD":
        return x, tuple(x.shape)  # type: ignore[return-value]
    if layout == "BSND":
        b, s, n, d = x.shape
        return _swap_sn(x, b, s, n, d), (b, n, s, d)
    b, s, h = x.shape
    if heads is None or h % heads:
        raise ShapeError(f"flash_attention: {what} has H={h}, not a multiple of its {heads} heads; in layout 'BSH' "
                         "H = N * D")
    d = h // heads
    return _swap_sn(x, b, s, heads, d), (b, heads, s, d)


def flash_attention(q: Tensor, k: Tensor, v: Tensor, *, scale: float | None = None, causal: bool = False,
                    layout: str = "BNSD", num_heads: int | None = None, num_kv_heads: int | None = None,
                    name: str = "attention_out") -> Tensor:
    """softmax(q k^T * scale [+ causal mask]) v, in `layout` (module doc); scale defaults to 1 / sqrt(D).

    causal adds CANN's atten_mask input, an int8 (S_q, S_kv) placeholder named "atten_mask" (1: masked), which
    `flash_attention_inputs` fills with the top-left causal mask. In layout "BSH" give num_heads (and
    num_kv_heads for GQA); in the other layouts the heads are read from the shapes and num_kv_heads, if given,
    must match k's."""
    if layout not in FA_LAYOUTS:
        raise UnsupportedError(f"flash_attention: layout={layout!r} is not one of {', '.join(FA_LAYOUTS)}")
    if not isinstance(causal, bool):
        raise InputError(f"flash_attention: causal={causal!r} must be True or False")
    for what, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise InputError(f"flash_attention: {what} is a {type(t).__name__}, not a ks.Tensor; make it with "
                             "ks.placeholder")
    dts = {t.dtype for t in (q, k, v)}
    if len(dts) != 1 or q.dtype not in FLOAT_DTYPES:
        raise DTypeError(f"flash_attention: q, k, v are {q.dtype}, {k.dtype}, {v.dtype}; give all three one float "
                         f"dtype ({', '.join(FLOAT_DTYPES)})")
    if layout == "BSH":
        _int("num_heads", num_heads)
    nkv_hint = num_heads if num_kv_heads is None and layout == "BSH" else num_kv_heads
    if nkv_hint is not None:
        _int("num_kv_heads", nkv_hint)
    with O.composite_scope(ATTENTION_LAYOUT):  # the layout glue the fused kernel reads through (module doc)
        q4, (b, n, sq, d) = _to_bnsd(q, "q", layout, num_heads)
        k4, (bk, nkv, skv, dk) = _to_bnsd(k, "k", layout, nkv_hint)
        v4, (bv, nv, sv, dv) = _to_bnsd(v, "v", layout, nkv_hint)
    if layout != "BSH" and num_kv_heads is not None and num_kv_heads != nkv:
        raise ShapeError(f"flash_attention: num_kv_heads={num_kv_heads} but k has {nkv} heads")
    if (bk, nkv, skv, dk) != (bv, nv, sv, dv):
        raise ShapeError(f"flash_attention: k (B, N, S, D) = {(bk, nkv, skv, dk)} and v = {(bv, nv, sv, dv)} "
                         "differ; k and v come in pairs")
    if bk != b:
        raise ShapeError(f"flash_attention: q has batch {b}, k and v {bk}; give them one batch")
    if dk != d:
        raise ShapeError(f"flash_attention: q has head dim D={d}, k {dk}; Q K^T needs one D (pad the smaller)")
    if n % nkv:
        raise ShapeError(f"flash_attention: {n} query heads do not share {nkv} key/value heads evenly (GQA needs "
                         f"Nq a multiple of Nkv); use num_kv_heads dividing {n}, e.g. {np.gcd(n, nkv)}")
    if scale is None:
        scale = 1.0 / float(np.sqrt(d))
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not np.isfinite(scale) or scale <= 0:
        raise InputError(f"flash_attention: scale={scale!r} must be a finite number > 0 (default 1 / sqrt(D))")
    g = n // nkv
    if g > 1:  # query heads (kv, g) against one kv head, broadcast over g
        with O.composite_scope(ATTENTION_LAYOUT):
            q4 = O.reshape(q4, (b, nkv, g, sq, d))
            k4, v4 = O.reshape(k4, (b, nkv, 1, skv, d)), O.reshape(v4, (b, nkv, 1, skv, d))
    s = O.mul(O.matmul(q4, k4, transpose_b=True, out_dtype="float32"), float(scale))
    if causal:  # the composite tells the fusion pass that the mask is the top-left causal one (block skipping)
        mask = O.placeholder((sq, skv), "int8", name="atten_mask")
        with O.composite_scope(CAUSAL_MASK):
            s = O.where(mask, MASK_FILL, s)
    p = O.cast(K.softmax(s), q.dtype)
    last = layout == "BNSD" and g == 1
    o = O.matmul(p, v4, name=name if last else None)
    with O.composite_scope(ATTENTION_LAYOUT):
        if g > 1:
            o = O.reshape(o, (b, n, sq, d), name=name if layout == "BNSD" else None)
        if layout == "BSND":
            o = O.reshape(_swap_ns(o, b, n, sq, d, None), (b, sq, n, d), name=name)
        elif layout == "BSH":
            o = _swap_ns(o, b, n, sq, d, name)
    return o


def flash_attention_inputs(out: Tensor, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Random query/key/value for `out` (ks.random_inputs) with atten_mask, if it has one, the top-left causal
    mask (1 where the key position exceeds the query position)."""
    feeds = random_inputs([out], seed=seed)
    if "atten_mask" in feeds:
        sq, skv = feeds["atten_mask"].shape
        feeds["atten_mask"] = np.triu(np.ones((sq, skv), np.int8), 1)
    return feeds
