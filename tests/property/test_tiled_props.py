"""Random small graphs x random legal schedules: run_tiled equals the golden model."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio.lower.layout import is_axis_reduce

UNARY = [ks.relu, ks.exp, ks.abs, ks.sigmoid, ks.tanh, lambda t: t * 0.5, lambda t: t + 1.0, ks.square]


@st.composite
def graphs(draw):
    rows = draw(st.integers(1, 40))
    cols = draw(st.integers(1, 70))
    dtype = draw(st.sampled_from(["float16", "float32"]))
    x = ks.placeholder((rows, cols), dtype, name="x")
    kind = draw(st.sampled_from(["elementwise", "softmax", "layer_norm", "matmul"]))
    if kind == "matmul":
        k = draw(st.integers(1, 50))
        a = ks.placeholder((rows, k), dtype, name="a")
        w = ks.placeholder((k, cols), dtype, name="w")
        t = ks.matmul(a, w)
        if draw(st.booleans()):
            t = ks.relu(t + x)
        if draw(st.booleans()):
            t = ks.rms_norm(t)
    else:
        t = x
        if kind == "softmax":
            t = ks.softmax(t)
        elif kind == "layer_norm":
            t = ks.layer_norm(t)
    for f in draw(st.lists(st.sampled_from(UNARY), min_size=0 if t is not x else 1, max_size=3)):
        t = f(t)
    return t


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(out=graphs(), fuse=st.booleans(), double=st.booleans(), tr=st.sampled_from([None, 1, 3, 8]),
       cores=st.integers(1, 6), seed=st.integers(0, 3), group=st.sampled_from([None, (1, 2), (2, 1), (2, 3)]))
def test_random_graphs_and_schedules(out, fuse, double, tr, cores, seed, group):
    s = ks.create_schedule(out, fuse=fuse)
    for k in s.kernels:
        st_ = s[k.name]
        st_.double_buffer(double).parallel(None, cores)
        if tr is not None:
            if k.family == "vector":
                if not is_axis_reduce(k):  # an axis reduction walks its outer dim one slice at a time
                    st_.split(0, tr)
            elif k.family == "cube_vector":  # vectorize is the epilogue's chunk: cube kernels have none
                st_.split("m", 16).vectorize(0, min(tr, 8))
            else:
                st_.split("m", 16)
        if group is not None and k.root is not None:  # l1_c_steps: 16 x 16 C tiles, groups of at most all
            mt, nt = -(-k.rows // 16), -(-k.cols // 16)
            if k.family == "cube":
                st_.split("m", 16).split("n", 16).l1_c_steps(min(group[0], mt), min(group[1], nt))
            elif k.has_row_reduction():  # a row block: groups along n only
                st_.split("m", 16).split("n", 16).l1_c_steps(1, min(group[1], nt))
    prog = ks.lower(s, "ascend910b2")
    inputs = ks.random_inputs(out, seed=seed)
    want = np.asarray(ks.evaluate(out, inputs), dtype=np.float32)
    got = np.asarray(ks.run_tiled(prog, inputs), dtype=np.float32)
    tol = 3e-2 if out.dtype == "float16" else 2e-3
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
