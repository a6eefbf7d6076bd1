"""ks.scatter into a paged cache (PA_BSND, PA_NZ): the golden model's semantics, the in-place program, the
interpreter equal to the golden model on random caches and tiles, the simulator's bytes, and every refusal."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio.core.errors import DTypeError, InputError, ShapeError, UnsupportedError

SETTINGS = settings(max_examples=25, deadline=None)


def _bsnd(blocks=8, bs=16, row=64, tokens=10, dtype="float16"):
    cache = ks.placeholder((blocks, bs, 1, row), dtype, name="kv_cache")
    idx = ks.placeholder((tokens,), "int32", name="slots")
    v = ks.placeholder((tokens, 1, row), dtype, name="kv")
    return cache, idx, v


def test_bsnd_writes_each_token_row_to_its_slot_and_keeps_the_rest():
    cache, idx, v = _bsnd()
    out = ks.scatter(cache, idx, v)
    inp = ks.random_inputs(out, seed=1)
    slots = inp["slots"]
    assert len(set(slots.tolist())) == len(slots) and slots.min() >= 0 and slots.max() < 8 * 16
    got = ks.evaluate(out, inp).reshape(128, 64)
    np.testing.assert_array_equal(got[slots], inp["kv"].reshape(10, 64))
    rest = np.setdiff1d(np.arange(128), slots)
    np.testing.assert_array_equal(got[rest], inp["kv_cache"].reshape(128, 64)[rest])


def test_nz_puts_element_j_of_a_slot_at_its_fractal_place():
    c = ks.placeholder((4, 8, 16, 16), "float16", name="cache")  # rows of 128 in chunks of 16
    idx = ks.placeholder((5,), "int32", name="slots")
    v = ks.placeholder((5, 128), "float16", name="v")
    out = ks.scatter(c, idx, v, layout="PA_NZ")
    inp = ks.random_inputs(out, seed=2)
    got = ks.evaluate(out, inp)
    for t, s in enumerate(inp["slots"].tolist()):
        np.testing.assert_array_equal(got[s // 16, :, s % 16, :].reshape(-1), inp["v"][t])
    touched = np.zeros(got.shape, bool)
    for s in inp["slots"].tolist():
        touched[s // 16, :, s % 16, :] = True
    np.testing.assert_array_equal(got[~touched], inp["cache"][~touched])


def test_the_program_updates_the_cache_tensor_in_place():
    cache, idx, v = _bsnd()
    prog = ks.lower(ks.create_schedule(ks.scatter(cache, idx, v)), "ascend910b2")
    assert prog.outputs == ("kv_cache",) and "kv_cache" in prog.inputs
    assert prog.tensor("kv_cache").role == "input" and len(prog.tensors) == 3  # no second cache
    (k,) = prog.kernels
    assert k.params == ("kv_cache", "slots", "kv")
    res = ks.simulate(prog)
    moved = 10 * 64 * 2
    assert res.traffic["UB->GM"] == moved  # the tokens' rows, not the cache
    assert res.metrics["compulsory_bytes"] == moved + moved + 10 * 4  # rows read, rows written, slots


def test_values_computed_upstream_and_another_output():
    cache = ks.placeholder((8, 16, 1, 64), "float16", name="kv_cache")
    idx = ks.placeholder((10,), "int32", name="slots")
    x = ks.placeholder((10, 64), "float16", name="x")
    g = ks.placeholder((64,), "float16", name="g")
    new = ks.scatter(cache, idx, ks.rms_norm(x, g))  # a (T, 64) row fills a (.., 16, 1, 64) cache
    kernels = ks.create_schedule(new).kernels
    assert len(kernels) == 2 and kernels[1].ops == ("scatter",)  # rms_norm, then the scatter: no reshape copy
    q = x * 2.0
    s = ks.create_schedule([q, new])
    prog = ks.lower(s, "ascend910b2")
    assert prog.outputs[1] == "kv_cache"
    inp = ks.random_inputs([q, new], seed=0)
    for got, want in zip(ks.run_tiled(prog, inp), ks.evaluate([q, new], inp, schedule=s), strict=True):
        np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))


@st.composite
def scatter_case(draw: st.DrawFn):
    layout = draw(st.sampled_from(["PA_BSND", "PA_NZ"]))
    dtype = draw(st.sampled_from(["float16", "bfloat16", "float32"]))
    blocks, bs = draw(st.integers(1, 6)), draw(st.sampled_from([1, 3, 16]))
    c0 = 32 // (4 if dtype == "float32" else 2)
    if layout == "PA_NZ":
        row = c0 * draw(st.integers(1, 6))
        shape: tuple[int, ...] = (blocks, row // c0, bs, c0)
    else:
        row = draw(st.integers(1, 70))
        shape = (blocks, bs, row)
    tokens = draw(st.integers(1, blocks * bs))
    tiles = (draw(st.integers(1, 8)), draw(st.integers(1, 4)) * 16)
    return layout, dtype, shape, row, tokens, tiles


@SETTINGS
@given(scatter_case(), st.integers(0, 3))
def test_interpreter_equals_golden_on_random_caches_and_tiles(case, seed):
    layout, dtype, shape, row, tokens, (tr, tc) = case
    cache = ks.placeholder(shape, dtype, name="cache")
    idx = ks.placeholder((tokens,), "int32", name="slots")
    v = ks.placeholder((tokens, row) if layout == "PA_NZ" else (tokens, *shape[2:]), dtype, name="v")
    out = ks.scatter(cache, idx, v, layout=layout)
    s = ks.create_schedule(out)
    s[out].split(0, tr).split(-1, tc)
    prog = ks.lower(s, "ascend910b2")
    inp = ks.random_inputs(out, seed=seed)
    np.testing.assert_array_equal(np.asarray(ks.run_tiled(prog, inp), np.float32),
                                  np.asarray(ks.evaluate(out, inp), np.float32))
    itemsize = 4 if dtype == "float32" else 2
    assert ks.simulate(prog).traffic["UB->GM"] == tokens * row * itemsize


# ---- refusals -----------------------------------------------------------------------------------------
def test_out_of_range_and_repeated_slots_are_refused_when_evaluated():
    cache, idx, v = _bsnd()
    out = ks.scatter(cache, idx, v)
    inp = ks.random_inputs(out, seed=1)
    bad = dict(inp, slots=np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 128], np.int32))
    with pytest.raises(InputError, match=r"token 9 has cache slot 128, outside \[0, 128\)"):
        ks.evaluate(out, bad)
    twice = dict(inp, slots=np.array([0, 1, 2, 3, 4, 5, 6, 7, 3, 9], np.int32))
    with pytest.raises(InputError, match="tokens 3 and 8 both write cache slot 3"):
        ks.evaluate(out, twice)


def test_bad_arguments_name_the_tensor_and_the_way_out():
    cache, idx, v = _bsnd()
    with pytest.raises(UnsupportedError, match="layout 'ND' is not one of PA_BSND, PA_NZ"):
        ks.scatter(cache, idx, v, layout="ND")
    with pytest.raises(UnsupportedError, match="updated in place: pass its ks.placeholder"):
        ks.scatter(cache * 2.0, idx, v)
    with pytest.raises(DTypeError, match="must be int32"):
        ks.scatter(cache, ks.placeholder((10,), "int8", name="i8"), v)
    with pytest.raises(DTypeError, match="must share a dtype"):
        ks.scatter(cache, idx, ks.placeholder((10, 1, 64), "float32", name="f"))
    with pytest.raises(ShapeError, match="T = 10 rows"):
        ks.scatter(cache, idx, ks.placeholder((9, 1, 64), "float16", name="short"))
    with pytest.raises(ShapeError, match=r"PA_BSND cache is \(blocks, block_size, \*row\) with rows of .* 32 "):
        ks.scatter(cache, idx, ks.placeholder((10, 1, 32), "float16", name="narrow"))
    with pytest.raises(ShapeError, match=r"PA_NZ cache of float16 is \(blocks, 64 // 16, block_size, 16\)"):
        ks.scatter(cache, idx, v, layout="PA_NZ")
    with pytest.raises(ShapeError, match="1-D"):
        ks.scatter(cache, ks.placeholder((10, 1), "int32", name="i2"), v)


def test_another_reader_of_an_updated_cache_is_refused_at_lowering():
    cache, idx, v = _bsnd()
    new = ks.scatter(cache, idx, v)
    old = ks.reduce_sum(cache, axis=-1)
    with pytest.raises(UnsupportedError, match="kv_cache is updated in place, and .* reads it too"):
        ks.lower(ks.create_schedule([new, old]), "ascend910b2")
