"""The tiles and the collectives' steps, run on data (multi/execute.py), give the reference result for
every tile count, tail, algorithm and device count; and each step puts on a link exactly the bytes the
timeline charges it for."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio.multi.execute import all_gather, reduce_scatter, run_tiled

M = ks.multi


def _same(a, b):
    np.testing.assert_allclose(np.asarray(a, np.float32), np.asarray(b, np.float32), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("alg", ["mesh", "ring"])
@pytest.mark.parametrize("p", [1, 2, 4, 8])
def test_the_collectives_on_data(alg, p):
    rng = np.random.default_rng(p)
    chunks = [[rng.standard_normal(6).astype(np.float32) for _ in range(p)] for _ in range(p)]
    summed, steps = reduce_scatter(chunks, alg)
    for j in range(p):
        np.testing.assert_allclose(summed[j], sum(chunks[r][j] for r in range(p)), rtol=1e-6, atol=1e-6)
    assert len(steps) == (0 if p == 1 else 1 if alg == "mesh" else p - 1)
    got, steps = all_gather(summed, alg)
    assert all(all((a == b).all() for a, b in zip(row, summed, strict=True)) for row in got)


def _design(kind, p, tiles, tail, alg, m=512, k=256, n=128):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((k, n), "float16", name="w")
    b = ks.placeholder((n,), "float16", name="b")
    return getattr(M, kind)(x, w, cluster=M.Cluster(p), tiles=tiles, tail=tail, algorithm=alg, bias=b)


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(M.KINDS), p=st.sampled_from([2, 4, 8]), tiles=st.integers(1, 4),
       tail=st.sampled_from(["back", "front"]), alg=st.sampled_from(M.ALGORITHMS))
def test_tiled_equals_the_reference_and_each_step_moves_what_it_is_charged(kind, p, tiles, tail, alg):
    try:
        d = _design(kind, p, tiles, tail, alg, m=1024)
    except M.TilingError:
        return
    inputs = d.random_inputs(seed=tiles)
    want, (got, traffic) = d.evaluate(inputs), run_tiled(d, inputs)
    for a, b in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,),
                    strict=True):
        _same(a, b)
    tile_steps = [[e for e in d.events[0] if e.tile == i and e.lane == "comm" and "step" in e.name]
                  for i in range(len(d.tile_rows))]
    assert [len(s) for s in tile_steps] == [len(t) for t in traffic]
    for charged, moved in zip(tile_steps, traffic, strict=True):
        for e, nbytes in zip(charged, moved, strict=True):
            assert e.link_bytes == pytest.approx(nbytes)


def test_add_and_rms_norm_tiled():
    x = ks.placeholder((640, 256), "float16", name="x")
    w = ks.placeholder((256, 256), "float16", name="w")
    r = ks.placeholder((640, 256), "float16", name="r")
    g = ks.placeholder((256,), "float16", name="g")
    d = M.matmul_allreduce(x, w, cluster=M.Cluster(4), tiles=3, tail="back", algorithm="ring", add=r,
                           rms_norm=g)
    assert d.tile_rows == (256, 256, 128)
    inputs = d.random_inputs(seed=5)
    _same(d.run_tiled(inputs), d.evaluate(inputs))
    with pytest.raises(ks.InputError, match=r"ks.multi.matmul_allreduce.run_tiled takes inputs"):
        d.run_tiled({"x": inputs["x"]})
