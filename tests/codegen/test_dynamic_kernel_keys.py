"""DynamicKernel.codegen: one operator whose TilingFunc picks a bucket's kernel by TILING_KEY_IS from the
run-time row count; the same binary runs shapes of every bucket (tails included) and matches the golden model."""

from __future__ import annotations

import os

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.core.errors import KernelStudioError, UnsupportedError
from kernelstudio.tune.dynamic_code import row_ranges

CONFIGS = {"small": {"tile_rows": 1, "db": False}, "general": {"tile_rows": 4, "db": True},
           "tall_skinny": {"tile_rows": 8, "db": True}}


def softmax_design(rows: int, cols: int):
    x = ks.placeholder((rows, cols), "float16", name="x")
    s = ks.create_schedule(ks.softmax(x))
    st = s[s.kernels[0].name]
    st.split(0, ks.knob("tile_rows", 2, [1, 2, 4, 8])).double_buffer(ks.knob("db", True, [True, False]))
    return s


def _dk() -> ks.DynamicKernel:
    dk = ks.DynamicKernel(softmax_design, name="softmax_rows")
    dk.configs = {b: dict(c) for b, c in CONFIGS.items()}  # as dk.tune(...) leaves them, without the search
    return dk


def test_ranges_follow_the_default_buckets():
    got = [(r.bucket, r.lo, r.hi) for r in row_ranges(_dk(), "rows", {"cols": 48}, probe=4096)]
    assert got == [("small", 1, 64), ("general", 65, 1023), ("tall_skinny", 1024, 4096)]
    assert [(r.bucket, r.lo) for r in row_ranges(_dk(), "rows", {"cols": 100}, probe=4096)] == [("general", 1)]


def test_one_binary_runs_every_bucket(tmp_path, twin_cache):
    dk = _dk()
    code = dk.codegen(cols=48)
    kernel = code.files["op_kernel/softmax_rows.cpp"]
    host = code.files["op_host/softmax_rows.cpp"]
    for key, bucket in enumerate(("small", "tall_skinny", "general")):  # keys in the buckets' order
        assert f"TILING_KEY_IS({key})" in kernel and f"ks_{bucket}::KernelSoftmaxRows op;" in kernel
        assert f"key = {key};" in host
    assert "if (rows <= 64)" in host and "if (rows <= 1023)" in host and "context->SetTilingKey(key);" in host
    dump = tmp_path / "dump"
    dump.mkdir()
    fields = None
    for rows, bucket in [(1, "small"), (37, "small"), (64, "small"), (65, "general"), (301, "general"),
                         (1023, "general"), (1024, "tall_skinny"), (1503, "tall_skinny")]:
        x = np.random.default_rng(rows).standard_normal((rows, 48)).astype(np.float16)
        os.environ["KS_TWIN_TILING_DUMP"] = str(dump)
        try:
            got = twin.run(code, {"x": x}, cache_dir=twin_cache)
        finally:
            del os.environ["KS_TWIN_TILING_DUMP"]
        want = ks.evaluate(ks.softmax(ks.placeholder((rows, 48), "float16", name="x")), {"x": x})
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-2, atol=2e-2,
                                   err_msg=f"rows={rows} ({bucket})")
        fields = np.fromfile(dump / "SoftmaxRows.tiling.bin", dtype=np.uint32)
        names = [n for n, _ in dk.design(rows=rows, cols=48).program.kernels[0].tiling]
        assert fields[names.index("rows")] == rows
        assert fields[names.index("tile_rows")] == CONFIGS[bucket]["tile_rows"]  # that bucket's tiling


def mm_gelu(m: int, k: int, n: int) -> ks.Tensor:
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((k, n), "float16", name="w")
    return ks.gelu(ks.matmul(x, w) + ks.placeholder((n,), "float16", name="b"))


def mm_gelu_design(m: int, k: int, n: int):
    s = ks.create_schedule(mm_gelu(m, k, n), fuse=True)
    s[s.kernels[0].name].split("m", ks.knob("tile_m", 64, [16, 32, 64])).double_buffer(
        ks.knob("db", True, [True, False]))
    return s


def test_one_matmul_binary_runs_every_bucket(tmp_path, twin_cache):
    # a decode bucket (few rows: single-buffered tile rows of 16) and a prefill bucket (tile rows of 64)
    dk = ks.DynamicKernel(mm_gelu_design, name="mm_gelu_rows",
                          buckets=[ks.Bucket("decode", lambda **d: d["m"] <= 16, "m <= 16"),
                                   ks.Bucket("prefill", lambda **d: True, "the rest")])
    dk.configs = {"decode": {"tile_m": 16, "db": False}, "prefill": {"tile_m": 64, "db": True}}
    code = dk.codegen(k=128, n=256, probe=4096)
    kernel = code.files["op_kernel/mm_gelu_rows.cpp"]
    host = code.files["op_host/mm_gelu_rows.cpp"]
    assert "#define ASCENDC_CUBE_ONLY" in kernel  # the AIC drives the Matmul in every bucket
    assert "TILING_KEY_IS(0)" in kernel and "TILING_KEY_IS(1)" in kernel
    assert host.count("cubeTiling.SetShape(rows, 256, 128);") == 2  # each key's TCubeTiling, M of the run
    assert "cubeTiling.SetFixSplit(16, " in host and "cubeTiling.SetFixSplit(64, " in host
    assert host.count("wsBytes = (static_cast<size_t>(blockDim) * ") == 2  # each key's workspace
    dump = tmp_path / "dump"
    dump.mkdir()
    for m, bucket in [(1, "decode"), (16, "decode"), (17, "prefill"), (300, "prefill"), (1000, "prefill")]:
        out = mm_gelu(m, 128, 256)
        inputs = ks.random_inputs(out, seed=m)
        os.environ["KS_TWIN_TILING_DUMP"] = str(dump)
        try:
            got = twin.run(code, inputs, cache_dir=twin_cache)
        finally:
            del os.environ["KS_TWIN_TILING_DUMP"]
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ks.evaluate(out, inputs), np.float32),
                                   rtol=2e-2, atol=2e-2, err_msg=f"m={m} ({bucket})")
        fields = np.fromfile(dump / "MmGeluRows.tiling.bin", dtype=np.uint32)
        names = [n for n, _ in dk.design(m=m, k=128, n=256).program.kernels[0].tiling]
        assert fields[names.index("M")] == m
        assert fields[names.index("tile_m")] == dk.configs[bucket]["tile_m"]  # that bucket's tiling


def test_one_conv_binary_runs_every_batch_bucket(twin_cache):
    from tests.reference_kernels import conv_bias_relu

    def design(n: int):
        s = ks.create_schedule(conv_bias_relu(n=n), fuse=True)
        s[s.kernels[0].name].double_buffer(ks.knob("db", True, [True, False]))
        return s

    dk = ks.DynamicKernel(design, name="cbr_batch", buckets=[ks.Bucket("one", lambda n: n == 1),
                                                              ks.Bucket("many", lambda n: True)])
    dk.configs = {"one": {"db": False}, "many": {"db": True}}
    code = dk.codegen(probe=64)
    host = code.files["op_host/cbr_batch.cpp"]
    assert "if (rows <= 1) {  // bucket one: n 1..1" in host and "tiles = static_cast<uint32_t>(rows) * 25;" in host
    for n in (1, 2, 3):
        out = conv_bias_relu(n=n)
        inputs = ks.random_inputs(out, seed=n)
        np.testing.assert_allclose(np.asarray(twin.run(code, inputs, cache_dir=twin_cache), np.float32),
                                   np.asarray(ks.evaluate(out, inputs), np.float32), rtol=2e-2, atol=2e-2,
                                   err_msg=f"n={n}")


def test_designs_it_does_not_cover_are_refused():
    def mm_t(m: int, n: int):  # A transposed: its rows are not A's leading dims
        a = ks.placeholder((64, m), "float16", name="a")
        return ks.matmul(a, ks.placeholder((64, n), "float16", name="w"), transpose_a=True)

    with pytest.raises(UnsupportedError, match="one kernel that takes its rows at run time"):
        ks.DynamicKernel(mm_t).codegen(n=64, probe=100)

    def wide(cols: int, rows: int):  # the first dimension is not the row count
        return ks.softmax(ks.placeholder((rows, cols), "float16", name="x"))

    with pytest.raises(UnsupportedError, match="must be the kernel's row count"):
        ks.DynamicKernel(wide).codegen(rows=8, probe=100)
    with pytest.raises(KernelStudioError, match="missing \\['cols'\\]"):
        _dk().codegen(probe=100)
    with pytest.raises(KernelStudioError, match="'depth' is not a dimension"):
        _dk().codegen("depth", cols=48)

    odd = ks.DynamicKernel(softmax_design, buckets=[ks.Bucket("odd", lambda **d: d["rows"] % 2 == 1),
                                                    ks.Bucket("even", lambda **d: True)])
    with pytest.raises(UnsupportedError, match="ranges of the row count"):
        odd.codegen(cols=48, probe=1000)
