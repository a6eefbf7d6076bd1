"""The cube-core (AIC) program of the fused attention kernel (lower/attention.py) as two Matmul objects.

The kernel's AIC program walks (batch*head, S1 block) tasks and, per S2 block, runs two matmuls of different
shapes and layouts, each a loop over 128-column cube tiles (`ki`) in the TileIR:

| TileIR                                   | Ascend C                                                         |
|------------------------------------------|------------------------------------------------------------------|
| bmm1 `ki` loop: K tiles, Mmad, FixPipe   | `mm1`: A = Q (rows D apart), B = K transposed, C = the S slot    |
|   S = Q K^T into ws_s (rows S2-block)    |   (rows s2_block apart); SetTail(mlen, nlen, D), IterateAll      |
| bmm2 `ki` loop + FixPipe: P V into ws_o  | `mm2`: A = P in its workspace slot (rows s2_block apart), B = V, |
|                                          |   C = the P V slot (rows D apart); SetTail(mlen, D, nlen)        |
| L1/L0 copies, cube queue operations      | performed by the Matmul objects themselves                       |
| Lets, loops, ifs, cross-core flags       | as they are                                                      |
| SyncAll (a split key/value sequence)     | `SyncAll<false>()`: every AIC and AIV, before the combine        |

Where the kernel reads the user's BSND / BSH tensors in place (lower/attention.py `attention_views`), the rows of
Q, K and V lie N * D apart: `org_shapes` gives each object's kernel-side `SetOrgShape` after the registration (mm1:
orgKa = Q's row stride, orgKb = K's; mm2: orgN = V's row stride, orgKc = D for its C), as `batch_axis=1`
matmuls do (codegen/cube.py).

Both objects are registered together (`REGIST_MATMUL_OBJ(&pipe, ws, mm1, &cubeTiling, mm2, &cubeTiling2)`), each
with its TCubeTiling (`attention_tilings`): mm1 M = S1 block, N = S2 block, K = D; mm2 M = S1 block, N = D,
K = S2 block; base blocks 128 x 128 x D and 128 x D x 128. The AIV program (the online softmax) is written by the
vector code generator like any other.
"""

from __future__ import annotations

from ..core.errors import UnsupportedError
from ..tileir.expr import Const, Var
from ..tileir.program import Copy, CrossSet, CrossWait, If, Kernel, Let, Loop, Mmad, Region, Stmt, SyncAll, walk
from .cube import TCUBE_TILING_FIELDS, MatmulOperands, subst
from .scope import Scope, control_head
from .writer import Writer, ctype

__all__ = ["is_attention", "attention_tilings", "attention_operands", "AttentionCubePart", "SECOND_TILING",
           "head_dim", "org_shapes"]

SECOND_TILING = "cubeTilingData2"  # the tiling struct's field of mm2's TCubeTiling


def is_attention(k: Kernel) -> bool:
    return k.does == "flash_attention"


def _loops(k: Kernel) -> tuple[Loop, Loop]:
    """The bmm1 and bmm2 `ki` loops of the AIC program (the first of each: the drain repeats bmm2)."""
    found: dict[str, Loop] = {}
    for s in walk(k.aic):
        if isinstance(s, Loop) and s.var == "ki":
            mm = next(x for x in walk(s.body) if isinstance(x, Mmad))
            found.setdefault("bmm1" if mm.b_layout == "nk" else "bmm2", s)
    if set(found) != {"bmm1", "bmm2"}:
        raise UnsupportedError(f"kernel {k.name}: an attention kernel's cube program has a bmm1 and a bmm2 loop")
    return found["bmm1"], found["bmm2"]


def _gm_reads(loop: Loop) -> list[Region]:
    return [s.src for s in walk(loop.body) if isinstance(s, Copy) and s.src.gm]


def attention_operands(scope: Scope) -> tuple[MatmulOperands, MatmulOperands]:
    """What mm1 and mm2 read: (A, B) GM regions at the first cube tile, transposes and the Mmad."""
    k = scope.kernel
    l1, l2 = _loops(k)
    q = next(s.src for s in walk(k.aic) if isinstance(s, Copy) and s.src.gm and s.dst.buf == "q1")
    (kk,) = _gm_reads(l1)
    p, v = _gm_reads(l2)
    mm1 = next(x for x in walk(l1.body) if isinstance(x, Mmad))
    mm2 = next(x for x in walk(l2.body) if isinstance(x, Mmad))
    return (MatmulOperands(q, kk, False, True, mm1, "float32"), MatmulOperands(p, v, False, False, mm2, "float32"))


def head_dim(scope: Scope) -> int:
    """D: bmm1's reduction (the tensors' last dim is N * D in layout BSH)."""
    l1, _ = _loops(scope.kernel)
    mm1 = next(x for x in walk(l1.body) if isinstance(x, Mmad))
    d = scope.static(mm1.k)
    if d is None:
        raise UnsupportedError(f"kernel {scope.kernel.name}: the attention kernel's head dim is not a constant")
    return d


def org_shapes(scope: Scope) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """The kernel-side `SetOrgShape(orgM, orgN, orgKa, orgKb, orgKc)` of mm1 and mm2 where the user's tensors
    are read in place with rows further apart than D (layouts BSND / BSH: N * D): mm1's A (Q) rows orgKa apart
    and its transposed B (K) rows orgKb apart, C the S slot (rows of the S2 block, orgN); mm2's B (V) rows orgN
    apart, A the P slot (rows of the S2 block, orgKa) and C the P V slot (rows of D, orgKc). None: dense rows."""
    t = scope.tiling
    s1b, s2b, d = t["s1_block"], t["s2_block"], head_dim(scope)
    ops1, ops2 = attention_operands(scope)
    rq, rk, rv = (scope.static(r.stride) for r in (ops1.a, ops1.b, ops2.b))
    if None in (rq, rk, rv):
        raise UnsupportedError(f"kernel {scope.kernel.name}: the attention kernel's row strides are not constants")
    mm1 = (s1b, s2b, rq, rk) if (rq, rk) != (d, d) else None
    mm2 = (s1b, rv, s2b, s2b, d) if rv != d else None
    return mm1, mm2


def attention_tilings(scope: Scope) -> tuple[dict[str, int], dict[str, int]]:
    """TCubeTiling field values of mm1 and mm2 (module doc), in CANN's field order."""
    t = scope.tiling
    s1b, s2b, tn, bd = t["s1_block"], t["s2_block"], t["cube_n"], scope.kernel.block_dim
    d = head_dim(scope)

    def one(n: int, kk: int, base_n: int, base_k: int) -> dict[str, int]:
        values = {"usedCoreNum": bd, "M": s1b, "N": n, "Ka": kk, "Kb": kk, "singleCoreM": s1b, "singleCoreN": n,
                  "singleCoreK": kk, "baseM": -(-s1b // 16) * 16, "baseN": base_n, "baseK": base_k, "depthA1": 1,
                  "depthB1": 1, "stepM": 1, "stepN": 1, "stepKa": 1, "stepKb": 1, "isBias": 0, "iterateOrder": 0,
                  "dbL0A": 1, "dbL0B": 1, "dbL0C": 1}
        return {f: values[f] for f in TCUBE_TILING_FIELDS if f in values}

    return one(s2b, d, tn, d), one(d, s2b, d, tn)


class AttentionCubePart:
    """Emits the attention kernel's AIC program (`ProcessCube`) with two Matmul objects (module doc)."""

    def __init__(self, scope: Scope):
        self.scope = scope
        self.ops = attention_operands(scope)
        self.l1, self.l2 = _loops(scope.kernel)
        self.tilings = attention_tilings(scope)

    def emit(self, members: Writer, init: Writer, methods: Writer) -> None:
        sc = self.scope
        a_t = ctype(sc.prog.tensor(self.ops[0].a.buf).dtype)
        members(f"using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, {a_t}, false>;",
                f"using BtType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, {a_t}, true>;  // K^T",
                f"using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, {a_t}, false>;",
                "using CType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;",
                "using BiasType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;",
                "matmul::Matmul<AType, BtType, CType, BiasType> mm1;  // bmm1: S = Q K^T",
                "matmul::Matmul<AType, BType, CType, BiasType> mm2;  // bmm2: P V",
                "TCubeTiling cubeTiling;", "TCubeTiling cubeTiling2;")
        init("cubeTiling = tiling.cubeTilingData;", f"cubeTiling2 = tiling.{SECOND_TILING};")
        w = methods
        with w.block("__aicore__ inline void ProcessCube()"):
            w("REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm1, &cubeTiling, mm2, &cubeTiling2);")
            org1, org2 = org_shapes(sc)
            if org1 is not None:
                w("// Q's and K's rows are N * D apart in the user's tensors (read in place)",
                  f"mm1.SetOrgShape({', '.join(map(str, org1))});")
            if org2 is not None:
                w("// V's rows are N * D apart (orgN); C, the P V slot, has rows of D (orgKc)",
                  f"mm2.SetOrgShape({', '.join(map(str, org2))});")
            self._body(sc.kernel.aic, w)
        w("")

    def _body(self, stmts: tuple[Stmt, ...], w: Writer) -> None:
        sc = self.scope
        for i, s in enumerate(stmts):
            if isinstance(s, Let):
                w(f"const int32_t {sc.var(s.var)} = {sc.expr(s.value)};")
            elif isinstance(s, Loop) and s.var == "ki":
                self._matmul(s, stmts[i + 1:], w)
            elif isinstance(s, (Loop, If)):
                w(control_head(s, sc))
                with w.indented():
                    self._body(s.body, w)
                w("}")
            elif isinstance(s, CrossSet):
                w(f"AscendC::CrossCoreSetFlag<0x2, PIPE_{s.pipe.value}>({s.flag});")
            elif isinstance(s, CrossWait):
                w(f"AscendC::CrossCoreWaitFlag({s.flag});")
            elif isinstance(s, SyncAll):  # FlashDecode: the cube cores meet the vector cores before the combine
                w(f"AscendC::SyncAll<false>();  // {s.comment}")
            # L1/L0 copies, cube queue operations and FixPipes: the Matmul objects do them

    def _matmul(self, loop: Loop, rest: tuple[Stmt, ...], w: Writer) -> None:
        sc = self.scope
        first = {"ko": Const(0), "ki": Const(0)}
        mm = next(x for x in walk(loop.body) if isinstance(x, Mmad))
        bmm1 = mm.b_layout == "nk"
        fix = next((s for s in walk(loop.body) if isinstance(s, Copy) and s.dst.gm), None) if bmm1 else next(
            (s for s in rest if isinstance(s, Copy) and s.dst.gm), None)
        if fix is None:
            raise UnsupportedError(f"kernel {sc.kernel.name}: a cube loop of the attention kernel writes no workspace")
        reads = _gm_reads(loop)
        if bmm1:
            obj, a, (b,) = "mm1", self.ops[0].a, reads
        else:
            obj, (a, b) = "mm2", reads
        d = head_dim(sc)
        m_, n_, k_ = (Var("mlen"), Var("nlen"), Const(d)) if bmm1 else (Var("mlen"), Const(d), Var("nlen"))

        def at(r: Region) -> str:
            return sc.at(Region(r.buf, subst(r.offset, first), Const(1), Const(1), Const(1), gm=True))

        w(f"// {mm.comment}: the whole S2 block ({loop.comment})",
          f"{obj}.SetTensorA({at(a)}, false);",
          f"{obj}.SetTensorB({at(b)}, {'true' if bmm1 else 'false'});",
          f"{obj}.SetTail({sc.expr(m_)}, {sc.expr(n_)}, {sc.expr(k_)});",
          f"{obj}.IterateAll({at(fix.dst)});",
          f"{obj}.End();")
