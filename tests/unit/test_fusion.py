"""Fusion: families, rules with reasons, views, and the DOT of kernels."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.fusion.partition import view_kind
from kernelstudio.fusion.rules import RULES
from tests.reference_kernels import REFERENCE


def test_view_kinds():
    assert view_kind((64, 512), (64, 512)) == "full"
    assert view_kind((512,), (64, 512)) == "row"
    assert view_kind((64, 1), (64, 512)) == "col"
    assert view_kind((1,), (64, 512)) == "scalar"
    assert view_kind((64,), (64, 512)) is None
    assert view_kind((64, 1, 1), (1, 64, 20, 20), row_dims=2) == "col"


def test_rules_have_reasons():
    assert all(r.reason and r.name for r in RULES)


def test_families():
    conv = REFERENCE["conv_bias_relu"]()
    assert [k.family for k in ks.create_schedule(conv).kernels] == ["cube_vector"]
    assert [k.family for k in ks.create_schedule(conv, fuse=False).kernels] == ["cube", "vector", "vector"]
    a = ks.placeholder((32, 64), "float16", name="a")
    w = ks.placeholder((64, 48), "float16", name="w")
    assert [k.family for k in ks.create_schedule(ks.matmul(a, w)).kernels] == ["cube"]
    assert [k.family for k in ks.create_schedule(REFERENCE["softmax"]()).kernels] == ["vector"]


def test_second_matmul_starts_a_kernel_and_reason_is_recorded():
    a = ks.placeholder((32, 64), "float16", name="a")
    w1 = ks.placeholder((64, 64), "float16", name="w1")
    w2 = ks.placeholder((64, 16), "float16", name="w2")
    out = ks.matmul(ks.relu(ks.matmul(a, w1)), w2)
    s = ks.create_schedule(out)
    assert [k.family for k in s.kernels] == ["cube_vector", "cube"]
    assert s.kernels[1].reasons[0][1].name == "cube_root"
    text = s.explain()
    assert "cube_epilogue" in text and "cube_root" in text


def test_unfused_keeps_a_composite_together():
    out = REFERENCE["mla_prolog_lite"]()
    s = ks.create_schedule(out, fuse=False)
    ln = [k for k in s.kernels if any(n.composite and n.composite.name == "layer_norm" for n in k.nodes)]
    assert len(ln) == 1 and all(n.composite and n.composite.name == "layer_norm" for n in ln[0].nodes)


def test_dot_has_kernel_clusters():
    out = REFERENCE["mla_prolog_lite"]()
    dot = ks.create_schedule(out).to_dot()
    assert "cluster" in dot and "(cube_vector)" in dot


def test_one_kernel_with_a_full_and_a_column_output():
    import numpy as np

    x = ks.placeholder((16, 32), "float32", name="x")
    y = ks.exp(x)
    outs = (ks.relu(y), ks.reduce_sum(y, axis=-1))
    s = ks.create_schedule(outs)
    assert len(s.kernels) == 1 and len(s.kernels[0].outputs) == 2
    inputs = ks.random_inputs(outs, seed=0)
    for got, want in zip(ks.run_tiled(ks.lower(s, "ascend910b2"), inputs), ks.evaluate(outs, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_row_map_of_inner_broadcasts():
    from kernelstudio.fusion.partition import row_map

    assert row_map((4, 1, 64), (4, 8, 64)) == ((4, 8, 1), (8, 1, 0))
    assert row_map((4, 8, 64), (4, 8, 64)) is None  # full
    assert row_map((8, 64), (4, 8, 64)) is None  # periodic: a strided window per tile
    assert view_kind((4, 1, 64), (4, 8, 64)) == "full"
    assert view_kind((4, 1, 1), (4, 8, 64)) is None  # a one-element row gather would misalign UB
    assert view_kind((4, 3, 64), (4, 8, 64)) is None


@pytest.mark.parametrize("norm", ["rms_norm", "layer_norm"])
def test_a_composite_joins_a_matmul_kernel_whole_or_not_at_all(norm):
    # one output column: the statistic's tile view differs from the row's, so the composite cannot
    # all join the matmul's kernel; none of it does (a part outside would re-read the matmul from GM)
    def graph(n):
        a = ks.placeholder((4, 32), "float16", name="a")
        b = ks.placeholder((32, n), "float16", name="b")
        return getattr(ks, norm)(ks.matmul(a, b), axis=-1)

    s = ks.create_schedule(graph(1), fuse=True)
    assert [k.family for k in s.kernels][0] == "cube"
    assert all(k.family != "cube_vector" for k in s.kernels)
    reasons = {r.name for k in s.kernels for _, r in k.reasons}
    assert "composite_whole" in reasons

    def gm(fuse):
        t = ks.simulate(ks.lower(ks.create_schedule(graph(1), fuse=fuse))).traffic
        return sum(v for e, v in t.items() if "GM" in e or "WS" in e)

    assert gm(True) <= gm(False)
    whole = ks.create_schedule(graph(16), fuse=True)  # a real row: the whole composite fuses
    assert [k.family for k in whole.kernels] == ["cube_vector"]


@pytest.mark.parametrize("build", [lambda x: ks.gelu(x), lambda x: ks.gelu(x) + 1.0,
                                   lambda x: (x * 0.5) * (x + 1.0), lambda x: ks.exp(x) + ks.sigmoid(x) * x])
def test_branches_from_one_input_rejoin_in_one_kernel(build):
    x = ks.placeholder((100, 300), "float16", name="x")
    out = build(x)
    s = ks.create_schedule(out)
    assert len(s.kernels) == 1
    (k,) = s.kernels
    assert "branch_join" in {r.name for _, r in k.reasons}
    order = {n: i for i, n in enumerate(s.graph.nodes)}
    assert [order[n] for n in k.nodes] == sorted(order[n] for n in k.nodes)  # still topological
    inputs = {"x": np.random.default_rng(0).standard_normal((100, 300)).astype(np.float16)}
    got = ks.run_tiled(ks.lower(s, "ascend910b2"), inputs)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ks.evaluate(out, inputs), np.float32),
                               rtol=2e-3, atol=2e-3)


def test_branches_stay_apart_when_a_third_kernel_sits_between():
    # a = exp(x) and c = transpose(a) + 1 rejoin at a * c; folding a's kernel into c's would make it
    # depend on the transpose kernel, which reads a
    x = ks.placeholder((64, 64), "float16", name="x")
    a = ks.exp(x)
    out = a * (ks.transpose(a, (1, 0)) + 1.0)
    s = ks.create_schedule(out)
    assert [k.family for k in s.kernels] == ["vector"] * 3
    assert "branch_join" not in {r.name for k in s.kernels for _, r in k.reasons}
    made_by = {n: i for i, k in enumerate(s.kernels) for n in k.nodes}
    for i, k in enumerate(s.kernels):  # every kernel reads only kernels before it
        assert all(made_by[n] < i for n in k.inputs if n in made_by)
    inputs = {"x": np.random.default_rng(1).standard_normal((64, 64)).astype(np.float16)}
    got = ks.run_tiled(ks.lower(s, "ascend910b2"), inputs)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ks.evaluate(out, inputs), np.float32),
                               rtol=2e-3, atol=2e-3)
