"""Cube basic API on the twin: ND2NZ DataCopy, Load2D, Load3Dv2 img2col, Mmad and Fixpipe, and their checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.errors import TwinError
from kernelstudio.twin import run

from .conftest import load_bundle

CIN, H, W, COUT = 16, 6, 6, 16
CUBE_BASIC = load_bundle(
    "cube_basic",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (CIN, H, W), "float16"),
     TensorSpec("w", (COUT, CIN * 9), "float16")),
    (TensorSpec("y", (COUT, H * W), "float16"),),
)


def _inputs(mode: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {"mode": np.array([mode], np.int32), "x": rng.standard_normal((CIN, H, W)).astype(np.float16),
            "w": rng.standard_normal((COUT, CIN * 9)).astype(np.float16)}


def _conv_same_3x3(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """[COUT, H*W] = w [COUT, (c, kh, kw)] @ patches, zero padding 1, stride 1, in float64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, i:i + H, j:j + W] for i in range(3) for j in range(3)], axis=1)  # [c, 9, H, W]
    return w.astype(np.float64) @ cols.reshape(CIN * 9, H * W)


def test_conv_tile_matches_numpy(twin_cache: Path) -> None:
    """Two k tiles (cmatrixInitVal true, then false), img2col with padding, NZ2ND with f32 -> f16."""
    inp = _inputs(0)
    got = run(CUBE_BASIC, inp, cache_dir=twin_cache).astype(np.float64)
    want = _conv_same_3x3(inp["x"], inp["w"])
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-2)
    assert np.abs(want).max() > 5  # the check is not vacuous


@pytest.mark.parametrize(
    ("mode", "fragments"),
    [
        (1, ["bounds:", "LoadData(B2 <- B1, LoadData3DParamsV2{", "mExtension=37",
             "output pixels [0, 37) run past the 6 x 6 = 36 pixels"]),
        (2, ["bounds:", "patch columns [128, 160) run past K = channelSize 16 x 3 x 3 = 144"]),
        (3, ["alignment:", "channelSize=8", "whole C0 blocks (16 elements of half)"]),
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
