"""The true roofline: compulsory bytes, peaks of the unit doing the work, traffic amplification."""

from __future__ import annotations

import pytest

import kernelstudio as ks
import kernelstudio.hw as hw
from kernelstudio.sim import simulate
from kernelstudio.sim.roofline import compulsory_bytes

PROF = hw.get("ascend910b2")


def _matmul(m: int, k: int, n: int, tile: tuple[int, int, int] | None = None):
    a = ks.placeholder((m, k), "float16", name="a")
    b = ks.placeholder((k, n), "float16", name="b")
    s = ks.create_schedule(ks.matmul(a, b))
    if tile:
        s[s.kernels[0].name].split("m", tile[0]).split("n", tile[1]).split("k", tile[2])
    return ks.lower(s, "ascend910b2")


def test_compulsory_bytes_read_each_input_once_and_write_each_output_once():
    prog = _matmul(512, 256, 384)
    (read, written), = compulsory_bytes(prog)
    assert read == (512 * 256 + 256 * 384) * 2
    assert written == 512 * 384 * 2
    res = simulate(prog)
    assert res.metrics["compulsory_bytes"] == read + written
    assert res.kernels[0]["compulsory_bytes"] == read + written


def test_unfused_plan_counts_shared_inputs_once_and_intermediates_never():
    x = ks.placeholder((256, 512), "float16", name="x")
    y = ks.exp(x) + x * 2.0
    prog = ks.lower(ks.create_schedule(y, fuse=False), "ascend910b2")
    assert len(prog.kernels) > 1
    total = sum(r + w for r, w in compulsory_bytes(prog))
    assert total == 2 * 256 * 512 * 2  # x read once, the output written once


def test_bound_is_the_cube_peak_for_a_large_matmul_not_the_bytes_moved():
    prog = _matmul(2048, 2048, 2048, tile=(128, 128, 64))
    res = simulate(prog)
    flops = 2 * 2048**3
    cube_us = flops / PROF.peak_flops("float16") * 1e6
    assert res.metrics["roofline_bound_us"] == pytest.approx(cube_us, rel=1e-9)
    assert res.metrics["roofline_limiter"] == "cube"
    assert res.metrics["efficiency"] == pytest.approx(cube_us / res.time_us)
    # small tiles re-read A and B many times: that is amplification, not a looser bound
    amp = res.metrics["traffic_amplification"]
    assert amp == pytest.approx(res.metrics["gm_bytes"] / res.metrics["compulsory_bytes"])
    assert amp > 5


def test_bound_is_hbm_for_an_elementwise_kernel():
    x = ks.placeholder((4096, 4096), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.relu(x)), "ascend910b2")
    res = simulate(prog)
    # the 32 MB input comes from HBM; the 32 MB output stays in the write-back L2 (it fits), at the L2 rate
    l2_rate = max(PROF.l2_read_bytes_per_cycle, PROF.l2_write_bytes_per_cycle) * PROF.aic_cores * PROF.clock_hz
    assert res.metrics["hbm_bytes"] == 4096 * 4096 * 2
    want = max(4096 * 4096 * 2 / PROF.hbm_bytes_per_s, 4096 * 4096 * 2 / l2_rate) * 1e6
    assert res.metrics["roofline_bound_us"] == pytest.approx(want, rel=1e-9)
    assert res.metrics["roofline_limiter"] == "memory"
    assert res.metrics["traffic_amplification"] == pytest.approx(1.0)
    assert res.time_us >= res.metrics["roofline_bound_us"]


def test_bound_counts_every_compulsory_byte_at_hbm_when_nothing_fits_in_l2():
    x = ks.placeholder((4096, 4096), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.relu(x)), "ascend910b2")
    small = PROF.with_overrides(l2_bytes=1 << 20)
    res = simulate(prog, profile=small)
    assert res.metrics["hbm_bytes"] == 2 * 4096 * 4096 * 2
    assert res.metrics["roofline_bound_us"] == pytest.approx(2 * 4096 * 4096 * 2 / PROF.hbm_bytes_per_s * 1e6)
    assert res.time_us >= res.metrics["roofline_bound_us"]


def test_a_warm_start_lowers_the_bound_with_the_time():
    x = ks.placeholder((2048, 4096), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.relu(x)), "ascend910b2")
    cold, warm = simulate(prog), simulate(prog, l2="warm")
    assert warm.metrics["hbm_bytes"] == 0 < cold.metrics["hbm_bytes"]
    assert warm.metrics["roofline_bound_us"] < cold.metrics["roofline_bound_us"]
    assert warm.time_us < cold.time_us
    assert warm.time_us >= warm.metrics["roofline_bound_us"]


def test_summary_and_report_show_the_bound_and_amplification():
    prog = _matmul(1024, 1024, 1024, tile=(128, 128, 64))
    text = simulate(prog).summary()
    assert "traffic amplification" in text and "(cube)" in text
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((256, 512), "float16", name="w")
    table = ks.build(ks.relu(ks.matmul(x, w))).report(show=False)
    assert "roofline bound (us)" in table and "traffic amplification" in table
