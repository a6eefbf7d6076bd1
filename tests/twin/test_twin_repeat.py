"""The twin's repeat forms: WholeReduceSum / WholeReduceMax (mask, repeatTime, dstRepStride, srcBlkStride,
srcRepStride), Brcb feeding a binary op with a block stride of 0, Adds with UnaryRepeatParams, and their
checks; plus the call log of each."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import run

from .conftest import load_bundle

ROWS, COLS, STRIDE = 5, 100, 104
REPEAT = load_bundle(
    "repeat_apis",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (ROWS, STRIDE), "float32")),
    (TensorSpec("sum", (8,), "float32"), TensorSpec("mx", (8,), "float32"), TensorSpec("vi", (8,), "float32"),
     TensorSpec("y", (ROWS, STRIDE), "float32"), TensorSpec("z", (ROWS, STRIDE), "float32")),
)


def _inputs(mode: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.integers(-50, 50, size=(ROWS, STRIDE)).astype(np.float32)  # integers: sums are exact
    x[1, 70] = 99.0  # row 1's maximum sits in its second repeat
    x[0, 5] = x[0, 9] = 77.0  # row 0's maximum among its first 64 columns: the first of two equal ones
    return {"mode": np.array([mode], dtype=np.int32), "x": x}


def test_whole_reduce_brcb_and_repeat_strides(twin_cache: Path) -> None:
    inputs = _inputs(0)
    x = inputs["x"]
    out, log = run(REPEAT, inputs, cache_dir=twin_cache, by_name=True, log_calls=True)
    rows = x[:, :COLS]
    np.testing.assert_array_equal(out["sum"][:ROWS], rows.sum(axis=1))
    np.testing.assert_array_equal(out["mx"][:ROWS], rows.max(axis=1))
    vi = out["vi"].view(np.uint32)
    assert out["vi"][0] == x[0, :64].max() and vi[1] == 5  # value then index of the first maximum
    assert out["vi"][2] == x[1, :64].max() and vi[3] == int(np.argmax(x[1, :64]))
    want_y = x.copy()
    want_y[:, :COLS] = rows - rows.sum(axis=1, keepdims=True)
    np.testing.assert_array_equal(out["y"], want_y)  # the pad columns keep x: masked elements are not written
    want_z = x.copy()
    want_z[:, :64] += 1
    np.testing.assert_array_equal(out["z"], want_z)
    counts = log.counts(kernel="repeat_apis")
    assert counts["WholeReduceSum"] == 2 * ROWS + 1 and counts["WholeReduceMax"] == 2 * ROWS + 2
    assert counts["Brcb"] == 1 and counts["Sub"] == 2 * ROWS and counts["Adds"] == 1
    last = log.select(kernel="repeat_apis", api="WholeReduceSum")[-1].args
    assert (last["mask"], last["repeats"], last["srcRepStride"]) == (2, ROWS, 1)
    adds = log.select(kernel="repeat_apis", api="Adds")[0].args
    assert (adds["mask"], adds["repeats"], adds["dstRepStride"]) == (64, ROWS, STRIDE // 8)


@pytest.mark.parametrize(
    ("mode", "fragments"),
    [
        (1, ["bounds:", "WholeReduceSum", "mask 100 outside [1, 64]"]),
        (2, ["alignment:", "WholeReduceSum", "src starts at byte 12"]),
        (3, ["bounds:", "WholeReduceMax", "elements [0, 584)"]),
        (4, ["bounds:", "Sub", "elements [0, 480) of a VECCALC LocalTensor<float> of 64 elements"]),
    ],
)
def test_repeat_misuse_is_reported(mode: int, fragments: list[str], twin_cache: Path) -> None:
    with pytest.raises(TwinError) as info:
        run(REPEAT, _inputs(mode), cache_dir=twin_cache)
    for f in fragments:
        assert f in str(info.value), (f, str(info.value))
