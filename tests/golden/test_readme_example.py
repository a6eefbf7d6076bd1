"""The README / DESIGN example runs and matches a hand-written NumPy reference."""

from __future__ import annotations

import math

import numpy as np

import kernelstudio as ks


def test_readme_example():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="b")
    y = ks.matmul(x, w, transpose_b=True)
    y = ks.layer_norm(y, axis=-1, eps=1e-5)
    out = ks.gelu(y + b)
    inputs = ks.random_inputs(out, seed=0)
    result = ks.evaluate(out, inputs)

    assert out.shape == (64, 512) and out.dtype == "float16"
    assert result.shape == (64, 512) and result.dtype == np.float16
    assert sorted(inputs) == ["b", "w", "x"]
    assert all(v.dtype == np.float16 for v in inputs.values())

    xv, wv, bv = (inputs[k].astype(np.float64) for k in ("x", "w", "b"))
    h = xv @ wv.T
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
    h = h + bv
    ref = h * 0.5 * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    assert 0.3 < np.abs(ref).mean() < 3  # inputs scaled so the example's values stay moderate
    np.testing.assert_allclose(result.astype(np.float64), ref, rtol=1e-2, atol=1e-2)
