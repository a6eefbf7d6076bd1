"""Random small graphs x random legal schedules: run_tiled equals the golden model."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio.fusion.precision import is_axis_reduce

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
    _equals_golden(out, prog, seed)


def _equals_golden(out, prog, seed: int) -> None:
    inputs = ks.random_inputs(out, seed=seed)
    want = np.asarray(ks.evaluate(out, inputs), dtype=np.float32)
    got = np.asarray(ks.run_tiled(prog, inputs), dtype=np.float32)
    tol = 3e-2 if out.dtype == "float16" else 2e-3
    assert not np.isnan(got).any()
    if out.dtype == "float16":  # a value within the tolerance of float16's largest may round past it on one side
        apart = np.isinf(want) != np.isinf(got)
        finite = np.where(np.isinf(want), got, want)[apart]
        assert (np.abs(finite) >= np.finfo(np.float16).max / (1 + tol)).all(), finite
        want, got = want[~apart], got[~apart]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@st.composite
def row_reduction_matmuls(draw):
    """A matmul whose epilogue reduces whole rows (what sync_all applies to), maybe with elementwise ops."""
    rows, cols, k = draw(st.integers(1, 40)), draw(st.integers(1, 70)), draw(st.integers(1, 50))
    dtype = draw(st.sampled_from(["float16", "float32"]))
    t = ks.matmul(ks.placeholder((rows, k), dtype, name="a"), ks.placeholder((k, cols), dtype, name="w"))
    if draw(st.booleans()):
        t = ks.relu(t + ks.placeholder((rows, cols), dtype, name="x"))
    t = {"layer_norm": ks.layer_norm, "rms_norm": ks.rms_norm, "softmax": ks.softmax}[
        draw(st.sampled_from(["layer_norm", "rms_norm", "softmax"]))](t)
    for f in draw(st.lists(st.sampled_from(UNARY), max_size=2)):
        t = f(t)
    return t


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(out=row_reduction_matmuls(), double=st.booleans(), cores=st.integers(1, 24), seed=st.integers(0, 3),
       tiles=st.sampled_from([None, (16, 16, 16), (32, 64, 32)]), group=st.sampled_from([None, (1, 1), (2, 1)]))
def test_sync_all_plans_equal_the_golden_model(out, double, cores, seed, tiles, group):
    # a matmul + row reduction with sync_all: C tiles over `cores` cube cores, one barrier, rows over the AIVs
    s = ks.create_schedule(out, fuse=True)
    kernels = [k for k in s.kernels if k.can_sync_all]
    assume(kernels)  # (a tiny matmul the fusion rules leave apart)
    for k in kernels:
        st_ = s[k.name].sync_all(True).double_buffer(double).parallel(None, cores)
        if tiles is not None:
            st_.split("m", tiles[0]).split("n", tiles[1]).split("k", tiles[2])
            if group is not None:
                st_.l1_c_steps(min(group[0], -(-k.rows // tiles[0])), 1)
    prog = ks.lower(s, "ascend910b2")
    _equals_golden(out, prog, seed)
    sim = ks.simulate(prog)
    assert sim.time_us >= sim.metrics["roofline_bound_us"] * (1 - 1e-9)
