"""int8 through the three back ends: int8 x int8 accumulates exactly in int32 (golden == run_tiled ==
twin == an int64 NumPy product), and a dequantizing cast(..., scale=) fused on the vector side agrees
bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen
from kernelstudio.core.dtypes import numpy_dtype

from . import reference


def _full_range(out: ks.Tensor, seed: int = 0) -> dict[str, np.ndarray]:
    """random_inputs with every int8 placeholder drawn from all of [-128, 127] and a float32 "s"
    (a dequant scale) shrunk so the dequantized values stay within float16."""
    inputs = ks.random_inputs(out, seed=seed)
    rng = np.random.default_rng(seed)
    for name, v in inputs.items():
        if v.dtype == np.int8:
            inputs[name] = rng.integers(-128, 128, size=v.shape).astype(np.int8)
    if "s" in inputs:
        inputs["s"] = (inputs["s"] * np.float32(1e-3)).astype(np.float32)
    return inputs


def _three_way(out: ks.Tensor, cache, fuse: bool = True) -> tuple[np.ndarray, dict[str, np.ndarray], object]:
    prog = reference.lower(out, fuse=fuse)
    inputs = _full_range(out)
    golden = ks.evaluate(out, inputs)
    tiled = ks.run_tiled(prog, inputs)
    got = np.asarray(twin.run(codegen(prog), inputs, cache_dir=cache, by_name=True)[prog.outputs[0]])
    assert golden.dtype == tiled.dtype == got.dtype == numpy_dtype(out.dtype)
    np.testing.assert_array_equal(tiled, golden, err_msg="run_tiled vs golden")
    np.testing.assert_array_equal(got, golden, err_msg="twin vs golden")
    return golden, inputs, prog


def _exact(inputs: dict[str, np.ndarray], ta: bool = False, tb: bool = False) -> np.ndarray:
    a, b = inputs["a"].astype(np.int64), inputs["b"].astype(np.int64)
    return (a.T if ta else a) @ (b.T if tb else b)


@pytest.mark.parametrize(("m", "k", "n", "tb"), [
    (64, 256, 64, False),
    (50, 200, 37, False),  # tails: m, n not multiples of 16, k not a multiple of 32
    (33, 300, 70, True),
])
def test_int8_matmul_accumulates_in_int32(m: int, k: int, n: int, tb: bool, twin_cache) -> None:
    a = ks.placeholder((m, k), "int8", name="a")
    b = ks.placeholder((n, k) if tb else (k, n), "int8", name="b")
    out = ks.matmul(a, b, transpose_b=tb)
    assert out.dtype == "int32"
    golden, inputs, prog = _three_way(out, twin_cache)
    exact = _exact(inputs, tb=tb)
    assert np.abs(exact).max() > 127 * 128  # far outside int8: a wrapped or float16 result would show
    np.testing.assert_array_equal(golden, exact)
    l0c = [b for kern in prog.kernels for b in kern.buffers if b.tier.value == "L0C"]
    assert l0c and all(b.dtype == "int32" for b in l0c)


def test_int8_matmul_with_a_scalar_dequant_epilogue(twin_cache) -> None:
    a = ks.placeholder((50, 256), "int8", name="a")
    b = ks.placeholder((256, 37), "int8", name="b")
    out = ks.cast(ks.matmul(a, b), "float16", scale=0.0123)
    golden, inputs, prog = _three_way(out, twin_cache)
    assert [k.family for k in prog.kernels] == ["cube_vector"]
    want = (_exact(inputs).astype(np.float32) * np.float32(0.0123)).astype(np.float16)
    np.testing.assert_array_equal(golden, want)


def test_int8_matmul_with_a_per_channel_dequant_and_more_epilogue(twin_cache) -> None:
    a = ks.placeholder((40, 128), "int8", name="a")
    b = ks.placeholder((128, 72), "int8", name="b")
    s = ks.placeholder((72,), "float32", name="s")
    bias = ks.placeholder((72,), "float16", name="bias")
    out = ks.relu(ks.cast(ks.matmul(a, b), "float16", scale=s) + bias)
    golden, inputs, prog = _three_way(out, twin_cache)
    assert [k.family for k in prog.kernels] == ["cube_vector"]
    deq = (_exact(inputs).astype(np.float32) * inputs["s"]).astype(np.float16)
    assert np.isfinite(deq).all() and np.abs(deq).max() > 1
    want = np.maximum((deq.astype(np.float32) + inputs["bias"].astype(np.float32)).astype(np.float16), 0)
    np.testing.assert_array_equal(golden, want)


def test_int8_matmul_dequant_unfused(twin_cache) -> None:
    a = ks.placeholder((48, 96), "int8", name="a")
    b = ks.placeholder((96, 40), "int8", name="b")
    out = ks.cast(ks.matmul(a, b), "bfloat16", scale=2.0 ** -10)
    _, _, prog = _three_way(out, twin_cache, fuse=False)
    assert len(prog.kernels) == 2


def test_int8_programs_simulate(twin_cache) -> None:
    a = ks.placeholder((64, 256), "int8", name="a")
    b = ks.placeholder((256, 64), "int8", name="b")
    y = ks.matmul(a, b)
    for out in (y, ks.cast(y, "float16", scale=0.5), ks.cast(a, "float32") * 2.0, ks.cast(a, "int32") + 1):
        for fuse in (True, False):
            sim = ks.simulate(reference.lower(out, fuse=fuse))
            assert sim.time_us > 0


@pytest.mark.parametrize("case", ["max_axis1", "max_rows", "sum_rows_int32", "sum_axis0_int32", "scaled_float"])
@pytest.mark.parametrize("fuse", [True, False])
def test_int8_vector_kernels(case: str, fuse: bool, twin_cache) -> None:
    """int8 reaching int32/float32 vector math arrives through float16 (int8 -> half -> int32/float,
    exact); max starts below every int32; int32 reductions are priced."""
    x = ks.placeholder((6, 40, 72), "int8", name="x")
    out = {"max_axis1": lambda: ks.reduce_max(x, axis=1),
           "max_rows": lambda: ks.reduce_max(x, axis=-1),
           "sum_rows_int32": lambda: ks.reduce_sum(ks.cast(x, "int32"), axis=-1),
           "sum_axis0_int32": lambda: ks.reduce_sum(ks.cast(x, "int32"), axis=0),
           "scaled_float": lambda: ks.cast(x, "float32", scale=0.5) + 1.0}[case]()
    golden, inputs, prog = _three_way(out, twin_cache, fuse=fuse)
    if case == "max_axis1":
        np.testing.assert_array_equal(golden, inputs["x"].max(axis=1))
    elif case.startswith("sum"):
        np.testing.assert_array_equal(golden, inputs["x"].astype(np.int64).sum(axis=-1 if "rows" in case else 0))
    assert "int8 -> float16 (exact)" in ks.format_program(prog)
    assert ks.simulate(prog).time_us > 0


def test_int32_accumulation_wraps_alike_everywhere(twin_cache) -> None:
    """Past 2**31 the int32 accumulator wraps (as L0C does) in golden, run_tiled and the twin alike."""
    k = 140_000  # 140000 * 128 * 128 > 2**31
    a = ks.placeholder((16, k), "int8", name="a")
    b = ks.placeholder((k, 16), "int8", name="b")
    out = ks.matmul(a, b)
    prog = reference.lower(out)
    inputs = {"a": np.full((16, k), -128, np.int8), "b": np.full((k, 16), -128, np.int8)}
    inputs["a"][:, ::7] = -100
    golden = ks.evaluate(out, inputs)
    exact = inputs["a"].astype(np.int64) @ inputs["b"].astype(np.int64)
    assert exact.max() > 2**31 - 1 and golden.max() < 0  # wrapped
    np.testing.assert_array_equal(golden, exact.astype(np.int32))
    np.testing.assert_array_equal(ks.run_tiled(prog, inputs), golden)
    got = twin.run(codegen(prog), inputs, cache_dir=twin_cache, by_name=True)["matmul"]
    np.testing.assert_array_equal(np.asarray(got), golden)
