"""run_tiled (the TileIR interpreter) equals the golden model for every reference kernel."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from tests.reference_kernels import REFERENCE, TOL


def _check(out, prog, seed=0):
    inputs = ks.random_inputs(out, seed=seed)
    want = np.asarray(ks.evaluate(out, inputs), dtype=np.float32)
    got = np.asarray(ks.run_tiled(prog, inputs), dtype=np.float32)
    assert got.shape == want.shape
    assert not np.isnan(got).any(), "an output element was never written"
    tol = TOL[out.dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("double", [True, False])
def test_reference_kernels(name, fuse, double):
    out = REFERENCE[name]()
    s = ks.create_schedule(out, fuse=fuse)
    for k in s.kernels:
        s[k.name].double_buffer(double)
    _check(out, ks.lower(s, "ascend910b2"))


def test_mla_prolog_is_one_mixed_kernel_and_unfused_has_four():
    out = REFERENCE["mla_prolog_lite"]()
    fused = ks.create_schedule(out)
    assert [k.family for k in fused.kernels] == ["cube_vector"]
    unfused = ks.create_schedule(out, fuse=False)
    assert [k.family for k in unfused.kernels] == ["cube", "vector", "vector", "vector"]


def test_tails_user_tiles_that_do_not_divide():
    out = REFERENCE["mla_prolog_lite"](m=50, k=200, n=300)
    s = ks.create_schedule(out)
    st = s[out]
    st.split("m", 32).split("n", 64).split("k", 48).vectorize(0, 5)
    prog = ks.lower(s, "ascend910b2")
    t = dict(prog.kernels[0].tiling)
    assert (t["tile_m"], t["tile_n"], t["tile_k"]) == (32, 64, 48)
    assert "min(" in prog.passes[-1][1]
    _check(out, prog)


def test_multi_pass_row_reduction_when_the_row_is_split():
    out = REFERENCE["layer_norm"](rows=20, cols=1000)
    s = ks.create_schedule(out)
    s[out].split(-1, 256)
    prog = ks.lower(s, "ascend910b2")
    assert any("multi-pass" in n for n in prog.kernels[0].notes)
    _check(out, prog)


def test_mixed_epilogue_multi_pass():
    out = REFERENCE["mla_prolog_lite"](m=32, k=64, n=1000)
    s = ks.create_schedule(out, fuse=True)  # the mixed kernel itself
    s[out].vectorize(-1, 256)
    prog = ks.lower(s, "ascend910b2")
    assert any("multi-pass" in n for n in prog.kernels[0].notes)
    _check(out, prog)


def test_full_row_scheme_is_recorded():
    out = REFERENCE["softmax"]()
    prog = ks.lower(ks.create_schedule(out), "ascend910b2")
    assert any("full-row" in n for n in prog.kernels[0].notes)


def test_conv_reference_size():
    out = REFERENCE["conv_bias_relu"](1, 64, 112, 64)
    prog = ks.lower(ks.create_schedule(out), "ascend910b2")
    assert prog.kernels[0].family == "cube_vector"
    _check(out, prog)


def test_batched_matmul_with_broadcast_weights_and_bf16():
    a = ks.placeholder((2, 3, 40, 48), "bfloat16", name="a")
    b = ks.placeholder((3, 48, 24), "bfloat16", name="b")
    out = ks.silu(ks.matmul(a, b))
    _check(out, ks.lower(ks.create_schedule(out), "ascend910b2"))


def test_transpose_a():
    a = ks.placeholder((48, 40), "float16", name="a")
    b = ks.placeholder((48, 24), "float16", name="b")
    out = ks.matmul(a, b, transpose_a=True)
    _check(out, ks.lower(ks.create_schedule(out), "ascend910b2"))


def _check_multi(out, prog):
    inputs = ks.random_inputs(out, seed=0)
    want = ks.evaluate(out, inputs)
    got = ks.run_tiled(prog, inputs)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("fuse", [True, False])
def test_layout_and_index_kernels(fuse):
    x = ks.placeholder((6, 40, 30), "float16", name="x")
    tbl = ks.placeholder((16, 128), "float16", name="table")
    idx = ks.placeholder((40,), "int32", name="idx")
    s = ks.placeholder((64, 16), "float32", name="scores")
    b = ks.placeholder((30,), "float32", name="b")
    cases = [ks.transpose(x, (0, 2, 1)) * 2.0, ks.reshape(ks.relu(x), (240, 30)) + 1.0,
             ks.broadcast_to(b, (7, 30)) * 3.0, ks.topk(s, 4), ks.gather(tbl, idx) * 2.0]
    for out in cases:
        _check_multi(out, ks.lower(ks.create_schedule(out, fuse=fuse), "ascend910b2"))


def test_topk_values_and_indices_share_one_kernel():
    s = ks.placeholder((64, 16), "float32", name="scores")
    v, i = ks.topk(s, 4)
    sch = ks.create_schedule((v, i))
    assert len(sch.kernels) == 1 and len(sch.kernels[0].outputs) == 2


@pytest.mark.parametrize("fuse", [True, False])
def test_periodic_operands_batched_conv_bias_and_shared_table(fuse):
    out = REFERENCE["conv_bias_relu"](n=3, cin=16, hw=12, cout=32)
    _check(out, ks.lower(ks.create_schedule(out, fuse=fuse), "ascend910b2"))
    a = ks.placeholder((3, 10, 24), "float32", name="a")
    t = ks.placeholder((10, 24), "float32", name="t")
    out = ks.exp(a) + t
    s = ks.create_schedule(out, fuse=fuse)
    for k in s.kernels:
        s[k.name].split(0, 1).split(1, 5)  # 5 rows: a divisor of the 10-row repeat of t
    _check(out, ks.lower(s, "ascend910b2"))


def test_tile_straddling_a_periodic_operand_is_refused():
    a = ks.placeholder((3, 10, 24), "float32", name="a")
    t = ks.placeholder((10, 24), "float32", name="t")
    out = ks.exp(a) + t
    s = ks.create_schedule(out)
    s[out].split(1, 4)
    with pytest.raises(ks.ScheduleError, match="repeats every 10 rows"):
        ks.lower(s, "ascend910b2")


@pytest.mark.parametrize("split, says", [((1, 4), "would straddle a repeat (10 is not a multiple of 4)"),
                                         ((0, 2), "a tile of 20 rows spans 2 repeats")])
def test_the_periodic_operand_message_says_why_each_tile_is_refused(split, says):
    a = ks.placeholder((6, 10, 24), "float32", name="a")
    t = ks.placeholder((10, 24), "float32", name="t")
    out = ks.exp(a) + t
    s = ks.create_schedule(out)
    s[out].split(*split)
    with pytest.raises(ks.ScheduleError) as e:
        ks.lower(s, "ascend910b2")
    assert says in str(e.value) and "must lie within one repeat" in str(e.value)
    assert "use a divisor of 10 such as 10, 5" in str(e.value)
