"""The online softmax of a FlashAttention kernel, in NumPy: the golden model for a kernel that walks the key/value
sequence (s2) in chunks and never holds a whole row of scores.

Per (batch, head) and per chunk j of s2 columns, with x = Q K_j^T * scale (float32, masked entries MASK_FILL),
in this order (CANN's SoftmaxFlashV2, then the Vec2 update):

    m_j   = max(m_{j-1}, rowmax(x))                     running max (m_0 = -inf)
    e_j   = exp(m_{j-1} - m_j)                          rescale factor of what came before (e_1 = 0)
    p     = exp(x - m_j)                                float32
    l_j   = e_j * l_{j-1} + rowsum(p)                   running sum, from the float32 p
    O_j   = O_{j-1} * e_j + cast(p, dtype) @ V_j        float32 accumulator; p rounded to the input dtype first
    out   = cast(O_last / l_last, dtype)                the division once, at the last chunk

Rounding points: p is rounded to the input dtype before the P V product (the cube takes it in that dtype), the
row sum is taken from the float32 p, the accumulator stays float32, and the output is rounded once at the end.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import ShapeError
from .flash_attention import MASK_FILL

__all__ = ["online_softmax_attention", "split_softmax_attention", "plain_softmax_attention"]


def _check(q: np.ndarray, k: np.ndarray, v: np.ndarray, chunk: int) -> tuple[int, int]:
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ShapeError(f"online_softmax_attention: q, k, v are (B, N, S, D); got {q.shape}, {k.shape}, {v.shape}")
    if k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ShapeError(f"online_softmax_attention: q {q.shape}, k {k.shape}, v {v.shape} do not share B and D")
    if q.shape[1] % k.shape[1]:
        raise ShapeError(f"online_softmax_attention: {q.shape[1]} query heads over {k.shape[1]} kv heads (GQA needs "
                         "Nq a multiple of Nkv)")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ShapeError(f"online_softmax_attention: chunk={chunk!r} must be an int >= 1 (s2 columns per step)")
    return q.shape[1] // k.shape[1], k.shape[2]


def _scores(q: np.ndarray, k: np.ndarray, scale: float, mask: np.ndarray | None, g: int) -> np.ndarray:
    kk = np.repeat(np.asarray(k, np.float32), g, axis=1)
    s = np.einsum("bnqd,bnkd->bnqk", np.asarray(q, np.float32), kk).astype(np.float32) * np.float32(scale)
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, np.float32(MASK_FILL), s)
    return s.astype(np.float32)


def _walk(s: np.ndarray, vv: np.ndarray, chunk: int, dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The module doc's chunked walk over scores s (B, N, S_q, S) and values vv (B, N, S, D): (O, m, l) float32."""
    m = np.full(s.shape[:3] + (1,), -np.inf, np.float32)
    acc = np.zeros(s.shape[:3] + (vv.shape[3],), np.float32)
    total = np.zeros_like(m)
    for j in range(0, s.shape[3], chunk):
        x = s[..., j:j + chunk]
        m_new = np.maximum(m, x.max(axis=-1, keepdims=True))
        e = np.exp(m - m_new).astype(np.float32)
        p = np.exp(x - m_new).astype(np.float32)
        total = (e * total + p.sum(axis=-1, keepdims=True, dtype=np.float32)).astype(np.float32)
        pv = np.einsum("bnqk,bnkd->bnqd", _dt.round_to(dtype, p).astype(np.float32), vv[:, :, j:j + chunk])
        acc = (acc * e + pv).astype(np.float32)
        m = m_new
    return acc, m, total


def online_softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, chunk: int, scale: float | None = None,
                             mask: np.ndarray | None = None, dtype: str = "float32") -> np.ndarray:
    """Attention over (B, N, S, D) arrays walking s2 in chunks of `chunk` columns (the last one may be short), in
    the module doc's order; GQA by query head h reading kv head h // (Nq / Nkv). mask: (S_q, S_kv), nonzero =
    masked. dtype: the kernel's input dtype (p and the output are rounded to it)."""
    g, _ = _check(q, k, v, chunk)
    scale = 1.0 / float(np.sqrt(q.shape[3])) if scale is None else scale
    s = _scores(q, k, scale, mask, g)
    acc, _, total = _walk(s, np.repeat(np.asarray(v, np.float32), g, axis=1), chunk, dtype)
    return _dt.round_to(dtype, acc / total)


def split_softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, parts: int, chunk: int,
                            scale: float | None = None, mask: np.ndarray | None = None,
                            dtype: str = "float32") -> np.ndarray:
    """FlashDecode (lower/attention_split.py): s2 in chunks of `chunk`, the chunks in `parts` parts (part i:
    chunks n * i // parts up to n * (i + 1) // parts of n), each part walked as `online_softmax_attention` does
    but stopping at O_i = O / l and lse_i = m + ln(l) (float32), then combined in order:
    M = max_i lse_i, lse = M + ln(sum_i exp(lse_i - M)), out = cast(sum_i exp(lse_i - lse) O_i, dtype)."""
    g, skv = _check(q, k, v, chunk)
    n = -(-skv // chunk)
    if isinstance(parts, bool) or not isinstance(parts, int) or not 1 <= parts <= n:
        raise ShapeError(f"split_softmax_attention: parts={parts!r} must be an int from 1 to the {n} chunks of "
                         f"{chunk} columns")
    scale = 1.0 / float(np.sqrt(q.shape[3])) if scale is None else scale
    s = _scores(q, k, scale, mask, g)
    vv = np.repeat(np.asarray(v, np.float32), g, axis=1)
    outs, lses = [], []
    for i in range(parts):
        a, b = n * i // parts * chunk, min(skv, n * (i + 1) // parts * chunk)
        acc, m, total = _walk(s[..., a:b], vv[:, :, a:b], chunk, dtype)
        outs.append((acc / total).astype(np.float32))
        lses.append((m + np.log(total)).astype(np.float32))
    big = np.maximum.reduce(lses)
    total = np.zeros_like(big)
    for x in lses:
        total = (total + np.exp(x - big)).astype(np.float32)
    lse = (big + np.log(total)).astype(np.float32)
    acc = np.zeros(outs[0].shape, np.float32)
    for o, x in zip(outs, lses, strict=True):
        acc = (acc + np.exp(x - lse).astype(np.float32) * o).astype(np.float32)
    return _dt.round_to(dtype, acc)


def plain_softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, scale: float | None = None,
                            mask: np.ndarray | None = None) -> np.ndarray:
    """softmax(q k^T * scale, masked) v in float64 over whole rows: the exact value both plans approach."""
    g, _ = _check(q, k, v, 1)
    scale = 1.0 / float(np.sqrt(q.shape[3])) if scale is None else scale
    s = _scores(q, k, scale, mask, g).astype(np.float64)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bnqk,bnkd->bnqd", p, np.repeat(np.asarray(v, np.float64), g, axis=1))
