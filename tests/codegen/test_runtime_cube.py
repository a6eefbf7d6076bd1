"""Matmul kernels that take their M, and conv kernels that take their batch, at run time: one generated
kernel (cube, or cube + vector epilogue), compiled once, runs at the shape it was lowered for and at others
(one row, tails, more tiles than the lowered cores) and matches the golden model and the interpreter lowered
at that shape."""

from __future__ import annotations

import os

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen
from kernelstudio.codegen.cube import TCUBE_TILING_FIELDS
from kernelstudio.core.errors import InputError
from kernelstudio.tileir.expr import free_vars
from kernelstudio.tileir.program import Let, walk
from tests.codegen.reference import TOL
from tests.reference_kernels import conv_bias_relu, mla_prolog_lite

TARGET = "ascend910b2"


def _mm(m: int, k: int = 256, n: int = 512):
    return (ks.placeholder((m, k), "float16", name="x"), ks.placeholder((k, n), "float16", name="w"))


def matmul(m: int = 300) -> ks.Tensor:
    return ks.matmul(*_mm(m))


def matmul_bias_gelu(m: int = 300) -> ks.Tensor:
    """An elementwise epilogue: C tiles handed over one at a time, 8 along n per tile row."""
    return ks.gelu(ks.matmul(*_mm(m)) + ks.placeholder((512,), "float16", name="b"))


def matmul_residual_rms(m: int = 48) -> ks.Tensor:
    """A row-reduction epilogue that also reads a full [M, N] tensor and a column vector with C's rows."""
    x, w = _mm(m, 128, 256)
    r = ks.placeholder((m, 256), "float16", name="r")
    c = ks.placeholder((m, 1), "float16", name="c")
    return ks.rms_norm(ks.matmul(x, w) + r) * c


def mla(m: int = 64) -> ks.Tensor:
    return mla_prolog_lite(m=m)


def conv(n: int = 1) -> ks.Tensor:
    return conv_bias_relu(n=n)


def conv_residual(n: int = 2) -> ks.Tensor:
    """A bias with a batch of one (broadcast to every image) and a residual of the output's whole shape."""
    x = ks.placeholder((n, 16, 12, 12), "float16", name="x")
    w = ks.placeholder((32, 16, 3, 3), "float16", name="w")
    b = ks.placeholder((1, 32, 1, 1), "float16", name="b")
    r = ks.placeholder((n, 32, 12, 12), "float16", name="r")
    return ks.relu(ks.conv2d(x, w, padding="SAME") + b + r)


def _column_major(s) -> None:
    s[s.kernels[0].name].reorder("n", "m")


def _c_steps_along_n(s) -> None:
    s[s.kernels[0].name].split("n", 64).l1_c_steps(1, 4)


# (build, lowered M, other Ms, schedule edit): the others hold one row, a tail tile, and more tiles than cores
CASES = {
    "mla_prolog_lite": (mla, 64, [1, 37, 500], None),
    "matmul": (matmul, 300, [1, 17, 1000], None),
    "matmul_lowered_at_one_row": (matmul, 1, [5, 40], None),
    "matmul_rms_lowered_at_one_row": (lambda m: ks.rms_norm(ks.matmul(*_mm(m, 64, 96))), 1, [3, 50], None),
    "matmul_column_major": (matmul, 300, [33, 700], _column_major),
    "matmul_c_steps_along_n": (matmul, 300, [9, 650], _c_steps_along_n),
    "matmul_bias_gelu": (matmul_bias_gelu, 300, [5, 900], None),
    "matmul_residual_rms": (matmul_residual_rms, 48, [3, 130], None),
    "conv_bias_relu": (conv, 1, [2, 3], None),
    "conv_residual": (conv_residual, 2, [1, 3], None),
}


def _lower(build, m: int, edit=None) -> ks.Program:
    s = ks.create_schedule(build(m), fuse=True)
    if edit is not None:
        edit(s)
    return ks.lower(s, TARGET)


def _kernel_src(code) -> str:
    return code.files[next(p for p in code.files if p.startswith("op_kernel/"))]


def _host_src(code) -> str:
    return code.files[next(p for p in code.files if p.startswith("op_host/") and p.endswith(".cpp"))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_kernel_runs_at_other_m(name, twin_cache):
    build, lowered, others, edit = CASES[name]
    prog = _lower(build, lowered, edit)
    (k,) = prog.kernels
    assert k.family in ("cube", "cube_vector")
    assert k.runtime_rows is not None and k.runtime_rows.rows == ("batch" if name.startswith("conv") else "M")
    code = codegen(prog)  # generated and compiled once, at the lowered shape
    if name.startswith("conv"):
        assert "xGm.SetGlobalBuffer((__gm__ half*)(x), batch * " in _kernel_src(code)  # NC1HWC0 of the run
        assert "nchw_to_nc1hwc0(xGm, xNc1hwc0Gm, xNc1hwc0GmBytes, lead[0], " in code.files["main.cpp"]
    else:
        assert "M * " in _kernel_src(code)  # GM extents from the tiling, not literals
        assert "cubeTiling.SetShape(rows, " in _host_src(code)
    for m in [lowered, *others]:
        out = build(m)
        inputs = ks.random_inputs(out, seed=m + 1)
        golden = ks.evaluate(out, inputs)
        tiled = ks.run_tiled(_lower(build, m, edit), inputs)
        got = twin.run(code, inputs, cache_dir=twin_cache)
        assert got.shape == golden.shape
        rtol, atol = TOL["float16"]
        for want, what in ((golden, "golden"), (tiled, "run_tiled")):
            np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=rtol,
                                       atol=atol, err_msg=f"{name} at M={m}: twin vs {what}")


def test_the_host_computes_m_tiles_cores_and_workspace(tmp_path, twin_cache):
    prog = _lower(mla, 64)
    (k,) = prog.kernels
    tiling = dict(k.tiling)
    assert k.block_dim == 4  # 64 rows in row blocks of 16
    code = codegen(prog)
    host = _host_src(code)
    assert "const int64_t rows = xShape.GetDim(0) * xShape.GetDim(1);" in host
    assert "xShape.GetDim(2) != 256" in host and "wShape.GetDim(0) != 512" in host  # the fixed dims
    assert "static_cast<size_t>(blockDim) * " in host  # a workspace slot block per core of the run
    kernel = _kernel_src(code)
    assert "outWsGm.SetGlobalBuffer((__gm__ half*)(usrWorkspace + 0), blockDim * " in kernel
    assert "(t - blockIdx) / blockDim" in kernel  # the workspace slot follows the run's cores
    dump = tmp_path / "dump"
    dump.mkdir()
    os.environ["KS_TWIN_TILING_DUMP"] = str(dump)
    try:  # 500 rows: 32 row blocks on the schedule's 24 cores, not the 4 of the lowering
        inputs = ks.random_inputs(mla(500), seed=1)
        got = twin.run(code, inputs, cache_dir=twin_cache)
    finally:
        del os.environ["KS_TWIN_TILING_DUMP"]
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ks.evaluate(mla(500), inputs), np.float32),
                               rtol=TOL["float16"][0], atol=TOL["float16"][1])
    fields = np.fromfile(next(dump.iterdir()), dtype=np.int32)
    names = list(tiling)
    assert fields[names.index("M")] == 500
    assert fields[names.index("m_tiles")] == 32 and fields[names.index("tiles")] == 32
    assert fields[names.index("block_dim")] == 24 == k.runtime_rows.cores
    cube = fields[len(names):]  # TCubeTiling follows the kernel's own fields
    assert cube[TCUBE_TILING_FIELDS.index("M")] == 500
    assert cube[TCUBE_TILING_FIELDS.index("usedCoreNum")] == 24
    assert cube[TCUBE_TILING_FIELDS.index("N")] == 512 and cube[TCUBE_TILING_FIELDS.index("Ka")] == 256


def test_the_simulator_and_interpreter_price_the_lowered_shape():
    # the TileIR reads M and m_tiles from its tiling; the readers bind them to the lowered values
    prog = _lower(matmul_bias_gelu, 300)
    (mlen,) = [s for s in walk(prog.kernels[0].aic) if isinstance(s, Let) and s.var == "mlen"]
    assert free_vars(mlen.value) == {"M", "m0"}
    inputs = ks.random_inputs(matmul_bias_gelu(300), seed=3)
    np.testing.assert_allclose(np.asarray(ks.run_tiled(prog, inputs), np.float32),
                               np.asarray(ks.evaluate(matmul_bias_gelu(300), inputs), np.float32),
                               rtol=TOL["float16"][0], atol=TOL["float16"][1])
    assert ks.simulate(prog).time_us > 0


def test_fixed_dims_and_rows_are_checked():
    code = codegen(_lower(matmul_residual_rms, 48))
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.standard_normal(shape).astype(np.float16)

    with pytest.raises(InputError, match=r"input 'r' has shape \[13, 256\] but input 'x' gives the run \[12\]"):
        twin.run(code, {"x": arr(12, 128), "w": arr(128, 256), "r": arr(13, 256), "c": arr(12, 1)})
    with pytest.raises(InputError, match=r"'x' has shape \[12,130\] but placeholder x is \[48,128\].*"
                                         r"the kernel takes \[rows, 128\]"):
        twin.run(code, {"x": arr(12, 130), "w": arr(128, 256), "r": arr(12, 256), "c": arr(12, 1)})
    with pytest.raises(InputError, match=r"\[128,256\]"):  # B is fixed whole
        twin.run(code, {"x": arr(12, 128), "w": arr(128, 250), "r": arr(12, 256), "c": arr(12, 1)})


@pytest.mark.parametrize(("what", "build"), [
    ("a transposed A: its rows are its columns", lambda: ks.matmul(
        ks.placeholder((256, 64), "float16", name="a"), ks.placeholder((256, 128), "float16", name="b"),
        transpose_a=True)),
    ("a batched B: M is per batch", lambda: ks.matmul(
        ks.placeholder((2, 64, 256), "float16", name="a"), ks.placeholder((2, 256, 128), "float16", name="b"))),
    ("several batches of A: the kernel walks them", lambda: ks.matmul(
        ks.placeholder((3, 40, 256), "float16", name="a"), ks.placeholder((256, 128), "float16", name="b"))),
    ("a conv with a per-image channel scale: not the output's whole shape", lambda: ks.relu(
        ks.conv2d(ks.placeholder((2, 16, 8, 8), "float16", name="x"), ks.placeholder((32, 16, 3, 3), "float16",
                                                                                     name="w"), padding="SAME")
        * ks.placeholder((2, 32, 1, 1), "float16", name="s"))),
])
def test_kernels_whose_rows_are_not_a_runs_keep_their_shapes(what, build):
    prog = ks.lower(ks.create_schedule(build(), fuse=True), TARGET)
    assert all(k.runtime_rows is None for k in prog.kernels if k.family != "vector"), what
    code = codegen(prog)
    assert "The schedule was lowered for these shapes" in _host_src(code)
    assert all(t.runtime_dims == 0 for t in (*code.inputs, *code.outputs))


def test_a_swizzled_walk_keeps_the_lowered_shape():
    s = ks.create_schedule(matmul(300))
    s[s.kernels[0].name].swizzle(group=2, direction="m")
    assert ks.lower(s, TARGET).kernels[0].runtime_rows is None
    s = ks.create_schedule(matmul(300))
    s[s.kernels[0].name].l1_c_steps(2, 1)  # groups of tile rows: M's units are groups
    assert ks.lower(s, TARGET).kernels[0].runtime_rows is None


def test_the_exported_readme_says_which_dims_are_the_runs(tmp_path):
    text = (ks.export_project(_lower(conv, 1), tmp_path / "conv") / "README.md").read_text()
    assert "takes its batch at run time: `x`, `relu` may have any first 1 dimension(s)" in text
    text = (ks.export_project(_lower(mla, 64), tmp_path / "mla") / "README.md").read_text()
    assert "takes its row count at run time: `x`, `out` may have any first 2 dimension(s)" in text
