"""Golden values of every op against direct NumPy, and the golden model's precision rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kernelstudio.dsl as ks
from kernelstudio.core.dtypes import numpy_dtype, round_to
from kernelstudio.core.errors import InputError
from kernelstudio.ir import GOLDEN, Op, evaluate, random_inputs

RNG = np.random.default_rng(1234)


def ph(shape, dtype="float32", name="x"):
    return ks.placeholder(shape, dtype, name=name)


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def erf_ref(a):
    return np.vectorize(math.erf, otypes=[np.float64])(a.astype(np.float64))


def test_one_rule_per_op():
    assert set(GOLDEN) == set(Op)


UNARY = [
    (ks.neg, lambda a: -a),
    (ks.abs, np.abs),
    (ks.exp, np.exp),
    (ks.log, lambda a: np.log(np.abs(a) + 0.1)),
    (ks.sqrt, lambda a: np.sqrt(np.abs(a))),
    (ks.rsqrt, lambda a: 1 / np.sqrt(np.abs(a) + 0.1)),
    (ks.reciprocal, lambda a: 1 / a),
    (ks.square, lambda a: a * a),
    (ks.erf, erf_ref),
    (ks.tanh, np.tanh),
    (ks.sigmoid, lambda a: 1 / (1 + np.exp(-a.astype(np.float64)))),
    (ks.relu, lambda a: np.maximum(a, 0)),
    (ks.leaky_relu, lambda a: np.where(a >= 0, a, 0.01 * a)),
]


@pytest.mark.parametrize(("fn", "ref"), UNARY, ids=[f.__name__ for f, _ in UNARY])
def test_unary_float32(fn, ref):
    x = ph((5, 7))
    xv = normal(5, 7)
    # log/sqrt/rsqrt see positive inputs so that both sides compute finite values
    prep = {"log": lambda a: np.abs(a) + 0.1, "sqrt": np.abs, "rsqrt": lambda a: np.abs(a) + 0.1}
    if fn.__name__ in prep:
        feed = prep[fn.__name__](xv).astype(np.float32)
        expected = {"log": np.log, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a)}[fn.__name__](feed)
    else:
        feed, expected = xv, ref(xv)
    got = evaluate(fn(x), {"x": feed})
    assert got.dtype == np.float32 and got.shape == (5, 7)
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_unary_half_precision_is_float32_math_rounded(dtype):
    x = ph((64,), dtype)
    xv = round_to(dtype, normal(64))
    got = evaluate(ks.exp(x), {"x": xv})
    expected = round_to(dtype, np.exp(xv.astype(np.float32)))
    assert got.dtype == numpy_dtype(dtype)  # float16, or ml_dtypes.bfloat16
    np.testing.assert_array_equal(got, expected)


def test_sigmoid_extremes_are_finite():
    got = evaluate(ks.sigmoid(ph((4,))), {"x": np.array([-200, -20, 20, 200], np.float32)})
    assert np.all(np.isfinite(got)) and got[0] == 0 and got[3] == 1


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(ks.add, np.add), (ks.sub, np.subtract), (ks.mul, np.multiply), (ks.div, np.divide),
     (ks.maximum, np.maximum), (ks.minimum, np.minimum)],
)
def test_binary_broadcast(fn, ref):
    a, b = ph((3, 1, 4), name="a"), ph((5, 1), name="b")
    av, bv = normal(3, 1, 4), normal(5, 1) + 3
    got = evaluate(fn(a, b), {"a": av, "b": bv})
    assert got.shape == (3, 5, 4)
    np.testing.assert_allclose(got, ref(av, bv), rtol=1e-6)


def test_integer_math_wraps():
    a, b = ph((3,), "int8", "a"), ph((3,), "int8", "b")
    got = evaluate(a + b, {"a": np.array([100, -100, 5], np.int8), "b": np.array([100, -100, 6], np.int8)})
    assert got.dtype == np.int8 and got.tolist() == [-56, 56, 11]
    c = ph((2,), "int32", "c")
    got = evaluate(c * 4096, {"c": np.array([2**20, 3], np.int32)})
    assert got.dtype == np.int32 and got.tolist() == [0, 12288]
    assert evaluate(ks.abs(a), {"a": np.array([-128, -3, 4], np.int8)}).tolist() == [-128, 3, 4]


def test_int8_matmul_and_conv_accumulate_exactly_in_int32():
    a, b = ph((3, 300), "int8", "a"), ph((300, 2), "int8", "b")
    av = np.full((3, 300), -128, np.int8)
    av[1] = 127
    av[2, ::2] = 1
    bv = np.full((300, 2), -128, np.int8)
    got = evaluate(ks.matmul(a, b), {"a": av, "b": bv})
    assert got.dtype == np.int32 and got[:, 0].tolist() == [300 * 16384, -300 * 127 * 128, 150 * 16384 - 150 * 128]
    x, w = ph((1, 64, 3, 3), "int8", "x"), ph((2, 64, 3, 3), "int8", "w")
    y = evaluate(ks.conv2d(x, w), {"x": np.full((1, 64, 3, 3), -128, np.int8),
                                   "w": np.full((2, 64, 3, 3), -128, np.int8)})
    assert y.dtype == np.int32 and y.shape == (1, 2, 1, 1) and y.ravel().tolist() == [576 * 16384] * 2


def test_scaled_cast_is_float32_times_scale_rounded_once():
    i = ph((4,), "int32", "i")
    iv = np.array([2**24 + 1, -3, 1000, 7], np.int32)  # 2**24 + 1 rounds to 2**24 in float32
    got = evaluate(ks.cast(i, "float32", scale=0.1), {"i": iv})
    want = iv.astype(np.float32) * np.float32(0.1)
    assert got.dtype == np.float32 and got.tolist() == want.tolist() and got[0] == np.float32(2**24 * np.float32(0.1))
    h = evaluate(ks.cast(i, "float16", scale=1 / 3), {"i": iv})  # 2**24 / 3 overflows float16: inf
    with np.errstate(over="ignore"):
        want16 = (iv.astype(np.float32) * np.float32(1 / 3)).astype(np.float16)
    assert h.dtype == np.float16 and h.tolist() == want16.tolist() and h[0] == np.inf
    s = ph((4,), "float16", "s")
    sv = np.array([0.5, 0.25, -2, 1e-3], np.float16)
    v = evaluate(ks.cast(i, "bfloat16", scale=s), {"i": iv, "s": sv})
    assert v.tolist() == round_to("bfloat16", iv.astype(np.float32) * sv.astype(np.float32)).tolist()
    node = ks.cast(i, "float16", scale=0.1).node
    assert node.op is Op.CAST and node.attr("scale") == float(np.float32(0.1))


def test_mixed_dtypes_promote():
    a, b = ph((3,), "int8", "a"), ph((3,), "float16", "b")
    got = evaluate(a * b, {"a": np.array([1, 2, 3]), "b": np.array([0.5, 0.25, 1.5])})
    assert got.dtype == np.float16 and got.tolist() == [0.5, 0.5, 4.5]


def test_cast_semantics():
    x = ph((6,))
    xv = np.array([1.9, -1.9, 300.7, -0.5, 1.00048828125, 65519.0], np.float32)
    assert evaluate(ks.cast(x, "int32"), {"x": xv}).tolist() == [1, -1, 300, 0, 1, 65519]
    assert evaluate(ks.cast(x, "int8"), {"x": xv}).tolist() == [1, -1, 44, 0, 1, -17]  # wraps like C
    h = evaluate(ks.cast(x, "float16"), {"x": xv})
    assert h.dtype == np.float16 and h[4] == 1.0 and h[5] == 65504
    i = ph((2,), "int32", "i")
    assert evaluate(ks.cast(i, "bfloat16"), {"i": np.array([257, 7])}).tolist() == [256.0, 7.0]


def test_bfloat16_rounding():
    x = ph((4,), "bfloat16")
    xv = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-7, 3.0], np.float64)
    got = evaluate(x, {"x": xv})  # inputs are rounded to the placeholder dtype (nearest even)
    assert got.dtype == numpy_dtype("bfloat16") and got.tolist() == [1.0, 1.015625, 1.0078125, 3.0]
    got = evaluate(x * 1.00390625, {"x": np.full(4, 1.0)})  # the scalar itself rounds to 1.0 in bf16
    assert got.tolist() == [1.0] * 4


def test_every_node_rounds_to_its_dtype():
    x = ph((1,), "float16")
    xv = np.array([1000.0])
    # in float16, 1000 + 0.3 -> 1000.5 (ulp 0.5), so (x + 0.3) - x is 0.5, not 0.3
    assert evaluate((x + 0.3) - x, {"x": xv}).tolist() == [0.5]
    y = ph((1,), "float32")
    np.testing.assert_allclose(evaluate((y + 0.3) - y, {"x": xv}), [0.3], rtol=1e-4)
    c = evaluate(x * 0 + 0.1, {"x": np.zeros(1)})
    assert c[0] == np.float16(0.1) and float(c[0]) == 0.0999755859375


def test_where():
    c, a = ph((2, 3), "int8", "c"), ph((3,), name="a")
    cv, av = np.array([[1, 0, -2], [0, 0, 5]], np.int8), normal(3)
    got = evaluate(ks.where(c, a, -1.0), {"c": cv, "a": av})
    np.testing.assert_array_equal(got, np.where(cv != 0, av, np.float32(-1)))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(axis, keepdims):
    x = ph((3, 4, 5))
    xv = normal(3, 4, 5)
    for fn, ref in ((ks.reduce_sum, np.sum), (ks.reduce_mean, np.mean), (ks.reduce_max, np.max)):
        got = evaluate(fn(x, axis, keepdims=keepdims), {"x": xv})
        np.testing.assert_allclose(got, ref(xv.astype(np.float64), axis=axis, keepdims=keepdims),
                                   rtol=1e-5, atol=1e-6)


def test_integer_reduce_sum_wraps():
    x = ph((3,), "int8")
    got = evaluate(ks.reduce_sum(x), {"x": np.array([100, 100, 100])})
    assert got.shape == () and got.dtype == np.int8 and got.tolist() == 44


@pytest.mark.parametrize(("ta", "tb"), [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_transposes_and_batch(ta, tb):
    sa = (2, 1, 6, 5) if ta else (2, 1, 5, 6)
    sb = (3, 4, 6) if tb else (3, 6, 4)
    a, b = ph(sa, name="a"), ph(sb, name="b")
    av, bv = normal(*sa), normal(*sb)
    got = evaluate(ks.matmul(a, b, transpose_a=ta, transpose_b=tb), {"a": av, "b": bv})
    ref = np.matmul(np.swapaxes(av, -1, -2) if ta else av, np.swapaxes(bv, -1, -2) if tb else bv)
    assert got.shape == (2, 3, 5, 4)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_matmul_accumulates_in_float32():
    a, b = ph((1, 4096), "float16", "a"), ph((4096, 1), "float16", "b")
    # a float16 accumulator would stall at 2048 (2048 + 1 rounds back to 2048)
    got = evaluate(a @ b, {"a": np.ones((1, 4096)), "b": np.ones((4096, 1))})
    assert got.dtype == np.float16 and got[0, 0] == 4096


def conv_loop(x, w, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    pt, pb, pl, pr = pad
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    ho, wo = (xp.shape[2] - kh) // stride[0] + 1, (xp.shape[3] - kw) // stride[1] + 1
    out = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


@pytest.mark.parametrize(
    ("xs", "ws", "stride", "padding"),
    [((2, 3, 7, 6), (4, 3, 3, 3), 1, 0), ((1, 2, 8, 9), (3, 2, 3, 2), 2, "SAME"),
     ((1, 2, 7, 7), (2, 2, 3, 3), (2, 3), (1, 0, 2, 1)), ((2, 1, 5, 5), (2, 1, 5, 5), 1, "VALID"),
     ((1, 3, 6, 6), (2, 3, 1, 1), 2, 1)],
)
def test_conv2d_against_loop(xs, ws, stride, padding):
    x, w = ph(xs, name="x"), ph(ws, name="w")
    t = ks.conv2d(x, w, stride=stride, padding=padding)
    xv, wv = normal(*xs), normal(*ws)
    got = evaluate(t, {"x": xv, "w": wv})
    ref = conv_loop(xv.astype(np.float64), wv.astype(np.float64), t.node.attr("stride"),
                    t.node.attr("padding"))
    assert got.shape == ref.shape == t.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_layout_ops():
    x = ph((2, 3, 4))
    xv = normal(2, 3, 4)
    np.testing.assert_array_equal(evaluate(ks.reshape(x, (4, -1)), {"x": xv}), xv.reshape(4, 6))
    np.testing.assert_array_equal(evaluate(ks.transpose(x, (1, 2, 0)), {"x": xv}), xv.transpose(1, 2, 0))
    np.testing.assert_array_equal(evaluate(ks.transpose(x), {"x": xv}), xv.T)
    y = ph((3, 1), name="y")
    yv = normal(3, 1)
    np.testing.assert_array_equal(evaluate(ks.broadcast_to(y, (2, 3, 5)), {"y": yv}),
                                  np.broadcast_to(yv, (2, 3, 5)))


def test_topk_descending_with_ties_lower_index_first():
    x = ph((2, 6), "float16")
    xv = np.array([[1, 3, 3, 2, 3, 0], [5, 5, 5, 5, 5, 5]], np.float16)
    v, i = ks.topk(x, 4)
    gv, gi = evaluate((v, i), {"x": xv})
    assert gi.dtype == np.int32 and gv.dtype == np.float16
    assert gi.tolist() == [[1, 2, 4, 3], [0, 1, 2, 3]]
    assert gv.tolist() == [[3, 3, 3, 2], [5, 5, 5, 5]]
    vi = evaluate(list(ks.topk(x, 1, axis=0)), {"x": xv})
    assert isinstance(vi, tuple) and vi[0].tolist() == [[5] * 6] and vi[1].tolist() == [[1, 1, 1, 1, 1, 1]]


def test_topk_integers():
    x = ph((5,), "int8")
    v, i = ks.topk(x, 3)
    got = evaluate((v, i), {"x": np.array([-128, 127, 0, 127, -1])})
    assert got[0].tolist() == [127, 127, 0] and got[1].tolist() == [1, 3, 2]


def test_gather():
    x, idx = ph((5, 3), name="x"), ph((2, 2), "int32", "idx")
    xv, iv = normal(5, 3), np.array([[4, 0], [1, 1]], np.int32)
    np.testing.assert_array_equal(evaluate(ks.gather(x, idx), {"x": xv, "idx": iv}), np.take(xv, iv, 0))
    got = evaluate(ks.gather(x, ks.cast(idx, "int8"), axis=1), {"x": xv, "idx": iv % 3})
    np.testing.assert_array_equal(got, np.take(xv, iv % 3, axis=1))
    with pytest.raises(InputError, match=r"gather: index 5 is out of range \[0, 5\) for axis 0"):
        evaluate(ks.gather(x, idx), {"x": xv, "idx": np.array([[0, 5], [1, 1]])})
    with pytest.raises(InputError, match="index -1"):
        evaluate(ks.gather(x, idx), {"x": xv, "idx": np.array([[0, -1], [1, 1]])})


def test_moe_routing_topk_feeds_gather():
    logits, table = ph((4, 8), name="logits"), ph((8, 3), name="table")
    _, idx = ks.topk(logits, 2)
    out = ks.gather(table, idx)
    inputs = random_inputs(out, seed=3)
    lv, tv = inputs["logits"], inputs["table"]
    ref = tv[np.argsort(-lv, axis=1, kind="stable")[:, :2]]
    np.testing.assert_array_equal(evaluate(out, inputs), ref)


def test_composites_against_numpy():
    x, g, b = ph((6, 32), name="x"), ph((32,), name="g"), ph((32,), name="b")
    xv, gv, bv = normal(6, 32) * 3, normal(32), normal(32)
    feed = {"x": xv, "g": gv, "b": bv}
    x64 = xv.astype(np.float64)
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    np.testing.assert_allclose(evaluate(ks.softmax(x), {"x": xv}), e / e.sum(-1, keepdims=True), rtol=1e-5)
    mu, var = x64.mean(-1, keepdims=True), x64.var(-1, keepdims=True)
    ln = (x64 - mu) / np.sqrt(var + 1e-5) * gv + bv
    np.testing.assert_allclose(evaluate(ks.layer_norm(x, g, b), feed), ln, rtol=1e-4, atol=1e-5)
    rms = x64 / np.sqrt((x64**2).mean(-1, keepdims=True) + 1e-6) * gv
    np.testing.assert_allclose(evaluate(ks.rms_norm(x, g), {"x": xv, "g": gv}), rms, rtol=1e-4, atol=1e-5)
    gelu = x64 * 0.5 * (1 + erf_ref(x64 / np.sqrt(2)))
    np.testing.assert_allclose(evaluate(ks.gelu(x), {"x": xv}), gelu, rtol=1e-5, atol=1e-6)
    gt = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64**3)))
    np.testing.assert_allclose(evaluate(ks.gelu(x, approximate="tanh"), {"x": xv}), gt, rtol=1e-5, atol=1e-6)
    silu = x64 / (1 + np.exp(-x64))
    np.testing.assert_allclose(evaluate(ks.silu(x), {"x": xv}), silu, rtol=1e-5, atol=1e-6)


# --- inputs ----------------------------------------------------------------------------------------


def test_input_validation():
    x, w = ph((2, 3), "float16", "x"), ph((3, 4), "bfloat16", "w")
    y = x @ w
    with pytest.raises(InputError) as e:
        evaluate(y, {"x": np.zeros((2, 3)), "v": 1})
    msg = str(e.value)
    assert "missing ['w']" in msg and "unexpected ['v']" in msg
    assert "x[2,3] float16" in msg and "w[3,4] bfloat16" in msg
    with pytest.raises(InputError, match=r"input 'w' has shape \[4,3\] but placeholder w is \[3,4\] bf"):
        evaluate(y, {"x": np.zeros((2, 3)), "w": np.zeros((4, 3))})
    with pytest.raises(InputError, match="input 'x' has dtype <U1; expected numbers for float16"):
        evaluate(y, {"x": np.full((2, 3), "a"), "w": np.zeros((3, 4))})
    with pytest.raises(InputError, match="mapping name -> array"):
        evaluate(y, [np.zeros((2, 3))])
    with pytest.raises(InputError, match="outputs must be Tensors"):
        evaluate("y", {})
    with pytest.raises(InputError, match="outputs is empty"):
        evaluate([], {})


def test_inputs_are_rounded_to_placeholder_dtype():
    x = ph((3,), "float16")
    got = evaluate(x, {"x": [0.1, 70000.0, 1 / 3]})
    assert got.dtype == np.float16 and got[0] == np.float16(0.1) and np.isinf(got[1])
    i = ph((2,), "int8", "i")
    assert evaluate(i, {"i": np.array([1.7, 130])}).tolist() == [1, -126]


def test_duplicate_placeholder_names_are_rejected():
    a, b = ph((2,), name="x"), ph((3,), name="x")
    with pytest.raises(InputError, match=r"both named 'x' \(\[2\] float32 and \[3\] float32\)"):
        evaluate(ks.reduce_sum(a) + ks.reduce_sum(b), {"x": np.zeros(2)})
    with pytest.raises(InputError, match="unique name"):
        random_inputs(ks.reduce_sum(a) + ks.reduce_sum(b))


def test_unnamed_placeholders_are_fed_by_graph_name():
    a, b = ks.placeholder((2,), "float32"), ks.placeholder((2,), "float32")
    inputs = random_inputs(a - b)
    assert sorted(inputs) == ["input", "input_1"]
    np.testing.assert_array_equal(evaluate(a - b, inputs), inputs["input"] - inputs["input_1"])


# --- random inputs ------------------------------------------------------------------------------


def test_random_inputs_deterministic_and_typed():
    x, i8, i32 = ph((8, 16), "bfloat16", "x"), ph((50,), "int8", "i8"), ph((50,), "int32", "i32")
    out = ks.reduce_sum(x) + ks.cast(ks.reduce_sum(i8), "bfloat16") + ks.cast(ks.reduce_sum(i32), "bfloat16")
    r1, r2, r3 = random_inputs(out, seed=0), random_inputs(out, seed=0), random_inputs(out, seed=1)
    assert sorted(r1) == ["i32", "i8", "x"]
    for k in r1:
        np.testing.assert_array_equal(r1[k], r2[k])
    assert not np.array_equal(r1["x"], r3["x"])
    assert r1["x"].dtype == numpy_dtype("bfloat16")  # ml_dtypes.bfloat16
    assert r1["i8"].dtype == np.int8 and r1["i8"].min() >= -4 and r1["i8"].max() <= 4
    assert r1["i32"].dtype == np.int32 and np.abs(r1["i32"]).max() <= 8
    # a placeholder's values depend on the seed and its name, not on the rest of the graph
    np.testing.assert_array_equal(random_inputs(ks.exp(x), seed=0)["x"], r1["x"])


def test_random_inputs_roles():
    x, w, t = ph((64, 1024), name="x"), ph((1024, 256), name="w"), ph((100, 8), name="table")
    idx, m, d = ph((500,), "int32", "idx"), ph((64, 256), "int8", "m"), ph((64, 256), name="d")
    h = ks.where(m, x @ w, 0.0) / d + ks.log(ks.cast(d, "float16"))
    out = (h, ks.gather(t, idx))
    r = random_inputs(out, seed=7)
    assert 0.8 < r["x"].std() < 1.2
    assert 0.8 < r["w"].std() * math.sqrt(1024) < 1.2  # weights scaled by 1/sqrt(K)
    assert r["idx"].min() >= 0 and r["idx"].max() < 100 and len(np.unique(r["idx"])) > 50
    assert set(np.unique(r["m"]).tolist()) == {0, 1}
    assert r["d"].min() >= 0.5
    assert np.all(np.isfinite(evaluate(out, r)[0]))


def test_random_inputs_conv_weights_scaled_and_seed_checked():
    x, w = ph((1, 16, 8, 8), name="x"), ph((8, 16, 3, 3), name="w")
    r = random_inputs(ks.conv2d(x, w, padding="SAME"))
    assert 0.7 < r["w"].std() * 12 < 1.3  # K = 16 * 3 * 3 = 144
    for bad in (-1, 1.5, "0", True):
        with pytest.raises(InputError, match="seed must be an int >= 0"):
            random_inputs(x, seed=bad)
