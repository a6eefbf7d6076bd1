"""Cut a core's TileIR program into the methods an Ascend C author writes: CopyIn / Compute / CopyOut.

Loops, Lets and Ifs stay in `Process()`. Each maximal run of instructions between them is cut after
the EnQue that ends a producer stage, so every method starts by binding its tensors (AllocTensor /
DeQue) and ends by handing them on (EnQue / FreeTensor), which is the TQue idiom. A method is named
by what it does (GM->UB: CopyIn, UB->GM: CopyOut, else Compute); its parameters are the loop and
Let variables its statements use. Cross-core flags and lone queue operations stay inline.

A buffer whose tensor is bound in one method and used in another (a weight loaded once before the
tile loop, say) keeps its `LocalTensor` as a class member instead of a method local.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..tileir.expr import Bin, Const, Expr, Load, Var, free_vars
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
    Let,
    Loop,
    Mmad,
    MrgSort,
    Reduce,
    Region,
    Stmt,
    SyncAll,
    TopK,
    VecOp,
)
from .scope import BLOCK_VARS

__all__ = ["Call", "Inline", "Plan", "MethodDef", "plan_body", "bound_members", "buffers_of"]

QUEUE_OPS = (Alloc, DeQue, EnQue, Free)
FLAGS = (CrossSet, CrossWait, SyncAll)


@dataclass(frozen=True)
class MethodDef:
    name: str
    params: tuple[str, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Call:
    method: MethodDef


@dataclass(frozen=True)
class Inline:
    stmts: tuple[Stmt, ...]


PlanNode = Call | Inline | Let | tuple  # tuple: (Loop | If, children)
Plan = list


_REGIONS_OF = {
    Copy: lambda s: (s.dst, s.src), VecOp: lambda s: (s.dst, *s.srcs), Reduce: lambda s: (s.dst, s.src),
    Mmad: lambda s: (s.c, s.a, s.b), Img2Col: lambda s: (s.dst, s.src), TopK: lambda s: (s.values, s.indices, s.src),
    GateTopK: lambda s: (s.values, s.indices, s.src, s.scores),
    MrgSort: lambda s: (s.keys, s.indices, s.src_keys, s.src_indices),
}


def regions_of(s: Stmt) -> tuple[Region, ...]:
    f = _REGIONS_OF.get(type(s))
    return f(s) if f is not None else ()


def exprs_of(s: Stmt) -> list[Expr]:
    out: list[Expr] = []
    for r in regions_of(s):
        out += [r.offset, r.rows, r.cols, r.stride]
    t = type(s)
    if t is Mmad:
        out += [s.m, s.k, s.n, s.init]
    elif t is Img2Col:
        out += [s.p0, s.pixels, s.k0, s.klen, s.h0]
    elif t is TopK:
        out.append(s.index_base)
    elif t is MrgSort:
        out.append(s.first)
    return out


def _loads(e: Expr, out: set[str] | None = None) -> set[str]:
    out = set() if out is None else out
    t = type(e)
    if t is Load:
        out.add(e.buf)
        _loads(e.index, out)
    elif t is Bin:
        _loads(e.a, out)
        _loads(e.b, out)
    return out


def buffers_of(s: Stmt) -> set[str]:
    """Buffers a statement reads or writes (queue operations included)."""
    if isinstance(s, QUEUE_OPS):
        return {s.buf}
    f = _REGIONS_OF.get(type(s))
    if f is None:
        return set()
    out: set[str] = set()
    for r in f(s):
        if not r.gm:
            out.add(r.buf)
        for e in (r.offset, r.rows, r.cols, r.stride):
            t = type(e)
            if t is Bin or t is Load:  # only these can read a buffer
                _loads(e, out)
    if type(s) in _MORE_EXPRS:
        for e in exprs_of(s)[4 * len(f(s)):]:
            _loads(e, out)
    return out


_MORE_EXPRS = (Mmad, Img2Col, TopK, MrgSort)  # statements with index expressions beyond their regions'



def _kind(piece: list[Stmt]) -> str | None:
    copies = [s for s in piece if isinstance(s, Copy)]
    if any(s.src.gm for s in copies):
        return "CopyIn"
    if any(isinstance(s, (VecOp, Reduce, TopK, MrgSort, GateTopK)) for s in piece) or any(
            not s.src.gm and not s.dst.gm for s in copies):
        return "Compute"
    if any(s.dst.gm for s in copies):
        return "CopyOut"
    return None


def _cut(run: list[Stmt]) -> list[list[Stmt]]:
    pieces: list[list[Stmt]] = [[]]
    for i, s in enumerate(run):
        if isinstance(s, FLAGS):
            pieces += [[s], []]
            continue
        pieces[-1].append(s)
        nxt = run[i + 1] if i + 1 < len(run) else None
        if isinstance(s, EnQue) and not isinstance(nxt, EnQue):
            pieces.append([])
    return [p for p in pieces if p]


class _Planner:
    def __init__(self, skip: set[str]):
        self.skip = skip  # tiling constants and block variables: not method parameters
        self.methods: list[MethodDef] = []  # in first-call order
        self.kinds: list[str] = []  # each method's kind
        # (kind, the statements' ids) -> its method: the statements live as long as the planner (the program
        # holds them), and a piece equal to an earlier one but of other statement objects is found by
        # comparing, so no statement tree is hashed
        self._seen: dict[tuple, MethodDef] = {}
        self.count: dict[str, int] = {}

    def method(self, kind: str, piece: list[Stmt]) -> MethodDef:
        ids = (kind, *map(id, piece))
        md = self._seen.get(ids)
        if md is not None:
            return md
        body = tuple(piece)
        md = next((m for m, k in zip(self.methods, self.kinds, strict=True)
                   if k == kind and len(m.body) == len(body) and m.body == body), None)
        if md is None:
            params: dict[str, None] = {}
            for s in piece:
                for e in exprs_of(s):
                    t = type(e)
                    if t is Var:
                        if e.name not in self.skip:
                            params[e.name] = None
                    elif t is not Const:
                        for v in sorted(free_vars(e)):
                            if v not in self.skip:
                                params[v] = None
            n = self.count.get(kind, 0) + 1
            self.count[kind] = n
            name = kind if n == 1 else f"{kind}{n}"
            md = MethodDef(name, tuple(params), body)
            self.methods.append(md)
            self.kinds.append(kind)
        self._seen[ids] = md
        return md

    def body(self, stmts: tuple[Stmt, ...]) -> Plan:
        plan: Plan = []
        run: list[Stmt] = []

        def flush() -> None:
            merged: list[tuple[str | None, list[Stmt]]] = []
            for piece in _cut(run):
                kind = _kind(piece)
                if merged and kind is not None and merged[-1][0] == kind:
                    merged[-1][1].extend(piece)
                else:
                    merged.append((kind, piece))
            for kind, piece in merged:
                plan.append(Inline(tuple(piece)) if kind is None else Call(self.method(kind, piece)))
            run.clear()

        for s in stmts:
            if isinstance(s, (Loop, If)):
                flush()
                plan.append((s, self.body(s.body)))
            elif isinstance(s, Let):
                flush()
                plan.append(s)
            else:
                run.append(s)
        flush()
        return plan


def plan_body(stmts: tuple[Stmt, ...], tiling: dict[str, int]) -> tuple[Plan, list[MethodDef]]:
    """The Process() plan of a core program and the methods it calls, in first-call order."""
    p = _Planner(set(tiling) | set(BLOCK_VARS) | {"block_dim"})
    plan = p.body(stmts)
    return plan, list(p.methods)


def _walk(plan: Plan):
    for node in plan:
        if isinstance(node, tuple):
            yield from _walk(node[1])
        else:
            yield node


def bound_members(plan: Plan, queued: set[str], uses: Callable[[Stmt], set[str]] = buffers_of) -> set[str]:
    """Queue buffers whose LocalTensor must outlive one method (bound in one, used in another). `uses`: the
    buffers of a statement (`buffers_of`, or a cache of its answers; they are not changed)."""
    members: set[str] = set()
    seen: set[int] = set()  # ids of the methods looked at (each name is one MethodDef object)
    for node in _walk(plan):
        if isinstance(node, Inline):
            for s in node.stmts:
                members |= uses(s) & queued
        elif isinstance(node, Call) and id(node.method) not in seen:
            seen.add(id(node.method))
            bound: set[str] = set()
            for s in node.method.body:
                if isinstance(s, (Alloc, DeQue)):
                    bound.add(s.buf)
                else:
                    members |= (uses(s) & queued) - bound
    return members
