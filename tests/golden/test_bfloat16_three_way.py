"""bfloat16 designs through the three back ends with `ml_dtypes.bfloat16` arrays in and out:
golden (ks.evaluate) == ks.run_tiled == the generated Ascend C on the twin, and the twin taking float32
holders and other frameworks' arrays (through __array__ or DLPack) as the other two do."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.dtypes import round_to
from tests.unit.test_bfloat16 import ArrayLike, DLPackOnly, chain, matmul_rms_norm

BF16 = np.dtype(ml_dtypes.bfloat16)
ULP = 2.0**-7  # one bfloat16 unit in the last place, relative


def matmul_layer_norm() -> ks.Tensor:
    a = ks.placeholder((40, 96), "bfloat16", name="a")
    w = ks.placeholder((96, 64), "bfloat16", name="w")
    return ks.layer_norm(ks.matmul(a, w))


def arithmetic() -> ks.Tensor:
    """Exact arithmetic only (no exp, no reductions): the twin equals the interpreter bit for bit."""
    x = ks.placeholder((20, 48), "bfloat16", name="x")
    g = ks.placeholder((20, 1), "bfloat16", name="g")
    return (x * g - 0.5) / (ks.abs(x) + 1.0)


DESIGNS = {"chain": chain, "matmul_rms_norm": matmul_rms_norm, "matmul_layer_norm": matmul_layer_norm,
           "arithmetic": arithmetic}


def _f32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float32)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_bfloat16_three_way(name: str, twin_cache: Path) -> None:
    out = DESIGNS[name]()
    s = ks.create_schedule(out)
    prog = ks.lower(s)
    inputs = ks.random_inputs(out)
    assert all(v.dtype == BF16 for v in inputs.values())
    golden = ks.evaluate(out, inputs)
    planned = ks.evaluate(out, inputs, schedule=s)
    tiled = ks.run_tiled(prog, inputs)
    twin = ks.twin.run(ks.codegen(prog), inputs, cache_dir=twin_cache)
    assert golden.dtype == planned.dtype == tiled.dtype == twin.dtype == BF16
    scale = float(np.abs(_f32(tiled)).max())
    # the framework reference rounds every step to bfloat16; the kernels keep float32 on chip
    np.testing.assert_allclose(_f32(tiled), _f32(golden), rtol=5e-2, atol=5e-2 * scale)
    if name == "arithmetic":
        np.testing.assert_array_equal(planned.view(np.uint16), tiled.view(np.uint16))
        np.testing.assert_array_equal(twin.view(np.uint16), tiled.view(np.uint16))
    else:  # exp's implementation, the order of a float32 ReduceSum or of k tiles: a unit in the last place
        np.testing.assert_allclose(_f32(planned), _f32(tiled), rtol=ULP, atol=ULP * scale)
        np.testing.assert_allclose(_f32(twin), _f32(tiled), rtol=ULP, atol=ULP * scale)


def test_twin_takes_float32_holders_and_other_frameworks_arrays(twin_cache: Path) -> None:
    out = matmul_rms_norm()
    code = ks.codegen(ks.lower(ks.create_schedule(out)))
    inputs = ks.random_inputs(out)
    want = ks.twin.run(code, inputs, cache_dir=twin_cache)
    holders = {k: v.astype(np.float32) for k, v in inputs.items()}
    for given in (holders, {k: ArrayLike(v) for k, v in inputs.items()},
                  {k: DLPackOnly(v) for k, v in holders.items()}):
        got = ks.twin.run(code, given, cache_dir=twin_cache)
        assert got.dtype == BF16
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    rng = np.random.default_rng(5)
    raw = {k: (rng.standard_normal(v.shape) * 0.2).astype(np.float32) for k, v in inputs.items()}
    np.testing.assert_array_equal(ks.twin.run(code, raw, cache_dir=twin_cache).view(np.uint16),
                                  ks.twin.run(code, {k: round_to("bfloat16", v) for k, v in raw.items()},
                                              cache_dir=twin_cache).view(np.uint16))


def test_twin_input_errors(twin_cache: Path) -> None:
    out = chain()
    code = ks.codegen(ks.lower(ks.create_schedule(out)))
    g = ks.random_inputs(out)["g"]
    with pytest.raises(ks.InputError, match="input 'x' has type object, which NumPy cannot read .*neither "
                                            "__array__ nor __dlpack__.*placeholder x is \\[24,40\\] bfloat16"):
        ks.twin.run(code, {"x": object(), "g": g}, cache_dir=twin_cache)
    with pytest.raises(ks.InputError, match="has shape \\[40,24\\] but placeholder x is \\[24,40\\] bfloat16"):
        ks.twin.run(code, {"x": DLPackOnly(np.zeros((40, 24), np.float32)), "g": g}, cache_dir=twin_cache)
