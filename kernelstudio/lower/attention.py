"""`lower_attention_kernel`: an attention kernel (fusion/attention.py) as ONE MIX_AIC_1_2 kernel, the cube and the
vector cores handing blocks to each other through per-core GM workspaces behind cross-core flags.

Tasks are (batch*head, S1 block) pairs dealt round robin over the cores; inside a task the kernel walks S2 in blocks
of `s2` columns (the last one may be short), four stages per block j:

    bmm1 (AIC)  S_j = Q K_j^T                           float32, FixPipe to workspace ws_s      -> flag S
    vec1 (AIV)  x = S_j * scale                         each of the two vector cores takes half the S1 rows
                m_j = max(m_{j-1}, rowmax(x))           running max, UB (m_0: -3e38, exp of it less m is 0)
                e_j = exp(m_{j-1} - m_j)                kept per row for vec2
                p = exp(x - m_j)                        float32
                l_j = e_j * l_{j-1} + rowsum(p)         running sum, UB, from the float32 p
                P_j = cast(p, dtype)                    to workspace ws_p                        -> flag P
    bmm2 (AIC)  PV_j = P_j V_j                          float32, FixPipe to workspace ws_o      -> flag O
    vec2 (AIV)  O = O * e_j + PV_j                      O a float32 UB accumulator (O_0 = 0)
    last block: out = cast(O / l, dtype)                one division per row, then one rounding

This is the order `ops.flash_reference.online_softmax_attention` states (its chunk = `s2`), so the kernel equals
that model up to the float32 summation order of the matmuls and row sums.

Each stage is a TileIR loop marked with its name (`Loop.stage`) whose variable is the block: bmm1 the S2 walk
over j, bmm2 a loop of one trip over jp = j - (slots - 1) and the drain, vec1 and vec2 loops of one trip over jx;
the simulator's events carry the stage and the block (the Timeline's stage strip).

Decode (FlashDecode, lower/attention_split.py): with split('kv', p), or the auto split when S_q is small, each
task walks one of p parts of the S2 blocks and stores O / l and m + ln(l) in float32 instead of the output; a
SyncAll, then the vector cores combine the parts by log-sum-exp.

Workspace slots (`slots(n)`, 1 to 4, default SLOTS): block j uses slot j % n, and bmm2/vec2 trail bmm1/vec1 by
n - 1 blocks. With one slot the cube cannot start bmm1(j+1) before bmm2(j), which waits for vec1(j)'s P: the cube
idles through every vec1 and only bmm1(j+1) overlaps vec2(j). With n slots the cube runs bmm1 of block j while the
vector cores still work on j - 1 .. j - n + 1, so the cube stays busy through vec1 (the Timeline's stage strip
shows both; tests/notebook/test_stage_strip.py checks them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.dtypes import block_elems, itemsize
from ..core.errors import ScheduleError
from ..fusion.attention import attention_parts
from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..ir.ops import Op
from ..tileir.expr import Const, E, Expr, Var, ceil_div
from ..tileir.program import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    GmTensor,
    If,
    Kernel,
    Let,
    Loop,
    Mmad,
    Pipe,
    QuePos,
    Reduce,
    Region,
    Stmt,
    SyncAll,
    Tier,
    VecOp,
)
from .attention_split import check_kv_splits, combine, kv_splits_for, split_lets, split_store
from .config import KernelConfig
from .cube.shape import pad16
from .vector_body import ident

__all__ = ["lower_attention_kernel", "attention_blocks", "FLAG_S", "FLAG_P", "FLAG_O", "M_INIT"]

FLAG_S, FLAG_P, FLAG_O = 0, 1, 2  # S(j) in ws_s (AIC -> AIV), P(j) in ws_p (AIV -> AIC), P V(j) in ws_o (AIC -> AIV)
M_INIT = -3.0e38  # the running max before the first block: finite (the code writes it as a literal), exp of it is 0
S1_BLOCK, CUBE_N = 128, 128  # the cube block of CANN's FlashAttentionScore tiling (128 x 128)
S2_BLOCK = 512  # S2 columns per block (the vector's round): 4 cube tiles of 128 (CANN's nRatio, here 4)
L0AB_BYTES = 64 * 1024  # L0A and L0B of the 910B parts (hw/profiles: Ascend910B*.ini l0_a_size, l0_b_size)
UB_BUDGET = 160 * 1024  # UB bytes the vector chunks and O may take (assumed: 192 KiB UB less reduce scratch)
AIV = 2
SLOTS = 3  # workspace slots per core: S(j), P(j), P V(j) of three blocks in flight


@dataclass(frozen=True, slots=True)
class Views:
    """Where the kernel's tasks find their rows in the tensors it reads and writes (fusion/attention.py `view`:
    the user's BSND / BSH tensors or GQA's grouped heads in place). A task's batch index bh walks `batch`; its
    query rows are `rows` apart in q (`row_stride["q"]`), its key/value rows `row_stride["k"]` / `["v"]` apart,
    its output rows `row_stride["o"]` apart; `base(what)` is the offset of the task's row 0."""

    batch: tuple[int, ...]  # the tasks' batch dims
    s1: int  # query rows per batch index
    strides: dict[str, tuple[int, ...]]  # per tensor: its stride along each of `batch`'s dims (0: broadcast)
    row_stride: dict[str, int]
    d: int

    def base(self, what: str, bh: Expr | str = "bh") -> Expr:
        """Offset of row 0 of batch index `bh` in tensor `what` (q, k, v, o)."""
        out: Expr = Const(0)
        inner = 1
        dims = tuple(zip(self.batch, self.strides[what], strict=True))
        top = next((i for i, (size, _) in enumerate(dims) if size > 1), len(dims))  # bh // inner < size there
        for i in range(len(dims) - 1, top - 1, -1):
            size, st = dims[i]
            if size > 1 and st:
                idx = E.div(bh, inner) if i == top else E.mod(E.div(bh, inner), size)
                out = E.add(out, E.mul(idx, st))
            inner *= size
        return out

    @property
    def dense_out(self) -> bool:
        """The output rows in batch-index order, D apart (BNSD-like): row r of the output at r * D."""
        d = self.d
        if self.s1 > 1 and self.row_stride["o"] != d:
            return False
        inner = self.s1 * d
        for size, st in reversed(tuple(zip(self.batch, self.strides["o"], strict=True))):
            if size > 1 and st != inner:
                return False
            inner *= size
        return True


def _fold(st: tuple[int, ...], qb: tuple[int, ...], dims: list[int]) -> int | None:
    """The row stride of query heads folded over `dims` (row-major), or None when they are not evenly spaced."""
    for a, b in zip(dims, dims[1:], strict=False):
        if st[a] != st[b] * qb[b]:
            return None
    return st[dims[-1]]


def attention_views(m) -> Views:
    """The kernel's tasks and their rows (Views). GQA at S_q = 1 without a mask folds each kv group's G query
    heads into the rows of one task (q (B, Nkv, G, 1, D) is (B, Nkv, 1) x G rows, evenly spaced in q and in the
    output): the group reads its K and V once, as CANN's IncreFlashAttention does."""
    qb, kb = tuple(m.batch), tuple(m.k.shape[:-2])
    nb = len(qb)
    st = {w: m.view(w) for w in "qkvo"}
    kst = {w: tuple(0 if kb[i] == 1 and qb[i] > 1 else st[w][i] for i in range(nb)) for w in "kv"}
    rows = {"q": st["q"][-2], "k": st["k"][-2], "v": st["v"][-2], "o": st["o"][-2]}
    if m.s1 == 1 and m.mask is None and kb != qb:
        dims = [i for i in range(nb) if kb[i] == 1 and qb[i] > 1]
        fq, fo = _fold(st["q"], qb, dims), _fold(st["o"], qb, dims)
        if fq is not None and fo is not None:
            keep = tuple(0 if i in dims else 1 for i in range(nb))
            return Views(kb, math.prod(qb) // math.prod(kb),
                         {"q": tuple(s_ * k_ for s_, k_ in zip(st["q"][:nb], keep, strict=True)),
                          "o": tuple(s_ * k_ for s_, k_ in zip(st["o"][:nb], keep, strict=True)), **kst},
                         {**rows, "q": fq, "o": fo}, m.d)
    return Views(qb, m.s1, {"q": st["q"][:nb], "o": st["o"][:nb], **kst}, rows, m.d)


def query_rows(m) -> tuple[tuple[int, ...], int]:
    """(batch dims, query rows per batch index) the kernel walks (`attention_views`)."""
    v = attention_views(m)
    return v.batch, v.s1


def attention_blocks(fk: FusedKernel, cfg: KernelConfig, split: bool = False) -> tuple[int, int, int]:
    """(S1 block, S2 block, vector rows per chunk) of an attention kernel under `cfg` (tile_m, tile_n, tile_rows;
    0 or larger than the sequence: the defaults); `split`: its key/value sequence is split (the parts' float32
    O_i rows take UB too)."""
    m = attention_parts(fk.nodes)
    s1, s2, d = query_rows(m)[1], m.s2, m.d
    s1b = cfg.tile_m if 0 < cfg.tile_m < (1 << 30) else S1_BLOCK
    s2b = cfg.tile_n if 0 < cfg.tile_n < (1 << 30) else S2_BLOCK
    s1b, s2b = min(s1b, pad16(s1)), min(s2b, pad16(s2))
    half = -(-s1b // AIV)
    if 0 < cfg.tile_rows < (1 << 30):
        vr = cfg.tile_rows
    else:  # double-buffered S rows (float32) and P rows, P V rows (float32) and output rows, beside O (float32)
        # a mask adds its int8 rows (double-buffered) and their float16 and float32 conversions
        masked = any(n.op is Op.WHERE for n in fk.nodes)
        fit = max(1, (UB_BUDGET - half * d * 4) // (2 * 6 * (s2b + d) + (8 * s2b if masked else 0)
                                                    + (8 * d if split else 0)))
        vr = 1 << (fit.bit_length() - 1)
    return s1b, s2b, max(1, min(vr, half))


def _c32(cols: int, dtype: str) -> int:
    """Columns padded to whole 32-byte blocks."""
    per = block_elems(dtype)
    return -(-cols // per) * per


def lower_attention_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig
                           ) -> tuple[Kernel, tuple[GmTensor, ...]]:
    """The attention kernel (module doc) and its three workspaces."""
    m = attention_parts(fk.nodes)
    dt, d = m.q.dtype, m.d
    views = attention_views(m)
    batch, s1 = views.batch, views.s1
    rq, rk, rv, ro = (views.row_stride[w] for w in "qkvo")
    s2 = m.s2
    s1b, s2b, _ = attention_blocks(fk, cfg)
    for what, b in (("S1", s1b), ("S2", s2b)):
        if b % 16:
            raise ScheduleError(f"kernel {fk.name}: the {what} block {b} is not a multiple of 16 (the cube's fractal); "
                                f"use a multiple of 16, e.g. {pad16(b)}")
    n1, n2 = -(-s1 // s1b), -(-s2 // s2b)
    nf, tail = s2 // s2b, s2 % s2b  # whole S2 blocks, and the columns of the short last one
    heads = math.prod(batch)
    p = cfg.kv_splits or kv_splits_for(heads * n1, m.s1, n2, cfg.cores, m.causal, (cfg.ws_slots or SLOTS) - 1)
    check_kv_splits(fk.name, p, n2, s2b, s2, m.causal)
    split = p > 1
    _, _, vr = attention_blocks(fk, cfg, split)
    tasks = heads * n1 * p
    bd = max(1, min(cfg.cores, tasks))
    half = -(-s1b // AIV)
    qn, kn, vn, on = names[m.q_in], names[m.k_in], names[m.v_in], names[m.o_out]
    base = ident(fk.name)
    ws_s, ws_p, ws_o = f"{base}_ws_s", f"{base}_ws_p", f"{base}_ws_o"
    slots = cfg.ws_slots or SLOTS
    wss = (GmTensor(ws_s, (bd, slots, s1b, s2b), "float32", "workspace"),
           GmTensor(ws_p, (bd, slots, s1b, s2b), dt, "workspace"),
           GmTensor(ws_o, (bd, slots, s1b, d), "float32", "workspace"))
    rows = heads * s1  # the output's rows
    ws_po, ws_lse = f"{base}_ws_po", f"{base}_ws_lse"
    if split:  # each part's normalised O_i and lse_i (lower/attention_split.py)
        wss += (GmTensor(ws_po, (p, rows, d), "float32", "workspace"), GmTensor(ws_lse, (p, rows), "float32",
                                                                                "workspace"))
    tn = min(CUBE_N, s2b)  # the cube tile along S2: bmm1's n, bmm2's k
    nt = -(-s2b // tn)
    wide = max(d, tn)
    depth = 2 if cfg.depth >= 2 else 1
    isz = itemsize(dt)

    def fit(slot: int, capacity: int) -> int:
        """Two slots of an L0 buffer where they fit (D = 192 keeps one)."""
        return depth if depth * slot <= capacity else 1

    def buf(name: str, tier: Tier, dtype: str, rows: int, cols: int, queue: QuePos | None, core: CoreType,
            purpose: str, dep: int = 1) -> Buffer:
        return Buffer(name, tier, dtype, rows, _c32(cols, dtype), dep, queue, core, purpose)

    aic_c, aiv_c = CoreType.AIC, CoreType.AIV
    bufs = [
        buf("q1", Tier.L1, dt, s1b, d, QuePos.A1, aic_c, "the task's Q block, resident in L1 over the S2 walk"),
        buf("kv1", Tier.L1, dt, tn, d, QuePos.B1, aic_c, f"{tn} rows of K or V", depth),
        buf("p1", Tier.L1, dt, s1b, tn, QuePos.A1, aic_c, f"{tn} columns of P(j) from the workspace", depth),
        buf("a2", Tier.L0A, dt, s1b, wide, QuePos.A2, aic_c, "Q (bmm1) or P (bmm2)", fit(s1b * wide * isz, L0AB_BYTES)),
        buf("b2", Tier.L0B, dt, tn, d, QuePos.B2, aic_c, "K^T (bmm1) or V (bmm2)", fit(tn * d * isz, L0AB_BYTES)),
        buf("c", Tier.L0C, "float32", s1b, wide, QuePos.CO1, aic_c, f"{tn} columns of S(j), or P V(j)",
            fit(s1b * wide * 4, cfg.l0c_bytes or 128 * 1024)),
        buf("sx", Tier.UB, "float32", vr, s2b, QuePos.VECIN, aiv_c, "rows of S(j), then p", depth),
        buf("px", Tier.UB, dt, vr, s2b, QuePos.VECOUT, aiv_c, "rows of P(j) in the input dtype", depth),
        buf("ox", Tier.UB, "float32", vr, d, QuePos.VECIN, aiv_c, "rows of P V(j)", depth),
        buf("outx", Tier.UB, dt, vr, d, QuePos.VECOUT, aiv_c, "rows of the output", depth),
        buf("acc", Tier.UB, "float32", half, d, None, aiv_c, "O: the float32 accumulator of this AIV's rows"),
        buf("run_m", Tier.UB, "float32", 1, half, None, aiv_c, "running max m, one value per row"),
        buf("run_l", Tier.UB, "float32", 1, half, None, aiv_c, "running sum l, one value per row"),
        buf("run_e", Tier.UB, "float32", 1, slots * half, None, aiv_c,
            f"e = exp(m_prev - m) per row of each of the {slots} blocks in flight, for vec2"),
        buf("rmax", Tier.UB, "float32", 1, vr, None, aiv_c, "row max of a chunk, then the new m"),
        buf("rsum", Tier.UB, "float32", 1, vr, None, aiv_c, "row sum of a chunk"),
    ]
    if m.mask is not None:
        bufs += [buf("mk", Tier.UB, m.mask.dtype, vr, s2b, QuePos.VECIN, aiv_c, "rows of the mask", depth),
                 buf("mh", Tier.UB, "float16", vr, s2b, None, aiv_c, "the mask rows as float16 (exact)"),
                 buf("mf", Tier.UB, "float32", vr, s2b, None, aiv_c, "the mask rows as float32"),
                 buf("fillv", Tier.UB, "float32", 1, 1, None, aiv_c, f"the masked score {m.fill:g}")]
    if split:
        bufs += [buf("pox", Tier.UB, "float32", vr, d, QuePos.VECOUT, aiv_c, "rows of a part's O_i = O / l", depth),
                 buf("lsex", Tier.UB, "float32", 1, vr, QuePos.VECOUT, aiv_c, "a part's lse_i = m + ln(l) of a chunk"),
                 buf("lsi", Tier.UB, "float32", 1, p * _c32(vr, "float32"), QuePos.VECIN, aiv_c,
                     f"combine: lse_i of a chunk's rows, {p} parts"),
                 buf("cmax", Tier.UB, "float32", 1, vr, None, aiv_c, "combine: M = max_i lse_i"),
                 buf("csum", Tier.UB, "float32", 1, vr, None, aiv_c, "combine: sum of exp(lse_i - M), then lse"),
                 buf("cw", Tier.UB, "float32", 1, vr, None, aiv_c, "combine: a part's weight")]
    by = {b.name: b for b in bufs}

    def r(name: str, off: Expr | int, rows: Expr | int, cols: Expr | int, gm: bool = False,
          stride: int | None = None) -> Region:
        st = stride if stride is not None else by[name].cols
        return Region(name, off if isinstance(off, Expr) else Const(off), rows if isinstance(rows, Expr) else
                      Const(rows), cols if isinstance(cols, Expr) else Const(cols), Const(st), gm=gm)

    # ---- the walk, the same on both sides; block j of S2 uses workspace slot j % SLOTS
    lets: list[Stmt] = [*(split_lets(n1, n2, p, s1b) if split else (Let("bh", E.div("t", n1)),
                                                                       Let("m0", E.mul(E.mod("t", n1), s1b)))),
                        Let("mlen", E.min(s1b, E.sub(s1, "m0")))]
    if m.causal:
        lets.append(Let("n2e", E.min(n2, E.div(E.add(E.add("m0", "mlen"), s2b - 1), s2b))))
    q_off = E.add(views.base("q"), E.mul("m0", rq))
    o_off = E.add(views.base("o"), E.mul("m0", ro))

    def out_row(g: Expr) -> Expr:
        """Offset of output row g (batch index g // S1, query row g % S1) in the tensor written."""
        return E.add(views.base("o", E.div(g, s1)), E.mul(E.mod(g, s1), ro))
    mlen = Var("mlen")

    def blk(j: str) -> list[Stmt]:
        return [Let("n0", E.mul(j, s2b)), Let("nlen", E.min(s2b, E.sub(s2, "n0"))),
                Let("slot", E.add(E.mul("blk", slots), E.mod(j, slots)))]

    k_off = E.add(views.base("k"), E.mul("n0", rk))
    v_off = E.add(views.base("v"), E.mul("n0", rv))
    slot_s = E.mul("slot", s1b * s2b)
    slot_o = E.mul("slot", s1b * d)

    # ---- AIC: bmm1(j), hand S over; then bmm2(j - 1) once the vector cores handed P(j - 1) over
    ko, klen = Var("ko"), Var("klen")
    kt_lets = (Let("ko", E.mul("ki", tn)), Let("klen", E.min(tn, E.sub("nlen", "ko"))))
    kt_loop = E.div(E.add("nlen", tn - 1), tn)
    k_tile, v_tile = E.add(k_off, E.mul(ko, rk)), E.add(v_off, E.mul(ko, rv))
    bmm1 = [
        *blk("j"),
        Alloc("a2"), Copy(r("a2", 0, mlen, d), r("q1", 0, mlen, d)), EnQue("a2"), DeQue("a2"),
        Loop("ki", Const(0), kt_loop, Const(1), (
            *kt_lets,
            Alloc("kv1"), Copy(r("kv1", 0, klen, d), r(kn, k_tile, klen, d, gm=True, stride=rk), nd2nz=True,
                               comment="bmm1: K tile -> L1"), EnQue("kv1"), DeQue("kv1"),
            Alloc("b2"), Copy(r("b2", 0, klen, d), r("kv1", 0, klen, d)), EnQue("b2"), Free("kv1"),
            DeQue("b2"), Alloc("c"),
            Mmad(r("c", 0, mlen, klen), r("a2", 0, mlen, d), r("b2", 0, klen, d), mlen, Const(d), klen, Const(1),
                 b_layout="nk", comment=f"bmm1: S = Q K^T ({names[m.bmm1]})"),
            Free("b2"), EnQue("c"), DeQue("c"),
            Copy(r(ws_s, E.add(slot_s, ko), mlen, klen, gm=True, stride=s2b), r("c", 0, mlen, klen),
                 comment="bmm1: FixPipe S(j) tile -> workspace (float32)"),
            Free("c")), comment=f"bmm1 in {nt} tiles of {tn} columns of the S2 block"),
        Free("a2"), CrossSet(FLAG_S, Pipe.FIX),
    ]
    bmm2 = [
        *blk("jp"),
        CrossWait(FLAG_P),
        Alloc("c"),
        Loop("ki", Const(0), kt_loop, Const(1), (
            *kt_lets,
            Alloc("p1"), Copy(r("p1", 0, mlen, klen), r(ws_p, E.add(slot_s, ko), mlen, klen, gm=True, stride=s2b),
                              nd2nz=True, comment="bmm2: P(j) tile from the workspace -> L1"), EnQue("p1"),
            Alloc("kv1"), Copy(r("kv1", 0, klen, d), r(vn, v_tile, klen, d, gm=True, stride=rv), nd2nz=True,
                               comment="bmm2: V tile -> L1"), EnQue("kv1"),
            DeQue("p1"), Alloc("a2"), Copy(r("a2", 0, mlen, klen), r("p1", 0, mlen, klen)), EnQue("a2"),
            Free("p1"),
            DeQue("kv1"), Alloc("b2"), Copy(r("b2", 0, klen, d), r("kv1", 0, klen, d)), EnQue("b2"), Free("kv1"),
            DeQue("a2"), DeQue("b2"),
            Mmad(r("c", 0, mlen, d), r("a2", 0, mlen, klen), r("b2", 0, klen, d), mlen, klen, Const(d),
                 E.sub(1, E.min("ki", 1)), comment=f"bmm2: P V ({names[m.bmm2]})"),
            Free("a2"), Free("b2")), comment=f"bmm2: k over {nt} tiles of {tn}, accumulated in L0C"),
        EnQue("c"), DeQue("c"),
        Copy(r(ws_o, slot_o, mlen, d, gm=True, stride=d), r("c", 0, mlen, d),
             comment="bmm2: FixPipe P V(j) -> workspace (float32)"),
        Free("c"), CrossSet(FLAG_O, Pipe.FIX),
    ]
    lag = slots - 1  # bmm2 and vec2 of block j - lag follow bmm1 and vec1 of block j
    jb: Expr = Var("jb") if split else Const(0)  # the task's first block (a part's: lower/attention_split.py)

    def past_lag(j: Expr) -> Expr:
        """1 when block j is at least `lag` blocks past the task's first."""
        return E.min(E.max(E.sub(E.sub(j, jb), lag - 1), 0), 1)

    later = If(past_lag(Var("j")), (
        Loop("jp", E.sub("j", lag), E.sub("j", lag - 1), Const(1), tuple(bmm2), stage="bmm2"),),
               comment=f"bmm2 of block j - {lag}")
    # causal (the op's top-left causal atten_mask): the blocks wholly above the diagonal are skipped, block j
    # is computed while its first column n0 = j * s2 is at most the task's last row m0 + mlen - 1
    ne: Expr = Var("n2e") if m.causal else Var("je") if split else Const(n2)
    drain0 = E.max(E.sub(ne, lag), jb)
    aic = (Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), (
        *lets,
        Alloc("q1"), Copy(r("q1", 0, mlen, d), r(qn, q_off, mlen, d, gm=True, stride=rq), nd2nz=True,
                          comment="Q block -> L1"), EnQue("q1"), DeQue("q1"),
        Loop("j", jb, ne, Const(1), (*bmm1, later),
             comment=f"S2 in {n2} blocks of {s2b}: bmm1(j), then bmm2(j - {lag}) once the vector cores handed "
                     "its P over", stage="bmm1"),
        Loop("jp", drain0, ne, Const(1), tuple(bmm2), comment=f"bmm2 of the last {lag} blocks", stage="bmm2"),
        Free("q1")), comment=f"parallel_loop: {tasks} (batch*head, S1 block{', part' if split else ''}) tasks over "
                             f"{bd} cores"),
           *((SyncAll("the parts' O_i and lse_i are in the workspaces: the vector cores combine them"),) if split
             else ()))

    # ---- AIV: each takes half the rows of the task's S1 block, in chunks of vr rows
    lr, cr = Var("lr0"), Var("crl")  # the chunk's first row in the block, its rows
    hr = E.sub("lr0", "rs")  # the chunk's first row among this AIV's rows
    chunk_lets = (Let("lr0", E.add("rs", E.mul("rc", vr))), Let("crl", E.min(vr, E.sub("rl", E.mul("rc", vr)))))
    mask_name = names[m.mask] if m.mask is not None else ""

    def masking(cols: int) -> tuple[Stmt, ...]:
        """x = where(mask != 0, fill, x) over the chunk: the mask's rows m0 + lr0.. and columns n0.. (int8 ->
        float16 -> float32, as Select takes its condition in x's dtype)."""
        if m.mask is None:
            return ()
        x = r("sx", 0, cr, cols)
        return (
            Alloc("mk"), Copy(r("mk", 0, cr, cols), r(mask_name, E.add(E.mul(E.add("m0", lr), s2), "n0"), cr, cols,
                                                          gm=True, stride=s2), comment="vec1: rows of the mask"),
            EnQue("mk"), DeQue("mk"),
            VecOp("cast", r("mh", 0, cr, cols), (r("mk", 0, cr, cols),), comment="vec1: mask -> float16 (exact)"),
            Free("mk"),
            VecOp("cast", r("mf", 0, cr, cols), (r("mh", 0, cr, cols),), comment="vec1: mask -> float32"),
            VecOp("select", x, (r("mf", 0, cr, cols), r("fillv", 0, 1, 1), x),
                  comment=f"vec1: x = where(mask, {m.fill:g}, x)"),
        )


    def col(name: str, off: Expr | int = 0) -> Region:
        return r(name, off, cr, 1, stride=1)

    e_at = E.add(E.mul(E.mod("jx", slots), half), hr)

    def vec1_chunk(cols: int) -> tuple[Stmt, ...]:
        x = r("sx", 0, cr, cols)
        return (
            *chunk_lets,
            Alloc("sx"), Copy(x, r(ws_s, E.add(slot_s, E.mul(lr, s2b)), cr, cols, gm=True, stride=s2b),
                              comment="vec1: rows of S(j) from the workspace"),
            EnQue("sx"), DeQue("sx"),
            VecOp("muls", x, (x,), scalar=m.scale, comment="vec1: x = S * scale"),
            *masking(cols),
            Reduce("max", col("rmax"), x, comment="vec1: rowmax(x)"),
            VecOp("max", col("rmax"), (col("run_m", hr), col("rmax")), comment="vec1: m = max(m_prev, rowmax(x))"),
            VecOp("sub", col("run_e", e_at), (col("run_m", hr), col("rmax")), comment="vec1: m_prev - m"),
            VecOp("exp", col("run_e", e_at), (col("run_e", e_at),), comment="vec1: e = exp(m_prev - m)"),
            VecOp("copy", col("run_m", hr), (col("rmax"),), comment="vec1: m_prev <- m"),
            VecOp("sub", x, (x, col("rmax")), comment="vec1: x - m"),
            VecOp("exp", x, (x,), comment="vec1: p = exp(x - m)"),
            Reduce("sum", col("rsum"), x, comment="vec1: rowsum(p)"),
            VecOp("mul", col("run_l", hr), (col("run_l", hr), col("run_e", e_at)), comment="vec1: e * l_prev"),
            VecOp("add", col("run_l", hr), (col("run_l", hr), col("rsum")), comment="vec1: l = e * l_prev + rowsum(p)"),
            Alloc("px"), VecOp("cast", r("px", 0, cr, cols), (x,), comment=f"vec1: P = cast(p, {dt})"),
            Free("sx"), EnQue("px"), DeQue("px"),
            Copy(r(ws_p, E.add(slot_s, E.mul(lr, s2b)), cr, cols, gm=True, stride=s2b), r("px", 0, cr, cols),
                 comment="vec1: rows of P(j) -> workspace"),
            Free("px"),
        )

    acc = r("acc", E.mul(hr, by["acc"].cols), cr, d)
    vec2_chunk = (
        *chunk_lets,
        Alloc("ox"), Copy(r("ox", 0, cr, d), r(ws_o, E.add(slot_o, E.mul(lr, d)), cr, d, gm=True, stride=d),
                          comment="vec2: rows of P V(j) from the workspace"), EnQue("ox"), DeQue("ox"),
        VecOp("mul", acc, (acc, col("run_e", e_at)), comment="vec2: O * e"),
        VecOp("add", acc, (acc, r("ox", 0, cr, d)), comment="vec2: O = O * e + P V"),
        Free("ox"),
    )
    chunks = ceil_div(Var("rl"), vr)
    chunk_rows = f"chunks of {vr} rows"

    def one(j: Expr, body: tuple[Stmt, ...], what: str, stage: str) -> list[Stmt]:
        """`body` for block j, in a loop of one trip over jx: the code's scope for the block's variables."""
        return [Loop("jx", j, E.add(j, 1), Const(1), (*blk("jx"), *body), comment=what, stage=stage)]

    def vec1(j: Expr, cols: int) -> list[Stmt]:
        return one(j, (CrossWait(FLAG_S), Loop("rc", Const(0), chunks, Const(1), vec1_chunk(cols),
                                                comment=chunk_rows),
                       CrossSet(FLAG_P, Pipe.MTE3)), f"vec1 of one block: online softmax update of {cols} columns",
                   "vec1")

    def vec2(j: Expr) -> list[Stmt]:
        return one(j, (CrossWait(FLAG_O), Loop("rc", Const(0), chunks, Const(1), vec2_chunk, comment=chunk_rows)),
                   "vec2 of one block: O = O * e + P V", "vec2")

    walk: list[Stmt] = []
    dynamic = m.causal or split  # the walk ends before the last block in some tasks
    if nf:
        walk.append(Loop("j", jb, E.min(nf, ne) if dynamic else Const(nf), Const(1), (
            *vec1(Var("j"), s2b), If(past_lag(Var("j")), tuple(vec2(E.sub("j", lag))),
                                     comment=f"vec2 of block j - {lag}")),
            comment=f"S2 in {nf} whole blocks of {s2b}: vec1(j), then vec2(j - {lag})"))
    if tail:
        if split and nf >= lag:
            last = [*vec1(Const(nf), tail), If(past_lag(Const(nf)), tuple(vec2(Const(nf - lag))),
                                               comment=f"vec2 of block {nf - lag}, when the part holds it")]
        else:
            last = [*vec1(Const(nf), tail), *(vec2(Const(nf - lag)) if nf >= lag else [])]
        walk += [If(E.max(E.sub(ne, nf), 0), tuple(last), comment="the short last block, when it is computed")
                 ] if dynamic else last
    walk.append(Loop("jd", drain0, ne, Const(1), tuple(vec2(Var("jd"))),
                     comment=f"vec2 of the last {lag} blocks"))  # jx: the block of each
    out_chunk = (
        *chunk_lets,
        VecOp("div", acc, (acc, col("run_l", hr)), comment="O / l"),
        Alloc("outx"), VecOp("cast", r("outx", 0, cr, d), (acc,), comment=f"cast to {dt}"), EnQue("outx"),
        DeQue("outx"),
        Copy(r(on, E.add(o_off, E.mul(lr, ro)), cr, d, gm=True, stride=ro), r("outx", 0, cr, d),
             comment="output rows -> GM"),
        Free("outx"),
    )
    init_chunk = (
        *chunk_lets,
        VecOp("duplicate", col("run_m", hr), (), scalar=M_INIT, comment="m = -3e38"),
        VecOp("duplicate", col("run_l", hr), (), scalar=0.0, comment="l = 0"),
        VecOp("duplicate", acc, (), scalar=0.0, comment="O = 0"),
    )
    fill = (VecOp("duplicate", r("fillv", 0, 1, 1), (), scalar=m.fill, comment="the masked score"),
            ) if m.mask is not None else ()
    aiv = (*fill, Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), (
        *lets,
        Let("half", ceil_div(mlen, AIV)), Let("rs", E.mul("sub", "half")),
        Let("rl", E.max(0, E.min("half", E.sub("mlen", "rs")))),
        Loop("rc", Const(0), chunks, Const(1), init_chunk, comment=f"online-softmax state, {chunk_rows}"),
        *walk,
        (Loop("rc", Const(0), chunks, Const(1), split_store(r, col, acc, chunk_lets, ws_po, ws_lse, rows, d,
                                                         E.add(E.mul("bh", s1), "m0")),
              comment=f"O_i = O / l and lse_i = m + ln(l) to the workspaces, {chunk_rows}") if split else
         Loop("rc", Const(0), chunks, Const(1), out_chunk, comment=f"O / l, cast and store, {chunk_rows}")),
    ), comment="same walk as the cube core; each AIV takes half the S1 rows"),
           *(combine(r, p, rows, d, vr, _c32(vr, "float32"), dt, ws_po, ws_lse, on, M_INIT,
                     None if views.dense_out else out_row) if split else ()))
    cfg = cfg.noted(f"attention: {tasks} tasks of {s1b} query rows over {bd} cores, S2 in {n2} blocks of {s2b}; "
                    f"per block bmm1 -> vec1 (online softmax) -> bmm2 -> vec2, S and P in per-core workspaces of "
                    f"{slots} slots (bmm1(j) and vec1(j) overlap bmm2(j - {lag}) and vec2(j - {lag}))")
    if batch != tuple(m.batch):
        cfg = cfg.noted(f"GQA at S_q = 1: the {s1} query heads of each kv head are the rows of one task "
                        f"({heads} tasks before any split), which reads that kv head's K and V once")
    if split:
        cfg = cfg.noted(f"FlashDecode: the {n2} S_kv blocks in {p} parts ({heads * n1} (batch*head, S1 block) x {p} "
                        f"parts = {tasks} tasks), each writing O_i = O / l and lse_i = m + ln(l) to workspaces; "
                        f"SyncAll; the vector cores combine the {rows} rows by log-sum-exp")
    params = (*dict.fromkeys([qn, kn, vn, *([mask_name] if mask_name else [])]), on, ws_s, ws_p, ws_o,
              *((ws_po, ws_lse) if split else ()))
    tiling = (("tiles", tasks), ("block_dim", bd), ("s1_block", s1b), ("s2_block", s2b), ("s2_blocks", n2),
              ("cube_n", tn),
              ("vec_rows", vr), ("ws_slots", slots), *((("kv_splits", p),) if split else ()))
    k = Kernel(name=base, family="attention", kernel_type="MIX_AIC_1_2", block_dim=bd, params=params,
               buffers=tuple(bufs), aic=aic, aiv=aiv, tiling=tiling, ops=tuple(names[n] for n in fk.nodes),
               notes=cfg.notes, vec_per_block=AIV, does="flash_attention")
    return k, wss
