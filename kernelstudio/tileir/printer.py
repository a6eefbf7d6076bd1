"""Readable text of a TileIR program: what the pass viewer shows and the golden tests diff."""

from __future__ import annotations

from collections import OrderedDict

from .program import (
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
    VecOp,
    WaitFlag,
    pipe_of,
)

__all__ = ["format_program", "format_kernel", "instr_text", "region_text"]

_SHORT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int8": "i8", "int32": "i32", "int64": "i64"}


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def region_text(r: Region) -> str:
    """A region as the IR text prints it: `buf[offset : rows x cols / stride]`."""
    base = f"gm.{r.buf}" if r.gm else r.buf
    return f"{base}[{r.offset} : {r.rows}x{r.cols}/{r.stride}]"


def instr_text(s: Stmt, tiers: dict[str, Tier]) -> str:
    """One instruction (not a loop, let or if) as a line of the IR text, its pipe first."""
    pipe = pipe_of(s, tiers).value if not isinstance(s, (Let, Loop, If)) else ""
    c = ""
    if getattr(s, "comment", ""):
        c = f"    # {s.comment}"
    if isinstance(s, Copy):
        tag = "  nd2nz" if s.nd2nz else ""
        return f"{pipe:<4} {region_text(s.dst)} <- {region_text(s.src)}{tag}{c}"
    if isinstance(s, Mmad):
        b = f"{region_text(s.b)}^T" if s.b_layout == "nk" else region_text(s.b)
        a = f"{region_text(s.a)}^T" if s.a_layout == "km" else region_text(s.a)
        return f"{pipe:<4} {region_text(s.c)} += {a} @ {b}   m={s.m} k={s.k} n={s.n} init={s.init}{c}"
    if isinstance(s, Img2Col):
        return (f"{pipe:<4} {region_text(s.dst)} <- img2col({region_text(s.src)}, k={s.kh}x{s.kw}, stride={s.stride}, "
                f"pad={s.pad}, p0={s.p0}, pixels={s.pixels}, k0={s.k0}, klen={s.klen}, h0={s.h0}){c}")
    if isinstance(s, VecOp):
        args = ", ".join(region_text(x) for x in s.srcs)
        if s.scalar is not None:
            args = f"{args}, {s.scalar:g}" if args else f"{s.scalar:g}"
        return f"{pipe:<4} {region_text(s.dst)} = {s.op}({args}){c}"
    if isinstance(s, Reduce):
        op = f"{s.op}=" if s.accumulate else "="
        return f"{pipe:<4} {region_text(s.dst)} {op} reduce_{s.op}({region_text(s.src)}){c}"
    if isinstance(s, TopK):
        order = "" if s.largest else ", smallest"
        outs = f"{region_text(s.values)}, {region_text(s.indices)}"
        return f"{pipe:<4} {outs} = topk({region_text(s.src)}, k={s.k}{order}){c}"
    if isinstance(s, MrgSort):
        order = ", descending" if s.largest else ""
        return (f"{pipe:<4} {region_text(s.keys)}, {region_text(s.indices)} = mrgsort({region_text(s.src_keys)}, "
                f"{region_text(s.src_indices)}, first={s.first}{order}){c}")
    if isinstance(s, GateTopK):
        return (f"{pipe:<4} {region_text(s.values)}, {region_text(s.indices)} = gate_topk({region_text(s.src)}, "
                f"scores={region_text(s.scores)}, k={s.k}, groups={s.groups}, keep={s.topk_groups}){c}")
    if isinstance(s, (Alloc, EnQue, DeQue, Free)):
        return f"{'S':<4} {type(s).__name__.lower()} {s.buf}"
    if isinstance(s, CrossSet):
        return f"{s.pipe.value:<4} cross_set(flag={s.flag})"
    if isinstance(s, CrossWait):
        return f"{'S':<4} cross_wait(flag={s.flag})"
    if isinstance(s, SyncAll):
        return f"{'S':<4} sync_all(){c}"
    if isinstance(s, SetFlag):
        return f"{s.src.value:<4} set_flag({s.src.value}->{s.dst.value}, event={s.event})"
    if isinstance(s, WaitFlag):
        return f"{s.dst.value:<4} wait_flag({s.src.value}->{s.dst.value}, event={s.event})"
    raise TypeError(type(s))


def _body(stmts: tuple[Stmt, ...], tiers: dict[str, Tier], indent: int, out: list[str]) -> None:
    pad = "  " * indent
    for s in stmts:
        if isinstance(s, Loop):
            rng = f"{s.start}, {s.stop}" + (f", {s.step}" if str(s.step) != "1" else "")
            c = f"    # {s.comment}" if s.comment else ""
            out.append(f"{pad}for {s.var} in range({rng}):{c}")
            _body(s.body, tiers, indent + 1, out)
        elif isinstance(s, If):
            c = f"    # {s.comment}" if s.comment else ""
            out.append(f"{pad}if {s.cond}:{c}")
            _body(s.body, tiers, indent + 1, out)
        elif isinstance(s, Let):
            out.append(f"{pad}{s.var} = {s.value}")
        else:
            out.append(pad + instr_text(s, tiers))


# the text of a kernel below its gm line, by the kernel object: lower() reuses the kernels it emitted for
# a config before (pass viewers print the same kernels after every knob move), and a frozen Kernel's text
# never changes; the entry holds the kernel, so its id stays its own
_TEXT: OrderedDict[int, tuple[Kernel, str]] = OrderedDict()
_TEXT_MAX = 128


def format_kernel(k: Kernel, prog: Program | None = None) -> str:
    out = [f"kernel {k.name}  family={k.family}  type={k.kernel_type}  block_dim={k.block_dim}"]
    if prog is not None:
        gm = []
        for p in k.params:
            t = prog.tensor(p)
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
    tiers = {b.name: b.tier for b in k.buffers}
    out = [""]
    if k.tiling:
        out.append("  tiling  " + " ".join(f"{n}={v}" for n, v in k.tiling))
    for b in k.buffers:
        q = b.queue.value if b.queue else "TBuf"
        what = f"  # {b.purpose}" if b.purpose else ""
        out.append(f"  buf     {b.core.value}.{b.tier.value:<3} {b.name}[{b.rows},{b.cols}]{_SHORT[b.dtype]}"
                   f" x{b.depth} {q}  ({b.nbytes:,} B){what}")
    for note in k.notes:
        out.append(f"  note    {note}")
    if k.aic:
        out.append("  aic:")
        _body(k.aic, tiers, 2, out)
    if k.aiv:
        n = f" x{k.vec_per_block}" if k.vec_per_block > 1 else ""
        out.append(f"  aiv{n}:")
        _body(k.aiv, tiers, 2, out)
    return "\n".join(out)


def format_program(p: Program) -> str:
    """The TileIR text of a Program (what the pass viewer shows)."""
    from ..core.checks import need

    p = need(p, Program, "format_program")
    head = [f"program {p.name}  target={p.target}  {'fused' if p.fused else 'unfused'}  "
            f"kernels={len(p.kernels)}"]
    for t in p.tensors:
        head.append(f"  gm {t.role:<12} {t.name}{_shape(t.shape)}{_SHORT[t.dtype]}  ({t.nbytes:,} B)")
    return "\n".join(head + [format_kernel(k, p) for k in p.kernels])

