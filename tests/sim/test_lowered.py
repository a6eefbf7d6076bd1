"""The simulator on programs from the real lowering: MlaProlog-lite and Conv+Bias+ReLU."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.sim import report_table, simulate


def mla_prolog_lite():
    x = ks.placeholder((1, 64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    y = ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)
    return ks.gelu(y + b, name="out")


def conv_bias_relu():
    x = ks.placeholder((1, 64, 112, 112), "float16", name="x")
    w = ks.placeholder((64, 64, 3, 3), "float16", name="w")
    b = ks.placeholder((64, 1, 1), "float16", name="bias")
    return ks.relu(ks.conv2d(x, w, padding="SAME") + b)


@pytest.fixture(scope="module", params=["mla", "conv"])
def plans(request):
    out = mla_prolog_lite() if request.param == "mla" else conv_bias_relu()
    fused = ks.lower(ks.create_schedule(out), "ascend910b2")
    unfused = ks.lower(ks.create_schedule(out, fuse=False), "ascend910b2")
    return fused, unfused


def test_shortcuts_agree_on_lowered_programs(plans):
    for prog in plans:
        fast, full = simulate(prog), simulate(prog, exact=True)
        assert fast.time_us == pytest.approx(full.time_us, rel=0.01)
        assert fast.traffic == full.traffic
        assert fast.time_us >= fast.metrics["roofline_bound_us"]


def test_fused_vs_unfused_report(plans):
    fused, unfused = plans
    rf, ru = simulate(fused), simulate(unfused)
    assert len(unfused.kernels) > 1 == len(fused.kernels)
    gaps = [e for e in ru.events if e.pipe == "LAUNCH"]
    assert len(gaps) == len(unfused.kernels)
    assert rf.time_us < ru.time_us
    table = report_table(rf, ru, fused, unfused)
    for row in ("time (us)", "TFLOPS", "bandwidth utilisation", "launch overhead", "GM traffic", "speedup"):
        assert row in table
    # the fused kernel hands cube results to the vector cores through the workspace
    assert rf.traffic.get("L0C->WS", 0) == rf.traffic.get("WS->UB", 0) > 0


def test_report_reads_speedup_with_and_without_launch_gaps(plans):
    from kernelstudio.sim.report import comparison

    fused, unfused = plans
    rf, ru = simulate(fused), simulate(unfused)
    c = comparison(rf, ru)
    launch = fused.profile.launch_overhead_us
    assert c["fused_device_us"] == pytest.approx(rf.time_us - launch * len(fused.kernels))
    assert c["unfused_device_us"] == pytest.approx(ru.time_us - launch * len(unfused.kernels))
    assert c["device_speedup"] == pytest.approx(c["unfused_device_us"] / c["fused_device_us"])
    # without launch gaps the same plans simulate to the device times
    quiet = fused.profile.with_overrides(launch_overhead_us=0.0)
    rf0 = simulate(fused, profile=quiet)
    assert rf0.time_us == pytest.approx(c["fused_device_us"], rel=1e-6)
    table = report_table(rf, ru, fused, unfused)
    assert "launch gaps aside" in table and f"{c['device_speedup']:.2f}x launch gaps aside" in table
    # the launch constant's source is printed beside the speedup
    assert ks.hw.get("ascend910b2").source("launch_overhead_us") in table
