"""Ascend C for an MC2 design, in CANN's MC2 pattern (ops-transformer mc2/matmul_all_reduce op_kernel).

One MIX kernel per operator. Core 0 (the AIC of block 0) creates the HCCL client, prepares one collective
for the long tiles (repeat = their count) and one for the short tile; then, tile after tile, the cube cores
run that tile's matmul, every core meets at `SyncAll`, and core 0 `Commit`s the tile, so HCCL's server moves
it while the next tile computes; at the end core 0 `Wait`s once per repeat and `Finalize`s. AllGatherMatmul
runs the other way round: its gathers are committed when prepared, the local rows multiply first, and each
gathered tile is multiplied after its `Wait`.

Each tile's matmul is the single-chip code generator's (kernelstudio.codegen) kernel for (rows, k) @ (k, n),
lowered for the long tile with its rows taken at run time: its kernel class goes to `op_kernel/<tile>.h`, its
TilingFunc and tiling struct to `op_host/`, and the MC2 TilingFunc runs that TilingFunc for the long and the
short tile and keeps both results (as CANN's MC2 tiling keeps a matmul tiling for its tile and its tail).
An epilogue (bias, the residual add, RmsNorm) is the single-chip generator's vector kernel for it
(`op_kernel/mc2_epilogue.h`), run by the vector cores on the collective's result. After the matmul loop,
tile after tile, core 0 `Wait`s for that tile's collective and the vector cores run the epilogue on its
rows, as CANN's MatmulAllReduceAddRmsNorm does (op_kernel/add_rms_norm_kernel.h: the vector cores take each
tile HCCL has finished, after the matmul loop); the model's epilogue events are these (timeline.py).
AllGatherMatmul's bias runs once over the whole output after the last gathered tile.

The communication engine: "aicpu" keeps HCCL's client on cube core 0; "aiv" declares the client on vector
core 0 (Hccl's HcclServerConfig{CoreType::ON_AIV, 0}), the communicator's collectives run on vector cores
(HCCL's op expansion mode AIV, a host-side setting of the communicator) and the epilogue is lowered for the
vector cores they leave. On the twin both engines move and reduce the data in the client's Commit / Wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..codegen import CodeBundle, TensorSpec
from ..codegen import codegen as single_chip_codegen
from ..core.dtypes import itemsize
from ..core.errors import UnsupportedError
from ..dsl import matmul, placeholder, rms_norm
from ..plan.create import create_schedule
from ..plan.depth import lower
from .design import Mc2Design
from .mc2_source import (
    comm_cores,
    host_source,
    kernel_source,
    launcher_source,
    out_rows,
    per_tile_epilogue,
    tiling_header,
)

__all__ = ["Mc2Code", "codegen", "Mc2Tiling", "mc2_tiling"]

_OPS = {"matmul_allreduce": ("MatmulAllReduce", "matmul_all_reduce"),
        "all_gather_matmul": ("AllGatherMatmul", "all_gather_matmul"),
        "matmul_reduce_scatter": ("MatmulReduceScatter", "matmul_reduce_scatter")}
_TILE_OP = "mc2_tile_matmul"  # the design name of the per-tile matmul
_EPILOGUE_OP = "mc2_epilogue"  # and of the epilogue after the collective


@dataclass(frozen=True)
class Mc2Code(CodeBundle):
    """The generated operator for all devices: `files` as a CodeBundle's; `inputs`/`outputs` are one rank's
    tensors (each rank reads and writes its own under `rank<r>/`), `devices` the rank count and
    `staging_bytes` the shared staging the twin's in-memory HCCL gives each rank."""

    devices: int = 1
    staging_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Mc2Tiling:
    """The M split as the tiling header carries it: `tile_cnt` long tiles of `tile_m` rows and `tail_cnt`
    (0 or 1) short tile of `tail_m` rows, first when `tail_first`."""

    tile_m: int
    tile_cnt: int
    tail_m: int
    tail_cnt: int
    tail_first: bool

    def rows(self) -> tuple[int, ...]:
        """The tiles' rows in the order the kernel runs them."""
        tail = (self.tail_m,) * self.tail_cnt
        longs = (self.tile_m,) * self.tile_cnt
        return tail + longs if self.tail_first else longs + tail


def mc2_tiling(design: Mc2Design) -> Mc2Tiling:
    """The design's tile rows as long tiles plus at most one short tile."""
    rows = design.tile_rows
    long = max(rows)
    short = [r for r in rows if r != long]
    t = Mc2Tiling(long, len(rows) - len(short), short[0] if short else 0, len(short),
                  bool(short) and rows[0] != long)
    if t.rows() != tuple(rows):  # MC2 splits into equal long tiles and one short tile; tiling.py keeps it so
        raise UnsupportedError(f"ks.multi.codegen: tile rows {list(rows)} are not long tiles plus one short one")
    return t


def _tile_program(design: Mc2Design) -> Any:
    """The single-chip program of one long tile: (tile_m, k) @ (k, n), rows taken at run time."""
    t = mc2_tiling(design)
    x = placeholder((t.tile_m, design.k), design.dtype, name="x")
    w = placeholder((design.k, design.n), design.dtype, name="w")
    prof = design.cluster.profile
    return lower(create_schedule(matmul(x, w), target=prof), target=prof, name=_TILE_OP)


def _check(design: Mc2Design) -> None:
    if not isinstance(design, Mc2Design):
        from ..core.errors import StageError

        raise StageError(f"ks.multi.codegen takes a design from ks.multi.matmul_allreduce, all_gather_matmul or "
                         f"matmul_reduce_scatter, got {type(design).__name__}")
    names = [t.name for t in (design.x, design.w, design.bias, design.add, design.gamma) if t is not None]
    clash = sorted(set(names) & {"y", "gather_out"})
    if clash:
        from ..core.errors import InputError

        raise InputError(f"ks.multi.codegen: placeholder name(s) {clash} are the generated operator's output names "
                         "(y, gather_out); rename the placeholder(s)")


def codegen(design: Mc2Design) -> Mc2Code:
    """The Ascend C of an MC2 design, for every device: the MC2 kernel, its tiling header and TilingFunc,
    the per-tile matmul from the single-chip code generator, the epilogue after the collective
    (bias, add, RmsNorm) from it too, and a main.cpp that runs one rank per process on the twin's in-memory
    HCCL (`ks.multi.run_twin`)."""
    _check(design)
    src, files = _sub_operator(_tile_program(design), "the tile matmul")
    epi = None
    if _has_epilogue(design):
        epi, epi_files = _sub_operator(_epilogue_program(design), "the epilogue")
        files.update(epi_files)
    op_type, mc2 = _OPS[design.kind]
    t = mc2_tiling(design)
    ins, outs = rank_tensors(design)
    files[f"op_kernel/{mc2}.cpp"] = kernel_source(design, t, op_type, mc2, src, epi)
    files[f"op_host/{mc2}_tiling.h"] = tiling_header(design, t, op_type, mc2, src, epi)
    files[f"op_host/{mc2}.cpp"] = host_source(design, t, op_type, mc2, src, epi)
    files["main.cpp"] = launcher_source(design, op_type, mc2, staging_bytes(design), ins, outs)
    return Mc2Code(name=mc2, files=files, inputs=ins, outputs=outs, target=design.cluster.target,
                   profile=design.cluster.profile, workspace_bytes=0, devices=design.cluster.devices,
                   staging_bytes=staging_bytes(design))


def _sub_operator(prog: Any, what: str) -> tuple[TileSource, dict[str, str]]:
    """A single-chip operator the MC2 kernel runs (its class as `op_kernel/<op>.h`, its host files as they are)."""
    code = single_chip_codegen(prog)
    kernels = [f for f in code.files if f.startswith("op_kernel/")]
    if len(kernels) != 1:
        raise UnsupportedError(f"ks.multi.codegen: {what} became {len(kernels)} kernels ({', '.join(kernels)}); "
                               "the MC2 kernel runs one single-chip kernel for it")
    snake = kernels[0].removeprefix("op_kernel/").removesuffix(".cpp")
    src = _parts(code, snake)
    files = {f"op_kernel/{snake}.h": src.kernel_class, f"op_host/{snake}.cpp": code.files[f"op_host/{snake}.cpp"],
             f"op_host/{snake}_tiling.h": code.files[f"op_host/{snake}_tiling.h"]}
    return src, files


def _has_epilogue(design: Mc2Design) -> bool:
    return design.bias is not None or design.add is not None or design.norm


def _epilogue_program(design: Mc2Design) -> Any:
    """The single-chip program of the epilogue on the collective's result y: [+ bias] [+ add] [RmsNorm], over
    a long tile's rows (rows taken at run time) when it runs tile by tile, else over the whole output; on the
    vector cores the communication engine leaves (all but aiv_comm_cores in AIV mode), as the model times it."""
    d = design
    rows = mc2_tiling(d).tile_m if per_tile_epilogue(d) else out_rows(d)
    y = placeholder((rows, d.n), d.dtype, name="y")
    out = y
    if d.bias is not None:
        out = out + placeholder((d.n,), d.dtype, name="bias")
    if d.add is not None:
        out = out + placeholder((rows, d.n), d.dtype, name="add")
    if d.norm:
        gamma = placeholder((d.n,), d.dtype, name="gamma") if d.gamma is not None else None
        out = rms_norm(out, gamma, eps=d.eps)
    prof = d.cluster.profile
    s = create_schedule(out, target=prof)
    cores = prof.aiv_cores - comm_cores(d)
    if cores < prof.aiv_cores:
        s[out].parallel(0, cores=cores)
    return lower(s, target=prof, name=_EPILOGUE_OP)


@dataclass(frozen=True, slots=True)
class TileSource:
    """What the MC2 files take from the single-chip tile operator."""

    snake: str  # op_kernel/<snake>.h, op_host/<snake>.cpp
    op_type: str  # its OpDef, whose TilingFunc the MC2 TilingFunc runs
    cls: str  # its kernel class
    tiling_struct: str  # its tiling struct's name
    struct_text: str  # BEGIN_TILING_DATA_DEF ... END_TILING_DATA_DEF; of that struct
    kernel_class: str  # the kernel file without its extern "C" entry
    params: tuple[str, ...] = ()  # its GM parameters' tensors, in Init's order (inputs, then outputs)
    shapes: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] = ((), ())  # inputs', outputs' shapes


def _parts(tile: CodeBundle, snake: str) -> TileSource:
    kernel = tile.files[f"op_kernel/{snake}.cpp"]
    cut = kernel.find('extern "C" __global__')
    header = tile.files[f"op_host/{snake}_tiling.h"]
    begin, end = header.find("BEGIN_TILING_DATA_DEF("), header.find("END_TILING_DATA_DEF;")
    if cut < 0 or begin < 0 or end < 0:
        raise UnsupportedError(f"ks.multi.codegen: the tile operator {snake} has no kernel entry or tiling struct "
                               "where the MC2 generator looks for them")
    struct = header[begin:end + len("END_TILING_DATA_DEF;")]
    name = struct[len("BEGIN_TILING_DATA_DEF("):struct.index(")")]
    op_type = name.removesuffix("TilingData")
    guard = f"MC2_TILE_{snake.upper()}_H"
    lines = kernel[:cut].rstrip().splitlines()
    includes = [ln for ln in lines if ln.startswith("#include")]
    body = "\n".join(ln for ln in lines if not ln.startswith("#include"))
    text = (f"// A single-chip kernel the MC2 operator runs: kernelstudio's {op_type}, its class only, in a namespace "
            f"of its own\n// (so that its file-scope constants meet no other kernel's).\n#ifndef {guard}\n"
            f"#define {guard}\n" + "\n".join(includes) + f"\n\nnamespace {snake} {{\n{body}\n}}  // namespace {snake}\n"
            f"#endif  // {guard}\n")
    params = tuple(t.name for t in (*tile.inputs, *tile.outputs))
    shapes = (tuple(t.shape for t in tile.inputs), tuple(t.shape for t in tile.outputs))
    return TileSource(snake, op_type, f"{snake}::Kernel{op_type}", name, struct, text, params, shapes)


def staging_bytes(design: Mc2Design) -> int:
    """Bytes one rank sends over the whole operator (what the twin's HCCL stages per rank)."""
    isz = itemsize(design.dtype)
    if design.kind == "all_gather_matmul":
        return design.m * design.k * isz
    return design.m * design.n * isz


def rank_tensors(design: Mc2Design) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
    """One rank's inputs and outputs as main.cpp reads and writes them (x flattened to (m, k))."""
    d, p = design, design.cluster.devices
    ins = (TensorSpec(d.x.name, (d.m, d.k), d.dtype), TensorSpec(d.w.name, (d.k, d.n), d.dtype))
    ins += tuple(TensorSpec(t.name, shape, d.dtype) for t, shape in (
        (d.bias, (d.n,)), (d.add, (d.m, d.n)), (d.gamma, (d.n,))) if t is not None)
    if d.kind == "all_gather_matmul":
        outs = (TensorSpec("y", (d.m * p, d.n), d.dtype), TensorSpec("gather_out", (d.m * p, d.k), d.dtype))
    elif d.kind == "matmul_reduce_scatter":
        outs = (TensorSpec("y", (d.m // p, d.n), d.dtype),)
    else:
        outs = (TensorSpec("y", (d.m, d.n), d.dtype),)
    return ins, outs
