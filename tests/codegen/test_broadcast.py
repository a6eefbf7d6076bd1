"""Operands broadcast inside the row dims ([4,1,64] on [4,8,64]) are read one GM row per run of rows that
share it and spread in UB ([T,1,Dr] sin / cos on [T,N,Dr]); ones broadcast along an inner dim with a
strided dim below ([4,1,8,16] on [4,3,8,16]) are gathered row by row: golden == run_tiled == twin."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.tileir.expr import Const
from kernelstudio.tileir.program import Copy, Loop, walk

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


def _gm_copies(prog, tensor: str) -> list:
    return [s for k in prog.kernels for s in walk(k.aiv)
            if isinstance(s, Copy) and s.src.gm and s.src.buf == tensor]


def test_a_run_of_rows_reads_its_row_once() -> None:
    x = ks.placeholder((4, 8, 64), "float16", name="x")
    y = ks.placeholder((4, 1, 64), "float16", name="y")
    prog = ks.lower(ks.create_schedule(x + y), "ascend910b2")
    text = prog.passes[-1][1]
    assert "one row per run of 8 rows" in text and "the run's row into its other rows" in text
    assert "gathered row by row" not in text
    (copy,) = _gm_copies(prog, "y")  # one copy of one row (per run), not one per tile row
    assert copy.src.rows == Const(1)


def _rope(t: int, n: int, dr: int):
    q = ks.placeholder((t, n, dr), "bfloat16", name="q")
    sin = ks.placeholder((t, 1, dr), "bfloat16", name="rope_sin")
    cos = ks.placeholder((t, 1, dr), "bfloat16", name="rope_cos")
    return ks.rope(q, sin, cos, name="query_rope")


@pytest.mark.parametrize("tile_rows", [2, 4, 7])
def test_query_rope_runs_cut_by_tiles_three_way(tile_rows: int, twin_cache) -> None:
    """Tiles of 2, 4 and 7 rows over runs of 3 heads: runs cut at both ends of a tile, several runs in one
    tile, a run of one row in a tile."""
    out = _rope(5, 3, 16)
    reference.three_way(out, reference.lower(out, split=(0, tile_rows)), twin_cache)


def test_query_rope_reads_sin_once_per_run_of_heads() -> None:
    """At 64 tokens x 32 heads the sin / cos copies are one per token and tile, not one per (token, head)."""
    prog = ks.lower(ks.create_schedule(_rope(64, 32, 64)), "ascend910b2")
    k = next(k for k in prog.kernels if k.name == "query_rope")
    rows = dict(k.tiling)["tile_rows"]
    assert rows > 1
    (copy,) = _gm_copies(prog, "rope_sin")
    assert copy.src.rows == Const(1)
    loop = next(s for s in walk(k.aiv) if isinstance(s, Loop) and s.var == "g_rope_sin")
    assert "run of 32 rows" in loop.comment


def test_a_strided_inner_broadcast_is_still_gathered_row_by_row(twin_cache) -> None:
    x = ks.placeholder((4, 3, 8, 16), "float16", name="x")
    y = ks.placeholder((4, 1, 8, 16), "float16", name="y")
    out = x * y
    prog = reference.lower(out)
    assert "gathered row by row" in prog.passes[-1][1]
    reference.three_way(out, prog, twin_cache)
