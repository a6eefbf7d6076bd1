"""Cube basic API on the twin: DataCopy into L1, ND2NZ, Load2D, Load3Dv2 img2col over an NC1HWC0 feature map
with FRACTAL_Z weights, Mmad and Fixpipe, and their checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import run

from .conftest import load_bundle

CIN, H, W, COUT, KS, C0 = 32, 6, 6, 16, 3, 16  # C0: 32 bytes of half
C1 = CIN // C0
CUBE_BASIC = load_bundle(
    "cube_basic",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (C1, H, W, C0), "float16"),
     TensorSpec("w", (C1 * KS * KS, COUT // 16, 16, C0), "float16")),
    (TensorSpec("y", (COUT, H * W), "float16"),),
)


def _logical() -> tuple[np.ndarray, np.ndarray]:
    """x [CIN, H, W] and w [COUT, CIN, 3, 3], as a framework holds them."""
    rng = np.random.default_rng(7)
    return (rng.standard_normal((CIN, H, W)).astype(np.float16),
            rng.standard_normal((COUT, CIN, KS, KS)).astype(np.float16))


def nc1hwc0(x: np.ndarray) -> np.ndarray:
    """[C, H, W] -> [C1, H, W, C0]: CANN's NCHW -> NC1HWC0 (reshape to C1, C0, then move C0 last)."""
    c, h, w = x.shape
    return x.reshape(c // C0, C0, h, w).transpose(0, 2, 3, 1).copy()


def fractal_z(w: np.ndarray) -> np.ndarray:
    """[Cout, Cin, kh, kw] -> [C1 * kh * kw, N1, N0, C0] (Cout a multiple of 16, Cin of C0)."""
    co, ci, kh, kw = w.shape
    z = w.reshape(co // 16, 16, ci // C0, C0, kh, kw).transpose(2, 4, 5, 0, 1, 3)  # c1, kh, kw, n1, n0, c0
    return z.reshape(ci // C0 * kh * kw, co // 16, 16, C0).copy()


def _inputs(mode: int) -> dict[str, np.ndarray]:
    x, w = _logical()
    return {"mode": np.array([mode], np.int32), "x": nc1hwc0(x), "w": fractal_z(w)}


def _conv_same_3x3(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """[COUT, H*W] = w [COUT, (c, kh, kw)] @ patches, zero padding 1, stride 1, in float64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, i:i + H, j:j + W] for i in range(KS) for j in range(KS)], axis=1)  # [c, 9, H, W]
    return w.reshape(COUT, -1).astype(np.float64) @ cols.reshape(CIN * KS * KS, H * W)


def test_conv_tile_matches_numpy(twin_cache: Path) -> None:
    """Two k tiles (cmatrixInitVal true, then false) in the chip's K order, two C1 blocks, img2col with
    padding, NZ2ND with f32 -> f16."""
    got = run(CUBE_BASIC, _inputs(0), cache_dir=twin_cache).astype(np.float64)
    want = _conv_same_3x3(*_logical())
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=3e-2)
    assert np.abs(want).max() > 5  # the check is not vacuous


def test_a_kernel_for_channel_planes_gets_scrambled_numbers(twin_cache: Path) -> None:
    """Mode 14 is written for channel planes: x NCHW copied plane by plane, weights ND [COUT, (c, kh, kw)].
    Load3Dv2 reads [C1][H][W][C0] and orders K (c1, kh, kw, c0), so the layout is enforced: its numbers
    are wrong, while the same data in NC1HWC0 / FRACTAL_Z (mode 0) gives the convolution."""
    x, w = _logical()
    planes = {"mode": np.array([14], np.int32), "x": x.reshape(C1, H, W, C0), "w": w.reshape(C1 * KS * KS, 1, 16, C0)}
    got = run(CUBE_BASIC, planes, cache_dir=twin_cache).astype(np.float64)
    want = _conv_same_3x3(x, w)
    err = np.abs(got - want)
    assert err.max() > 0.5 * np.abs(want).max(), err.max()
    assert np.mean(err > 0.1) > 0.9  # nearly every output is off, not a stray tap


@pytest.mark.parametrize(
    ("mode", "fragments"),
    [
        (1, ["bounds:", "LoadData(B2 <- B1, LoadData3DParamsV2{", "mExtension=37",
             "output pixels [0, 37) run past the 6 x 6 = 36 pixels"]),
        (2, ["bounds:", "patch columns [272, 304) run past K = channelSize 32 x 3 x 3 = 288 (ordered c1, kh, kw, c0)"]),
        (3, ["alignment:", "channelSize=8", "whole C0 blocks (16 elements of half; the NC1HWC0 feature map"]),
        (4, ["bounds:", "Mmad(MmadParams{m=32, n=36, k=64", "C needs 1536 elements", "CO1 tensor holds 768"]),
        (5, ["alignment:", "Mmad", "A starts at byte 32 of A2, not on a 512-byte boundary"]),
        (6, ["alignment:", "Fixpipe(GM <- CO1", "starts at byte 32 of CO1, not on a 64-byte boundary"]),
        (7, ["launch:", "quantPre=0", "writing half from float needs quantPre F322F16"]),
        (8, ["alignment:", "LoadData(A2 <- A1, LoadData2DParams{startIndex=0, repeatTimes=4",
             "not on a 512-byte boundary"]),
        (9, ["bounds:", "dstNzC0Stride=8", "smaller than the 16 rows of a column block"]),
        (10, ["bounds:", "srcStride 8 must cover the 16 rows"]),
        (11, ["capacity:", "InitBuffer(TQue<B2, depth 1>, num=1, len=70000)", "65536 bytes (KS_L0B_BYTES)"]),
        (12, ["bounds:", "k=4096", "m, n and k must be 1..4095"]),
        (13, ["launch:", "LoadData(A1 <- B1, LoadData3DParamsV2", "must come from a A2 or B2 queue"]),
    ],
)
def test_cube_basic_checks_raise_twin_error(mode: int, fragments: list[str], twin_cache: Path) -> None:
    with pytest.raises(TwinError) as info:
        run(CUBE_BASIC, _inputs(mode), cache_dir=twin_cache)
    msg = str(info.value)
    assert msg.startswith("kernel 'cube_basic': ")
    for frag in fragments:
        assert frag in msg, (frag, msg)
