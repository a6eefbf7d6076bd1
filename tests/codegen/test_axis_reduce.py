"""Reductions over axes other than the last: golden == run_tiled == twin, fused and unfused."""

from __future__ import annotations

import pytest

import kernelstudio as ks

from . import reference


def _cases():
    x = ks.placeholder((6, 40, 30), "float16", name="x")
    y = ks.placeholder((64, 300), "float32", name="y")
    return {
        "sum_axis0": ks.reduce_sum(x, axis=0),
        "mean_middle_keepdims": ks.reduce_mean(x, axis=1, keepdims=True),
        "max_leading_two": ks.reduce_max(x, axis=(0, 1)),
        "sum_all": ks.reduce_sum(x),
        "mean_trailing_two": ks.reduce_mean(x, axis=(1, 2)),
        "max_axis0_fp32_then_scale": ks.reduce_max(ks.exp(y), axis=0) * 2.0,
    }


@pytest.mark.parametrize("name", sorted(_cases()))
def test_axis_reductions_three_way(name: str, twin_cache) -> None:
    out = _cases()[name]
    reference.three_way(out, reference.lower(out), twin_cache)


def test_non_adjacent_axes_are_refused() -> None:
    x = ks.placeholder((6, 40, 30), "float16", name="x")
    with pytest.raises(ks.UnsupportedError, match="adjacent axes"):
        ks.lower(ks.create_schedule(ks.reduce_sum(x, axis=(0, 2))), "ascend910b2")
