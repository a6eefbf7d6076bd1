"""cast(x, "int8", rounding="rint"): the quantizing cast (nearest even, saturating; Ascend C's Cast with
CAST_RINT) in every reader: golden == run_tiled == twin on values chosen to tell it from truncation (halves,
negative fractions, values past the int8 range), a per-token dynamic quantization built from existing ops
(row absmax / 127, divide, rounding cast) against NumPy, the simulator's price and the refused casts."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.tileir.program import VecOp, walk

# x -> rint, saturated: halves go to the even neighbour, past +-127.5 saturates (truncation would wrap 300)
VALUES = np.array([2.5, 3.5, -2.5, -2.625, 2.375, 0.5, 300.0, -1000.0, 126.5, -127.75, 1.5, -0.5, 7.0, -7.25,
                   64.5, 65.5], np.float32)
WANT = np.array([2, 4, -2, -3, 2, 0, 127, -128, 126, -128, 2, 0, 7, -7, 64, 66], np.int8)


def _quant_graph() -> tuple[list[ks.Tensor], ks.Tensor]:
    x = ks.placeholder((8, 64), "bfloat16", name="x")
    s = ks.div(ks.reduce_max(ks.abs(x), axis=-1, keepdims=True), 127.0, name="scale")
    return [ks.cast(ks.div(x, s), "int8", rounding="rint", name="q"), s], x


def _three_way(outs: list[ks.Tensor], feeds: dict, twin_cache) -> list[np.ndarray]:
    sched = ks.create_schedule(outs)
    prog = ks.lower(sched, target="ascend910b2")
    golden = ks.evaluate(outs, feeds, schedule=sched)
    tiled = ks.run_tiled(prog, feeds)
    tiled = tiled if isinstance(tiled, (list, tuple)) else [tiled]
    code = ks.codegen(prog)
    assert any("AscendC::RoundMode::CAST_RINT" in text for text in code.files.values())
    got = ks.twin.run(code, feeds, cache_dir=twin_cache, by_name=True)
    for name, g, t in zip(prog.outputs, golden, tiled, strict=True):
        np.testing.assert_array_equal(np.asarray(t), np.asarray(g), err_msg=f"{name} run_tiled")
        np.testing.assert_array_equal(np.asarray(got[name]), np.asarray(g), err_msg=f"{name} twin")
    return golden


def test_rint_cast_rounds_half_to_even_and_saturates_three_way(twin_cache):
    x = ks.placeholder((4, 16), "float32", name="x")
    q = ks.cast(ks.mul(x, 1.0), "int8", rounding="rint", name="q")
    t = ks.cast(ks.mul(x, 1.0), "int8", name="t")  # the plain cast truncates (and wraps in the golden model)
    feeds = {"x": np.tile(VALUES, (4, 1))}
    (gq,) = _three_way([q], feeds, twin_cache)
    assert gq.dtype == np.int8
    np.testing.assert_array_equal(gq, np.tile(WANT, (4, 1)))
    (gt,) = ks.evaluate([t], feeds)
    assert gt[0, 0] == 2 and gt[0, 1] == 3 and gt[0, 3] == -2  # truncation differs where rint rounds


def test_per_token_dynamic_quant_from_existing_ops_three_way(twin_cache):
    outs, _ = _quant_graph()
    feeds = ks.random_inputs(outs, seed=3)
    q, s = _three_way(outs, feeds, twin_cache)
    x = np.asarray(feeds["x"], np.float32)
    scale = np.abs(x).max(axis=-1, keepdims=True) * np.float32(1 / 127)  # the plan's mean-free row scale
    np.testing.assert_allclose(np.asarray(s, np.float32), scale, rtol=1e-2)
    ref = np.clip(np.rint(x / np.asarray(s, np.float32)), -128, 127)
    assert np.abs(q.astype(np.int32) - ref).max() <= 1  # division rounding may tip a value off its half
    assert (np.abs(q).max(axis=-1) == 127).all()  # each row's absmax lands on 127


def test_rint_cast_is_priced_as_a_cast_of_its_dtypes():
    x = ks.placeholder((64, 1024), "float32", name="x")
    progs = [ks.lower(ks.create_schedule([ks.cast(ks.mul(x, 1.0), "int8", rounding=r, name="q")]),
                      target="ascend910b2") for r in ("rint", None)]
    ops = [[s.op for k in p.kernels for s in walk(k.aiv) if isinstance(s, VecOp)] for p in progs]
    assert "cast_rint" in ops[0] and "cast_rint" not in ops[1]
    assert ks.simulate(progs[0]).time_us == pytest.approx(ks.simulate(progs[1]).time_us)  # one Cast each


@pytest.mark.parametrize(("kwargs", "dtype", "words"), [
    (dict(rounding="floor"), "int8", "rounding='floor'.*'rint'"),
    (dict(rounding="rint"), "float16", "to float16 with rounding='rint'"),
    (dict(rounding="rint", scale=0.5), "int8", "scale= dequantizes"),
])
def test_rounding_cast_refuses_what_it_cannot_do(kwargs, dtype, words):
    x = ks.placeholder((4, 16), "float32", name="x")
    with pytest.raises(ks.DTypeError, match=words):
        ks.cast(x, dtype, **kwargs)


def test_rint_cast_of_an_integer_tensor_is_refused():
    i = ks.placeholder((4, 16), "int32", name="i")
    with pytest.raises(ks.DTypeError, match="takes a float tensor"):
        ks.cast(i, "int8", rounding="rint")
