"""Emit rules for the vector-core (AIV) statements: queue operations, GM<->UB copies, vector ops and
row reductions. One small emitter per TileIR node type, vector ops dispatched through a table.

Shapes. Ascend C's count-based vector calls work on contiguous runs. What is not one contiguous
call is written from the list of calls `lower/vec_calls.py` makes (the list the simulator prices):
row reductions as WholeReduceSum / WholeReduceMax levels, a one-column (per-row) or 1x1 source
spread by `Brcb` into 32-byte blocks and applied by the op's repeat form with a block stride of 0,
and binary / scalar ops over rows that are not contiguous (stride != cols, e.g. a column tail of a
padded tile) or with a one-row source (`Add(dst, x, bias, mask, rows, {..., src1RepStride 0})`) as
one repeat-form call per 256-byte column group of every row. Other ops over such rows are a loop of
one count-form call per row. Only what that list leaves out still reads a per-row value with
`GetValue` after a `V_S` event (a cast of a broadcast column to another dtype, a broadcast column
with rows not one element apart).

Copies. GM<->UB moves use `DataCopy` when every row is whole 32-byte blocks (provably, for all
loop values), else `DataCopyPad` with `DataCopyExtParams` (byte lengths, GM gaps in bytes, UB gaps
in 32-byte blocks), which is how tails are moved.

select (ks.where), transpose and TopK, and the events around scalar reads of UB, are in layout.py,
which adds its rules to the tables here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.dtypes import BLOCK_BYTES, block_elems, itemsize
from ..core.errors import UnsupportedError
from ..tileir.expr import Bin, Const, E, Expr, Var, ceil_div
from ..tileir.program import (
    Alloc,
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    If,
    Loop,
    Reduce,
    Region,
    SetFlag,
    SyncAll,
    VecCall,
    VecOp,
    WaitFlag,
    walk,
)
from ..tileir.vec_calls import WORK, Expansion, calls_of, contiguous, dense_when, kind, looped
from ..tileir.vector_ops import OPS, REDUCE_APIS, SCALAR_REPEAT_APIS
from .scope import Scope, declare
from .writer import Writer, c_float, ctype

__all__ = ["Method", "emit_instr", "VEC_RULES"]

BLOCK = BLOCK_BYTES  # bytes per data block (DEFAULT_C0_SIZE)


@dataclass
class Method:
    """The method being written: its writer, the LocalTensors it declared and fresh-name state."""

    scope: Scope
    w: Writer
    declared: set[str] = field(default_factory=set)
    taken: set[str] = field(default_factory=set)
    flags: dict[tuple, str] = field(default_factory=dict)  # set_flag waiting for its wait_flag: event var

    def __post_init__(self) -> None:
        self.taken |= self.scope.local_tensor_names()

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}{k}"
        self.taken.add(name)
        return name

    def sync(self, event: str) -> None:
        """Order the scalar unit after the vector pipe (V_S) or the other way (S_V)."""
        ev = self.fresh("eventId")
        self.w(f"auto {ev} = pipe.FetchEventID(AscendC::HardEvent::{event});",
               f"AscendC::SetFlag<AscendC::HardEvent::{event}>({ev});",
               f"AscendC::WaitFlag<AscendC::HardEvent::{event}>({ev});")


# ---- queue operations and cross-core flags ------------------------------------------------------
def _alloc(s: Alloc, m: Method) -> None:
    t = ctype(m.scope.buffer(s.buf).dtype)
    m.w(f"{declare(m.w, m.scope, s.buf, m.declared)} = {m.scope.que_name(s.buf)}.AllocTensor<{t}>();")


def _deque(s: DeQue, m: Method) -> None:
    t = ctype(m.scope.buffer(s.buf).dtype)
    m.w(f"{declare(m.w, m.scope, s.buf, m.declared)} = {m.scope.que_name(s.buf)}.DeQue<{t}>();")


def _enque(s: EnQue, m: Method) -> None:
    m.w(f"{m.scope.que_name(s.buf)}.EnQue({m.scope.tensor_name(s.buf)});")


def _free(s: Free, m: Method) -> None:
    m.w(f"{m.scope.que_name(s.buf)}.FreeTensor({m.scope.tensor_name(s.buf)});")


def _cross_set(s: CrossSet, m: Method) -> None:
    m.w(f"AscendC::CrossCoreSetFlag<0x2, PIPE_{s.pipe.value}>({s.flag});")


def _cross_wait(s: CrossWait, m: Method) -> None:
    m.w(f"AscendC::CrossCoreWaitFlag({s.flag});")


def _sync_all(s: SyncAll, m: Method) -> None:
    if m.scope.kernel.kernel_type == "AIV_ONLY":  # every AIV of the launch (the default isAIVOnly = true)
        m.w("AscendC::SyncAll();  // every vector core of the launch (a custom-operator project with a workspace)")
        return
    m.w("AscendC::SyncAll<false>();  // hard sync of every AIC and AIV (a custom-operator project with a workspace)")


# ---- copies ------------------------------------------------------------------------------------
def _copy(s: Copy, m: Method) -> None:
    sc = m.scope
    if s.src.gm and sc.is_ub(s.dst):
        _copy_gm_ub(s, m, inbound=True)
    elif s.dst.gm and sc.is_ub(s.src):
        _copy_gm_ub(s, m, inbound=False)
    elif sc.is_ub(s.src) and sc.is_ub(s.dst):
        _vecop(VecOp("copy", s.dst, (s.src,)), m)
    else:
        raise UnsupportedError(f"kernel {sc.kernel.name}: the vector core cannot copy {s.src} -> {s.dst}")


def _whole_blocks(m: Method, r: Region, isz: int) -> bool:
    return m.scope.multiple(E.mul(r.cols, isz), BLOCK) and (
        r.rows == Const(1) or m.scope.multiple(E.mul(r.stride, isz), BLOCK))


def _copy_gm_ub(s: Copy, m: Method, inbound: bool) -> None:
    sc, w = m.scope, m.w
    gm, ub = (s.src, s.dst) if inbound else (s.dst, s.src)
    isz, t = sc.itemsize(ub), sc.ctype(ub)
    dst, src = sc.at(s.dst), sc.at(s.src)
    contiguous = s.dst.rows == Const(1) or (gm.stride == gm.cols and ub.stride == ub.cols)
    if _whole_blocks(m, gm, isz) and _whole_blocks(m, ub, isz):
        if contiguous:
            w(f"AscendC::DataCopy({dst}, {src}, {sc.expr(E.mul(gm.rows, gm.cols))});")
            return
        gap_gm = sc.expr(E.div(E.mul(E.sub(gm.stride, gm.cols), isz), BLOCK))
        gap_ub = sc.expr(E.div(E.mul(E.sub(ub.stride, ub.cols), isz), BLOCK))
        src_gap, dst_gap = (gap_gm, gap_ub) if inbound else (gap_ub, gap_gm)
        p = m.fresh("copyParams")
        w(f"AscendC::DataCopyParams {p}{{static_cast<uint16_t>({sc.expr(gm.rows)}), "
          f"static_cast<uint16_t>({sc.expr(E.div(E.mul(gm.cols, isz), BLOCK))}), "
          f"static_cast<uint16_t>({src_gap}), static_cast<uint16_t>({dst_gap})}};",
          f"AscendC::DataCopy({dst}, {src}, {p});")
        return
    if contiguous and ub.rows != Const(1):  # one dense run, e.g. a [rows, 1] column
        n = E.mul(gm.rows, gm.cols)
        gm = Region(gm.buf, gm.offset, Const(1), n, n, gm.gm)
        ub = Region(ub.buf, ub.offset, Const(1), n, n, ub.gm)
    if not sc.multiple(E.mul(ub.stride, isz), BLOCK) and ub.rows != Const(1):
        raise UnsupportedError(f"kernel {sc.kernel.name}: UB rows of {ub.buf} are {ub.stride} elements apart, "
                               "not whole 32-byte blocks; pad the buffer columns")
    per_block = block_elems(sc.dtype(ub))
    row_bytes = sc.expr(E.mul(gm.cols, isz))
    gm_gap = sc.expr(E.mul(E.sub(gm.stride, gm.cols), isz))
    ub_gap = sc.expr(E.div(E.sub(ub.stride, E.mul(ceil_div(ub.cols, per_block), per_block)), per_block))
    if ub.rows == Const(1):
        ub_gap = "0"
    src_gap, dst_gap = (gm_gap, ub_gap) if inbound else (ub_gap, gm_gap)
    p = m.fresh("copyParams")
    w(f"AscendC::DataCopyExtParams {p}{{static_cast<uint16_t>({sc.expr(gm.rows)}), "
      f"static_cast<uint32_t>({row_bytes}), static_cast<uint32_t>({src_gap}), "
      f"static_cast<uint32_t>({dst_gap}), 0}};")
    if inbound:
        pad = m.fresh("padParams")
        w(f"AscendC::DataCopyPadExtParams<{t}> {pad}{{false, 0, 0, 0}};",
          f"AscendC::DataCopyPad({dst}, {src}, {p}, {pad});")
    else:
        w(f"AscendC::DataCopyPad({dst}, {src}, {p});")


# ---- vector ops: one rule per form of tileir/vector_ops.py, the API from the op's row -------------
_kind = kind  # shared with the simulator (lower/vec_calls.py)
_contiguous = contiguous


class _Rows:
    """Writes the body once for the whole region, or once per row in a loop when rows are strided."""

    def __init__(self, m: Method, dst: Region, srcs: tuple[Region, ...]):
        self.m, self.dst, self.srcs = m, dst, srcs
        self.looped = looped(dst, srcs)
        self.row = m.fresh("row") if self.looped else ""

    def __enter__(self) -> _Rows:
        if self.looped:
            sc = self.m.scope
            self._blk = self.m.w.block(f"for (int32_t {self.row} = 0; {self.row} < {sc.expr(self.dst.rows)}; "
                                       f"++{self.row})")
            self._blk.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.looped:
            self._blk.__exit__(None, None, None)

    @property
    def count(self) -> str:
        d = self.dst
        return self.m.scope.expr(d.cols if self.looped else E.mul(d.rows, d.cols))

    def operand(self, r: Region) -> str:
        """The LocalTensor expression for this row (or the whole region)."""
        kind = _kind(r, self.dst)
        if not self.looped or kind in ("row", "scalar"):
            return self.m.scope.at(r)
        return self.m.scope.at(r, E.mul(Var(self.row), r.stride))

    def scalar(self, r: Region) -> str:
        """A local holding this row's value of a one-column source (read on the scalar unit)."""
        sc = self.m.scope
        extra = Const(0) if _kind(r, self.dst) == "scalar" else E.mul(Var(self.row), r.stride)
        name = self.m.fresh("scalar")
        t = ctype(sc.dtype(self.dst))
        self.m.w(f"const {t} {name} = {sc.tensor_name(r.buf)}.GetValue({sc.expr(E.add(r.offset, extra))});")
        return name


def _needs_scalar_sync(srcs: tuple[Region, ...], dst: Region) -> bool:
    return any(_kind(s, dst) in ("col", "scalar") for s in srcs)


def _vec_binary(op: str, s: VecOp, m: Method) -> None:
    row = OPS[op]
    a, b = s.srcs
    ka, kb = _kind(a, s.dst), _kind(b, s.dst)
    if ka in ("col", "scalar") and kb in ("col", "scalar"):
        raise UnsupportedError(f"kernel {m.scope.kernel.name}: {op} of two broadcast scalars into a tile")
    if _needs_scalar_sync(s.srcs, s.dst):
        m.sync("V_S")
    t = ctype(m.scope.dtype(s.dst))
    with _Rows(m, s.dst, s.srcs) as rows:
        dst, n = rows.operand(s.dst), rows.count
        with_scalar = OPS[row.scalar_form].api if row.scalar_form else ""
        if kb in ("col", "scalar"):
            v, full = rows.scalar(b), rows.operand(a)
            if with_scalar:
                m.w(f"AscendC::{with_scalar}({dst}, {full}, {v}, {n});")
            elif op == "sub":
                m.w(f"AscendC::Adds({dst}, {full}, static_cast<{t}>(-{v}), {n});")
            else:  # div by a per-row value: multiply by its reciprocal
                m.w(f"AscendC::Muls({dst}, {full}, static_cast<{t}>(1.0f / static_cast<float>({v})), {n});")
        elif ka in ("col", "scalar"):
            v, full = rows.scalar(a), rows.operand(b)
            if with_scalar:  # commutative
                m.w(f"AscendC::{with_scalar}({dst}, {full}, {v}, {n});")
            elif op == "sub":  # v - x = (-x) + v
                m.w(f"AscendC::Muls({dst}, {full}, static_cast<{t}>(-1.0f), {n});",
                    f"AscendC::Adds({dst}, {dst}, {v}, {n});")
            else:  # v / x = v * (1 / x)
                m.w(f"AscendC::Reciprocal({dst}, {full}, {n});", f"AscendC::Muls({dst}, {dst}, {v}, {n});")
        else:
            m.w(f"AscendC::{row.api}({dst}, {rows.operand(a)}, {rows.operand(b)}, {n});")


def _scalar_literal(op: str, s: VecOp, m: Method) -> str:
    if s.scalar is None:
        raise UnsupportedError(f"kernel {m.scope.kernel.name}: {op} needs a scalar")
    return c_float(s.scalar, m.scope.dtype(s.dst))


def _vec_with_scalar(op: str, s: VecOp, m: Method) -> None:
    lit, api = _scalar_literal(op, s, m), OPS[op].api
    _unary_like(m, s, lambda d, x, n: f"AscendC::{api}({d}, {x}, {lit}, {n});")


def _vec_fill(op: str, s: VecOp, m: Method) -> None:
    lit, api = _scalar_literal(op, s, m), OPS[op].api
    with _Rows(m, s.dst, ()) as rows:
        m.w(f"AscendC::{api}({rows.operand(s.dst)}, {lit}, {rows.count});")


def _unary_like(m: Method, s: VecOp, call: Callable[[str, str, str], str]) -> None:
    (src,) = s.srcs
    kind = _kind(src, s.dst)
    if kind in ("col", "scalar"):
        raise UnsupportedError(f"kernel {m.scope.kernel.name}: {s.op} of a broadcast column; only copy and "
                               "cast can broadcast a per-row value")
    with _Rows(m, s.dst, s.srcs) as rows:
        m.w(call(rows.operand(s.dst), rows.operand(src), rows.count))


def _vec_unary(op: str, s: VecOp, m: Method) -> None:
    call = OPS[op].call
    if call.form == "binary":  # square: Mul(x, x)
        _unary_like(m, s, lambda d, x, n: f"AscendC::{call.api}({d}, {x}, {x}, {n});")
    elif call.form == "scalar":  # neg: Muls(x, -1)
        t = ctype(m.scope.dtype(s.dst))
        lit = f"static_cast<{t}>({c_float(OPS[op].fixed_scalar or 0.0, 'float32')})"
        _unary_like(m, s, lambda d, x, n: f"AscendC::{call.api}({d}, {x}, {lit}, {n});")
    else:
        _unary_like(m, s, lambda d, x, n: f"AscendC::{call.api}({d}, {x}, {n});")


def _vec_convert(op: str, s: VecOp, m: Method) -> None:
    """Forms "copy" and "cast": a broadcast value spread with Duplicate, else the op's API (a whole-block
    contiguous copy as a DataCopy)."""
    sc = m.scope
    row = OPS[op]
    (src,) = s.srcs
    if _kind(src, s.dst) in ("col", "scalar"):
        m.sync("V_S")
        t = ctype(sc.dtype(s.dst))
        fill = OPS["duplicate"].api
        with _Rows(m, s.dst, s.srcs) as rows:
            v = rows.scalar(src)
            m.w(f"AscendC::{fill}({rows.operand(s.dst)}, static_cast<{t}>({v}), {rows.count});")
    elif row.form == "copy":
        isz = sc.itemsize(s.dst)
        whole = sc.multiple(E.mul(E.mul(s.dst.rows, s.dst.cols), isz), BLOCK)
        if _kind(src, s.dst) == "full" and _contiguous(s.dst) and _contiguous(src) and whole:
            m.w(f"AscendC::DataCopy({sc.at(s.dst)}, {sc.at(src)}, {sc.expr(E.mul(s.dst.rows, s.dst.cols))});")
        else:
            zero, api = c_float(row.fixed_scalar or 0.0, sc.dtype(s.dst)), row.call.api
            _unary_like(m, s, lambda d, x, n: f"AscendC::{api}({d}, {x}, {zero}, {n});")
    else:
        mode = "CAST_RINT" if row.name == "cast_rint" else _round_mode(sc.dtype(src), sc.dtype(s.dst))
        _unary_like(m, s, lambda d, x, n: f"AscendC::{row.api}({d}, {x}, AscendC::RoundMode::{mode}, {n});")


def _round_mode(src: str, dst: str) -> str:
    """CAST_RINT (nearest even) when precision is lost, CAST_TRUNC float->int, else CAST_NONE."""
    if dst in ("int8", "int32") and src not in ("int8", "int32"):
        return "CAST_TRUNC"
    if src in ("int8", "int32") and dst not in ("int8", "int32"):
        return "CAST_NONE" if itemsize(dst) >= itemsize(src) else "CAST_RINT"
    if itemsize(dst) < itemsize(src) or {src, dst} == {"float16", "bfloat16"}:
        return "CAST_RINT"
    return "CAST_NONE"


# form of the op (tileir/vector_ops.py) -> its rule
VEC_RULES: dict[str, Callable[[str, VecOp, Method], None]] = {
    "binary": _vec_binary, "scalar": _vec_with_scalar, "fill": _vec_fill, "unary": _vec_unary,
    "copy": _vec_convert, "cast": _vec_convert,
}  # select and transpose: added by layout.py


def _vecop(s: VecOp, m: Method) -> None:
    exp = expansion(s, m)
    if exp is not None:  # a per-row operand: Brcb and repeat forms, no scalar reads
        render(exp, m)
        return
    try:
        rule = VEC_RULES[OPS[s.op].form]
    except KeyError:
        raise UnsupportedError(f"kernel {m.scope.kernel.name}: vector op {s.op!r} has no Ascend C rule") from None
    dense = dense_when(s.dst, s.srcs, m.scope.static_env) if looped(s.dst, s.srcs) else None
    if dense is None:
        rule(s.op, s, m)
        return
    # rows loop only for a column tail: one call over every row when the row length is the stride
    sc = m.scope
    with m.w.block(f"if ({sc.expr(s.dst.cols)} == {sc.expr(s.dst.stride)})"):
        run = lambda r: Region(r.buf, r.offset, r.rows, r.cols, r.cols, r.gm)  # noqa: E731
        rule(s.op, VecOp(s.op, run(s.dst), tuple(run(r) for r in s.srcs), s.scalar, s.comment), m)
    with m.w.block("else"):
        rule(s.op, s, m)


# ---- row reductions and broadcasts: the calls lower/vec_calls.py lists ------------------------------
def expansion(s: object, m: Method) -> Expansion | None:
    """The calls `s` issues when they are written from the shared list (a reduction, or an op with a
    per-row operand spread by Brcb); None when the count-form emitters below write it."""
    sc = m.scope
    exp = calls_of(sc.kernel, s)
    if exp is None or not any(isinstance(c, VecCall) and c.form == "repeat" for c in walk(exp.stmts)):
        return None
    return exp


def _reduce(s: Reduce, m: Method) -> None:
    """A row reduction as WholeReduceSum / WholeReduceMax levels (see lower/vec_calls.py)."""
    exp = calls_of(m.scope.kernel, s)
    assert exp is not None  # a Reduce always expands
    render(exp, m)


def render(exp: Expansion, m: Method) -> None:
    """Write the calls of an expansion: loops over rows, ifs for tails, one line per call."""
    sc = m.scope
    work = ""
    if exp.work:
        sc.need_work(exp.dtype, exp.work)
        t = ctype(exp.dtype)
        work = m.fresh("workLocal")
        m.w(f"AscendC::LocalTensor<{t}> {work} = workBuf.Get<{t}>();")
    names: dict[str, str] = {}
    _render(exp.stmts, m, work, names)


def _render(stmts: tuple, m: Method, work: str, names: dict[str, str]) -> None:
    w = m.w
    for st in stmts:
        if isinstance(st, Loop):
            if st.var not in names:
                names[st.var] = m.fresh(st.var)
            v = names[st.var]
            with w.block(f"for (int32_t {v} = {_x(st.start, m, names)}; {v} < {_x(st.stop, m, names)}; ++{v})"):
                if st.comment:
                    w(f"// {st.comment}")
                _render(st.body, m, work, names)
        elif isinstance(st, If):
            with w.block(f"if ({_x(st.cond, m, names)})"):
                _render(st.body, m, work, names)
        else:
            w(_call(st, m, work, names))


def _rename(e: Expr, names: dict[str, str]) -> Expr:
    if not names:  # no loop of the expansion renamed yet: `e` as it is
        return e
    if isinstance(e, Var):
        return Var(names.get(e.name, e.name))
    if isinstance(e, Bin):
        return Bin(e.op, _rename(e.a, names), _rename(e.b, names))
    return e


def _x(e: Expr, m: Method, names: dict[str, str]) -> str:
    return m.scope.expr(_rename(e, names))


def _operand(r: Region, m: Method, work: str, names: dict[str, str]) -> str:
    off = _rename(r.offset, names)
    if r.buf == WORK:
        text = m.scope.expr(off)
        return work if text == "0" else f"{work}[{text}]"
    return m.scope.at_offset(r.buf, r.gm, off)


def _call(c: VecCall, m: Method, work: str, names: dict[str, str]) -> str:
    dst = _operand(c.dst, m, work, names)
    srcs = [_operand(r, m, work, names) for r in c.srcs]
    if c.form == "count":
        return f"AscendC::{c.api}({dst}, {', '.join(srcs)}, {_x(c.count, m, names)});"
    t = ctype(c.dtype)
    mask, reps = _x(c.mask, m, names), _x(c.repeats, m, names)
    p = ", ".join(str(v) for v in c.params)
    if c.api in REDUCE_APIS:
        order = ", AscendC::ReduceOrder::ORDER_ONLY_VALUE" if REDUCE_APIS[c.api].ordered else ""
        return f"AscendC::{c.api}<{t}>({dst}, {srcs[0]}, {mask}, {reps}, {p}{order});"
    if c.api == "Brcb":
        return f"AscendC::Brcb({dst}, {srcs[0]}, {reps}, AscendC::BrcbRepeatParams({p}));"
    if c.api in SCALAR_REPEAT_APIS:
        lit = c_float(c.scalar or 0.0, c.dtype)
        return f"AscendC::{c.api}({dst}, {srcs[0]}, {lit}, {mask}, {reps}, AscendC::UnaryRepeatParams({p}));"
    return f"AscendC::{c.api}({dst}, {srcs[0]}, {srcs[1]}, {mask}, {reps}, AscendC::BinaryRepeatParams({p}));"


def _event(s: SetFlag | WaitFlag) -> str:
    return f"AscendC::HardEvent::{s.src.value}_{s.dst.value}"


def _set_flag(s: SetFlag, m: Method) -> None:
    ev = m.fresh("eventId")
    m.flags[(s.src, s.dst, s.event)] = ev
    m.w(f"auto {ev} = pipe.FetchEventID({_event(s)});", f"AscendC::SetFlag<{_event(s)}>({ev});")


def _wait_flag(s: WaitFlag, m: Method) -> None:
    ev = m.flags.pop((s.src, s.dst, s.event), None)
    if ev is None:
        raise UnsupportedError(f"kernel {m.scope.kernel.name}: wait_flag {s.src.value}->{s.dst.value} has no "
                               "set_flag before it in the same method")
    m.w(f"AscendC::WaitFlag<{_event(s)}>({ev});")


INSTR_RULES: dict[type, Callable] = {
    Alloc: _alloc, DeQue: _deque, EnQue: _enque, Free: _free, CrossSet: _cross_set, CrossWait: _cross_wait,
    SyncAll: _sync_all, Copy: _copy, VecOp: _vecop, Reduce: _reduce, SetFlag: _set_flag, WaitFlag: _wait_flag,
}


def emit_instr(s: object, m: Method) -> None:
    """Write one TileIR instruction of a vector-core program."""
    rule = INSTR_RULES.get(type(s))
    if rule is None:
        raise UnsupportedError(f"kernel {m.scope.kernel.name}: {type(s).__name__} has no vector-core rule")
    comment = getattr(s, "comment", "")
    if comment:
        m.w(f"// {comment}")
    rule(s, m)
