"""Readable text of a TileIR program: what the pass viewer shows and the golden tests diff."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from .expr import Bin, Const, Load, Var
from .program import (
    Alloc,
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    GateTopK,
    GmTensor,
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
    VecOp,
    WaitFlag,
    pipe_of,
)

__all__ = ["format_program", "format_kernel", "instr_text", "region_text"]

_SHORT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int8": "i8", "int32": "i32", "int64": "i64"}


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


class _Text:
    """The text of the expressions and regions of one kernel (or one instruction), each printed once: a kernel
    names the same Expr and Region objects from many statements. Kept by object id for the printing of one
    kernel only, while the kernel holds every object it prints."""

    __slots__ = ("_expr", "_region", "tiers")

    def __init__(self, tiers: dict[str, Tier]):
        self.tiers = tiers
        self._expr: dict[int, str] = {}
        self._region: dict[int, str] = {}

    def expr(self, e: object) -> str:
        """`str(e)` of an index expression (or a plain value)."""
        t = type(e)
        if t is Var:
            return e.name  # type: ignore[attr-defined]
        if t is Const:
            return str(e.value)  # type: ignore[attr-defined]
        text = self._expr.get(id(e))
        if text is None:
            if t is Bin:
                if e.op in ("min", "max"):  # type: ignore[attr-defined]
                    text = f"{e.op}({self.expr(e.a)}, {self.expr(e.b)})"  # type: ignore[attr-defined]
                else:
                    text = f"({self.expr(e.a)} {e.op} {self.expr(e.b)})"  # type: ignore[attr-defined]
            elif t is Load:
                text = f"{e.buf}[{self.expr(e.index)}]"  # type: ignore[attr-defined]
            else:
                text = str(e)
            self._expr[id(e)] = text
        return text

    def region(self, r: Region) -> str:
        """`region_text(r)`."""
        text = self._region.get(id(r))
        if text is None:  # the loop variables and constants most fields hold, printed here without a call
            o, n, c, s = r.offset, r.rows, r.cols, r.stride
            o = o.name if type(o) is Var else str(o.value) if type(o) is Const else self.expr(o)
            n = n.name if type(n) is Var else str(n.value) if type(n) is Const else self.expr(n)
            c = c.name if type(c) is Var else str(c.value) if type(c) is Const else self.expr(c)
            s = s.name if type(s) is Var else str(s.value) if type(s) is Const else self.expr(s)
            text = self._region[id(r)] = f"{'gm.' + r.buf if r.gm else r.buf}[{o} : {n}x{c}/{s}]"
        return text


def region_text(r: Region) -> str:
    """A region as the IR text prints it: `buf[offset : rows x cols / stride]`."""
    return _Text({}).region(r)


def _pipe(s: Stmt, tx: _Text) -> str:
    return pipe_of(s, tx.tiers)._value_.ljust(4)  # type: ignore[arg-type]


def _comment(s: Stmt) -> str:
    return f"    # {s.comment}" if s.comment else ""  # type: ignore[union-attr]


def _copy(s: Copy, tx: _Text) -> str:
    tag = "  nd2nz" if s.nd2nz else ""
    c = f"    # {s.comment}" if s.comment else ""
    return f"{_pipe(s, tx)} {tx.region(s.dst)} <- {tx.region(s.src)}{tag}{c}"


def _mmad(s: Mmad, tx: _Text) -> str:
    rt, ex = tx.region, tx.expr
    b = f"{rt(s.b)}^T" if s.b_layout == "nk" else rt(s.b)
    a = f"{rt(s.a)}^T" if s.a_layout == "km" else rt(s.a)
    return (f"M    {rt(s.c)} += {a} @ {b}   m={ex(s.m)} k={ex(s.k)} n={ex(s.n)} init={ex(s.init)}"
            f"{_comment(s)}")


def _img2col(s: Img2Col, tx: _Text) -> str:
    return (f"MTE1 {tx.region(s.dst)} <- img2col({tx.region(s.src)}, k={s.kh}x{s.kw}, stride={s.stride}, "
            f"pad={s.pad}, p0={s.p0}, pixels={s.pixels}, k0={s.k0}, klen={s.klen}, h0={s.h0}){_comment(s)}")


def _vecop(s: VecOp, tx: _Text) -> str:
    rt = tx.region
    args = ", ".join([rt(x) for x in s.srcs])
    if s.scalar is not None:
        args = f"{args}, {s.scalar:g}" if args else f"{s.scalar:g}"
    c = f"    # {s.comment}" if s.comment else ""
    return f"V    {rt(s.dst)} = {s.op}({args}){c}"


def _reduce(s: Reduce, tx: _Text) -> str:
    op = f"{s.op}=" if s.accumulate else "="
    return f"V    {tx.region(s.dst)} {op} reduce_{s.op}({tx.region(s.src)}){_comment(s)}"


def _topk(s: TopK, tx: _Text) -> str:
    order = "" if s.largest else ", smallest"
    return f"V    {tx.region(s.values)}, {tx.region(s.indices)} = topk({tx.region(s.src)}, k={s.k}{order}){_comment(s)}"


def _mrgsort(s: MrgSort, tx: _Text) -> str:
    rt = tx.region
    order = ", descending" if s.largest else ""
    return (f"V    {rt(s.keys)}, {rt(s.indices)} = mrgsort({rt(s.src_keys)}, {rt(s.src_indices)}, first={s.first}"
            f"{order}){_comment(s)}")


def _gate_topk(s: GateTopK, tx: _Text) -> str:
    rt = tx.region
    return (f"{_pipe(s, tx)} {rt(s.values)}, {rt(s.indices)} = gate_topk({rt(s.src)}, scores={rt(s.scores)}, "
            f"k={s.k}, groups={s.groups}, keep={s.topk_groups}){_comment(s)}")


def _queue_op(s: Alloc | EnQue | DeQue | Free, tx: _Text) -> str:
    return f"S    {type(s).__name__.lower()} {s.buf}"


def _cross_set(s: CrossSet, tx: _Text) -> str:
    return f"{s.pipe._value_:<4} cross_set(flag={s.flag})"


def _cross_wait(s: CrossWait, tx: _Text) -> str:
    return f"S    cross_wait(flag={s.flag})"


def _sync_all(s: SyncAll, tx: _Text) -> str:
    return f"S    sync_all(){_comment(s)}"


def _set_flag(s: SetFlag, tx: _Text) -> str:
    return f"{s.src._value_:<4} set_flag({s.src._value_}->{s.dst._value_}, event={s.event})"


def _wait_flag(s: WaitFlag, tx: _Text) -> str:
    return f"{s.dst._value_:<4} wait_flag({s.src._value_}->{s.dst._value_}, event={s.event})"


# one printer per instruction type, its pipe first (pipe_of's: V for vector work, M for Mmad, MTE1 for img2col)
_INSTR: dict[type, Callable[..., str]] = {
    Copy: _copy, Mmad: _mmad, Img2Col: _img2col, VecOp: _vecop, Reduce: _reduce, TopK: _topk, MrgSort: _mrgsort,
    GateTopK: _gate_topk, Alloc: _queue_op, EnQue: _queue_op, DeQue: _queue_op, Free: _queue_op,
    CrossSet: _cross_set, CrossWait: _cross_wait, SyncAll: _sync_all, SetFlag: _set_flag, WaitFlag: _wait_flag,
}


def instr_text(s: Stmt, tiers: dict[str, Tier]) -> str:
    """One instruction (not a loop, let or if) as a line of the IR text, its pipe first."""
    fn = _INSTR.get(type(s))
    if fn is None:
        raise TypeError(type(s))
    return fn(s, _Text(tiers))


_QUEUE_OP = {Alloc: "alloc", EnQue: "enque", DeQue: "deque", Free: "free"}  # `_queue_op`'s names


def _body(stmts: tuple[Stmt, ...], tx: _Text, indent: int, out: list[str]) -> None:
    pad = "  " * indent
    ex = tx.expr
    queue = f"{pad}S    "
    for s in stmts:
        t = type(s)
        op = _QUEUE_OP.get(t)  # the most frequent lines, printed here without a call
        if op is not None:
            out.append(f"{queue}{op} {s.buf}")
            continue
        fn = _INSTR.get(t)
        if fn is not None:
            out.append(pad + fn(s, tx))
        elif t is Loop:
            step = ex(s.step)
            rng = f"{ex(s.start)}, {ex(s.stop)}" + (f", {step}" if step != "1" else "")
            out.append(f"{pad}for {s.var} in range({rng}):{_comment(s)}")
            _body(s.body, tx, indent + 1, out)
        elif t is If:
            out.append(f"{pad}if {ex(s.cond)}:{_comment(s)}")
            _body(s.body, tx, indent + 1, out)
        elif t is Let:
            out.append(f"{pad}{s.var} = {ex(s.value)}")
        else:
            raise TypeError(t)


# the text of a kernel below its gm line, by the kernel object: lower() reuses the kernels it emitted for
# a config before (pass viewers print the same kernels after every knob move), and a frozen Kernel's text
# never changes; the entry holds the kernel, so its id stays its own
_TEXT: OrderedDict[int, tuple[Kernel, str]] = OrderedDict()
_TEXT_MAX = 128


def format_kernel(k: Kernel, prog: Program | None = None) -> str:
    return _format_kernel(k, prog.tensor if prog is not None else None)


def _format_kernel(k: Kernel, tensor: Callable[[str], GmTensor] | None) -> str:
    """`format_kernel`, with `tensor` finding the program's GM tensor by name (None: no gm line)."""
    out = [f"kernel {k.name}  family={k.family}  type={k.kernel_type}  block_dim={k.block_dim}"]
    if tensor is not None:
        gm = []
        for p in k.params:
            t = tensor(p)
            role = f" ({t.role})" if t.role in ("workspace", "intermediate") else ""
            gm.append(f"{t.name}{_shape(t.shape)}{_SHORT[t.dtype]}{role}")
        out.append("  gm      " + "  ".join(gm))
    hit = _TEXT.get(id(k))
    if hit is not None and hit[0] is k:
        _TEXT.move_to_end(id(k))
        return "\n".join(out) + hit[1]
    text = _kernel_text(k)
    _TEXT[id(k)] = (k, text)
    if len(_TEXT) > _TEXT_MAX:
        _TEXT.popitem(last=False)
    return "\n".join(out) + text


def _kernel_text(k: Kernel) -> str:
    """Everything of `format_kernel` after its gm line, each line led by a newline."""
    tx = _Text({b.name: b.tier for b in k.buffers})
    out = [""]
    if k.tiling:
        out.append("  tiling  " + " ".join([f"{n}={v}" for n, v in k.tiling]))
    for b in k.buffers:
        q = b.queue._value_ if b.queue else "TBuf"
        what = f"  # {b.purpose}" if b.purpose else ""
        out.append(f"  buf     {b.core._value_}.{b.tier._value_:<3} {b.name}[{b.rows},{b.cols}]{_SHORT[b.dtype]}"
                   f" x{b.depth} {q}  ({b.nbytes:,} B){what}")
    for note in k.notes:
        out.append(f"  note    {note}")
    if k.aic:
        out.append("  aic:")
        _body(k.aic, tx, 2, out)
    if k.aiv:
        n = f" x{k.vec_per_block}" if k.vec_per_block > 1 else ""
        out.append(f"  aiv{n}:")
        _body(k.aiv, tx, 2, out)
    return "\n".join(out)


def format_program(p: Program) -> str:
    """The TileIR text of a Program (what the pass viewer shows)."""
    from ..core.checks import need

    p = need(p, Program, "format_program")
    head = [f"program {p.name}  target={p.target}  {'fused' if p.fused else 'unfused'}  "
            f"kernels={len(p.kernels)}"]
    by_name: dict[str, GmTensor] = {}
    for t in p.tensors:
        head.append(f"  gm {t.role:<12} {t.name}{_shape(t.shape)}{_SHORT[t.dtype]}  ({t.nbytes:,} B)")
        by_name.setdefault(t.name, t)  # the first of a name, as Program.tensor finds it
    return "\n".join(head + [_format_kernel(k, by_name.__getitem__) for k in p.kernels])
