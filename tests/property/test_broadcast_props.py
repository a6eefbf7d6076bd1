"""Property tests: DSL shape inference agrees with NumPy; random elementwise graphs evaluate right."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelstudio.dsl as ks
from kernelstudio.core.errors import ShapeError
from kernelstudio.ir import evaluate

SETTINGS = settings(max_examples=60, deadline=None)

dims = st.integers(1, 4)
shapes = st.lists(dims, min_size=0, max_size=4).map(tuple)


def ph(shape, name, dtype="float32"):
    return ks.placeholder(shape, dtype, name=name)


def numpy_or_error(fn):
    try:
        return fn()
    except ValueError:
        return ValueError


@SETTINGS
@given(st.lists(shapes, min_size=2, max_size=3))
def test_broadcasting_matches_numpy(shs):
    expected = numpy_or_error(lambda: np.broadcast_shapes(*shs))
    tensors = [ph(s, f"t{i}") for i, s in enumerate(shs)]
    try:
        got = (ks.where(*tensors) if len(tensors) == 3 else ks.add(*tensors)).shape
    except ShapeError:
        got = ValueError
    assert got == expected


@SETTINGS
@given(shapes.filter(len), st.data())  # numpy accepts axis=0 on 0-d arrays; we do not
def test_reductions_match_numpy(shape, data):
    ndim = len(shape)
    axis = data.draw(st.one_of(
        st.none(),
        st.integers(-ndim - 1, ndim),
        st.lists(st.integers(-ndim - 1, ndim), max_size=3).map(tuple),
    ))
    keepdims = data.draw(st.booleans())
    expected = numpy_or_error(lambda: np.sum(np.zeros(shape), axis=axis, keepdims=keepdims).shape)
    try:
        got = ks.reduce_sum(ph(shape, "x"), axis, keepdims=keepdims).shape
    except ShapeError:
        got = ValueError
    assert got == expected


@SETTINGS
@given(shapes, st.data())
def test_layout_shapes_match_numpy(shape, data):
    x, arr = ph(shape, "x"), np.zeros(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    assert ks.transpose(x, perm).shape == arr.transpose(perm).shape
    target = data.draw(st.lists(st.integers(1, 6), max_size=4).map(tuple))
    if data.draw(st.booleans()) and target:
        target = (-1, *target[1:])
    expected = numpy_or_error(lambda: arr.reshape(target).shape)
    try:
        got = ks.reshape(x, target).shape
    except ShapeError:
        got = ValueError
    assert got == expected
    bt = data.draw(shapes)
    expected = numpy_or_error(lambda: np.broadcast_to(arr, bt).shape)
    try:
        got = ks.broadcast_to(x, bt).shape
    except ShapeError:
        got = ValueError
    assert got == expected


@SETTINGS
@given(st.lists(dims, min_size=2, max_size=4), st.lists(dims, min_size=2, max_size=4),
       st.booleans(), st.booleans())
def test_matmul_shapes_match_numpy(sa, sb, ta, tb):
    a, b = np.zeros(sa), np.zeros(sb)
    expected = numpy_or_error(lambda: np.matmul(np.swapaxes(a, -1, -2) if ta else a,
                                                np.swapaxes(b, -1, -2) if tb else b).shape)
    try:
        got = ks.matmul(ph(tuple(sa), "a"), ph(tuple(sb), "b"), transpose_a=ta, transpose_b=tb).shape
    except ShapeError:
        got = ValueError
    assert got == expected


# --- random elementwise graphs: golden == direct float32 NumPy ------------------------------------

UNARY = {
    "neg": (ks.neg, np.negative),
    "abs": (ks.abs, np.abs),
    "tanh": (ks.tanh, np.tanh),
    "sigmoid": (ks.sigmoid, lambda a: np.float32(1) / (np.float32(1) + np.exp(-a))),
    "relu": (ks.relu, lambda a: np.maximum(a, np.float32(0))),
    "square": (ks.square, np.square),
}
BINARY = {
    "add": (ks.add, np.add),
    "sub": (ks.sub, np.subtract),
    "mul": (ks.mul, np.multiply),
    "maximum": (ks.maximum, np.maximum),
    "minimum": (ks.minimum, np.minimum),
}


@st.composite
def elementwise_graph(draw):
    out_shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    n_inputs = draw(st.integers(1, 3))
    in_shapes = []
    for _ in range(n_inputs):  # shapes that broadcast to out_shape
        k = draw(st.integers(0, len(out_shape)))
        tail = out_shape[len(out_shape) - k:]
        in_shapes.append(tuple(d if draw(st.booleans()) else 1 for d in tail))
    program = []  # (kind, op name, operand refs or scalar)
    n_values = n_inputs
    for _ in range(draw(st.integers(1, 6))):
        ref = st.integers(0, n_values - 1)
        if draw(st.booleans()):
            program.append(("u", draw(st.sampled_from(sorted(UNARY))), (draw(ref),)))
        else:
            other = draw(st.one_of(ref, st.floats(-3, 3, width=32).map(lambda f: ("c", f))))
            program.append(("b", draw(st.sampled_from(sorted(BINARY))), (draw(ref), other)))
        n_values += 1
    return in_shapes, program


@SETTINGS
@given(elementwise_graph(), st.integers(0, 2**16))
def test_random_elementwise_graphs_match_numpy(graph, seed):
    in_shapes, program = graph
    rng = np.random.default_rng(seed)
    feeds = {f"x{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(in_shapes)}
    tensors = [ph(s, f"x{i}") for i, s in enumerate(in_shapes)]
    arrays = [feeds[f"x{i}"] for i in range(len(in_shapes))]
    for kind, op, args in program:
        if kind == "u":
            fn, ref = UNARY[op]
            tensors.append(fn(tensors[args[0]]))
            arrays.append(ref(arrays[args[0]]))
        else:
            fn, ref = BINARY[op]
            a, b = args
            if isinstance(b, tuple):
                tensors.append(fn(tensors[a], b[1]))
                arrays.append(ref(arrays[a], np.float32(b[1])))
            else:
                tensors.append(fn(tensors[a], tensors[b]))
                arrays.append(ref(arrays[a], arrays[b]))
    out, expected = tensors[-1], np.asarray(arrays[-1], dtype=np.float32)
    got = evaluate(out, {k: v for k, v in feeds.items() if k in _used(out)})
    assert got.shape == expected.shape == out.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def _used(t):
    from kernelstudio.ir import Graph

    g = Graph(t.node)
    return {g.name(p) for p in g.placeholders}
