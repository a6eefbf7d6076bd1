"""The README's table of the CV-fusion article's claims holds the numbers `bench/article_claims.py` measures."""

from __future__ import annotations

import contextlib
import io

import pytest

import kernelstudio as ks
from kernelstudio.sim import simulate

from .readme import ROOT
from .readme import bench as load_bench


@pytest.fixture(scope="module")
def claims():
    mod = load_bench("article_claims")
    with contextlib.redirect_stdout(io.StringIO()):
        conv = mod.measure("conv", mod.conv_bias_relu())
        mla = mod.measure("mla", mod.mla_prolog_lite())
    return mod, conv, mla


def _row(start: str) -> str:
    rows = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith(start)]
    assert len(rows) == 1, start
    return rows[0]


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def test_conv_row(claims):
    _, c, _ = claims
    row = _row("| Conv+Bias+ReLU on [1,64,112,112] fp16")
    assert f"**{c['gm_bytes_saved'] / 1e6:.1f} MB = {c['gm_share_removed']:.1%} of all GM-side traffic**" in row
    assert f"({_mb(c['fused_gm_bytes'])} vs {_mb(c['unfused_gm_bytes'])} MB;" in row
    assert c["fused_hbm"] == c["unfused_hbm"] and f"{c['fused_hbm'] / 1e6:.2f} MB of HBM traffic in both" in row
    assert f"**{c['speedup']:.2f}x faster** with 5 us per launch ({c['fused_time_us']:.1f} vs " \
           f"{c['unfused_time_us']:.1f} us)" in row
    assert f"**{c['device_speedup']:.2f}x faster launch gaps aside** ({c['fused_device_us']:.1f} vs " \
           f"{c['unfused_device_us']:.1f} us of device time)" in row


def test_mla_row(claims):
    mod, _, c = claims
    row = _row("| MlaProlog-like operator")
    assert f"**{c['gm_share_removed']:.1%} of the GM-side bytes** ({c['fused_gm_bytes'] / 1e6:.2f} vs " \
           f"{c['unfused_gm_bytes'] / 1e6:.2f} MB)" in row
    assert c["fused_hbm"] == c["unfused_hbm"] and f"{c['fused_hbm'] / 1e6:.2f} MB of HBM bytes in both" in row
    assert f"**{c['speedup']:.2f}x faster** with 5 us per launch ({c['fused_time_us']:.1f} vs " \
           f"{c['unfused_time_us']:.1f} us)" in row
    assert f"**{1 / c['device_speedup']:.2f}x slower launch gaps aside** ({c['fused_device_us']:.1f} vs " \
           f"{c['unfused_device_us']:.1f} us of device time)" in row
    out = mod.mla_prolog_lite()
    prog = ks.lower(ks.create_schedule(out), "ascend910b2")
    (k,) = prog.kernels
    assert f"the C tiles over {k.block_dim} cube cores" in row
    assert f"the rows over {k.block_dim * k.vec_per_block} vector cores" in row
    rows_plan = simulate(ks.lower(ks.create_schedule(out, fuse=True), "ascend910b2"))
    assert f"row-block plan ({rows_plan.metrics['gm_bytes'] / 1e6:.2f} MB, none saved)" in row
    free = simulate(prog, profile=ks.hw.get("ascend910b2").with_overrides(sync_all_us=0.0))
    dev0 = free.time_us - free.metrics["launch_overhead_us"]
    assert f"taken as 0 the fused kernel's device time is {dev0:.1f} us, " \
           f"{1 - dev0 / c['unfused_device_us']:.0%} below the unfused plan's" in row
