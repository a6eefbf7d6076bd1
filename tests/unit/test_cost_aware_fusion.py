"""Cost-aware fusion: create_schedule keeps a matmul and its epilogue in one kernel only where the
simulator finds that faster; fuse=True forces it, fuse=False forbids it; the notes carry both times."""

from __future__ import annotations

import re

import pytest

import kernelstudio as ks
from kernelstudio.core.errors import ScheduleError
from kernelstudio.plan import choose
from tests.reference_kernels import TOL


def mm_layer_norm(m: int, n: int, k: int):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    return ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)


def mm_bias_gelu(m: int, n: int, k: int):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    b = ks.placeholder((n,), "float16", name="bias")
    return ks.gelu(ks.matmul(x, w, transpose_b=True) + b)


def total_us(s, target: str = "ascend910b2") -> float:
    return ks.simulate(ks.lower(s, target)).time_us


def times_in(note: str) -> list[float]:
    return [float(t.replace(",", "")) for t in re.findall(r"([\d,]+\.\d+) us", note)]


# without launch gaps the split pair's device time beats both fused plans of a small matmul + layer_norm (with
# the assumed 5 us per launch the fused kernel wins at every size measured: bench/bench_plans.py)
NO_GAPS = ks.hw.get("ascend910b2").with_overrides(launch_overhead_us=0.0)


def test_split_where_fusion_does_not_pay():
    out = mm_layer_norm(64, 1024, 1024)
    s = ks.create_schedule(out, target=NO_GAPS)
    assert [k.family for k in s.kernels] == ["cube", "vector"]
    (c,) = s.choices
    assert not c.fused and c.split_us < c.fused_us < c.other_us
    assert c.sync_all  # the better fused plan is sync_all; the row-block one is `other_us`
    for k in s.kernels:  # both kernels say why and give the three times
        (note,) = [n for n in k.notes if n.startswith("kept apart")]
        assert times_in(note) == [pytest.approx(round(t, 2)) for t in (c.split_us, c.fused_us, c.other_us)]
    forced = ks.create_schedule(out, fuse=True)
    assert [k.family for k in forced.kernels] == ["cube_vector"]
    # the numbers in the note are the simulator's for the three plans
    assert total_us(forced, NO_GAPS) == pytest.approx(c.other_us, rel=1e-6)
    forced[forced.kernels[0].name].sync_all(True)
    assert total_us(forced, NO_GAPS) == pytest.approx(c.fused_us, rel=1e-6)
    assert total_us(s, NO_GAPS) == pytest.approx(c.split_us, rel=1e-6)
    assert "kept apart" in s.explain()


def test_fuse_a_row_reduction_with_sync_all_where_it_pays():
    out = mm_layer_norm(64, 1024, 1024)
    s = ks.create_schedule(out)
    (c,) = s.choices
    assert c.fused and c.sync_all and c.fused_us < c.split_us and c.fused_us < c.other_us
    assert [(k.family, k.sync_all) for k in s.kernels] == [("cube_vector", True)]
    assert total_us(s) == pytest.approx(c.fused_us, rel=1e-6)


def test_keep_fusion_where_it_pays():
    out = mm_bias_gelu(64, 256, 512)
    s = ks.create_schedule(out)
    assert [k.family for k in s.kernels] == ["cube_vector"]
    (c,) = s.choices
    assert c.fused and c.fused_us <= c.split_us
    assert any(n.startswith("fusion pays on ascend910b2") for n in s.kernels[0].notes)
    prog = ks.lower(s, "ascend910b2")  # the note reaches the lowered kernel (the DAG view's tooltip)
    assert any("fusion pays" in n for n in prog.kernels[0].notes)


@pytest.mark.parametrize("build", [lambda: mm_layer_norm(64, 1024, 1024), lambda: mm_layer_norm(64, 256, 512),
                                   lambda: mm_bias_gelu(256, 2048, 4096)])
def test_default_plan_is_never_slower_than_either(build):
    out = build()
    d = total_us(ks.create_schedule(out))
    f = total_us(ks.create_schedule(out, fuse=True))
    roots = tuple(k.root for k in ks.create_schedule(out, fuse=True).kernels if k.family == "cube_vector")
    split = ks.Schedule(ks.create_schedule(out).graph.outputs, split=roots)
    assert d <= min(f, total_us(split)) * 1.0001


def test_fuse_false_and_true_are_not_second_guessed():
    out = mm_layer_norm(64, 1024, 1024)
    assert ks.create_schedule(out, fuse=True).choices == ()
    off = ks.create_schedule(out, fuse=False)
    assert off.fusion == "off" and off.choices == () and all(k.family != "cube_vector" for k in off.kernels)
    assert ks.create_schedule(out, fuse="auto").fusion == "auto"


def test_directive_for_the_fused_kernel_says_why_it_is_split():
    out = mm_layer_norm(64, 1024, 1024)
    s = ks.create_schedule(out, target=NO_GAPS)
    with pytest.raises(ScheduleError) as e:
        s[out].split("m", 64)
    msg = str(e.value)
    assert "has no axis 'm'" in msg and "kept apart" in msg and "fuse=True" in msg
    ks.create_schedule(out, fuse=True)[out].split("m", 64)  # the forced plan takes it


def test_decision_follows_the_target():
    out = mm_bias_gelu(64, 256, 512)
    s = ks.create_schedule(out, target="ascend910b1")
    assert s.choices[0].target == "ascend910b1"
    with choose.planning_target("ascend910b3"):
        assert ks.create_schedule(out).choices[0].target == "ascend910b3"
        assert ks.create_schedule(out, target="ascend910b4").choices[0].target == "ascend910b4"
    assert ks.create_schedule(out).choices[0].target == "ascend910b2"
    assert ks.build(out, "ascend910b1").schedule.choices[0].target == "ascend910b1"
    assert ks.create_schedule(out, target="ascend310p3").choices == ()  # no cube kernels lower there


def test_unknown_target_is_refused():
    with pytest.raises(ks.errors.TargetError, match="ascend910b2"):
        ks.create_schedule(mm_bias_gelu(64, 256, 512), target="ascend999")


def test_decisions_are_cached_by_structure(monkeypatch):
    first = ks.create_schedule(mm_layer_norm(64, 1024, 1024), target="ascend910b3")

    def boom(*a, **k):
        raise AssertionError("decided again")

    monkeypatch.setattr(choose, "_decide", boom)
    again = ks.create_schedule(mm_layer_norm(64, 1024, 1024), target="ascend910b3")  # new nodes, same graph
    assert [(k.family, k.sync_all) for k in again.kernels] == [(k.family, k.sync_all) for k in first.kernels]
    with pytest.raises(AssertionError, match="decided again"):
        ks.create_schedule(mm_layer_norm(64, 1024, 2048), target="ascend910b3")


def test_vector_only_graphs_cost_nothing(monkeypatch):
    monkeypatch.setattr(choose, "_decide", lambda *a, **k: pytest.fail("no cube_vector kernel to decide"))
    x = ks.placeholder((64, 256), "float16", name="x")
    assert ks.create_schedule(ks.relu(x) * 2.0).choices == ()


def test_split_plan_is_exact():
    import numpy as np

    out = mm_layer_norm(64, 1024, 1024)
    s = ks.create_schedule(out, target=NO_GAPS)
    assert len(s.kernels) == 2
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((64, 1024)).astype(np.float16),
             "w": (rng.standard_normal((1024, 1024)) * 0.03).astype(np.float16)}
    want = ks.evaluate(out, feeds, schedule=s)
    got = ks.run_tiled(ks.lower(s, "ascend910b2"), feeds)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=TOL["float16"],
                               atol=TOL["float16"])
