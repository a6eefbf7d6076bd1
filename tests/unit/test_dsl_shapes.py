"""Shape and dtype rules of every DSL op, naming, composites, scalar promotion, operators."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio.dsl as ks
from kernelstudio.dsl.shapes import promote
from kernelstudio.ir import Graph, Op


def ph(shape, dtype="float16", name=None):
    return ks.placeholder(shape, dtype, name=name)


def test_placeholder_basics():
    x = ph((64, 256), name="x")
    assert (x.shape, x.dtype, x.ndim, x.name, x.op) == ((64, 256), "float16", 2, "x", Op.PLACEHOLDER)
    assert ph(7, "int8").shape == (7,)
    assert ph((), "float32").shape == ()
    assert ks.placeholder((2, np.int64(3)), np.float32).dtype == "float32"
    assert "x" in repr(x) and "[64,256]" in repr(x) and "float16" in repr(x)


def test_unnamed_placeholders_stay_distinct_and_get_graph_names():
    a, b = ph((4,)), ph((4,))
    g = Graph((a + b).node)
    assert len(g.placeholders) == 2
    assert [g.name(p) for p in g.placeholders] == ["input", "input_1"]
    named = ph((4,), name="x")
    assert named.node == ph((4,), name="x").node  # same name, shape, dtype: the same input


@pytest.mark.parametrize(
    ("a", "b", "out"),
    [
        ("float16", "float16", "float16"),
        ("float16", "float32", "float32"),
        ("bfloat16", "float32", "float32"),
        ("float16", "bfloat16", "float32"),
        ("int8", "float16", "float16"),
        ("bfloat16", "int32", "bfloat16"),
        ("int8", "int32", "int32"),
        ("int32", "int32", "int32"),
    ],
)
def test_dtype_promotion(a, b, out):
    assert promote(a, b) == out == promote(b, a)
    t = ks.add(ph((2, 3), a), ph((3,), b))
    assert t.dtype == out
    for inp in t.node.inputs:  # explicit casts: elementwise nodes see inputs of their own dtype
        assert inp.dtype == out
    assert sum(i.op is Op.CAST for i in t.node.inputs) == (a != out) + (b != out)


@pytest.mark.parametrize(
    ("sa", "sb", "out"),
    [((64, 512), (512,), (64, 512)), ((4, 1, 3), (5, 1), (4, 5, 3)), ((), (2, 2), (2, 2)),
     ((1,), (1,), (1,))],
)
def test_binary_broadcasting(sa, sb, out):
    for fn in (ks.add, ks.sub, ks.mul, ks.div, ks.maximum, ks.minimum):
        t = fn(ph(sa), ph(sb))
        assert t.shape == out and t.dtype == "float16"
        assert t.op.value == fn.__name__


@pytest.mark.parametrize(
    "fn", [ks.neg, ks.abs, ks.exp, ks.log, ks.sqrt, ks.rsqrt, ks.reciprocal, ks.square, ks.erf,
           ks.tanh, ks.sigmoid, ks.relu, ks.leaky_relu]
)
def test_unary_keeps_shape_and_dtype(fn):
    t = fn(ph((3, 5), "bfloat16"))
    assert (t.shape, t.dtype, t.op.value) == ((3, 5), "bfloat16", fn.__name__)


@pytest.mark.parametrize("fn", [ks.neg, ks.abs, ks.square, ks.relu])
def test_integer_unary(fn):
    assert fn(ph((3,), "int8")).dtype == "int8"


def test_leaky_relu_alpha_attr_and_cast():
    assert ks.leaky_relu(ph((2,)), alpha=0.2).node.attr("alpha") == 0.2
    assert ks.leaky_relu(ph((2,)), alpha=1).node.attr("alpha") == 1.0
    x = ph((2, 3), "float32")
    c = ks.cast(x, "int8")
    assert (c.shape, c.dtype, c.op) == ((2, 3), "int8", Op.CAST)
    assert ks.cast(x, "float32") is x
    assert ks.cast(x, "float32", name="copy").op is Op.CAST


def test_where_shapes_and_dtypes():
    cond = ph((4, 1), "int8")
    t = ks.where(cond, ph((1, 5), "float16"), ph((5,), "float32"))
    assert (t.shape, t.dtype) == ((4, 5), "float32")
    assert t.node.inputs[0] is cond.node
    t = ks.where(cond, ph((4, 5), "float16"), -1e4)
    assert t.dtype == "float16" and t.node.inputs[2].attr("value") == -1e4
    assert ks.where(cond, 1, 0).dtype == "int8"
    assert ks.where(cond, 1.0, 0).dtype == "float32"
    assert ks.where(ph((3,), "float16"), 1.0, 0.0).dtype == "float16"
    assert ks.where(cond, ph((4, 5)), -float("inf")).shape == (4, 5)


@pytest.mark.parametrize(
    ("axis", "keepdims", "shape", "axes"),
    [(None, False, (), (0, 1, 2)), (-1, False, (2, 3), (2,)), (-1, True, (2, 3, 1), (2,)),
     ((0, -1), False, (3,), (0, 2)), ([2, 0], True, (1, 3, 1), (0, 2)), (1, False, (2, 4), (1,))],
)
def test_reductions(axis, keepdims, shape, axes):
    x = ph((2, 3, 4))
    for fn in (ks.reduce_sum, ks.reduce_mean, ks.reduce_max):
        t = fn(x, axis, keepdims=keepdims)
        assert t.shape == shape and t.dtype == "float16"
        assert t.node.attr("axes") == axes and t.node.attr("keepdims") is keepdims
    assert ks.reduce_sum(ph((2, 3), "int32"), 0).dtype == "int32"


@pytest.mark.parametrize(
    ("sa", "sb", "ta", "tb", "out"),
    [((64, 256), (512, 256), False, True, (64, 512)), ((64, 256), (256, 512), False, False, (64, 512)),
     ((256, 64), (256, 512), True, False, (64, 512)), ((3, 8, 4), (4, 5), False, False, (3, 8, 5)),
     ((2, 1, 8, 4), (3, 4, 5), False, False, (2, 3, 8, 5)), ((5, 4, 8), (5, 6, 4), True, True, (5, 8, 6))],
)
def test_matmul_shapes(sa, sb, ta, tb, out):
    t = ks.matmul(ph(sa), ph(sb), transpose_a=ta, transpose_b=tb)
    assert t.shape == out and t.dtype == "float16"
    assert (t.node.attr("transpose_a"), t.node.attr("transpose_b")) == (ta, tb)


def test_matmul_dtype_and_operator():
    a, b = ph((4, 8), "float16"), ph((8, 2), "float32")
    t = a @ b
    assert t.op is Op.MATMUL and t.dtype == "float32"
    assert t.node.inputs[0].op is Op.CAST
    assert ks.matmul(ph((2, 3), "int8"), ph((3, 2), "int8")).dtype == "int32"  # int32 accumulation
    assert ks.matmul(ph((2, 3), "float16"), ph((3, 2), "float16")).dtype == "float16"


@pytest.mark.parametrize(("a", "b", "out", "want"), [
    ("int8", "int8", None, "int32"),
    ("int8", "int8", "int32", "int32"),
    ("float16", "float16", None, "float16"),
    ("float16", "float16", "float32", "float32"),
    ("bfloat16", "bfloat16", "float16", "float16"),
    ("float32", "float32", None, "float32"),
    ("int8", "float16", None, "float16"),  # int8 promoted to float16: a float matmul
])
def test_cube_out_dtype_rules(a, b, out, want):
    assert ks.matmul(ph((4, 8), a), ph((8, 2), b), out_dtype=out).dtype == want
    conv = ks.conv2d(ph((1, 2, 5, 5), a), ph((3, 2, 3, 3), b), out_dtype=out)
    assert conv.dtype == want and conv.shape == (1, 3, 3, 3)


@pytest.mark.parametrize(
    ("xs", "ws", "stride", "padding", "out", "pad"),
    [
        ((1, 3, 8, 8), (4, 3, 3, 3), 1, 0, (1, 4, 6, 6), (0, 0, 0, 0)),
        ((2, 3, 8, 8), (4, 3, 3, 3), 1, 1, (2, 4, 8, 8), (1, 1, 1, 1)),
        ((1, 3, 8, 9), (4, 3, 3, 3), (2, 1), (1, 0), (1, 4, 4, 7), (1, 1, 0, 0)),
        ((1, 3, 7, 7), (2, 3, 3, 3), 2, "SAME", (1, 2, 4, 4), (1, 1, 1, 1)),
        ((1, 3, 8, 8), (2, 3, 3, 3), 2, "SAME", (1, 2, 4, 4), (0, 1, 0, 1)),
        ((1, 3, 8, 8), (2, 3, 2, 2), 1, "same", (1, 2, 8, 8), (0, 1, 0, 1)),
        ((1, 3, 8, 8), (2, 3, 3, 3), 2, "VALID", (1, 2, 3, 3), (0, 0, 0, 0)),
        ((1, 1, 5, 5), (1, 1, 2, 2), 1, (0, 1, 2, 3), (1, 1, 5, 9), (0, 1, 2, 3)),
    ],
)
def test_conv2d_shapes(xs, ws, stride, padding, out, pad):
    t = ks.conv2d(ph(xs), ph(ws), stride=stride, padding=padding)
    assert t.shape == out and t.dtype == "float16"
    assert t.node.attr("padding") == pad
    st = stride if isinstance(stride, tuple) else (stride, stride)
    assert t.node.attr("stride") == st


def test_layout_ops():
    x = ph((2, 3, 4))
    assert ks.reshape(x, (6, -1)).shape == (6, 4)
    assert ks.reshape(x, 24).shape == (24,)
    assert ks.reshape(x, [4, 3, 2]).shape == (4, 3, 2)
    t = ks.transpose(x)
    assert t.shape == (4, 3, 2) and t.node.attr("perm") == (2, 1, 0)
    t = ks.transpose(x, (0, -1, 1))
    assert t.shape == (2, 4, 3) and t.node.attr("perm") == (0, 2, 1)
    assert ks.broadcast_to(ph((3, 1)), (2, 3, 5)).shape == (2, 3, 5)
    assert ks.broadcast_to(ph(()), (4,)).shape == (4,)


def test_topk_and_gather():
    x = ph((4, 10), "bfloat16")
    v, i = ks.topk(x, 3)
    assert (v.shape, v.dtype, i.shape, i.dtype) == ((4, 3), "bfloat16", (4, 3), "int32")
    assert v.node.attr("which") == "values" and i.node.attr("which") == "indices"
    assert v.node.attr("axis") == 1 and i.node.attr("k") == 3
    v, i = ks.topk(x, 2, axis=0, name="top")
    assert v.shape == (2, 10) and (v.name, i.name) == ("top", "top_indices")
    idx = ph((5, 2), "int32")
    assert ks.gather(ph((8, 3)), idx).shape == (5, 2, 3)
    g = ks.gather(ph((8, 3, 6)), ph((7,), "int8"), axis=-1)
    assert g.shape == (8, 3, 7) and g.node.attr("axis") == 2


def test_scalars_promote_to_consts():
    x = ph((3,), "float16")
    for t in (x + 2, 2 + x, x * 0.5, x - np.float32(1.5), 1 / x):
        const = next(i for i in t.node.inputs if i.op is Op.CONST)
        assert const.shape == () and const.dtype == "float16"
        assert isinstance(const.attr("value"), float)
    c = (ph((2,), "int32") + 3).node.inputs[1]
    assert c.dtype == "int32" and c.attr("value") == 3 and isinstance(c.attr("value"), int)
    assert (x * 2).node.inputs[1].attr("value") == 2.0


def test_operator_overloads():
    x, y = ph((2, 3), name="x"), ph((2, 3), name="y")
    assert (x + y).op is Op.ADD and (x - y).op is Op.SUB and (x * y).op is Op.MUL
    assert (x / y).op is Op.DIV and (-x).op is Op.NEG and abs(x).op is Op.ABS and x.abs().op is Op.ABS
    r = 3 - x
    assert r.op is Op.SUB and r.node.inputs[0].op is Op.CONST and r.node.inputs[1] is x.node
    r = 2 / x
    assert r.op is Op.DIV and r.node.inputs[1] is x.node
    assert (x @ ks.transpose(y)).shape == (2, 2)


def test_tensor_identity_equality_and_hash():
    x = ph((2,), name="x")
    a, b = x + 1, x + 1
    assert a.node == b.node and hash(a) == hash(b)
    assert a != b and a == a  # __eq__ keeps identity: no elementwise comparison node
    assert len({a, b}) == 2
    with pytest.raises(AttributeError):
        a.node = b.node


def test_names_auto_and_user():
    x = ph((4,), name="x")
    y = ks.exp(x + 1, name="y")
    z = ks.add(y, y)
    assert y.name == "y" and (x + 1).name == "add" and z.name == "add_1"  # after the x + 1 inside
    g = Graph(ks.add(ks.add(x, 1.0), z).node)
    assert [g.name(n) for n in g if n.op is Op.ADD] == ["add", "add_1", "add_2"]
    assert ks.relu(x, name="r").node.name == "r"


def _composite_nodes(t):
    g = Graph(t.node)
    return [n for n in g if n.composite is not None]


def test_softmax_expansion():
    x = ph((4, 16), name="x")
    s = ks.softmax(x, name="probs")
    assert (s.shape, s.dtype, s.name, s.op) == ((4, 16), "float16", "probs", Op.DIV)
    nodes = _composite_nodes(s)
    assert {n.composite for n in nodes} == {s.node.composite}
    assert s.node.composite.name == "softmax"
    assert [n.op for n in nodes] == [Op.REDUCE_MAX, Op.SUB, Op.EXP, Op.REDUCE_SUM, Op.DIV]
    assert nodes[0].attr("axes") == (1,) and nodes[0].attr("keepdims") is True
    assert ks.softmax(x, axis=0).node.inputs[1].attr("axes") == (0,)


def test_layer_norm_expansion():
    x = ph((8, 32), "float32", name="x")
    g, b = ph((32,), "float32", name="g"), ph((32,), "float32", name="b")
    y = ks.layer_norm(x, g, b, eps=1e-3)
    ops = [n.op for n in _composite_nodes(y)]
    assert ops == [Op.REDUCE_MEAN, Op.SUB, Op.SQUARE, Op.REDUCE_MEAN, Op.CONST, Op.ADD, Op.RSQRT, Op.MUL,
                   Op.MUL, Op.ADD]
    eps = next(n for n in _composite_nodes(y) if n.op is Op.CONST)
    assert eps.attr("value") == 1e-3
    assert y.shape == (8, 32) and y.node.composite.name == "layer_norm"
    plain = ks.layer_norm(x, name="ln")
    assert plain.op is Op.MUL and plain.name == "ln"
    assert ks.layer_norm(ph((2, 3, 4)), axis=(1, 2)).node.inputs[0].inputs[1].attr("axes") == (1, 2)


def test_rms_norm_gelu_silu_expansion():
    x = ph((8, 32), name="x")
    r = ks.rms_norm(x, ph((32,)))
    assert [n.op for n in _composite_nodes(r)] == [Op.SQUARE, Op.REDUCE_MEAN, Op.CONST, Op.ADD, Op.RSQRT,
                                                  Op.MUL, Op.MUL]
    ge = ks.gelu(x)
    assert Op.ERF in {n.op for n in _composite_nodes(ge)}
    gt = ks.gelu(x, approximate="tanh")
    ops = {n.op for n in _composite_nodes(gt)}
    assert Op.TANH in ops and Op.ERF not in ops
    s = ks.silu(x, name="act")
    assert [n.op for n in _composite_nodes(s)] == [Op.SIGMOID, Op.MUL] and s.name == "act"


def test_each_composite_call_gets_its_own_tag():
    x = ph((4, 8), name="x")
    a, b = ks.gelu(x), ks.gelu(x)
    assert a.node.composite != b.node.composite
    assert a.node.composite.name == b.node.composite.name == "gelu"
    h = ks.gelu(ks.layer_norm(x))
    tags = {n.composite.name for n in _composite_nodes(h)}
    assert tags == {"layer_norm", "gelu"}
    assert x.node.composite is None and (x + 1).node.composite is None


def test_mixed_dtype_composite_casts_are_tagged():
    x = ph((4, 8), "float16")
    y = ks.layer_norm(x, gamma=ph((8,), "float32"))
    assert y.dtype == "float32"
    casts = [n for n in Graph(y.node) if n.op is Op.CAST]
    assert casts and all(c.composite is y.node.composite for c in casts)
