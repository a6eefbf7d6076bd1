"""The L2 model: re-reads and cross-kernel reuse hit while they fit, misses go to HBM."""

from __future__ import annotations

import pytest

import kernelstudio as ks
import kernelstudio.hw as hw
from kernelstudio.sim import simulate
from kernelstudio.sim.l2 import L2Error, hit_probability

PROF = hw.get("ascend910b2")


def _matmul_prog(n: int = 1024, tile: int = 128):
    a = ks.placeholder((n, n), "float16", name="a")
    b = ks.placeholder((n, n), "float16", name="b")
    s = ks.create_schedule(ks.matmul(a, b))
    s[s.kernels[0].name].split("m", tile).split("n", tile).split("k", 64)
    return ks.lower(s, "ascend910b2")


def test_hit_probability_is_all_below_two_thirds_of_l2_none_above_twice():
    assert hit_probability(0, 100) == 1.0
    assert hit_probability(66, 100) == 1.0
    assert hit_probability(200, 100) == 0.0
    assert 0 < hit_probability(100, 100) < 1
    assert hit_probability(100, 200) >= hit_probability(100, 100)


def test_working_set_well_under_l2_hits_on_every_re_read():
    prog = _matmul_prog()
    res = simulate(prog)
    m = res.metrics
    inputs = 2 * 1024 * 1024 * 2
    # only the first read of A and B comes from HBM; the output is written to HBM once
    assert m["hbm_read_bytes"] == inputs
    assert m["hbm_write_bytes"] == 1024 * 1024 * 2
    assert res.traffic["HBM->L2"] == inputs
    assert m["l2_read_bytes"] == res.traffic["GM->L1"] - inputs
    assert m["l2_hit_ratio"] == pytest.approx(1 - inputs / res.traffic["GM->L1"])
    assert res.kernels[0]["l2_hit_ratio"] == pytest.approx(m["l2_hit_ratio"])
    assert m["hbm_bytes"] + m["l2_bytes"] == m["gm_bytes"]


def test_working_set_far_over_l2_misses():
    prog = _matmul_prog()
    tiny = PROF.with_overrides(l2_bytes=64 * 1024)
    res = simulate(prog, profile=tiny)
    assert res.metrics["l2_hit_ratio"] == 0.0
    assert res.metrics["hbm_read_bytes"] == res.traffic["GM->L1"]
    assert res.time_us >= simulate(prog).time_us


def test_intermediate_of_an_earlier_kernel_hits_while_it_fits():
    x = ks.placeholder((1024, 1024), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.exp(ks.relu(x)), fuse=False), "ascend910b2")
    assert len(prog.kernels) == 2
    res = simulate(prog)
    first, second = res.kernels
    assert first["l2_hit_ratio"] == 0.0  # x is cold
    assert second["l2_hit_ratio"] == 1.0  # relu(x) was just written
    cold = simulate(prog, profile=PROF.with_overrides(l2_bytes=1024))
    assert cold.kernels[1]["l2_hit_ratio"] == 0.0


def test_override_replaces_the_model_and_more_hits_are_never_slower():
    prog = _matmul_prog(2048, 128)
    times = []
    for h in (0.0, 0.5, 1.0):
        res = simulate(prog, l2_hit_ratio=h)
        assert res.metrics["l2_hit_ratio"] == pytest.approx(h)
        times.append(res.time_us)
    assert times[0] >= times[1] >= times[2]


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", True])
def test_override_out_of_range_is_an_error_naming_the_range(bad):
    with pytest.raises(L2Error, match="l2_hit_ratio.*from 0"):
        simulate(_matmul_prog(256, 128), l2_hit_ratio=bad)
