"""The three MC2 operators as DSL-level operations on placeholders (ops-transformer mc2/*/docs)."""

from __future__ import annotations

from ..dsl import Tensor
from .cluster import Cluster
from .design import Mc2Design, Mc2Schedule

__all__ = ["matmul_allreduce", "all_gather_matmul", "matmul_reduce_scatter"]


def matmul_allreduce(x: Tensor, w: Tensor, *, cluster: Cluster, tiles: int = 1, tail: str = "auto",
                     engine: str = "aicpu", algorithm: str = "mesh", bias: Tensor | None = None,
                     add: Tensor | None = None, rms_norm: Tensor | bool | None = None,
                     eps: float = 1e-6) -> Mc2Design:
    """aclnnMatmulAllReduce: every device computes x_r @ w_r (x (m, k) or (b, s, k), w (k, n)); the sum over
    devices (+ bias) lands on every device; then optionally + add (m, n) and RmsNorm over n (rms_norm: the
    gamma placeholder, or True for none), as MatmulAllReduceAddRmsNorm does. M splits into `tiles` tiles
    whose AllReduce overlaps the next tile's matmul."""
    return Mc2Design("matmul_allreduce", x, w, cluster=cluster, schedule=Mc2Schedule(tiles, tail, engine, algorithm),
                     bias=bias, add=add, rms_norm=rms_norm, eps=eps)


def all_gather_matmul(x: Tensor, w: Tensor, *, cluster: Cluster, tiles: int = 1, tail: str = "auto",
                      engine: str = "aicpu", algorithm: str = "mesh", bias: Tensor | None = None) -> Mc2Design:
    """aclnnAllGatherMatmul: the devices gather their x (m, k) into (m p, k) and each multiplies it by its
    w (k, n): out (m p, n). The local rows compute first; each gathered tile's matmul follows its gather."""
    return Mc2Design("all_gather_matmul", x, w, cluster=cluster, schedule=Mc2Schedule(tiles, tail, engine, algorithm),
                     bias=bias)


def matmul_reduce_scatter(x: Tensor, w: Tensor, *, cluster: Cluster, tiles: int = 1, tail: str = "auto",
                          engine: str = "aicpu", algorithm: str = "mesh", bias: Tensor | None = None) -> Mc2Design:
    """aclnnMatmulReduceScatter: every device computes x_r @ w_r (m, n); device r keeps rows
    [r m/p, (r+1) m/p) of the sum over devices (m a multiple of the device count)."""
    return Mc2Design("matmul_reduce_scatter", x, w, cluster=cluster,
                     schedule=Mc2Schedule(tiles, tail, engine, algorithm), bias=bias)
