"""What official Ascend C code needs of the host side: kernel_tiling/kernel_tiling.h, PlatformAscendCManager,
memcpy_s, the multi-core Matmul split of SetDim; and what CANN refuses: host tiling fields written directly
(private behind set_/get_), accessors on the kernel's plain structs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import CodeBundle, TensorSpec
from kernelstudio.core.errors import CompileError
from kernelstudio.twin import run
from kernelstudio.twin.runner import CXX, chip_flags, include_dir

from .conftest import load_bundle

pytestmark = pytest.mark.twin

M, N, K = 128, 96, 64
MM_LEAKYRELU = load_bundle(
    "mm_leakyrelu_host",
    (TensorSpec("a", (M, K), "float16"), TensorSpec("b", (K, N), "float16"), TensorSpec("bias", (N,), "float32")),
    (TensorSpec("c", (M, N), "float32"),),
)


def test_a_launcher_that_tiles_with_the_platform_manager_and_memcpy_s_runs(twin_cache: Path) -> None:
    rng = np.random.default_rng(29)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    c = run(MM_LEAKYRELU, {"a": a, "b": b, "bias": bias}, cache_dir=twin_cache)
    acc = a.astype(np.float32) @ b.astype(np.float32) + bias
    want = np.where(acc >= 0, acc, acc * np.float32(0.125))
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)  # fp16 products are exact in fp32
    assert (c < 0).any() and (c > 0).any()


SPLIT_PROBE = r"""
#include <cstdio>
#include "securec.h"
#include "tiling/tiling_api.h"
using namespace matmul_tiling;
static void show(const char* name, int m, int n, int k, int dim) {
    MultiCoreMatmulTiling t(*platform_ascendc::PlatformAscendCManager::GetInstance());
    t.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
    t.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
    t.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
    t.SetDim(dim); t.SetShape(m, n, k); t.SetOrgShape(m, n, k);
    optiling::TCubeTiling c;
    long r = t.GetTiling(c);
    int d = 0, md = 0, nd = 0;
    t.GetCoreNum(d, md, nd);
    std::printf("%s %ld %d %d %d %d %d %d\n", name, r, c.get_usedCoreNum(), c.get_singleCoreM(),
                c.get_singleCoreN(), c.get_singleCoreK(), md, nd);
}
int main() {
    show("square", 128, 96, 64, 4);
    show("tall", 1024, 64, 64, 8);
    show("uneven", 100, 40, 32, 2);
    show("tiny", 16, 16, 16, 8);
    auto* p = platform_ascendc::PlatformAscendCManager::GetInstance();
    std::printf("same %d\n", p == platform_ascendc::PlatformAscendCManager::GetInstance() ? 1 : 0);
    std::printf("named %d %d\n", platform_ascendc::PlatformAscendCManager::GetInstance(KS_SOC_NAME) == p ? 1 : 0,
                platform_ascendc::PlatformAscendCManager::GetInstance("Ascend310P3") == nullptr ? 1 : 0);
    char dst[4] = {};
    const int ok = memcpy_s(dst, 4, "abc", 4), small = memcpy_s(dst, 2, "xyz", 4);
    const int null = memcpy_s(nullptr, 4, "abc", 4);
    std::printf("memcpy_s %d %d %d %c\n", ok, small != EOK ? 1 : 0, null != EOK ? 1 : 0, dst[0]);
    return 0;
}
"""


def test_multicore_matmul_tiling_splits_c_over_setdim_cores(tmp_path: Path) -> None:
    src = tmp_path / "split.cpp"
    src.write_text(SPLIT_PROBE)
    subprocess.run([CXX, "-std=c++17", *chip_flags("ascend910b2"), f"-I{include_dir()}", str(src), "-o",
                    str(tmp_path / "split")], check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "split")], check=True, capture_output=True, text=True).stdout
    lines = {line.split(" ", 1)[0]: line.split()[1:] for line in out.splitlines()}
    # GetTiling result, usedCoreNum, singleCoreM, singleCoreN, singleCoreK, mDim, nDim
    assert lines["square"] == ["0", "4", "64", "48", "64", "2", "2"]   # 2 x 2: 64 + 48 rows + cols per core
    assert lines["tall"] == ["0", "8", "128", "64", "64", "8", "1"]    # all 8 cores along M
    assert lines["uneven"] == ["0", "2", "50", "40", "32", "2", "1"]   # ceil(100 / 2); SetTail cuts the edge
    assert lines["tiny"] == ["0", "1", "16", "16", "16", "1", "1"]     # one 16 x 16 tile: one core
    assert lines["same"] == ["1"] and lines["named"] == ["1", "1"]
    assert lines["memcpy_s"] == ["0", "1", "1", "a"]


ZEROS = {"a": np.zeros((M, K), np.float16), "b": np.zeros((K, N), np.float16), "bias": np.zeros(N, np.float32)}


def _with(path: str, old: str, new: str) -> CodeBundle:
    files = dict(MM_LEAKYRELU.files)
    assert old in files[path]
    files[path] = files[path].replace(old, new)
    return CodeBundle(MM_LEAKYRELU.name, files, MM_LEAKYRELU.inputs, MM_LEAKYRELU.outputs)


def test_host_code_cannot_write_a_tcubetiling_field_directly(twin_cache: Path) -> None:
    bad = _with("main.cpp", "tilingData.SaveToBuffer", "tilingData.usedCoreNum = 4;\n    tilingData.SaveToBuffer")
    with pytest.raises(CompileError, match=r"main\.cpp:\d+:\d+: error: .*usedCoreNum.* is private"):
        run(bad, ZEROS, cache_dir=twin_cache)


def test_kernel_code_cannot_call_accessors_of_the_plain_tcubetiling(twin_cache: Path) -> None:
    bad = _with("op_kernel/mm_leakyrelu_host.cpp", "if (GetBlockIdx() >= op.tiling.usedCoreNum)",
                "if (GetBlockIdx() >= op.tiling.get_usedCoreNum())")
    with pytest.raises(CompileError, match=r"mm_leakyrelu_host\.cpp:\d+:\d+: error: .*has no member named "
                                           r".get_usedCoreNum"):
        run(bad, ZEROS, cache_dir=twin_cache)


TILING_HEADER = """#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ProbeTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 4, lengths);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Probe, ProbeTilingData)
}
"""
KERNEL = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void probe(GM_ADDR out, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<uint32_t> o;
    o.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(out), 8);
    %s
}
"""
MAIN = """#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/probe_tiling.h"
extern "C" __global__ __aicore__ void probe(GM_ADDR out, GM_ADDR tiling);
int32_t main()
{
    uint8_t* out = (uint8_t*)AscendC::GmAlloc(8 * sizeof(uint32_t));
    auto* tiling = (optiling::ProbeTilingData*)AscendC::GmAlloc(sizeof(optiling::ProbeTilingData));
    %s
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(probe, 1, out, (uint8_t*)tiling);
    WriteFile("out.bin", out, 8 * sizeof(uint32_t));
    return 0;
}
"""
GOOD_HOST = ("tiling->set_totalLength(7);\n    uint32_t lengths[4] = {1, 2, 3, 4};\n    tiling->set_lengths(lengths);\n"
             "    tiling->get_lengths()[3] = 40;")
GOOD_KERNEL = "o.SetValue(0, t.totalLength);\n    for (int i = 0; i < 4; ++i) o.SetValue(1 + i, t.lengths[i]);"


def _probe(host: str, kernel: str) -> CodeBundle:
    return CodeBundle("probe", {"main.cpp": MAIN % host, "op_host/probe_tiling.h": TILING_HEADER,
                                "op_kernel/probe.cpp": KERNEL % kernel}, (), (TensorSpec("out", (8,), "int32"),))


def test_tiling_fields_set_on_the_host_and_read_as_plain_fields_in_the_kernel(twin_cache: Path) -> None:
    out = run(_probe(GOOD_HOST, GOOD_KERNEL), {}, cache_dir=twin_cache)
    assert out[:5].tolist() == [7, 1, 2, 3, 40]


@pytest.mark.parametrize(("host", "kernel", "error"), [
    ("tiling->totalLength = 7;", GOOD_KERNEL, r"main\.cpp:\d+:\d+: error: .*totalLength.* is private"),
    ("tiling->lengths[0] = 7;", GOOD_KERNEL, r"main\.cpp:\d+:\d+: error: .*lengths.* is private"),
    (GOOD_HOST, "o.SetValue(0, t.get_totalLength());", r"probe\.cpp:\d+:\d+: error: .*has no member named "
                                                       r".get_totalLength"),
], ids=["host-field", "host-array", "kernel-accessor"])
def test_what_cann_does_not_compile_does_not_compile(host: str, kernel: str, error: str, twin_cache: Path) -> None:
    with pytest.raises(CompileError, match=error):
        run(_probe(host, kernel), {}, cache_dir=twin_cache)


def test_the_tiling_header_names_private_fields_for_the_host_only() -> None:
    text = (include_dir() / "register" / "tilingdata_base.h").read_text()
    host = text[text.index("#else"):text.index("#endif", text.index("#else"))]
    assert re.search(r"private:\s*\\\s*data_type field_name = data_type\(\);", host)
