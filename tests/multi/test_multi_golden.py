"""What the three operators compute, against NumPy written out here in float64: AllReduce is the sum over
ranks of x_r @ w_r; AllGatherMatmul gathers every rank's x, then multiplies; MatmulReduceScatter
multiplies, then rank r keeps its block of rows of the sum."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks

M = ks.multi
TOL = {"float16": dict(rtol=2e-2, atol=2e-2), "bfloat16": dict(rtol=5e-2, atol=1e-1)}


def _f64(a):
    return np.asarray(a, dtype=np.float64)


@pytest.mark.parametrize("p", [2, 4, 8])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_allreduce_is_the_sum_over_ranks(p, dtype):
    x = ks.placeholder((64, 256), dtype, name="x")
    w = ks.placeholder((256, 96), dtype, name="w")
    b = ks.placeholder((96,), dtype, name="bias")
    d = M.matmul_allreduce(x, w, cluster=M.Cluster(p), bias=b)
    inputs = d.random_inputs(seed=p)
    got = d.evaluate(inputs)
    want = sum(_f64(inputs["x"][r]) @ _f64(inputs["w"][r]) for r in range(p)) + _f64(inputs["bias"])
    assert got.shape == (p, 64, 96)
    for r in range(p):
        np.testing.assert_allclose(_f64(got[r]), want, **TOL[dtype])
    assert (got == got[0]).all()  # every rank holds the same result


def test_allreduce_add_and_rms_norm_after_the_reduce():
    p = 4
    x = ks.placeholder((2, 32, 256), "float16", name="x")  # (b, s, k)
    w = ks.placeholder((256, 128), "float16", name="w")
    res = ks.placeholder((2, 32, 128), "float16", name="residual")
    g = ks.placeholder((128,), "float16", name="gamma")
    d = M.matmul_allreduce(x, w, cluster=M.Cluster(p), add=res, rms_norm=g, eps=1e-5)
    inputs = d.random_inputs(seed=1)
    got = d.evaluate(inputs)
    y = sum(_f64(inputs["x"][r]) @ _f64(inputs["w"][r]) for r in range(p)) + _f64(inputs["residual"])
    want = y / np.sqrt((y * y).mean(axis=-1, keepdims=True) + 1e-5) * _f64(inputs["gamma"])
    assert got.shape == (p, 2, 32, 128) and d.out_shape == (2, 32, 128)
    np.testing.assert_allclose(_f64(got[3]), want, rtol=2e-2, atol=2e-2)
    plain = M.matmul_allreduce(x, w, cluster=M.Cluster(p), rms_norm=True).evaluate(
        {k: v for k, v in inputs.items() if k in ("x", "w")})
    y0 = y - _f64(inputs["residual"])
    np.testing.assert_allclose(_f64(plain[0]), y0 / np.sqrt((y0 * y0).mean(-1, keepdims=True) + 1e-6),
                               rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("p", [2, 4, 8])
def test_all_gather_then_matmul(p):
    x = ks.placeholder((32, 256), "float16", name="x")
    w = ks.placeholder((256, 64), "float16", name="w")
    d = M.all_gather_matmul(x, w, cluster=M.Cluster(p))
    inputs = d.random_inputs(seed=2)
    out, gathered = d.evaluate(inputs)
    full = np.concatenate([inputs["x"][r] for r in range(p)], axis=0)
    assert out.shape == (p, 32 * p, 64) and gathered.shape == (p, 32 * p, 256)
    for r in range(p):
        assert (gathered[r] == full).all()
        np.testing.assert_allclose(_f64(out[r]), _f64(full) @ _f64(inputs["w"][r]), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("p", [2, 4, 8])
def test_matmul_then_reduce_scatter(p):
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((256, 48), "float16", name="w")
    b = ks.placeholder((48,), "float16", name="b")
    d = M.matmul_reduce_scatter(x, w, cluster=M.Cluster(p), bias=b)
    inputs = d.random_inputs(seed=3)
    got = d.evaluate(inputs)
    total = sum(_f64(inputs["x"][r]) @ _f64(inputs["w"][r]) for r in range(p)) + _f64(inputs["b"])
    rows = 64 // p
    assert got.shape == (p, rows, 48) and d.out_shape == (rows, 48)
    for r in range(p):
        np.testing.assert_allclose(_f64(got[r]), total[r * rows:(r + 1) * rows], rtol=2e-2, atol=2e-2)
    ar = M.matmul_allreduce(x, w, cluster=M.Cluster(p), bias=b).evaluate(inputs)
    assert (got.reshape(64, 48) == ar[0]).all()  # the same sum, scattered


def test_outputs_are_in_the_input_dtype_and_partials_are_stored_in_it():
    """Each rank's partial is rounded to fp16 before the reduce (the kernel stores it in GM first)."""
    x = ks.placeholder((16, 256), "float16", name="x")
    w = ks.placeholder((256, 16), "float16", name="w")
    d = M.matmul_allreduce(x, w, cluster=M.Cluster(2))
    inputs = {"x": np.full((2, 16, 256), 1.0, np.float16), "w": np.full((2, 256, 16), 1.0 / 3, np.float16)}
    got = d.evaluate(inputs)
    part = np.float16(256 * np.float32(np.float16(1.0 / 3)))
    assert got.dtype == np.float16 and got[0, 0, 0] == np.float16(np.float32(part) * 2)
