"""Operands broadcast inside the row dims ([4,1,64] on [4,8,64]) are gathered row by row:
golden == run_tiled == twin, fused and unfused."""

from __future__ import annotations

import pytest

import kernelstudio as ks

from . import reference


def _cases():
    x = ks.placeholder((4, 8, 64), "float16", name="x")
    y = ks.placeholder((4, 1, 64), "float16", name="y")
    z = ks.placeholder((4, 1, 1), "float16", name="z")
    return {
        "add_middle_broadcast": x + y,
        "chain": ks.relu(x * y) + 1.0,
        "column_broadcast": x * z,  # [4,1,1] on [4,8,64]: a column vector of the [32, 64] view
        "softmax_of_broadcast_sum": ks.softmax(x + y),
        "broadcast_to": ks.broadcast_to(y, (4, 8, 64)) * 2.0,
    }


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("name", sorted(_cases()))
def test_inner_broadcast_three_way(name: str, fuse: bool, twin_cache) -> None:
    out = _cases()[name]
    reference.three_way(out, reference.lower(out, fuse=fuse), twin_cache)


def test_row_gather_is_in_the_ir() -> None:
    x = ks.placeholder((4, 8, 64), "float16", name="x")
    y = ks.placeholder((4, 1, 64), "float16", name="y")
    prog = ks.lower(ks.create_schedule(x + y), "ascend910b2")
    assert "gathered row by row" in prog.passes[-1][1]
