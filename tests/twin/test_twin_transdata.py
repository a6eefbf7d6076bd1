"""The host-side layout transforms (ks_twin/transdata.h) CANN's TransData performs for a conv operator:
NCHW -> NC1HWC0 and [Cout, Cin, kh, kw] -> FRACTAL_Z, zero-padded, for 2- and 4-byte elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import run

from .conftest import load_bundle

N, C, H, W, COUT, KS = 2, 20, 3, 5, 20, 3
C0_HALF, C0_FLOAT = 16, 8  # 32 bytes of half, of float
C1_X, C1_W, N1 = -(-C // C0_HALF), -(-C // C0_FLOAT), -(-COUT // 16)
TRANSDATA = load_bundle(
    "transdata",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (N, C, H, W), "float16"),
     TensorSpec("w", (COUT, C, KS, KS), "float32")),
    (TensorSpec("x5", (N, C1_X, H, W, C0_HALF), "float16"), TensorSpec("wz", (C1_W * KS * KS, N1, 16, C0_FLOAT),
                                                                         "float32")),
)


def _inputs(mode: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    return {"mode": np.array([mode], np.int32), "x": rng.standard_normal((N, C, H, W)).astype(np.float16),
            "w": rng.standard_normal((COUT, C, KS, KS)).astype(np.float32)}


def test_nchw_to_nc1hwc0_and_weights_to_fractal_z(twin_cache: Path) -> None:
    inp = _inputs(0)
    x5, wz = run(TRANSDATA, inp, cache_dir=twin_cache)
    # NC1HWC0: pad C to C1 * C0 with zeros, reshape to [N, C1, C0, H, W], move C0 last
    xp = np.pad(inp["x"], ((0, 0), (0, C1_X * C0_HALF - C), (0, 0), (0, 0)))
    np.testing.assert_array_equal(x5, xp.reshape(N, C1_X, C0_HALF, H, W).transpose(0, 1, 3, 4, 2))
    # FRACTAL_Z: pad Cin to C1 * C0 and Cout to N1 * 16, then [C1, kh, kw, N1, N0, C0]
    wp = np.pad(inp["w"], ((0, N1 * 16 - COUT), (0, C1_W * C0_FLOAT - C), (0, 0), (0, 0)))
    want = wp.reshape(N1, 16, C1_W, C0_FLOAT, KS, KS).transpose(2, 4, 5, 0, 1, 3)
    np.testing.assert_array_equal(wz, want.reshape(C1_W * KS * KS, N1, 16, C0_FLOAT))
    # the padding is zero: channels 20..23 of the last C1 block, output rows 20..31
    assert not x5[:, -1, :, :, C - (C1_X - 1) * C0_HALF:].any() and not wz[:, -1, COUT - 16:, :].any()


def test_a_short_destination_is_reported(twin_cache: Path) -> None:
    need = C1_W * KS * KS * N1 * 16 * C0_FLOAT * 4  # 27648 bytes
    with pytest.raises(TwinError, match=rf"bounds: \[Cout, Cin, kh, kw\] -> FRACTAL_Z needs a {need}-byte destination "
                                        rf"but got {need - 1} bytes"):
        run(TRANSDATA, _inputs(1), cache_dir=twin_cache)
