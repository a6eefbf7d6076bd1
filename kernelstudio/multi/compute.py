"""Each device's compute, timed by the single-chip flow: a tile's matmul (or its vector epilogue) is
built in the DSL, scheduled (ks.create_schedule), lowered (ks.lower) and simulated (ks.simulate).

Tiles run inside one MC2 kernel, so a tile pays no launch: the launch the simulator adds per kernel is
taken off and the design pays it once. The first tile starts with a cold L2; later tiles find the
weight in L2 when it fits there (weight, one x tile and one output tile within the L2 size), as the
kernel re-reads it tile after tile, and are simulated with every read hitting L2.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..core.dtypes import itemsize
from ..dsl import matmul, placeholder, rms_norm
from ..hw import HardwareProfile
from ..plan.create import create_schedule
from ..plan.depth import lower
from ..sim import simulate

__all__ = ["TileTime", "matmul_tile", "matmul_tile_sim", "epilogue_tile"]


@dataclass(frozen=True, slots=True)
class TileTime:
    """A tile's simulated time inside the MC2 kernel (no launch) and what the single-chip plan was."""

    us: float
    kernels: tuple[str, ...]  # "name (family)" of every kernel the tile's plan has
    warm_l2: bool


def _time(prog, *, warm: bool) -> tuple[float, tuple[str, ...]]:  # noqa: ANN001 - a tileir Program
    res = simulate(prog, l2_hit_ratio=1.0 if warm else None)
    launch = res.metrics["launch_overhead_us"] * len(res.kernels)
    return max(res.time_us - launch, 0.0), tuple(f"{k.name} ({k.family})" for k in prog.kernels)


def _matmul_program(profile: HardwareProfile, rows: int, k: int, n: int, dtype: str, bias: bool,
                    first: bool) -> tuple[Any, bool]:
    """The tile's single-chip program and whether it runs with the weight warm in L2."""
    x = placeholder((rows, k), dtype, name="x")
    w = placeholder((k, n), dtype, name="w")
    out = matmul(x, w)
    if bias:
        out = out + placeholder((n,), dtype, name="bias")
    fits = (k * n + rows * k + rows * n) * itemsize(dtype) <= profile.l2_bytes
    return lower(create_schedule(out, target=profile), target=profile), fits and not first


@functools.lru_cache(maxsize=256)
def matmul_tile(profile: HardwareProfile, rows: int, k: int, n: int, dtype: str, bias: bool,
                first: bool) -> TileTime:
    """One tile: (rows, k) @ (k, n) [+ bias (n,)] in `dtype` on one device."""
    prog, warm = _matmul_program(profile, rows, k, n, dtype, bias, first)
    us, kernels = _time(prog, warm=warm)
    return TileTime(us, kernels, warm)


def matmul_tile_sim(profile: HardwareProfile, rows: int, k: int, n: int, dtype: str, bias: bool,
                    first: bool) -> Any:
    """The single-chip simulation `matmul_tile` times (its per-pipe events, for a view that expands a
    device's compute lane); its time less the launch is the tile's."""
    prog, warm = _matmul_program(profile, rows, k, n, dtype, bias, first)
    return simulate(prog, l2_hit_ratio=1.0 if warm else None)


@functools.lru_cache(maxsize=256)
def epilogue_tile(profile: HardwareProfile, rows: int, n: int, dtype: str, add: bool, norm: bool,
                  gamma: bool, eps: float, vector_cores: int) -> TileTime:
    """The vector epilogue after the reduce of one tile: [+ add (rows, n)] [rms_norm over n], on
    `vector_cores` vector cores (fewer than the chip's when AIV-mode HCCL holds some)."""
    y = placeholder((rows, n), dtype, name="y")
    out = y + placeholder((rows, n), dtype, name="add") if add else y
    if norm:
        out = rms_norm(out, placeholder((n,), dtype, name="gamma") if gamma else None, eps=eps)
    s = create_schedule(out, target=profile)
    if vector_cores < profile.aiv_cores:
        s[out].parallel(0, cores=vector_cores)
    us, kernels = _time(lower(s, target=profile), warm=False)
    return TileTime(us, kernels, False)
