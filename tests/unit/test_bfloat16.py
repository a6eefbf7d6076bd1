"""bfloat16 as `ml_dtypes.bfloat16` arrays: the dtype helpers, bfloat16 in and out of random_inputs /
evaluate / run_tiled, float32 holders of older code, other frameworks' arrays through `__array__` or
DLPack (fakes here: no framework is imported), and the input errors. The twin's side of the same:
tests/golden/test_bfloat16_three_way.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen.bundle import TensorSpec
from kernelstudio.core.checks import input_array
from kernelstudio.core.dtypes import (
    BFLOAT16,
    compute_dtype,
    from_bf16_bits,
    is_float,
    numpy_dtype,
    round_to,
    storage_dtype,
    to_bf16_bits,
)
from kernelstudio.core.errors import InputError, KernelStudioError
from kernelstudio.twin import runner

BF16 = np.dtype(ml_dtypes.bfloat16)


def chain() -> ks.Tensor:
    x = ks.placeholder((24, 40), "bfloat16", name="x")
    g = ks.placeholder((40,), "bfloat16", name="g")
    return ks.relu(x * g - 0.25) + ks.sigmoid(x)


def matmul_rms_norm() -> ks.Tensor:
    a = ks.placeholder((32, 64), "bfloat16", name="a")
    w = ks.placeholder((64, 48), "bfloat16", name="w")
    gamma = ks.placeholder((48,), "bfloat16", name="gamma")
    return ks.rms_norm(ks.matmul(a, w), gamma)


class ArrayLike:
    """Another framework's array as NumPy sees it: only `__array__` (a torch CPU tensor, a JAX array)."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._a if dtype is None else self._a.astype(dtype)


class DLPackOnly:
    """An array reachable only through DLPack (`__dlpack__` and `__dlpack_device__`)."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __dlpack__(self, **kw: Any) -> Any:
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._a.__dlpack_device__()


class OnDevice(DLPackOnly):
    """A device tensor: DLPack refuses to hand it to the CPU."""

    def __dlpack__(self, **kw: Any) -> Any:
        raise BufferError("the tensor is on a CUDA device. Copy it to the host")

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)  # kDLCUDA


class RefusesArray:
    """`__array__` that fails, as a torch bfloat16 tensor's does, and no DLPack."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("Got unsupported ScalarType BFloat16")


# --- dtype helpers -------------------------------------------------------------------------------------


def test_bfloat16_numpy_dtypes() -> None:
    assert numpy_dtype("bfloat16") == storage_dtype("bfloat16") == BFLOAT16 == BF16
    assert compute_dtype("bfloat16") == np.float32
    assert compute_dtype("float16") == np.float16 and numpy_dtype("int8") == np.int8
    assert is_float(BF16) and is_float(np.dtype(np.float16)) and is_float(np.dtype(ml_dtypes.float8_e4m3fn))
    assert not is_float(np.dtype(np.int32)) and not is_float(np.dtype("V4")) and not is_float(np.dtype([("a", "f4")]))
    assert ks.core.dtypes.check_dtype(BF16) == "bfloat16"


def _old_bits(f: np.ndarray) -> np.ndarray:
    """The bit-trick rounding kernelstudio used before ml_dtypes (nearest even on the float32 pattern)."""
    u = f.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_round_to_bfloat16_is_nearest_even_on_every_float32_pattern() -> None:
    rng = np.random.default_rng(7)
    f = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    f = np.concatenate([f, np.float32([0.0, -0.0, np.inf, -np.inf, 1e-45, 3.4e38, 1 + 2**-8, 1 + 3 * 2**-8])])
    got = round_to("bfloat16", f)
    assert got.dtype == BF16
    ok = ~np.isnan(f)
    np.testing.assert_array_equal(got.view(np.uint16)[ok], _old_bits(f)[ok])
    assert np.isnan(got[~ok].astype(np.float32)).all()
    np.testing.assert_array_equal(to_bf16_bits(f)[ok], _old_bits(f)[ok])
    np.testing.assert_array_equal(from_bf16_bits(got.view(np.uint16)), got.astype(np.float32))


def test_round_to_from_bfloat16_arrays() -> None:
    b = np.array([1.5, -2.75, 300.0, 1e-3], BF16)
    assert round_to("bfloat16", b) is not b and round_to("bfloat16", b).dtype == BF16
    np.testing.assert_array_equal(round_to("float32", b), b.astype(np.float32))
    assert round_to("int8", b).tolist() == [1, -2, 44, 0]  # truncate, then wrap like a C cast (300 -> 44)
    assert round_to("float16", b).dtype == np.float16


# --- bfloat16 in and out --------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [chain, matmul_rms_norm], ids=["chain", "matmul_rms_norm"])
def test_bfloat16_in_and_out_of_evaluate_and_run_tiled(make) -> None:
    out = make()
    inputs = ks.random_inputs(out)
    assert all(v.dtype == BF16 for v in inputs.values())
    s = ks.create_schedule(out)
    prog = ks.lower(s)
    golden, planned, tiled = ks.evaluate(out, inputs), ks.evaluate(out, inputs, schedule=s), ks.run_tiled(prog, inputs)
    assert golden.dtype == planned.dtype == tiled.dtype == BF16
    f32 = np.float32
    np.testing.assert_allclose(tiled.astype(f32), golden.astype(f32), rtol=5e-2, atol=5e-2)
    if make is chain:  # a vector kernel: the plan's golden model is the interpreter, bit for bit
        np.testing.assert_array_equal(planned.view(np.uint16), tiled.view(np.uint16))


def test_float32_holders_still_work() -> None:
    """Older code passes float32 arrays: bfloat16-exact values are taken as they are, others rounded."""
    out = chain()
    prog = ks.lower(ks.create_schedule(out))
    inputs = ks.random_inputs(out)
    want_g, want_t = ks.evaluate(out, inputs), ks.run_tiled(prog, inputs)
    holders = {k: v.astype(np.float32) for k, v in inputs.items()}
    np.testing.assert_array_equal(ks.evaluate(out, holders), want_g)
    np.testing.assert_array_equal(ks.run_tiled(prog, holders), want_t)
    rng = np.random.default_rng(3)
    raw = {k: rng.standard_normal(v.shape).astype(np.float32) for k, v in inputs.items()}  # not bf16-exact
    rounded = {k: round_to("bfloat16", v) for k, v in raw.items()}
    np.testing.assert_array_equal(ks.evaluate(out, raw), ks.evaluate(out, rounded))
    np.testing.assert_array_equal(ks.run_tiled(prog, raw), ks.run_tiled(prog, rounded))


def test_other_real_dtypes_are_rounded_to_the_placeholder() -> None:
    """As for every dtype: any real array is rounded to the placeholder's dtype (nearest even)."""
    x = ks.placeholder((4,), "bfloat16", name="x")
    h = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-7, 65504.0], np.float16)  # float16 keeps more bits
    got = ks.evaluate(x, {"x": h})
    assert got.dtype == BF16 and got.astype(np.float32).tolist() == [1.0, 1.015625, 1.0078125, 65536.0]
    y = ks.placeholder((3,), "float16", name="y")  # bfloat16 arrays feed other dtypes exactly upcast
    assert ks.evaluate(y, {"y": np.array([0.5, 3.0, 1.0078125], BF16)}).tolist() == [0.5, 3.0, 1.0078125]
    i = ks.placeholder((2,), "int32", name="i")
    assert ks.evaluate(i, {"i": np.array([2.75, -3.5], BF16)}).tolist() == [2, -3]


# --- other frameworks' arrays -----------------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [ArrayLike, DLPackOnly], ids=["__array__", "dlpack"])
def test_arrays_of_other_frameworks(wrap) -> None:
    out = chain()
    prog = ks.lower(ks.create_schedule(out))
    inputs = ks.random_inputs(out)
    f32 = {k: v.astype(np.float32) for k, v in inputs.items()}  # DLPack has no bfloat16 NumPy can read
    wrapped = {k: wrap(v) for k, v in f32.items()}
    np.testing.assert_array_equal(ks.evaluate(out, wrapped), ks.evaluate(out, inputs))
    np.testing.assert_array_equal(ks.run_tiled(prog, wrapped), ks.run_tiled(prog, inputs))
    if wrap is ArrayLike:  # a JAX bfloat16 array gives ml_dtypes.bfloat16 through __array__
        np.testing.assert_array_equal(ks.evaluate(out, {k: wrap(v) for k, v in inputs.items()}),
                                      ks.evaluate(out, inputs))


def test_input_array_reads_dlpack_without_copying() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = input_array("evaluate", "x", (2, 3), "bfloat16", DLPackOnly(a))
    assert np.shares_memory(got, a) and got.dtype == np.float32


# --- errors -----------------------------------------------------------------------------------------------

BAD: list[tuple[str, Any, tuple[str, ...]]] = [
    ("neither", object(), ("input 'x' has type object", "neither __array__ nor __dlpack__", "[24,40] bfloat16",
                            "pass a NumPy array")),
    ("array_fails", RefusesArray(), ("RefusesArray", "__array__ failed: Got unsupported ScalarType BFloat16",
                                     "[24,40] bfloat16", "upcast it to float32")),
    ("on_device", OnDevice(np.zeros((24, 40), np.float32)),
     ("OnDevice", "DLPack failed: the tensor is on a CUDA device", "move it to host memory")),
    ("shape", ArrayLike(np.zeros((40, 24), BF16)), ("has shape [40,24] but placeholder x is [24,40] bfloat16",
                                                    "reshape the array")),
    ("strings", np.full((24, 40), "a"), ("input 'x' has dtype <U1", "expected numbers for bfloat16 [24,40]",
                                          "pass a NumPy array of numbers")),
    ("complex", np.ones((24, 40), np.complex64), ("complex64", "imaginary part", "x.real")),
]


def _calls() -> dict[str, Any]:
    out = chain()
    g = ks.random_inputs(out)["g"]
    prog = ks.lower(ks.create_schedule(out))
    return {"evaluate": lambda x: ks.evaluate(out, {"x": x, "g": g}),
            "run_tiled": lambda x: ks.run_tiled(prog, {"x": x, "g": g})}


@pytest.mark.parametrize("call", ["evaluate", "run_tiled"])
@pytest.mark.parametrize("case", [c[0] for c in BAD])
def test_input_errors_name_the_placeholder_and_a_way_out(call: str, case: str) -> None:
    _, value, frags = next(c for c in BAD if c[0] == case)
    with pytest.raises(InputError) as info:
        _calls()[call](value)
    assert isinstance(info.value, KernelStudioError)
    for frag in frags:
        assert frag in str(info.value), (frag, str(info.value))


# --- the twin's wire format (no compiler needed) -------------------------------------------------------


def test_twin_wire_is_the_upper_half_of_float32(tmp_path: Path) -> None:
    spec = TensorSpec("x", (2, 3), "bfloat16")
    f = np.array([[1.0, -2.5, 1 + 2**-8], [3e38, np.inf, 1e-40]], np.float32)
    wire = runner._to_storage(spec, f)
    assert wire.dtype == np.uint16
    np.testing.assert_array_equal(wire, _old_bits(f))
    np.testing.assert_array_equal(runner._to_storage(spec, round_to("bfloat16", f)), wire)  # bf16 in: as is
    wire.astype("<u2").tofile(tmp_path / "x.bin")
    back = runner._read_output(spec, tmp_path / "x.bin", "k")
    assert back.dtype == BF16
    np.testing.assert_array_equal(back.view(np.uint16), wire)


def test_twin_run_time_rows_read_from_bfloat16_and_dlpack_inputs() -> None:
    """A kernel that takes its row count at run time reads it from the first such input, of any form."""
    from types import SimpleNamespace

    code = SimpleNamespace(name="k", inputs=[TensorSpec("x", (8, 64), "bfloat16", 1),
                                             TensorSpec("g", (64,), "bfloat16")])
    for x in (np.zeros((5, 64), BF16), DLPackOnly(np.zeros((5, 64), np.float32)), ArrayLike(np.zeros((5, 64), BF16))):
        assert runner._runtime_lead(code, {"x": x, "g": np.zeros(64, BF16)}) == (5,)
    with pytest.raises(InputError, match="input 'x' has shape \\[5,32\\] but placeholder x is \\[8,64\\] bfloat16"):
        runner._runtime_lead(code, {"x": np.zeros((5, 32), BF16), "g": np.zeros(64, BF16)})
