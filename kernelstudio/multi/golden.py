"""What the three MC2 operators compute, in NumPy: the reference their tiled forms must equal.

Per-rank tensors (x, w) carry a leading device axis; bias, the residual add and the RmsNorm gamma are
the same on every rank. Each rank's matmul accumulates in float32 and is stored in the input dtype (as
the kernel writes it to GM before HCCL moves it); the reduction sums the stored partials in float32
and rounds once; the bias is added once, to the sum.
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import round_to

__all__ = ["allreduce_ref", "reduce_scatter_ref", "all_gather_ref"]


def _f32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def _partials(x: np.ndarray, w: np.ndarray, dtype: str) -> np.ndarray:
    """Every rank's x_r @ w_r, rounded to `dtype`: shape (devices, m, n)."""
    return round_to(dtype, np.matmul(_f32(x), _f32(w))).astype(np.float32)


def _reduced(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, dtype: str) -> np.ndarray:
    total = _partials(x, w, dtype).sum(axis=0, dtype=np.float32)
    if bias is not None:
        total = total + _f32(bias)
    return round_to(dtype, total).astype(np.float32)


def allreduce_ref(x: np.ndarray, w: np.ndarray, dtype: str, *, bias: np.ndarray | None = None,
                  add: np.ndarray | None = None, norm: bool = False, gamma: np.ndarray | None = None,
                  eps: float = 1e-6) -> np.ndarray:
    """sum_r x_r @ w_r (+ bias) (+ add) (then RmsNorm over n): the same (m, n) on every rank."""
    y = _reduced(x, w, bias, dtype)
    if add is not None:
        y = round_to(dtype, y + _f32(add)).astype(np.float32)
    if norm:
        rms = np.sqrt(np.mean(y * y, axis=-1, keepdims=True, dtype=np.float32) + np.float32(eps))
        y = y / rms
        if gamma is not None:
            y = y * _f32(gamma)
    out = round_to(dtype, y)
    return np.broadcast_to(out, (x.shape[0], *out.shape)).copy()


def reduce_scatter_ref(x: np.ndarray, w: np.ndarray, dtype: str, *, bias: np.ndarray | None = None) -> np.ndarray:
    """Rank r keeps rows [r m/p, (r+1) m/p) of sum_r x_r @ w_r (+ bias): shape (devices, m/p, n)."""
    p = x.shape[0]
    total = round_to(dtype, _reduced(x, w, bias, dtype))
    return total.reshape(p, total.shape[0] // p, *total.shape[1:])


def all_gather_ref(x: np.ndarray, w: np.ndarray, dtype: str, *,
                   bias: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every rank gathers all ranks' x (rank order) and multiplies by its own w: (out, gathered), with
    out (devices, m p, n) and gathered (devices, m p, k)."""
    p = x.shape[0]
    gathered = np.concatenate(list(x), axis=0)
    acc = np.matmul(_f32(gathered)[None], _f32(w))
    if bias is not None:
        acc = acc + _f32(bias)
    out = round_to(dtype, acc)
    return out, np.broadcast_to(gathered, (p, *gathered.shape)).copy()
