"""Random int8 matmuls x random legal schedules: run_tiled equals the golden model and an int64 NumPy
product exactly (int32 accumulation, never an int8 wrap), with and without a dequant epilogue."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelstudio as ks


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 70), k=st.integers(1, 300), n=st.integers(1, 70), ta=st.booleans(), tb=st.booleans(),
       epilogue=st.sampled_from(["none", "scalar", "vector"]), fuse=st.booleans(),
       tile=st.sampled_from([None, 16, 32]), seed=st.integers(0, 3))
def test_int8_matmul_is_exact_under_any_schedule(m, k, n, ta, tb, epilogue, fuse, tile, seed):
    a = ks.placeholder((k, m) if ta else (m, k), "int8", name="a")
    b = ks.placeholder((n, k) if tb else (k, n), "int8", name="b")
    y = ks.matmul(a, b, transpose_a=ta, transpose_b=tb)
    if epilogue == "scalar":
        out = ks.cast(y, "float16", scale=1 / 64)
    elif epilogue == "vector":
        out = ks.cast(y, "float32", scale=ks.placeholder((n,), "float32", name="s"))
    else:
        out = y
    s = ks.create_schedule(out, fuse=fuse)
    if tile is not None:
        for kern in s.kernels:
            if kern.family != "vector":
                s[kern.name].split("m", tile).split("k", tile)
    prog = ks.lower(s, "ascend910b2")
    rng = np.random.default_rng(seed)
    inputs = {"a": rng.integers(-128, 128, a.shape).astype(np.int8),
              "b": rng.integers(-128, 128, b.shape).astype(np.int8)}
    if epilogue == "vector":
        inputs["s"] = rng.standard_normal(n).astype(np.float32)
    want = ks.evaluate(out, inputs)
    got = ks.run_tiled(prog, inputs)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    av, bv = inputs["a"].astype(np.int64), inputs["b"].astype(np.int64)
    exact = (av.T if ta else av) @ (bv.T if tb else bv)
    if epilogue == "none":
        np.testing.assert_array_equal(want, exact)
    elif epilogue == "scalar":
        np.testing.assert_array_equal(want, (exact.astype(np.float32) * np.float32(1 / 64)).astype(np.float16))
    else:
        np.testing.assert_array_equal(want, exact.astype(np.float32) * inputs["s"])
