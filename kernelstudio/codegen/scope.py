"""What an emitter needs to spell TileIR in C++: names of variables, tensors and buffers.

A `Scope` belongs to one kernel. It maps tiling constants to class members (camelCase), the block
and sub-block variables to members set in Init, loop and Let variables to locals, GM tensors to
`GlobalTensor` members (`xGm`) and buffers to their queue/TBuf members and bound `LocalTensor`s, named
after the tensor they carry as Ascend C samples do: `inQueueX` / `outQueueY` with `xLocal` / `yLocal`,
`tmpBufMean` for a kept value (`meanLocal`) and `tmpBufFull1` for pooled scratch (`tmpFull1Local`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.dtypes import BLOCK_BYTES, block_bytes, itemsize
from ..core.errors import UnsupportedError
from ..core.names import C_SYMBOLS
from ..tileir.expr import (
    Bin,
    Const,
    Expr,
    Var,
    has_load,
    is_multiple,
    simplify,
    static_value,
    to_c,
)
from ..tileir.hints import RuntimeRows
from ..tileir.memo import KernelMemo
from ..tileir.program import Buffer, If, Kernel, Let, Loop, Program, Region, Tier, walk
from .writer import Writer, camel, ctype

__all__ = ["Scope", "BLOCK_VARS", "static_value", "is_multiple", "runtime_rows"]

ZERO = Const(0)

# Names a TileIR variable or a kernel must not take in C++: types, keywords, the class's own members,
# and the C library / C++ / Ascend C symbols of `kernelstudio.core.names.C_SYMBOLS`.
RESERVED = C_SYMBOLS | frozenset({
    "half", "float", "int", "double", "char", "bool", "auto", "const", "for", "if", "else", "while", "do",
    "return", "class", "struct", "new", "delete", "this", "private", "public", "template", "typename",
    "default", "case", "switch", "break", "continue", "static", "signed", "unsigned", "short", "long",
    "void", "pipe", "tiling", "workspace", "blockIdx", "subBlockIdx", "blockNum", "matmulObj", "cubeTiling",
    "operator", "namespace", "using", "register", "volatile", "union", "enum", "goto", "sizeof",
    "matmul", "AscendC", "optiling", "ops", "main", "std", "ks_twin",
})

# Largest element offset 32-bit index arithmetic holds. Kernels touching a bigger GM tensor compute
# GM offsets and Let values in int64_t (vector kernels) or are refused (see Scope.__post_init__).
INDEX_LIMIT = 2**31 - 1
TILING_LIMIT = 2**31 - 1  # tiling constants are 32-bit fields

# TileIR variables bound by the launch, not by the program: block index and AIV sub-block index.
BLOCK_VARS = {"blk": "blockIdx", "sub": "subBlockIdx"}


def runtime_rows(prog: Program) -> RuntimeRows | None:
    """The run-time row count of the program's code, when it takes one: programs of one kernel (the GM
    intermediates of a chain of kernels would need shapes computed at run time too) that is a row-tiled
    vector kernel or a matmul kernel whose rows are A's leading dims (`Kernel.runtime_rows`)."""
    return prog.kernels[0].runtime_rows if len(prog.kernels) == 1 else None


# The per-kernel facts every Scope of one kernel starts from (the kernel source, its tiling header, TilingFunc
# and launcher each make one): [(program, kernel, facts)] for the last few kernels, each held, so `is` cannot
# meet a new object at a reused address. A kernel the code generator refuses is not kept (it raises again).
_FACTS: list[tuple[Program, Kernel, tuple]] = []


def _facts(prog: Program, kernel: Kernel) -> tuple:
    for p, k, f in _FACTS:
        if p is prog and k is kernel:
            return f
    f = _find_facts(prog, kernel)
    _FACTS[:] = [*_FACTS[-7:], (prog, kernel, f)]
    return f


def _find_facts(prog: Program, k: Kernel) -> tuple:
    """(tiling, runtime rows, static env, None (the Let values, found when asked), buffers by name, tiling field
    names, member names, wide,
    every buffer's LocalTensor name)."""
    tiling = dict(k.tiling)
    runtime = runtime_rows(prog)
    # what the code may fold into literals: every tiling value but those it reads at run time
    static_env = {n: v for n, v in tiling.items() if n not in runtime.names} if runtime is not None else tiling
    fields = {n: camel(n) for n in tiling}
    members = _member_names(k, set(fields.values()) | {camel(p) + "Gm" for p in k.params})
    big = [t for t in prog.tensors if t.name in k.params and t.size > INDEX_LIMIT]
    if big:
        t = max(big, key=lambda t: t.size)
        where = f"kernel {k.name}: GM tensor {t.name} {list(t.shape)} has {t.size:,} elements (over 2^31 - 1)"
        if k.aic:
            raise UnsupportedError(f"{where}; generated cube kernels index GM with 32-bit offsets, so each "
                                   "tensor is limited to 2^31 - 1 elements; split the matmul/conv into launches")
        over = {n: v for n, v in tiling.items() if abs(v) > TILING_LIMIT}
        if over:
            n, v = next(iter(over.items()))
            raise UnsupportedError(f"{where}; its tiling value {n} = {v:,} does not fit the 32-bit tiling fields; "
                                   "reshape the tensor so no dimension passes 2^31 - 1, or split it into launches")
    local_names = frozenset(members[b.name][1] if b.name in members else camel(b.name) + "Local" for b in k.buffers)
    return (tiling, runtime, static_env, None, {b.name: b for b in k.buffers}, fields, members,
            bool(big), local_names)


@dataclass
class Scope:
    """Name resolution and per-kernel facts shared by the emitters of one kernel."""

    prog: Program
    kernel: Kernel
    tiling: dict[str, int] = field(init=False)
    locals_: dict[str, str] = field(default_factory=dict)  # buffer -> bound LocalTensor name
    members: set[str] = field(default_factory=set)  # buffers whose LocalTensor is a class member
    work: dict[str, int] = field(default_factory=dict)  # dtype -> elements of reduce scratch
    scratch: dict[str, tuple[int, str]] = field(default_factory=dict)  # TBuf member -> (bytes, purpose)

    def __post_init__(self) -> None:
        (self.tiling, self.runtime, self.static_env, self._lets, self._buffers, self._fields, self._members,
         self.wide, self._local_names) = _facts(self.prog, self.kernel)
        self._texts: dict[Expr, str] = {}  # expr() answers: equal expressions print alike in one scope

    @property
    def index_t(self) -> str:
        """The C++ type of Let values and method parameters: int64_t once GM offsets pass 2^31."""
        return "int64_t" if self.wide else "int32_t"

    # ---- variables -----------------------------------------------------------------------------
    def field_name(self, tiling_name: str) -> str:
        return self._fields[tiling_name]

    def var(self, name: str) -> str:
        if name in self._fields:
            return self._fields[name]
        if name in BLOCK_VARS:
            return BLOCK_VARS[name]
        if name == "block_dim":
            return "blockNum"
        return local_name(name)

    def expr(self, e: Expr) -> str:
        """C++ text of an index expression (tiling constants read from class members)."""
        t = type(e)
        if t is Const:
            return str(e.value)
        if t is Var:
            return self.var(e.name)
        text = self._texts.get(e)
        if text is None:
            text = self._print(simplify(e), e)
        return text

    def _print(self, folded: Expr, key: Expr) -> str:
        """The text of `folded` (`key` simplified), kept for `key` unless it reads a buffer."""
        text = to_c(folded, self.var, self._load)
        if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
            text = text[1:-1]
        if not has_load(key):  # a Load prints the LocalTensor bound where it is read
            self._texts[key] = text
        return text

    def _load(self, buf: str, index: str) -> str:
        return f"{self.tensor_name(buf)}.GetValue({index})"

    def static(self, e: Expr) -> int | None:
        return static_value(e, self.static_env)

    def multiple(self, e: Expr, n: int) -> bool:
        """Whether `e` is a multiple of `n` for every value of its loop variables, reading through the
        kernel's Lets (a variable every binding of which is a multiple is one)."""
        return self._multiple(e, n, frozenset())

    def _multiple(self, e: Expr, n: int, seen: frozenset[str]) -> bool:
        if is_multiple(e, n, self.static_env):
            return True
        if type(e) is Var:
            if self._lets is None:  # found when first read: most kernels' checks never reach a Let
                self._lets = _let_values(self.kernel)
            values = self._lets.get(e.name)
            return bool(values) and e.name not in seen and all(
                self._multiple(v, n, seen | {e.name}) for v in values)
        if type(e) is Bin:
            if e.op in ("+", "-", "min", "max"):
                return self._multiple(e.a, n, seen) and self._multiple(e.b, n, seen)
            if e.op == "*":
                return self._multiple(e.a, n, seen) or self._multiple(e.b, n, seen)
        return False

    # ---- tensors -------------------------------------------------------------------------------
    def buffer(self, name: str) -> Buffer:
        try:
            return self._buffers[name]
        except KeyError:
            raise UnsupportedError(f"kernel {self.kernel.name}: statement names unknown buffer {name!r}") from None

    def dtype(self, r: Region) -> str:
        return self.prog.tensor(r.buf).dtype if r.gm else self.buffer(r.buf).dtype

    def ctype(self, r: Region) -> str:
        return ctype(self.dtype(r))

    def itemsize(self, r: Region) -> int:
        return itemsize(self.dtype(r))

    def gm_name(self, tensor: str) -> str:
        return camel(tensor) + "Gm"

    def que_name(self, buf: str) -> str:
        """The TQue / TBuf member of `buf` (`inQueueX`, `outQueueY`, `tmpBufMean`)."""
        if buf in self._members:
            return self._members[buf][0]
        b = self.buffer(buf)
        return camel(buf) + ("Que" if b.queue is not None else "Buf")

    def tensor_name(self, buf: str) -> str:
        """The LocalTensor bound to `buf` (`xLocal`)."""
        if buf in self.locals_:
            return self.locals_[buf]
        return self._members[buf][1] if buf in self._members else camel(buf) + "Local"

    def local_tensor_names(self) -> set[str]:
        """Every buffer's LocalTensor name (a method's fresh locals keep clear of them)."""
        if not self.locals_:  # the names the kernel's members give (found once per kernel)
            return set(self._local_names)
        return {self.tensor_name(b.name) for b in self.kernel.buffers}

    def at(self, r: Region, extra: Expr = ZERO) -> str:
        """`xGm[offset]` / `xLocal[offset]` for the region start (plus `extra` elements)."""
        return self.at_offset(r.buf, r.gm, r.offset, extra)

    def at_offset(self, buf: str, gm: bool, off: Expr, extra: Expr = ZERO) -> str:
        """`at` of a region of `buf` (GM or not) that starts at `off`."""
        base = self.gm_name(buf) if gm else self.tensor_name(buf)
        if type(extra) is not Const or extra.value != 0:
            off = Bin("+", off, extra)
        off = simplify(off)
        t = type(off)
        if t is Const and off.value == 0:
            return base
        if gm and self.wide:  # every variable widened first, so products cannot wrap at 2^31
            text = to_c(off, lambda v: f"static_cast<int64_t>({self.var(v)})", self._load)
            return f"{base}[{text}]"
        if t is Const or t is Var:
            return f"{base}[{self.expr(off)}]"
        text = self._texts.get(off)  # `off` is folded already (folding it again changes nothing)
        return f"{base}[{self._print(off, off) if text is None else text}]"

    def is_ub(self, r: Region) -> bool:
        return not r.gm and self.buffer(r.buf).tier is Tier.UB

    def need_work(self, dtype: str, elems: int) -> None:
        """Ask for reduce scratch of `elems` elements of `dtype` (the kernel gets one TBuf)."""
        self.work[dtype] = max(self.work.get(dtype, 0), elems)

    def need_scratch(self, member: str, nbytes: int, purpose: str) -> str:
        """Ask for a VECCALC TBuf named `member` of at least `nbytes` (32-byte rounded); returns `member`."""
        old = self.scratch.get(member, (0, purpose))[0]
        self.scratch[member] = (max(old, block_bytes(nbytes), BLOCK_BYTES), purpose)
        return member


def control_head(stmt: Loop | If, scope: Scope) -> str:
    """`for (...) {  // comment` or `if (...) {  // comment` for a TileIR loop or if."""
    c = f"  // {stmt.comment}" if stmt.comment else ""
    if isinstance(stmt, Loop):
        v, step = scope.var(stmt.var), scope.expr(stmt.step)
        inc = f"++{v}" if step == "1" else f"{v} += {step}"
        return f"for (int32_t {v} = {scope.expr(stmt.start)}; {v} < {scope.expr(stmt.stop)}; {inc}) {{{c}"
    return f"if ({scope.expr(stmt.cond)}) {{{c}"


_VIEWS = ("full", "row", "col", "scalar")


def _pascal(name: str) -> str:
    c = camel(name)
    return c[0].upper() + c[1:]


def _candidates(b: Buffer) -> list[tuple[str, str]]:
    """(member, LocalTensor) names of a UB buffer, best first: from the tensor it carries where
    lowering says so (`in_x` -> inQueueX / xLocal), then its plain `<buffer>Que/Buf` names."""
    name = b.name
    head, _, rest = name.partition("_")
    plain = (camel(name) + ("Que" if b.queue is not None else "Buf"), camel(name) + "Local")
    if b.queue is not None:
        if b.queue.value in ("VECIN", "VECOUT") and head in ("in", "out") and rest:
            return [(f"{head}Queue{_pascal(rest)}", camel(rest) + "Local"), plain]
        return [plain]
    if head == "acc" and rest:  # a value kept across chunks: acc_<tensor>_<view>
        stem, _, view = rest.rpartition("_")
        out = [(f"tmpBuf{_pascal(stem)}", camel(stem) + "Local")] if stem and view in _VIEWS else []
        return [*out, (f"tmpBuf{_pascal(rest)}", camel(rest) + "Local"), plain]
    if head.startswith("tmp") and head[3:].isdigit() and rest in _VIEWS:  # pooled scratch: tmp<N>_<view>
        return [(f"tmpBuf{_pascal(rest)}{head[3:]}", f"tmp{_pascal(rest)}{head[3:]}Local"), plain]
    return [(f"tmpBuf{_pascal(name)}", camel(name) + "Local"), plain]


_NAMED = KernelMemo()


def _member_names(k: Kernel, taken: set[str]) -> dict[str, tuple[str, str]]:
    """(member, LocalTensor) of every UB buffer of `k`: queues choose first, then kept values, then
    scratch; each takes its first candidate that no other buffer (nor `taken`: GM and tiling members,
    scratch TBufs, reserved names) has. Named once per kernel (every Scope of a codegen asks)."""
    return dict(_NAMED.get((k.buffers, k.tiling), lambda: _name_members(k, taken), extra=frozenset(taken)))


def _name_members(k: Kernel, taken: set[str]) -> dict[str, tuple[str, str]]:
    from ..tileir.scratch import scratch_buffers

    ub = [b for b in k.buffers if b.tier is Tier.UB]
    used = set(taken) | set(scratch_buffers(k)) | RESERVED
    out: dict[str, tuple[str, str]] = {}
    for b in sorted(ub, key=lambda b: (b.queue is None, not b.name.startswith("acc_"))):
        cands = _candidates(b)
        m, loc = next((c for c in cands if c[0] not in used and c[1] not in used), cands[-1])
        used |= {m, loc}
        out[b.name] = (m, loc)
    return {b.name: out[b.name] for b in ub}


def local_name(name: str) -> str:
    """A loop or Let variable as a C++ local (renamed when it would hide a type or keyword)."""
    return name + "_" if name in RESERVED else name


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def declare(w: Writer, scope: Scope, buf: str, declared: set[str]) -> str:
    """`LocalTensor<T> x` the first time a method binds `buf` (class members are never redeclared)."""
    name = scope.tensor_name(buf)
    if buf in scope.members or buf in declared:
        return name
    declared.add(buf)
    return f"AscendC::LocalTensor<{ctype(scope.buffer(buf).dtype)}> {name}"


_LETS = KernelMemo()


def _let_values(k: Kernel) -> dict[str, tuple[Expr, ...]]:
    """Every value each Let variable of `k` is bound to; a name also used as a loop variable has none. Found
    once per kernel (every Scope of a codegen asks)."""
    return _LETS.get((k.aic, k.aiv), lambda: _find_let_values(k))


def _find_let_values(k: Kernel) -> dict[str, tuple[Expr, ...]]:
    values: dict[str, list[Expr]] = {}
    loops: set[str] = set()
    for s in walk((*k.aic, *k.aiv)):
        if isinstance(s, Let):
            values.setdefault(s.var, []).append(s.value)
        elif isinstance(s, Loop):
            loops.add(s.var)
    return {n: tuple(v) for n, v in values.items() if n not in loops}
