"""Ascend C code generation from TileIR: `codegen(prog) -> CodeBundle`, `export_project(prog, dir)`.

Per kernel, one operator named after the design (naming.py): `op_kernel/<op>.cpp` (kernel.py;
vector statements in vector.py, cube statements as Matmul API calls in cube.py, or for convolutions
as cube basic-API calls in conv.py), `op_host/<op>_tiling.h` (tiling_header.py) and `op_host/<op>.cpp`
(TilingFunc and OpDef, tiling_func.py). One `main.cpp` (launcher.py) declares the kernel entries and
launches them in order on the CPU twin (ICPU_RUN_KF) with GM intermediates allocated there; each
`op_kernel/<op>.cpp` is its own translation unit, linked with it.
With `high_level=True`, kernels that are one softmax / layer_norm / rms_norm over whole rows are written
with the Ascend C high-level API instead (highlevel.py).

Stage 7, one of the three readers of the TileIR. It may import core/, hw/ and tileir/, never interp/ or sim/.
"""

from __future__ import annotations

from pathlib import Path

from ..core.checks import as_bool
from ..core.errors import InputError
from ..tileir.analyses import ANALYSES as _TILEIR_ANALYSES
from ..tileir.analyses import Analysis
from ..tileir.program import Program
from .bundle import CodeBundle, TensorSpec
from .grouped import grouped_kernel_source, is_grouped
from .highlevel import HighLevelPlan, high_level_kernel_source, high_level_plan
from .kernel import kernel_source
from .launcher import main_source
from .naming import OpNames, names_of, naming_text, op_names
from .scope import runtime_rows
from .tiling_func import host_source, workspace_bytes
from .tiling_header import tiling_header

__all__ = ["ANALYSES", "codegen", "export_project", "generate_files", "op_names", "names_of", "OpNames", "CodeBundle",
           "TensorSpec"]

# the analyses the readers run after lower()'s passes, in the order they run: tileir's, then operator naming
ANALYSES: list[Analysis] = [*_TILEIR_ANALYSES, ("name_operators", "operator, class and file names", naming_text)]


def generate_files(prog: Program, *, high_level: bool = False) -> dict[str, str]:
    """Every generated file of `prog`, by relative path. `high_level`: see `codegen`."""
    return _files(prog, high_level)


def _files(prog: Program, high_level: bool) -> dict[str, str]:
    files: dict[str, str] = {}
    for k in prog.kernels:
        n = names_of(prog, k)
        plan = high_level_plan(prog, k) if high_level else None
        if is_grouped(k):  # its tile list comes from the group list at run time (grouped.py)
            files[n.kernel_file] = grouped_kernel_source(prog, k)
            plan = None
        elif isinstance(plan, HighLevelPlan):
            files[n.kernel_file] = high_level_kernel_source(prog, plan)
        else:
            src = kernel_source(prog, k)
            if plan is not None:  # asked for, not covered: say why in the file
                src = f"// high_level: not used for this kernel: {plan}\n" + src
            files[n.kernel_file] = src
            plan = None
        files[n.tiling_file] = tiling_header(prog, k, plan)
        files[n.host_file] = host_source(prog, k, plan)
    files["main.cpp"] = main_source(prog)
    return files


def codegen(prog: Program, *, high_level: bool = False) -> CodeBundle:
    """Generate the Ascend C of `prog` as a CodeBundle the CPU twin can compile and run.

    `high_level=True` writes each vector kernel that is exactly one softmax, layer_norm or rms_norm over
    whole rows with the Ascend C high-level API (`AscendC::SoftMax`, `LayerNorm`, `RmsNorm`, their tiling
    filled on the host by the API's tiling functions) instead of basic vector instructions; other kernels
    keep the basic code (their kernel file says why). The result is the same computation; `ks.simulate`
    still prices the TileIR's instructions (see highlevel.py)."""
    from ..core.checks import need

    prog = need(prog, Program, "codegen")
    high_level = _flag(high_level, "codegen")
    rt = runtime_rows(prog)
    specs = {t.name: TensorSpec(t.name, t.shape, t.dtype, rt.dims if rt is not None and t.name in rt.tensors else 0,
                                t.format) for t in prog.tensors}
    ws = max((workspace_bytes(prog, k) for k in prog.kernels), default=0)
    return CodeBundle(
        name=prog.name,
        files=_files(prog, high_level),
        inputs=tuple(specs[n] for n in prog.inputs),
        outputs=tuple(specs[n] for n in prog.outputs),
        target=prog.target,
        profile=prog.profile,
        workspace_bytes=ws,
    )


def export_project(prog: Program, out_dir: str | Path, *, overwrite: bool = False, high_level: bool = False) -> Path:
    """Write a CANN custom-operator project for `prog` into `out_dir`; returns the directory.

    `out_dir` must be empty or new unless `overwrite=True`, which replaces the files an earlier
    export wrote there (and refuses to touch any other file). `high_level`: see `codegen`."""
    from ..core.checks import need
    from .project import write_project

    prog = need(prog, Program, "export_project")
    high_level = _flag(high_level, "export_project")
    return write_project(prog, out_dir, _files(prog, high_level), overwrite=overwrite)


def _flag(value: object, call: str) -> bool:
    """`high_level` as a bool: True/False (or NumPy's), else an InputError (a string such as "no" is not False)."""
    flag = as_bool(value)
    if flag is None:
        raise InputError(f"{call}: high_level must be True or False, got {value!r}")
    return flag
