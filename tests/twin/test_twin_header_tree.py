"""The twin's header tree is CANN's: a kernel source reaches kernel_operator.h and the lib/ headers, not the
host-only ones (as on CANN, where op_kernel/*.cpp is built without the host include paths), and the
namespaces CANN owns hold only CANN's names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelstudio.codegen import CodeBundle, TensorSpec
from kernelstudio.core.errors import CompileError
from kernelstudio.twin import run
from kernelstudio.twin.runner import _units, include_dir

HOST_HEADERS = ("tiling/tiling_api.h", "tiling/platform/platform_ascendc.h", "register/tilingdata_base.h",
                "register/op_def_registry.h", "tiling/norm_tiling.h", "tiling/topk_tiling.h", "tiling/pad_tiling.h",
                "tiling/norm_grad_tiling.h")
LIB_HEADERS = ("lib/matmul_intf.h", "lib/activation/softmax.h", "lib/normalization/layernorm.h",
               "lib/normalization/rmsnorm.h", "lib/sort/topk.h", "lib/pad/pad.h", "lib/pad/broadcast.h",
               "lib/normalization/layernormgrad.h", "lib/normalization/layernormgradbeta.h")

KERNEL = """#include "kernel_operator.h"
{includes}
extern "C" __global__ __aicore__ void tree_probe(GM_ADDR out, GM_ADDR tiling)
{{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    {body}
    AscendC::GlobalTensor<int32_t> outGm;
    outGm.SetGlobalBuffer((__gm__ int32_t*)out, 8);
    outGm.SetValue(0, value);
}}
"""
TILING_HEADER = """#ifndef TREE_PROBE_TILING_H
#define TREE_PROBE_TILING_H
#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(TreeProbeTilingData)
TILING_DATA_FIELD_DEF(int32_t, value);
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmaxTilingData);
TILING_DATA_FIELD_DEF_STRUCT(TopkTiling, topkTilingData);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(TreeProbe, TreeProbeTilingData)
}
#endif
"""
MAIN = """#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/tree_probe_tiling.h"
extern "C" __global__ __aicore__ void tree_probe(GM_ADDR out, GM_ADDR tiling);
int32_t main()
{
    uint8_t* out = (uint8_t*)AscendC::GmAlloc(8 * sizeof(int32_t));
    auto* tiling = (optiling::TreeProbeTilingData*)AscendC::GmAlloc(sizeof(optiling::TreeProbeTilingData));
    tiling->set_value(7);
    fe::PlatFormInfos info;
    platform_ascendc::PlatformAscendC plat(&info);
    matmul_tiling::MultiCoreMatmulTiling mm(plat);  // the host fills the host class ...
    optiling::TCubeTiling& cube = tiling->cubeTilingData;
    mm.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    mm.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    mm.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    mm.SetShape(32, 48, 64);
    if (mm.GetTiling(cube) != 0) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(tree_probe, 1, out, (uint8_t*)tiling);
    WriteFile("out.bin", out, 8 * sizeof(int32_t));
    return 0;
}
"""
# ... and the kernel reads the plain struct of the same layout
READ_TILING = ("GET_TILING_DATA(t, tiling);\n    const TCubeTiling& cube = t.cubeTilingData;\n"
               "    int32_t value = t.value * 1000 + cube.M;")


def _bundle(includes: str = "", body: str = READ_TILING) -> CodeBundle:
    return CodeBundle("tree_probe", {
        "main.cpp": MAIN,
        "op_host/tree_probe_tiling.h": TILING_HEADER,
        "op_kernel/tree_probe.cpp": KERNEL.format(includes=includes, body=body),
    }, (), (TensorSpec("out", (8,), "int32"),))


def test_the_kernel_reads_the_plain_struct_the_host_filled_as_a_class(twin_cache: Path) -> None:
    code = _bundle("\n".join(f'#include "{h}"' for h in LIB_HEADERS))
    unit = _units(code)["ks_unit_tree_probe.cpp"]
    assert unit is not None and "#define KS_TWIN_KERNEL_UNIT" in unit
    out = run(code, {}, cache_dir=twin_cache)
    assert out[0] == 7 * 1000 + 32


@pytest.mark.parametrize("header", HOST_HEADERS)
def test_a_kernel_source_cannot_include_a_host_header(header: str, twin_cache: Path) -> None:
    with pytest.raises(CompileError, match=re.escape(header) + " is a host header"):
        run(_bundle(f'#include "{header}"'), {}, cache_dir=twin_cache)


@pytest.mark.parametrize("call", [
    "platform_ascendc::PlatformAscendC plat;\n    int32_t value = plat.GetCoreNumAiv();",
    "matmul_tiling::MultiCoreMatmulTiling mm;\n    int32_t value = mm.GetBaseM();",
    "optiling::TCubeTiling c;\n    int32_t value = c.get_M();",
    "uint32_t lo = 0, hi = 0;\n    AscendC::GetRmsNormMaxMinTmpSize(ge::Shape({1, 1, 16}), 2, hi, lo);\n"
    "    int32_t value = lo;",
])
def test_a_kernel_cannot_call_a_host_api(call: str, twin_cache: Path) -> None:
    """The tiling header a kernel unit reads gives it the tiling structs, not the host API behind them."""
    with pytest.raises(CompileError, match=r"op_kernel/tree_probe\.cpp:\d+:\d+: error: .*(not declared|not a member"
                                           r"|has not been declared|does not name a type)"):
        run(_bundle(body=call), {}, cache_dir=twin_cache)


def test_each_lib_header_compiles_alone_in_a_kernel_unit(twin_cache: Path) -> None:
    apis = {"lib/activation/softmax.h": "AscendC::SoftMaxShapeInfo", "lib/normalization/layernorm.h":
            "LayerNormTiling", "lib/normalization/rmsnorm.h": "AscendC::tiling::RmsNormTiling",
            "lib/sort/topk.h": "AscendC::TopKInfo"}
    for header, api in apis.items():
        code = _bundle(f'#include "{header}"', f"int32_t value = sizeof({api}) > 0 ? 1 : 0;")
        assert run(code, {}, cache_dir=twin_cache)[0] == 1, header


# ---- namespaces: CANN's hold no twin-only names --------------------------------------------------------
CANN_NAMESPACES = {"AscendC", "optiling", "platform_ascendc", "matmul", "matmul_tiling"}
# helpers that used to sit in CANN's namespaces and now live in ks_twin
MOVED = {"ks_norm", "ks_topk", "ks_dtype_bytes", "ks_topk_tmp_bytes", "KS_TWIN_LIB_WORKSPACE_BYTES", "check_work",
         "reduce_extreme", "compare_into", "select_from"}
# The inline namespaces that give each translation unit its one `matmul::Matmul` alias (cube-only or MIX,
# ks_twin/matmul.h): invisible to kernels, which name matmul::Matmul.
ALLOWED = {("matmul", "ks_cube_only"), ("matmul", "ks_mix")}
_DECL = re.compile(r"\b(?:struct|class|enum(?:\s+class)?|namespace|using|constexpr\s+[\w:]+|inline\s+[\w:<>,\s*&]+?)"
                   r"\s+(\w+)\s*[({=;:<]")


def _code_only(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)


def declared_in_cann_namespaces(text: str) -> set[tuple[str, str]]:
    """(namespace, name) of what the header declares directly inside one of CANN's namespaces."""
    found: set[tuple[str, str]] = set()
    text = _code_only(text)
    stack: list[str] = []
    pos = 0
    for m in re.finditer(r"namespace\s+([\w:]+)\s*\{|\{|\}", text):
        if stack and stack[-1] in CANN_NAMESPACES:
            found |= {(stack[-1], d[1]) for d in _DECL.finditer(text, pos, m.start())}
            if m[1]:  # a namespace opened inside one of CANN's
                found.add((stack[-1], m[1].split("::")[0]))
        pos = m.end()
        if m[0] == "}":
            if stack:
                stack.pop()
        else:
            stack.append(m[1].split("::")[-1] if m[1] else "")
    return found


def test_the_scanner_sees_a_twin_name_in_ascendc() -> None:
    sample = "namespace AscendC {\ninline void ks_helper() {}\nnamespace ks_x {\n}\n}\nnamespace ks_twin { int y; }\n"
    assert declared_in_cann_namespaces(sample) == {("AscendC", "ks_helper"), ("AscendC", "ks_x")}


def test_no_twin_only_name_in_a_cann_namespace() -> None:
    bad = []
    for path in sorted(include_dir().rglob("*.h")):
        for ns, name in declared_in_cann_namespaces(path.read_text()):
            if (ns, name) not in ALLOWED and (name in MOVED or name.lower().startswith("ks")):
                bad.append(f"{path.relative_to(include_dir())}: {ns}::{name}")
    assert not bad, "twin-only names in CANN's namespaces (move them to ks_twin):\n" + "\n".join(bad)


def test_kernel_side_header_has_no_host_declarations() -> None:
    text = (include_dir() / "kernel_tiling" / "kernel_tiling.h").read_text()
    assert "optiling::TCubeTiling" not in _code_only(text)
    assert not re.findall(r'^#include "', text, re.M)  # only standard headers: nothing of the host reaches it
    assert all(s in text for s in ("struct TCubeTiling", "struct SoftMaxTiling", "struct TopkTiling"))
