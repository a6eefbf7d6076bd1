"""FlashDecode: the attention kernel (lower/attention.py) with its key/value sequence split over the cores, the
parts combined by log-sum-exp after an all-core barrier, in the same MIX_AIC_1_2 kernel.

At decode (S_q = 1, or a few query rows) the kernel has B * N tasks of one S1 block each, fewer than the cores.
`split('kv', p)` cuts the S2 blocks of every task into p parts (part i: blocks n2 * i // p up to
n2 * (i + 1) // p, so no part is empty while p <= n2; the short last block falls in the last part), and each
(task, part) pair is a task of its own, dealt round robin over the cores like the others. A part runs the online
softmax of lower/attention.py over its blocks and, instead of the output, stores in float32

    O_i   = O / l                                     its rows normalised by its own running sum  -> ws_po
    lse_i = m + ln(l)                                 its log-sum-exp, one value per row           -> ws_lse

(m, l: the part's running max and sum). Every AIC and AIV then meets at a SyncAll (Ascend C's `SyncAll<false>()`:
the parts of one row were written by other cores), and the vector cores of every block combine the rows of the
whole output, dealt evenly over the 2 * block_dim AIVs, in chunks of rows, in this order:

    M     = max_i lse_i                               one value per row (from -3e38)
    lse   = M + ln(sum_i exp(lse_i - M))              i = 0 .. p - 1 in order, float32
    O     = sum_i exp(lse_i - lse) * O_i              i in order, float32 accumulator from 0
    out   = cast(O, dtype)                            one rounding

which is CANN's FlashDecode combine (ops-transformer attention/incre_flash_attention/docs/IFA算子设计介绍.md: the
splits' weights exp(lse_i) / sum_j exp(lse_j), taken here relative to M so that no exp overflows). Against the
unsplit kernel the output moves by float32 rounding only (each part's O_i and l are float32);
`ks.ops.split_softmax_attention` is the NumPy model, tested against `plain_softmax_attention`.

The auto choice (`kv_splits_for`) splits only at decode (S_q <= DECODE_ROWS, the queries one 16-row fractal of
the cube): it takes the p of least `split_cost`, rounds of the tasks * p parts over the cores times the longest
part's blocks plus the slots - 1 blocks that fill the pipeline (an assumed model; tests/golden/test_flash_decode.py
and notebook 10 check its choice against the simulator's times for every part count, bench_flash_attention.py
--decode prints it beside one part per head and the two-kernel plan). A causal kernel is not split: at S_q = 1
the top-left causal mask leaves key 0 alone, and a part wholly above the diagonal would have no blocks to walk
(`KvSplitError` says so). A user mask (a where that is not the causal one) is applied in each part as in the
unsplit kernel; a part whose rows are wholly masked has lse_i about -1e30 and weight 0 (a row masked in every
part, which the whole-row softmax spreads evenly, comes out as the sum of the parts' means instead).
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.errors import ScheduleError
from ..tileir.expr import Const, E, Expr, Var, ceil_div
from ..tileir.program import Alloc, Copy, DeQue, EnQue, Free, Let, Loop, Region, Stmt, SyncAll, VecOp

DECODE_ROWS = 16  # query rows up to which the auto schedule splits S_kv: one 16-row fractal of the cube

__all__ = ["DECODE_ROWS", "KvSplitError", "kv_splits_for", "split_cost", "check_kv_splits", "split_lets",
           "split_store", "combine"]


class KvSplitError(ScheduleError):
    """split('kv', n) that the attention kernel cannot take (more parts than S2 blocks, or a causal kernel)."""


def kv_splits_for(tasks: int, s1: int, n2: int, cores: int, causal: bool, lag: int) -> int:
    """The auto split (module doc): at decode (S_q <= DECODE_ROWS, no causal mask) the p in 1 .. min(n2, cores)
    of least `split_cost`, the smallest of equals; else 1."""
    if causal or s1 > DECODE_ROWS or n2 < 2:
        return 1
    return min(range(1, min(n2, cores) + 1), key=lambda p: (split_cost(tasks, n2, cores, lag, p), p))


def split_cost(tasks: int, n2: int, cores: int, lag: int, p: int) -> int:
    """The auto split's model of the kernel's time, in S2 blocks: rounds of tasks * p parts over the cores, each
    as long as its longest part (ceil(n2 / p) blocks) plus the `lag` blocks that fill the slot pipeline."""
    return -(-tasks * p // cores) * (-(-n2 // p) + lag)


def check_kv_splits(kernel: str, p: int, n2: int, s2b: int, s2: int, causal: bool) -> None:
    """Errors of split('kv', p) the lowering finds (the schedule already refused p < 1)."""
    if p > n2:
        raise KvSplitError(f"kernel {kernel}: split('kv', {p}) but S_kv = {s2} is {n2} block(s) of {s2b} columns: "
                           f"each part walks whole blocks, so at most {n2} parts; use split('kv', {n2}) or fewer, "
                           f"or smaller blocks (split('s2', {max(16, s2b // 2)}))")
    if causal and p > 1:
        raise KvSplitError(f"kernel {kernel}: split('kv', {p}) on a causal attention: the kernel skips the blocks "
                           "above the diagonal, and under the top-left causal mask a decode row (S_q = 1) sees key 0 "
                           "alone; drop causal=True for decode (the query row sees every key) or use split('kv', 1)")


def split_lets(n1: int, n2: int, p: int, s1b: int) -> list[Stmt]:
    """Task t as (batch*head bh, S1 block at m0, part sp with blocks jb .. je - 1)."""
    return [Let("sp", E.mod("t", p)), Let("bh", E.div(E.div("t", p), n1)),
            Let("m0", E.mul(E.mod(E.div("t", p), n1), s1b)),
            Let("jb", E.div(E.mul("sp", n2), p)), Let("je", E.div(E.mul(E.add("sp", 1), n2), p))]


def split_store(r, col, acc: Region, chunk_lets: tuple[Stmt, ...], ws_po: str, ws_lse: str, rows: int, d: int,
                row_base: Expr) -> tuple[Stmt, ...]:
    """A part's last step over a chunk of its rows: O_i = O / l to ws_po, lse_i = m + ln(l) to ws_lse (float32).
    `rows`: the output's rows (batch*head*S1); `row_base`: the task's first row among them; `r`/`col`: the
    kernel's region builders."""
    lr, cr = Var("lr0"), Var("crl")
    hr = E.sub("lr0", "rs")
    row0 = E.add(row_base, lr)  # the chunk's first row of the output
    return (
        *chunk_lets,
        VecOp("div", acc, (acc, col("run_l", hr)), comment="O_i = O / l"),
        Alloc("pox"), VecOp("copy", r("pox", 0, cr, d), (acc,), comment="O_i rows (float32)"), EnQue("pox"),
        DeQue("pox"),
        Copy(r(ws_po, E.add(E.mul("sp", rows * d), E.mul(row0, d)), cr, d, gm=True, stride=d), r("pox", 0, cr, d),
             comment="O_i rows -> workspace"),
        Free("pox"),
        Alloc("lsex"), VecOp("ln", col("lsex"), (col("run_l", hr),), comment="ln(l)"),
        VecOp("add", col("lsex"), (col("lsex"), col("run_m", hr)), comment="lse_i = m + ln(l)"),
        EnQue("lsex"), DeQue("lsex"),
        Copy(r(ws_lse, E.add(E.mul("sp", rows), row0), 1, cr, gm=True, stride=rows), r("lsex", 0, 1, cr),
             comment="lse_i -> workspace"),
        Free("lsex"),
    )


def combine(r, p: int, rows: int, d: int, vr: int, vrc: int, dt: str, ws_po: str, ws_lse: str, out: str,
            m_init: float, out_row: Callable[[Expr], Expr] | None = None) -> tuple[Stmt, ...]:
    """The AIV program after the parts (module doc): SyncAll, then the combine of every row, dealt over the AIVs.
    `out_row`: where output row g starts when the rows are not D apart in batch order (a BSND / BSH output with
    several query rows per head): the chunk is stored row by row there."""
    g0, cr = Var("g0"), Var("crl")

    def c(name: str, off: Expr | int = 0) -> Region:
        return r(name, off, cr, 1, stride=1)

    lse_i = c("lsi", E.mul("sp", vrc))
    acc = r("acc", 0, cr, d)
    chunk = (
        Let("g0", E.add("cr0", E.mul("rc", vr))), Let("crl", E.min(vr, E.sub("crn", E.mul("rc", vr)))),
        Alloc("lsi"),
        Loop("sp", Const(0), Const(p), Const(1), (
            Copy(r("lsi", E.mul("sp", vrc), 1, cr), r(ws_lse, E.add(E.mul("sp", rows), g0), 1, cr, gm=True,
                                                       stride=rows), comment="combine: lse_i of the rows"),),
             comment=f"the {p} parts' lse"),
        EnQue("lsi"), DeQue("lsi"),
        VecOp("duplicate", c("cmax"), (), scalar=m_init, comment="combine: M = -3e38"),
        Loop("sp", Const(0), Const(p), Const(1), (
            VecOp("max", c("cmax"), (c("cmax"), lse_i), comment="combine: M = max(M, lse_i)"),)),
        VecOp("duplicate", c("csum"), (), scalar=0.0, comment="combine: s = 0"),
        Loop("sp", Const(0), Const(p), Const(1), (
            VecOp("sub", c("cw"), (lse_i, c("cmax")), comment="combine: lse_i - M"),
            VecOp("exp", c("cw"), (c("cw"),), comment="combine: exp(lse_i - M)"),
            VecOp("add", c("csum"), (c("csum"), c("cw")), comment="combine: s += exp(lse_i - M)"))),
        VecOp("ln", c("csum"), (c("csum"),), comment="combine: ln(s)"),
        VecOp("add", c("csum"), (c("csum"), c("cmax")), comment="combine: lse = M + ln(s)"),
        VecOp("duplicate", acc, (), scalar=0.0, comment="combine: O = 0"),
        Loop("sp", Const(0), Const(p), Const(1), (
            VecOp("sub", c("cw"), (lse_i, c("csum")), comment="combine: lse_i - lse"),
            VecOp("exp", c("cw"), (c("cw"),), comment="combine: w_i = exp(lse_i - lse)"),
            Alloc("ox"), Copy(r("ox", 0, cr, d), r(ws_po, E.add(E.mul("sp", rows * d), E.mul(g0, d)), cr, d, gm=True,
                                                   stride=d), comment="combine: O_i rows from the workspace"),
            EnQue("ox"), DeQue("ox"),
            VecOp("mul", r("ox", 0, cr, d), (r("ox", 0, cr, d), c("cw")), comment="combine: w_i * O_i"),
            VecOp("add", acc, (acc, r("ox", 0, cr, d)), comment="combine: O += w_i * O_i"),
            Free("ox")), comment=f"the {p} parts in order"),
        Free("lsi"),
        Alloc("outx"), VecOp("cast", r("outx", 0, cr, d), (acc,), comment=f"combine: cast to {dt}"), EnQue("outx"),
        DeQue("outx"),
        *((Copy(r(out, E.mul(g0, d), cr, d, gm=True, stride=d), r("outx", 0, cr, d),
                comment="combine: output rows -> GM"),) if out_row is None else
          (Loop("gi", Const(0), cr, Const(1), (
              Copy(r(out, out_row(E.add(g0, "gi")), 1, d, gm=True, stride=d), r("outx", E.mul("gi", d), 1, d),
                   comment="combine: an output row -> GM (its place in the output's layout)"),),
                comment="the chunk's rows one by one"),)),
        Free("outx"),
    )
    per = ceil_div(rows, Var("naiv"))
    return (
        SyncAll("every part's O_i and lse_i are in the workspaces"),
        Let("naiv", E.mul("block_dim", 2)), Let("cr0", E.mul(E.add(E.mul("blk", 2), "sub"), per)),
        Let("crn", E.max(0, E.min(per, E.sub(rows, "cr0")))),
        Loop("rc", Const(0), ceil_div(Var("crn"), vr), Const(1), chunk,
             comment=f"combine {rows} rows of {p} parts, dealt over the vector cores in chunks of {vr} rows",
             stage="combine"),
    )
