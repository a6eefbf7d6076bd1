"""Cast rounding modes on the twin, and bfloat16 round-to-nearest-even against kernelstudio.core.dtypes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.dtypes import from_bf16_bits, round_to, to_bf16_bits
from kernelstudio.twin import run

from .conftest import load_bundle

LEN = 256
HALF_OUTS = ("h_rint", "h_round", "h_floor", "h_ceil", "h_trunc")
CAST = load_bundle(
    "cast_modes",
    (TensorSpec("x", (LEN,), "float32"), TensorSpec("xb", (LEN,), "bfloat16")),
    (
        TensorSpec("b16", (LEN,), "bfloat16"),
        *(TensorSpec(n, (LEN,), "float16") for n in HALF_OUTS),
        TensorSpec("i_round", (LEN,), "int32"),
        TensorSpec("i_floor", (LEN,), "int32"),
        TensorSpec("xb_float", (LEN,), "float32"),
    ),
)


def cast_inputs() -> np.ndarray:
    """Floats whose low 16 bits sit exactly on, just below and just above bfloat16 ties."""
    rng = np.random.default_rng(4)
    base = rng.uniform(-1000, 1000, LEN).astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    low = np.resize(np.array([0x8000, 0x7FFF, 0x8001, 0x0000, 0x1234, 0xC000], dtype=np.uint32), LEN)
    x = (base | low).view(np.float32).copy()
    x[:8] = [2.5, -2.5, 3.5, -0.5, 1 + 2.0**-11, -(1 + 3 * 2.0**-11), 0.0, -1e-9]
    return x


def half_directed(x: np.ndarray) -> dict[str, np.ndarray]:
    h = x.astype(np.float16)
    hv = h.astype(np.float32)
    down = np.where(hv > x, np.nextafter(h, np.float16(-np.inf)), h)
    up = np.where(hv < x, np.nextafter(h, np.float16(np.inf)), h)
    tie = (x - down.astype(np.float32) == up.astype(np.float32) - x) & (hv != x)
    return {
        "h_rint": h,
        "h_round": np.where(tie, np.where(x > 0, up, down), h),
        "h_floor": down,
        "h_ceil": up,
        "h_trunc": np.where(x > 0, down, up),
    }


def test_bfloat16_cast_rounds_to_nearest_even_like_dtypes(twin_cache: Path) -> None:
    x = cast_inputs()
    xb = round_to("bfloat16", np.float32(3.0) * x)
    out = run(CAST, {"x": x, "xb": xb}, cache_dir=twin_cache, by_name=True)
    np.testing.assert_array_equal(to_bf16_bits(out["b16"]), to_bf16_bits(x))
    np.testing.assert_array_equal(out["b16"], from_bf16_bits(to_bf16_bits(x)))
    assert (to_bf16_bits(x) != (x.view(np.uint32) >> 16)).any()  # some values really round up
    np.testing.assert_array_equal(out["xb_float"], xb)


def test_half_and_int_cast_modes(twin_cache: Path) -> None:
    x = cast_inputs()
    out = run(CAST, {"x": x, "xb": round_to("bfloat16", x)}, cache_dir=twin_cache, by_name=True)
    for name, want in half_directed(x).items():
        np.testing.assert_array_equal(out[name], want, err_msg=name)
    np.testing.assert_array_equal(out["i_round"], (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(np.int32))
    np.testing.assert_array_equal(out["i_floor"], np.floor(x).astype(np.int32))
    assert out["i_round"][:4].tolist() == [3, -3, 4, -1]
