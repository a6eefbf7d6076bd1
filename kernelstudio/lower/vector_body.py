"""Vector compute of a fused kernel on a block of its [rows, cols] iteration space.

Used by vector kernels (the block is a tile) and by cube_vector epilogues (the block is the part of
a C tile or row block one AIV handles). Every operand is a GM region function; every node is
computed in the compute dtype on UB tiles — float32 (int32 for integer-only kernels), or float16
natively when every op rounds as the golden model does (NATIVE_OPS; schedule directive
compute_dtype) — inputs cast on arrival and outputs cast on departure where dtypes differ.
Kernels with row reductions use one of two schemes:

- full-row: the chunk spans every column; inputs are read once and all ops run on resident rows.
- multi-pass: the chunk spans part of a row; pass p streams the columns to finish the row
  statistics of level p (mean, then variance, ...), and the last pass computes the outputs.

In the full-row scheme an output's last op writes the output queue's tensor itself when nothing
later reads its value and it has the output's dtype (as a hand-written kernel does: no scratch
tile and copy); otherwise the value is copied or cast into the queue.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.dtypes import block_elems
from ..core.errors import UnsupportedError
from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..ir.ops import FLOAT_DTYPES, Kind, Op, itemsize
from ..tileir.expr import Const, E, Expr, Var, ceil_div
from ..tileir.program import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
    DeQue,
    EnQue,
    Free,
    If,
    Let,
    Loop,
    QuePos,
    Reduce,
    Region,
    Stmt,
    Tier,
    VecOp,
)
from ..tileir.vector_ops import OPS, REDUCTIONS

__all__ = ["Operand", "VecConfig", "VectorBody", "ident"]

GmRegion = Callable[[Expr, Expr, Expr, Expr], Region]  # (r0, rlen, c0, clen) -> GM region

# graph op -> the TileIR op (tileir/vector_ops.py) of one source, of two, and the row reduction
_UNARY = {g: r.name for r in OPS.values() if r.arity == 1 for g in r.graph_ops}
_BINARY = {g: r.name for r in OPS.values() if r.arity == 2 for g in r.graph_ops}
_REDUCE = {g: r.name for r in REDUCTIONS.values() for g in r.graph_ops}


@functools.lru_cache(maxsize=1024)  # a pure function of the text, asked for every buffer of every emitted kernel
def ident(name: str) -> str:
    """A C identifier made from a graph name."""
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else f"t_{s}"


@dataclass(frozen=True, slots=True)
class Operand:
    """A tensor the body reads from or writes to global memory."""

    node: Node
    name: str
    view: str  # full | row | col | scalar
    dtype: str
    region: GmRegion
    row_region: Callable[[Expr, Expr, Expr], Region] | None = None  # (row, c0, clen): one row at a time
    # with row_region: the rows of the space that read one row of the tensor, in runs aligned to multiples
    # of row_run counted from row_base (a (T, 1, Dr) table on a (T, N, Dr) space: N rows of one token)
    row_run: int = 1
    row_base: Expr = Const(0)


@dataclass(frozen=True, slots=True)
class VecConfig:
    chunk_rows: int
    chunk_cols: int
    depth: int = 2
    aligned: bool = True
    inline_scalars: bool = True
    core: CoreType = CoreType.AIV
    compute_dtype: str = ""  # "" = float32 (int32 for integer-only kernels); "float16" = native


def _pad(n: int, dtype: str, aligned: bool) -> int:
    if not aligned:
        return max(n, 1)
    per = block_elems(dtype)
    return max(-(-n // per) * per, per)


class VectorBody:
    """Builds the statements and buffers that compute `fk`'s vector ops on a block."""

    def __init__(self, fk: FusedKernel, names: dict[Node, str], inputs: Sequence[Operand],
                 outputs: Sequence[Operand], cfg: VecConfig, *, skip: Sequence[Node] = (),
                 row_len: int | None = None):
        self.fk, self.names, self.cfg = fk, names, cfg
        self.inputs = {o.node: o for o in inputs}
        self.outputs = list(outputs)
        self.nodes = [n for n in fk.nodes if n not in skip]
        self.views = dict(fk.views)
        for o in inputs:
            self.views[o.node] = o.view
        dts = {n.dtype for n in self.nodes} | {o.dtype for o in inputs}
        self.cdt = cfg.compute_dtype or ("float32" if dts & set(FLOAT_DTYPES) else "int32")
        self.row_len = row_len if row_len is not None else fk.cols
        self.buffers: dict[str, Buffer] = {}
        self._free: dict[str, list[str]] = {}
        self._n = 0
        self._stage = self._stages()
        self.hoisted: dict[Node, Region] = {}  # loop-invariant inputs loaded once (see hoist)

    # ---- buffers ------------------------------------------------------------------------
    def _shape(self, view: str, dtype: str) -> tuple[int, int]:
        r, c, al = self.cfg.chunk_rows, self.cfg.chunk_cols, self.cfg.aligned
        if view == "col" and c == 1:  # one value per row is a full tile of one column: rows 32 bytes apart,
            view = "full"  # as every tile it meets is laid out (a packed column would start rows mid-block)
        if view == "full":
            return r, _pad(c, dtype, al)
        if view == "row":
            return 1, _pad(c, dtype, al)
        if view == "col":
            return _pad(r, dtype, al), 1
        if view == "scalar":
            return 1, _pad(1, dtype, al)
        raise KeyError(view)

    def _buffer(self, name: str, view: str, dtype: str, queue: QuePos | None, purpose: str) -> str:
        rows, cols = self._shape(view, dtype)
        depth = self.cfg.depth if queue is not None else 1
        self.buffers[name] = Buffer(name, Tier.UB, dtype, rows, cols, depth, queue, self.cfg.core, purpose)
        return name

    def _scratch(self, view: str, dtype: str | None = None) -> str:
        dtype = dtype or self.cdt
        key = f"{view}:{dtype}"
        pool = self._free.setdefault(key, [])
        if pool:
            return pool.pop()
        self._n += 1
        return self._buffer(f"tmp{self._n}_{view}", view, dtype, None, f"{dtype} scratch ({view} tile)")

    def _release(self, buf: str) -> None:
        b = self.buffers[buf]
        if b.queue is None and not buf.startswith("acc_"):
            pool = self._free.setdefault(f"{self._view_of_buf(buf)}:{b.dtype}", [])
            if buf not in pool:
                pool.append(buf)

    @staticmethod
    def _view_of_buf(buf: str) -> str:
        return buf.rsplit("_", 1)[1]

    def region(self, buf: str, view: str, rlen: Expr, clen: Expr) -> Region:
        b = self.buffers[buf]
        if view == "full":
            return Region(buf, Const(0), rlen, clen, Const(b.cols))
        if view == "row":
            return Region(buf, Const(0), Const(1), clen, Const(b.cols))
        if view == "col":
            return Region(buf, Const(0), rlen, Const(1), Const(b.cols))  # b.cols: 1, or a padded row (see _shape)
        return Region(buf, Const(0), Const(1), Const(1), Const(1))

    # ---- levels of row statistics -------------------------------------------------------------
    def _stages(self) -> dict[Node, int]:
        st: dict[Node, int] = {}
        for n in self.nodes:
            s = 0
            for i in n.inputs:
                v = st.get(i, 0)
                if v > s:
                    s = v
            st[n] = s + 1 if n.info.kind is Kind.REDUCE else s
        return st

    @property
    def reduces(self) -> list[Node]:
        return [n for n in self.nodes if n.info.kind is Kind.REDUCE]

    # ---- one node ------------------------------------------------------------------------
    def _const(self, n: Node) -> float:
        return float(n.attr("value"))

    def _materialize_const(self, n: Node, out: list[Stmt]) -> Region:
        buf = self._scratch("scalar")
        r = self.region(buf, "scalar", Const(1), Const(1))
        out.append(VecOp("duplicate", r, (), self._const(n), comment=f"constant {self._const(n):g}"))
        return r

    def emit_node(self, n: Node, vals: dict[Node, Region], rlen: Expr, clen: Expr, out: list[Stmt],
                  dst_buf: str | None = None) -> Region:
        view = self.views[n]
        comment = f"{self.names[n]} = {n.op.value}" + (f"  [{n.composite.name}]" if n.composite else "")
        buf = dst_buf or self._scratch(view)
        dst = self.region(buf, view, rlen, clen)
        ins = n.inputs
        if n.info.kind is Kind.REDUCE:
            out.append(Reduce(_REDUCE[n.op], dst, vals[ins[0]], comment=comment))
            if n.op is Op.REDUCE_MEAN:
                out.append(VecOp("muls", dst, (dst,), 1.0 / self.row_len, comment="mean = sum / cols"))
            return dst
        if n.op is Op.CAST:
            src = vals[ins[0]]
            scale = n.attr("scale")
            if scale is not None:  # dequantize: x arrived as float32 (the compute dtype); Muls in float32
                out.append(VecOp("muls", dst, (src,), float(scale), comment=f"{comment}: x * {scale:g}"))
                src = dst
            rint = n.attr("rounding") == "rint"  # quantize: nearest even, saturating (CAST_RINT)
            if rint or n.dtype != self.cdt and itemsize(n.dtype) < itemsize(self.cdt) or (
                    n.dtype == "bfloat16" and self.cdt == "float32"):
                tmp = self._scratch(view, n.dtype)
                t = self.region(tmp, view, rlen, clen)
                out.append(VecOp("cast_rint" if rint else "cast", t, (src,), comment=f"{comment}: round to {n.dtype}"))
                out += self._convert(dst, t, n.dtype, view, rlen, clen, f"back to {self.cdt} for the next ops")
                self._release(tmp)
            elif src is not dst:
                out.append(VecOp("copy", dst, (src,), comment=comment))
            return dst
        if n.op in _UNARY:
            scalar = float(n.attr("alpha")) if n.op is Op.LEAKY_RELU else None
            out.append(VecOp(_UNARY[n.op], dst, (vals[ins[0]],), scalar, comment=comment))
            return dst
        if n.op in _BINARY:
            a, b = ins
            if self.cfg.inline_scalars and (a.op is Op.CONST or b.op is Op.CONST):
                self._scalar_binary(n, a, b, vals, dst, comment, out)
                return dst
            ra = vals[a] if a.op is not Op.CONST else self._materialize_const(a, out)
            rb = vals[b] if b.op is not Op.CONST else self._materialize_const(b, out)
            out.append(VecOp(_BINARY[n.op], dst, (ra, rb), comment=comment))
            return dst
        if n.op is Op.WHERE:
            srcs = tuple(vals[i] if i.op is not Op.CONST else self._materialize_const(i, out) for i in ins)
            out.append(VecOp("select", dst, srcs, comment=comment))
            return dst
        raise UnsupportedError(f"op {n.op.value} ({self.names[n]}) has no vector lowering")

    def _scalar_binary(self, n: Node, a: Node, b: Node, vals: dict[Node, Region], dst: Region,
                       comment: str, out: list[Stmt]) -> None:
        op = n.op
        if a.op is Op.CONST and b.op is Op.CONST:
            raise UnsupportedError(f"{self.names[n]}: both operands are constants; compute it in Python")
        with_scalar = OPS[_BINARY[op]].scalar_form  # add -> adds, ...: the commutative ops
        if b.op is Op.CONST:
            x, c = vals[a], self._const(b)
            if op is Op.DIV and c == 0:
                out.append(VecOp("div", dst, (x, self._materialize_const(b, out)), comment=comment))
                return
            name, s = (with_scalar, c) if with_scalar else ("adds", -c) if op is Op.SUB else ("muls", 1.0 / c)
            out.append(VecOp(name, dst, (x,), s, comment=comment))
            return
        c, x = self._const(a), vals[b]
        if with_scalar:
            out.append(VecOp(with_scalar, dst, (x,), c, comment=comment))
        elif op is Op.SUB:
            out.append(VecOp("neg", dst, (x,), comment=comment))
            out.append(VecOp("adds", dst, (dst,), c, comment=f"{c:g} - x"))
        else:  # c / x
            out.append(VecOp("reciprocal", dst, (x,), comment=comment))
            out.append(VecOp("muls", dst, (dst,), c, comment=f"{c:g} / x"))

    def _convert(self, dst: Region, src: Region, src_dtype: str, view: str, rlen: Expr, clen: Expr,
                 comment: str) -> list[Stmt]:
        """Cast `src` (of `src_dtype`) into `dst` (compute dtype): one Cast, or two where the vector
        unit has no direct conversion: int8 converts to half only (VCONV), so int8 -> float32 / int32
        goes through float16, exactly (every int8 value is a float16)."""
        if src_dtype != "int8" or self.cdt in ("float16", "int8"):
            return [VecOp("cast", dst, (src,), comment=comment)]
        tmp = self._scratch(view, "float16")
        t = self.region(tmp, view, rlen, clen)
        self._release(tmp)
        return [VecOp("cast", t, (src,), comment=f"{comment}: int8 -> float16 (exact)"),
                VecOp("cast", dst, (t,), comment=f"{comment}: float16 -> {self.cdt}")]

    # ---- copy in / out -------------------------------------------------------------------
    def _load(self, o: Operand, r0: Expr, rlen: Expr, c0: Expr, clen: Expr,
              copy_in: list[Stmt], compute: list[Stmt], vals: dict[Node, Region],
              frees: list[Stmt], dst_buf: str | None = None) -> None:
        qname = f"in_{ident(o.name)}"
        if qname not in self.buffers:
            self._buffer(qname, o.view, o.dtype, QuePos.VECIN, f"{o.name} from GM")
        ub = self.region(qname, o.view, rlen, clen)
        if o.row_region is None:
            copy_in += [Alloc(qname), Copy(ub, o.region(r0, rlen, c0, clen), comment=f"copy in {o.name}"),
                        EnQue(qname)]
        elif o.view == "full" and o.row_run > 1:  # runs of rows read one row: one copy per run, spread in UB
            runs = self._runs(o, qname, r0, rlen, c0, clen)
            copy_in += [Alloc(qname), runs[0], EnQue(qname)]
            compute.append(DeQue(qname))
            val = self._arrive(o, qname, ub, rlen, clen, compute, frees, dst_buf)
            compute.append(runs[1](val))
            vals[o.node] = val
            return
        else:  # broadcast along inner row dims: one row copy per tile row
            var = f"g_{ident(o.name)}"
            b = self.buffers[qname]
            row = (Region(qname, E.mul(Var(var), b.cols), Const(1), clen, Const(b.cols)) if o.view == "full"
                   else Region(qname, Var(var), Const(1), Const(1), Const(1)))
            copy_in += [Alloc(qname),
                        Loop(var, Const(0), rlen, Const(1),
                             (Copy(row, o.row_region(E.add(r0, Var(var)), c0, clen), comment=f"copy in {o.name}"),),
                             comment=f"{o.name} is broadcast inside the rows: gathered row by row"),
                        EnQue(qname)]
        compute.append(DeQue(qname))
        vals[o.node] = self._arrive(o, qname, ub, rlen, clen, compute, frees, dst_buf)

    def _arrive(self, o: Operand, qname: str, ub: Region, rlen: Expr, clen: Expr, compute: list[Stmt],
                frees: list[Stmt], dst_buf: str | None) -> Region:
        """The loaded tile as the compute dtype: the queue's tensor itself, or a cast / copy of it."""
        if o.dtype != self.cdt or dst_buf is not None:
            buf = dst_buf or self._scratch(o.view)
            dst = self.region(buf, o.view, rlen, clen)
            if o.dtype != self.cdt:
                compute += self._convert(dst, ub, o.dtype, o.view, rlen, clen, f"{o.name} {o.dtype} -> {self.cdt}")
            else:
                compute.append(VecOp("copy", dst, (ub,), comment=f"{o.name} {o.dtype} -> {self.cdt}"))
            compute.append(Free(qname))
            return dst
        frees.append(Free(qname))
        return ub

    def _runs(self, o: Operand, qname: str, r0: Expr, rlen: Expr, c0: Expr, clen: Expr):
        """A tile of `o` whose rows come in runs of `o.row_run` that read one tensor row: per run in the
        tile one GM copy of that row into the run's first tile row (MTE2), then, once the tile is in the
        compute dtype, one vector copy of that row into the run's other rows (a one-row operand of a
        repeat-form call). Returns (the copy-in loop, a function of the value tile giving the spread loop)."""
        run, v = o.row_run, f"g_{ident(o.name)}"
        g0 = E.add(o.row_base, r0)
        first_run = E.div(g0, run)
        n_runs = E.add(E.sub(E.div(E.add(g0, E.sub(rlen, 1)), run), first_run), 1)
        lets = (Let(f"{v}_first", E.max(E.sub(E.mul(E.add(first_run, Var(v)), run), g0), 0)),
                Let(f"{v}_end", E.min(E.sub(E.mul(E.add(first_run, E.add(Var(v), 1)), run), g0), rlen)))
        first, end = Var(f"{v}_first"), Var(f"{v}_end")
        cols = self.buffers[qname].cols
        row = Region(qname, E.mul(first, cols), Const(1), clen, Const(cols))
        load = Loop(v, Const(0), n_runs, Const(1),
                    (*lets, Copy(row, o.row_region(E.add(r0, first), c0, clen), comment=f"copy in {o.name}")),
                    comment=f"{o.name} is broadcast inside the rows: one row per run of {run} rows")

        def spread(val: Region) -> Loop:
            vcols = self.buffers[val.buf].cols
            src = Region(val.buf, E.mul(first, vcols), Const(1), clen, Const(vcols))
            dst = Region(val.buf, E.mul(E.add(first, 1), vcols), E.sub(E.sub(end, first), 1), clen, Const(vcols))
            return Loop(v, Const(0), n_runs, Const(1), (*lets, If(E.sub(E.sub(end, first), 1), (
                VecOp("copy", dst, (src,), comment=f"{o.name}: the run's row into its other rows"),))),
                comment=f"{o.name}: spread each run's row")

        return load, spread

    def _out_queue(self, o: Operand) -> str:
        qname = f"out_{ident(o.name)}"
        if qname not in self.buffers:
            self._buffer(qname, o.view, o.dtype, QuePos.VECOUT, f"{o.name} to GM")
        return qname

    def _copy_out(self, o: Operand, r0: Expr, rlen: Expr, c0: Expr, clen: Expr) -> list[Stmt]:
        qname = self._out_queue(o)
        ub = self.region(qname, o.view, rlen, clen)
        return [DeQue(qname), Copy(o.region(r0, rlen, c0, clen), ub, comment=f"copy out {o.name}"), Free(qname)]

    def _store(self, o: Operand, val: Region, r0: Expr, rlen: Expr, c0: Expr, clen: Expr,
               compute: list[Stmt], copy_out: list[Stmt]) -> None:
        qname = self._out_queue(o)
        ub = self.region(qname, o.view, rlen, clen)
        op = "cast" if o.dtype != self.cdt else "copy"
        compute += [Alloc(qname), VecOp(op, ub, (val,), comment=f"{o.name} {self.cdt} -> {o.dtype}"),
                    EnQue(qname)]
        copy_out += self._copy_out(o, r0, rlen, c0, clen)

    def _writer_of(self, n: Node) -> Node:
        """The node whose op writes output `n`'s queue: `n`, or for a cast to the compute dtype its
        input already has (no op of its own) that input, when it is computed here and read only by `n`."""
        if n.op is not Op.CAST or n.attr("scale") is not None or n.dtype != self.cdt:
            return n
        (x,) = n.inputs
        readers = [m for m in self.nodes if x in m.inputs]
        if (x not in self.nodes or x in self.inputs or readers != [n] or self.views[x] != self.views[n]
                or any(o.node is x for o in self.outputs) or x.op is Op.CONST):
            return n
        return x

    def _direct_outputs(self, last: dict[Node, int]) -> dict[Node, Operand]:
        """Outputs whose op may write the output queue's tensor itself (no scratch tile and copy): the
        node is computed here in the output's dtype and view, nothing after it reads it, and it is the
        only output of that node."""
        count: dict[Node, int] = {}
        for o in self.outputs:
            count[o.node] = count.get(o.node, 0) + 1
        own = set(self.nodes)
        return {o.node: o for o in self.outputs
                if o.node in own and o.node not in self.inputs and count[o.node] == 1 and last.get(o.node) is None
                and o.dtype == self.cdt and self.views[o.node] == o.view and o.node.op is not Op.CONST}

    # ---- schemes ---------------------------------------------------------------------------
    def _last_uses(self, order: Sequence[Node]) -> dict[Node, int]:
        last: dict[Node, int] = {}
        for idx, n in enumerate(order):
            for i in n.inputs:
                last[i] = idx
        return last

    def hoist(self, c_total: Expr) -> list[Stmt]:
        """Load row-vector and scalar inputs once, before the tile loop, into buffers kept for every
        full-width chunk (loop-invariant: they do not depend on the rows); returns those statements."""
        out: list[Stmt] = []
        for o in self.inputs.values():
            if o.view in ("row", "scalar"):
                buf = self._buffer(f"acc_{ident(o.name)}_{o.view}", o.view, self.cdt, None, f"{o.name} kept")
                vals: dict[Node, Region] = {}
                frees: list[Stmt] = []
                self._load(o, Const(0), Const(1), Const(0), c_total, out, out, vals, frees, dst_buf=buf)
                self.hoisted[o.node] = vals[o.node]
        return out

    def chunk(self, r0: Expr, rlen: Expr, c0: Expr, clen: Expr) -> list[Stmt]:
        """All ops on one resident chunk: CopyIn, Compute, CopyOut (the full-row scheme)."""
        copy_in: list[Stmt] = []
        compute: list[Stmt] = []
        copy_out: list[Stmt] = []
        frees: list[Stmt] = []
        vals: dict[Node, Region] = dict(self.hoisted)
        for o in self.inputs.values():
            if o.node not in self.hoisted:
                self._load(o, r0, rlen, c0, clen, copy_in, compute, vals, frees)
        keep = {o.node for o in self.outputs}
        last = self._last_uses(self.nodes)
        direct = self._direct_outputs(last)
        into = {self._writer_of(n): o for n, o in direct.items()}  # node -> the queue it computes into
        for idx, n in enumerate(self.nodes):
            o = direct.get(n)
            if n in into:  # computed straight into the output queue's tensor
                qname = self._out_queue(into[n])
                compute.append(Alloc(qname))
                vals[n] = self.emit_node(n, vals, rlen, clen, compute, dst_buf=qname)
            elif o is not None:  # a cast to the dtype its input already has: the input is the value
                vals[n] = vals[n.inputs[0]]
            else:
                vals[n] = self.emit_node(n, vals, rlen, clen, compute)
            if o is not None:
                compute.append(EnQue(self._out_queue(o)))
            for i in dict.fromkeys(n.inputs):  # in input order: the buffers freed, so the ones reused, never vary
                if last.get(i) == idx and i not in keep and i in vals and i not in self.inputs:
                    self._release(vals[i].buf)
        for o in self.outputs:
            if direct.get(o.node) is o:
                copy_out += self._copy_out(o, r0, rlen, c0, clen)
            else:
                self._store(o, vals[o.node], r0, rlen, c0, clen, compute, copy_out)
        for n in self.nodes:
            if n not in keep and last.get(n) is None and vals[n].buf in self.buffers:
                self._release(vals[n].buf)
        return copy_in + compute + frees + copy_out

    def multipass(self, r0: Expr, rlen: Expr, c_start: Expr, c_total: Expr, loop_var: str) -> list[Stmt]:
        """Row statistics streamed over column chunks (see module doc)."""
        cc = self.cfg.chunk_cols
        st = self._stage
        out: list[Stmt] = []
        vals: dict[Node, Region] = {}
        col_nodes = [n for n in self.nodes if self.views[n] in ("col", "scalar")]
        persistent: dict[Node, Region] = {}
        for n in col_nodes:
            buf = self._buffer(f"acc_{ident(self.names[n])}_{self.views[n]}", self.views[n], self.cdt, None,
                               f"row statistic {self.names[n]}")
            persistent[n] = self.region(buf, self.views[n], rlen, Const(1))
        # column-invariant inputs: once per block
        ci_in: list[Stmt] = []
        ci_cmp: list[Stmt] = []
        ci_free: list[Stmt] = []
        for o in self.inputs.values():
            if o.view in ("col", "scalar"):
                buf = self._buffer(f"acc_{ident(o.name)}_{o.view}", o.view, self.cdt, None, f"{o.name} kept")
                self._load(o, r0, rlen, Const(0), Const(1), ci_in, ci_cmp, vals, ci_free, dst_buf=buf)
        out += ci_in + ci_cmp + ci_free
        wide = [n for n in self.nodes if self.views[n] in ("full", "row")]
        passes = max([st[n] for n in wide] + [st.get(r.inputs[0], 0) for r in self.reduces] + [0])
        out_nodes = {o.node for o in self.outputs}
        done_cols: set[Node] = set()

        def ready_cols(level: int) -> list[Stmt]:
            s: list[Stmt] = []
            for n in col_nodes:
                if n in done_cols or n.info.kind is Kind.REDUCE or st[n] > level:
                    continue
                if all(i in done_cols or i in vals or i.op is Op.CONST for i in n.inputs):
                    vals[n] = self.emit_node(n, vals, rlen, Const(1), s, dst_buf=persistent[n].buf)
                    done_cols.add(n)
            return s

        out += ready_cols(0)
        for p in range(passes + 1):
            targets = [r for r in self.reduces if st.get(r.inputs[0], 0) == p]
            final = p == passes
            need: set[Node] = set()
            stack = [r.inputs[0] for r in targets]
            if final:
                stack += [o.node for o in self.outputs if self.views[o.node] in ("full", "row")]
            while stack:
                n = stack.pop()
                if n in need or self.views.get(n) in ("col", "scalar", None):
                    continue
                need.add(n)
                if n not in self.inputs:
                    stack.extend(n.inputs)
            for r in targets:
                init = (-3.0e38 if self.cdt in FLOAT_DTYPES else -(2**31)) if r.op is Op.REDUCE_MAX else 0.0
                out.append(VecOp("duplicate", persistent[r], (), init, comment=f"init {self.names[r]}"))
            body_in: list[Stmt] = []
            body: list[Stmt] = []
            body_free: list[Stmt] = []
            body_out: list[Stmt] = []
            c0 = E.add(c_start, E.mul(Var(loop_var), cc))
            clen = Var(f"{loop_var}_len")
            local = dict(vals)
            for o in self.inputs.values():
                if o.view in ("full", "row") and o.node in need:
                    self._load(o, r0, rlen, c0, clen, body_in, body, local, body_free)
            order = [n for n in self.nodes if n in need and n not in self.inputs]
            last = self._last_uses(order + targets)
            for idx, n in enumerate(order):
                local[n] = self.emit_node(n, local, rlen, clen, body)
                for i in dict.fromkeys(n.inputs):
                    if last.get(i) == idx and i in order and i not in out_nodes:
                        self._release(local[i].buf)
            for r in targets:
                body.append(Reduce(_REDUCE[r.op], persistent[r], local[r.inputs[0]], accumulate=True,
                                   comment=f"{self.names[r]} += chunk (pass {p + 1})"))
            if final:
                for o in self.outputs:
                    if self.views[o.node] in ("full", "row"):
                        self._store(o, local[o.node], r0, rlen, c0, clen, body, body_out)
            for n in order:
                if local[n].buf in self.buffers and self.buffers[local[n].buf].queue is None:
                    self._release(local[n].buf)
            n_chunks = ceil_div(c_total, cc)
            out.append(Loop(loop_var, Const(0), n_chunks, Const(1), (
                Let(f"{loop_var}_len", E.min(cc, E.sub(c_total, E.mul(Var(loop_var), cc)))),
                *body_in, *body, *body_free, *body_out),
                comment=f"pass {p + 1} of {passes + 1} over column chunks of {cc}"))
            for r in targets:
                if r.op is Op.REDUCE_MEAN:
                    out.append(VecOp("muls", persistent[r], (persistent[r],), 1.0 / self.row_len,
                                     comment="mean = sum / cols"))
                vals[r] = persistent[r]
                done_cols.add(r)
            out += ready_cols(p + 1)
        # column outputs
        c_out: list[Stmt] = []
        c_copy: list[Stmt] = []
        for o in self.outputs:
            if self.views[o.node] in ("col", "scalar"):
                self._store(o, vals[o.node], r0, rlen, Const(0), Const(1), c_out, c_copy)
        return out + c_out + c_copy
