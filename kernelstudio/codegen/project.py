"""CANN custom-operator project export: op_host/, op_kernel/, CMakeLists.txt, the msOpGen JSON, README.

Files are named after the operators (see naming.py): `op_kernel/<op>.cpp`, `<design>.json`, and the
README's msOpGen steps build the project in `<design>_op/` and call `aclnn<OpType>`.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..core.files import write_tree
from ..core.names import check_name, op_name
from ..hw.defines import chip_defines
from ..tileir.capacity import profile_of
from ..tileir.program import Program
from .conv import gm_formats
from .naming import op_names
from .scope import runtime_rows
from .tiling_func import GE_DTYPES, io_params

__all__ = ["write_project", "project_files", "op_json", "project_name"]

_JSON_TYPES = {k: v.removeprefix("ge::DT_").lower() for k, v in GE_DTYPES.items()}
_JSON_TYPES.update({"float16": "float16", "float32": "float", "bfloat16": "bfloat16"})


def op_json(prog: Program) -> list[dict]:
    """The operator description msOpGen reads (`msopgen gen -i <file>.json ...`), one entry per kernel."""
    ops = []
    names = op_names(prog)
    for k in prog.kernels:
        inputs, outputs = io_params(prog, k)
        formats = gm_formats(prog, k)  # conv operands: "NC1HWC0" / "FRACTAL_Z", as ge::Format names them
        desc = {"op": names[k.name].op_type, "language": "cpp", "input_desc": [], "output_desc": []}
        for key, group in (("input_desc", inputs), ("output_desc", outputs)):
            for p in group:
                t = prog.tensor(p)
                fmt = formats[p].format if p in formats else "FRACTAL_NZ" if t.format == "NZ" else "ND"
                desc[key].append({"name": p, "param_type": "required", "format": [fmt],
                                  "type": [_JSON_TYPES[t.dtype]]})
        ops.append(desc)
    return ops


def project_name(prog: Program) -> str:
    """The project's own name (JSON, CMake target, msOpGen output directory): the design's op name in
    CANN's snake spelling, `Custom`-suffixed like its op type (`attn_prolog`, `relu_custom`)."""
    return op_name(prog.name)[0]


def _cmake(prog: Program) -> str:
    names = " ".join(n.op_type for n in op_names(prog).values())
    proj = project_name(prog)
    units = " ".join(["main.cpp", *(n.kernel_file for n in op_names(prog).values()),
                      *(n.host_file for n in op_names(prog).values())])
    # a CANN build generates each kernel's tiling struct from its op_host/<op>_tiling.h; the twin build
    # includes the header into the kernel's translation unit instead
    # each kernel source is a kernel unit (host-only headers refuse it, as on CANN); its forced-in tiling
    # header gives it the plain kernel tiling structs
    structs = "\n".join(f'set_source_files_properties({n.kernel_file} PROPERTIES COMPILE_OPTIONS '
                        '"-DKS_TWIN_KERNEL_UNIT;-DKS_TWIN_TILING_STRUCTS;-include;'
                        f'${{CMAKE_CURRENT_SOURCE_DIR}}/{n.tiling_file}")' for n in op_names(prog).values())
    chip = " ".join(f"{k}={v}" for k, v in sorted(chip_defines(profile_of(prog)).items()))
    return f"""# CPU twin build of {prog.name}: `cmake -B build && cmake --build build` (needs g++ >= 12).
# On a machine with CANN, build the operator package with msOpGen instead (see README.md).
cmake_minimum_required(VERSION 3.16)
project({proj} CXX)
set(CMAKE_CXX_STANDARD 17)
set(KS_TWIN_INCLUDE "" CACHE PATH "kernelstudio twin headers (python -c 'import kernelstudio.twin.runner as r; \\
print(r.include_dir())')")
find_package(Threads REQUIRED)
# main.cpp declares the kernel entries and runs each operator's TilingFunc; each op_kernel/*.cpp and
# op_host/*.cpp is its own translation unit, as CANN builds them
add_executable({proj}_cpu {units})
{structs}
target_include_directories({proj}_cpu PRIVATE ${{KS_TWIN_INCLUDE}} ${{CMAKE_CURRENT_SOURCE_DIR}})
# the chip the twin headers check against: {prog.target}'s sizes and cores, from the profile lowered for
target_compile_definitions({proj}_cpu PRIVATE {chip})
target_link_libraries({proj}_cpu PRIVATE Threads::Threads)
# operators: {names}
"""


def _shapes_text(prog: Program) -> str:
    """The shapes paragraph of the README: fixed, or rows at run time."""
    listing = "\n".join(f"- `{t.name}`: {list(t.shape)} {t.dtype} ({t.role})" for t in prog.tensors)
    rt = runtime_rows(prog)
    if rt is None:
        return ("The tiling functions were generated for the shapes below; TilingFunc rejects other shapes (re-run "
                f"kernelstudio for them):\n\n{listing}")
    what, rows = ("its batch", "images") if rt.rows == "batch" else ("its row count", "rows")
    scaled = [t for t in rt.tensors if prog.tensor(t).role != "workspace"]  # a whole-C workspace follows them
    return (f"The operator takes {what} at run time: {', '.join(f'`{t}`' for t in scaled)} may have any "
            f"first {rt.dims} dimension(s) (the same in all of them; the kernel's {rows} are their product), and "
            "TilingFunc computes the tiles and the block dim from them. Every other dimension is fixed as "
            f"below (lowered shapes; TilingFunc rejects other fixed dimensions):\n\n{listing}\n\n"
            f"On the CPU, put the run's row dimension(s) in `dims.txt` next to the inputs (e.g. `"
            f"{' '.join(str(d) for d in prog.tensor(rt.tensors[0]).shape[:rt.dims])}`); without it the launcher "
            "uses the lowered ones.")


def _keys_text(keys: list[str]) -> str:
    """The README's paragraph on the tiling keys of a multi-bucket operator (DynamicKernel)."""
    if not keys:
        return ""
    listing = "\n".join(f"- {k}" for k in keys)
    return ("\n\n## Shape buckets\n\nOne operator serves every shape bucket: its TilingFunc picks the tiling "
            "key from the run-time row count and fills that bucket's tiling, and the kernel runs the bucket's code "
            "under `TILING_KEY_IS(key)`:\n\n" + listing)


def _readme(prog: Program, keys: list[str] | None = None) -> str:
    names = op_names(prog)
    kernels = "\n".join(f"- `{n.op_type}` (kernel {k.name}: {k.family}, {k.kernel_type}, block dim {k.block_dim}): "
                        f"`{n.kernel_file}`, `{n.host_file}`, `{n.tiling_file}`"
                        + (f". {n.note()[0].upper()}{n.note()[1:]}." if n.note() else "")
                        for k in prog.kernels for n in [names[k.name]])
    first = names[prog.kernels[0].name].op_type
    proj = project_name(prog)
    return f"""# {prog.name}: Ascend C custom operator generated by kernelstudio

Target: `{prog.target}`. Operators (one kernel each), launched in this order:

{kernels}

## Build and install on a machine with CANN (8.x)

1. Set up the toolkit: `source /usr/local/Ascend/ascend-toolkit/set_env.sh`.
2. Create the operator project from the description in this directory:
   `msopgen gen -i {proj}.json -c ai_core-{prog.target} -lan cpp -out {proj}_op`
3. Copy the generated sources over the templates:
   `cp op_host/* {proj}_op/op_host/ && cp op_kernel/* {proj}_op/op_kernel/`
   (the kernels read their tiling with GET_TILING_DATA; the build makes the struct from
   `op_host/<name>_tiling.h`, and the runtime fills it by calling each TilingFunc).
4. Build and install the operator package:
   `cd {proj}_op && bash build.sh && ./build_out/custom_opp_*.run`
5. Call it through aclnn (`aclnn{first}GetWorkspaceSize` / `aclnn{first}`) or from PyTorch via
   torch_npu's custom-op registration.

{_shapes_text(prog)}{_keys_text(keys or [])}

## Graph mode

Each operator registers InferShape and InferDataType (`SetInferShape` / `SetInferDataType` in its
`op_host/<name>.cpp`), which CANN's graph engine calls when it builds a graph: the output shapes follow the
input shapes as described above (an unknown row dimension, -1, passes through), the data types are the ones
listed, and other inputs fail (GRAPH_FAILED).

## Run on the CPU without an NPU

`main.cpp` is the CANN CPU-debug launcher (ICPU_RUN_KF): it declares each kernel entry (`extern "C"
__global__ __aicore__ void <op>(GM_ADDR ...)`), runs each operator's TilingFunc on the input shapes as the
runtime would, and is linked with the `op_kernel/*.cpp` and `op_host/*.cpp` files, each compiled as its own
translation unit, against the kernelstudio twin headers:
`cmake -B build -DKS_TWIN_INCLUDE=<twin include dir> && cmake --build build`, then run
`build/{proj}_cpu` in a directory holding the inputs as raw `<name>.bin` files; outputs are
written the same way. With `KS_TWIN_LOG=calls.log` set, the run also records every Ascend C call it
executes, per core (`kernelstudio.twin.CallLog.read("calls.log")` parses the file).
"""


def project_files(prog: Program, files: dict[str, str], keys: list[str] | None = None) -> dict[str, str]:
    """The generated files plus CMakeLists.txt, the msOpGen JSON and the README (which lists `keys`, the
    tiling keys of a multi-bucket operator, when given)."""
    all_files = dict(files)
    all_files["CMakeLists.txt"] = _cmake(prog)
    all_files[f"{project_name(prog)}.json"] = json.dumps(op_json(prog), indent=4) + "\n"
    all_files["README.md"] = _readme(prog, keys)
    return all_files


def write_project(prog: Program, out: str | Path, files: dict[str, str], *, overwrite: bool = False,
                  extra: dict[str, str] | None = None, keys: list[str] | None = None,
                  what: str = "export_project") -> Path:
    """Write the project files (and `extra` ones) under `out` (see `kernelstudio.core.files.write_tree`)."""
    check_name(what, prog.name)
    return write_tree(out, {**project_files(prog, files, keys), **(extra or {})}, overwrite=overwrite, what=what)
