"""The host half as CANN runs it: main.cpp fills no tiling; each operator's TilingFunc (op_host/<op>.cpp,
registered with OP_ADD) runs on the input shapes and the target's platform, takes its TCubeTiling from the
Matmul tiling API with the schedule's base block as the fixed split, and the kernel reads the blob it saved."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen import codegen, generate_files
from kernelstudio.codegen.cube import TCUBE_TILING_FIELDS
from kernelstudio.codegen.naming import names_of
from kernelstudio.codegen.tiling_header import tiling_values
from kernelstudio.core.errors import TwinError
from kernelstudio.hw.defines import chip_defines
from kernelstudio.twin import run
from kernelstudio.twin.runner import CXX, chip_flags, include_dir

from ..reference_kernels import layer_norm, mla_prolog_lite


def _decode(blob: bytes, fields: list[tuple[str, int]], cube: dict[str, int]) -> tuple[dict, dict]:
    """The kernel's view of a tiling blob: its uint32 fields, then CANN's 50 int32 TCubeTiling fields."""
    words = np.frombuffer(blob, dtype="<u4")
    own = {f: int(v) for (f, _), v in zip(fields, words, strict=False)}
    tc = {}
    if cube:
        tc = {f: int(v) for f, v in zip(TCUBE_TILING_FIELDS, words[len(fields):].view("<i4"), strict=True)}
    return own, tc


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_tiling_func_saves_what_the_schedule_chose(fuse: bool, twin_cache: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    out = mla_prolog_lite(m=48, k=64, n=96)
    prog = ks.lower(ks.create_schedule(out, fuse=fuse), target="ascend910b2")
    code = codegen(prog)
    monkeypatch.setenv("KS_TWIN_TILING_DUMP", str(tmp_path))
    inputs = ks.random_inputs(out, seed=1)
    got = run(code, inputs, cache_dir=twin_cache)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ks.evaluate(out, inputs), np.float32),
                               rtol=2e-2, atol=2e-2)
    cubes = 0
    for k in prog.kernels:
        fields, cube = tiling_values(prog, k)
        blob = (tmp_path / f"{names_of(prog, k).op_type}.tiling.bin").read_bytes()
        assert len(blob) == 4 * len(fields) + (200 if cube else 0)
        own, tc = _decode(blob, fields, cube)
        assert own == dict(fields)
        if cube:
            cubes += 1
            # every field the schedule decides, whether the tiling API derived it or TilingFunc set it after
            assert tc == {f: cube.get(f, 0) for f in TCUBE_TILING_FIELDS}
    assert cubes == 1


def test_tiling_func_refuses_shapes_it_was_not_generated_for(twin_cache: Path) -> None:
    out = mla_prolog_lite(m=48, k=64, n=96)
    prog = ks.lower(ks.create_schedule(out, fuse=True), target="ascend910b2")
    code = codegen(prog)
    op = names_of(prog, prog.kernels[0]).op_type
    main = code.files["main.cpp"]
    # x's rows are the run's (from dims.txt); its K is fixed by the schedule
    call = f'run_tiling("{op}", {{{{lead[0], lead[1], 64}},'
    assert call in main
    bad = dataclasses.replace(code, files={**code.files, "main.cpp": main.replace(call, call.replace("64", "60"))})
    with pytest.raises(TwinError, match=rf"tiling: the TilingFunc of {op} returned GRAPH_FAILED for input shapes "
                                        r"\[1, 48, 60\], \[96, 64\], \[96\]"):
        run(bad, ks.random_inputs(out, seed=1), cache_dir=twin_cache)


def test_an_operator_without_its_host_source_cannot_launch(twin_cache: Path) -> None:
    x = ks.placeholder((16, 64), "float16", name="x")
    out = ks.relu(x)
    code = codegen(ks.lower(ks.create_schedule(out), target="ascend910b2"))
    files = {p: t for p, t in code.files.items() if not (p.startswith("op_host/") and p.endswith(".cpp"))}
    bad = dataclasses.replace(code, files=files)
    with pytest.raises(TwinError, match=r"operator ReluCustom has no TilingFunc: its op_host/\*\.cpp must define"):
        run(bad, ks.random_inputs(out, seed=0), cache_dir=twin_cache)


def test_host_files_are_written_the_cann_way() -> None:
    prog = ks.lower(ks.create_schedule(layer_norm(rows=30, cols=200)), target="ascend910b2")
    files = generate_files(prog)
    (tiling,) = [t for p, t in files.items() if p.endswith("_tiling.h")]
    assert "namespace optiling {" in tiling and "tiling/tiling_api.h" not in tiling  # no TCubeTiling, no TopK
    (kernel,) = [t for p, t in files.items() if p.startswith("op_kernel/")]
    assert "op_host" not in kernel and "template <typename TilingData>" in kernel
    a = ks.placeholder((32, 64), "int8", name="a")
    b = ks.placeholder((64, 48), "int8", name="b")
    host = generate_files(ks.lower(ks.create_schedule(ks.matmul(a, b)), target="ascend910b2"))
    (src,) = [t for p, t in host.items() if p.startswith("op_host/") and p.endswith(".cpp")]
    assert "matmul_tiling::DataType::DT_INT8, false);" in src and "matmul_tiling::DataType::DT_INT32);" in src


API_PROBE = r"""
#include <cstdio>
#include "tiling/tiling_api.h"
using namespace matmul_tiling;
static void types(MultiCoreMatmulTiling& t) {
    t.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
    t.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16, true);
    t.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
}
int main() {
    fe::PlatFormInfos info;  // 910B sizes: L0A/L0B 64 KiB, L0C 128 KiB
    platform_ascendc::PlatformAscendC plat(&info);
    optiling::TCubeTiling c;
    MultiCoreMatmulTiling fixed(plat);
    types(fixed);
    fixed.SetDim(8); fixed.SetShape(512, 1024, 300); fixed.SetOrgShape(512, 1024, 300);
    fixed.SetSingleShape(128, 256, 300); fixed.SetFixSplit(64, 128, 64);
    long r = fixed.GetTiling(c);
    std::printf("fixed %ld %d %d %d %d %d %d %d %d\n", r, c.get_usedCoreNum(), c.get_singleCoreM(),
                c.get_singleCoreN(), c.get_baseM(), c.get_baseN(), c.get_baseK(), c.get_dbL0A(), c.get_dbL0C());
    MultiCoreMatmulTiling free_(plat);
    types(free_);
    free_.SetShape(100, 200, 1000);
    r = free_.GetTiling(c);
    std::printf("free %ld %d %d %d\n", r, c.get_baseM(), c.get_baseN(), c.get_baseK());
    MultiCoreMatmulTiling big(plat);
    types(big);
    big.SetShape(512, 512, 64); big.SetFixSplit(256, 256, 64);  // 256 x 256 x 4 B = 256 KiB > L0C
    std::printf("big %ld\n", big.GetTiling(c));
    MultiCoreMatmulTiling untyped(plat);
    untyped.SetShape(64, 64, 64);
    std::printf("untyped %ld\n", untyped.GetTiling(c));
    MultiCoreMatmulTiling past(plat);
    types(past);
    past.SetShape(64, 64, 64); past.SetSingleShape(96, 64, 64); past.SetFixSplit(128, 64, 64);
    std::printf("past %ld\n", past.GetTiling(c));  // baseM 128 > the 96-row block
    return 0;
}
"""


@pytest.mark.twin
def test_the_twin_matmul_tiling_api(tmp_path: Path) -> None:
    src = tmp_path / "probe.cpp"
    src.write_text(API_PROBE)
    subprocess.run([CXX, "-std=c++17", *chip_flags("ascend910b2"), f"-I{include_dir()}", str(src), "-o",
                    str(tmp_path / "probe")], check=True, capture_output=True)
    lines = dict(line.split(" ", 1) for line in subprocess.run(
        [str(tmp_path / "probe")], check=True, capture_output=True, text=True).stdout.splitlines())
    # the fixed split is kept; 64x64 fp16 fractals fit L0A/L0B twice, 64x128 fp32 fits L0C twice; 4 x 4 blocks
    # of 128 x 256 cover C: usedCoreNum = mDim * nDim
    assert lines["fixed"].split() == ["0", "16", "128", "256", "64", "128", "64", "2", "2"]
    # no fixed split: base block up to 128 x 256 within the (16-padded) block, and the largest baseK (a
    # multiple of 16) whose A and B fractals double-buffer in 64 KiB: 112 x 1008 x 2 x 2 B > 64 KiB, so 144
    m, n, k = (int(v) for v in lines["free"].split()[1:])
    assert lines["free"].split()[0] == "0" and (m, n) == (112, 208)
    assert k % 16 == 0 and 2 * max(m, n) * k * 2 <= 65536 < 2 * max(m, n) * (k + 16) * 2
    assert lines["big"] == "-1" and lines["untyped"] == "-1" and lines["past"] == "-1"


@pytest.mark.twin
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_the_exported_project_builds_with_cmake_and_runs(tmp_path: Path) -> None:
    """The exported CMakeLists.txt builds main.cpp, the kernel (with its tiling struct) and the host source
    against the twin, and the binary computes the design."""
    out = mla_prolog_lite(m=48, k=64, n=96)
    prog = ks.lower(ks.create_schedule(out, fuse=True), target="ascend910b2", name="mla")
    root = ks.export_project(prog, tmp_path / "mla")
    cmake = (root / "CMakeLists.txt").read_text()
    assert cmake.count('COMPILE_OPTIONS "-DKS_TWIN_KERNEL_UNIT;-DKS_TWIN_TILING_STRUCTS;-include;') == 1
    assert " ".join(f"{k}={v}" for k, v in sorted(chip_defines(prog.profile).items())) in cmake
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(root), "-B", str(build), f"-DKS_TWIN_INCLUDE={include_dir()}"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "-j2"], check=True, capture_output=True)
    inputs = ks.random_inputs(out, seed=2)
    for name, value in inputs.items():
        np.asarray(value, np.float16).tofile(tmp_path / f"{name}.bin")
    subprocess.run([str(build / "mla_cpu")], check=True, capture_output=True, cwd=tmp_path)
    got = np.fromfile(tmp_path / "out.bin", np.float16).reshape(1, 48, 96)
    np.testing.assert_allclose(got.astype(np.float32), np.asarray(ks.evaluate(out, inputs), np.float32),
                               rtol=2e-2, atol=2e-2)
