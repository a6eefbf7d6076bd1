"""The trace front end of the simulator: a twin call log (what each core of a run executed, call by call) as a
TileIR program whose every core replays its own calls, simulated by the same engine, costs, L2 model and
events as a designed kernel (`ks.simulate`).

    res = simulate_log(k.log, tensors, params, target="ascend910b2")   # a SimResult
    res = k.sim                                                        # the same for a loaded kernel

How a call becomes a statement (the engine prices and orders the statements, nothing is timed here):
- DataCopy / DataCopyPad -> Copy between GM (the tensor of the kernel parameter the twin's `gm=` ref names)
  and the queue buffer its on-chip operand lies in, sized by the bytes moved on the GM side; a UB -> UB
  DataCopy of `count` elements -> the vector copy the TileIR prices it as;
- a vector call -> VecCall with its count (count form) or repeats (mask/repeat form), priced as the op of
  its API (`tileir.vector_ops`), dtype from the call; its operands' queue buffers order it;
- AllocTensor / EnQue / DeQue / FreeTensor -> Alloc / EnQue / DeQue / Free of the one queue buffer the twin
  handed out (each buffer of a TQue is a depth-1 queue buffer named `<POSITION>@<byte>[<i>]`, so a kernel
  that holds several tensors of one queue is ordered by the buffer each call really touches);
- SetFlag / WaitFlag -> SetFlag / WaitFlag; PipeBarrier<PIPE_ALL> -> the scalar waits for every pipe of its
  core (a SetFlag / WaitFlag<pipe -> S> pair per pipe, event id 1048576, which the timeline shows as those
  waits);
  CrossCoreSetFlag / CrossCoreWaitFlag -> CrossSet / CrossWait; SyncAll -> SyncAll; a scalar read or write
  of on-chip memory (GetValue / SetValue) -> one scalar step.
Each core's statements sit under `if blk == b and sub == s`, so block b's cores run exactly their own calls.

- the cube basic API: LoadData -> a move L1 -> L0A/L0B of the bytes it writes (Load3Dv2's img2col included),
  Mmad -> Mmad(m, k, n), Fixpipe -> a move L0C -> GM of the bytes it writes, Nd2Nz DataCopy -> an nd2nz move.
- the Matmul high-level API: its own lines (Matmul::Iterate, ...) are not instructions; the twin logs the work
  each stands for as the basic-API calls above (marked internal=1, at the user's Iterate / IterateAll /
  GetTensorC line): slab copies GM -> A1 / B1 (Nd2Nz), per k tile LoadData A1 -> A2 and B1 -> B2 and an Mmad of
  the base tile, a Fixpipe L0C -> GM (or L0C -> a local tensor) per C tile, ordered by the AllocTensor / EnQue /
  DeQue / FreeTensor of queue buffers of its own (InitBuffer'd with internal=1), as the TileIR's matmul is.
- the row APIs SoftMax, LayerNorm, RmsNorm and TopK: the vector instructions the designed kernel of the op
  issues over the call's rows (`trace_rows`), expanded into the calls the simulator issues, each at the call's
  line.

Not timed, and named in the result's `stats["trace_notes"]`: a log written by an older twin (Matmul calls
without their inner work, row-API calls without their operands), and calls with no count to price. Vector APIs
with no measured curve are priced as one elementwise pass (also named there). A PipeBarrier of one pipe orders
nothing the in-order pipe does not already.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from .. import hw
from ..core.dtypes import BLOCK_BYTES, block_bytes, itemsize
from ..core.errors import KernelStudioError, TargetError
from ..sim import SimResult, simulate
from ..tileir.expr import Const, E, Expr, Var
from ..tileir.program import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    GmTensor,
    If,
    Kernel,
    Let,
    Mmad,
    Pipe,
    Program,
    QuePos,
    Region,
    SetFlag,
    Stmt,
    SyncAll,
    Tier,
    VecCall,
    WaitFlag,
)
from ..tileir.vector_ops import OPS, REDUCE_APIS
from ..twin.calllog import Call, CallLog
from .sync import MEMORY
from .trace_mix import SECOND_OBJECT, serve_on_cube, served_by_cube
from .trace_rows import ROW_APIS, expand_rows, row_api

__all__ = ["TraceError", "trace_program", "simulate_log", "twin_target", "DTYPES", "API_COSTS"]


class TraceError(KernelStudioError, ValueError):
    """A call log the trace front end cannot turn into a timeline (no launch, an unknown kernel, a target
    whose chip is not the one the twin ran)."""


# the twin's C++ type names -> kernelstudio dtypes (the cost curves' keys)
DTYPES = {"half": "float16", "bfloat16_t": "bfloat16", "float": "float32", "int32_t": "int32",
          "uint32_t": "int32", "int8_t": "int8", "uint8_t": "int8", "int16_t": "float16", "uint16_t": "float16"}
# Ascend C vector API -> the op `vector_cycles` prices it as
API_COSTS: dict[str, str] = {
    **{r.api: r.cost for r in OPS.values() if r.api and r.calls is None},
    **{api: r.cost for api, r in REDUCE_APIS.items()},
    "CompareScalar": "compare", "Compare": "compare", "Select": "select", "Brcb": "brcb",
    "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max", "ReduceMin": "reduce_max",
    "Gelu": "gelu_tanh", "FasterGelu": "gelu_tanh", "Transpose": "transpose",  # the twin's Gelu is the tanh form
}
_TRANSPOSE_ELEMS = 256  # Transpose moves one 16 x 16 block
_ASSUMED_COST = "adds"  # a vector API with no curve: one elementwise pass
_MEMORY_TIER = {"UB": Tier.UB, "L1": Tier.L1, "L0A": Tier.L0A, "L0B": Tier.L0B, "L0C": Tier.L0C}
_QUEPOS = {"VECIN": QuePos.VECIN, "VECOUT": QuePos.VECOUT, "A1": QuePos.A1, "B1": QuePos.B1, "A2": QuePos.A2,
           "B2": QuePos.B2, "CO1": QuePos.CO1}
_MODES = {"AIV_MODE": ("vector", "AIV_ONLY", 1), "AIC_MODE": ("cube", "AIC_ONLY", 1),
          "MIX_MODE": ("cube_vector", "MIX_AIC_1_2", 2)}
_PIPES = {p.value: p for p in Pipe}
_BARRIER_EVENT = 1 << 20  # event ids of the flag pairs a PipeBarrier<PIPE_ALL> stands for (no user id is this big)
# the pipes of each core kind (what a PipeBarrier<PIPE_ALL> waits for)
_CORE_PIPES = {"AIV": (Pipe.MTE2, Pipe.V, Pipe.MTE3), "AIC": (Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.MTE3)}
_VIA_GM = "(C tiles through GM)"  # the workspace a GetTensorC to a local tensor passes through on a separated chip
_SKIPPED = frozenset({"Iterate", "IterateAll", "GetTensorC"})


def _dtype(name: object, where: str) -> str:
    dt = DTYPES.get(str(name))
    if dt is None:
        raise TraceError(f"{where}: element type {name!r} has no cost curve; the trace front end prices "
                         f"{', '.join(sorted(DTYPES))}")
    return dt


def _span(ref: str) -> tuple[str, str, int, int] | None:
    """`VECIN:544+288` as (memory, position, first byte, bytes)."""
    pos, _, rest = ref.partition(":")
    off, _, size = rest.partition("+")
    if pos not in MEMORY or not off.isdigit() or not size.isdigit():
        return None
    return MEMORY[pos], pos, int(off), int(size)


@dataclass
class _Queue:
    pos: str
    memory: str
    start: int
    slot_bytes: int
    num: int
    dtype: str = "int8"  # the element type of the first call that touched it (how the cube side prices moves)

    def name(self, i: int) -> str:
        return f"{self.pos}@{self.start}[{i}]"


@dataclass
class _Kernel:
    """What one launch's calls declare, over all its cores: queues, scratch memories, GM parameters."""

    queues: dict[tuple[str, int], _Queue] = field(default_factory=dict)  # (memory, start) -> queue
    scratch: dict[str, str] = field(default_factory=dict)  # memory -> name of its non-queue buffer
    skipped: Counter = field(default_factory=Counter)
    assumed: Counter = field(default_factory=Counter)
    matmul_logged: bool = False  # the Matmul API's calls logged their inner work (calls with internal=1)
    rows: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # row-API scratch: name -> dtype, shape

    def declare(self, name: str, dtype: str, rows: int, cols: int) -> None:
        _, r0, c0 = self.rows.get(name, (dtype, 0, 0))
        self.rows[name] = (dtype, max(r0, rows), max(c0, cols))

    def queue_at(self, memory: str, offset: int) -> tuple[_Queue, int] | None:
        for (mem, start), q in self.queues.items():
            if mem == memory and start <= offset < start + q.slot_bytes * q.num:
                return q, (offset - start) // q.slot_bytes
        return None

    def region(self, ref: str | None, dtype: str | None) -> Region:
        """The buffer an on-chip operand lies in (its queue buffer, else its memory's scratch), as a Region of
        the operand's elements (of `dtype`; None: of the queue buffer's own type)."""
        span = _span(ref) if ref is not None else None
        if span is None:
            return self._scratch("UB", 0)
        memory, _, offset, size = span
        found = self.queue_at(memory, offset)
        if found is None:
            return self._scratch(memory, max(1, -(-size // itemsize(dtype or "int8"))))
        q, i = found
        n = max(1, -(-size // itemsize(dtype or q.dtype)))
        return Region(q.name(i), Const(0), Const(1), Const(n), Const(n))

    def _scratch(self, memory: str, n: int) -> Region:
        name = self.scratch.setdefault(memory, f"{memory} scratch")
        return Region(name, Const(0), Const(1), Const(max(n, 1)), Const(max(n, 1)))


def _at(call: Call, files: Mapping[str, str]) -> str:
    """The instruction's comment: the API and the user's line that issued it (in the user's file names)."""
    if not call.site:
        return call.api
    file, _, line = call.site.rpartition(":")
    file = posixpath.normpath(file)
    return f"{call.api} at {files.get(file, file)}:{line}"


def _is(var: str, value: int) -> Expr:
    """1 when `var` == value, else 0 (the TileIR has no comparison: 1 - min(1, |var - value|))."""
    diff = E.max(E.sub(Var(var), value), E.sub(value, Var(var)))
    return E.sub(1, E.min(1, diff))


class _Translator:
    def __init__(self, kernel: str, params: Sequence[GmTensor | None], info: _Kernel,
                 files: Mapping[str, str], l0c_to_ub: bool = True) -> None:
        self.kernel, self.params, self.info, self.files = kernel, params, info, files
        self.unknown_gm = 0
        self.l0c_to_ub = l0c_to_ub  # the chip moves L0C -> UB directly (coupled); else through GM
        self.via_gm = 0  # bytes of C tiles a GetTensorC to a local tensor moved through GM (separated chips)

    def gm_region(self, call: Call, refs: dict[str, str]) -> tuple[Region, str, int]:
        """The GM side of a copy: (Region, tensor dtype, bytes) from the twin's `gm=<param>:<offset>+<bytes>`."""
        ref = refs.get("gm")
        if ref is None:
            raise TraceError(f"kernel {self.kernel!r}: {call.api} at {call.site or 'an unrecorded line'} has no GM "
                             "operand in the call log (a log written before the twin recorded them); run the kernel "
                             "again with this kernelstudio")
        where, _, size = ref.partition("+")
        param, _, _ = where.partition(":")
        nbytes = int(size) if size.isdigit() else 0
        t = self.params[int(param)] if param.isdigit() and int(param) < len(self.params) else None
        if t is None:
            self.unknown_gm += nbytes
            name, dtype = "(GM outside the parameters)", "int8"
        else:
            name, dtype = t.name, t.dtype
        n = max(1, -(-nbytes // itemsize(dtype)))
        return Region(name, Const(0), Const(1), Const(n), Const(n), gm=True), dtype, nbytes

    def stmts(self, calls: Sequence[Call]) -> list[Stmt]:
        out: list[Stmt] = []
        for call in calls:
            out += self.stmt(call)
        return out

    def stmt(self, call: Call) -> list[Stmt]:
        api, a = call.api, call.args
        refs = dict(call.refs)
        if api in ("AllocTensor", "EnQue", "DeQue", "FreeTensor"):
            slot = refs.get("slot")
            span = _span(slot + "+0") if slot else None
            found = self.info.queue_at(span[0], span[2]) if span else None
            if found is None:
                return []
            q, i = found
            kind = {"AllocTensor": Alloc, "EnQue": EnQue, "DeQue": DeQue, "FreeTensor": Free}[api]
            return [kind(q.name(i))]
        if api in ("DataCopy", "DataCopyPad"):
            return self.copy(call, refs)
        if api == "SetFlag" or api == "WaitFlag":
            src, _, dst = str(a.get("event", "")).partition("_")
            if src not in _PIPES or dst not in _PIPES:
                return []
            kind = SetFlag if api == "SetFlag" else WaitFlag
            return [kind(_PIPES[src], _PIPES[dst], int(a.get("id", 0)))]
        if api in ("PipeBarrier", "pipe_barrier"):
            if a.get("pipe") != "PIPE_ALL":
                return []
            pipes = _CORE_PIPES["AIC" if call.core == "AIC" else "AIV"]
            return ([SetFlag(p, Pipe.S, _BARRIER_EVENT) for p in pipes]
                    + [WaitFlag(p, Pipe.S, _BARRIER_EVENT) for p in pipes])
        if api == "CrossCoreSetFlag":
            pipe = str(a.get("pipe", "PIPE_FIX")).removeprefix("PIPE_")
            return [CrossSet(int(a.get("id", 0)), _PIPES.get(pipe, Pipe.FIX))]
        if api == "CrossCoreWaitFlag":
            return [CrossWait(int(a.get("id", 0)))]
        if api == "SyncAll":
            return [SyncAll()]
        if api in ("LocalTensor::GetValue", "LocalTensor::SetValue"):
            return [Let("_scalar", Const(0))]
        if api == "LoadData":  # L1 -> L0A / L0B (Load2D, or Load3Dv2: img2col), priced by the bytes written
            note = _at(call, self.files)
            return [Copy(self.info.region(refs.get("w"), None), self.info.region(refs.get("r"), None), comment=note)]
        if api == "Mmad":
            ops = [self.info.region(v, None) for k, v in call.refs if k == "r" and not v.startswith("CO1:")]
            if len(ops) != 2 or "w" not in refs:
                self.info.skipped[api] += 1
                return []
            return [Mmad(self.info.region(refs["w"], None), ops[0], ops[1], Const(int(a["m"])), Const(int(a["k"])),
                         Const(int(a["n"])), Const(int(a.get("cmatrixInitVal", 1))), comment=_at(call, self.files))]
        if api == "Fixpipe":  # L0C -> GM (or, from the Matmul API's GetTensorC, L0C -> a local tensor)
            src = self.info.region(refs.get("r"), None)
            if a.get("dst", "GM") != "GM":
                dst = self.info.region(refs.get("w"), None)
                if self.l0c_to_ub:
                    return [Copy(dst, src, comment=_at(call, self.files))]
                # a separated chip has no L0C -> UB path: the C tile goes to a GM workspace and back in
                span = _span(refs.get("r", ""))
                nbytes = span[3] if span else 0
                self.via_gm += nbytes
                n = max(1, nbytes // 4)  # L0C holds float32 / int32
                gm = Region(_VIA_GM, Const(0), Const(1), Const(n), Const(n), gm=True)
                return [Copy(gm, src, comment=_at(call, self.files)), Copy(dst, gm, comment=_at(call, self.files))]
            gm, _, _ = self.gm_region(call, refs)
            return [Copy(gm, src, comment=_at(call, self.files))]
        if api in _SKIPPED or api.startswith("Matmul::"):
            # the Matmul API's own lines: its work is logged as the basic-API calls it stands for (internal=1);
            # a log without them (an older twin) leaves its cube work untimed
            if not self.info.matmul_logged and api.removeprefix("Matmul::") in _SKIPPED:
                self.info.skipped[api] += 1
            return []
        touches = any(k in ("r", "w") for k, _ in call.refs)
        if api in ROW_APIS:  # timed from its shape and operands; a log line without them (an older twin) is not
            return self.row(call) if touches and "dtype" in a else self.untimed(api)
        if api == "Transpose" and touches:  # one 16 x 16 block
            return [self.vector(call, refs, count=_TRANSPOSE_ELEMS)]
        if "dtype" in a and ("count" in a or "repeats" in a) and touches:
            return [self.vector(call, refs)]
        if touches:  # it computes on chip but has no count to price
            self.info.skipped[api] += 1
        return []

    def untimed(self, api: str) -> list[Stmt]:
        self.info.skipped[api] += 1
        return []

    def typed(self, ref: str, dtype: str) -> Region:
        """The region of an operand of a row API; one outside the queue buffers (a TBuf's) in a scratch of its
        element type (the memory's own scratch is untyped), named by its memory."""
        r = self.info.region(ref, dtype)
        if r.buf not in self.info.scratch.values():
            return r
        name = f"{r.buf} {dtype}"
        self.info.declare(name, dtype, 1, int(r.cols.value) if isinstance(r.cols, Const) else 1)
        return Region(name, Const(0), r.rows, r.cols, r.stride)

    def row(self, call: Call) -> list[Stmt]:
        """A row API (SoftMax, LayerNorm, RmsNorm, TopK) as the vector instructions of `trace_rows`."""
        api, a = call.api, call.args
        dtype = _dtype(a["dtype"], f"kernel {self.kernel!r}: {api}")
        wrefs = [v for k, v in call.refs if k == "w"]  # TopK: values, then int32 indices
        writes = [self.typed(v, "int32" if api == "TopK" and i == 1 else dtype) for i, v in enumerate(wrefs)]
        reads = [self.typed(v, dtype) for k, v in call.refs if k == "r"]
        got = row_api(api, a, writes, reads, dtype, _at(call, self.files), self.info.declare)
        return self.untimed(api) if got is None else got

    def copy(self, call: Call, refs: dict[str, str]) -> list[Stmt]:
        a = call.args
        dtype = _dtype(a.get("dtype"), f"kernel {self.kernel!r}: {call.api}")
        if a.get("src") == "GM" or a.get("dst") == "GM":
            gm, gm_dtype, nbytes = self.gm_region(call, refs)
            local_ref = refs.get("w" if a.get("src") == "GM" else "r")
            local = self.info.region(local_ref, dtype)
            n = max(1, -(-nbytes // itemsize(gm_dtype)))
            sized = Region(gm.buf, Const(0), Const(1), Const(n), Const(n), gm=True)
            note = _at(call, self.files)
            if a.get("src") == "GM":
                return [Copy(Region(local.buf, Const(0), Const(1), Const(n), Const(n)), sized,
                             nd2nz=a.get("format") == "Nd2Nz", comment=note)]
            return [Copy(sized, local, comment=note)]
        # between two on-chip buffers: a vector-pipe copy of `count` elements (UB -> UB, as the TileIR prices
        # its copy op), else a move priced by the bytes the destination covers
        if MEMORY.get(str(a.get("dst"))) == "UB" and MEMORY.get(str(a.get("src"))) == "UB" and "count" in a:
            return [VecCall(call.api, "copy", dtype, self.info.region(refs.get("w"), dtype),
                            (self.info.region(refs.get("r"), dtype),), "count", count=Const(int(a["count"])),
                            dst_dtype=dtype, comment=_at(call, self.files))]
        dst, src = self.info.region(refs.get("w"), "int8"), self.info.region(refs.get("r"), "int8")
        return [Copy(dst, src, comment=_at(call, self.files))]

    def vector(self, call: Call, refs: dict[str, str], count: int | None = None) -> VecCall:
        a = call.args
        api = call.api
        dtype = _dtype(a.get("dtype"), f"kernel {self.kernel!r}: {api}")
        src_dtype = _dtype(a["src_dtype"], f"kernel {self.kernel!r}: {api}") if "src_dtype" in a else dtype
        cost = API_COSTS.get(api)
        if cost is None:
            self.info.assumed[api] += 1
            cost = _ASSUMED_COST
        dst = self.info.region(refs.get("w"), dtype)
        srcs = tuple(self.info.region(v, src_dtype) for k, v in call.refs if k == "r")
        if count is not None or "count" in a:
            n = count if count is not None else int(a["count"])
            return VecCall(api, cost, src_dtype, dst, srcs, "count", count=Const(n), dst_dtype=dtype,
                           comment=_at(call, self.files))
        mask = int(a.get("mask", 0)) if str(a.get("mask", "0")).lstrip("-").isdigit() else 0
        return VecCall(api, cost, src_dtype, dst, srcs, "repeat", mask=Const(mask), repeats=Const(int(a["repeats"])),
                       dst_dtype=dtype, comment=_at(call, self.files))


def _declare(calls: Sequence[Call]) -> _Kernel:
    info = _Kernel()
    info.matmul_logged = any(c.args.get("internal") == 1 for c in calls)
    for c in calls:
        if c.api != "InitBuffer":
            continue
        q = dict(c.refs).get("q")
        span = _span(q + "+0") if q else None
        if span is None:
            continue
        memory, pos, start, _ = span
        size = int(c.args.get("len", 0))
        num = int(c.args.get("num", 1))
        slot = max(BLOCK_BYTES, block_bytes(size))
        old = info.queues.get((memory, start))
        if old is None or old.num < num:
            info.queues[(memory, start)] = _Queue(pos, memory, start, slot, num)
    typed: set[tuple[str, int]] = set()
    for c in calls:  # each queue's element type: that of the first call touching it
        if "dtype" not in c.args:
            continue
        for rw, ref in c.refs:
            span = _span(ref) if rw in ("r", "w") else None
            found = info.queue_at(span[0], span[2]) if span else None
            if found is None or (found[0].memory, found[0].start) in typed:
                continue
            name = c.args["src_dtype"] if rw == "r" and "src_dtype" in c.args else c.args["dtype"]
            if str(name) in DTYPES:
                found[0].dtype = DTYPES[str(name)]
                typed.add((found[0].memory, found[0].start))
    return info


def trace_program(log: CallLog, params: Mapping[str, Sequence[GmTensor | None]], *, target: str,
                  name: str = "trace", files: Mapping[str, str] | None = None) -> Program:
    """A Program whose cores replay the calls of `log`: one Kernel per launch, in launch order. `params` maps each
    launched kernel to the GM tensor of each of its parameters (None for the tiling and any it does not name);
    `files` renames the source files the twin logged (bundle path -> the user's name) in instruction texts."""
    if not isinstance(log, CallLog):
        raise TraceError(f"trace_program takes a twin CallLog (a loaded kernel's .log, ks.twin.run(..., "
                         f"log_calls=True)), got {type(log).__name__}")
    if not isinstance(params, Mapping):
        raise TraceError(f"params must map each launched kernel to its parameters' GM tensors, got "
                         f"{type(params).__name__}")
    if not log.launches:
        raise TraceError("the call log has no kernel launch (no ICPU_RUN_KF ran, or the run stopped before it); "
                         "simulate the log of a run that launched its kernel (ks.ascendc.load(...).log)")
    tensors: dict[str, GmTensor] = {}
    kernels: list[Kernel] = []
    for li, launch in enumerate(log.launches):
        if launch.kernel not in params:
            raise TraceError(f"launch {li} runs kernel {launch.kernel!r}, but params names the tensors of "
                             f"{sorted(params)}; give the GM tensor of each parameter of {launch.kernel!r}")
        if launch.mode not in _MODES:
            raise TraceError(f"kernel {launch.kernel!r} ran in {launch.mode}; the trace front end simulates "
                             f"{', '.join(_MODES)}")
        family, ktype, per_block = _MODES[launch.mode]
        pts = list(params[launch.kernel])
        for t in pts:
            if t is not None:
                tensors.setdefault(t.name, t)
        calls = [c for c in log.calls if c.launch == li and c.core != "host"]
        info = _declare(calls)
        tr = _Translator(launch.kernel, pts, info, files or {}, l0c_to_ub=hw.get(target).has_l0c_to_ub)
        aic: list[Stmt] = []
        aiv: list[Stmt] = []
        by_core: dict[tuple[int, str], list[Call]] = {}
        for c in calls:
            by_core.setdefault((c.block, c.core), []).append(c)
        served = served_by_cube(calls) if launch.mode == "MIX_MODE" else 0
        cube_side = {q.name(i) for q in info.queues.values() if q.memory != "UB" for i in range(q.num)}
        streams = (serve_on_cube(by_core, tr.stmts, _VIA_GM, cube_side.__contains__) if served
                   else {key: tr.stmts(seq) for key, seq in by_core.items()})
        for (block, core), stmts in sorted(streams.items()):
            body = tuple(stmts)
            if not body:
                continue
            if core == "AIC":
                aic.append(If(_is("blk", block), body, comment=f"block {block} AIC", dispatch=True))
            else:
                sub = 1 if core == "AIV1" else 0
                inner = If(_is("sub", sub), body, dispatch=True)
                aiv.append(If(_is("blk", block), (inner,), comment=f"block {block} {core}", dispatch=True))
        idle = If(Const(0), (), comment="a side that ran no timed call", dispatch=True)
        aic = aic or ([idle] if launch.mode in ("AIC_MODE", "MIX_MODE") else [])
        aiv = aiv or ([idle] if launch.mode in ("AIV_MODE", "MIX_MODE") else [])
        if tr.unknown_gm:
            tensors.setdefault("(GM outside the parameters)",
                               GmTensor("(GM outside the parameters)", (tr.unknown_gm,), "int8", "intermediate"))
        notes: list[str] = []
        buffers = [Buffer(q.name(i), _MEMORY_TIER[q.memory], q.dtype, 1, q.slot_bytes // itemsize(q.dtype), 1,
                          _QUEPOS.get(q.pos, QuePos.VECIN if q.memory == "UB" else QuePos.A1),
                          CoreType.AIV if q.memory == "UB" else CoreType.AIC, f"{q.pos} queue buffer {i}")
                   for q in info.queues.values() for i in range(q.num)]
        if served:  # vector core 1's Matmul object: its own copy of each cube-side queue buffer
            buffers += [replace(b, name=b.name + SECOND_OBJECT) for b in buffers if b.name in cube_side]
        buffers += [Buffer(n, _MEMORY_TIER[m], "int8", 1, 32, 1, None,
                           CoreType.AIV if m == "UB" else CoreType.AIC, "not a queue buffer")
                    for m, n in info.scratch.items()]
        buffers += [Buffer(n, Tier.UB, dt, r, c, 1, None, CoreType.AIV, "a row API's float32 work or typed operand")
                    for n, (dt, r, c) in info.rows.items()]
        if info.rows:  # the row APIs' instructions as the calls the simulator issues, at the API's call site
            bufmap = {b.name: b for b in buffers}
            aic, aiv = list(expand_rows(tuple(aic), bufmap, launch.kernel)), list(expand_rows(tuple(aiv), bufmap,
                                                                                               launch.kernel))
        if served:
            notes.append(f"{launch.kernel}: the Matmul API called from the vector cores: its cube work ({served:,} "
                         "calls) is served by each block's AIC, one cross-core request per Iterate / GetTensorC run "
                         "(the AIC takes its two vector cores' requests in turn)")
        elif launch.mode != "MIX_MODE" and (on_aiv := sum(1 for c in calls if c.core != "AIC" and int(
                c.args.get("internal", 0)) == 1 and c.api in ("Mmad", "LoadData", "Fixpipe"))):
            notes.append(f"{launch.kernel}: the Matmul API's cube work ({on_aiv:,} calls) logged by a vector core of "
                         f"a {launch.mode} launch, which has no cube core: timed on the vector core's lanes")
        if tr.via_gm:
            tensors.setdefault(_VIA_GM, GmTensor(_VIA_GM, (max(1, tr.via_gm // 4),), "float32", "workspace"))
            notes.append(f"{launch.kernel}: GetTensorC to a local tensor priced as L0C -> GM -> UB ({tr.via_gm:,} B): "
                         f"{target} has no L0C -> UB path")
        if info.skipped:
            notes.append(f"{launch.kernel}: not timed: " + ", ".join(f"{k} x{v}" for k, v in info.skipped.items()))
        if info.assumed:
            notes.append(f"{launch.kernel}: priced as one elementwise pass (no curve): "
                         + ", ".join(f"{k} x{v}" for k, v in info.assumed.items()))
        kernels.append(Kernel(launch.kernel, family, ktype, launch.block_dim,
                              tuple(t.name for t in pts if t is not None), tuple(buffers), tuple(aic), tuple(aiv),
                              vec_per_block=per_block, notes=tuple(notes)))
    ins = tuple(t.name for t in tensors.values() if t.role == "input")
    outs = tuple(t.name for t in tensors.values() if t.role == "output")
    return Program(name, target, tuple(tensors.values()), tuple(kernels), ins, outs)


def simulate_log(log: CallLog, params: Mapping[str, Sequence[GmTensor | None]], *, target: str,
                 name: str = "trace", l2: str = "cold", exact: bool = False,
                 files: Mapping[str, str] | None = None) -> SimResult:
    """The simulated timeline of a twin run (see the module doc): a SimResult like ks.simulate's, with
    `stats["trace_notes"]` naming what the trace could not time."""
    try:
        profile = hw.get(target)
    except TargetError as e:
        raise TraceError(f"{e}") from None
    prog = trace_program(log, params, target=profile.name, name=name, files=files)
    res = simulate(prog, profile=profile, l2=l2, exact=exact)
    res.stats["trace_notes"] = [n for k in prog.kernels for n in k.notes]
    return res


def twin_target(ran: str, wanted: str | None) -> str:
    """The profile to simulate a run on: `wanted` when its chip is the one the twin compiled the run for (same
    memory sizes and core counts, `twin.runner.chip_flags`), else a TraceError; `ran` when None."""
    if wanted is None:
        return ran
    from ..twin.runner import chip_flags

    try:
        profile = hw.get(wanted)
    except (TargetError, KeyError) as e:
        raise TraceError(f"target {wanted!r}: {e}; use one of {', '.join(hw.names())}") from None
    mine, theirs = chip_flags(ran), chip_flags(profile.name)
    if mine != theirs:
        diff, had = ", ".join(sorted(set(theirs) - set(mine))), ", ".join(sorted(set(mine) - set(theirs)))
        raise TraceError(f"the run was compiled for {ran} and target {profile.name!r} is another chip ({diff} where "
                         f"the run had {had}): its call log is what the kernel does on {ran}; load the kernel again "
                         f"with target={profile.name!r} to simulate it there")
    return profile.name
