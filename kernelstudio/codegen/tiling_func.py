"""The host source `op_host/<name>.cpp`: TilingFunc, the graph-mode InferShape and InferDataType
(infer_func.py) and the OpDef of one kernel.

Written the CANN way: TilingFunc fills the tiling data (tiling_header.py) through `set_` accessors and takes
the TCubeTiling from the Matmul tiling API (`matmul_tiling::MultiCoreMatmulTiling`) with the schedule's tiles
as its fixed split, then sets the fields the schedule decides beyond that split (L1 steps and depths, L0
buffering, core count); it sets the block dim, tiling key and workspace size the launch uses.

A program of one row-tiled vector kernel, of one matmul kernel whose rows are A's, or of one conv kernel
(either alone or with its epilogue) takes its row count (a conv: its batch) at run time
(`Kernel.runtime_rows`): TilingFunc checks the fixed dimensions, computes the rows, the tile counts, the block
dim (and for a matmul the TCubeTiling's M and core count and the workspace, one slot block per core) from the
input shape (the launcher, launcher.py, sizes its buffers from the same rows). Every other program is compiled
for fixed shapes: TilingFunc checks the input shapes it was generated for and fails (GRAPH_FAILED) for others.

Conv kernels read their feature map in NC1HWC0 and their weights in FRACTAL_Z (see conv.py): the OpDef
declares those formats, so CANN's graph engine inserts TransData in front of the operator and TilingFunc
checks the inputs' origin (logical) shapes.
"""

from __future__ import annotations

from collections.abc import Callable

from ..tileir.hints import RuntimeRows
from ..tileir.program import Copy, Kernel, Program, walk
from .attention import SECOND_TILING, attention_operands, attention_tilings, is_attention
from .conv import gm_formats
from .cube import MatmulOperands
from .highlevel import HighLevelPlan, high_level_tiling_fill
from .infer_func import GE_DTYPES, infer_functions, infer_registration
from .kernel import kernel_params, workspace_layout
from .layout import topk_spec, topk_tiling_call
from .naming import names_of
from .scope import Scope, runtime_rows
from .tiling_header import tiling_values
from .writer import Writer, camel

__all__ = ["host_source", "io_params", "workspace_bytes", "workspace_expr", "runtime_locals", "tile_lines",
           "cube_fill", "GE_DTYPES", "API_CUBE_FIELDS"]

MM_DTYPES = {"float16": "DT_FLOAT16", "bfloat16": "DT_BF16", "float32": "DT_FLOAT", "int8": "DT_INT8",
             "int32": "DT_INT32"}
# TCubeTiling fields the Matmul tiling API derives from the shapes and the fixed split; TilingFunc sets the
# other fields the schedule decides after GetTiling.
API_CUBE_FIELDS = frozenset({"M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK", "baseM", "baseN",
                             "baseK", "isBias"})


def io_params(prog: Program, k: Kernel) -> tuple[list[str], list[str]]:
    """The kernel's GM parameters it only reads (the operator's inputs) and those it writes (its outputs),
    each in parameter order. An unfused program's intermediate is an output of the kernel that writes it
    and an input of the ones that read it."""
    for p, kk, (ins, outs) in _IO:
        if p is prog and kk is k:
            return list(ins), list(outs)
    written = {s.dst.buf for s in walk(k.aic + k.aiv) if isinstance(s, Copy) and s.dst.gm}
    params = kernel_params(prog, k)
    ins, outs = [p for p in params if p not in written], [p for p in params if p in written]
    _IO[:] = [*_IO[-3:], (prog, k, (ins, outs))]
    return list(ins), list(outs)


# [(program, kernel, (inputs, outputs))]: TilingFunc and the launcher of one kernel ask in turn (each held, so
# `is` cannot meet a new object at a reused address)
_IO: list[tuple[Program, Kernel, tuple[list[str], list[str]]]] = []


def workspace_bytes(prog: Program, k: Kernel) -> int:
    """User workspace bytes of one kernel (its workspace tensors, 512-byte aligned)."""
    layout = workspace_layout(prog, k)
    if not layout:
        return 0
    last = max(layout, key=layout.get)
    return layout[last] + (prog.tensor(last).nbytes + 511) // 512 * 512


def runtime_locals(rt: RuntimeRows | None) -> dict[str, str]:
    """Tiling field -> the TilingFunc local that holds its run-time value (`rows`, `rowTiles`, `tiles`,
    `blockDim`)."""
    if rt is None:
        return {}
    out = {camel(rt.rows): "rows", "tiles": "tiles", "blockDim": "blockDim"}
    if rt.row_tiles:
        out[camel(rt.row_tiles)] = "rowTiles"
    return out


def _fill(w: Writer, var: str, prog: Program, k: Kernel, hl: HighLevelPlan | None = None) -> None:
    fields, cube = tiling_values(prog, k)
    runtime = runtime_locals(runtime_rows(prog))
    for f, v in fields:
        w(f"{var}.set_{f}({runtime.get(f, v)});")
    if cube and is_attention(k):  # two Matmul objects, a TCubeTiling each (codegen/attention.py)
        sc = Scope(prog, k)
        for ops_i, tiling_i, field, api in zip(attention_operands(sc), attention_tilings(sc),
                                               ("cubeTilingData", SECOND_TILING), ("cubeTiling", "cubeTiling2"),
                                               strict=True):
            cube_fill(w, var, prog, k, tiling_i, False, (ops_i, "float32", field, api))
    elif cube:
        cube_fill(w, var, prog, k, cube, runtime_rows(prog) is not None)
    topk = topk_spec(prog, k)
    if topk is not None:
        w(f"// TopK: one row of {topk.n} (padded to {topk.inner}) per call, top {topk.k}")
        with w.block(f"if (!{topk_tiling_call(topk, 'ascendcPlatform', f'{var}.topkTilingData').rstrip(';')})"):
            w("return ge::GRAPH_FAILED;")
    if hl is not None:
        high_level_tiling_fill(w, var, hl)


def _runtime_checks(w: Writer, prog: Program, k: Kernel, rt: RuntimeRows, inputs: list[str],
                    tiles: bool = True) -> None:
    """TilingFunc of a kernel that takes its row count at run time: every input's fixed dimensions as
    lowered, the row dimensions the same in all tensors that have them; rows, tiles and cores from them."""
    tiling = dict(k.tiling)
    R, tr = tiling[rt.rows], tiling[rt.tile] if rt.tile else 1
    lead = [f"{camel(p)}Shape" for p in inputs if p in rt.tensors]
    w(f"// Rows at run time: {', '.join(rt.tensors)} hold `rows` rows (the product of their first {rt.dims} "
      f"dimension(s); {R} when lowered), every other dimension is fixed by the schedule.")
    _input_checks(w, prog, k, inputs, rt)
    rows = " * ".join(f"{lead[0]}.GetDim({d})" for d in range(rt.dims))
    per_row = max(prog.tensor(p).size // R for p in rt.tensors)
    w(f"const int64_t rows = {rows};")
    w("// at least one row; offsets within 32 bits in the kernel")
    with w.block(f"if (rows < 1 || rows > {(2**31 - 1) // per_row})"):
        w("return ge::GRAPH_FAILED;")
    if tiles:
        w(*tile_lines("const uint32_t ", tr, rt.cores, rt))


def _input_checks(w: Writer, prog: Program, k: Kernel, inputs: list[str], rt: RuntimeRows | None) -> None:
    """TilingFunc's check of each input's shape: every dimension as lowered, but for the row dimensions of the
    tensors that take them at run time (`rt`), which must equal the first such input's. A conv operand stored
    in a private format is checked by its origin (logical) shape."""
    formats = gm_formats(prog, k)
    lead = [f"{camel(p)}Shape" for p in inputs if rt is not None and p in rt.tensors]
    for i, p in enumerate(inputs):
        shape, name = prog.tensor(p).shape, f"{camel(p)}Shape"
        scaled = rt is not None and p in rt.tensors
        if p in formats:
            w(f"const gert::Shape& {name} = context->GetInputShape({i})->GetOriginShape();  "
              f"// stored as {formats[p].format}")
        else:
            w(f"const gert::Shape& {name} = context->GetInputShape({i})->GetStorageShape();")
        free = rt.dims if scaled and rt is not None else 0  # leading dims the run sets
        cond = " || ".join([f"{name}.GetDimNum() != {len(shape)}"] +
                           [f"{name}.GetDim({d}) != {shape[d]}" for d in range(free, len(shape))] +
                           [f"{name}.GetDim({d}) != {lead[0]}.GetDim({d})" for d in range(free) if name != lead[0]])
        with w.block(f"if ({cond})"):
            w("return ge::GRAPH_FAILED;")


def tile_lines(decl: str, tile_rows: int, cores: int, rt: RuntimeRows | None = None) -> list[str]:
    """C++ that sets `tiles` and `blockDim` from `rows` for row tiles of `tile_rows` on at most `cores` cores;
    for a matmul kernel (`rt.row_tiles`) also `rowTiles`, and its tiles are the row tiles times its units per
    row tile."""
    row_tiles = f"static_cast<uint32_t>((rows + {tile_rows - 1}) / {tile_rows})"
    if rt is not None and not rt.tile:  # one row (a conv's image) per row tile
        return [f"{decl}tiles = static_cast<uint32_t>(rows) * {rt.per_row_tile};  // {rt.per_row_tile} C tiles "
                "per image",
                f"{decl}blockDim = tiles < {cores} ? tiles : {cores};  // the schedule's cores at most"]
    if rt is not None and rt.row_tiles:
        what = "group rows (l1_c_steps)" if rt.row_tiles == "m_groups" else "tile rows"
        lines = [f"{decl}rowTiles = {row_tiles};  // {what} of {tile_rows}",
                 f"{decl}tiles = rowTiles" + (f" * {rt.per_row_tile};  // {rt.per_row_tile} C tiles along n in each"
                                               if rt.per_row_tile > 1 else ";  // one row block each")]
    else:
        lines = [f"{decl}tiles = {row_tiles};  // row tiles of {tile_rows}"]
    return [*lines, f"{decl}blockDim = tiles < {cores} ? tiles : {cores};  // the schedule's cores at most"]


def cube_fill(w: Writer, var: str, prog: Program, k: Kernel, cube: dict[str, int], runtime: bool = False,
              which: tuple[MatmulOperands, str, str, str] | None = None) -> None:
    """TCubeTiling from the Matmul tiling API with the schedule's base block as its fixed split, then the
    fields the schedule decides beyond it; with `runtime`, M and the cores are the run's (`rows`, `blockDim`).
    `which`: (operands, C dtype, tiling field, API object name) of one of several Matmul objects (attention)."""
    if runtime:
        cube = {**cube, "M": "rows", "usedCoreNum": "blockDim"}  # type: ignore[dict-item]
    if which is None:
        from .cube import CubePart

        part = CubePart(Scope(prog, k))
        which = (part.ops, part._c_dtype(), "cubeTilingData", "cubeTiling")
    ops, c_dt, field, api = which
    a_dt, b_dt = prog.tensor(ops.a.buf).dtype, prog.tensor(ops.b.buf).dtype
    gm, nd = "matmul_tiling::TPosition::GM", "matmul_tiling::CubeFormat::ND"
    w("// TCubeTiling from the Matmul tiling API, with the schedule's base block as its fixed split",
      f"matmul_tiling::MultiCoreMatmulTiling {api}(ascendcPlatform);",
      f"{api}.SetDim({cube['usedCoreNum']});",
      f"{api}.SetAType({gm}, {nd}, matmul_tiling::DataType::{MM_DTYPES[a_dt]}, {str(ops.trans_a).lower()});",
      f"{api}.SetBType({gm}, {nd}, matmul_tiling::DataType::{MM_DTYPES[b_dt]}, {str(ops.trans_b).lower()});",
      f"{api}.SetCType({gm}, {nd}, matmul_tiling::DataType::{MM_DTYPES[c_dt]});",
      f"{api}.SetBiasType({gm}, {nd}, matmul_tiling::DataType::DT_FLOAT);",
      f"{api}.SetShape({cube['M']}, {cube['N']}, {cube['Ka']});",
      f"{api}.SetOrgShape({cube['M']}, {cube['N']}, {cube['Ka']}, {cube['Kb']});",
      f"{api}.SetSingleShape({cube['singleCoreM']}, {cube['singleCoreN']}, {cube['singleCoreK']});",
      f"{api}.SetFixSplit({cube['baseM']}, {cube['baseN']}, {cube['baseK']});",
      f"{api}.SetBias({'true' if cube.get('isBias') else 'false'});",
      f"{api}.SetBufferSpace(-1, -1, -1);")
    with w.block(f"if ({api}.GetTiling({var}.{field}) == -1)"):
        w("return ge::GRAPH_FAILED;")
    rest = [(f, v) for f, v in cube.items() if f not in API_CUBE_FIELDS]
    if rest:
        w("// the schedule's core count, L1 steps and depths, L0 buffering and walk order")
        # baseK again: some CANN versions do not take a fixed baseK from SetFixSplit
        for f, v in [("baseK", cube["baseK"]), *rest]:
            w(f"{var}.{field}.set_{f}({v});")


def host_source(prog: Program, k: Kernel, hl: HighLevelPlan | None = None,
                keyed: Callable[[Writer, str], None] | None = None) -> str:
    """TilingFunc (block dim, tiling values, workspace size), InferShape and InferDataType (infer_func.py) and
    the OpDef of one kernel. `keyed(w, var)`, for
    a kernel with run-time rows, writes the tiling of each key instead (tune/dynamic_code.py): it sets every
    field of `var` but the run-time ones (`runtime_locals`), and the locals `key`, `tiles`, `blockDim`,
    `wsBytes` (and `rowTiles` for a matmul kernel)."""
    names = names_of(prog, k)
    name = names.op_type
    inputs, outputs = io_params(prog, k)
    w = Writer()
    w(f"// Host side of {name} (kernel {k.name}): tiling and operator definition for a CANN custom-op project.")
    if names.note():
        w(f"// {names.note()}")
    w(f'#include "{names.snake}_tiling.h"', '#include "register/op_def_registry.h"',
      '#include "tiling/platform/platform_ascendc.h"', '#include "tiling/tiling_api.h"', "")
    with w.block("namespace optiling", "}  // namespace optiling"):
        with w.block("static ge::graphStatus TilingFunc(gert::TilingContext* context)"):
            rt = runtime_rows(prog)
            if rt is not None:
                _runtime_checks(w, prog, k, rt, inputs, tiles=keyed is None)
            else:
                w("// The schedule was lowered for these shapes; other shapes need a new kernelstudio build.")
                _input_checks(w, prog, k, inputs, None)
            w("auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());",
              f"{names.tiling} tiling;")
            if keyed is not None:
                keyed(w, "tiling")
                w(*(f"tiling.set_{f}({v});" for f, v in runtime_locals(rt).items()))
            else:
                _fill(w, "tiling", prog, k, hl)
            w(f"context->SetBlockDim({'blockDim' if rt is not None else k.block_dim});",
              f"context->SetTilingKey({'key' if keyed is not None else 0});",
              "tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), "
              "context->GetRawTilingData()->GetCapacity());",
              "context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());",
              "size_t* currentWorkspace = context->GetWorkspaceSizes(1);",
              "currentWorkspace[0] = ascendcPlatform.GetLibApiWorkSpaceSize() + "
              f"{'wsBytes' if keyed is not None else workspace_expr(prog, k, rt)};",
              "return ge::GRAPH_SUCCESS;")
    w("")
    infer_functions(w, prog, inputs, outputs, runtime_rows(prog))
    w("")
    with w.block("namespace ops", "}  // namespace ops"):
        with w.block(f"class {name} : public OpDef", "};"):
            w("public:")
            with w.block(f"explicit {name}(const char* name) : OpDef(name)"):
                formats = gm_formats(prog, k)
                if formats:
                    w("// conv operands in the cube's formats: the graph engine inserts TransData for them")
                for kind, group in (("Input", inputs), ("Output", outputs)):
                    for p in group:
                        dt = GE_DTYPES[prog.tensor(p).dtype]
                        fmt = formats[p].ge if p in formats else (
                            "ge::FORMAT_FRACTAL_NZ" if prog.tensor(p).format == "NZ" else "ge::FORMAT_ND")
                        w(f'this->{kind}("{p}").ParamType(REQUIRED).DataType({{{dt}}}).Format({{{fmt}}});')
                w("// graph mode: output shapes and data types from the inputs'", infer_registration(),
                  "this->AICore().SetTiling(optiling::TilingFunc);",
                  f'this->AICore().AddConfig("{_soc(prog.target)}");')
        w(f"OP_ADD({name});")
    return w.text()


def workspace_expr(prog: Program, k: Kernel, rt: RuntimeRows | None) -> str:
    """The user workspace bytes TilingFunc asks for: the lowered size, one slot block per core of the run, or
    (a sync_all kernel's whole-C workspace, one of `rt.tensors`) the run's rows of it."""
    scaled = [p for p in workspace_layout(prog, k) if rt is not None and p in rt.tensors]
    if rt is not None and scaled:
        (ws,) = scaled  # the only workspace tensor of such a kernel
        per_row = prog.tensor(ws).nbytes // dict(k.tiling)[rt.rows]
        return f"(static_cast<size_t>(rows) * {per_row} + 511) / 512 * 512"  # the run's rows of C
    if rt is None or not rt.ws_per_core:
        return str(workspace_bytes(prog, k))
    return f"(static_cast<size_t>(blockDim) * {rt.ws_per_core} + 511) / 512 * 512"  # a slot block per core


def _soc(target: str) -> str:
    """The CANN SoC family name AddConfig takes (ascend910b2 -> ascend910b)."""
    t = target.lower()
    return t.rstrip("0123456789") if t.startswith("ascend910b") else t
