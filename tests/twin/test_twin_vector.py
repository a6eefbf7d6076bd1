"""Vector reference kernels on the twin: add_custom (queues, DataCopyPad tails) and a row layer norm."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelstudio.twin import TensorSpec, run

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
    out = run(ADD, {"x": x, "y": y}, cache_dir=twin_cache)
    assert out["z"].dtype == np.float16
    np.testing.assert_array_equal(out["z"], x + y)  # one fp16 add rounds the same way everywhere


def test_add_custom_keep_dir_holds_the_bin_files(twin_cache: Path, tmp_path: Path) -> None:
    x = np.arange(ADD_N, dtype=np.float32) % 7
    y = np.ones(ADD_N, dtype=np.float16)
    out = run(ADD, {"x": x, "y": y}, cache_dir=twin_cache, keep_dir=str(tmp_path / "run"))
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
    out = run(LAYER_NORM, {"x": x, "gamma": gamma, "beta": beta}, cache_dir=twin_cache)
    xf = x.astype(np.float32)
    mean = xf.mean(axis=1, keepdims=True)
    var = ((xf - mean) ** 2).mean(axis=1, keepdims=True)
    want = (xf - mean) / np.sqrt(var + 1e-5) * gamma.astype(np.float32) + beta.astype(np.float32)
    np.testing.assert_allclose(out["y"].astype(np.float32), want, rtol=1e-2, atol=1e-2)
    assert np.abs(out["y"].astype(np.float32) - want).max() > 0  # fp16 output: not bit-identical to fp32 math
