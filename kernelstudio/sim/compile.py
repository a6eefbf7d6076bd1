"""The compiler of a TileIR kernel into the simulator's static instruction streams (program.py).

An instruction the generated code issues as several Ascend C calls (a row reduction, a per-row
broadcast, a row-looped op) is compiled as those calls, from `lower/vec_calls.calls_of` (the list the
code generator writes), each a static instruction of its own; `calls.issued` counts them per core.
Index expressions are compiled once with `compile_expr`; each loop gets its `LoopInfo` from the loop
analysis of loop_keys.py.
"""

from __future__ import annotations

import math

from ..core.errors import UnsupportedError
from ..tileir.expr import compile_expr, has_load
from ..tileir.program import (
    Alloc,
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    GateTopK,
    If,
    Img2Col,
    Kernel,
    Let,
    Loop,
    Mmad,
    MrgSort,
    Program,
    Reduce,
    Region,
    SetFlag,
    Stmt,
    SyncAll,
    Tier,
    TopK,
    VecCall,
    VecOp,
    WaitFlag,
    pipe_of,
)
from ..tileir.vec_calls import WORK, calls_of
from ..tileir.vector_ops import vector_op
from .costs import gate_visits
from .errors import SimulationError
from .loop_keys import analyse_loop, sizes_exprs, touched
from .memo import MEMO_MIN_OPS, memo_vars
from .program import (
    K_ALLOC,
    K_CSET,
    K_CWAIT,
    K_DEQUE,
    K_END,
    K_ENQUE,
    K_FREE,
    K_FSET,
    K_FWAIT,
    K_IF,
    K_LET,
    K_LOOP,
    K_SYNC,
    K_WORK,
    PIPE_INDEX,
    SYNC_TEXT,
    CoreProgram,
    LoopInfo,
    StaticInstr,
    zero_load,
)

__all__ = ["compile_side"]


def _tier(r: Region, tiers: dict[str, Tier]) -> str:
    return "GM" if r.gm else tiers[r.buf].value


class _Compiler:
    def __init__(self, prog: Program, kernel: Kernel, kidx: int, side: str,
                 statics: list[StaticInstr]) -> None:
        self.prog, self.kernel, self.kidx, self.side = prog, kernel, kidx, side
        self.statics = statics
        self.tiers = {b.name: b.tier for b in kernel.buffers}
        self.bufs = {b.name: b for b in kernel.buffers}
        self.queue_bufs = [b.name for b in kernel.buffers if b.queue is not None]
        self.qid = {n: i for i, n in enumerate(self.queue_bufs)}
        self.ops: list[tuple] = []
        self.loops: list[LoopInfo] = []
        self.count = 0
        self.facts: dict[int, tuple] = {}  # per-statement facts for analyse_loop
        self.stage_lid = -1  # the innermost enclosing Loop with a `stage` (its var is the block), -1 none

    def tensor(self, name: str):
        try:
            return self.prog.tensor(name)
        except KeyError:
            raise SimulationError(
                f"kernel {self.kernel.name}: GM tensor {name!r} is not among the program's tensors"
            ) from None

    def buf(self, name: str):
        try:
            return self.bufs[name]
        except KeyError:
            raise SimulationError(
                f"kernel {self.kernel.name}: buffer {name!r} is not declared; declared: "
                f"{', '.join(self.bufs)}"
            ) from None

    def calls(self, s: Stmt) -> tuple[Stmt, ...] | None:
        """The calls `s` issues when it is not one instruction (a row reduction, a per-row broadcast,
        a row-looped op), as the code generator writes them; None for one call. A shape the code
        generator refuses is priced as the TileIR instruction."""
        if isinstance(s, Copy) and (s.src.gm or s.dst.gm or self.tiers.get(s.src.buf) is not Tier.UB
                                    or self.tiers.get(s.dst.buf) is not Tier.UB):
            return None
        try:
            exp = calls_of(self.kernel, s)
        except UnsupportedError:
            return None
        return None if exp is None else exp.stmts

    def accesses(self, s: Stmt) -> tuple[tuple[int, ...], tuple[int, ...]]:
        t = type(s)
        if t is VecCall or t is VecOp:
            reads, writes = list(s.srcs), [s.dst]
        elif t is Copy or t is Img2Col or t is Reduce:
            reads, writes = [s.src], [s.dst]
        elif t is Mmad:
            reads, writes = [s.a, s.b], [s.c]
        elif t is GateTopK:
            reads, writes = [s.src, s.scores], [s.values, s.indices]
        elif t is MrgSort:
            reads, writes = [s.src_keys, s.src_indices], [s.keys, s.indices]
        else:
            reads, writes = [s.src], [s.values, s.indices]
        for r in reads + writes:
            if not r.gm and r.buf != WORK:
                self.buf(r.buf)
        r_ids = tuple(dict.fromkeys(self.qid[r.buf] for r in reads if not r.gm and r.buf in self.qid))
        w_ids = tuple(dict.fromkeys(self.qid[r.buf] for r in writes if not r.gm and r.buf in self.qid))
        return r_ids, w_ids

    def static(self, s: Stmt, outer: int, inner: int) -> StaticInstr:
        pipe = PIPE_INDEX[pipe_of(s, self.tiers).value]
        sid = len(self.statics)
        base = dict(sid=sid, kernel=self.kidx, side=self.side, pipe=pipe, outer_loop=outer,
                    inner_loop=inner, stage=self.loops[self.stage_lid].stage if self.stage_lid >= 0 else "")
        note = f"  # {s.comment}" if getattr(s, "comment", "") else ""
        if isinstance(s, Copy):
            src, dst = _tier(s.src, self.tiers), _tier(s.dst, self.tiers)
            gm = s.src if s.src.gm else (s.dst if s.dst.gm else None)
            tensor = gm.buf if gm is not None else ""
            ws = gm is not None and self.tensor(tensor).role == "workspace"
            e_src = "WS" if (s.src.gm and ws) else src
            e_dst = "WS" if (s.dst.gm and ws) else dst
            if gm is not None:
                dtype = self.tensor(tensor).dtype
            else:
                dtype = self.buf(s.dst.buf).dtype
            where = lambda r: f"gm.{r.buf}" if r.gm else r.buf  # noqa: E731
            text = f"copy {where(s.dst)} <- {where(s.src)}{' nd2nz' if s.nd2nz else ''}{note}"
            return StaticInstr(**base, kind="copy", text=text, edge=f"{e_src}->{e_dst}", src=src,
                               dst=dst, tensor=tensor, gm_write=s.dst.gm, nd2nz=s.nd2nz, dtype=dtype)
        if isinstance(s, Mmad):
            dtype = self.buf(s.a.buf).dtype
            return StaticInstr(**base, kind="mmad", text=f"mmad {s.c.buf} += {s.a.buf} @ {s.b.buf}{note}",
                               dtype=dtype)
        if isinstance(s, Img2Col):
            dtype = self.buf(s.dst.buf).dtype
            return StaticInstr(**base, kind="img2col", text=f"img2col {s.dst.buf} <- {s.src.buf}{note}",
                               edge="L1->L0B", src="L1", dst="L0B", dtype=dtype)
        if isinstance(s, VecOp):
            dst_dtype = self.buf(s.dst.buf).dtype if not s.dst.gm else ""
            dtype = dst_dtype
            if vector_op(s.op, "simulate").form == "cast" and s.srcs:
                dtype = self.buf(s.srcs[0].buf).dtype
            args = ", ".join(r.buf for r in s.srcs)
            return StaticInstr(**base, kind="vec", text=f"{s.op} {s.dst.buf} <- ({args}){note}",
                               op=s.op, dtype=dtype, dst_dtype=dst_dtype)
        if isinstance(s, Reduce):
            dtype = self.buf(s.src.buf).dtype
            acc = f" {s.op}=" if s.accumulate else ""
            return StaticInstr(**base, kind="reduce", text=f"reduce_{s.op} {s.dst.buf}{acc} <- {s.src.buf}{note}",
                               op=s.op, dtype=dtype, dst_dtype=self.buf(s.dst.buf).dtype,
                               accumulate=s.accumulate)
        if isinstance(s, VecCall):
            args = ", ".join(r.buf for r in s.srcs)
            return StaticInstr(**base, kind="vcall", text=f"{s.api} {s.dst.buf} <- ({args}){note}", op=s.op,
                               dtype=s.dtype, dst_dtype=s.dst_dtype or s.dtype, form=s.form)
        if isinstance(s, GateTopK):
            return StaticInstr(**base, kind="gate", text=f"gate_topk k={s.k} {s.indices.buf} <- {s.src.buf}{note}",
                               op="gate", dtype="float32", per_row=gate_visits(s))
        if isinstance(s, MrgSort):
            return StaticInstr(**base, kind="mrgsort", text=f"mrgsort {s.keys.buf} <- {s.src_keys.buf}{note}",
                               op="mrgsort", dtype="float32", form="" if s.largest else "negated")
        if isinstance(s, TopK):
            dtype = self.buf(s.src.buf).dtype
            return StaticInstr(**base, kind="topk", text=f"topk k={s.k} {s.values.buf} <- {s.src.buf}{note}",
                               op="topk", dtype=dtype)
        raise SimulationError(f"kernel {self.kernel.name}: not an instruction: {type(s).__name__}")

    def body(self, stmts: tuple[Stmt, ...], outer: int, outer_var: str, inner: int) -> None:
        ops = self.ops
        for s in stmts:
            t = type(s)
            if t is Let:
                ops.append((K_LET, s.var, compile_expr(s.value), has_load(s.value)))
            elif t is Loop:
                lid = len(self.loops)
                eligible, lets, fns, keys = analyse_loop(s, self.facts)
                self.loops.append(LoopInfo(lid, s.var, eligible, lets, fns, keys, outer_var, stage=s.stage))
                at = len(ops)
                ops.append(None)  # patched below
                # in a stage loop the events' `inner` column holds the stage loop's variable (the block), not
                # the innermost loop's
                pinned = self.stage_lid
                if s.stage:
                    self.stage_lid = lid
                self.body(s.body, lid if outer < 0 else outer, outer_var or s.var,
                          lid if self.stage_lid < 0 or s.stage else self.stage_lid)
                self.stage_lid = pinned
                ops.append((K_END, at))
                info = self.loops[lid]
                if any(x.stage for x in self.loops[lid + 1:]):  # a stage loop inside: no shortcut copies its
                    info.eligible = False  # iterations (their events would keep the template's block)
                info.pipes, info.bufs = touched(ops[at + 1:])
                depths = [self.kernel.buffer(self.queue_bufs[b]).depth for b in info.bufs]
                info.period = min(math.lcm(*depths), 8) if depths else 1
                if (info.eligible and len(ops) - at - 2 >= MEMO_MIN_OPS
                        and not any(op is not None and op[0] == K_CSET for op in ops[at + 1:])):
                    info.memo = memo_vars(s)
                ops[at] = (K_LOOP, s.var, compile_expr(s.start), compile_expr(s.stop),
                           compile_expr(s.step), len(ops), lid)
            elif t is If:
                at = len(ops)
                ops.append(None)
                self.body(s.body, outer, outer_var, inner)
                ops[at] = (K_IF, compile_expr(s.cond), len(ops), not s.dispatch)
            elif t is Alloc or t is EnQue or t is DeQue or t is Free:
                self.buf(s.buf)
                if s.buf not in self.qid:
                    raise SimulationError(
                        f"kernel {self.kernel.name}: {type(s).__name__}({s.buf}) on a buffer without a "
                        "queue; give the buffer a queue position or drop the queue operation"
                    )
                kind = {Alloc: K_ALLOC, EnQue: K_ENQUE, DeQue: K_DEQUE, Free: K_FREE}[t]
                ops.append((kind, self.qid[s.buf]))
                self.count += 1
            elif t is CrossSet:
                ops.append((K_CSET, s.flag, PIPE_INDEX[s.pipe.value]))
                self.count += 1
            elif t is SetFlag:
                ops.append((K_FSET, (s.src.value, s.dst.value, s.event), PIPE_INDEX[s.src.value]))
                self.count += 1
            elif t is WaitFlag:
                st = StaticInstr(sid=len(self.statics), kernel=self.kidx, side=self.side,
                                 pipe=PIPE_INDEX["FLOW"], kind="wait",
                                 text=f"wait_flag {s.src.value}->{s.dst.value} event={s.event}")
                self.statics.append(st)
                ops.append((K_FWAIT, (s.src.value, s.dst.value, s.event), PIPE_INDEX[s.dst.value], st.sid))
                self.count += 1
            elif (t is Reduce or t is VecOp or t is Copy) and (calls := self.calls(s)) is not None:
                self.body(calls, outer, outer_var, inner)  # the Ascend C calls it issues (lower/vec_calls.py)
            elif t is CrossWait:
                st = StaticInstr(sid=len(self.statics), kernel=self.kidx, side=self.side,
                                 pipe=PIPE_INDEX["FLOW"], kind="wait", text=f"cross_wait flag={s.flag}")
                self.statics.append(st)
                ops.append((K_CWAIT, s.flag, st.sid))
                self.count += 1
            elif t is SyncAll:
                st = StaticInstr(sid=len(self.statics), kernel=self.kidx, side=self.side,
                                 pipe=PIPE_INDEX["FLOW"], kind="wait", text=SYNC_TEXT)
                self.statics.append(st)
                ops.append((K_SYNC, st.sid))
                self.count += 1
            else:
                st = self.static(s, outer, inner)
                self.statics.append(st)
                sizes = tuple(compile_expr(e) for e in sizes_exprs(s))
                reads, writes = self.accesses(s)
                ops.append((K_WORK, st.pipe, st.sid, sizes, reads, writes,
                            self.loops[outer].var if outer >= 0 else "",
                            self.loops[inner].var if inner >= 0 else ""))
                self.count += 1


def compile_side(prog: Program, kernel: Kernel, kidx: int, side: str,
                 statics: list[StaticInstr]) -> CoreProgram:
    """Flatten `kernel.aic` or `kernel.aiv`; new static instructions are appended to `statics`."""
    c = _Compiler(prog, kernel, kidx, side, statics)
    scalar_sid = len(statics)
    statics.append(StaticInstr(sid=scalar_sid, kernel=kidx, side=side, pipe=0, kind="scalar",
                               text="scalar issue"))
    stmts = kernel.aic if side == "aic" else kernel.aiv
    c.body(stmts, -1, "", -1)
    depths = [kernel.buffer(n).depth for n in c.queue_bufs]
    return CoreProgram(side, c.ops, stmts, c.loops, c.queue_bufs, depths, c.count, scalar_sid,
                       planned_load(kernel))


def planned_load(kernel: Kernel):
    """The simulator's scalar reads: the kernel's planned values of a GM tensor it reads (a grouped matmul's
    group list), else 0 (`zero_load`: the simulator has no data)."""
    planned = dict(kernel.planned_loads)
    if not planned:
        return zero_load

    def load(buf: str, index: int) -> int:
        values = planned.get(buf)
        return values[index] if values is not None and 0 <= index < len(values) else 0
    return load
