"""The cube-core (AIC) program as Matmul high-level API calls.

Convolution kernels (an Img2Col in the AIC program) use the cube basic API instead: see conv.py.

The TileIR's AIC program walks C tiles; per tile it runs a k loop of GM->L1 (nd2nz), L1->L0A/L0B
and Mmad into L0C, then one FixPipe copy L0C->GM (the output, or the workspace the AIVs read) and
maybe a `CrossSet`. The Matmul object runs exactly that k loop and FixPipe itself, so per C tile we
emit

    matmulObj.SetTensorA(aGm[<A offset at k = 0>], transA);
    matmulObj.SetTensorB(bGm[<B offset at k = 0>], transB);
    matmulObj.SetTail(<m>, <n>, K);
    matmulObj.IterateAll(cGm[<C offset>]);  matmulObj.End();

(or, when C goes to a dense workspace slot of one base tile, `Iterate(); GetTensorC(slot, 0, true)`).
A group of C tiles (l1_c_steps: the TileIR's `gi` / `gj` loops, operands resident in L1 across the
group) is one such call for the whole group: SetTail(group rows, group columns, K) and IterateAll at
the group's corner; the Matmul walks the group's base tiles n inner (iterateOrder 1) and keeps the
slabs stepM/stepN/stepKa/stepKb say in L1 (the twin's Matmul copies them there and reads them only).
Types: AType/BType are the operands' element type and CType the matmul's dtype. float16/bfloat16/
float32 operands accumulate in float32 in L0C and FixPipe converts to CType (half, bfloat16_t or
float); int8_t operands accumulate in int32 and CType is int32_t (no quantization in FixPipe: a
dequantizing `cast(..., scale=)` becomes Cast int32 -> float, Muls and Cast on the AIV side).

The generated code keeps the TileIR's tile loops, Lets, Ifs and cross-core flags as they are. Statements that only
feed the cube (L1/L0 copies, queue operations on cube buffers, Mmad, the k loop) are absorbed.
The kernel is compiled with `ASCENDC_CUBE_ONLY`, so the AIC itself drives the Matmul (no AIV
client/server messages) and the AIVs meet it through the workspace and cross-core flags.

Our tile knobs map onto `TCubeTiling` (filled by the host TilingFunc, see `cube_tiling`):

| TCubeTiling                  | from the TileIR                                              |
|------------------------------|--------------------------------------------------------------|
| M, N, Ka = Kb                | tiling "M", "N", "K" (problem size of one batch)             |
| singleCoreM / singleCoreN    | tiling "tile_m" / "tile_n" (x "step_m" / "step_n": a group)  |
| singleCoreK                  | K: the whole reduction per C tile (our k loop)               |
| baseM, baseK / dbL0A         | L0A buffer rows, cols / depth (rounded up to 16 / 32 bytes)  |
| baseN / dbL0B                | L0B buffer rows ("nk") or cols ("kn") / depth                |
| dbL0C                        | L0C buffer depth                                             |
| stepKa, stepKb               | tiling "step_ka" / "step_kb": k tiles per L1 load (l1_k_steps)|
| depthA1, depthB1             | base blocks in L1: slots (l1_depth) x stepKa / stepKb x stepN|
| stepM                        | 1: A's L1 slab holds one base block of M (one tile row)      |
| stepN                        | "step_n" when B's panel spans the group (step_m > 1), else 1 |
| iterateOrder                 | 1 (n inner) for groups, else 0 (one base tile per call)      |
| usedCoreNum                  | kernel block_dim                                             |
| isBias                       | 0: bias is an epilogue vector op in our programs             |

A's or C's rows further apart in GM than K / N (a per-head matmul, `batch_axis=1`: each head a column band of
[M, heads * K] and [M, heads * N]) are told to the Matmul object by the kernel-side
`SetOrgShape(orgM, orgN, orgKa, orgKb, orgKc)` after REGIST_MATMUL_OBJ: orgKa is A's row width and orgKc C's
(0 or absent: B's N); the tiling keeps the problem's M, N, Ka = Kb.

A kernel that takes M at run time (`Kernel.runtime_rows`, see tiling_func.py) gets M and usedCoreNum from TilingFunc
at the run's values; the per-tile SetTail(mlen, ...) already covers the last, shorter tile row.

CANN's TCubeTiling has 50 int32 fields (`TCUBE_TILING_FIELDS`, in its order); the ones above are set by
name, listed in that order, and the rest stay 0. The host TilingFunc fills them with `set_<field>(v)` (the
host class is tiling data), main.cpp assigns the kernel struct's fields directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.dtypes import block_elems
from ..core.errors import UnsupportedError
from ..core.formats import NZ_FRACTAL
from ..tileir.expr import Bin, Const, E, Expr, Load, Var
from ..tileir.program import (
    Alloc,
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    If,
    Img2Col,
    Let,
    Loop,
    Mmad,
    Region,
    Stmt,
    SyncAll,
    Tier,
    walk,
)
from .conv import ConvPart, is_conv
from .scope import Scope, control_head
from .writer import Writer, ctype

__all__ = ["CubePart", "cube_tiling", "MatmulOperands", "TCUBE_TILING_FIELDS"]

CUBE_TIERS = (Tier.L1, Tier.L0A, Tier.L0B, Tier.L0C)
GROUP_LOOPS = ("gi", "gj")  # the TileIR's loops over the C tiles of an l1_c_steps group

# CANN's TCubeTiling, field by field in its order (50 int32: the kernel struct the tiling blob is copied
# into). `cube_tiling` sets a subset by name and lists it in this order; the rest stay 0 as on CANN.
TCUBE_TILING_FIELDS: tuple[str, ...] = (
    "usedCoreNum", "M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK", "baseM", "baseN", "baseK",
    "depthA1", "depthB1", "stepM", "stepN", "isBias", "transLength", "iterateOrder", "shareMode", "shareL1Size",
    "shareL0CSize", "shareUbSize", "batchM", "batchN", "singleBatchM", "singleBatchN", "stepKa", "stepKb",
    "depthAL1CacheUB", "depthBL1CacheUB", "dbL0A", "dbL0B", "dbL0C",
    "ALayoutInfoB", "ALayoutInfoS", "ALayoutInfoN", "ALayoutInfoG", "ALayoutInfoD",
    "BLayoutInfoB", "BLayoutInfoS", "BLayoutInfoN", "BLayoutInfoG", "BLayoutInfoD",
    "CLayoutInfoB", "CLayoutInfoS1", "CLayoutInfoN", "CLayoutInfoG", "CLayoutInfoS2", "BatchNum", "mxTypePara",
)


def subst(e: Expr, env: dict[str, Expr]) -> Expr:
    """`e` with variables replaced by expressions (used to pin k-loop variables to their start)."""
    if isinstance(e, Var):
        return subst(env[e.name], env) if e.name in env else e
    if isinstance(e, Bin):
        return Bin(e.op, subst(e.a, env), subst(e.b, env))
    if isinstance(e, Load):
        return Load(e.buf, subst(e.index, env))
    return e


@dataclass(frozen=True)
class MatmulOperands:
    """Where the Matmul object reads A and B and what it computes, found from the AIC program."""

    a: Region
    b: Region
    trans_a: bool
    trans_b: bool
    mmad: Mmad
    c_dtype: str


def _round(v: int, q: int) -> int:
    return max(q, (v + q - 1) // q * q)


def _cube_buffers(scope: Scope) -> set[str]:
    return {b.name for b in scope.kernel.buffers if b.tier in CUBE_TIERS}


def find_operands(scope: Scope, stmts: tuple[Stmt, ...]) -> MatmulOperands:
    """Trace Mmad's L0A/L0B operands back through L1 to their GM regions."""
    fed: dict[str, Region] = {}  # buffer -> region it was filled from
    mmads: list[Mmad] = []
    for s in walk(stmts):
        if isinstance(s, Copy) and not s.dst.gm:
            fed[s.dst.buf] = s.src
        elif isinstance(s, Img2Col):
            raise UnsupportedError(
                f"kernel {scope.kernel.name}: convolution (Img2Col) has no Matmul-API form; the code generator "
                "emits matmul-rooted cube kernels only")
        elif isinstance(s, Mmad):
            mmads.append(s)
    if not mmads:
        raise UnsupportedError(f"kernel {scope.kernel.name}: the cube program has no Mmad")
    mm = mmads[0]

    def gm_source(r: Region) -> Region:
        seen = 0
        while not r.gm:
            if r.buf not in fed or seen > 4:
                raise UnsupportedError(f"kernel {scope.kernel.name}: cannot trace cube operand {r.buf} to GM")
            r, seen = fed[r.buf], seen + 1
        return r

    return MatmulOperands(gm_source(mm.a), gm_source(mm.b), mm.a_layout == "km", mm.b_layout == "nk", mm, "")


# What the kernel source, its tiling header and its TilingFunc each ask of one matmul kernel, found once:
# [(program, kernel, {"ops": MatmulOperands, "tiling": TCubeTiling values, "org": org_shape, "c": C dtype})],
# the last few kernels (each held, so `is` cannot meet a new object at a reused address). Each answer is
# stored once computed, so one that raises is computed (and raises) again on the next ask.
_FACTS: list[tuple[object, object, dict]] = []


def _facts(scope: Scope) -> dict:
    prog, k = scope.prog, scope.kernel
    for p, kk, f in _FACTS:
        if p is prog and kk is k:
            return f
    f: dict = {}
    _FACTS[:] = [*_FACTS[-7:], (prog, k, f)]
    return f


def _operands(scope: Scope) -> MatmulOperands:
    f = _facts(scope)
    if "ops" not in f:
        f["ops"] = find_operands(scope, scope.kernel.aic)
    return f["ops"]


def cube_tiling(scope: Scope) -> dict[str, int]:
    """TCubeTiling field values for this kernel (see the module docstring for the mapping); none for conv
    kernels, whose cube part uses the basic API (conv.py)."""
    k = scope.kernel
    if is_conv(k.aic):
        return {}
    f = _facts(scope)
    if "tiling" not in f:
        f["tiling"] = _cube_tiling(scope)
    return dict(f["tiling"])


def _traced(r: Region, fed: dict[str, Region]) -> Region:
    """The GM region an operand was copied from, through the on-chip buffers that carried it."""
    while not r.gm:
        r = fed[r.buf]
    return r


def _cube_tiling(scope: Scope) -> dict[str, int]:
    k = scope.kernel
    t = scope.tiling
    bufs = {b.tier: b for b in k.buffers if b.tier in CUBE_TIERS and b.tier is not Tier.L1}
    l1 = [b for b in k.buffers if b.tier is Tier.L1]
    ops = _operands(scope)
    a_dt = scope.prog.tensor(ops.a.buf).dtype
    q = block_elems(a_dt)
    l0a, l0b, l0c = bufs.get(Tier.L0A), bufs.get(Tier.L0B), bufs.get(Tier.L0C)
    if l0a is None or l0b is None or l0c is None:
        raise UnsupportedError(f"kernel {k.name}: the cube program needs L0A, L0B and L0C buffers")
    m_, n_, k_ = _mnk(scope, ops)
    base_m = _round(l0a.cols if ops.trans_a else l0a.rows, 16)
    base_k = _round(l0a.rows if ops.trans_a else l0a.cols, q)
    base_n = _round(l0b.rows if ops.trans_b else l0b.cols, 16)
    step_ka, step_kb = t.get("step_ka", 1), t.get("step_kb", 1)
    # l1_c_steps: a group of step_m x step_n C tiles per call; B's panel spans the group's n tiles when
    # it is resident across several tile rows, A's panel is one tile row (the rows are walked in turn)
    group_m, group_n = t.get("step_m", 1), t.get("step_n", 1)
    step_n = group_n if group_m > 1 else 1
    # depthA1 / depthB1 count base blocks (baseM x baseK) held in L1: slots x k tiles per slab x stepM/N
    depth_a1 = step_ka * max((b.depth for b in l1 if b.queue is None or b.queue.value == "A1"), default=1)
    depth_b1 = step_kb * step_n * max((b.depth for b in l1 if b.queue is not None and b.queue.value == "B1"),
                                      default=1)
    values = {
        "usedCoreNum": k.block_dim, "M": m_, "N": n_, "Ka": k_, "Kb": k_,
        "singleCoreM": t.get("tile_m", m_) * group_m, "singleCoreN": t.get("tile_n", n_) * group_n,
        "singleCoreK": k_, "baseM": base_m, "baseN": base_n, "baseK": base_k,
        "depthA1": depth_a1, "depthB1": depth_b1, "stepM": 1, "stepN": step_n, "stepKa": step_ka, "stepKb": step_kb,
        "isBias": 0, "iterateOrder": 1 if group_m * group_n > 1 else 0,
        "dbL0A": l0a.depth, "dbL0B": l0b.depth, "dbL0C": l0c.depth,
    }
    return {f: values[f] for f in TCUBE_TILING_FIELDS if f in values}  # CANN's order, as the struct lists them


def org_shape(scope: Scope, ops: MatmulOperands, tiling: dict[str, int]) -> tuple[int, ...] | None:
    """(orgM, orgN, orgKa, orgKb, orgKc) for the kernel-side `SetOrgShape` when A's rows or C's rows lie further
    apart in GM than K / N (a per-head matmul: each head a column band of [M, heads * K] and [M, heads * N]);
    None when the tiling's M, N, Ka, Kb already describe the layout."""
    if not tiling:
        return None
    lda = scope.static(ops.a.stride)
    ldc = next((scope.static(s.dst.stride) for s in walk(scope.kernel.aic)
                if isinstance(s, Copy) and s.dst.gm and not s.src.gm), None)  # the FixPipe's C rows
    if lda is None:
        return None
    m_, n_, ka, kb = tiling["M"], tiling["N"], tiling["Ka"], tiling["Kb"]
    if ops.trans_a:
        if lda != m_:
            raise UnsupportedError(f"kernel {scope.kernel.name}: a transposed A whose k rows are {lda} elements "
                                   f"apart (M={m_}); the Matmul reads A^T rows of orgM")
        lda = ka
    if ldc is None or (ldc == tiling["baseN"] and ldc != n_):  # a dense workspace slot: the Matmul's own form
        ldc = n_
    if lda == ka and ldc == n_:
        return None
    return m_, n_, lda, kb, ldc


def _mnk(scope: Scope, ops: MatmulOperands) -> tuple[int, int, int]:
    t = scope.tiling
    if all(x in t for x in ("M", "N", "K")):
        return t["M"], t["N"], t["K"]
    a = scope.prog.tensor(ops.a.buf)
    b = scope.prog.tensor(ops.b.buf)
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise UnsupportedError(f"kernel {scope.kernel.name}: tiling needs M, N and K for the Matmul API")
    m_, k_ = (a.shape[-1], a.shape[-2]) if ops.trans_a else (a.shape[-2], a.shape[-1])
    n_ = b.shape[-2] if ops.trans_b else b.shape[-1]
    return m_, n_, k_


class CubePart:
    """Emits the AIC program (`ProcessCube`) and the Matmul object's members and registration; conv kernels
    (an Img2Col in the cube program) are emitted with the cube basic API by `conv.ConvPart` instead."""

    def __init__(self, scope: Scope):
        self.scope = scope
        self.conv = ConvPart(scope) if is_conv(scope.kernel.aic) else None
        if self.conv is not None:
            return
        self.ops = _operands(scope)
        self.cube_bufs = _cube_buffers(scope)
        self.tiling = cube_tiling(scope)
        f = _facts(scope)
        if "org" not in f:
            f["org"] = org_shape(scope, self.ops, self.tiling)
        self.org = f["org"]
        self.b_nz = scope.prog.tensor(self.ops.b.buf).format == "NZ"
        if self.b_nz and (self.ops.trans_b or self.org is not None or self.tiling["singleCoreN"] % NZ_FRACTAL):
            raise UnsupportedError(
                f"kernel {scope.kernel.name}: B {self.ops.b.buf!r} is FRACTAL_NZ, which the Matmul reads as an "
                f"untransposed [K, N] matrix in C tiles of whole {NZ_FRACTAL}-column bands (here transpose_b="
                f"{self.ops.trans_b}, singleCoreN={self.tiling['singleCoreN']}, orgShape={self.org}); schedule "
                f"tile_n as a multiple of {NZ_FRACTAL} or declare the weight format='ND'")

    # ---- members and Init ----------------------------------------------------------------------
    def emit(self, members: Writer, init: Writer, methods: Writer) -> None:
        if self.conv is not None:
            self.conv.emit(members, init, methods)
            return
        self.declare(members, init)
        w = methods
        with w.block("__aicore__ inline void ProcessCube()"):
            w("REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), matmulObj, &cubeTiling);")
            if self.org is not None:
                w("// A's rows are orgKa apart and C's orgKc apart in GM (each batch a column band of them)",
                  f"matmulObj.SetOrgShape({', '.join(str(v) for v in self.org)});")
            self._body(self.scope.kernel.aic, w)
        w("")

    def declare(self, members: Writer, init: Writer) -> None:
        """The Matmul object's types, the object and its TCubeTiling (members), the tiling copied in Init."""
        sc, ops = self.scope, self.ops
        a_t = ctype(sc.prog.tensor(ops.a.buf).dtype)
        b_t = ctype(sc.prog.tensor(ops.b.buf).dtype)
        c_t = ctype(self._c_dtype())
        b_fmt = "NZ" if self.b_nz else "ND"
        members(f"using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, {a_t}, "
                f"{str(ops.trans_a).lower()}>;",
                *(["// B is stored in GM as FRACTAL_NZ: the Matmul copies its fractals to L1 as they are"]
                  if self.b_nz else []),
                f"using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::{b_fmt}, {b_t}, "
                f"{str(ops.trans_b).lower()}>;",
                f"using CType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, {c_t}>;",
                "using BiasType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;",
                "matmul::Matmul<AType, BType, CType, BiasType> matmulObj;",
                "TCubeTiling cubeTiling;")
        init("cubeTiling = tiling.cubeTilingData;")

    def _c_dtype(self) -> str:
        f = _facts(self.scope)
        if "c" not in f:
            f["c"] = self._find_c_dtype()
        return f["c"]

    def _find_c_dtype(self) -> str:
        for s in walk(self.scope.kernel.aic):
            if isinstance(s, Copy) and s.dst.gm and not s.src.gm:
                return self.scope.prog.tensor(s.dst.buf).dtype
        raise UnsupportedError(f"kernel {self.scope.kernel.name}: the cube program never writes GM")

    # ---- the program ---------------------------------------------------------------------------
    def _feeds_cube(self, s: Stmt) -> bool:
        """Statements the Matmul object performs itself (each statement's answer found once)."""
        seen = self.__dict__.setdefault("_fed", {})  # id -> (the statement, held; its answer)
        hit = seen.get(id(s))
        if hit is None or hit[0] is not s:
            hit = seen[id(s)] = (s, self._find_feeds_cube(s))
        return hit[1]

    def _find_feeds_cube(self, s: Stmt) -> bool:
        if isinstance(s, (Alloc, EnQue, DeQue, Free)):
            return s.buf in self.cube_bufs
        if isinstance(s, (Mmad, Img2Col)):
            return True
        if isinstance(s, Copy):
            return not s.dst.gm
        if isinstance(s, (Loop, If)):
            return all(self._feeds_cube(x) or isinstance(x, Let) for x in s.body) and any(
                self._feeds_cube(x) for x in s.body)
        return False

    def _body(self, stmts: tuple[Stmt, ...], w: Writer) -> None:
        sc = self.scope
        absorbed: list[Stmt] = []
        for s in stmts:
            if self._feeds_cube(s):
                absorbed.append(s)
            elif isinstance(s, Copy) and s.dst.gm:
                self._iterate_all(s, tuple(absorbed), w)
                absorbed.clear()
            elif isinstance(s, Loop) and s.var in GROUP_LOOPS:
                self._group(s, tuple(absorbed), w)
                absorbed.clear()
            elif isinstance(s, Let):
                w(f"const int32_t {sc.var(s.var)} = {sc.expr(s.value)};")
            elif isinstance(s, (Loop, If)):
                w(control_head(s, sc))
                with w.indented():
                    self._body(s.body, w)
                w("}")
            elif isinstance(s, CrossSet):
                w(f"AscendC::CrossCoreSetFlag<0x2, PIPE_{s.pipe.value}>({s.flag});")
            elif isinstance(s, CrossWait):
                w(f"AscendC::CrossCoreWaitFlag({s.flag});")
            elif isinstance(s, SyncAll):
                w(f"// {s.comment}" if s.comment else "// every core of the launch meets here",
                  "AscendC::SyncAll<false>();")
            else:
                raise UnsupportedError(f"kernel {sc.kernel.name}: {type(s).__name__} on the cube core has no "
                                       "Matmul-API form")

    def _iterate_all(self, fix: Copy, absorbed: tuple[Stmt, ...], w: Writer) -> None:
        """One C tile: point the Matmul object at this tile's A, B and C and run it."""
        sc, ops = self.scope, self.ops
        env, mm, fed = self._scan(absorbed)
        a_off = subst(_traced(mm.a, fed).offset, env)
        b_off = self._b_at(subst(_traced(mm.b, fed).offset, env))
        m_, n_ = subst(mm.m, env), subst(mm.n, env)
        k_total = sc.var("K") if "K" in sc.tiling else str(self.tiling["Ka"])
        stride = sc.static(fix.dst.stride)
        ldc = self.org[4] if self.org is not None else self.tiling["N"]
        dense = stride == self.tiling["baseN"] and self.tiling["singleCoreM"] <= self.tiling["baseM"] and (
            self.tiling["singleCoreN"] <= self.tiling["baseN"])
        if stride != ldc and not dense:
            raise UnsupportedError(f"kernel {sc.kernel.name}: C rows {fix.dst.stride} elements apart; the "
                                   f"Matmul writes rows of orgKc={ldc} or one dense base tile")
        comment = fix.comment or mm.comment
        if comment:
            w(f"// {comment}")
        ta, tb = str(ops.trans_a).lower(), str(ops.trans_b).lower()
        a_at = sc.at(Region(ops.a.buf, a_off, Const(1), Const(1), Const(1), gm=True))
        b_at = sc.at(Region(ops.b.buf, b_off, Const(1), Const(1), Const(1), gm=True))
        w(f"matmulObj.SetTensorA({a_at}, {ta});",
          f"matmulObj.SetTensorB({b_at}, {tb});",
          f"matmulObj.SetTail({sc.expr(m_)}, {sc.expr(n_)}, {k_total});",
          *([f"matmulObj.IterateAll({sc.at(fix.dst)});"] if stride == ldc else [
              "matmulObj.Iterate();  // one base tile: written densely into the workspace slot",
              f"matmulObj.GetTensorC({sc.at(fix.dst)}, 0, true);"]),
          "matmulObj.End();")

    def _group(self, loop: Loop, absorbed: tuple[Stmt, ...], w: Writer) -> None:
        """A group of C tiles (l1_c_steps): one Matmul call at the group's corner for all its tiles."""
        sc, ops = self.scope, self.ops
        stmts = (*absorbed, loop)
        fix = next(s for s in walk(loop.body) if isinstance(s, Copy) and s.dst.gm)
        env, mm, fed = self._scan(stmts)
        for v in ("gm0", "gmlen", "gn0", "gnlen", "mlen"):  # the group's extent: C++ variables already
            env.pop(v, None)
        a_off = subst(_traced(mm.a, fed).offset, env)
        b_off = self._b_at(subst(_traced(mm.b, fed).offset, env))
        if sc.static(fix.dst.stride) != (self.org[4] if self.org is not None else self.tiling["N"]):
            raise UnsupportedError(f"kernel {sc.kernel.name}: a group of C tiles writes rows {fix.dst.stride} "
                                   f"elements apart; the Matmul writes a group into rows of N={self.tiling['N']}")
        rows = Var("gmlen") if loop.var == "gi" else Var("mlen")
        k_total = sc.var("K") if "K" in sc.tiling else str(self.tiling["Ka"])
        w(f"// {loop.comment}" if loop.comment else "// a group of C tiles")
        def at(buf: str, off: Expr) -> str:
            return sc.at(Region(buf, off, Const(1), Const(1), Const(1), gm=True))

        w(f"matmulObj.SetTensorA({at(ops.a.buf, a_off)}, {str(ops.trans_a).lower()});",
          f"matmulObj.SetTensorB({at(ops.b.buf, b_off)}, {str(ops.trans_b).lower()});",
          f"matmulObj.SetTail({sc.expr(rows)}, {sc.expr(Var('gnlen'))}, {k_total});",
          f"matmulObj.IterateAll({at(fix.dst.buf, subst(fix.dst.offset, env))});",
          "matmulObj.End();")

    def _b_at(self, off: Expr) -> Expr:
        """B's GM offset for SetTensorB: `off` (row k = 0, column n0 of the logical [K, N]) as it is for ND; for
        FRACTAL_NZ the start of column band n0 / 16, K x 16 elements each (n0 is a whole band: checked in __init__)."""
        if not self.b_nz:
            return off
        return E.mul(off, self.scope.prog.tensor(self.ops.b.buf).shape[0])

    def _scan(self, absorbed: tuple[Stmt, ...]) -> tuple[dict[str, Expr], Mmad, dict[str, Region]]:
        """One walk of a C tile's statements: each Let's value and loop's start (the tile's k = 0), the first
        Mmad, and the region each on-chip buffer was last filled from."""
        env: dict[str, Expr] = {}
        fed: dict[str, Region] = {}
        mm: Mmad | None = None
        for s in walk(absorbed):
            if isinstance(s, Let):
                env[s.var] = s.value
            elif isinstance(s, Loop):
                env[s.var] = s.start
            elif isinstance(s, Copy):
                if not s.dst.gm:
                    fed[s.dst.buf] = s.src
            elif mm is None and isinstance(s, Mmad):
                mm = s
        if mm is None:
            raise UnsupportedError(f"kernel {self.scope.kernel.name}: a FixPipe copy with no Mmad before it")
        return env, mm, fed
