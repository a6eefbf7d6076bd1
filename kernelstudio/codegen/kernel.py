"""`op_kernel/<name>.cpp`: the device kernel, a `Kernel<Name>` class over TPipe/TQue/TBuf with Init,
Process and the CopyIn/Compute/CopyOut methods cut from the TileIR (see phases.py), plus the
`extern "C" __global__ __aicore__` entry that reads the tiling data and runs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.dtypes import itemsize
from ..core.errors import UnsupportedError
from ..tileir.program import Kernel, Let, Program, Tier
from ..tileir.scratch import REDUCE_WORK, scratch_buffers
from . import cube, gating, layout, merge  # noqa: F401 (their rules join the tables)
from .attention import AttentionCubePart, is_attention
from .conv import gm_formats
from .naming import names_of, param_names
from .phases import Call, Inline, MethodDef, Plan, bound_members, buffers_of, plan_body
from .scope import Scope, control_head
from .vector import Method, emit_instr
from .writer import Writer, ctype

__all__ = ["kernel_source", "kernel_text", "head_comments", "KernelText", "launch_lines", "kernel_params",
           "KERNEL_TYPES"]

KERNEL_TYPES = {"AIV_ONLY": "KERNEL_TYPE_AIV_ONLY", "AIC_ONLY": "KERNEL_TYPE_AIC_ONLY",
                "MIX_AIC_1_2": "KERNEL_TYPE_MIX_AIC_1_2"}

HELPERS = """\
#ifndef KS_MIN
#define KS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define KS_MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
"""


def kernel_params(prog: Program, k: Kernel) -> list[str]:
    """GM tensors passed as kernel arguments (workspaces live in the system `workspace` argument)."""
    return [p for p in k.params if prog.tensor(p).role != "workspace"]


def workspace_layout(prog: Program, k: Kernel) -> dict[str, int]:
    """Byte offset of each workspace tensor inside the user workspace (512-byte aligned)."""
    out, off = {}, 0
    for p in k.params:
        t = prog.tensor(p)
        if t.role == "workspace":
            out[p] = off
            off += (t.nbytes + 511) // 512 * 512
    return out


class _Uses:
    """`buffers_of` each statement, found once for the kernel source (the members and the TBuf Gets ask)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[object, set[str]]] = {}  # id -> (the statement, held; its buffers)

    def __call__(self, s: object) -> set[str]:
        hit = self._seen.get(id(s))
        if hit is None or hit[0] is not s:
            hit = self._seen[id(s)] = (s, buffers_of(s))
        return hit[1]


def _plan(scope: Scope, stmts: tuple, uses: _Uses) -> tuple[Plan, list[MethodDef]]:
    plan, methods = plan_body(stmts, scope.static_env)
    queued = {b.name for b in scope.kernel.buffers if b.queue is not None and b.tier is Tier.UB}
    scope.members |= bound_members(plan, queued, uses)
    return plan, methods


def _emit_plan(plan: Plan, scope: Scope, w: Writer, m: Method) -> None:
    """Process() statements (loops, lets, ifs, method calls, inline instructions)."""
    for node in plan:
        if isinstance(node, Let):
            w(f"const {scope.index_t} {scope.var(node.var)} = {scope.expr(node.value)};")
        elif isinstance(node, Call):
            md = node.method
            w(f"{md.name}({', '.join(scope.var(p) for p in md.params)});")
        elif isinstance(node, Inline):
            for s in node.stmts:
                emit_instr(s, m)
        else:
            stmt, children = node
            w(control_head(stmt, scope))
            with w.indented():
                _emit_plan(children, scope, w, m)
            w("}")


def _walk_plan(plan: Plan):
    for node in plan:
        if isinstance(node, tuple):
            yield from _walk_plan(node[1])
        else:
            yield node


def _method(md: MethodDef, scope: Scope, w: Writer, uses: _Uses) -> None:
    params = ", ".join(f"{scope.index_t} {scope.var(p)}" for p in md.params)
    with w.block(f"__aicore__ inline void {md.name}({params})"):
        m = Method(scope, w, taken={scope.var(p) for p in md.params})
        _get_tbufs(scope, w, md.body, uses)
        for s in md.body:
            emit_instr(s, m)
    w("")


def _get_tbufs(scope: Scope, w: Writer, stmts, uses: _Uses) -> None:
    """`LocalTensor<T> x = xBuf.Get<T>();` for the TBuf scratch the statements use."""
    used: set[str] = set()
    for s in stmts:
        used |= uses(s)
    for b in scope.kernel.buffers:
        if b.name in used and b.queue is None and b.tier is Tier.UB:
            t = ctype(b.dtype)
            w(f"AscendC::LocalTensor<{t}> {scope.tensor_name(b.name)} = {scope.que_name(b.name)}.Get<{t}>();")


class _Parts:
    """Pieces of the class collected while emitting: members, Init lines, public/private methods."""

    def __init__(self) -> None:
        self.members = Writer()
        self.init = Writer()
        self.methods = Writer()


def _vector_program(scope: Scope, parts: _Parts, name: str) -> None:
    """The AIV program as `name()` plus its phase methods."""
    uses = _Uses()
    plan, methods = _plan(scope, scope.kernel.aiv, uses)
    body = Writer()
    inline = [s for node in _walk_plan(plan) if isinstance(node, Inline) for s in node.stmts]
    _get_tbufs(scope, body, inline, uses)
    _emit_plan(plan, scope, body, Method(scope, body))
    with parts.methods.block(f"__aicore__ inline void {name}()"):
        parts.methods.extend(body)
    parts.methods("")
    for md in methods:
        _method(md, scope, parts.methods, uses)


def _buffers(scope: Scope, parts: _Parts, depth_const: int) -> None:
    k = scope.kernel
    for b in k.buffers:
        if b.tier is not Tier.UB:
            continue
        t = ctype(b.dtype)
        size = f"{b.slot_bytes}"
        what = f"  // {b.rows} x {b.cols} {t}" + (f": {b.purpose}" if b.purpose else "")
        if b.queue is None:
            parts.members(f"AscendC::TBuf<AscendC::QuePosition::VECCALC> {scope.que_name(b.name)};")
            parts.init(f"pipe.InitBuffer({scope.que_name(b.name)}, {size});{what}")
        else:
            depth = "BUFFER_NUM" if b.depth == depth_const else str(b.depth)
            parts.members(f"AscendC::TQue<AscendC::QuePosition::{b.queue.value}, {depth}> "
                          f"{scope.que_name(b.name)};")
            parts.init(f"pipe.InitBuffer({scope.que_name(b.name)}, {depth}, {size});{what}")
    for buf in sorted(scope.members):
        parts.members(f"AscendC::LocalTensor<{ctype(scope.buffer(buf).dtype)}> {scope.tensor_name(buf)};")
    # scratch TBufs are decided by lowering's scratch_buffers (so its UB check counts them); the
    # statements emitted above only asked for them, and each request must fit what was decided
    decided = scratch_buffers(k)
    asked = dict(scope.scratch)
    if scope.work:
        asked[REDUCE_WORK] = (max(n * itemsize(dt) for dt, n in scope.work.items()), "reduce")
    for member, (nbytes, _) in asked.items():
        if member not in decided or decided[member][0] < nbytes:
            have = decided.get(member, (0, ""))[0]
            raise UnsupportedError(f"kernel {k.name}: the emitted code needs {nbytes} B of scratch {member} but "
                                   f"lowering planned {have} B; this is a bug in kernelstudio, please report it")
    for member, (nbytes, purpose) in sorted(decided.items()):
        parts.members(f"AscendC::TBuf<AscendC::QuePosition::VECCALC> {member};")
        parts.init(f"pipe.InitBuffer({member}, {nbytes});  // {purpose}")


def _globals(prog: Program, scope: Scope, parts: _Parts, args: dict[str, str]) -> None:
    k = scope.kernel
    ws = workspace_layout(prog, k)
    if ws:
        parts.init("GM_ADDR usrWorkspace = AscendC::GetUserWorkspace(workspace);")
    formats = gm_formats(prog, k)  # conv operands arrive in NC1HWC0 / FRACTAL_Z (padded) buffers
    for p in k.params:
        t = prog.tensor(p)
        c = ctype(t.dtype)
        g = scope.gm_name(p)
        parts.members(f"AscendC::GlobalTensor<{c}> {g};")
        base = f"usrWorkspace + {ws[p]}" if p in ws else args[p]
        size, fmt = (formats[p].elements, f"  // {formats[p].format}") if p in formats else (t.size, "")
        rt = scope.runtime
        if rt is not None and p in rt.tensors:  # its rows are the launch's
            per = (formats[p].elements if p in formats else t.size) // dict(k.tiling)[rt.rows]
            size = f"{scope.var(rt.rows)} * {per}"
        elif rt is not None and p in ws and rt.ws_per_core:  # one slot block per core of the launch
            size = f"{scope.var('block_dim')} * {t.size // t.shape[0]}"
        parts.init(f"{g}.SetGlobalBuffer((__gm__ {c}*)({base}), {size});{fmt}")


def _block_vars(scope: Scope, parts: _Parts) -> None:
    k = scope.kernel
    parts.members("int32_t blockIdx;", "int32_t subBlockIdx;", "int32_t blockNum;")
    if k.kernel_type == "MIX_AIC_1_2":
        parts.init("if ASCEND_IS_AIV {",
                   "    blockIdx = AscendC::GetBlockIdx() / AscendC::GetTaskRation();  // AIVs count 2 per block",
                   "} else {", "    blockIdx = AscendC::GetBlockIdx();", "}")
    else:
        parts.init("blockIdx = AscendC::GetBlockIdx();")
    parts.init("subBlockIdx = AscendC::GetSubBlockIdx();", "blockNum = AscendC::GetBlockNum();")


def entry_signature(prog: Program, k: Kernel) -> str:
    """`extern "C" __global__ __aicore__ void <op>(GM_ADDR ..., GM_ADDR workspace, GM_ADDR tiling)`: the kernel's
    entry as op_kernel/<op>.cpp defines it and main.cpp declares it (they are separate translation units)."""
    params = kernel_params(prog, k)
    pnames = param_names(prog, k, params)
    args = "".join(f"GM_ADDR {pnames[p]}, " for p in params)
    return f'extern "C" __global__ __aicore__ void {names_of(prog, k).snake}({args}GM_ADDR workspace, GM_ADDR tiling)'


def head_comments(prog: Program, k: Kernel) -> list[str]:
    """The comment lines that open `op_kernel/<name>.cpp`: the operator, the design, its DSL ops and notes."""
    names = names_of(prog, k)
    lines = [f"// {names.op_type}: {k.family} kernel ({k.kernel_type}) for {prog.target}, generated by kernelstudio "
             f"(design {prog.name}, kernel {k.name})."]
    if names.note():
        lines.append(f"// {names.note()}")
    if k.ops:
        lines.append(f"// DSL ops: {', '.join(k.ops)}")
    return lines + [f"// {note}" for note in k.notes]


@dataclass(frozen=True)
class KernelText:
    """`op_kernel/<name>.cpp` in three parts: the file head (comments, includes, helpers), the kernel class
    (with its BUFFER_NUM) and the entry function."""

    head: str
    body: str
    entry: str

    @property
    def whole(self) -> str:
        return self.head + self.body + self.entry


_WORD = re.compile(r"\w")
_ID_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _reads(text: str, name: str) -> bool:
    """Whether identifier `name` occurs in `text` (lines joined by NUL) outside a `//` comment: where no other
    identifier runs into it (the word characters before it, if any, are no letters or underscores: `12M`
    reads M, `xM` and `x2M` do not; and no word character follows it)."""
    n = len(name)
    i = text.find(name)
    while i >= 0:
        if not _WORD.match(text, i + n):
            j = i
            while j and _WORD.match(text, j - 1):
                j -= 1
                if text[j] in _ID_START:
                    break
            else:
                if text.find("//", text.rfind("\x00", 0, i) + 1, i) < 0:
                    return True
        i = text.find(name, i + 1)
    return False


def read_fields(scope: Scope, *code: Writer) -> list[str]:
    """The tiling values the kernel's code reads (its members are copied in from the tiling data); the ones
    folded into literals everywhere (fixed dims, tiles along a fixed axis) are left out."""
    text = "\x00".join("\x00".join(w.lines) for w in code)
    return [n for n in scope.tiling if _reads(text, scope.field_name(n))]


def kernel_text(prog: Program, k: Kernel) -> KernelText:
    """The parts of `op_kernel/<name>.cpp` of one kernel (see KernelText)."""
    scope = Scope(prog, k)
    names = names_of(prog, k)
    cls = names.cls
    params = kernel_params(prog, k)
    pnames = param_names(prog, k, params)
    parts = _Parts()
    parts.members("AscendC::TPipe pipe;")
    depths = [b.depth for b in k.buffers if b.queue is not None and b.tier is Tier.UB]
    depth_const = max(depths) if depths else 1
    cube_part = (AttentionCubePart(scope) if is_attention(k) else cube.CubePart(scope)) if k.aic else None
    if k.aiv:
        _vector_program(scope, parts, "ProcessVector")
    if cube_part is not None:
        cube_part.emit(parts.members, parts.init, parts.methods)
    _globals(prog, scope, parts, pnames)
    _block_vars(scope, parts)
    at = len(parts.members.lines)  # the tiling members go here, once the code that reads them is known
    _buffers(scope, parts, depth_const)
    layout.topk_members(prog, k, parts.members, parts.init)
    read = read_fields(scope, parts.init, parts.methods)
    parts.members.lines[at:at] = [f"int32_t {scope.field_name(n)};" for n in read]

    w = Writer()
    w(*head_comments(prog, k))
    if cube_part is not None:
        # in this file, as CANN builds it: without it a MIX kernel's AIC turns into the Matmul server at
        # REGIST_MATMUL_OBJ and the AIVs wait for flags it never sets
        w("#ifndef ASCENDC_CUBE_ONLY",
          "#define ASCENDC_CUBE_ONLY  // the AIC drives Matmul itself; AIVs meet it via flags", "#endif")
    w('#include "kernel_operator.h"')
    if cube_part is not None:
        w('#include "lib/matmul_intf.h"')
    # no #include of op_host/<op>_tiling.h: the CANN build makes the tiling struct GET_TILING_DATA fills
    w("", *HELPERS.splitlines(), "")
    head, w = w.text(), Writer()
    w(f"constexpr int32_t BUFFER_NUM = {depth_const};  // queue depth: 2 = double buffering", "")
    args = "".join(f"GM_ADDR {pnames[p]}, " for p in params)
    tiling_t = names.tiling
    with w.block(f"class {cls}", "};"):
        w.level -= 1
        w("public:")
        with w.indented():
            w(f"__aicore__ inline {cls}() {{}}")
            w(f"template <typename TilingData>  // {tiling_t}, as GET_TILING_DATA fills it")
            with w.block(f"__aicore__ inline void Init({args}GM_ADDR workspace, const TilingData& tiling)"):
                for n in read:
                    f = scope.field_name(n)
                    w(f"{f} = static_cast<int32_t>(tiling.{f});")
                w.extend(parts.init)
            with w.block("__aicore__ inline void Process()"):
                if k.aic and k.aiv:
                    w("if ASCEND_IS_AIC {", "    ProcessCube();", "}", "if ASCEND_IS_AIV {",
                      "    ProcessVector();", "}")
                elif k.aic:
                    w("ProcessCube();")
                else:
                    w("ProcessVector();")
        w("", "private:")
        with w.indented():
            w.extend(parts.methods)
        w("private:")
        with w.indented():
            w.extend(parts.members)
        w.level += 1
    w("")
    body, w = w.text(), Writer()
    with w.block(entry_signature(prog, k)):
        w("GET_TILING_DATA(tilingData, tiling);")
        w(f"KERNEL_TASK_TYPE_DEFAULT({KERNEL_TYPES[k.kernel_type]});")
        w(*launch_lines(prog, k, cls))
    return KernelText(head, body, w.text())


def launch_lines(prog: Program, k: Kernel, cls: str) -> list[str]:
    """The entry function's lines that run the kernel class on the tiling data."""
    pnames = param_names(prog, k, kernel_params(prog, k))
    call = "".join(f"{pnames[p]}, " for p in kernel_params(prog, k))
    return [f"{cls} op;", f"op.Init({call}workspace, tilingData);", "op.Process();"]


def kernel_source(prog: Program, k: Kernel) -> str:
    """The whole `op_kernel/<name>.cpp` of one kernel."""
    return kernel_text(prog, k).whole

