"""The Ascend C calls a TileIR vector instruction issues, as TileIR `VecCall`s: what the code generator
writes and what the simulator prices, made by one function so the two cannot disagree.

`expand(instr, buffers, tiling)` returns the calls (in `Loop`s over the rows and `If`s where the code
has them) and the elements of reduce scratch they use, or None when the instruction is one call on
contiguous data (the code generator's count form; the simulator prices the instruction itself).
P is the elements of one 256-byte repeat (64 float32, 128 float16), B those of a 32-byte block.

- Row reduction `Reduce(op, dst, src)` over R rows of C columns: `WholeReduceSum` / `WholeReduceMax`
  (ReduceOrder::ORDER_ONLY_VALUE) reduce each repeat to one value. A static C of several repeats whose
  column groups are fewer than the rows is first folded to one repeat per row: `Add` / `Max` of column
  group j into a scratch row (every row at once, R repeats, mask C % P for the tail group). Else,
  while a row is wider than one repeat (C > P), one call per row reduces its whole repeats (mask P,
  C // P repeats) into the scratch and a second call its tail (mask C % P, one repeat), leaving
  ceil(C / P) partials per row, rows B-padded apart. Then one call over all rows (mask = values per
  row, R repeats, srcRepStride = row pitch in blocks, dstRepStride = dst's row stride) writes the R
  results to dst. With `accumulate` the results land in the scratch and one `Add` / `Max` (count
  form) combines them into dst.
- Binary op with a per-row (R x 1, one element apart) or scalar (1 x 1) operand: `Brcb` spreads each
  of 8 values to one 32-byte block per repeat (ceil(R / 8) repeats) into the scratch, and the op runs in its repeat form
  with that operand's block stride 0 (every block of a repeat reads the row's block): one call for all
  rows when a row fits one repeat (mask C, R repeats, repeat strides = row pitches); else one call per
  256-byte column group covering every row (as below) when that makes fewer calls than rows, else per
  row a call over its whole repeats and one for its tail. `copy` of such an operand is `Adds(..., 0)` the
  same way.
- Row-looped binary ops (rows not contiguous, or a one-row operand reused for every row): one
  repeat-form call per 256-byte column group covering every row (R repeats, repeat strides = row
  pitches in blocks, 0 for the one-row operand), plus one for the tail group (mask C % P).
  The scalar ops (adds, muls, maxs, mins; neg as Muls -1, copy as Adds 0) the same way with
  UnaryRepeatParams.
- Other row-looped ops (exp, erf, cast, ...: no repeat form used), and ops whose pitches do not fit
  a uint8 stride: one count-form call per row (`looped`); when they loop only because the row length
  is a run-time value that may be shorter than the stride (`dense_when`), one call over every row if
  it equals the stride, else the per-row calls.
- select (no broadcast operand): `CompareScalar` then `Select`, count form (per row when looped).

Not expanded (the instruction prices itself): contiguous count-form ops, cast of a broadcast operand,
select with a broadcast operand, transpose. Those still read scalars on the scalar unit where they
broadcast (see codegen/vector.py and layout.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.dtypes import BLOCK_BYTES, REPEAT_BYTES, block_elems, itemsize, repeat_elems
from ..core.errors import UnsupportedError
from .expr import Const, E, Expr, Var, ceil_div, is_multiple, static_value
from .memo import KernelMemo
from .program import Buffer, Copy, If, Loop, Reduce, Region, Stmt, VecCall, VecOp
from .vector_ops import OPS, REDUCTIONS, SCALAR_REPEAT_APIS, VectorOp

__all__ = ["WORK", "Expansion", "expand", "calls_of", "work_of", "kind", "contiguous", "looped", "dense_when",
           "BINARY_API", "SCALAR_API", "REPEAT_BYTES"]

WORK = "__work__"  # the kernel's reduce scratch (codegen: workBuf)
MAX_REPEAT = 255  # repeatTime and uint8 repeat strides
# binary ops written in their repeat form (BinaryRepeatParams): op -> API
BINARY_API = {r.name: r.api for r in OPS.values() if r.form == "binary" and r.repeat}
# one-source ops written as a scalar API in its repeat form (UnaryRepeatParams): op -> (API, cost op, fixed
# scalar): adds, ..., and the ops written with one (neg as Muls -1, copy as Adds 0)
SCALAR_API = {r.name: (r.call.api, r.call.cost, r.fixed_scalar) for r in OPS.values()
              if r.arity == 1 and r.call.api in SCALAR_REPEAT_APIS}


def _form(op: str) -> str:
    row = OPS.get(op)
    return row.form if row is not None else ""


def _combine(op: str) -> VectorOp:
    """The binary op that merges two partial results of reduction `op`."""
    return OPS[REDUCTIONS[op].combine]


@dataclass(frozen=True, slots=True)
class Expansion:
    """The calls of one instruction and the scratch they use (elements of `dtype`)."""

    stmts: tuple[Stmt, ...]
    work: int
    dtype: str


def kind(src: Region, dst: Region) -> str:
    """How a source relates to dst: "full", "row" (one row reused), "col" (one value per row), or
    "scalar" (one value for the whole tile)."""
    c = src.cols
    src_col = type(c) is Const and c.value == 1
    r = src.rows
    if type(r) is Const and r.value == 1:
        d = dst.rows
        if not (type(d) is Const and d.value == 1):  # one row for many
            return "scalar" if src_col else "row"
    if src_col:
        d = dst.cols
        if not (type(d) is Const and d.value == 1):  # one column for many
            return "col"
    return "full"


def contiguous(r: Region) -> bool:
    rows = r.rows
    return (type(rows) is Const and rows.value == 1) or r.stride is r.cols or r.stride == r.cols


def looped(dst: Region, srcs: tuple[Region, ...]) -> bool:
    """Whether the count-form code issues one call per row (see module doc)."""
    kinds = [kind(s, dst) for s in srcs]
    dense = all(contiguous(s) for s, k in zip(srcs, kinds, strict=True) if k == "full")
    return not (contiguous(dst) and dense and "row" not in kinds and "col" not in kinds)


class _Ctx:
    def __init__(self, buffers: Mapping[str, Buffer], tiling: Mapping[str, int], row: str, kernel: str):
        self.buffers, self.tiling, self.row, self.kernel = buffers, tiling, Var(row), kernel

    def buf(self, r: Region) -> Buffer:
        return self.buffers[r.buf]

    def cap(self, e: Expr, bound: int) -> int:
        """A static upper bound of `e` (its value when static, else `bound`)."""
        v = static_value(e, self.tiling)
        return bound if v is None else min(v, bound)

    def pitch(self, r: Region, pb: int) -> int | None:
        """Row pitch of `r` in 32-byte blocks when static, whole and <= 255."""
        v = static_value(r.stride, self.tiling)
        if v is None or v % pb or v // pb > MAX_REPEAT:
            return None
        return v // pb

    def aligned(self, r: Region, isz: int) -> bool:
        return is_multiple(E.mul(r.offset, isz), BLOCK_BYTES, self.tiling) and (
            r.rows == Const(1) or is_multiple(E.mul(r.stride, isz), BLOCK_BYTES, self.tiling))


_ONE = Const(1)


def _at(r: Region, offset: Expr, cols: Expr = _ONE) -> Region:
    return Region(r.buf, offset, _ONE, cols, r.stride, r.gm)


def _pieces(whole: Expr, cap: int) -> list[tuple[int, Expr]]:
    """(first repeat, repeats) of calls of at most 255 repeats covering `whole` (at most `cap`) repeats."""
    if cap <= MAX_REPEAT:
        return [(0, whole)]
    return [(j, E.max(0, E.min(MAX_REPEAT, E.sub(whole, j)))) for j in range(0, cap, MAX_REPEAT)]


def _maybe(cond: Expr, body: tuple[Stmt, ...], comment: str) -> tuple[Stmt, ...]:
    """`body` when `cond` is a nonzero constant, nothing when zero, else under an If."""
    if isinstance(cond, Const):
        return body if cond.value else ()
    return (If(cond, body, comment=comment),)


# ---- row reductions ------------------------------------------------------------------------------
def _reduce(s: Reduce, c: _Ctx) -> Expansion:
    sb = c.buf(s.src)
    dt = sb.dtype
    isz = itemsize(dt)
    per, pb = repeat_elems(dt), block_elems(dt)
    api = REDUCTIONS[s.op].api if s.op in REDUCTIONS else None
    if api is None:
        raise UnsupportedError(f"kernel {c.kernel}: reduction {s.op!r} has no Ascend C rule")
    if not c.aligned(s.src, isz):
        raise UnsupportedError(f"kernel {c.kernel}: rows of {s.src.buf} do not start on 32-byte boundaries "
                               f"(offset {s.src.offset}, {s.src.stride} elements apart); pad the buffer columns")
    op = REDUCTIONS[s.op].cost
    rows, rcap = s.src.rows, c.cap(s.src.rows, sb.rows)
    n, ncap = s.src.cols, c.cap(s.src.cols, sb.cols)
    cur, at = s.src, 0
    out: list[Stmt] = []
    folded = _fold(s, c, dt, rcap)
    if folded is not None:
        out, cur, n, at = folded
        ncap = per
    level = 0
    while ncap > per:
        level += 1
        kcap = -(-ncap // per)
        pitch = -(-kcap // pb) * pb
        whole, tail = E.div(n, per), E.mod(n, per)
        row_src = E.add(cur.offset, E.mul(c.row, cur.stride))
        row_dst = E.add(Const(at), E.mul(c.row, pitch))
        main = tuple(
            VecCall(api, op, dt, Region(WORK, E.add(row_dst, first), Const(1), Const(1), Const(pitch)),
                    (_at(cur, E.add(row_src, first * per), n),), "repeat", mask=Const(per), repeats=reps,
                    params=(1, 1, 8), comment=f"level {level}: whole repeats of each row")
            for first, reps in _pieces(whole, ncap // per))
        last = VecCall(api, op, dt, Region(WORK, E.add(row_dst, whole), Const(1), Const(1), Const(pitch)),
                       (_at(cur, E.add(row_src, E.mul(whole, per))),), "repeat", mask=tail, repeats=Const(1),
                       params=(1, 1, 8), comment=f"level {level}: the row's tail")
        out.append(Loop(c.row.name, Const(0), rows, Const(1), (*main, *_maybe(tail, (last,), "a partial repeat")),
                        comment=f"{s.op} of each row, one value per 256-byte repeat"))
        cur = Region(WORK, Const(at), rows, ceil_div(n, per), Const(pitch))
        at += rcap * pitch
        n, ncap = ceil_div(n, per), kcap
    dst = s.dst
    dst_step = static_value(dst.stride, c.tiling) if dst.rows != Const(1) else 1
    if s.accumulate:
        if dst_step != 1:
            raise UnsupportedError(f"kernel {c.kernel}: accumulated row {s.op}s into {dst.buf} must be one "
                                   f"element apart (stride {dst.stride}); use a dense column")
        dst = Region(WORK, Const(at), rows, Const(1), Const(1))
        at += -(-rcap // pb) * pb
    pitch = c.pitch(cur, pb)
    if pitch is not None and rcap <= MAX_REPEAT and dst_step is not None:
        out.append(VecCall(api, op, dt, dst, (cur,), "repeat", mask=n, repeats=rows, params=(dst_step, 1, pitch),
                           comment=f"{s.op} of every row: one result per row"))
    else:
        out.append(Loop(c.row.name, Const(0), rows, Const(1), (
            VecCall(api, op, dt, _at(dst, E.add(dst.offset, E.mul(c.row, dst.stride))),
                    (_at(cur, E.add(cur.offset, E.mul(c.row, cur.stride)), n),), "repeat", mask=n,
                    repeats=Const(1), params=(1, 1, 8)),), comment=f"{s.op} of each row"))
    if s.accumulate:
        comb = _combine(s.op)
        out.append(VecCall(comb.api, comb.cost, c.buf(s.dst).dtype, s.dst, (s.dst, dst), "count", count=rows,
                           comment=f"row {s.op}s += this chunk's"))
    return Expansion(tuple(out), at, dt)


def _fold_plan(s: Reduce, c: _Ctx, dt: str, rcap: int) -> tuple[int, int, int, int] | None:
    """(elements per repeat, row pitch in blocks, whole groups, tail) when `_fold` folds, else None."""
    per, pb = repeat_elems(dt), block_elems(dt)
    n = static_value(s.src.cols, c.tiling)
    pitch = c.pitch(s.src, pb)
    if n is None or n <= per or pitch is None or rcap > MAX_REPEAT:
        return None
    whole, tail = divmod(n, per)
    calls = (whole - 1 if whole > 1 else 2) + (tail > 0)
    if calls > rcap * (1 + (tail > 0)):
        return None
    return per, pitch, whole, tail


def _reduce_work(s: Reduce, c: _Ctx) -> int:
    """The scratch elements `_reduce` uses (its sizing without the calls); 0 where it refuses."""
    sb = c.buf(s.src)
    isz = itemsize(sb.dtype)
    per, pb = repeat_elems(sb.dtype), block_elems(sb.dtype)
    if s.op not in REDUCTIONS or not c.aligned(s.src, isz):
        return 0
    rcap, ncap, at = c.cap(s.src.rows, sb.rows), c.cap(s.src.cols, sb.cols), 0
    if _fold_plan(s, c, sb.dtype, rcap) is not None:
        at, ncap = rcap * per, per
    while ncap > per:
        kcap = -(-ncap // per)
        at += rcap * (-(-kcap // pb) * pb)
        ncap = kcap
    if s.accumulate:
        dst_step = static_value(s.dst.stride, c.tiling) if s.dst.rows != Const(1) else 1
        if dst_step != 1:
            return 0
        at += -(-rcap // pb) * pb
    return at


def _fold(s: Reduce, c: _Ctx, dt: str, rcap: int) -> tuple[list[Stmt], Region, Expr, int] | None:
    """A static row length of several repeats folded column group by column group into one repeat per
    row (Add / Max over every row at once: R repeats, repeat strides = row pitches), when that makes
    fewer calls than one per row; (calls, the folded rows, their length, scratch used) or None."""
    plan = _fold_plan(s, c, dt, rcap)
    if plan is None:
        return None
    per, pitch, whole, tail = plan
    comb = _combine(s.op)
    api, cost = comb.api, comb.cost
    rows = s.src.rows
    acc = Region(WORK, Const(0), rows, Const(per), Const(per))

    def group(j: int) -> Region:
        return _at(s.src, E.add(s.src.offset, Const(j * per)))

    def op(a: Region, b: Region, mask: int, note: str) -> VecCall:
        rep = 8 if a.buf == WORK else pitch
        return VecCall(api, cost, dt, acc, (a, b), "repeat", mask=Const(mask), repeats=rows,
                       params=(1, 1, 1, 8, rep, pitch), comment=note)

    out: list[Stmt] = []
    if whole > 1:
        out.append(op(group(0), group(1), per, "fold column groups 0 and 1 of every row"))
        out += [op(acc, group(j), per, f"fold column group {j} of every row") for j in range(2, whole)]
    else:
        first = OPS["copy"].call  # Adds(x, 0)
        out.append(VecCall(first.api, first.cost, dt, acc, (group(0),), "repeat", mask=Const(per), repeats=rows,
                           params=(1, 1, 8, pitch), scalar=0.0, comment="column group 0 of every row"))
    if tail:
        out.append(op(acc, group(whole), tail, "fold the tail group of every row"))
    return out, acc, Const(per), rcap * per


# ---- broadcast of per-row values -----------------------------------------------------------------
def _brcb(b: Region, k: str, rows: Expr, dt: str) -> VecCall:
    reps = Const(1) if k == "scalar" else ceil_div(rows, 8)
    return VecCall("Brcb", "brcb", dt, Region(WORK, Const(0), rows, Const(1), Const(1)), (b,), "repeat",
                   mask=Const(repeat_elems(dt)), repeats=reps, params=(1, 8),
                   comment="each row's value to one 32-byte block")


def _broadcast_plan(s: VecOp, c: _Ctx) -> tuple[int, list[str], str, str, int] | None:
    """Whether a broadcast op is written with Brcb: (the spread operand, every operand's kind, API, cost
    op, scratch elements), or None when the count-form code writes it."""
    db = c.buf(s.dst)
    dt = db.dtype
    isz = itemsize(dt)
    kinds = [kind(r, s.dst) for r in s.srcs]
    spread = [i for i, k in enumerate(kinds) if k in ("col", "scalar")]
    if len(spread) != 1 or any(c.buf(r).dtype != dt for r in s.srcs) or s.dst.gm:
        return None
    (bi,) = spread
    b = s.srcs[bi]
    if kinds[bi] == "col" and b.stride != Const(1):  # Brcb reads the row values one element apart
        return None
    if not c.aligned(_at(b, b.offset), isz) or not c.aligned(s.dst, isz):
        return None
    if any(not c.aligned(r, isz) for i, r in enumerate(s.srcs) if i != bi):
        return None
    if s.op in BINARY_API:
        api, cost = BINARY_API[s.op], OPS[s.op].cost
    elif _form(s.op) in ("copy", "cast"):  # a same-dtype cast is a copy: Adds(x, 0)
        api, cost = OPS["copy"].call.api, OPS["copy"].call.cost
    else:
        return None
    rcap = c.cap(s.dst.rows, db.rows)
    return bi, kinds, api, cost, -(-rcap // 8) * 8 * block_elems(dt)


def _broadcast(s: VecOp, c: _Ctx) -> Expansion | None:
    """Binary op (or copy) with one per-row / scalar operand: Brcb, then the op in its repeat form."""
    plan = _broadcast_plan(s, c)
    if plan is None:
        return None
    bi, kinds, api, cost, work = plan
    db = c.buf(s.dst)
    dt = db.dtype
    per, pb = repeat_elems(dt), block_elems(dt)
    b = s.srcs[bi]
    rows, cols = s.dst.rows, s.dst.cols
    rcap, ccap = c.cap(rows, db.rows), c.cap(cols, db.cols)
    brcb = _brcb(b, kinds[bi], rows, dt)
    blk_rep = 0 if kinds[bi] == "scalar" else 1  # next row's block
    scalar = OPS["copy"].fixed_scalar if api in SCALAR_REPEAT_APIS else None
    operands = [r for i, r in enumerate(s.srcs) if i != bi]
    calls: list[Stmt] = [brcb]
    pitches = [c.pitch(s.dst, pb)] + [None if kind(r, s.dst) == "row" else c.pitch(r, pb) for r in operands]
    if ccap <= per and rcap <= MAX_REPEAT and all(p is not None for p in pitches[:1]) and all(
            p is not None or kind(r, s.dst) == "row" for p, r in zip(pitches[1:], operands, strict=True)):
        strides: list[tuple[int, int]] = []
        srcs: list[Region] = []
        for i, r in enumerate(s.srcs):
            if i == bi:
                srcs.append(Region(WORK, Const(0), rows, Const(1), Const(1)))
                strides.append((0, blk_rep))
            else:
                srcs.append(r)
                strides.append((1, 0 if kind(r, s.dst) == "row" else c.pitch(r, pb) or 0))
        calls.append(VecCall(api, cost, dt, s.dst, tuple(srcs), "repeat", mask=cols, repeats=rows,
                             params=_params(api, (1, pitches[0] or 0), strides), scalar=scalar,
                             comment="every row in one call: one repeat per row"))
        return Expansion(tuple(calls), work, dt)
    if -(-ccap // per) <= rcap * (1 + (ccap % per > 0)):  # fewer column groups than per-row calls
        grouped = _groups(s, c, bi, blk_rep, api, cost, scalar)
        if grouped is not None:
            return Expansion((brcb, *grouped), work, dt)
    row = c.row
    whole, tail = E.div(cols, per), E.mod(cols, per)

    def call(first: Expr, mask: Expr, repeats: Expr, note: str) -> VecCall:
        srcs, strides = [], []
        for i, r in enumerate(s.srcs):
            if i == bi:
                srcs.append(Region(WORK, E.mul(row, pb * blk_rep), Const(1), Const(1), Const(1)))
                strides.append((0, 0))
            else:
                base = r.offset if kind(r, s.dst) == "row" else E.add(r.offset, E.mul(row, r.stride))
                srcs.append(_at(r, E.add(base, first)))
                strides.append((1, 8))
        dst = _at(s.dst, E.add(E.add(s.dst.offset, E.mul(row, s.dst.stride)), first))
        return VecCall(api, cost, dt, dst, tuple(srcs), "repeat", mask=mask, repeats=repeats,
                       params=_params(api, (1, 8), strides), scalar=scalar, comment=note)

    body = (*(call(Const(first * per), Const(per), reps, "the row's whole repeats")
              for first, reps in _pieces(whole, ccap // per)),
            *_maybe(tail, (call(E.mul(whole, per), tail, Const(1), "the row's tail"),), "a partial repeat"))
    calls.append(Loop(row.name, Const(0), rows, Const(1), body, comment="each row against its block"))
    return Expansion(tuple(calls), work, dt)


def _params(api: str, dst: tuple[int, int], srcs: list[tuple[int, int]]) -> tuple[int, ...]:
    """BinaryRepeatParams(dstBlk, src0Blk, src1Blk, dstRep, src0Rep, src1Rep) or
    UnaryRepeatParams(dstBlk, srcBlk, dstRep, srcRep)."""
    if api in SCALAR_REPEAT_APIS:
        ((sblk, srep),) = srcs
        return (dst[0], sblk, dst[1], srep)
    (b0, r0), (b1, r1) = srcs
    return (dst[0], b0, b1, dst[1], r0, r1)


# ---- row-looped binary ops: column groups in the repeat form -------------------------------------
def _groups(s: VecOp, c: _Ctx, spread: int = -1, blk_rep: int = 1, api: str = "", cost: str = "",
            scalar: float | None = None) -> list[Stmt] | None:
    """An op over rows that are not contiguous (or with a one-row operand): one repeat-form call per
    256-byte column group covering every row (R repeats, repeat strides = row pitches, 0 for a one-row
    operand), and one for the tail group; None when a pitch or the rows do not fit the form. Source
    `spread` is the Brcb blocks in the scratch (block stride 0, `blk_rep` blocks from row to row)."""
    db = c.buf(s.dst)
    dt = db.dtype
    isz = itemsize(dt)
    per, pb = repeat_elems(dt), block_elems(dt)
    if any(c.buf(r).dtype != dt for r in s.srcs) or c.cap(s.dst.rows, db.rows) > MAX_REPEAT:
        return None
    strides = [(1, c.pitch(s.dst, pb))]
    for i, r in enumerate(s.srcs):
        strides.append((0, blk_rep) if i == spread else (1, 0 if kind(r, s.dst) == "row" else c.pitch(r, pb)))
    if any(p is None for _, p in strides) or not all(
            c.aligned(r, isz) for i, r in enumerate((s.dst, *s.srcs)) if i != spread + 1):
        return None
    cols, rows = s.dst.cols, s.dst.rows
    whole, tail = E.div(cols, per), E.mod(cols, per)
    g = Var(f"{c.row.name}_col")
    api, cost = api or BINARY_API[s.op], cost or OPS[s.op].cost
    params = _params(api, strides[0], strides[1:])  # type: ignore[arg-type]
    work = Region(WORK, Const(0), rows, Const(1), Const(1))

    def call(first: Expr, mask: Expr) -> VecCall:
        srcs = tuple(work if i == spread else _at(r, E.add(r.offset, first)) for i, r in enumerate(s.srcs))
        return VecCall(api, cost, dt, _at(s.dst, E.add(s.dst.offset, first)), srcs, "repeat", mask=mask,
                       repeats=rows, params=params, scalar=scalar, comment="one 256-byte column group of every row")

    out: list[Stmt] = []
    if isinstance(whole, Const) and whole.value <= 4:
        out += [call(Const(i * per), Const(per)) for i in range(whole.value)]
    else:
        out.append(Loop(g.name, Const(0), whole, Const(1), (call(E.mul(g, per), Const(per)),),
                        comment="256-byte column groups"))
    out += _maybe(tail, (call(E.mul(whole, per), tail),), "a partial column group")
    return out


# ---- row-looped count forms ----------------------------------------------------------------------
def _counted(s: VecOp, c: _Ctx) -> Expansion | None:
    row = OPS.get(s.op)
    parts = row.count_calls if row is not None else ()
    if not parts:
        return None
    if row.form == "select":  # CompareScalar, then Select
        if any(kind(r, s.dst) in ("col", "scalar") for r in s.srcs):
            return None
    elif not looped(s.dst, s.srcs):
        return None
    dt = c.buf(s.dst).dtype
    src_dt = c.buf(s.srcs[0]).dtype if row.form == "cast" and s.srcs else dt
    many = looped(s.dst, s.srcs)

    def calls(n: Expr) -> tuple[Stmt, ...]:
        return tuple(VecCall(api, op, src_dt, s.dst, s.srcs, "count", count=n, scalar=s.scalar, dst_dtype=dt)
                     for api, op in parts)

    if not many:
        return Expansion(calls(E.mul(s.dst.rows, s.dst.cols)), 0, dt)
    per_row = Loop(c.row.name, Const(0), s.dst.rows, Const(1), calls(s.dst.cols), comment="one call per row")
    dense = dense_when(s.dst, s.srcs, c.tiling)
    if dense is None:
        return Expansion((per_row,), 0, dt)
    return Expansion((If(dense, calls(E.mul(s.dst.rows, s.dst.cols)), comment="whole rows: one run"),
                      If(E.sub(1, dense), (per_row,), comment="a column tail")), 0, dt)


def dense_when(dst: Region, srcs: tuple[Region, ...], tiling: Mapping[str, int]) -> Expr | None:
    """When a row-looped op's rows are one run after all: every operand a full tile with dst's row
    stride, a static stride and a row length known only at run time (a column tail). The condition is
    nonzero exactly when the row length equals the stride (it never exceeds it); None when not so."""
    if dst.rows == Const(1) or static_value(dst.stride, tiling) is None or static_value(dst.cols, tiling) is not None:
        return None
    if any(kind(r, dst) != "full" or r.stride != dst.stride or r.cols != dst.cols for r in srcs):
        return None
    return E.sub(1, E.min(1, E.sub(dst.stride, dst.cols)))


def _spread(s: VecOp, c: _Ctx) -> str:
    """How `expand` writes an op with a per-row or per-tile operand: "brcb" (Brcb, then the op's repeat
    form), "none" (a cast between dtypes: one call that reads the scalars), or "" (no such operand)."""
    form = _form(s.op)
    if form in ("copy", "cast") and s.srcs and kind(s.srcs[0], s.dst) in ("col", "scalar"):
        return "none" if form == "cast" and c.buf(s.srcs[0]).dtype != c.buf(s.dst).dtype else "brcb"
    if s.op in BINARY_API and any(kind(r, s.dst) in ("col", "scalar") for r in s.srcs):
        return "brcb"
    return ""


def expand(s: Stmt, buffers: Mapping[str, Buffer], tiling: Mapping[str, int], *, row: str = "row",
           kernel: str = "") -> Expansion | None:
    """The calls `s` issues (see module doc), or None when it is one contiguous count-form call."""
    c = _Ctx(buffers, tiling, row, kernel)
    if isinstance(s, Reduce):
        return _reduce(s, c)
    if isinstance(s, Copy):
        if s.src.gm or s.dst.gm or s.src.buf not in buffers or s.dst.buf not in buffers:
            return None
        s = VecOp("copy", s.dst, (s.src,))
    if not isinstance(s, VecOp) or s.dst.gm or any(r.gm for r in s.srcs):
        return None
    case = _spread(s, c)
    if case:
        return _broadcast(s, c) if case == "brcb" else None
    if s.op in BINARY_API and looped(s.dst, s.srcs):
        grouped = _groups(s, c)
        if grouped is not None:
            return Expansion(tuple(grouped), 0, c.buf(s.dst).dtype)
    if s.op in SCALAR_API and len(s.srcs) == 1 and looped(s.dst, s.srcs):
        api, cost, fixed = SCALAR_API[s.op]
        grouped = _groups(s, c, api=api, cost=cost, scalar=fixed if fixed is not None else s.scalar)
        if grouped is not None:
            return Expansion(tuple(grouped), 0, c.buf(s.dst).dtype)
    return _counted(s, c)


# One kernel's expansions are asked for by the capacity check (scratch.py), the code generator and the
# simulator: each instruction is expanded once (per kernel, then per instruction, kept alive with its answer)
_MEMO = KernelMemo()


def calls_of(k, s: Stmt) -> Expansion | None:
    """`expand(s, ...)` for an instruction of kernel `k`, computed once per (kernel, instruction). An
    UnsupportedError is raised again on each ask."""
    table: dict[int, tuple[Stmt, object]] = _MEMO.get((k.buffers, k.tiling), dict)
    seen = table.get(id(s))
    if seen is None or seen[0] is not s:
        try:
            ans: object = expand(s, {b.name: b for b in k.buffers}, dict(k.tiling), kernel=k.name)
        except UnsupportedError as e:
            ans = e
        seen = table[id(s)] = (s, ans)
    if isinstance(seen[1], UnsupportedError):
        raise seen[1].with_traceback(None)
    return seen[1]  # type: ignore[return-value]


def work_of(k, s: Stmt) -> tuple[int, str]:
    """(elements, dtype) of reduce scratch instruction `s` of kernel `k` uses: what `calls_of(k, s).work`
    says, without writing the calls of a broadcast (the capacity probes of the auto-schedule ask this
    of kernels they then drop). An instruction the code generator refuses uses none."""
    if not isinstance(s, (VecOp, Reduce)):
        return 0, ""
    c = _Ctx({b.name: b for b in k.buffers}, dict(k.tiling), "row", k.name)
    if isinstance(s, VecOp):
        if s.dst.gm or any(r.gm for r in s.srcs) or _spread(s, c) != "brcb":
            return 0, ""
        plan = _broadcast_plan(s, c)
        return (0, "") if plan is None else (plan[4], c.buf(s.dst).dtype)
    if isinstance(s, Reduce):
        work = _reduce_work(s, c)
        return (work, c.buf(s.src).dtype) if work else (0, "")
    return 0, ""
