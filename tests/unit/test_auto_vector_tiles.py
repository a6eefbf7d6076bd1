"""The vector auto-schedule spreads the columns of a few-row kernel over the cores, one full repeat each at least."""

from __future__ import annotations

import pytest

import kernelstudio as ks


def _tiling(rows: int, cols: int, cores: int, dtype: str = "float16") -> dict:
    out = ks.sigmoid(ks.placeholder((rows, cols), dtype, name="x"))
    s = ks.create_schedule(out)
    s[s.kernels[0].name].parallel(None, cores)
    return dict(ks.lower(s, "ascend910b2").kernels[0].tiling)


@pytest.mark.parametrize("rows, cols, cores, dtype, tile_cols", [
    (2, 24, 4, "float16", 24),  # 12 columns a core is less than a repeat: one core does it all
    (1, 200, 8, "float16", 128),  # 25 a core -> 128 (256 bytes)
    (1, 4096, 8, "float16", 512),  # plenty: an even share
    (1, 4096, 8, "float32", 512),
    (1, 200, 8, "float32", 64),  # 64 float32 = 256 bytes
])
def test_column_share_is_at_least_one_repeat(rows, cols, cores, dtype, tile_cols):
    t = _tiling(rows, cols, cores, dtype)
    assert t["tile_cols"] == tile_cols
    assert t["block_dim"] == min(cores, rows * -(-cols // tile_cols))


def test_more_cores_do_not_slow_a_tiny_kernel():
    out = ks.sigmoid(ks.placeholder((2, 24), "float16", name="x"))
    times = []
    for cores in (2, 4):
        s = ks.create_schedule(out)
        s[s.kernels[0].name].parallel(None, cores)
        times.append(ks.simulate(ks.lower(s, "ascend910b2")).time_us)
    assert times[1] <= times[0]
