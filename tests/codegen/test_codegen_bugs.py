"""Code-generation bugs the twin found and `run_tiled` could not see, each pinned by a test:
kernels named after C library symbols, a Mul whose destination was not 32-byte aligned, GM offsets
past 2^31 elements. (The UB accounting mismatch of rms_norm: tests/twin/test_twin_memory_plan.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
import kernelstudio.codegen.scope  # noqa: F401 - the module, not the ks.codegen function
from kernelstudio.codegen import names_of
from kernelstudio.core.names import C_SYMBOLS

SCOPE = sys.modules["kernelstudio.codegen.scope"]


def _twin_equals_interpreter(out, twin_cache: Path, *, fuse: bool = True, maxulp: int = 0, rtol: float = 0.0):
    """Lower, run on the twin and in the interpreter; equal bit for bit, or within `maxulp` units in the
    last place where a transcendental's implementation differs (the twin's vs NumPy's)."""
    prog = ks.lower(ks.create_schedule(out, fuse=fuse))
    inputs = ks.random_inputs(out)
    got = ks.twin.run(ks.codegen(prog), inputs, cache_dir=twin_cache)
    want = ks.run_tiled(prog, inputs)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))  # both: array, or tuple in order
    for g, w in zip(got, want, strict=True):
        if rtol:  # float32 row sums: the twin's ReduceSum adds in another order than NumPy
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol / 10)
        elif maxulp:
            np.testing.assert_array_max_ulp(g, w, maxulp=maxulp)
        else:
            np.testing.assert_array_equal(g, w)
    return prog


_X = (16, 64)
LIBM = {
    "exp": lambda x: ks.exp(x),
    "log": lambda x: ks.log(ks.abs(x) + 1),
    "sqrt": lambda x: ks.sqrt(ks.abs(x)),
    "abs": lambda x: ks.abs(x),
    "erf": lambda x: ks.erf(x),
    "tanh": lambda x: ks.tanh(x),
    "div": lambda x: x / 3.0,
    "printf": lambda x: ks.relu(x, name="printf"),
    "index": lambda x: ks.neg(x, name="index"),
    "j0": lambda x: ks.square(x, name="j0"),
}


@pytest.mark.parametrize("symbol", sorted(LIBM))
def test_kernels_named_after_c_library_symbols_compile_on_the_twin(symbol: str, twin_cache: Path) -> None:
    assert symbol in C_SYMBOLS
    x = ks.placeholder(_X, "float32", name="x")
    out = LIBM[symbol](x)
    prog = _twin_equals_interpreter(out, twin_cache, maxulp=2)
    src = ks.codegen(prog).files[names_of(prog, prog.kernels[0]).kernel_file]
    assert f" void {symbol}(" not in src  # the extern "C" entry is renamed
    assert prog.kernels[0].name == symbol


def test_unfused_kernels_named_after_symbols_compile(twin_cache: Path) -> None:
    x = ks.placeholder(_X, "float32", name="x")
    _twin_equals_interpreter(ks.sqrt(ks.abs(ks.exp(x))), twin_cache, fuse=False, maxulp=2)


def test_reserved_symbols_cover_c_cxx_and_ascend_c() -> None:
    for name in ("exp", "fabs", "malloc", "printf", "memcpy", "class", "nullptr", "int32_t", "DataCopy",
                 "GM_ADDR", "half", "TPipe", "ReadFile"):
        assert name in C_SYMBOLS
    assert "x" not in C_SYMBOLS and "gamma_1" not in C_SYMBOLS


def test_scalar_times_column_statistic_keeps_dst_aligned(twin_cache: Path) -> None:
    # reduce_mean(x, -1, keepdims=True) * c, c a (1,) tensor: one Muls over the column, not a Mul per row
    x = ks.placeholder((64, 40), "float32", name="x")
    c = ks.placeholder((1,), "float32", name="c")
    out = ks.reduce_mean(x, -1, keepdims=True) * c
    prog = _twin_equals_interpreter(out, twin_cache, rtol=1e-5)
    src = ks.codegen(prog).files[names_of(prog, prog.kernels[0]).kernel_file]
    assert "AscendC::Mul(" not in src and "AscendC::Muls(" in src
    golden = ks.evaluate(out, ks.random_inputs(out))
    np.testing.assert_allclose(ks.run_tiled(prog, ks.random_inputs(out)), golden, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_column_statistic_times_scalar_on_two_dtypes(dtype: str, twin_cache: Path) -> None:
    x = ks.placeholder((33, 24), dtype, name="x")
    c = ks.placeholder((1,), dtype, name="c")
    _twin_equals_interpreter(c * ks.reduce_max(x, -1, keepdims=True) + c, twin_cache)


def test_offsets_past_2_31_elements_are_64_bit() -> None:
    x = ks.placeholder((65600, 32768), "int8", name="x")
    out = ks.relu(x)
    prog = ks.lower(ks.create_schedule(out))
    src = ks.codegen(prog).files[names_of(prog, prog.kernels[0]).kernel_file]
    offsets = [line for line in src.splitlines() if "xGm[" in line]
    assert offsets and all("static_cast<int64_t>(" in line for line in offsets)
    assert "(r0 * 32768)" not in src


def test_small_tensors_keep_32_bit_offsets() -> None:
    x = ks.placeholder((64, 128), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.relu(x)))
    src = ks.codegen(prog).files[names_of(prog, prog.kernels[0]).kernel_file]
    assert "int64_t" not in src


@pytest.mark.parametrize("make", [
    lambda x, b: ks.relu(x + b),
    lambda x, b: ks.softmax(x),
    lambda x, b: ks.reduce_sum(x, 0),
    lambda x, b: ks.layer_norm(x),
], ids=["bias_relu", "softmax", "column_sum", "layer_norm"])
def test_64_bit_offsets_compute_the_same_on_the_twin(make, monkeypatch, twin_cache: Path) -> None:
    # the 64-bit path, exercised on small tensors by lowering the limit
    monkeypatch.setattr(SCOPE, "INDEX_LIMIT", 100)
    x = ks.placeholder((40, 300), "float16", name="x")
    b = ks.placeholder((300,), "float16", name="b")
    out = make(x, b)
    prog = _twin_equals_interpreter(out, twin_cache, maxulp=2)
    assert "static_cast<int64_t>" in ks.codegen(prog).files[names_of(prog, prog.kernels[0]).kernel_file]


def test_cube_kernels_past_2_31_elements_are_refused_clearly(monkeypatch) -> None:
    monkeypatch.setattr(SCOPE, "INDEX_LIMIT", 100)
    y = ks.placeholder((64, 64), "float16", name="y")
    prog = ks.lower(ks.create_schedule(ks.matmul(y, y)))
    with pytest.raises(ks.UnsupportedError, match=r"GM tensor \w+ \[64, 64\] has 4,096 elements .*32-bit offsets"):
        ks.codegen(prog)


@pytest.mark.parametrize("split", [None, 2, 7])
def test_size_one_middle_dim_is_a_row_broadcast_not_a_period(split, twin_cache: Path) -> None:
    # x (N, 1, 64) + b (64,): b repeats every row, so any row tile is legal (was "period 1")
    x = ks.placeholder((96, 1, 64), "float16", name="x")
    b = ks.placeholder((64,), "float16", name="b")
    out = x + b
    s = ks.create_schedule(out)
    if split is not None:
        s[out].split(0, split)
    prog = ks.lower(s)
    inputs = ks.random_inputs(out)
    np.testing.assert_array_equal(ks.run_tiled(prog, inputs), ks.evaluate(out, inputs))
    if split is None:
        assert prog.kernels[0].tiling_value("tile_rows") > 1
        _twin_equals_interpreter(out, twin_cache)


@pytest.mark.parametrize("n", [1, 7, 16, 64, 128, 1000])
def test_a_1d_tensor_is_one_row_not_a_runtime_row_count(n: int, twin_cache: Path) -> None:
    """A 1-D tensor has no leading dimension to take at run time: its kernel keeps the lowered shape (main.cpp
    once declared `const int64_t rows = ;` for it), and golden == run_tiled == twin."""
    from .reference import three_way

    out = ks.exp(ks.placeholder((n,), "float16", name="x"))
    prog = ks.lower(ks.create_schedule(out), target="ascend910b2")
    assert prog.kernels[0].runtime_rows is None
    assert "rows = ;" not in ks.codegen(prog).files["main.cpp"]
    three_way(out, prog, twin_cache)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [(3, 17, 1), (1, 16, 1), (2, 8, 1)])
def test_a_row_statistic_of_one_column_rows_stays_block_aligned(shape: tuple[int, ...], dtype: str,
                                                               twin_cache: Path) -> None:
    """A matmul with N = 1 then layer_norm: its rows are one column, so the per-row statistics (mean, variance)
    are tiles of one column too, laid out like every tile they meet, rows 32 bytes apart (a packed column made
    `Adds` read from byte 388 of VECCALC); golden == run_tiled == twin."""
    from .reference import three_way

    out = ks.layer_norm(ks.matmul(ks.placeholder(shape, dtype, name="a"), ks.placeholder((1, 1), dtype, name="b")))
    prog = ks.lower(ks.create_schedule(out), target="ascend910b2")
    cols = [b for k in prog.kernels for b in k.buffers if b.name.endswith("_col")]
    assert cols and all(b.cols * ks.ir.itemsize(b.dtype) == 32 for b in cols), cols
    three_way(out, prog, twin_cache)


@pytest.mark.parametrize("op", ["leaky_relu", "abs"])
@pytest.mark.parametrize("shape, dtype", [((7,), "float16"), ((128,), "float32"), ((3, 1), "float16"),
                                          ((2, 3, 5), "float32")])
def test_leaky_relu_and_abs_of_small_tensors_compile_and_agree(op: str, shape: tuple[int, ...], dtype: str,
                                                             twin_cache: Path) -> None:
    """The random kernels that once failed to compile ("main.cpp: expected primary-expression") were
    leaky_relu / abs of 1-D tensors: the empty `rows = ;` above (before its fix, leaky_relu of a (7,) tensor
    failed with exactly "main.cpp:27:26: error: expected primary-expression"). 1-D, one-column and 3-D shapes."""
    from .reference import three_way

    x = ks.placeholder(shape, dtype, name="x")
    out = ks.leaky_relu(x, 0.1) if op == "leaky_relu" else ks.abs(x)
    prog = ks.lower(ks.create_schedule(out), target="ascend910b2")
    assert "= ;" not in ks.codegen(prog).files["main.cpp"]
    three_way(out, prog, twin_cache)
