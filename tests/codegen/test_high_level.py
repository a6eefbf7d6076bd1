"""codegen(prog, high_level=True): one softmax / layer_norm / rms_norm over whole rows as the Ascend C
high-level API call, checked golden == run_tiled == twin; kernels it does not cover keep the basic code."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.cli import main
from kernelstudio.codegen import codegen
from kernelstudio.core.errors import TwinError

from . import reference

ROWS, COLS, TILE_ROWS = 45, 100, 8  # 45 rows in tiles of 8 leave a 5-row tail; 100 is no multiple of 16


def _design(name: str, dtype: str, rows: int = ROWS, cols: int = COLS) -> ks.Tensor:
    x = ks.placeholder((rows, cols), dtype, name="x")
    g = ks.placeholder((cols,), dtype, name="g")
    b = ks.placeholder((cols,), dtype, name="b")
    return {"softmax": lambda: ks.softmax(x), "layer_norm": lambda: ks.layer_norm(x, g, b),
            "rms_norm": lambda: ks.rms_norm(x, g), "layer_norm_plain": lambda: ks.layer_norm(x, eps=1e-3),
            "rms_norm_plain": lambda: ks.rms_norm(x)}[name]()


def _lower(out: ks.Tensor, tile_rows: int | None = TILE_ROWS):
    s = ks.create_schedule(out)
    if tile_rows is not None:
        s[out].split(0, tile_rows)
    return ks.lower(s, target="ascend910b2")


def _kernel_file(code) -> str:
    (name,) = [f for f in code.files if f.startswith("op_kernel/")]
    return code.files[name]


def _three_way(out: ks.Tensor, prog, cache, **codegen_kw) -> str:
    inputs = ks.random_inputs(out, seed=3)
    golden = np.asarray(ks.evaluate(out, inputs), dtype=np.float32)
    tiled = np.asarray(ks.run_tiled(prog, inputs), dtype=np.float32)
    code = codegen(prog, **codegen_kw)
    got = np.asarray(twin.run(code, inputs, cache_dir=cache), dtype=np.float32)
    rtol, atol = reference.TOL[prog.tensor(prog.outputs[0]).dtype]
    np.testing.assert_allclose(tiled, golden, rtol=rtol, atol=atol, err_msg="run_tiled vs golden")
    np.testing.assert_allclose(got, golden, rtol=rtol, atol=atol, err_msg="twin vs golden")
    np.testing.assert_allclose(got, tiled, rtol=rtol, atol=atol, err_msg="twin vs run_tiled")
    return _kernel_file(code)


API = {"softmax": "SoftMax", "layer_norm": "LayerNorm", "rms_norm": "RmsNorm", "layer_norm_plain": "LayerNorm",
       "rms_norm_plain": "RmsNorm"}


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("name", ["softmax", "layer_norm", "rms_norm"])
def test_high_level_three_way(name: str, dtype: str, twin_cache) -> None:
    out = _design(name, dtype)
    prog = _lower(out)
    assert prog.kernels[0].tiling_value("tile_rows") == TILE_ROWS
    src = _three_way(out, prog, twin_cache, high_level=True)
    t = "half" if dtype == "float16" else "float"
    assert f"AscendC::{API[name]}<{t}>(" in src  # the API wrote the numbers, not the basic instructions
    assert "apiTailTiling" in src


@pytest.mark.parametrize("name", ["layer_norm_plain", "rms_norm_plain"])
def test_high_level_without_gamma_or_beta(name: str, twin_cache) -> None:
    """The API always takes gamma (and beta): a design without them gets a row of ones (zeros)."""
    out = _design(name, "float16", rows=33, cols=77)
    src = _three_way(out, _lower(out), twin_cache, high_level=True)
    assert f"AscendC::{API[name]}<half>(" in src and "AscendC::Duplicate(gammaLocal" in src


def test_generated_code_has_the_api_call_and_its_tiling_only_with_the_option() -> None:
    prog = _lower(_design("softmax", "float16"))
    on, off = codegen(prog, high_level=True), codegen(prog)
    host, header = "op_host/softmax_custom.cpp", "op_host/softmax_custom_tiling.h"
    k_on, k_off = _kernel_file(on), _kernel_file(off)
    assert "AscendC::SoftMax<half>(yLocal, sumLocal, maxLocal, xLocal, tmpLocal, apiTiling" in k_on
    assert "AscendC::SoftMaxShapeInfo{static_cast<uint32_t>(rlen), 112, static_cast<uint32_t>(rlen), 100}" in k_on
    assert "WholeReduceMax" not in k_on and "not this call" in k_on  # the simulator's caveat is stated
    assert "TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmaxTilingData);" in on.files[header]
    assert "TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmaxTailTilingData);" in on.files[header]
    assert "AscendC::SoftMaxTilingFunc(srcShape, 2, " in on.files[host]
    assert "AscendC::GetSoftMaxMinTmpSize(srcShape, 2, false)" in on.files[host]
    assert "SoftMax" not in k_off.replace("SoftmaxCustom", "") and "WholeReduceMax" in k_off
    assert "SoftMaxTiling" not in off.files[header] and "SoftMaxTilingFunc" not in off.files[host]
    assert off.files == codegen(prog, high_level=False).files


@pytest.mark.parametrize("name, call, tiling_fn", [
    ("layer_norm", "AscendC::LayerNorm<float>(yLocal, meanLocal, varianceLocal, xLocal, gammaLocal, betaLocal",
     "AscendC::GetLayerNormNDTilingInfo(srcShape, "),
    ("rms_norm", "AscendC::RmsNorm<float>(yLocal, xLocal, gammaLocal, tmpLocal, 1e-06f, apiTiling);",
     "AscendC::GetRmsNormTilingInfo(srcShape, originShape, "),
])
def test_generated_norm_calls(name: str, call: str, tiling_fn: str) -> None:
    code = codegen(_lower(_design(name, "float32")), high_level=True)
    assert call in _kernel_file(code)
    (host,) = [v for k, v in code.files.items() if k.startswith("op_host/") and k.endswith(".cpp")]
    assert tiling_fn in host


def _tmp_bytes(src: str) -> int:
    line = next(ln for ln in src.splitlines() if "pipe.InitBuffer(tmpBuf, " in ln)
    return int(line.split("pipe.InitBuffer(tmpBuf, ")[1].split(")")[0])


def _edit_kernel(code, old: str, new: str):
    (name,) = [f for f in code.files if f.startswith("op_kernel/")]
    assert old in code.files[name]
    files = dict(code.files)
    files[name] = files[name].replace(old, new)
    return dataclasses.replace(code, files=files)


def test_twin_refuses_a_tmp_buffer_below_the_api_minimum(twin_cache) -> None:
    out = _design("softmax", "float16")
    code = codegen(_lower(out), high_level=True)
    tmp = _tmp_bytes(_kernel_file(code))
    small = _edit_kernel(code, f"pipe.InitBuffer(tmpBuf, {tmp});", "pipe.InitBuffer(tmpBuf, 64);")
    with pytest.raises(TwinError) as err:
        twin.run(small, ks.random_inputs(out, seed=0), cache_dir=twin_cache)
    msg = str(err.value)
    # one row of 112 padded halves: (16 + 112 + 64) float32 (CANN's GetSoftMaxMinTmpSize rule)
    assert "SoftMax" in msg and "holds 64 bytes" in msg and "at least 768" in msg and "GetSoftMaxMinTmpSize" in msg


def test_twin_refuses_a_row_that_is_not_32_byte_aligned(twin_cache) -> None:
    out = _design("softmax", "float16")
    code = _edit_kernel(codegen(_lower(out), high_level=True), "static_cast<uint32_t>(rlen), 112,",
                        "static_cast<uint32_t>(rlen), 100,")
    with pytest.raises(TwinError) as err:
        twin.run(code, ks.random_inputs(out, seed=0), cache_dir=twin_cache)
    msg = str(err.value)
    assert "alignment" in msg and "100 elements of 2 bytes = 200 bytes" in msg and "pad each row to 112" in msg


def test_cube_vector_kernel_keeps_the_basic_code(twin_cache) -> None:
    x = ks.placeholder((32, 64), "float16", name="x")
    w = ks.placeholder((64, 48), "float16", name="w")
    out = ks.layer_norm(ks.matmul(x, w))
    prog = ks.lower(ks.create_schedule(out), target="ascend910b2")
    assert [k.family for k in prog.kernels] == ["cube_vector"]
    src = _three_way(out, prog, twin_cache, high_level=True)
    assert "high_level: not used for this kernel: a cube_vector kernel" in src
    assert "AscendC::LayerNorm" not in src and "Matmul" in src


def test_softmax_over_split_columns_keeps_the_basic_code(twin_cache) -> None:
    out = _design("softmax", "float16", rows=20, cols=300)
    s = ks.create_schedule(out)
    s[out].split(-1, 128)
    prog = ks.lower(s, target="ascend910b2")
    assert prog.kernels[0].tiling_value("tile_cols") < 300
    src = _three_way(out, prog, twin_cache, high_level=True)
    assert "high_level: not used for this kernel: its tiles hold" in src and "AscendC::SoftMax" not in src


def test_lowering_records_only_a_whole_composite() -> None:
    x = ks.placeholder((16, 64), "float16", name="x")
    g = ks.placeholder((64,), "float16", name="g")
    rc = _lower(ks.layer_norm(x, g, eps=1e-4), None).kernels[0].row_composite
    assert (rc.name, rc.x, rc.gamma, rc.beta, rc.eps) == ("layer_norm", "x", "g", "", 1e-4)
    assert _lower(ks.softmax(x) * 2.0, None).kernels[0].row_composite is None  # one op beyond the composite
    assert _lower(ks.exp(x) + 1.0, None).kernels[0].row_composite is None
    bf = ks.placeholder((16, 64), "bfloat16", name="bf")
    assert _lower(ks.softmax(bf), None).kernels[0].row_composite is None


def test_cli_high_level_flag(tmp_path) -> None:
    design = tmp_path / "design.py"
    design.write_text("import kernelstudio as ks\nout = ks.rms_norm(ks.placeholder((16, 64), 'float16', name='x'))\n")
    assert main(["build", str(design), "--out", str(tmp_path / "hl"), "--high-level"]) == 0
    assert main(["build", str(design), "--out", str(tmp_path / "basic")]) == 0
    (hl,) = (tmp_path / "hl" / "op_kernel").glob("*.cpp")
    (basic,) = (tmp_path / "basic" / "op_kernel").glob("*.cpp")
    assert "AscendC::RmsNorm<half>(" in hl.read_text() and "AscendC::RmsNorm" not in basic.read_text()


def test_the_api_tmp_buffer_follows_the_programs_overridden_ub() -> None:
    """The high-level plan's UB budget is the program's own profile (tileir/capacity.py), overrides kept:
    a smaller UB leaves a smaller tmp buffer, then none that holds a row (and the plan says why)."""
    from kernelstudio.codegen.highlevel import _ub_without_tmp, high_level_plan

    prog = _lower(_design("softmax", "float16"))
    plan = high_level_plan(prog, prog.kernels[0])
    assert not isinstance(plan, str), plan
    tiles = _ub_without_tmp(plan)
    chip = ks.hw.get("ascend910b2")
    half = dataclasses.replace(prog, profile=chip.with_overrides(ub_bytes=tiles + plan.tmp_bytes // 2 // 32 * 32))
    smaller = high_level_plan(half, half.kernels[0])
    assert not isinstance(smaller, str) and smaller.tmp_bytes == plan.tmp_bytes // 2 // 32 * 32
    none = dataclasses.replace(prog, profile=chip.with_overrides(ub_bytes=tiles + 32))
    why = high_level_plan(none, none.kernels[0])
    assert isinstance(why, str) and f"UB ({tiles + 32} B) leaves 32 B" in why
