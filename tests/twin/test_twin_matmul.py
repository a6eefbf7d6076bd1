"""MIX_AIC_1_2 reference kernels on the twin: Matmul Iterate/GetTensorC epilogue and IterateAll + flags."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelstudio.codegen import TensorSpec
from kernelstudio.twin import run

from .conftest import load_bundle

M, N, K = 128, 96, 64
MATMUL_LEAKYRELU = load_bundle(
    "matmul_leakyrelu",
    (TensorSpec("a", (M, K), "float16"), TensorSpec("b", (K, N), "float16"), TensorSpec("bias", (N,), "float32")),
    (TensorSpec("c", (M, N), "float32"),),
)


def test_matmul_leakyrelu_matches_numpy(twin_cache: Path) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    c = run(MATMUL_LEAKYRELU, {"a": a, "b": b, "bias": bias}, cache_dir=twin_cache)
    acc = a.astype(np.float32) @ b.astype(np.float32) + bias
    want = np.where(acc >= 0, acc, acc * np.float32(0.1))
    # fp16 inputs are exact in fp32; only the fp32 summation order differs.
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)
    assert (c < 0).any() and (c > 0).any()


RM, RN, RK = 96, 80, 64
MATMUL_ROWREDUCE = load_bundle(
    "matmul_rowreduce",
    (TensorSpec("a", (RM, RK), "float16"), TensorSpec("b", (RN, RK), "float16")),
    (TensorSpec("row_sum", (RM,), "float32"), TensorSpec("row_max", (RM,), "float32")),
    workspace_bytes=RM * RN * 4,  # C in fp32, written by the AICs and read by the AIVs
)


def test_matmul_rowreduce_waits_for_the_cube_and_reduces_rows(twin_cache: Path) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((RM, RK)).astype(np.float16)
    b = rng.standard_normal((RN, RK)).astype(np.float16)
    row_sum, row_max = run(MATMUL_ROWREDUCE, {"a": a, "b": b}, cache_dir=twin_cache)  # in output order
    c = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(row_sum, c.sum(axis=1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(row_max, c.max(axis=1), rtol=1e-5, atol=1e-4)
