"""ks.split / ks.concat / ks.rope: shapes, names, the golden model, and errors that name the tensors, the
numbers and a way out."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import DTypeError, KernelStudioError, ShapeError, UnsupportedError
from kernelstudio.ir.ops import Op


def _raises(exc, fn, *fragments):
    with pytest.raises(exc) as info:
        fn()
    assert isinstance(info.value, KernelStudioError)
    for f in fragments:
        assert f in str(info.value), f"{f!r} not in {str(info.value)!r}"


def test_split_shapes_names_and_golden():
    x = ks.placeholder((4, 10), "float32", name="x")
    a, b, c = ks.split(x, [3, 5, 2], name="q")
    assert [t.shape for t in (a, b, c)] == [(4, 3), (4, 5), (4, 2)]
    assert [t.node.name for t in (a, b, c)] == ["q_0", "q_1", "q_2"]
    assert a.node.op is Op.SLICE and b.node.attr("start") == 3
    halves = ks.split(x, 2, axis=0)
    assert [t.shape for t in halves] == [(2, 10), (2, 10)]
    v = np.arange(40, dtype=np.float32).reshape(4, 10)
    got = ks.evaluate([a, b, c, *halves], {"x": v})
    for g, w in zip(got, [*np.split(v, [3, 8], axis=1), *np.split(v, 2, axis=0)], strict=True):
        np.testing.assert_array_equal(g, w)


def test_concat_shapes_and_golden():
    x = ks.placeholder((3, 4), "float16", name="x")
    y = ks.placeholder((3, 2), "float16", name="y")
    z = ks.concat([x, y, x], axis=-1)
    assert z.shape == (3, 10) and z.node.op is Op.CONCAT
    assert ks.concat([x]) is x
    inp = ks.random_inputs(z)
    np.testing.assert_array_equal(ks.evaluate(z, inp), np.concatenate([inp["x"], inp["y"], inp["x"]], axis=1))
    w = ks.concat([x, x], axis=0)
    assert w.shape == (6, 4)


def test_split_errors():
    x = ks.placeholder((4, 10), "float16", name="x")
    _raises(ShapeError, lambda: ks.split(x, [3, 4]), "split", "[3, 4]", "sum to 7", "x[4,10]", "10", "[3, 7]")
    _raises(ShapeError, lambda: ks.split(x, 3), "split", "x[4,10]", "3 equal parts", "divid")
    _raises(ShapeError, lambda: ks.split(x, [5, 5], axis=2), "split", "axis 2", "out of range")
    _raises(ShapeError, lambda: ks.split(x, []), "split", "non-empty")
    _raises(ShapeError, lambda: ks.split(x, [0, 10]), "split", "positive")


def test_concat_errors():
    x = ks.placeholder((4, 10), "float16", name="x")
    y = ks.placeholder((5, 10), "float16", name="y")
    f = ks.placeholder((4, 10), "float32", name="f")
    _raises(ShapeError, lambda: ks.concat([]), "concat", "non-empty", "concat([x, y]")
    _raises(ShapeError, lambda: ks.concat([x, y], axis=-1), "concat", "tensors[1] y[5,10]", "x[4,10]", "axis 1")
    _raises(DTypeError, lambda: ks.concat([x, f]), "concat", "tensors[1] f[4,10]", "float32", "float16", "cast(")
    _raises(ShapeError, lambda: ks.concat([x, x], axis=3), "concat", "axis 3", "out of range")


def _rope_ref(x, s, c, layout):
    x, s, c = (a.astype(np.float32) for a in (x, s, c))
    if layout == "half":
        h = x.shape[-1] // 2
        return x * c + np.concatenate([-x[..., h:], x[..., :h]], axis=-1) * s
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * c[..., 0::2] - x[..., 1::2] * s[..., 0::2]
    out[..., 1::2] = x[..., 1::2] * c[..., 1::2] + x[..., 0::2] * s[..., 1::2]
    return out


@pytest.mark.parametrize("layout", ["half", "interleave"])
def test_rope_matches_its_formula(layout):
    x = ks.placeholder((5, 3, 16), "float32", name="x")
    sin = ks.placeholder((5, 1, 16), "float32", name="sin")
    cos = ks.placeholder((5, 1, 16), "float32", name="cos")
    y = ks.rope(x, sin, cos, layout=layout, name="q_rope")
    assert y.shape == (5, 3, 16) and y.node.name == "q_rope"
    inp = ks.random_inputs(y, seed=1)
    np.testing.assert_allclose(ks.evaluate(y, inp), _rope_ref(inp["x"], inp["sin"], inp["cos"], layout),
                               rtol=1e-6, atol=1e-6)


def test_rope_errors():
    x = ks.placeholder((4, 8), "float16", name="x")
    t = ks.placeholder((4, 8), "float16", name="t")
    half = ks.placeholder((4, 4), "float16", name="h")
    odd = ks.placeholder((4, 7), "float16", name="o")
    _raises(UnsupportedError, lambda: ks.rope(x, t, t, layout="neox"), "rope", "'neox'", "'half', 'interleave'")
    _raises(ShapeError, lambda: ks.rope(x, half, t), "rope", "sin h[4,4]", "full rotary width 8", "concat([sin, sin]")
    _raises(ShapeError, lambda: ks.rope(odd, odd, odd), "rope", "o[4,7]", "even")
    _raises(ShapeError, lambda: ks.rope(x, ks.placeholder((3, 8), "float16", name="s3"), t), "rope",
            "s3[3,8]", "does not broadcast", "x[4,8]")
