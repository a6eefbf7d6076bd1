"""A TileIR kernel compiled for the engine: flat op lists per core side, a table of static
instructions, and the loop analysis the steady-state shortcut needs.

An instruction the generated code issues as several Ascend C calls (a row reduction, a per-row
broadcast, a row-looped op) is compiled as those calls, from `lower/vec_calls.calls_of` (the list the
code generator writes), each a static instruction of its own; `calls.issued` counts them per core.

Each statement becomes one tuple in a flat list (loops become a LOOP op and an END op that jumps
back), so the engine walks a program with one `while` loop and can pause at a cross-core wait and
resume later. Index expressions are compiled once with `compile_expr`.

Loop analysis. An instruction's cost depends only on its *sizes* (rows, cols, m, k, n, pixels, ...),
never on offsets. For a loop with variable `v`, the "key" of an iteration is the tuple of the
cost-relevant expressions of its body that depend on `v` (directly or through `Let`s at the body's
top level). Iterations with equal keys cost the same; a loop whose key cannot be computed from `v`
alone (a size that mixes `v` with an inner loop variable) or that waits on another core or reads a
buffer from the scalar is never extrapolated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..core.errors import UnsupportedError
from ..ir.ops import itemsize
from ..tileir.expr import Expr, compile_expr, free_vars, has_load
from ..tileir.program import (
    Alloc,
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    If,
    Img2Col,
    Kernel,
    Let,
    Loop,
    Mmad,
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
from .errors import SimulationError

__all__ = ["PIPES", "PIPE_INDEX", "StaticInstr", "LoopInfo", "CoreProgram", "compile_side",
           "K_WORK", "K_LET", "K_LOOP", "K_END", "K_IF", "K_ALLOC", "K_ENQUE", "K_DEQUE",
           "K_FREE", "K_CSET", "K_CWAIT", "K_FSET", "K_FWAIT", "K_SYNC"]

PIPES = ("S", "MTE1", "MTE2", "MTE3", "M", "V", "FIX", "FLOW")  # FLOW: scalar stalls on flags
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}

(K_WORK, K_LET, K_LOOP, K_END, K_IF, K_ALLOC, K_ENQUE, K_DEQUE, K_FREE, K_CSET,
 K_CWAIT, K_FSET, K_FWAIT, K_SYNC) = range(14)


@dataclass(frozen=True, slots=True)
class StaticInstr:
    """One instruction of the program text: what it is, where its data goes, how it is priced."""

    sid: int
    kernel: int
    side: str  # "aic" | "aiv"
    pipe: int  # index into PIPES
    kind: str  # "copy" | "mmad" | "img2col" | "vec" | "vcall" | "reduce" | "topk" | "scalar" | "wait"
    text: str
    edge: str = ""  # memory edge of a data move ("GM->L1", "L0C->WS", ...), "" otherwise
    src: str = ""  # tier names for the cost model
    dst: str = ""
    tensor: str = ""  # GM tensor of a GM move
    gm_write: bool = False
    nd2nz: bool = False
    op: str = ""  # vector / reduce op
    dtype: str = ""  # element dtype the cost uses
    dst_dtype: str = ""  # cast destination / copy dtype on the written side
    accumulate: bool = False
    form: str = ""  # VecCall: "repeat" (sizes: repeats) or "count" (sizes: elements)
    outer_loop: int = -1  # loop ids (index into CoreProgram.loops), -1 when not in a loop
    inner_loop: int = -1


@dataclass(slots=True)
class LoopInfo:
    """What the steady-state shortcut needs to know about one loop."""

    lid: int
    var: str
    eligible: bool  # no cross-core wait and no scalar buffer read inside
    lets: tuple[tuple[str, Callable[..., int]], ...]  # body-level Lets, in order
    key_fns: tuple[Callable[..., int], ...] | None  # None: iterations cannot be keyed
    key_exprs: tuple[Expr, ...]
    outer_var: str  # the outermost loop variable enclosing this loop ("" if none)
    pipes: tuple[int, ...] = ()  # pipes and queue buffers its body touches (set after compiling)
    bufs: tuple[int, ...] = ()
    period: int = 1  # longest repeat the shortcut looks for: lcm of the touched queue depths (<= 8)


@dataclass(slots=True)
class CoreProgram:
    """One side (AIC or AIV) of a kernel, flattened."""

    side: str
    ops: list[tuple]
    stmts: tuple[Stmt, ...]
    loops: list[LoopInfo]
    queue_bufs: list[str]  # buffers with queue semantics, index = buffer id in ops
    depths: list[int]
    instrs: int  # static instruction count
    scalar_sid: int  # static entry for the scalar unit's issue spans


# the expressions an instruction's cost depends on, by statement type
_SIZES: dict[type, Callable[[Stmt], tuple[Expr, ...]]] = {
    Copy: lambda s: (s.dst.rows, s.dst.cols),
    Mmad: lambda s: (s.m, s.k, s.n),
    Img2Col: lambda s: (s.pixels, s.klen),
    VecOp: lambda s: (s.dst.rows, s.dst.cols),
    Reduce: lambda s: (s.src.rows, s.src.cols),
    TopK: lambda s: (s.src.rows, s.src.cols),
    VecCall: lambda s: (s.repeats,) if s.form == "repeat" else (s.count,),
}
# ... and those of the control statements: trip counts, conditions, bound values
_CONTROL: dict[type, Callable[[Stmt], tuple[Expr, ...]]] = {
    Loop: lambda s: (s.start, s.stop, s.step),
    If: lambda s: (s.cond,),
    Let: lambda s: (s.value,),
}
# the Region fields of each statement type (srcs of VecOp / VecCall aside)
_REGIONS = ("dst", "src", "c", "a", "b", "values", "indices")


def _sizes_exprs(s: Stmt) -> tuple[Expr, ...]:
    """The expressions an instruction's cost depends on."""
    f = _SIZES.get(type(s))
    return f(s) if f is not None else ()


def cost_exprs(s: Stmt) -> tuple[Expr, ...]:
    """Every expression of statement `s` itself (not its body) that can change timing."""
    f = _SIZES.get(type(s)) or _CONTROL.get(type(s))
    return f(s) if f is not None else ()


def _exprs_all(s: Stmt) -> list[Expr]:
    """All expressions of a statement (for Load detection)."""
    out = list(cost_exprs(s))
    for name in _REGIONS:
        r = getattr(s, name, None)
        if type(r) is Region:
            out += [r.offset, r.rows, r.cols, r.stride]
    if type(s) is VecOp:
        for r in s.srcs:
            out += [r.offset, r.rows, r.cols, r.stride]
    return out


def _facts(s: Stmt, memo: dict[int, tuple]) -> tuple[bool, tuple[tuple[Expr, frozenset[str]], ...]]:
    """(whether `s` stops a loop from being skipped: a cross-core wait, a flag or a scalar buffer
    read; its cost expressions with their free variables), once per statement of a compile."""
    hit = memo.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1], hit[2]
    t = type(s)
    bad = (t is CrossWait or t is SyncAll or t is SetFlag or t is WaitFlag
           or any(has_load(e) for e in _exprs_all(s)))
    exprs = tuple((e, frozenset(free_vars(e))) for e in cost_exprs(s))
    memo[id(s)] = (s, bad, exprs)
    return bad, exprs


def _analyse_loop(loop: Loop, memo: dict[int, tuple] | None = None) -> tuple[bool, tuple, tuple | None, tuple]:
    """(eligible, body lets, key functions or None, key expressions) of one loop. `memo` carries
    per-statement facts between the loops of one compile (a statement is seen by every loop around it)."""
    memo = {} if memo is None else memo
    eligible = True
    lets = []
    dep = {loop.var}
    for s in loop.body:
        if isinstance(s, Let):
            lets.append((s.var, compile_expr(s.value)))
            if free_vars(s.value) & dep:
                dep.add(s.var)
    keys: list[Expr] = []
    keyable = True

    def visit(stmts: tuple[Stmt, ...], inner: set[str], top: bool) -> None:
        nonlocal eligible, keyable
        for s in stmts:
            bad, exprs = _facts(s, memo)
            if bad:
                eligible = False
            t = type(s)
            if not (top and t is Let):  # body-level lets are evaluated as part of the key
                for e, fv in exprs:
                    if fv & dep:
                        if fv & inner:
                            keyable = False
                        elif e not in keys:
                            keys.append(e)
            if t is Loop:
                visit(s.body, inner | {s.var} | _bound(s.body), False)
            elif t is If:
                visit(s.body, inner | _bound(s.body), False)

    visit(loop.body, set(), True)
    fns = tuple(compile_expr(e) for e in keys) if keyable else None
    return eligible, tuple(lets), fns, tuple(keys)


def _bound(stmts: tuple[Stmt, ...]) -> set[str]:
    out = set()
    for s in stmts:
        if isinstance(s, Let):
            out.add(s.var)
    return out


def _touched(ops: list) -> tuple[tuple[int, ...], tuple[int, ...]]:
    pipes: set[int] = set()
    bufs: set[int] = set()
    for op in ops:
        if op is None:
            continue
        k = op[0]
        if k == K_WORK:
            pipes.add(op[1])
            bufs.update(op[4])
            bufs.update(op[5])
        elif k in (K_ALLOC, K_ENQUE, K_DEQUE, K_FREE):
            bufs.add(op[1])
        elif k in (K_CSET, K_FSET):
            pipes.add(op[2])
        elif k == K_FWAIT:
            pipes.add(op[2])
    return tuple(sorted(pipes)), tuple(sorted(bufs))


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
        self.facts: dict[int, tuple] = {}  # per-statement facts for _analyse_loop

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
                    inner_loop=inner)
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
            if s.op == "cast" and s.srcs:
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
                eligible, lets, fns, keys = _analyse_loop(s, self.facts)
                self.loops.append(LoopInfo(lid, s.var, eligible, lets, fns, keys, outer_var))
                at = len(ops)
                ops.append(None)  # patched below
                self.body(s.body, lid if outer < 0 else outer, outer_var or s.var, lid)
                ops.append((K_END, at))
                info = self.loops[lid]
                info.pipes, info.bufs = _touched(ops[at + 1:])
                depths = [self.kernel.buffer(self.queue_bufs[b]).depth for b in info.bufs]
                info.period = min(math.lcm(*depths), 8) if depths else 1
                ops[at] = (K_LOOP, s.var, compile_expr(s.start), compile_expr(s.stop),
                           compile_expr(s.step), len(ops), lid)
            elif t is If:
                at = len(ops)
                ops.append(None)
                self.body(s.body, outer, outer_var, inner)
                ops[at] = (K_IF, compile_expr(s.cond), len(ops))
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
                sizes = tuple(compile_expr(e) for e in _sizes_exprs(s))
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
    return CoreProgram(side, c.ops, stmts, c.loops, c.queue_bufs, depths, c.count, scalar_sid)


def nbytes_of(dtype: str, count: int) -> int:
    """Bytes of `count` elements of `dtype`."""
    return count * itemsize(dtype)


# the static instruction text of a SyncAll (the views name the barrier by it)
SYNC_TEXT = "sync_all (every AIC and AIV of the launch)"
SYNC_WAIT = "(the last core had not arrived)"  # how a wait at it is worded


def _zero(buf: str, index: int) -> int:
    return 0


def fingerprint(cp: CoreProgram, env: dict, budget: int = 100_000) -> tuple | None:
    """Everything about one core's run that can change its timing (sizes, trip counts, branches,
    flags), with loops compressed into runs of equal-key iterations; None if too large to tell."""
    ops = cp.ops
    out: list = []
    append = out.append
    left = [budget]

    def walk(pc: int, stop: int, env: dict) -> bool:
        while pc < stop:
            left[0] -= 1
            if left[0] < 0:
                return False
            op = ops[pc]
            k = op[0]
            if k == K_WORK:
                append(tuple([f(env) for f in op[3]]))
                pc += 1
            elif k == K_LET:
                env[op[1]] = op[2](env, _zero)
                pc += 1
            elif k == K_IF:
                c = bool(op[1](env))
                out.append(c)
                pc = pc + 1 if c else op[2]
            elif k == K_LOOP:
                _, var, f0, f1, f2, endpc, lid = op
                a, b, st = f0(env), f1(env), f2(env)
                vals = range(a, b, st) if st > 0 else range(0)
                out.append(("loop", len(vals)))
                info = cp.loops[lid]
                inner = dict(env)
                if info.key_fns is None:
                    for v in vals:
                        inner[var] = v
                        if not walk(pc + 1, endpc - 1, inner):
                            return False
                elif not info.key_fns:
                    if vals:
                        inner[var] = a
                        if not walk(pc + 1, endpc - 1, inner):
                            return False
                else:
                    prev = None
                    lets, key_fns = info.lets, info.key_fns
                    for v in vals:
                        inner[var] = v
                        for name, f in lets:
                            inner[name] = f(inner, _zero)
                        key = tuple([f(inner) for f in key_fns])
                        if key != prev:
                            append(("run", key))
                            if not walk(pc + 1, endpc - 1, dict(inner)):
                                return False
                            prev = key
                        else:
                            append(1)
                pc = endpc
            else:
                if k in (K_CSET, K_CWAIT, K_SYNC):
                    out.append((k, op[1]))
                pc += 1
        return True

    if not walk(0, len(ops), dict(env)):
        return None
    return tuple(out)


def top_loop_bounds(cp: CoreProgram, env: dict) -> dict[int, tuple[int, int]]:
    """(start, step) of every outermost loop for this env (blk, sub and tiling constants)."""
    ops = cp.ops
    env = dict(env)
    out: dict[int, tuple[int, int]] = {}
    pc = 0
    while pc < len(ops):
        op = ops[pc]
        k = op[0]
        if k == K_LET:
            env[op[1]] = op[2](env, _zero)
            pc += 1
        elif k == K_IF:
            pc = pc + 1 if op[1](env) else op[2]
        elif k == K_LOOP:
            out[op[6]] = (op[2](env), op[4](env))
            pc = op[5]
        else:
            pc += 1
    return out
