"""Python operators on DSL tensors: the ones with a DSL op build it, the others say which op to use."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import KernelStudioError, ScheduleError, UnsupportedError
from kernelstudio.ir.ops import Op


def ph(shape, dtype="float16", name="x"):
    return ks.placeholder(shape, dtype, name=name)


def check(info, *fragments):
    assert isinstance(info.value, KernelStudioError)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"


RNG = np.random.default_rng(0)
XV = RNG.standard_normal((4, 8)).astype(np.float16)
YV = RNG.standard_normal((4, 8)).astype(np.float16)


# --- comparisons -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("expr", "sym", "rewrite"), [
    (lambda x, y: x > 0, ">", "where(relu(x), a, b)"),
    (lambda x, y: 0 < x, ">", "where(relu(x), a, b)"),
    (lambda x, y: x < 0, "<", "where(relu(-x), a, b)"),
    (lambda x, y: x >= y, ">=", "where(relu(y - x), b, a)"),
    (lambda x, y: x < y, "<", "where(relu(y - x), a, b)"),
    (lambda x, y: x <= y, "<=", "where(relu(x - y), b, a)"),
    (lambda x, y: x > 1.5, ">", "where(relu(x - 1.5), a, b)"),
])
def test_comparison_names_the_where_rewrite(expr, sym, rewrite):
    x, y = ph((4, 8)), ph((4, 8), name="y")
    with pytest.raises(UnsupportedError) as info:
        expr(x, y)
    check(info, "x[4,8] float16", f" {sym} ", "no comparison op", rewrite)


@pytest.mark.parametrize(("cond", "swap", "ref"), [
    (lambda x, y: ks.relu(x - y), False, lambda x, y: x > y),
    (lambda x, y: ks.relu(y - x), False, lambda x, y: x < y),
    (lambda x, y: ks.relu(y - x), True, lambda x, y: x >= y),
    (lambda x, y: ks.relu(x - y), True, lambda x, y: x <= y),
    (lambda x, y: ks.relu(x) + 0 * y, False, lambda x, y: x > 0),
])
def test_the_suggested_rewrite_computes_the_comparison(cond, swap, ref):
    x, y = ph((4, 8)), ph((4, 8), name="y")
    a, b = (1.0, -1.0) if not swap else (-1.0, 1.0)
    out = ks.evaluate(ks.where(cond(x, y), a, b), {"x": XV, "y": YV})
    np.testing.assert_array_equal(out, np.where(ref(XV, YV), 1.0, -1.0).astype(np.float16))


def test_tensors_keep_identity_equality_and_hashing():
    x, y = ph((4, 8)), ph((4, 8), name="y")
    d = {x: "x", y: "y"}
    assert d[x] == "x" and d[y] == "y"
    assert x == x and x != y and x in [y, x]


# --- powers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("p", "op", "ref"), [
    (2, Op.SQUARE, lambda v: v * v),
    (2.0, Op.SQUARE, lambda v: v * v),
    (np.int64(2), Op.SQUARE, lambda v: v * v),
    (0.5, Op.SQRT, np.sqrt),
    (-0.5, Op.RSQRT, lambda v: 1 / np.sqrt(v)),
    (-1, Op.RECIPROCAL, lambda v: 1 / v),
])
def test_power_maps_to_its_op(p, op, ref):
    x = ph((4, 8))
    y = x ** p
    assert y.op is op and y.shape == (4, 8) and y.dtype == "float16"
    xv = np.abs(XV) + np.float16(0.5)
    out = ks.evaluate(y, {"x": xv})
    np.testing.assert_allclose(out.astype(np.float32), ref(xv.astype(np.float32)), rtol=2e-3)


@pytest.mark.parametrize("p", [3, 1.5, 0, True])
def test_other_powers_name_mul_and_exp(p):
    x = ph((4, 8))
    with pytest.raises(UnsupportedError) as info:
        x ** p  # noqa: B018
    check(info, "x[4,8] float16 **", "** 2 (square)", "x * x * x", "exp(log(x) * p)")


def test_tensor_exponent_is_refused():
    x, y = ph((4, 8)), ph((4, 8), name="y")
    with pytest.raises(UnsupportedError) as info:
        x ** y  # noqa: B018
    check(info, "x[4,8] float16 ** y")
    with pytest.raises(UnsupportedError) as info:
        2 ** x  # noqa: B018
    check(info, "2 ** x[4,8] float16", "exp(x * math.log(c))")


# --- .T, indexing, iteration ---------------------------------------------------------------------------


def test_T_is_transpose():
    x = ph((4, 8))
    t = x.T
    assert t.op is Op.TRANSPOSE and t.shape == (8, 4)
    np.testing.assert_array_equal(ks.evaluate(t, {"x": XV}), XV.T)
    assert ks.placeholder((8,), "float16", name="v").T.shape == (8,)
    z = ph((2, 3, 4), name="z").T
    assert z.shape == (4, 3, 2)


@pytest.mark.parametrize("key", [0, slice(1, 3), (slice(None), 1), Ellipsis])
def test_indexing_names_gather_and_reshape(key):
    x = ph((4, 8))
    with pytest.raises(UnsupportedError) as info:
        x[key]  # noqa: B018
    check(info, "x[4,8] float16[", "cannot be indexed or sliced", "gather(x, indices, axis=0)", "reshape")


def test_tensors_are_not_iterable():
    x = ph((4, 8))
    with pytest.raises(UnsupportedError) as info:
        list(x)
    check(info, "x[4,8] float16 is not iterable", "ks.evaluate")
    with pytest.raises(UnsupportedError):
        a, b = x  # noqa: F841
    with pytest.raises(UnsupportedError):
        for _ in x:
            pass


# --- create_schedule on a bare input ----------------------------------------------------------------


def test_create_schedule_of_a_placeholder_has_nothing_to_schedule():
    x = ph((4, 8))
    with pytest.raises(ScheduleError) as info:
        ks.create_schedule(x)
    check(info, "nothing to schedule", "x[4, 8] float16 (placeholder)", "ks.relu(x)")
    with pytest.raises(ScheduleError, match="nothing to schedule"):
        ks.create_schedule([x, ph((8,), name="v")])


def test_create_schedule_with_a_placeholder_among_computed_outputs_still_works():
    x = ph((4, 8))
    s = ks.create_schedule([x, x + 1])
    assert len(s.kernels) == 1


def test_keep_out_given_one_tensor_asks_for_a_list():
    x = ph((4, 8))
    y = ks.relu(x)
    with pytest.raises(ScheduleError) as info:
        ks.create_schedule(y + 1, keep_out=y)
    check(info, "keep_out must be a list of tensors", "keep_out=[t]", "got Tensor")
