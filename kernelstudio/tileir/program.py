"""TileIR: the one tiled program that the interpreter, the simulator and the code generator read.

A `Program` is a list of `Kernel`s launched one after another. A kernel runs `block_dim` blocks;
each block runs the `aic` statements on its cube core (AIC) and/or the `aiv` statements on its
vector core(s) (AIV; two per block for MIX_AIC_1_2, told apart by the variable `sub`). Inside a
block the variable `blk` is the block index (GetBlockIdx()).

Memory. `GmTensor`s live in global memory (inputs, outputs, intermediates of unfused plans, and
workspaces that carry cube results to the vector cores). On-chip `Buffer`s live in a tier (L1,
L0A, L0B, L0C, UB) with `depth` slots; a buffer with a queue position behaves as a TQue: `Alloc`
binds its next free slot (round robin), `EnQue` hands the bound slot to the consumer, `DeQue`
binds the oldest enqueued slot, `Free` releases the bound slot. Instructions that name a buffer
address its bound slot. Buffers without a queue (TBuf scratch) have one slot, always bound.

Every data access is a `Region`: a 2-D strided window (rows x cols, `stride` elements between row
starts) at an element `offset` of a GM tensor (flattened, C order) or of a buffer slot.

Synchronisation. Queue operations and cross-core flags are the only synchronisation, exactly as in
the generated Ascend C, where they compile to set_flag/wait_flag instructions that the scalar unit
issues into the PIPES' queues without stalling itself (that is why double buffering overlaps):
- `EnQue(buf)` is a set_flag on the pipe(s) that wrote the bound slot: it fires when they finish.
- `DeQue(buf)` is a wait_flag on the consumer pipe(s): instructions issued after it that touch the
  dequeued slot do not start before that slot's EnQue fired. The scalar does not stall.
- `Alloc(buf)` hands out the next slot; instructions issued after it that write the slot do not
  start before the slot's previous `Free` fired. The scalar does not stall (queue depth bounds
  how far producers can run ahead).
- `Free(buf)` is a set_flag on the pipe(s) that last read or wrote the slot: it fires when they
  finish.
- `CrossSet(flag, pipe)` fires when all earlier work of `pipe` on this core is done;
  `CrossWait(flag)` blocks the following instructions of this core (all pipes) until a matching
  set of the other side of the block arrived (counting semaphore; mode 2: an AIC set wakes both
  AIVs; the AIC's wait needs a set from each of its AIVs).
- `SetFlag(src, dst, e)` / `WaitFlag(src, dst, e)` order two pipes of one core where no queue does:
  a scalar `Load` (GetValue) of UB data an MTE2 copy brought in, or MTE2 filling an output queue
  that MTE3 drains. A `Load` itself carries no synchronisation.

Semantics of each instruction are in its docstring; `pipe_of` says which pipe runs it.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ir.ops import itemsize
from .expr import Const, Expr
from .hints import RowComposite, RuntimeRows, TileWalk

__all__ = [
    "Tier", "Pipe", "CoreType", "QuePos", "GmTensor", "Buffer", "Region",
    "Copy", "Mmad", "Img2Col", "VecOp", "Reduce", "VecCall", "TopK", "MrgSort", "GateTopK", "Alloc", "EnQue", "DeQue",
    "Free",
    "CrossSet", "CrossWait", "SyncAll", "SetFlag", "WaitFlag", "Loop", "Let", "If", "Stmt", "Instr", "Kernel",
    "Program",
    "pipe_of", "walk",
]


class Tier(enum.Enum):
    GM = "GM"
    L1 = "L1"
    L0A = "L0A"
    L0B = "L0B"
    L0C = "L0C"
    UB = "UB"


class Pipe(enum.Enum):
    S = "S"        # scalar: issue, index math, queue bookkeeping
    MTE1 = "MTE1"  # L1 -> L0A/L0B (and img2col)
    MTE2 = "MTE2"  # GM -> L1 / UB
    MTE3 = "MTE3"  # UB -> GM
    M = "M"        # cube (Mmad)
    V = "V"        # vector
    FIX = "FIX"    # L0C -> GM / UB (FixPipe)


class CoreType(enum.Enum):
    AIC = "aic"
    AIV = "aiv"


class QuePos(enum.Enum):
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    A1 = "A1"  # L1, left matrix
    B1 = "B1"  # L1, right matrix
    A2 = "A2"  # L0A
    B2 = "B2"  # L0B
    CO1 = "CO1"  # L0C


@dataclass(frozen=True, slots=True)
class GmTensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    role: str  # "input" | "output" | "intermediate" | "workspace"
    format: str = "ND"  # "NZ": an input whose GM bytes are FRACTAL_NZ (core/formats.py); regions stay logical

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * itemsize(self.dtype)


@dataclass(frozen=True, slots=True)
class Buffer:
    """An on-chip allocation: `depth` slots of rows x cols elements (cols padded to 32 bytes)."""

    name: str
    tier: Tier
    dtype: str
    rows: int
    cols: int
    depth: int = 1
    queue: QuePos | None = None  # None: TBuf scratch, one slot, no queue operations
    core: CoreType = CoreType.AIV
    purpose: str = ""  # one line for printers and views

    @property
    def slot_elems(self) -> int:
        return self.rows * self.cols

    @property
    def slot_bytes(self) -> int:
        return self.slot_elems * itemsize(self.dtype)

    @property
    def nbytes(self) -> int:
        return self.slot_bytes * self.depth


@dataclass(frozen=True, slots=True)
class Region:
    """rows x cols elements of `buf` starting at `offset`, `stride` elements between rows.

    `gm` says whether `buf` names a GmTensor (True) or a Buffer (False). In a VecOp a source whose
    rows (or cols) is Const(1) while the destination's is not is broadcast along that axis.
    """

    buf: str
    offset: Expr
    rows: Expr
    cols: Expr
    stride: Expr
    gm: bool = False

    def __str__(self) -> str:
        where = f"gm.{self.buf}" if self.gm else self.buf
        return f"{where}[{self.offset} : {self.rows}x{self.cols} /{self.stride}]"


@dataclass(frozen=True, slots=True)
class Copy:
    """dst <- src, element-wise over rows x cols (src and dst shapes agree), converting dtype where
    dst's differs (FixPipe f32 -> f16, or DataCopy between equal dtypes otherwise).

    `nd2nz` marks GM->L1 moves that a real chip reformats to the fractal layout on the fly; it
    changes cost, not values. With `valid_cols`, src columns at or past it read as zeros: a GM
    tensor the layout transform pads with zeros (a conv's weights, input channels padded to whole
    C0 blocks); the move still costs every column, as on the chip."""

    dst: Region
    src: Region
    nd2nz: bool = False
    comment: str = ""
    valid_cols: Expr | None = None


@dataclass(frozen=True, slots=True)
class Mmad:
    """c[m,n] (=|+=) a[m,k] @ b, float32 accumulation in L0C (a as `a_layout` says).

    `b_layout` "kn": b region is k rows x n cols; "nk": n rows x k cols (B transposed, as for
    matmul(transpose_b=True)). `init` (an expression, nonzero = true) zeroes c first."""

    c: Region
    a: Region
    b: Region
    m: Expr
    k: Expr
    n: Expr
    init: Expr
    b_layout: str = "kn"
    a_layout: str = "mk"  # "km": a region is k rows x m cols (matmul(transpose_a=True))
    comment: str = ""


@dataclass(frozen=True, slots=True)
class Img2Col:
    """L1 -> L0B patch matrix of a convolution (Load3D): dst[p, kk] for p < pixels, kk < klen is

        input[c, h, w] with  gp = p0 + p, oh = gp // out_w, ow = gp % out_w,
                             k = k0 + kk, c = k // (kh*kw), i = (k // kw) % kh, j = k % kw,
                             h = oh*stride_h - pad_top + i, w = ow*stride_w - pad_left + j,

    and 0 where (h, w) falls outside the in_h x in_w input. `src` holds, for every channel c,
    `slab_rows` input rows starting at row `h0` (row h of channel c at src offset
    c*slab_rows*in_w + (h - h0)*in_w)."""

    dst: Region
    src: Region
    cin: int
    in_h: int
    in_w: int
    kh: int
    kw: int
    stride: tuple[int, int]
    pad: tuple[int, int, int, int]  # top, bottom, left, right
    out_w: int
    slab_rows: int
    p0: Expr      # first output pixel (oh*out_w + ow) of this tile
    pixels: Expr  # rows of dst
    k0: Expr      # first patch column
    klen: Expr    # columns of dst
    h0: Expr      # first input row held in src (may be negative: top padding)
    comment: str = ""
    cin_valid: int = 0  # channels that hold data when `cin` is padded to whole C0 blocks (the rest read 0)


@dataclass(frozen=True, slots=True)
class VecOp:
    """dst = op(srcs..., scalar) over dst.rows x dst.cols, computed in dst's dtype (sources of
    another dtype only for "cast", which rounds to nearest even)."""

    op: str
    dst: Region
    srcs: tuple[Region, ...]
    scalar: float | None = None
    comment: str = ""


@dataclass(frozen=True, slots=True)
class Reduce:
    """dst[r, 0] (=|op=) reduce_op(src[r, :]) along each row (op "sum" or "max").

    With `accumulate` the row result is combined into dst (two-pass schemes over column tiles).
    The code issues it as the WholeReduceSum / WholeReduceMax calls `vec_calls.expand` lists (so does
    the simulator); broadcasting and row-looped `VecOp`s are split the same way."""

    op: str
    dst: Region
    src: Region
    accumulate: bool = False
    comment: str = ""


@dataclass(frozen=True, slots=True)
class VecCall:
    """One Ascend C vector call as the code generator writes it and the simulator prices it; made by
    `vec_calls.expand` from a `Reduce` or a broadcasting / row-looped `VecOp`, never by the lowering.

    `api` is the Ascend C name, `op` the cost name (`CostModel.vector_cycles`), `dtype` the element
    type the cost uses (the source's for a cast, whose target is `dst_dtype`). Regions give a buffer
    (or `vec_calls.WORK`, the kernel's reduce scratch) and a start offset. form "repeat": `repeats`
    repeats of the first `mask` elements, `params` the stride arguments in the API's order (blocks of
    32 bytes; WholeReduce: dstRepStride in results). form "count": the first `count` elements."""

    api: str
    op: str
    dtype: str
    dst: Region
    srcs: tuple[Region, ...]
    form: str  # "repeat" | "count"
    mask: Expr = Const(0)
    repeats: Expr = Const(0)
    params: tuple[int, ...] = ()
    count: Expr = Const(0)
    scalar: float | None = None
    dst_dtype: str = ""
    comment: str = ""


@dataclass(frozen=True, slots=True)
class TopK:
    """Per row of src: the k largest values (descending; ties -> lower index first) into `values`
    and their column indices + `index_base` (int32) into `indices`; with `largest` False the k smallest,
    ascending (ties -> lower index first). k = the row length sorts the whole row (ks.argsort)."""

    values: Region
    indices: Region
    src: Region
    k: int
    index_base: Expr = Const(0)
    comment: str = ""
    largest: bool = True


@dataclass(frozen=True, slots=True)
class MrgSort:
    """Merge two sorted runs of (key, index) pairs into one, on the vector unit (Ascend C's MrgSort of two
    lists). The runs sit one after the other in one row: src_keys / src_indices columns [0, first) are the
    first run, [first, cols) the second; both are sorted by key (ascending, or descending with `largest`),
    equal keys by increasing index. The merged run, in the same order, goes to `keys` / `indices` (float32
    keys, int32 indices). Ties compare the indices, so merging runs of a stable sort stays stable."""

    keys: Region
    indices: Region
    src_keys: Region
    src_indices: Region
    first: Expr
    largest: bool = False
    comment: str = ""


@dataclass(frozen=True, slots=True)
class GateTopK:
    """MoE expert selection on the scalar unit, per row of `src` (the selection values, float32): the
    group-limited top-k of `core.gating.gate_select` (groups of src.cols // groups experts scored by
    `group_select`, the `topk_groups` best kept, the k best experts among them; ties to the lower index).
    The chosen experts' ids (int32) go to `indices`, their values in `scores` (same layout as src) to
    `values`, best first. The code is scalar loops (GetValue / SetValue); the program orders it with
    SetFlag/WaitFlag V -> S before and S -> V after."""

    values: Region
    indices: Region
    src: Region
    scores: Region
    k: int
    groups: int = 1
    topk_groups: int = 1
    group_select: str = "top2_sum"
    comment: str = ""


@dataclass(frozen=True, slots=True)
class Alloc:
    buf: str


@dataclass(frozen=True, slots=True)
class EnQue:
    buf: str


@dataclass(frozen=True, slots=True)
class DeQue:
    buf: str


@dataclass(frozen=True, slots=True)
class Free:
    buf: str


@dataclass(frozen=True, slots=True)
class CrossSet:
    """Cross-core flag set (mode 2) after all earlier work of `pipe` on this core is done."""

    flag: int
    pipe: Pipe


@dataclass(frozen=True, slots=True)
class CrossWait:
    flag: int


@dataclass(frozen=True, slots=True)
class SyncAll:
    """The all-core barrier of a mixed kernel (Ascend C's hard `SyncAll<false>()`): every AIC and AIV of every
    block of the launch waits here until all of them have arrived, their pipes drained. Every core of the
    kernel must reach it the same number of times, and the launch's block_dim may not exceed the chip's AI
    cores (blocks of a later round could never arrive)."""

    comment: str = ""


@dataclass(frozen=True, slots=True)
class SetFlag:
    """set_flag(src, dst, event): fires once every earlier instruction of pipe `src` on this core is done.

    For hand-offs the queues do not cover (a scalar read of UB, or MTE2 filling an output queue)."""

    src: Pipe
    dst: Pipe
    event: int


@dataclass(frozen=True, slots=True)
class WaitFlag:
    """wait_flag(src, dst, event): the instructions of pipe `dst` issued after it (the scalar itself when
    `dst` is S) wait for the oldest matching SetFlag."""

    src: Pipe
    dst: Pipe
    event: int


@dataclass(frozen=True, slots=True)
class Let:
    var: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Loop:
    """for var in range(start, stop, step): body. `tile` names the tile index this loop walks
    (for events and views); `comment` says which schedule directive or pass made it. `stage` (optional) names
    the kernel stage each iteration runs (the fused attention kernel's "bmm1", "vec1", ...): iteration `var` is
    that stage of block `var`; the simulator's events of the body carry it (sim `stage_loop`)."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...]
    comment: str = ""
    stage: str = ""


@dataclass(frozen=True, slots=True)
class If:
    cond: Expr  # nonzero = true
    body: tuple[Stmt, ...]
    comment: str = ""
    # a replayed trace's per-core dispatch (ascendc/timeline.py), not a branch of the kernel: the simulated
    # scalar unit pays no issue cycle for it
    dispatch: bool = False


Instr = (Copy | Mmad | Img2Col | VecOp | Reduce | VecCall | TopK | MrgSort | GateTopK | Alloc | EnQue | DeQue | Free
         | CrossSet | CrossWait | SyncAll | SetFlag | WaitFlag)
Stmt = Instr | Let | Loop | If


@dataclass(frozen=True, slots=True)
class Kernel:
    name: str
    family: str  # "vector" | "cube" | "cube_vector" | "attention" (the fusion pass's family of the kernel)
    kernel_type: str  # "AIV_ONLY" | "AIC_ONLY" | "MIX_AIC_1_2"
    block_dim: int
    params: tuple[str, ...]  # GM tensors in argument order: inputs, outputs, workspaces
    buffers: tuple[Buffer, ...]
    aic: tuple[Stmt, ...] = ()
    aiv: tuple[Stmt, ...] = ()
    tiling: tuple[tuple[str, int], ...] = ()  # named constants the body's expressions use
    ops: tuple[str, ...] = ()  # graph node names this kernel computes
    notes: tuple[str, ...] = ()  # why: reduction scheme, fusion rules, clamps
    vec_per_block: int = 1  # AIV programs per block: 2 for MIX_AIC_1_2, else 1
    does: str = ""  # what it computes in a word or two (matmul_gelu, layer_norm): names its operator
    tile_walk: TileWalk | None = None  # cube kernels: the order C tiles are dealt out and what each reads (L2 model)
    runtime_rows: RuntimeRows | None = None  # vector kernels whose code can take another row count
    row_composite: RowComposite | None = None  # vector kernels that are one row composite, over full rows
    inplace_bytes: int = 0  # bytes it writes into an input it updates in place (a scatter's rows): compulsory
    # values the simulator takes for scalar reads (Load) of these GM tensors, which it cannot see (a grouped matmul's
    # planned group list); the interpreter and the code read the data
    planned_loads: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def tiling_value(self, name: str) -> int:
        return dict(self.tiling)[name]


@dataclass(frozen=True, slots=True)
class Program:
    name: str
    target: str
    tensors: tuple[GmTensor, ...]
    kernels: tuple[Kernel, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    fused: bool = True
    passes: Sequence[tuple[str, str]] = field(default=(), compare=False)  # (pass, IR text) after each pass
    # the HardwareProfile the program was lowered for (overrides included); simulate, codegen and the
    # twin use it instead of looking `target` up again. None for hand-built programs.
    profile: Any = None

    def tensor(self, name: str) -> GmTensor:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)


_LOCAL_PIPE = {
    (Tier.GM, Tier.L1): Pipe.MTE2, (Tier.GM, Tier.UB): Pipe.MTE2,
    (Tier.L1, Tier.L0A): Pipe.MTE1, (Tier.L1, Tier.L0B): Pipe.MTE1,
    (Tier.L0C, Tier.GM): Pipe.FIX, (Tier.L0C, Tier.UB): Pipe.FIX, (Tier.L0C, Tier.L1): Pipe.FIX,
    (Tier.UB, Tier.GM): Pipe.MTE3, (Tier.UB, Tier.UB): Pipe.V, (Tier.L1, Tier.GM): Pipe.MTE3,
}


def pipe_of(instr: Instr, tier_of: dict[str, Tier]) -> Pipe:
    """The pipe that runs `instr`; `tier_of` maps buffer names to tiers (GM regions need none)."""
    t = type(instr)
    if t is VecCall or t is VecOp or t is Reduce or t is TopK or t is MrgSort:
        return Pipe.V
    if t is Copy:
        src = Tier.GM if instr.src.gm else tier_of[instr.src.buf]
        dst = Tier.GM if instr.dst.gm else tier_of[instr.dst.buf]
        return _LOCAL_PIPE[(src, dst)]
    if t is Mmad:
        return Pipe.M
    if t is Img2Col:
        return Pipe.MTE1
    if t is SetFlag:
        return instr.src
    if t is WaitFlag:
        return instr.dst
    return Pipe.S


def walk(stmts: tuple[Stmt, ...]):
    """Every statement, depth first, loops and ifs before their bodies."""
    stack = [iter(stmts)]
    while stack:
        for s in stack[-1]:
            yield s
            if isinstance(s, (Loop, If)):
                stack.append(iter(s.body))
                break
        else:
            stack.pop()


def _slot_init(cls: type) -> None:
    """Give frozen slotted dataclass `cls` an __init__ equal to the generated one (same parameters and
    defaults) that sets each slot through the slot's own setter: the generated one goes through
    object.__setattr__ field by field, and lowering builds hundreds of statements and regions per kernel."""
    params, body, ns = [], [], {}
    for f in dataclasses.fields(cls):
        if not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING:
            return  # not the simple case: keep the generated __init__
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            ns[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        ns[f"_s_{f.name}"] = cls.__dict__[f.name].__set__
        body.append(f"    _s_{f.name}(self, {f.name})")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"]) + "\n", ns)  # noqa: S102
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]


for _cls in list(globals().values()):
    if (isinstance(_cls, type) and _cls.__module__ == __name__ and dataclasses.is_dataclass(_cls)
            and _cls.__dataclass_params__.frozen and "__slots__" in _cls.__dict__  # type: ignore[attr-defined]
            and "__post_init__" not in _cls.__dict__):
        _slot_init(_cls)
del _cls
