"""compute_dtype: float16 vector math where every op rounds as the golden model does, else float32."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen
from kernelstudio.core.errors import ScheduleError
from kernelstudio.tileir.program import VecOp, walk


def _elementwise():
    x = ks.placeholder((100, 1000), "float16", name="x")  # 100 rows: a tail tile on every core count
    y = ks.placeholder((100, 1000), "float16", name="y")
    return ks.relu(x + y * 0.5 - ks.maximum(x, y))


def _lower(out, dtype: str | None = None):
    s = ks.create_schedule(out)
    if dtype is not None:
        s[out].compute_dtype(dtype)
    return ks.lower(s, "ascend910b2")


def _ops(prog) -> list[str]:
    k = prog.kernels[-1]
    return [s.op for s in walk(k.aic + k.aiv) if isinstance(s, VecOp)]


def test_auto_computes_a_float16_elementwise_chain_natively_and_bit_exact(twin_cache):
    out = _elementwise()
    prog = _lower(out)
    assert "cast" not in _ops(prog)
    assert all(b.dtype == "float16" for b in prog.kernels[0].buffers)
    inputs = ks.random_inputs(out, seed=3)
    golden = ks.evaluate(out, inputs)
    np.testing.assert_array_equal(ks.run_tiled(prog, inputs), golden)
    got = twin.run(codegen(prog), inputs, cache_dir=twin_cache)
    np.testing.assert_array_equal(np.asarray(got), golden)


def test_native_float16_spends_less_vector_time_than_float32():
    out = _elementwise()
    native, wide = ks.simulate(_lower(out)), ks.simulate(_lower(out, "float32"))
    assert "cast" in _ops(_lower(out, "float32"))
    assert native.metrics["pipes"]["V"]["busy_us"] < 0.6 * wide.metrics["pipes"]["V"]["busy_us"]


def test_auto_keeps_float32_where_an_op_needs_it():
    x = ks.placeholder((64, 256), "float16", name="x")
    out = ks.exp(x) + x
    prog = _lower(out)
    assert "cast" in _ops(prog)
    assert any(b.dtype == "float32" for b in prog.kernels[0].buffers)


def test_matmul_epilogue_in_float16_matches_the_golden_model(twin_cache):
    x = ks.placeholder((96, 64), "float16", name="x")
    w = ks.placeholder((64, 160), "float16", name="w")
    b = ks.placeholder((160,), "float16", name="b")
    out = ks.relu(ks.matmul(x, w) + b)
    prog = _lower(out)
    assert "cast" not in _ops(prog)
    inputs = ks.random_inputs(out, seed=1)
    golden = ks.evaluate(out, inputs)
    np.testing.assert_array_equal(ks.run_tiled(prog, inputs), golden)
    got = twin.run(codegen(prog), inputs, cache_dir=twin_cache)
    np.testing.assert_array_equal(np.asarray(got), golden)


def test_forcing_float16_on_an_op_that_needs_float32_names_it_and_the_way_out():
    x = ks.placeholder((64, 256), "float16", name="x")
    out = ks.exp(x) * 2.0
    with pytest.raises(ScheduleError, match=r"exp .*compute_dtype\('auto'\)"):
        _lower(out, "float16")


def test_unknown_compute_dtype_is_a_schedule_error():
    out = _elementwise()
    s = ks.create_schedule(out)
    with pytest.raises(ScheduleError, match="auto, float16, float32"):
        s[out].compute_dtype("int4")


def test_compute_dtype_is_a_replayable_directive():
    out = _elementwise()
    s = ks.create_schedule(out)
    s[out].compute_dtype("float32")
    again = ks.create_schedule(out)
    again.replay(s.to_json())
    assert again.directives == s.directives
    assert "cast" in _ops(ks.lower(again, "ascend910b2"))
