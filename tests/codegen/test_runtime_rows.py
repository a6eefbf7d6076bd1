"""Vector kernels that take their row count at run time: one generated kernel, compiled once, runs at the
shape it was lowered for and at others (tails included) and matches the golden model and the interpreter
lowered at that shape."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen
from kernelstudio.core.errors import InputError
from tests.codegen.reference import TOL, layer_norm, softmax


def chain(rows: int = 37, cols: int = 75) -> ks.Tensor:
    """Full, row-vector, column-vector and scalar operands."""
    x = ks.placeholder((rows, cols), "float16", name="x")
    g = ks.placeholder((cols,), "float16", name="g")
    c = ks.placeholder((rows, 1), "float16", name="c")
    return ks.relu(ks.exp(x * g - c) * 0.5 + ks.sigmoid(x))


def rms_3d(b: int = 2, s: int = 9, h: int = 64) -> ks.Tensor:
    """Rows are the product of two leading dims."""
    return ks.rms_norm(ks.placeholder((b, s, h), "float32", name="x"))


def gelu_f32(rows: int = 40, cols: int = 96) -> ks.Tensor:
    return ks.gelu(ks.placeholder((rows, cols), "float32", name="x"))


def elementwise_chain(b: int = 4, s: int = 37) -> ks.Tensor:
    """The reference elementwise chain (tests/reference_kernels.py) with its [B, S] rows as parameters."""
    x = ks.placeholder((b, s, 129), "float16", name="x")
    y = ks.placeholder((129,), "float16", name="y")
    z = ks.placeholder((b, s, 1), "float16", name="z")
    return ks.relu((x + y) * 0.5 - z) + ks.exp(-ks.abs(x))


# (build, lowered dims, other dims): the others hold a tail tile, one row, and more tiles than cores
CASES = {
    "elementwise_chain": (elementwise_chain, (4, 37), [(1, 1), (3, 50), (16, 200)]),
    "softmax": (softmax, (45, 100), [(1, 100), (7, 100), (301, 100)]),
    "softmax_lowered_at_one_row": (softmax, (1, 100), [(6, 100), (90, 100)]),
    "layer_norm": (layer_norm, (30, 200), [(2, 200), (61, 200), (500, 200)]),
    "chain": (chain, (37, 75), [(1, 75), (12, 75), (130, 75)]),
    "rms_3d": (rms_3d, (2, 9, 64), [(1, 1, 64), (3, 7, 64), (8, 40, 64)]),
    "gelu_f32": (gelu_f32, (40, 96), [(3, 96), (97, 96)]),
}


def _compare(got, want, dtype: str, what: str) -> None:
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=rtol, atol=atol,
                               err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_kernel_runs_at_other_row_counts(name, twin_cache):
    build, lowered, others = CASES[name]
    prog = ks.lower(ks.create_schedule(build(*lowered)), "ascend910b2")
    (k,) = prog.kernels
    assert k.runtime_rows is not None
    code = codegen(prog)  # generated and compiled once, for the lowered shape
    src = code.files[next(p for p in code.files if p.startswith("op_kernel/"))]
    assert "rows * " in src and "tiling.rows" in src  # GM extents from the tiling, not literals
    for dims in [lowered, *others]:
        out = build(*dims)
        inputs = ks.random_inputs(out, seed=sum(dims))
        golden = ks.evaluate(out, inputs)
        tiled = ks.run_tiled(ks.lower(ks.create_schedule(out), "ascend910b2"), inputs)
        got = twin.run(code, inputs, cache_dir=twin_cache)
        assert got.shape == golden.shape
        dtype = prog.tensor(prog.outputs[0]).dtype
        _compare(got, golden, dtype, f"{name} at {dims}: twin vs golden")
        _compare(got, tiled, dtype, f"{name} at {dims}: twin vs run_tiled")


def test_the_host_computes_tiles_and_cores_from_the_shape(tmp_path, twin_cache):
    prog = ks.lower(ks.create_schedule(softmax(45, 100)), "ascend910b2")
    code = codegen(prog)
    host = code.files[next(p for p in code.files if p.startswith("op_host/") and p.endswith(".cpp"))]
    assert "const int64_t rows = xShape.GetDim(0);" in host
    assert "context->SetBlockDim(blockDim);" in host and "set_tiles(tiles)" in host
    assert "xShape.GetDim(1) != 100" in host  # the fixed dimension is checked
    # the tiling blob the TilingFunc wrote: rows and tiles of the run, not of the lowering
    import os

    dump = tmp_path / "dump"
    dump.mkdir()
    os.environ["KS_TWIN_TILING_DUMP"] = str(dump)
    try:
        twin.run(code, {"x": np.ones((301, 100), np.float16)}, cache_dir=twin_cache)
    finally:
        del os.environ["KS_TWIN_TILING_DUMP"]
    fields = np.fromfile(next(dump.iterdir()), dtype=np.uint32)
    tiling = dict(prog.kernels[0].tiling)
    names = list(tiling)
    assert fields[names.index("rows")] == 301
    tr = tiling["tile_rows"]
    assert fields[names.index("tiles")] == -(-301 // tr)
    assert fields[names.index("block_dim")] == min(-(-301 // tr), 48)


def test_fixed_dims_and_row_dims_are_checked():
    prog = ks.lower(ks.create_schedule(chain()), "ascend910b2")
    code = codegen(prog)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 75)).astype(np.float16)
    g = rng.standard_normal((75,)).astype(np.float16)
    with pytest.raises(InputError, match=r"input 'c' has shape \[13, 1\] but input 'x' gives the run \[12\].*"
                                         r"shape \[12, 1\]"):  # c must have the rows x has
        twin.run(code, {"x": x, "g": g, "c": np.ones((13, 1), np.float16)})
    with pytest.raises(InputError, match=r"'x' has shape \[12,76\] but placeholder x is \[37,75\].*"
                                         r"the kernel takes \[rows, 75\]"):
        twin.run(code, {"x": np.ones((12, 76), np.float16), "g": g, "c": np.ones((12, 1), np.float16)})
    with pytest.raises(InputError, match="at least 1"):
        twin.run(code, {"x": np.ones((0, 75), np.float16), "g": g, "c": np.ones((0, 1), np.float16)})


def test_programs_of_several_kernels_keep_their_shapes():
    # their GM intermediates would need shapes computed at run time too
    prog = ks.lower(ks.create_schedule(ks.softmax(softmax(45, 100)) + 1.0, fuse=False), "ascend910b2")
    assert len(prog.kernels) > 1 and all(k.runtime_rows is not None for k in prog.kernels)
    code = codegen(prog)
    assert all(t.runtime_dims == 0 for t in (*code.inputs, *code.outputs))
    assert "runtime_dims" not in code.files["main.cpp"]
    with pytest.raises(InputError, match=r"\[45,100\]"):
        twin.run(code, {"x": np.ones((7, 100), np.float16)})


def test_rows_that_repeat_keep_the_lowered_shape():
    # y's rows repeat every 3 rows of the kernel's space: its rows are not the kernel's, so no run-time rows
    x = ks.placeholder((2, 3, 16), "float16", name="x")
    y = ks.placeholder((3, 16), "float16", name="y")
    prog = ks.lower(ks.create_schedule(ks.exp(x + y)), "ascend910b2")
    assert prog.kernels[0].runtime_rows is None
    assert "GetDim(0) != 2" in codegen(prog).files[next(p for p in codegen(prog).files
                                                       if p.startswith("op_host/") and p.endswith(".cpp"))]


def test_a_bad_dims_file_is_a_twin_error(tmp_path, twin_cache):
    prog = ks.lower(ks.create_schedule(softmax(45, 100)), "ascend910b2")
    code = codegen(prog)
    binary = twin.compile(code, cache_dir=twin_cache)
    np.ones((45, 100), np.float16).tofile(tmp_path / "x.bin")
    (tmp_path / "dims.txt").write_text("45 2\n")
    import subprocess

    proc = subprocess.run([str(binary)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "dims.txt holds 2 row dimension(s); the kernel takes 1" in proc.stderr


def test_the_exported_readme_says_which_dims_are_the_runs(tmp_path):
    prog = ks.lower(ks.create_schedule(rms_3d()), "ascend910b2")
    text = (ks.export_project(prog, tmp_path / "p") / "README.md").read_text()
    assert "takes its row count at run time" in text and "`dims.txt`" in text and "first 2 dimension(s)" in text
    fixed = ks.lower(ks.create_schedule(ks.softmax(softmax()) + 1.0, fuse=False), "ascend910b2")
    assert "TilingFunc rejects other shapes" in (ks.export_project(fixed, tmp_path / "q") / "README.md").read_text()


def test_high_level_kernels_take_their_rows_at_run_time_too():
    # with or without the option the code reads its rows from dims.txt (test_runtime_high_level.py runs them)
    prog = ks.lower(ks.create_schedule(softmax(45, 100)), "ascend910b2")
    assert prog.kernels[0].runtime_rows is not None
    for high_level in (True, False):
        code = codegen(prog, high_level=high_level)
        kernel = code.files[next(p for p in code.files if p.startswith("op_kernel/"))]
        assert ("AscendC::SoftMax" in kernel) is high_level
        assert all(t.runtime_dims == 1 for t in (*code.inputs, *code.outputs))
        assert "dims.txt" in code.files["main.cpp"]
