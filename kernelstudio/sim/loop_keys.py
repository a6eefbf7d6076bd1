"""Loop cost keys: which iterations of a loop cost the same, for the steady-state shortcut
(engine.py) and the block fingerprints (fingerprint.py).

An instruction's cost depends only on its *sizes* (rows, cols, m, k, n, pixels, ...), never on
offsets. For a loop with variable `v`, the "key" of an iteration is the tuple of the cost-relevant
expressions of its body that depend on `v` (directly or through `Let`s at the body's top level).
Iterations with equal keys cost the same; a loop whose key cannot be computed from `v` alone (a size
that mixes `v` with an inner loop variable) or that waits on another core or reads a buffer from the
scalar is never extrapolated.
"""

from __future__ import annotations

from collections.abc import Callable

from ..tileir.expr import Expr, compile_expr, free_vars, has_load
from ..tileir.program import (
    Copy,
    CrossWait,
    GateTopK,
    If,
    Img2Col,
    Let,
    Loop,
    Mmad,
    MrgSort,
    Reduce,
    Region,
    SetFlag,
    Stmt,
    SyncAll,
    TopK,
    VecCall,
    VecOp,
    WaitFlag,
)
from .program import K_ALLOC, K_CSET, K_DEQUE, K_ENQUE, K_FREE, K_FSET, K_FWAIT, K_WORK

__all__ = ["sizes_exprs", "cost_exprs", "analyse_loop", "touched"]


# the expressions an instruction's cost depends on, by statement type
_SIZES: dict[type, Callable[[Stmt], tuple[Expr, ...]]] = {
    Copy: lambda s: (s.dst.rows, s.dst.cols),
    Mmad: lambda s: (s.m, s.k, s.n),
    Img2Col: lambda s: (s.pixels, s.klen),
    VecOp: lambda s: (s.dst.rows, s.dst.cols),
    Reduce: lambda s: (s.src.rows, s.src.cols),
    TopK: lambda s: (s.src.rows, s.src.cols),
    MrgSort: lambda s: (s.src_keys.rows, s.src_keys.cols),
    GateTopK: lambda s: (s.src.rows, s.src.cols),
    VecCall: lambda s: (s.repeats,) if s.form == "repeat" else (s.count,),
}
# ... and those of the control statements: trip counts, conditions, bound values
_CONTROL: dict[type, Callable[[Stmt], tuple[Expr, ...]]] = {
    Loop: lambda s: (s.start, s.stop, s.step),
    If: lambda s: (s.cond,),
    Let: lambda s: (s.value,),
}
# the Region fields of each statement type (srcs of VecOp / VecCall aside)
_REGIONS = ("dst", "src", "c", "a", "b", "values", "indices", "scores", "keys", "src_keys", "src_indices")


def sizes_exprs(s: Stmt) -> tuple[Expr, ...]:
    """The expressions an instruction's cost depends on."""
    f = _SIZES.get(type(s))
    return f(s) if f is not None else ()


def cost_exprs(s: Stmt) -> tuple[Expr, ...]:
    """Every expression of statement `s` itself (not its body) that can change timing."""
    f = _SIZES.get(type(s)) or _CONTROL.get(type(s))
    return f(s) if f is not None else ()


_FIELDS: dict[type, tuple[str, ...]] = {}  # per statement type: its fields among _REGIONS, in that order


def _exprs_all(s: Stmt) -> list[Expr]:
    """All expressions of a statement (for Load detection)."""
    out = list(cost_exprs(s))
    t = type(s)
    names = _FIELDS.get(t)
    if names is None:
        fields = getattr(t, "__dataclass_fields__", None)
        names = _FIELDS[t] = _REGIONS if fields is None else tuple(n for n in _REGIONS if n in fields)
    for name in names:
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


def analyse_loop(loop: Loop, memo: dict[int, tuple] | None = None) -> tuple[bool, tuple, tuple | None, tuple]:
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
    keys: dict[Expr, None] = {}  # in order of first use (a dict: Expr hashes are kept, == walks the tree)
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
                            keys[e] = None
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


def touched(ops: list) -> tuple[tuple[int, ...], tuple[int, ...]]:
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

