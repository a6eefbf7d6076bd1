"""The twin's CPU launcher `main.cpp` (ICPU_RUN_KF, the CANN "CPU debug mode" style the twin implements).

main.cpp fills no tiling itself: like the CANN runtime, it runs each operator's TilingFunc (tiling_func.py,
through `ks_twin::host::run_tiling`) and launches with the block dim, tiling key, tiling blob and workspace
size it returns. Before that it checks, as a graph build would, that the operator's InferShape and
InferDataType (infer_func.py) give the shapes and data types of the buffers it allocated. A program that
takes its rows at run time (`Kernel.runtime_rows`) has main.cpp size its buffers from the row dimensions in
`dims.txt` (written by `ks.twin.run`; the lowered ones without it).

Conv kernels read their operands in NC1HWC0 and FRACTAL_Z (conv.py): main.cpp does on the CPU the transform
CANN's TransData does before each conv launch (`ks_twin::host::nchw_to_nc1hwc0`, `weights_to_fractal_z`) and
passes the converted buffers.
"""

from __future__ import annotations

from ..core.dtypes import itemsize
from ..tileir.capacity import profile_of
from ..tileir.program import Kernel, Program
from .conv import GmFormat, gm_formats
from .kernel import entry_signature, kernel_params
from .naming import names_of
from .scope import runtime_rows
from .tiling_func import GE_DTYPES, io_params
from .writer import Writer, camel

__all__ = ["main_source", "RUNTIME_DIMS_FILE"]

RUNTIME_DIMS_FILE = "dims.txt"  # the run-time row dimensions main.cpp reads (ks.twin.run writes it)
KERNEL_MODES = {"AIV_ONLY": "AIV_MODE", "AIC_ONLY": "AIC_MODE", "MIX_AIC_1_2": "MIX_MODE"}


def _dev(tensor: str) -> str:
    """main.cpp's name of the device (GM) buffer of a tensor."""
    return camel(tensor) + "Gm"


def _nbytes(prog: Program, name: str) -> int | str:
    """Bytes of a tensor in main.cpp: a number, or `rows * <bytes per row>` for one whose rows are set at run
    time."""
    t = prog.tensor(name)
    rt = runtime_rows(prog)
    if rt is not None and name in rt.tensors:
        return f"rows * {t.nbytes // dict(prog.kernels[0].tiling)[rt.rows]}"
    return t.nbytes


def _dims(prog: Program, name: str) -> str:
    """`{d0, d1, ...}` of a tensor in main.cpp (its row dimensions from `lead` when set at run time)."""
    shape = prog.tensor(name).shape
    rt = runtime_rows(prog)
    if rt is not None and name in rt.tensors:
        return "{" + ", ".join([f"lead[{d}]" for d in range(rt.dims)] + [str(d) for d in shape[rt.dims:]]) + "}"
    return "{" + ", ".join(str(d) for d in shape) + "}"


def main_source(prog: Program) -> str:
    """CPU launcher: reads inputs, runs each operator's TilingFunc, launches every kernel in order, writes
    outputs.

    As in CANN's CPU-debug launchers, main.cpp declares each kernel entry (`extern "C" __global__ __aicore__
    void <op>(GM_ADDR ...)`) and is linked with the op_kernel/*.cpp and op_host/*.cpp files, each its own
    translation unit. It fills no tiling itself: `ks_twin::host::run_tiling` calls the TilingFunc the
    operator registered (OP_ADD) on the input shapes and the target's platform, as the runtime does."""
    w = Writer()
    w(f"// CPU launch of {prog.name} on the kernelstudio twin: {len(prog.kernels)} kernel(s), "
      f"{'fused' if prog.fused else 'unfused'}.",
      "// Built with the op_kernel/*.cpp and op_host/*.cpp files, each its own translation unit (as CANN does).")
    w("#include <cstdint>", "#include <cstdio>", "#include <cstring>", '#include "data_utils.h"',
      '#include "tikicpulib.h"', '#include "ks_twin/host.h"  // runs an operator\'s TilingFunc, as the runtime does')
    if any(gm_formats(prog, k) for k in prog.kernels):
        w('#include "ks_twin/transdata.h"  // NC1HWC0 / FRACTAL_Z for conv operands, as TransData does')
    w("")
    for k in prog.kernels:
        w(f"{entry_signature(prog, k)};")
    w("")
    gm = [t for t in prog.tensors if t.role != "workspace"]
    rt = runtime_rows(prog)
    with w.block("int32_t main()"):
        _platform(w, prog)
        if rt is not None:
            lowered = prog.tensor(rt.tensors[0]).shape[:rt.dims]
            w(f"// rows at run time: {RUNTIME_DIMS_FILE} (next to the inputs) gives the first {rt.dims} dimension(s) "
              f"of {', '.join(rt.tensors)}",
              f'const std::vector<int64_t> lead = ks_twin::host::runtime_dims("{RUNTIME_DIMS_FILE}", '
              f'{{{", ".join(map(str, lowered))}}});',
              "const int64_t rows = " + " * ".join(f"lead[{d}]" for d in range(rt.dims)) + ";")
        for t in gm:
            w(f"uint8_t* {_dev(t.name)} = static_cast<uint8_t*>(AscendC::GmAlloc({_nbytes(prog, t.name)}));")
        for p in prog.inputs:
            w(f"size_t {camel(p)}Size = 0;")
            with w.block(f'if (!ReadFile("{p}.bin", {camel(p)}Size, {_dev(p)}, {_nbytes(prog, p)}))'):
                w("return 1;")
        for k in prog.kernels:
            _launch(w, prog, k)
        for p in prog.outputs:
            with w.block(f'if (!WriteFile("{p}.bin", {_dev(p)}, {_nbytes(prog, p)}))'):
                w("return 1;")
        for t in gm:
            w(f"AscendC::GmFree({_dev(t.name)});")
        w("return 0;")
    return w.text()


def _platform(w: Writer, prog: Program) -> None:
    """The platform the runtime would report for the target: its core counts and on-chip memory, from the
    profile the program was lowered for (a user's overrides included)."""
    p = profile_of(prog)
    w(f"// {prog.target} as the runtime reports it to TilingFunc (the target profile's cores and memory)",
      "fe::PlatFormInfos platform;", f'platform.soc = "{prog.target}";',
      f"platform.aicNum = {p.aic_cores};", f"platform.aivNum = {p.aiv_cores};",
      f"platform.l1 = {p.l1_bytes};", f"platform.l0a = {p.l0a_bytes};", f"platform.l0b = {p.l0b_bytes};",
      f"platform.l0c = {p.l0c_bytes};", f"platform.ub = {p.ub_bytes};", f"platform.l2 = {p.l2_bytes};",
      f"platform.hbm = {p.hbm_bytes}ull;")


def _shapes(prog: Program, params: list[str]) -> str:
    return "{" + ", ".join(_dims(prog, p) for p in params) + "}"


def _converted(p: str, f: GmFormat) -> str:
    """main.cpp's name of the buffer holding tensor `p` in format `f`."""
    return camel(p) + ("Nc1hwc0" if f.format == "NC1HWC0" else "FractalZ") + "Gm"


def _transdata(w: Writer, prog: Program, formats: dict[str, GmFormat]) -> None:
    """Convert the logical buffers of a conv kernel's operands into new GM buffers of their formats."""
    rt = runtime_rows(prog)
    for p, f in formats.items():
        dims = ", ".join(["lead[0]" if rt is not None and p in rt.tensors else str(f.shape[0]),
                          *(str(d) for d in f.shape[1:])])
        isz = itemsize(prog.tensor(p).dtype)
        buf, size = _converted(p, f), _converted(p, f) + "Bytes"
        if f.format == "NC1HWC0":
            w(f"// {p}: NCHW {list(f.shape)} -> NC1HWC0, the TransData CANN inserts for FORMAT_NC1HWC0",
              f"const size_t {size} = ks_twin::host::nc1hwc0_bytes({dims}, {isz});",
              f"uint8_t* {buf} = static_cast<uint8_t*>(AscendC::GmAlloc({size}));",
              f"ks_twin::host::nchw_to_nc1hwc0({_dev(p)}, {buf}, {size}, {dims}, {isz});")
        else:
            w(f"// {p}: [Cout, Cin, kh, kw] {list(f.shape)} -> FRACTAL_Z, the TransData CANN inserts for "
              "FORMAT_FRACTAL_Z",
              f"const size_t {size} = ks_twin::host::fractal_z_bytes({dims}, {isz});",
              f"uint8_t* {buf} = static_cast<uint8_t*>(AscendC::GmAlloc({size}));",
              f"ks_twin::host::weights_to_fractal_z({_dev(p)}, {buf}, {size}, {dims}, {isz});")


def _launch(w: Writer, prog: Program, k: Kernel) -> None:
    names = names_of(prog, k)
    inputs, outputs = io_params(prog, k)
    formats = gm_formats(prog, k)
    with _scoped(w, f"{names.op_type} (kernel {k.name}): {k.family}, {k.kernel_type}"):
        _transdata(w, prog, formats)
        storage = ""
        if formats:  # the storage shapes TransData leaves for the formats the OpDef declares
            rt = runtime_rows(prog)
            storage = ", {" + ", ".join("{" + ", ".join(
                ["lead[0]" if rt is not None and p in rt.tensors else str(formats[p].storage_shape[0]),
                 *map(str, formats[p].storage_shape[1:])]) + "}" if p in formats else "{}" for p in inputs) + "}"
        types = ["{" + ", ".join(GE_DTYPES[prog.tensor(p).dtype] for p in group) + "}" for group in (inputs, outputs)]
        w("// as a graph build would: the operator's InferShape and InferDataType give the buffers' shapes and types",
          f'ks_twin::host::check_inference("{names.op_type}", {_shapes(prog, inputs)}, {_shapes(prog, outputs)}, '
          f"{types[0]}, {types[1]});")
        w(f'ks_twin::host::Launch launch = ks_twin::host::run_tiling("{names.op_type}", {_shapes(prog, inputs)}, '
          f"{_shapes(prog, outputs)}, platform{storage});",
          "uint8_t* tiling = static_cast<uint8_t*>(AscendC::GmAlloc(launch.tiling.size()));",
          "std::memcpy(tiling, launch.tiling.data(), launch.tiling.size());",
          "uint8_t* workspace = static_cast<uint8_t*>(AscendC::GmAlloc(launch.workspace_bytes));",
          "ICPU_SET_TILING_KEY(launch.tiling_key);",
          f"AscendC::SetKernelMode(KernelMode::{KERNEL_MODES[k.kernel_type]});")
        args = "".join(f"{_converted(p, formats[p]) if p in formats else _dev(p)}, " for p in kernel_params(prog, k))
        w(f"ICPU_RUN_KF({names.snake}, launch.block_dim, {args}workspace, tiling);",
          "AscendC::GmFree(workspace);", "AscendC::GmFree(tiling);")
        for p, f in formats.items():
            w(f"AscendC::GmFree({_converted(p, f)});")


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
