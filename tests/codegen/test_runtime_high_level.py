"""High-level-API kernels (`codegen(prog, high_level=True)`) take their rows at run time as the basic code does:
one generated kernel, compiled once, runs at the lowered row count and at others (one row, fewer rows than a
tile, tiles that divide the rows, a new tail, more tiles than cores) and matches the golden model; TilingFunc
fills the last tile's API tiling for the run's tail."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, names_of
from tests.codegen.reference import TOL

COLS, TILE_ROWS = 100, 8
LOWERED = 45  # a 5-row tail when lowered
OTHERS = [1, 3, 64, 301]  # fewer rows than a tile, no tail, a 5-row tail again over more tiles than cores


def _design(name: str, dtype: str, rows: int) -> ks.Tensor:
    x = ks.placeholder((rows, COLS), dtype, name="x")
    g = ks.placeholder((COLS,), dtype, name="g")
    b = ks.placeholder((COLS,), dtype, name="b")
    return {"softmax": lambda: ks.softmax(x), "layer_norm": lambda: ks.layer_norm(x, g, b),
            "rms_norm": lambda: ks.rms_norm(x, g)}[name]()


def _lower(out: ks.Tensor):
    s = ks.create_schedule(out)
    s[out].split(0, TILE_ROWS)
    return ks.lower(s, target="ascend910b2")


@pytest.mark.parametrize(("name", "dtype"), [("softmax", "float16"), ("layer_norm", "float16"),
                                             ("rms_norm", "float32")])
def test_high_level_kernel_runs_at_other_row_counts(name: str, dtype: str, twin_cache) -> None:
    prog = _lower(_design(name, dtype, LOWERED))
    assert prog.kernels[0].runtime_rows is not None
    code = codegen(prog, high_level=True)
    names = names_of(prog, prog.kernels[0])
    kernel, host = code.files[names.kernel_file], code.files[names.host_file]
    assert "AscendC::" in kernel and "high_level: not used" not in kernel
    assert f"xGm.SetGlobalBuffer((__gm__ {'half' if dtype == 'float16' else 'float'}*)(x), rows * {COLS});" in kernel
    assert "const int64_t tailRows = rows % 8;" in host and "tiling.set_rows(rows);" in host
    assert code.inputs[0].runtime_dims == 1
    rtol, atol = TOL[dtype]
    for rows in [LOWERED, *OTHERS]:
        out = _design(name, dtype, rows)
        inputs = ks.random_inputs(out, seed=rows)
        got = twin.run(code, inputs, cache_dir=twin_cache)
        want = ks.evaluate(out, inputs)
        assert got.shape == (rows, COLS)
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=rtol, atol=atol,
                                   err_msg=f"{name} {dtype} at {rows} rows")


def test_the_tail_tiling_is_the_runs(twin_cache, tmp_path, monkeypatch) -> None:
    """TilingFunc fills the last tile's API tiling (the struct after the full tile's, at the end of the tiling
    data) for the run's tail: runs with other tails get other tail structs and the same full-tile struct."""
    prog = _lower(_design("layer_norm", "float16", LOWERED))
    code = codegen(prog, high_level=True)
    op = names_of(prog, prog.kernels[0]).op_type
    fields = len(prog.kernels[0].tiling)
    blobs = {}
    for rows in (43, 45, 301):  # tails of 3, 5 and 5 rows
        monkeypatch.setenv("KS_TWIN_TILING_DUMP", str(tmp_path))
        out = _design("layer_norm", "float16", rows)
        twin.run(code, ks.random_inputs(out, seed=rows), cache_dir=twin_cache)
        blobs[rows] = (tmp_path / f"{op}.tiling.bin").read_bytes()
    size = (len(blobs[45]) - 4 * fields) // 2
    full = {r: b[4 * fields:4 * fields + size] for r, b in blobs.items()}
    tail = {r: b[4 * fields + size:] for r, b in blobs.items()}
    assert size > 0 and len(set(full.values())) == 1
    assert tail[45] == tail[301] != tail[43]
