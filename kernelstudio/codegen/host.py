"""Host-side files: `op_host/<name>_tiling.h`, `op_host/<name>.cpp` (TilingFunc + OpDef) and the CPU
launcher `main.cpp` (ICPU_RUN_KF, the CANN "CPU debug mode" style the twin implements).

The TileIR is compiled for fixed shapes, so the tiling values are the schedule's: TilingFunc checks
the input shapes it was generated for and writes the same values main.cpp writes.
"""

from __future__ import annotations

from ..lower.tileir import Kernel, Program
from .kernel import entry_signature, kernel_params, workspace_layout
from .layout import topk_spec, topk_tiling_call
from .naming import names_of
from .scope import Scope
from .writer import Writer, camel

__all__ = ["tiling_header", "host_source", "main_source", "workspace_bytes", "tiling_values"]

GE_DTYPES = {"float16": "ge::DT_FLOAT16", "bfloat16": "ge::DT_BF16", "float32": "ge::DT_FLOAT",
             "int8": "ge::DT_INT8", "int32": "ge::DT_INT32"}


def _is_cube(k: Kernel) -> bool:
    return bool(k.aic)


_LAST_VALUES: list = []  # [(program, kernel, values)]: the header, host and launcher of one kernel ask in turn


def tiling_values(prog: Program, k: Kernel) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """(field, value) pairs of the kernel's tiling struct and its TCubeTiling fields (if any)."""
    for p, kk, values in _LAST_VALUES:
        if p is prog and kk is k:
            return values
    fields = [(camel(n), v) for n, v in k.tiling]
    cube: dict[str, int] = {}
    if _is_cube(k):
        from .cube import cube_tiling

        cube = cube_tiling(Scope(prog, k))
    _LAST_VALUES[:] = [*_LAST_VALUES[-7:], (prog, k, (fields, cube))]
    return fields, cube


def workspace_bytes(prog: Program, k: Kernel) -> int:
    """User workspace bytes of one kernel (its workspace tensors, 512-byte aligned)."""
    layout = workspace_layout(prog, k)
    if not layout:
        return 0
    last = max(layout, key=layout.get)
    return layout[last] + (prog.tensor(last).nbytes + 511) // 512 * 512


def tiling_header(prog: Program, k: Kernel) -> str:
    names = names_of(prog, k)
    name = names.op_type
    guard = f"{names.snake.upper()}_TILING_H"
    fields, cube = tiling_values(prog, k)
    w = Writer()
    topk = topk_spec(prog, k)
    w(f"// Tiling data of {name} (kernel {k.name}): the schedule's constants, read by the kernel with "
      "GET_TILING_DATA.",
      f"#ifndef {guard}", f"#define {guard}", '#include "register/tilingdata_base.h"')
    if topk is not None:
        w('#include "tiling/tiling_api.h"  // TopkTiling')
    w("", f"BEGIN_TILING_DATA_DEF({names.tiling})")
    with w.indented():
        for f, _ in fields:
            w(f"TILING_DATA_FIELD_DEF(uint32_t, {f});")
        if cube:
            w("TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);")
        if topk is not None:
            w("TILING_DATA_FIELD_DEF_STRUCT(TopkTiling, topkTilingData);")
    w("END_TILING_DATA_DEF;", "", f"REGISTER_TILING_DATA_CLASS({name}, {names.tiling})")
    w(f"#endif  // {guard}")
    return w.text()


def _fill(w: Writer, var: str, prog: Program, k: Kernel, setter: bool) -> None:
    fields, cube = tiling_values(prog, k)
    for f, v in fields:
        w(f"{var}.set_{f}({v});" if setter else f"{var}.{f} = {v};")
    for f, v in cube.items():  # the host's TCubeTiling is a tiling-data class (set_<field>); the kernel's a struct
        w(f"{var}.cubeTilingData.set_{f}({v});" if setter else f"{var}.cubeTilingData.{f} = {v};")
    topk = topk_spec(prog, k)
    if topk is not None:
        if not setter:
            w("platform_ascendc::PlatformAscendC ascendcPlatform;")
        w(f"// TopK: one row of {topk.n} (padded to {topk.inner}) per call, top {topk.k}",
          topk_tiling_call(topk, "ascendcPlatform", f"{var}.topkTilingData"))


def host_source(prog: Program, k: Kernel) -> str:
    """TilingFunc (block dim, tiling values, workspace size) and the OpDef of one kernel."""
    names = names_of(prog, k)
    name = names.op_type
    params = kernel_params(prog, k)
    inputs = [p for p in params if prog.tensor(p).role != "output"]
    outputs = [p for p in params if prog.tensor(p).role == "output"]
    w = Writer()
    w(f"// Host side of {name} (kernel {k.name}): tiling and operator definition for a CANN custom-op project.")
    if names.note():
        w(f"// {names.note()}")
    w(f'#include "{names.snake}_tiling.h"', '#include "register/op_def_registry.h"',
      '#include "tiling/platform/platform_ascendc.h"', "")
    with w.block("namespace optiling", "}  // namespace optiling"):
        with w.block("static ge::graphStatus TilingFunc(gert::TilingContext* context)"):
            w("// The schedule was lowered for these shapes; other shapes need a new kernelstudio build.")
            for i, p in enumerate(inputs):
                shape = prog.tensor(p).shape
                w(f"const gert::Shape& {camel(p)}Shape = context->GetInputShape({i})->GetStorageShape();")
                cond = " || ".join([f"{camel(p)}Shape.GetDimNum() != {len(shape)}"] +
                                   [f"{camel(p)}Shape.GetDim({d}) != {n}" for d, n in enumerate(shape)])
                with w.block(f"if ({cond})"):
                    w("return ge::GRAPH_FAILED;")
            w("auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());",
              f"{names.tiling} tiling;")
            _fill(w, "tiling", prog, k, setter=True)
            w(f"context->SetBlockDim({k.block_dim});", "context->SetTilingKey(0);",
              "tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), "
              "context->GetRawTilingData()->GetCapacity());",
              "context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());",
              "size_t* currentWorkspace = context->GetWorkspaceSizes(1);",
              f"currentWorkspace[0] = ascendcPlatform.GetLibApiWorkSpaceSize() + {workspace_bytes(prog, k)};",
              "return ge::GRAPH_SUCCESS;")
    w("")
    with w.block("namespace ops", "}  // namespace ops"):
        with w.block(f"class {name} : public OpDef", "};"):
            w("public:")
            with w.block(f"explicit {name}(const char* name) : OpDef(name)"):
                for kind, group in (("Input", inputs), ("Output", outputs)):
                    for p in group:
                        dt = GE_DTYPES[prog.tensor(p).dtype]
                        w(f'this->{kind}("{p}").ParamType(REQUIRED).DataType({{{dt}}}).Format({{ge::FORMAT_ND}});')
                w("this->AICore().SetTiling(optiling::TilingFunc);",
                  f'this->AICore().AddConfig("{_soc(prog.target)}");')
        w(f"OP_ADD({name});")
    return w.text()


def _soc(target: str) -> str:
    """The CANN SoC family name AddConfig takes (ascend910b2 -> ascend910b)."""
    t = target.lower()
    return t.rstrip("0123456789") if t.startswith("ascend910b") else t


KERNEL_MODES = {"AIV_ONLY": "AIV_MODE", "AIC_ONLY": "AIC_MODE", "MIX_AIC_1_2": "MIX_MODE"}


def _dev(tensor: str) -> str:
    """main.cpp's name of the device (GM) buffer of a tensor."""
    return camel(tensor) + "Gm"


def _nbytes(prog: Program, name: str) -> int:
    return prog.tensor(name).nbytes


def main_source(prog: Program, tiling_files: list[str]) -> str:
    """CPU launcher: reads inputs, launches every kernel in order, writes outputs.

    As in CANN's CPU-debug launchers, main.cpp declares each kernel entry (`extern "C" __global__ __aicore__
    void <op>(GM_ADDR ...)`) and is linked with the op_kernel/*.cpp files, each its own translation unit; it
    includes the kernels' tiling headers (`tiling_files`, one per kernel in order) to fill their tiling data."""
    multi = len(prog.kernels) > 1
    w = Writer()
    w(f"// CPU launch of {prog.name} on the kernelstudio twin: {len(prog.kernels)} kernel(s), "
      f"{'fused' if prog.fused else 'unfused'}.",
      "// Built with the op_kernel/*.cpp files, each compiled as its own translation unit (as CANN does).")
    w("#include <cstdint>", "#include <cstdio>", "#include <cstring>", '#include "data_utils.h"',
      '#include "tikicpulib.h"', '#include "register/tilingdata_base.h"')
    for i, path in enumerate(tiling_files):
        if multi:  # each tiling header registers its own struct (REGISTER_TILING_DATA_CLASS): keep them apart
            w(f"namespace k{i} {{", f'#include "{path}"', f"}}  // namespace k{i}")
        else:
            w(f'#include "{path}"')
    w("")
    for k in prog.kernels:
        w(f"{entry_signature(prog, k)};")
    w("")
    gm = [t for t in prog.tensors if t.role != "workspace"]
    with w.block("int32_t main()"):
        for t in gm:
            w(f"uint8_t* {_dev(t.name)} = static_cast<uint8_t*>(AscendC::GmAlloc({t.nbytes}));")
        for p in prog.inputs:
            w(f"size_t {camel(p)}Size = 0;")
            with w.block(f'if (!ReadFile("{p}.bin", {camel(p)}Size, {_dev(p)}, {_nbytes(prog, p)}))'):
                w("return 1;")
        for i, k in enumerate(prog.kernels):
            _launch(w, prog, k, f"k{i}::" if multi else "")
        for p in prog.outputs:
            with w.block(f'if (!WriteFile("{p}.bin", {_dev(p)}, {_nbytes(prog, p)}))'):
                w("return 1;")
        for t in gm:
            w(f"AscendC::GmFree({_dev(t.name)});")
        w("return 0;")
    return w.text()


def _launch(w: Writer, prog: Program, k: Kernel, ns: str) -> None:
    names = names_of(prog, k)
    ws = max(workspace_bytes(prog, k), 32)
    with _scoped(w, f"{names.op_type} (kernel {k.name}): {k.family}, {k.kernel_type}, blockDim {k.block_dim}"):
        w(f"{ns}{names.tiling} tilingData;")
        _fill(w, "tilingData", prog, k, setter=False)
        w("uint8_t* tiling = static_cast<uint8_t*>(AscendC::GmAlloc(sizeof(tilingData)));",
          "std::memcpy(tiling, &tilingData, sizeof(tilingData));",
          f"uint8_t* workspace = static_cast<uint8_t*>(AscendC::GmAlloc({ws}));",
          "ICPU_SET_TILING_KEY(0);",
          f"AscendC::SetKernelMode(KernelMode::{KERNEL_MODES[k.kernel_type]});")
        args = "".join(f"{_dev(p)}, " for p in kernel_params(prog, k))
        w(f"ICPU_RUN_KF({names.snake}, {k.block_dim}, {args}workspace, tiling);",
          "AscendC::GmFree(workspace);", "AscendC::GmFree(tiling);")


class _scoped:
    """`{ ... }` with a leading comment line."""

    def __init__(self, w: Writer, comment: str):
        self.w, self.comment = w, comment

    def __enter__(self) -> None:
        self.w(f"// {self.comment}", "{")
        self.w.level += 1

    def __exit__(self, *exc: object) -> None:
        self.w.level -= 1
        self.w("}")
