"""Property tests: random split -> elementwise -> concat graphs (any axis, widths that are not 32-byte
blocks, rope of random heads) lower and run on the TileIR interpreter as the golden model computes them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelstudio as ks

SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def split_graph(draw: st.DrawFn) -> tuple[ks.Tensor, ...]:
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=nd, max_size=nd)))
    axis = draw(st.integers(0, nd - 1))
    width = draw(st.integers(2, 70))
    shape = shape[:axis] + (width,) + shape[axis + 1:]
    dtype = draw(st.sampled_from(["float16", "float32"]))
    cuts = sorted(draw(st.sets(st.integers(1, width - 1), min_size=1, max_size=3)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, width], strict=True)]
    x = ks.placeholder(shape, dtype, name="x")
    parts = ks.split(x, sizes, axis=axis)
    ops = [lambda t: t * 2.0, ks.neg, lambda t: t + 1.0, ks.relu, lambda t: t]
    done = [ops[draw(st.integers(0, len(ops) - 1))](p) for p in parts]
    order = draw(st.permutations(range(len(done))))
    outs: tuple[ks.Tensor, ...] = (ks.concat([done[i] for i in order], axis=axis - nd),)
    if draw(st.booleans()):
        outs += (done[0],)
    return outs


@SETTINGS
@given(split_graph(), st.booleans())
def test_split_elementwise_concat_runs_as_golden(outs, fuse):
    prog = ks.lower(ks.create_schedule(list(outs), fuse=fuse), "ascend910b2")
    inp = ks.random_inputs(list(outs), seed=0)
    want = ks.evaluate(list(outs), inp)
    got = ks.run_tiled(prog, inp)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g, np.float32), np.asarray(w, np.float32))


@SETTINGS
@given(st.integers(1, 12), st.integers(1, 20).map(lambda h: 2 * h), st.sampled_from(["half", "interleave"]),
       st.booleans())
def test_rope_runs_as_golden(t, d, layout, fuse):
    x = ks.placeholder((t, d), "float16", name="x")
    sin = ks.placeholder((t, d), "float16", name="sin")
    cos = ks.placeholder((t, d), "float16", name="cos")
    y = ks.rope(x, sin, cos, layout=layout)
    prog = ks.lower(ks.create_schedule(y, fuse=fuse), "ascend910b2")
    inp = ks.random_inputs(y, seed=1)
    np.testing.assert_allclose(np.asarray(ks.run_tiled(prog, inp), np.float32),
                               np.asarray(ks.evaluate(y, inp), np.float32), rtol=2e-3, atol=2e-3)
