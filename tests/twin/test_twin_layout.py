"""The twin's layout APIs: TopK (with its host tiling), ArithProgression and Transpose, and their checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import run

from .conftest import load_bundle

ROWS, INNER, N, K, KPAD = 4, 64, 60, 5, 8
LAYOUT = load_bundle(
    "layout_apis",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (ROWS, INNER), "float32"),
     TensorSpec("h", (16, 16), "float16")),
    (TensorSpec("vals", (ROWS, KPAD), "float32"), TensorSpec("idx", (ROWS, KPAD), "int32"),
     TensorSpec("ht", (16, 16), "float16")),
)


def _inputs(mode: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    x = rng.integers(-6, 7, size=(ROWS, INNER)).astype(np.float32)  # few distinct values: many ties
    x[:, N:] = 100.0  # beyond n: never selected
    h = rng.standard_normal((16, 16)).astype(np.float16)
    return {"mode": np.array([mode], dtype=np.int32), "x": x, "h": h}


def _run(mode: int, cache: Path) -> dict[str, np.ndarray]:
    return run(LAYOUT, _inputs(mode), cache_dir=cache, by_name=True)


def test_topk_largest_first_ties_to_lower_index_with_given_indices(twin_cache: Path) -> None:
    inp = _inputs(0)
    out = _run(0, twin_cache)
    x = inp["x"][:, :N]
    order = np.argsort(-x, axis=1, kind="stable")[:, :K]
    np.testing.assert_array_equal(out["vals"][:, :K], np.take_along_axis(x, order, axis=1))
    np.testing.assert_array_equal(out["idx"][:, :K], 100 + 2 * order)  # srcIndex = ArithProgression(100, 2)
    np.testing.assert_array_equal(out["ht"], inp["h"].T)


def test_topk_smallest_first_and_finished_rows(twin_cache: Path) -> None:
    inp = _inputs(1)
    out = _run(1, twin_cache)
    x = inp["x"][:, :N]
    order = np.argsort(x, axis=1, kind="stable")[:, :K]
    np.testing.assert_array_equal(out["vals"][:, :K], np.take_along_axis(x, order, axis=1))
    want = order.copy()
    want[2] = N  # a finished row reports the invalid index n
    np.testing.assert_array_equal(out["idx"][:, :K], want)


@pytest.mark.parametrize(
    ("mode", "fragments"),
    [
        (2, ["bounds:", "TopK(k=61)", "1..n", "n=60"]),
        (3, ["alignment:", "inner=60", "multiple of 32", "pad each row to 64"]),
        (4, ["bounds:", "tmpLocal holds 64 bytes", "GetTopKMaxMinTmpSize"]),
        (5, ["tiling:", "made for inner=64", "inner=32", "TopKTilingFunc"]),
        (6, ["bounds:", "Transpose", "overlap"]),
    ],
)
def test_layout_api_misuse_is_reported(mode: int, fragments: list[str], twin_cache: Path) -> None:
    with pytest.raises(TwinError) as info:
        _run(mode, twin_cache)
    for f in fragments:
        assert f in str(info.value), (f, str(info.value))
