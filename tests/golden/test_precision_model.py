"""The precision model. `evaluate(out, inputs)` rounds every node to its dtype (the framework
reference); `evaluate(out, inputs, schedule=s)` follows the plan: float values stay float32 inside
a fused kernel and are rounded where the plan stores them (kernel outputs), casts them, or where the
cube unit writes its result; a mean is a float32 sum times float32(1/count), as the kernels do it.
(tests/property/test_random_pipeline.py checks the same on ~230 random full-row vector programs.)

Which comparison each test makes:
- plan golden == run_tiled, bit for bit, for elementwise arithmetic, casts, softmax, layer_norm;
- plan golden vs run_tiled within one unit in the last place of the output dtype where a matmul or
  conv accumulates over k tiles in another order than np.matmul;
- plan golden == run_tiled == twin, bit for bit, for add/sub/mul/div/sqrt/casts; the twin within one
  unit in the last place (at the output's scale) where a transcendental (exp) enters, and within four
  float32 units where a float32 ReduceSum (which adds in its own order) feeds a normalisation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from tests.reference_kernels import REFERENCE

ULP = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23}


def issue_example():
    a = ks.placeholder((64, 64), "bfloat16", name="a")
    b = ks.placeholder((64, 64), "bfloat16", name="b")
    c = ks.placeholder((64, 64), "float32", name="c")
    return (a - b) + c


def arithmetic():
    x = ks.placeholder((37, 70), "float16", name="x")
    y = ks.placeholder((70,), "float16", name="y")
    return ks.sqrt(ks.abs(x * y) + 1.0) / (x + 3.0) - ks.cast(ks.cast(x, "float32") * 2, "float16")


def bf16_chain():
    x = ks.placeholder((20, 48), "bfloat16", name="x")
    g = ks.placeholder((20, 1), "bfloat16", name="g")
    return ks.cast((x * g - 0.5) / (ks.abs(x) + 1.0), "float32")


EXACT = {
    "issue_bf16_minus_plus_f32": issue_example,
    "arithmetic_f16": arithmetic,
    "bf16_chain": bf16_chain,
    "softmax_f16": REFERENCE["softmax"],
    "softmax_f32": lambda: REFERENCE["softmax"](dtype="float32"),
    "layer_norm_f32": REFERENCE["layer_norm"],
    "elementwise_chain": REFERENCE["elementwise_chain"],
}
CUBE = {"mla_prolog_lite": REFERENCE["mla_prolog_lite"], "conv_bias_relu": REFERENCE["conv_bias_relu"]}


def _run(make, fuse=True):
    out = make()
    s = ks.create_schedule(out, fuse=fuse)
    prog = ks.lower(s)
    inputs = ks.random_inputs(out)
    return out, s, prog, inputs


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", sorted(EXACT))
def test_plan_golden_equals_run_tiled_bit_for_bit(name: str, fuse: bool) -> None:
    out, s, prog, inputs = _run(EXACT[name], fuse)
    np.testing.assert_array_equal(ks.evaluate(out, inputs, schedule=s), ks.run_tiled(prog, inputs))


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", sorted(CUBE))
def test_plan_golden_within_one_ulp_where_k_tiles_accumulate(name: str, fuse: bool) -> None:
    out, s, prog, inputs = _run(CUBE[name], fuse)
    got = np.asarray(ks.run_tiled(prog, inputs), np.float32)
    want = np.asarray(ks.evaluate(out, inputs, schedule=s), np.float32)
    # one float16 ulp at the output's scale (a relu near 0 may keep a tiny value the other zeroes)
    ulp = float(np.spacing(np.float16(np.abs(want).max())))
    assert np.abs(got - want).max() <= ulp
    assert np.mean(got == want) > 0.5


def test_the_issue_example_differs_only_under_per_node_rounding() -> None:
    out, s, prog, inputs = _run(issue_example)
    tiled = ks.run_tiled(prog, inputs)
    per_node = ks.evaluate(out, inputs)
    assert np.sum(per_node != tiled) > 1000  # the framework reference rounds a - b to bfloat16
    assert np.abs(per_node - tiled).max() <= 2.0**-6
    np.testing.assert_array_equal(ks.evaluate(out, inputs, schedule=s), tiled)


def test_plan_golden_refuses_a_schedule_of_another_graph() -> None:
    out = arithmetic()
    other = ks.create_schedule(issue_example())
    with pytest.raises(ks.InputError, match="the schedule was made for another graph"):
        ks.evaluate(out, ks.random_inputs(out), schedule=other)
    with pytest.raises(ks.StageError, match="evaluate\\(schedule=...\\) takes a Schedule"):
        ks.evaluate(out, ks.random_inputs(out), schedule="s")


@pytest.mark.parametrize("name,exact", [
    ("issue_bf16_minus_plus_f32", True), ("arithmetic_f16", True), ("bf16_chain", True),
    ("softmax_f16", False), ("layer_norm_f32", False), ("elementwise_chain", False),
])
def test_three_way(name: str, exact: bool, twin_cache: Path) -> None:
    out, s, prog, inputs = _run(EXACT[name])
    golden = ks.evaluate(out, inputs, schedule=s)
    tiled = ks.run_tiled(prog, inputs)
    twin = ks.twin.run(ks.codegen(prog), inputs, cache_dir=twin_cache)  # one output: one array
    np.testing.assert_array_equal(golden, tiled)
    if exact:
        np.testing.assert_array_equal(twin, tiled)
    else:  # a unit in the last place at the output's scale: exp's implementation, float32 ReduceSum's order
        u = ULP[out.dtype]
        scale = float(np.abs(np.asarray(tiled, np.float32)).max())
        atol = u * scale * (4 if out.dtype == "float32" else 1)
        np.testing.assert_allclose(np.asarray(twin, np.float32), np.asarray(tiled, np.float32), rtol=u, atol=atol)
