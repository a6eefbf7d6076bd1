"""Generated Ascend C: its shape (what an Ascend C author expects to read) and its numbers on the twin."""

from __future__ import annotations

import json

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, export_project, generate_files, names_of

from . import programs, reference
from .merge import merge


def _kernel_src(prog) -> str:
    return generate_files(prog)[names_of(prog, prog.kernels[0]).kernel_file]


def test_vector_kernel_reads_like_ascend_c() -> None:
    prog, _ = programs.elementwise()
    src = _kernel_src(prog)
    for piece in ("class KernelScaleShiftRelu", "AscendC::TPipe pipe;", "__aicore__ inline void Init(",
                  "__aicore__ inline void Process()", "__aicore__ inline void CopyIn(", "void Compute(",
                  "void CopyOut(", "AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM>",
                  "constexpr int32_t BUFFER_NUM = 2;", "GET_TILING_DATA(tilingData, tiling);",
                  "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);", "AscendC::DataCopyPad(",
                  "// mul: g broadcast over rows", "// parallel: tiles over cores"):
        assert piece in src, piece
    assert "tileRows = static_cast<int32_t>(tiling.tileRows);" in src  # tiling constants, not literals
    assert src.count("{") == src.count("}")


def test_kernels_copy_in_only_the_tiling_values_they_read() -> None:
    prog = ks.lower(ks.create_schedule(ks.softmax(ks.placeholder((45, 100), "float16", name="x"))), "ascend910b2")
    src = _kernel_src(prog)
    for f in ("rows", "tiles", "blockDim"):  # the run's values
        assert f"{f} = static_cast<int32_t>(tiling.{f});" in src and f"int32_t {f};" in src
    for f in ("cols", "tileRows", "tileCols"):  # fixed by the schedule: literals in the code
        assert f"{f} = " not in src and f"int32_t {f};" not in src
    assert src.count("{") == src.count("}")


def test_mix_kernel_uses_matmul_api_and_flags() -> None:
    prog, _ = programs.mla_prolog_lite()
    src = _kernel_src(prog)
    for piece in ("KERNEL_TYPE_MIX_AIC_1_2", "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr()",
                  "matmulObj.SetTensorB(wGm, true);", "matmulObj.IterateAll(wsGm[m0 * N]);",
                  "AscendC::CrossCoreSetFlag<0x2, PIPE_FIX>(0);", "AscendC::CrossCoreWaitFlag(0);",
                  "if ASCEND_IS_AIC", "AscendC::GetUserWorkspace(workspace)", "GetTaskRation()"):
        assert piece in src, piece


def test_host_files() -> None:
    prog, _ = programs.mla_prolog_lite()
    files = generate_files(prog)
    tiling = files["op_host/mla_prolog_lite_tiling.h"]
    assert "BEGIN_TILING_DATA_DEF(MlaPrologLiteTilingData)" in tiling
    assert "TILING_DATA_FIELD_DEF(uint32_t, tileM);" in tiling
    assert "TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);" in tiling
    assert "REGISTER_TILING_DATA_CLASS(MlaPrologLite, MlaPrologLiteTilingData)" in tiling
    # CANN's form: tiling data in namespace optiling, TCubeTiling from tiling/tiling_api.h
    assert tiling.index("namespace optiling {") < tiling.index("BEGIN_TILING_DATA_DEF") \
        < tiling.index("}  // namespace optiling")
    assert '#include "tiling/tiling_api.h"' in tiling
    host = files["op_host/mla_prolog_lite.cpp"]
    for piece in ("static ge::graphStatus TilingFunc(gert::TilingContext* context)", "SetBlockDim(3)",
                  "matmul_tiling::MultiCoreMatmulTiling cubeTiling(ascendcPlatform);", "cubeTiling.SetDim(3);",
                  "cubeTiling.SetFixSplit(", "if (cubeTiling.GetTiling(tiling.cubeTilingData) == -1)",
                  "tiling.cubeTilingData.set_baseK(32);", 'this->Input("w")', 'AddConfig("ascend910b")',
                  "OP_ADD(MlaPrologLite);"):
        assert piece in host, piece
    # the shape fields come from the tiling API, not from set_ calls
    assert "set_singleCoreM(" not in host and "cubeTilingData.set_M(" not in host
    kernel = files["op_kernel/mla_prolog_lite.cpp"]
    assert "op_host/" not in kernel and "GET_TILING_DATA(tilingData, tiling);" in kernel
    main = files["main.cpp"]
    for piece in ('ks_twin::host::run_tiling("MlaPrologLite", {{1, 64, 256}, {512, 256}, {512}}, {{1, 64, 512}}, '
                  'platform);',
                  "ICPU_RUN_KF(mla_prolog_lite, launch.block_dim,", "ICPU_SET_TILING_KEY(launch.tiling_key);",
                  "AscendC::SetKernelMode(KernelMode::MIX_MODE);", 'ReadFile("w.bin"', 'WriteFile("out.bin"',
                  "platform.aicNum = 24;"):
        assert piece in main, piece
    assert "tilingData" not in main and "_tiling.h" not in main  # main.cpp fills no tiling itself


def test_unfused_main_launches_kernels_in_order_with_gm_intermediate() -> None:
    prog, _ = programs.unfused_chain()
    main = generate_files(prog)["main.cpp"]
    first = main.index("ICPU_RUN_KF(ln_softmax_ln_part")  # hand-built kernels: design + kernel name
    second = main.index("ICPU_RUN_KF(ln_softmax_softmax_part")
    assert first < second
    # declared, not included: each op_kernel/*.cpp is its own translation unit
    assert ('extern "C" __global__ __aicore__ void ln_softmax_ln_part(GM_ADDR x, GM_ADDR mid, GM_ADDR workspace, '
            'GM_ADDR tiling);') in main
    assert '#include "op_kernel/' not in main
    # the intermediate is the first operator's output and the second's input
    assert 'run_tiling("LnSoftmaxLnPart", {{' in main and 'run_tiling("LnSoftmaxSoftmaxPart", {{' in main
    files = generate_files(prog)
    assert 'this->Output("mid")' in files["op_host/ln_softmax_ln_part.cpp"]
    assert 'this->Input("mid")' in files["op_host/ln_softmax_softmax_part.cpp"]
    assert "uint8_t* midGm = static_cast<uint8_t*>(AscendC::GmAlloc(1920));" in main
    assert 'ReadFile("mid.bin"' not in main and 'WriteFile("mid.bin"' not in main


def test_names_that_clash_with_cpp_are_renamed() -> None:
    x = ks.placeholder((8, 32), "float16", name="half")
    prog = reference.lower(ks.relu(x))
    src = _kernel_src(prog)
    assert "GM_ADDR half_," in src and "GM_ADDR half," not in src


def test_hand_built_programs_on_the_twin(twin_cache) -> None:
    """Every statement form of the hand-built programs, in one binary, against NumPy references."""
    built = [f() for f in programs.ALL.values()]
    rng = np.random.default_rng(0)
    inputs, expected = {}, {}
    for i, (prog, ref) in enumerate(built):
        inp = {n: rng.standard_normal(prog.tensor(n).shape).astype(np.float16) for n in prog.inputs}
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
        expected.update({f"c{i}_{n}": v for n, v in ref(inp).items()})
    got = twin.run(codegen(merge([p for p, _ in built])), inputs, cache_dir=twin_cache, by_name=True)
    for name, want in expected.items():
        np.testing.assert_allclose(np.asarray(got[name], np.float32), want, rtol=2e-2, atol=2e-2, err_msg=name)


CASES = [(name, fuse, double) for name in ("mla_prolog_lite", "mla_prolog_lite_tails", "softmax", "layer_norm",
                                            "chain") for fuse in (True, False) for double in (True, False)]


@pytest.mark.parametrize(("name", "fuse", "double"), CASES)
def test_reference_kernels_three_way(name: str, fuse: bool, double: bool | None, twin_cache) -> None:
    out = reference.REFERENCE[name]()
    prog = reference.lower(out, fuse=fuse, double_buffer=double)
    reference.three_way(out, prog, twin_cache)


def test_matmul_epilogue_with_batch_and_tails(twin_cache) -> None:
    x = ks.placeholder((2, 40, 96), "float16", name="x")
    w = ks.placeholder((96, 80), "float16", name="w")
    b = ks.placeholder((80,), "float16", name="b")
    out = ks.leaky_relu(ks.matmul(x, w) + b, 0.1)
    reference.three_way(out, reference.lower(out), twin_cache)


def test_export_project(tmp_path) -> None:
    prog, _ = programs.mla_prolog_lite()
    root = export_project(prog, tmp_path / "proj")
    for rel in ("op_kernel/mla_prolog_lite.cpp", "op_host/mla_prolog_lite.cpp", "op_host/mla_prolog_lite_tiling.h",
                "main.cpp", "CMakeLists.txt", "README.md", "mla_prolog_lite.json"):
        assert (root / rel).is_file(), rel
    desc = json.loads((root / "mla_prolog_lite.json").read_text())
    assert desc[0]["op"] == "MlaPrologLite"
    assert [d["name"] for d in desc[0]["input_desc"]] == ["x", "w", "bias"]
    assert desc[0]["output_desc"][0]["type"] == ["float16"]
    assert "msopgen gen -i mla_prolog_lite.json" in (root / "README.md").read_text()


def test_mix_kernel_file_sets_cube_only_itself(twin_cache) -> None:
    """CANN compiles op_kernel/<name>.cpp on its own: ASCENDC_CUBE_ONLY must be set there, not in main.cpp.
    Without it the AIC becomes the Matmul server at REGIST_MATMUL_OBJ and the AIVs wait forever."""
    import dataclasses

    from kernelstudio.core.errors import TwinError

    prog, _ = programs.mla_prolog_lite()
    code = codegen(prog)
    kfile = names_of(prog, prog.kernels[0]).kernel_file
    src = code.files[kfile]
    assert src.index("#define ASCENDC_CUBE_ONLY") < src.index('#include "kernel_operator.h"')
    assert "ASCENDC_CUBE_ONLY" not in code.files["main.cpp"]
    assert "AscendC::GetSysWorkSpacePtr" not in src   # CANN declares it at global scope only
    inputs = {n: np.random.default_rng(1).standard_normal(prog.tensor(n).shape).astype(np.float16)
              for n in prog.inputs}
    twin.run(code, inputs, cache_dir=twin_cache)   # runs as generated
    files = dict(code.files)
    files[kfile] = src.replace("#define ASCENDC_CUBE_ONLY", "// (define removed)")
    broken = dataclasses.replace(code, files=files)
    with pytest.raises(TwinError, match="deadlock.*ASCENDC_CUBE_ONLY"):
        twin.run(broken, inputs, cache_dir=twin_cache)


def test_the_launchers_platform_is_the_programs_own_profile() -> None:
    """main.cpp tells TilingFunc the chip the program was lowered for: a user's UB override included."""
    x = ks.placeholder((64, 256), "float16", name="x")
    small = ks.hw.get("ascend910b2").with_overrides(ub_bytes=150_016)
    main = codegen(ks.lower(ks.create_schedule(ks.relu(x)), small)).files["main.cpp"]
    assert "platform.ub = 150016;" in main
    assert f"platform.l1 = {small.l1_bytes};" in main
