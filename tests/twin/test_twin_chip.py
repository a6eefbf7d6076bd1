"""The chip the twin runs as comes from the hardware profile alone: the runner passes every size and core
count as a -D define, and neither it nor the headers hold a number of their own."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from kernelstudio import hw
from kernelstudio.codegen import CodeBundle, TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import run
from kernelstudio.twin.runner import CXX, capacity_macros, compile_flags, include_dir

SIZE_FIELDS = ("ub_bytes", "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "l2_bytes", "hbm_bytes")

CHIP_KERNEL = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void chip_probe(GM_ADDR out, int32_t bytes)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, bytes);  // the twin checks it against the UB of the chip it was compiled for
    AscendC::GlobalTensor<int32_t> outGm;
    outGm.SetGlobalBuffer((__gm__ int32_t*)out, 4);
    outGm.SetValue(2, static_cast<int32_t>(bytes));
}
"""
CHIP_MAIN = """#include <cstdlib>
#include "data_utils.h"
#include "tikicpulib.h"
#include "tiling/platform/platform_ascendc.h"
extern "C" __global__ __aicore__ void chip_probe(GM_ADDR out, int32_t bytes);
int32_t main()
{
    uint8_t* out = (uint8_t*)AscendC::GmAlloc(4 * sizeof(int32_t));
    size_t n = 0;
    int32_t bytes = 0;
    if (!ReadFile("bytes.bin", n, &bytes, sizeof(bytes))) return 1;
    fe::PlatFormInfos info;  // as the runtime reports the chip the twin was built for
    platform_ascendc::PlatformAscendC plat(&info);
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    reinterpret_cast<int32_t*>(out)[0] = static_cast<int32_t>(ub);
    reinterpret_cast<int32_t*>(out)[1] = static_cast<int32_t>(plat.GetCoreNumAiv());
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(chip_probe, 1, out, bytes);
    WriteFile("out.bin", out, 4 * sizeof(int32_t));
    AscendC::GmFree(out);
    return 0;
}
"""


def _bundle(profile: hw.HardwareProfile) -> CodeBundle:
    return CodeBundle("chip_probe", {"main.cpp": CHIP_MAIN, "op_kernel/chip_probe.cpp": CHIP_KERNEL},
                      (TensorSpec("bytes", (1,), "int32"),), (TensorSpec("out", (4,), "int32"),),
                      target=profile.name, profile=profile)


def test_capacity_check_and_platform_follow_a_profile_override(twin_cache: Path) -> None:
    base = hw.get("ascend910b2")
    ub = base.ub_bytes // 2
    small = base.with_overrides(ub_bytes=ub, aiv_cores=2 * 20, aic_cores=20)
    code = _bundle(small)
    assert f"-DKS_UB_BYTES={ub}" in compile_flags(code) and "-DKS_AIV_CORES=40" in compile_flags(code)
    out = run(code, {"bytes": np.array([ub], np.int32)}, cache_dir=twin_cache)
    assert out.tolist() == [ub, 40, ub, 0]  # GetCoreMemSize(UB) and the core count follow the override
    with pytest.raises(TwinError, match=rf"capacity: .*holds {ub} bytes \(KS_UB_BYTES\)") as e:
        run(code, {"bytes": np.array([ub + 1024], np.int32)}, cache_dir=twin_cache)
    assert e.value.kind == "capacity"  # type: ignore[attr-defined]
    # the same request fits the profile's own UB
    got = run(_bundle(base), {"bytes": np.array([ub + 1024], np.int32)}, cache_dir=twin_cache)
    assert got.tolist() == [base.ub_bytes, base.aiv_cores, ub + 1024, 0]


def test_every_profile_field_becomes_a_define() -> None:
    p = hw.get("ascend910b2")
    macros = capacity_macros(p)
    assert macros == capacity_macros("ascend910b2")
    assert {macros[f"KS_{f.removesuffix('_bytes').upper()}_BYTES"] for f in SIZE_FIELDS} == {
        getattr(p, f) for f in SIZE_FIELDS}
    assert (macros["KS_AIC_CORES"], macros["KS_AIV_CORES"], macros["KS_SOC"]) == (p.aic_cores, p.aiv_cores, p.name)


@pytest.mark.twin
def test_headers_without_the_defines_do_not_compile(tmp_path: Path) -> None:
    src = tmp_path / "bare.cpp"
    src.write_text('#include "kernel_operator.h"\nint main() { return 0; }\n')
    proc = subprocess.run([CXX, "-std=c++17", "-fsyntax-only", f"-I{include_dir()}", str(src)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "#error" in proc.stderr and "compile through kernelstudio.twin" in proc.stderr


def test_no_chip_size_is_written_in_the_runner_or_the_headers() -> None:
    sizes = {getattr(hw.get(n), f) for n in hw.names() for f in SIZE_FIELDS}
    sizes = {s for s in sizes if s >= 4096}  # a chip's size, not an alignment or a fractal
    root = include_dir()
    files = [Path(__file__).resolve().parents[2] / "kernelstudio" / "twin" / "runner.py",
             *sorted(root.rglob("*.h"))]
    for path in files:
        numbers = {int(m) for m in re.findall(r"(?<![\w.])(\d{4,})(?![\w.])", path.read_text())}
        assert not numbers & sizes, f"{path.name} writes the chip size(s) {sorted(numbers & sizes)}"
