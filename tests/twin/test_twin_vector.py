"""Vector reference kernels on the twin: add_custom (queues, DataCopyPad tails) and a row layer norm."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelstudio.codegen import TensorSpec
from kernelstudio.twin import run

from .conftest import load_bundle

ADD_N = 10037
ADD = load_bundle(
    "add_custom",
    (TensorSpec("x", (ADD_N,), "float16"), TensorSpec("y", (ADD_N,), "float16")),
    (TensorSpec("z", (ADD_N,), "float16"),),
)


def test_add_custom_matches_numpy_exactly(twin_cache: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(ADD_N).astype(np.float16)
    y = rng.standard_normal(ADD_N).astype(np.float16)
    z = run(ADD, {"x": x, "y": y}, cache_dir=twin_cache)  # one output: one array
    assert z.dtype == np.float16
    np.testing.assert_array_equal(z, x + y)  # one fp16 add rounds the same way everywhere


def test_add_custom_keep_dir_holds_the_bin_files(twin_cache: Path, tmp_path: Path) -> None:
    x = np.arange(ADD_N, dtype=np.float32) % 7
    y = np.ones(ADD_N, dtype=np.float16)
    out = run(ADD, {"x": x, "y": y}, cache_dir=twin_cache, keep_dir=str(tmp_path / "run"), by_name=True)
    np.testing.assert_array_equal(out["z"], (x + 1).astype(np.float16))
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["x.bin", "y.bin", "z.bin"]
    assert (tmp_path / "run" / "x.bin").stat().st_size == ADD_N * 2


LN_ROWS, LN_COLS = 48, 100
LAYER_NORM = load_bundle(
    "layer_norm",
    (
        TensorSpec("x", (LN_ROWS, LN_COLS), "float16"),
        TensorSpec("gamma", (LN_COLS,), "float16"),
        TensorSpec("beta", (LN_COLS,), "float16"),
    ),
    (TensorSpec("y", (LN_ROWS, LN_COLS), "float16"),),
)


def test_layer_norm_matches_numpy(twin_cache: Path) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((LN_ROWS, LN_COLS)) * 3 + 1).astype(np.float16)
    gamma = rng.uniform(0.5, 1.5, LN_COLS).astype(np.float16)
    beta = rng.standard_normal(LN_COLS).astype(np.float16)
    out = run(LAYER_NORM, {"x": x, "gamma": gamma, "beta": beta}, cache_dir=twin_cache, by_name=True)
    xf = x.astype(np.float32)
    mean = xf.mean(axis=1, keepdims=True)
    var = ((xf - mean) ** 2).mean(axis=1, keepdims=True)
    want = (xf - mean) / np.sqrt(var + 1e-5) * gamma.astype(np.float32) + beta.astype(np.float32)
    np.testing.assert_allclose(out["y"].astype(np.float32), want, rtol=1e-2, atol=1e-2)


VEC_LEN = 256
VECTOR_OPS = load_bundle(
    "vector_ops",
    (TensorSpec("x", (VEC_LEN,), "float32"), TensorSpec("y", (VEC_LEN,), "float32")),
    (TensorSpec("out", (28, VEC_LEN), "float32"),),
)


def _erf(v: np.ndarray) -> np.ndarray:
    import math

    return np.array([math.erf(float(t)) for t in v], dtype=np.float32)


def test_vector_api_rows_match_numpy(twin_cache: Path) -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, VEC_LEN).astype(np.float32)
    y = (rng.uniform(0.5, 2, VEC_LEN) * rng.choice([-1, 1], VEC_LEN)).astype(np.float32)
    o = run(VECTOR_OPS, {"x": x, "y": y}, cache_dir=twin_cache)
    ax = np.abs(x)
    want = {
        0: x + y, 1: x - y, 2: x * y, 3: x / y, 4: np.maximum(x, y), 5: np.minimum(x, y),
        6: x + 1.5, 7: x * -2, 8: np.maximum(x, 0.25), 9: np.minimum(x, 0.25), 10: np.exp(x),
        11: np.log(ax + 1), 12: np.sqrt(ax), 13: 1 / np.sqrt(ax + 1), 14: 1 / y, 15: np.maximum(x, 0),
        16: ax, 17: np.where(x >= 0, x, 0.2 * x), 18: np.full(VEC_LEN, 7.0), 19: _erf(x), 20: np.tanh(x),
        21: 1 / (1 + np.exp(-x)), 22: x / (1 + np.exp(-1.5957691216057308 * (x + 0.044715 * x**3))),
        23: np.where(x > y, x, y), 24: np.where(x < 0, x, 0), 25: np.repeat(x[:32], 8),
    }
    for row, expect in want.items():
        np.testing.assert_allclose(o[row], expect.astype(np.float32), rtol=2e-6, atol=1e-6, err_msg=f"row {row}")
    assert o[26, 0] == x.max() and o[26, 1:2].view(np.uint32)[0] == int(np.argmax(x))
    np.testing.assert_allclose(o[27, 0], x.sum(dtype=np.float64), rtol=1e-6)
    assert not o[27, 1:].any()
