"""The TileIR verifier: the rules every Program must keep for its three readers, checked in one walk.

`verify(prog, after="split_loop")` raises `VerifyError` naming the pass, the kernel, the statement and
what is wrong. It checks, per kernel:

- names: every buffer an instruction names (regions, queue operations, `Load`s) is declared: a
  `gm=True` region names a GM tensor of the program that is one of the kernel's params, any other
  region an on-chip buffer of the kernel (`vec_calls.WORK` for `VecCall`s); buffer names are unique;
- tiers and cores: a buffer is used only by the side of its `core` (the interpreter gives each core
  only its own buffers), AIC buffers are in L1/L0A/L0B/L0C and AIV buffers in UB (UB on the AIC side
  too on chips with an L0C -> UB path); a `Copy` has a data path between its tiers (`pipe_of`);
  Mmad reads L0A/L0B into L0C, Img2Col L1 into L0B, vector instructions UB;
- queues: queue operations only on buffers with a queue position; per buffer, Allocs pair up with
  Frees and EnQues with DeQues over each side: every loop body (one iteration) and If body counts
  once per trip when its trip count is static, and what a loop of a symbolic trip count leaves
  unpaired must cancel against sibling loops of the same bounds (a producer loop and a consumer
  loop); the message names the innermost loop whose operations do not pair up;
- flags: every CrossWait has a CrossSet of the same flag on the other side and vice versa; every
  WaitFlag(src, dst, e) a SetFlag(src, dst, e) on its side; a SyncAll on one side of a mixed kernel
  has one on the other side;
- expressions: every index expression is an `Expr` tree (Var / Const / Bin of + - * // % min max /
  Load) and uses only bound variables: the kernel's tiling values, `blk`, `sub` (AIV side), the
  enclosing loops' variables and the Lets before it in an enclosing body; a static loop step is not 0;
- 64-bit extents: every Const, buffer size (rows * cols * itemsize * depth) and static region extent
  fits in int64, and sizes are >= 0; a region whose offset, rows, cols and stride are all static fits
  its buffer slot or GM tensor.

Not checked (they need values the walk does not have): that queue operations come in the order
Alloc, EnQue, DeQue, Free and never hold more slots than `depth`; cross flag counts (loop trip counts
differ between the sides); bounds of regions that depend on loop variables. Symbolic trip counts are
compared as written (two loops `range(0, n)` pair up even if a Let rebinds `n` between them).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable

from ..core.errors import KernelStudioError, VerifyError
from ..hw import get as get_profile
from ..ir.ops import itemsize
from .expr import Bin, Const, Expr, Load, Var
from .program import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
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
from .vec_calls import WORK

__all__ = ["verify", "check_kernel", "stmt_text"]

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
_PY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
       "min": min, "max": max}
_AIC_TIERS = frozenset({Tier.L1, Tier.L0A, Tier.L0B, Tier.L0C})
_QUEUE_OPS = (Alloc, EnQue, DeQue, Free)
_KERNEL_TYPES = {"AIV_ONLY", "AIC_ONLY", "MIX_AIC_1_2"}
_STMT_TEXT = 160


def verify(prog: Program, *, after: str = "") -> None:
    """Check every kernel of `prog`; raise `VerifyError` at the first broken rule. `after` names the pass
    that made the program (for the message)."""
    gm = {t.name: t for t in prog.tensors}
    for t in prog.tensors:
        n = 1
        for d in t.shape:
            if not isinstance(d, int) or d < 0:
                raise VerifyError(f"{_head(after)}: GM tensor {t.name} has shape {t.shape}: dimensions must be "
                                  "ints >= 0")
            n *= d
        if n * itemsize(t.dtype) > INT64_MAX:
            raise VerifyError(f"{_head(after)}: GM tensor {t.name} {list(t.shape)} {t.dtype} has "
                              f"{n * itemsize(t.dtype):,} B, more than int64 holds")
    for name in (*prog.inputs, *prog.outputs):
        if name not in gm:
            raise VerifyError(f"{_head(after)}: program input/output {name} is not one of its GM tensors "
                              f"({', '.join(gm)})")
    ub_on_aic = _ub_on_aic(prog)
    for k in prog.kernels:
        check_kernel(k, gm, after=after, ub_on_aic=ub_on_aic)


def check_kernel(k: Kernel, gm: dict, *, after: str = "", ub_on_aic: bool = False) -> None:
    """Check one kernel; `gm` maps the program's GM tensor names to their `GmTensor`s. `ub_on_aic`: the chip
    has an L0C -> UB path, so the AIC side may hold UB buffers."""
    _Checker(k, gm, after, ub_on_aic).run()


def _head(after: str) -> str:
    return f"TileIR check failed after pass {after}" if after else "TileIR check failed"


def _ub_on_aic(prog: Program) -> bool:
    profile = prog.profile
    if profile is None:
        try:
            profile = get_profile(prog.target)
        except KernelStudioError:  # a hand-built program for an unknown target: the strict rule
            return False
    return bool(getattr(profile, "has_l0c_to_ub", False))


def stmt_text(s: object) -> str:
    """A one-line form of a statement: its fields (not a Loop's or If's body, nor comments), regions and
    expressions as the printer writes them, cut to 160 characters."""
    parts = []
    for f in dataclasses.fields(s):  # type: ignore[arg-type]
        if f.name in ("body", "comment"):
            continue
        v = getattr(s, f.name)
        if isinstance(v, (Region, Var, Const, Bin, Load)):
            text = str(v)
        elif isinstance(v, tuple) and v and all(isinstance(x, Region) for x in v):
            text = "(" + ", ".join(str(x) for x in v) + ")"
        else:
            text = repr(v)
        parts.append(f"{f.name}={text}")
    out = f"{type(s).__name__}({', '.join(parts)})"
    return out if len(out) <= _STMT_TEXT else out[: _STMT_TEXT - 3] + "..."


class _Checker:
    def __init__(self, k: Kernel, gm: dict, after: str, ub_on_aic: bool):
        self.k, self.gm, self.after, self.ub_on_aic = k, gm, after, ub_on_aic
        self.params = set(k.params)
        self.bufs: dict[str, Buffer] = {}
        self.tiling = dict(k.tiling)
        self.tiers: dict[str, Tier] = {}
        self.side = ""
        self.where: list[str] = []  # the enclosing loops' variables
        self.bound: dict[str, int] = {}  # name -> how many scopes bind it
        self.core = CoreType.AIV
        self.cross_set: dict[str, dict[int, CrossSet]] = {"aic": {}, "aiv": {}}
        self.cross_wait: dict[str, list[CrossWait]] = {"aic": [], "aiv": []}
        self.flag_set: set[tuple] = set()
        self.flag_wait: list[WaitFlag] = []
        self.sync_all: dict[str, bool] = {"aic": False, "aiv": False}
        self._owned: dict[str, Buffer] = {}  # buffers own_buffer passed on the current side

    # ---- reporting -------------------------------------------------------------------------------
    def fail(self, what: str, s: object | None = None) -> None:
        at = f"kernel {self.k.name}"
        if self.side:
            at += f", {self.side}"
            if self.where:
                at += f" (in loop {' > '.join(self.where)})"
        stmt = f"{stmt_text(s)} " if s is not None else ""
        raise VerifyError(f"{_head(self.after)}: {at}: {stmt}{what}")

    # ---- kernel ----------------------------------------------------------------------------------
    def run(self) -> None:
        k = self.k
        if k.kernel_type not in _KERNEL_TYPES:
            self.fail(f"kernel_type {k.kernel_type!r} is not one of {sorted(_KERNEL_TYPES)}")
        if not isinstance(k.block_dim, int) or k.block_dim < 1:
            self.fail(f"block_dim {k.block_dim!r}: must be an int >= 1")
        if k.kernel_type == "AIV_ONLY" and k.aic or k.kernel_type == "AIC_ONLY" and k.aiv:
            self.fail(f"a {k.kernel_type} kernel with statements on the "
                      f"{'aic' if k.kernel_type == 'AIV_ONLY' else 'aiv'} side")
        for p in k.params:
            if p not in self.gm:
                self.fail(f"param {p} is not a GM tensor of the program")
        for name, v in k.tiling:
            if not isinstance(v, int) or not INT64_MIN <= v <= INT64_MAX:
                self.fail(f"tiling value {name}={v!r} is not an int64")
        for b in k.buffers:
            self.buffer(b)
        self.check_side_data()
        for side, stmts, core in (("aic", k.aic, CoreType.AIC), ("aiv", k.aiv, CoreType.AIV)):
            if not stmts:
                continue
            self.side, self.core = side, core
            self._owned = {}
            self.bound = dict.fromkeys(self.tiling, 1)
            self.bound["blk"] = self.bound.get("blk", 0) + 1
            if side == "aiv":
                self.bound["sub"] = self.bound.get("sub", 0) + 1
            for (buf, _), c in self.body(stmts).items():
                self.unpaired(buf, c)
        self.side = ""
        self.check_flags()

    def buffer(self, b: Buffer) -> None:
        if b.name in self.bufs:
            self.fail(f"buffer {b.name} is declared twice")
        for f in ("rows", "cols", "depth"):
            v = getattr(b, f)
            if not isinstance(v, int) or v < 0:
                self.fail(f"buffer {b.name} has {f}={v!r}: must be an int >= 0")
        if b.depth < 1:
            self.fail(f"buffer {b.name} has depth {b.depth}: at least one slot")
        if b.queue is None and b.depth != 1:
            self.fail(f"buffer {b.name} has no queue position but {b.depth} slots: a TBuf has one")
        if b.nbytes > INT64_MAX:
            self.fail(f"buffer {b.name} [{b.rows},{b.cols}] {b.dtype} x{b.depth} has {b.nbytes:,} B, "
                      "more than int64 holds")
        if b.tier is Tier.GM:
            self.fail(f"buffer {b.name} is in tier GM: on-chip buffers are in L1, L0A, L0B, L0C or UB")
        self.bufs[b.name] = b
        self.tiers[b.name] = b.tier

    def check_side_data(self) -> None:
        """The tile walk, run-time rows and row composite name what exists."""
        k = self.k
        if k.tile_walk is not None:
            self.bound = dict.fromkeys(self.tiling, 1)
            self.bound["t"] = 1
            for let in k.tile_walk.lets:
                self.expr(let.value, let, "value")
                self.bound[let.var] = 1
            for p in k.tile_walk.panels:
                if p.tensor not in self.gm:
                    self.fail(f"tile walk panel of {p.tensor}, which is not a GM tensor of the program", p)
                for f in ("key", "nbytes", "reads"):
                    self.expr(getattr(p, f), p, f)
        rt = k.runtime_rows
        if rt is not None:
            for t in rt.tensors:
                if t not in self.gm:
                    self.fail(f"runtime_rows names {t}, which is not a GM tensor of the program")
            for n in rt.names:
                if n not in self.tiling:
                    self.fail(f"runtime_rows sets the tiling value {n!r}, which the kernel's tiling lacks")
        rc = k.row_composite
        if rc is not None:
            for t in (rc.x, rc.out, rc.gamma, rc.beta):
                if t and t not in self.gm:
                    self.fail(f"row_composite {rc.name} names {t}, which is not a GM tensor of the program")

    # ---- statements ------------------------------------------------------------------------------
    def body(self, stmts: Iterable[Stmt]) -> dict[tuple, list]:
        """Check `stmts` (one scope); return its queue operations that do not pair up inside it (`_Counts`)."""
        counts: dict[tuple, list] = {}
        lets: list[str] = []
        try:
            for s in stmts:
                t = type(s)
                if t is Loop:
                    start, stop, step = (self.expr(s.start, s, "start"), self.expr(s.stop, s, "stop"),
                                         self.expr(s.step, s, "step"))
                    if step == 0:
                        self.fail("has step 0", s)
                    if not isinstance(s.var, str) or not s.var:
                        self.fail("has no loop variable name", s)
                    self.bound[s.var] = self.bound.get(s.var, 0) + 1
                    self.where.append(s.var)
                    try:
                        inner = self.body(s.body)
                    finally:
                        self.where.pop()
                        self.unbind(s.var)
                    if inner:
                        trips = len(range(start, stop, step)) if None not in (start, stop, step) else None
                        self.lift(inner, s, counts, trips, ("loop", s.start, s.stop, s.step))
                elif t is If:
                    cond = self.expr(s.cond, s, "cond")
                    inner = self.body(s.body)
                    if inner:
                        self.lift(inner, s, counts, None if cond is None else int(cond != 0), ("if", s.cond))
                elif t is Let:
                    self.expr(s.value, s, "value")
                    self.bound[s.var] = self.bound.get(s.var, 0) + 1
                    lets.append(s.var)
                elif t in _QUEUE_OPS:
                    b = self.own_buffer(s.buf, s, "")
                    if b.queue is None:
                        self.fail("of a buffer with no queue position", s)
                    c = counts.get((s.buf, ()))
                    if c is None:
                        c = counts[(s.buf, ())] = [0, 0, 0, 0, None]
                    c[_QUEUE_OPS.index(t)] += 1
                elif t is CrossSet:
                    self.int_field(s, "flag")
                    self.cross_set[self.side].setdefault(s.flag, s)
                elif t is CrossWait:
                    self.int_field(s, "flag")
                    self.cross_wait[self.side].append(s)
                elif t is SetFlag:
                    self.int_field(s, "event")
                    self.flag_set.add((self.side, s.src, s.dst, s.event))
                elif t is WaitFlag:
                    self.int_field(s, "event")
                    self.flag_wait.append((self.side, s, tuple(self.where)))
                elif t is SyncAll:
                    self.sync_all[self.side] = True
                else:
                    self.instr(s)
        finally:
            for v in lets:
                self.unbind(v)
        # what does not pair up here may pair up with a sibling loop of the same trip count further out
        return {bk: c for bk, c in counts.items() if c[0] != c[3] or c[1] != c[2]}

    def unbind(self, v: str) -> None:
        n = self.bound[v] - 1
        if n:
            self.bound[v] = n
        else:
            del self.bound[v]

    def lift(self, inner: dict[tuple, list], s: Loop | If, counts: dict[tuple, list], trips: int | None,
             factor: tuple) -> None:
        """Add what `inner` (the body of `s`) leaves unpaired to the enclosing scope's `counts`: times `trips`
        when the trip count is static, else under the key `factor` (a symbolic trip count)."""
        if trips is not None:
            factor = None  # type: ignore[assignment]
        for (buf, key), c in inner.items():
            new_key = key if factor is None else (factor, *key)
            mult = 1 if trips is None else trips
            if not mult:
                continue
            out = counts.get((buf, new_key))
            if out is None:
                out = counts[(buf, new_key)] = [0, 0, 0, 0, c[4]]
            for i in range(4):
                out[i] += c[i] * mult
            if out[4] is None:
                out[4] = c[4] if c[4] is not None else (s, tuple(self.where), tuple(c[:4]))

    def unpaired(self, buf: str, c: list) -> None:
        a, e, d, f, origin = c
        if origin is None:
            scope = f"in the {self.side} statements outside loops"
        else:
            origin, where, (a, e, d, f) = origin  # the counts of one pass over the origin's body
            self.where = list(where)
            scope = "in one iteration of this loop" if type(origin) is Loop else "in this if's body"
        self.fail(f"queue operations on {buf} do not pair up {scope}: {a} Alloc, {e} EnQue, {d} DeQue, {f} Free "
                  "(Allocs must match Frees and EnQues DeQues)", origin)

    def instr(self, s: Stmt) -> None:
        t = type(s)
        if t is Copy:
            self.region(s.dst, s, "dst")
            self.region(s.src, s, "src")
            if s.valid_cols is not None:
                self.expr(s.valid_cols, s, "valid_cols")
            try:
                pipe_of(s, self.tiers)
            except KeyError:
                src = "GM" if s.src.gm else self.tiers[s.src.buf].value
                dst = "GM" if s.dst.gm else self.tiers[s.dst.buf].value
                self.fail(f"copies {src} -> {dst}, a move no pipe makes", s)
        elif t is Mmad:
            for f, tier in (("c", Tier.L0C), ("a", Tier.L0A), ("b", Tier.L0B)):
                self.region(getattr(s, f), s, f, tier)
            for f in ("m", "k", "n", "init"):
                self.expr(getattr(s, f), s, f)
        elif t is Img2Col:
            self.region(s.dst, s, "dst", Tier.L0B)
            self.region(s.src, s, "src", Tier.L1)
            for f in ("p0", "pixels", "k0", "klen", "h0"):
                self.expr(getattr(s, f), s, f)
            for f in ("cin", "in_h", "in_w", "kh", "kw", "out_w", "slab_rows", "cin_valid"):
                self.int_field(s, f)
            for f in ("stride", "pad"):
                v = getattr(s, f)
                if not isinstance(v, tuple) or not all(type(x) is int and x >= 0 for x in v):
                    self.fail(f"has {f}={v!r}: a tuple of ints >= 0", s)
        elif t is VecOp:
            self.region(s.dst, s, "dst", Tier.UB)
            for r in s.srcs:
                self.region(r, s, "srcs", Tier.UB)
        elif t is Reduce:
            self.region(s.dst, s, "dst", Tier.UB)
            self.region(s.src, s, "src", Tier.UB)
        elif t is VecCall:
            self.region(s.dst, s, "dst", Tier.UB, work=True)
            for r in s.srcs:
                self.region(r, s, "srcs", Tier.UB, work=True)
            for f in ("mask", "repeats", "count"):
                self.expr(getattr(s, f), s, f)
        elif t is GateTopK:
            for f in ("values", "indices", "src", "scores"):
                self.region(getattr(s, f), s, f, Tier.UB)
            for f in ("k", "groups", "topk_groups"):
                self.int_field(s, f)
        elif t is TopK:
            for f in ("values", "indices", "src"):
                self.region(getattr(s, f), s, f, Tier.UB)
            self.expr(s.index_base, s, "index_base")
            self.int_field(s, "k")
        elif t is MrgSort:
            for f in ("keys", "indices", "src_keys", "src_indices"):
                self.region(getattr(s, f), s, f, Tier.UB)
            self.expr(s.first, s, "first")
        else:
            self.fail(f"is not a TileIR statement ({t.__name__})", s)

    def int_field(self, s: object, f: str) -> None:
        v = getattr(s, f)
        if type(v) is not int or not 0 <= v <= INT64_MAX:
            self.fail(f"has {f}={v!r}: an int >= 0", s)

    # ---- operands --------------------------------------------------------------------------------
    def own_buffer(self, name: str, s: object, field: str) -> Buffer:
        """The on-chip buffer `name`, declared and on this side's core and tiers."""
        b = self._owned.get(name)
        if b is not None:  # checked on this side already
            return b
        b = self.bufs.get(name)
        what = f"{field} " if field else ""
        if b is None:
            gm = " (a GM tensor: the region needs gm=True)" if name in self.gm else ""
            self.fail(f"names {what}buffer {name!r}, which the kernel does not declare{gm}", s)
        if b.core is not self.core:
            self.fail(f"uses {what}buffer {name} of the {b.core.value} core on the {self.side} side", s)
        ok = b.tier is Tier.UB if self.side == "aiv" else (b.tier in _AIC_TIERS or self.ub_on_aic and b.tier is Tier.UB)
        if not ok:
            self.fail(f"uses {what}buffer {name} in {b.tier.value}, which the {self.side} core has not", s)
        self._owned[name] = b
        return b

    def region(self, r: Region, s: object, field: str, tier: Tier | None = None, work: bool = False) -> None:
        if type(r) is not Region:
            self.fail(f"has {field}={r!r}: not a Region", s)
        leaf = self.leaf
        off, rows, cols, stride = (leaf(r.offset, s, field), leaf(r.rows, s, field), leaf(r.cols, s, field),
                                   leaf(r.stride, s, field))
        if r.gm:
            t = self.gm.get(r.buf)
            if t is None:
                on_chip = " (an on-chip buffer: the region needs gm=False)" if r.buf in self.bufs else ""
                self.fail(f"names GM tensor {r.buf!r} in {field}, which is not in the program{on_chip}", s)
            if r.buf not in self.params:
                self.fail(f"reads or writes GM tensor {r.buf} in {field}, which is not a param of the kernel", s)
            if tier is not None:
                self.fail(f"has a GM region in {field}: the operand must be in {tier.value}", s)
            size = t.size
        elif work and r.buf == WORK:
            size = None
        else:
            b = self.own_buffer(r.buf, s, field)
            if tier is not None and b.tier is not tier:
                self.fail(f"has {field} in {r.buf}, a {b.tier.value} buffer: the operand must be in {tier.value}", s)
            size = b.slot_elems
        if rows is not None and rows < 0:
            self.fail(f"has {field}.rows = {rows} < 0", s)
        if cols is not None and cols < 0:
            self.fail(f"has {field}.cols = {cols} < 0", s)
        if stride is not None and stride < 0:
            self.fail(f"has {field}.stride = {stride} < 0", s)
        if off is not None and rows and cols and stride is not None:
            end = off + (rows - 1) * stride + cols
            if off < 0 or end > INT64_MAX:
                self.fail(f"has {field} elements {off}..{end}, outside int64 indices >= 0", s)
            if size is not None and end > size:
                where = f"GM tensor {r.buf}" if r.gm else f"a slot of {r.buf}"
                self.fail(f"has {field} reaching element {end}, past the {size} elements of {where}", s)

    def leaf(self, e: Expr, s: object, field: str) -> int | None:
        """`expr` with the common leaves (a Const, a tiling value) inline."""
        t = type(e)
        if t is Const:
            v = e.value
            if type(v) is int and INT64_MIN <= v <= INT64_MAX:
                return v
        elif t is Var and self.bound.get(e.name) == 1:
            return self.tiling.get(e.name)
        return self.expr(e, s, field)

    def expr(self, e: Expr, s: object, field: str) -> int | None:
        """Check that `e` is an Expr tree of bound variables and int64 constants; return its value when it
        depends on tiling values only (else None)."""
        t = type(e)
        if t is Const:
            v = e.value
            if type(v) is not int or not INT64_MIN <= v <= INT64_MAX:
                self.fail(f"has a constant {v!r} in {field}: not an int64", s)
            return v
        if t is Var:
            n = self.bound.get(e.name)
            if n is None:
                self.fail(f"uses variable {e.name!r} in {field}, which no enclosing loop, earlier Let, tiling value "
                          f"or {'blk/sub' if self.side == 'aiv' else 'blk'} binds", s)
            return self.tiling.get(e.name) if n == 1 else None  # a tiling value no loop or Let rebinds
        if t is Bin:
            op = _PY.get(e.op)
            if op is None:
                self.fail(f"has operator {e.op!r} in {field}: not one of + - * // % min max", s)
            a = self.expr(e.a, s, field)
            b = self.expr(e.b, s, field)
            if a is None or b is None:
                return None
            try:
                return op(a, b)
            except ZeroDivisionError:
                return None
        if t is Load:
            if not self.side:
                self.fail(f"reads buffer {e.buf} in {field} outside the kernel body", s)
            if e.buf not in self.gm or e.buf not in self.k.params:  # a scalar read of a GM parameter is one too
                self.own_buffer(e.buf, s, field)
            self.expr(e.index, s, field)
            return None
        self.fail(f"has {field}={e!r}: not an index expression (Var, Const, Bin or Load)", s)
        return None

    # ---- flags -----------------------------------------------------------------------------------
    def check_flags(self) -> None:
        for side, other in (("aic", "aiv"), ("aiv", "aic")):
            self.side = side
            for w in self.cross_wait[side]:
                if w.flag not in self.cross_set[other]:
                    self.fail(f"waits for cross-core flag {w.flag}, which the {other} side never sets", w)
            waited = {w.flag for w in self.cross_wait[other]}
            for flag, cs in self.cross_set[side].items():
                if flag not in waited:
                    self.fail(f"sets cross-core flag {flag}, which the {other} side never waits for", cs)
            if self.sync_all[side] and (self.k.aic if other == "aic" else self.k.aiv) and not self.sync_all[other]:
                self.fail(f"has a SyncAll that the {other} side never reaches: every core must arrive")
        for side, w, where in self.flag_wait:
            if (side, w.src, w.dst, w.event) not in self.flag_set:
                self.side, self.where = side, list(where)
                self.fail(f"has no SetFlag({w.src.value}, {w.dst.value}, {w.event}) on the {side} side", w)
        self.side, self.where = "", []

