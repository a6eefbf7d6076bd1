"""The L1 level of matmul kernels: slabs of several k tiles per C tile (l1_k_steps, TCubeTiling
stepKa / stepKb; `l1_k_loops`) and, across C tiles (l1_c_steps), groups of C tiles whose operands
stay resident in L1.

A core computes its C tiles in groups of step_m x step_n, row by row (n inner, TCubeTiling
iterateOrder 1). Reuse is the "full load" case: an operand shared by several C tiles of the group is
loaded GM->L1 once with its whole K (every k tile), and each C tile takes its L0A/L0B fractals from
that resident panel at its own offsets, running its k loop into one L0C accumulator. Partial-K slabs
could not be shared: the next C tile starts again at k = 0 after this one has moved past them.

- A's row panel (tile_m rows x K) is resident when step_n > 1: loaded once per tile row of the group,
  it serves the row's step_n C tiles;
- B's column panel (K x step_n * tile_n columns) is resident when step_m > 1: loaded once per group,
  it serves the group's step_m tile rows;
- an operand that is not shared streams per C tile in slabs of its l1_k_steps, as without groups.

Tails are exact: an edge group has fewer tile rows / columns (loop bounds from the group's extent),
and every panel, slab and fractal is min(...)-sized.
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir.node import Node
from ...tileir.expr import Const, E, Expr, Var, ceil_div
from ...tileir.program import Alloc, Buffer, Copy, DeQue, EnQue, Free, Let, Loop, Mmad, Region, Stmt
from .shape import CubeShape

__all__ = ["GroupShape", "panel_load", "group_k_loop", "group_rows", "group_cols", "l1_k_loops"]


class GroupShape:
    """Which operands a group keeps resident, and the slab step of the one that streams."""

    def __init__(self, step_m: int, step_n: int, kt: int, sa: int, sb: int):
        self.step_m, self.step_n = step_m, step_n
        self.a_res, self.b_res = step_n > 1, step_m > 1
        self.sa = kt if self.a_res else sa  # k tiles per L1 load of A (stepKa): all of them when resident
        self.sb = kt if self.b_res else sb

    @property
    def grouped(self) -> bool:
        return self.a_res or self.b_res


def panel_load(cs: CubeShape, bufs: dict[str, Buffer], which: str, r0: Expr, rlen: Expr, off: Expr) -> list[Stmt]:
    """Load A's row panel (rows [r0, r0 + rlen) of M, whole K) or B's column panel (columns
    [r0, r0 + rlen) of N, whole K) GM -> L1 once."""
    K = cs.K
    q = "a1" if which == "a" else "b1"
    cols = Const(bufs[q].cols)
    if which == "a":
        if cs.ta:  # A is [K, M]
            src = Region(cs.a_name, E.add(off, r0), Const(K), rlen, Const(cs.lda), gm=True)
            dst = Region(q, Const(0), Const(K), rlen, cols)
        else:
            src = Region(cs.a_name, E.add(off, E.mul(r0, cs.lda)), rlen, Const(K), Const(cs.lda), gm=True)
            dst = Region(q, Const(0), rlen, Const(K), cols)
        what = "A's row panel (whole K), resident across the C tiles of this tile row"
    else:
        if cs.tb:  # B is [N, K]
            src = Region(cs.b_name, E.add(off, E.mul(r0, K)), rlen, Const(K), Const(K), gm=True)
            dst = Region(q, Const(0), rlen, Const(K), cols)
        else:
            src = Region(cs.b_name, E.add(off, r0), Const(K), rlen, Const(cs.N), gm=True)
            dst = Region(q, Const(0), Const(K), rlen, cols)
        what = "B's column panel (whole K), resident across the tile rows of this group"
    return [Alloc(q), Copy(dst, src, nd2nz=cs.nd2nz(which), comment=f"L1: {what}"), EnQue(q), DeQue(q)]


def _resident(cs: CubeShape, bufs: dict[str, Buffer], which: str, tk: int, ko: Expr, klen: Expr, m_or_n: Expr,
              at: Expr) -> Region:
    """k tile `ko` of the resident panel: A's (this tile's rows, the whole panel) or B's (`m_or_n`
    columns from column `at` of the group's panel)."""
    q = "a1" if which == "a" else "b1"
    cols = Const(bufs[q].cols)
    k0 = E.mul(ko, tk)
    if which == "a":
        return (Region(q, E.mul(k0, cols), klen, m_or_n, cols) if cs.ta
                else Region(q, k0, m_or_n, klen, cols))
    return (Region(q, E.add(E.mul(at, cols), k0), m_or_n, klen, cols) if cs.tb
            else Region(q, E.add(E.mul(k0, cols), at), klen, m_or_n, cols))


def _stream(cs: CubeShape, bufs: dict[str, Buffer], which: str, tk: int, step: int, m0: Expr, mlen: Expr,
            n0: Expr, nlen: Expr, off: Expr) -> tuple[list[Stmt], Region]:
    """(load of the slab of `step` k tiles from k tile kx, L1 region of k tile ko in it) for the
    operand that streams per C tile."""
    K = cs.K
    kx, ko, klen = Var("kx"), Var("ko"), Var("klen")
    k0 = E.mul(kx, tk)
    slen = E.min(tk * step, E.sub(K, k0))
    q = "a1" if which == "a" else "b1"
    cols = Const(bufs[q].cols)
    rel = E.mul(E.sub(ko, kx), tk)  # k offset inside the slab
    if which == "a":
        if cs.ta:
            src = Region(cs.a_name, E.add(off, E.add(E.mul(k0, cs.lda), m0)), slen, mlen, Const(cs.lda), gm=True)
            dst, sub = Region(q, Const(0), slen, mlen, cols), Region(q, E.mul(rel, cols), klen, mlen, cols)
        else:
            src = Region(cs.a_name, E.add(off, E.add(E.mul(m0, cs.lda), k0)), mlen, slen, Const(cs.lda), gm=True)
            dst, sub = Region(q, Const(0), mlen, slen, cols), Region(q, rel, mlen, klen, cols)
    elif cs.tb:
        src = Region(cs.b_name, E.add(off, E.add(E.mul(n0, K), k0)), nlen, slen, Const(K), gm=True)
        dst, sub = Region(q, Const(0), nlen, slen, cols), Region(q, rel, nlen, klen, cols)
    else:
        src = Region(cs.b_name, E.add(off, E.add(E.mul(k0, cs.N), n0)), slen, nlen, Const(cs.N), gm=True)
        dst, sub = Region(q, Const(0), slen, nlen, cols), Region(q, E.mul(rel, cols), klen, nlen, cols)
    load = [Alloc(q), Copy(dst, src, nd2nz=cs.nd2nz(which),
                         comment=f"L1: {step} k tiles of {which.upper()} from k tile kx"),
            EnQue(q), DeQue(q)]
    return load, sub


def _what(resident: bool) -> str:
    return "panel" if resident else "slab"


def group_k_loop(cs: CubeShape, bufs: dict[str, Buffer], g: GroupShape, tk: int, mm_comment: str,
                 m0: Expr, mlen: Expr, n0: Expr, nlen: Expr, b_at: Expr, a_off: Expr,
                 b_off: Expr) -> list[Stmt]:
    """One C tile of a group: Alloc c and its k loop, L0A/L0B fractals from the resident panel(s)
    (B's at column `b_at` of the group's panel) and the streamed operand's slabs."""
    ko, klen = Var("ko"), Var("klen")
    stream: tuple[list[Stmt], Region] | None = None
    if not g.a_res:
        stream = _stream(cs, bufs, "a", tk, g.sa, m0, mlen, n0, nlen, a_off)
        a_sub = stream[1]
    else:
        a_sub = _resident(cs, bufs, "a", tk, ko, klen, mlen, Const(0))
    if not g.b_res:
        stream = _stream(cs, bufs, "b", tk, g.sb, m0, mlen, n0, nlen, b_off)
        b_sub = stream[1]
    else:
        b_sub = _resident(cs, bufs, "b", tk, ko, klen, nlen, b_at)
    a2 = Region("a2", Const(0), a_sub.rows, a_sub.cols, Const(bufs["a2"].cols))
    b2 = Region("b2", Const(0), b_sub.rows, b_sub.cols, Const(bufs["b2"].cols))
    c = Region("c", Const(0), mlen, nlen, Const(bufs["c"].cols))
    body: tuple[Stmt, ...] = (
        Let("klen", E.min(tk, E.sub(cs.K, E.mul(ko, tk)))),
        Alloc("a2"), Copy(a2, a_sub, comment=f"L1 -> L0A: one k tile of the resident {_what(g.a_res)}"),
        EnQue("a2"),
        Alloc("b2"), Copy(b2, b_sub, comment=f"L1 -> L0B: one k tile of the resident {_what(g.b_res)}"),
        EnQue("b2"), DeQue("a2"), DeQue("b2"),
        Mmad(c, a2, b2, mlen, klen, nlen, E.sub(1, E.min(ko, 1)), b_layout="nk" if cs.tb else "kn",
             a_layout="km" if cs.ta else "mk", comment=mm_comment),
        Free("a2"), Free("b2"))
    if stream is None:  # both panels resident: the k loop reads L1 only
        return [Alloc("c"), Loop("ko", Const(0), Var("k_tiles"), Const(1), body,
                                 comment=f"split_loop: k in tiles of {tk} from the resident panels")]
    load, _ = stream
    which = "a" if not g.a_res else "b"
    step = g.sa if which == "a" else g.sb
    q = "a1" if which == "a" else "b1"
    inner = Loop("ko", Var("kx"), E.min(E.add(Var("kx"), step), Var("k_tiles")), Const(1), body,
                 comment=f"split_loop: k in tiles of {tk} from the L1 slab and the resident panel")
    return [Alloc("c"), Loop("kx", Const(0), Var("k_tiles"), Const(step), (*load, inner, Free(q)),
                             comment=f"L1: {which.upper()} streams in slabs of {step} k tiles of {tk}")]


def group_rows(cs: CubeShape, bufs: dict[str, Buffer], g: GroupShape, tm: int, tn: int, tk: int,
               mm_comment: str, a_off: Expr, b_off: Expr, tile_tail: list[Stmt]) -> list[Stmt]:
    """A group of a matmul kernel: B's panel (step_m > 1), then the group's tile rows one after
    another (A's panel per row when step_n > 1), each row's C tiles n inner. `tile_tail` follows each
    C tile's k loop (EnQue/DeQue c, the FixPipe copy, Free c). Needs Lets gm0/gmlen/gn0/gnlen."""
    M = cs.m_expr
    cols = group_cols(cs, bufs, g, tk, mm_comment, a_off, b_off, tn, tile_tail)
    row: list[Stmt] = [Let("m0", E.add(Var("gm0"), E.mul(Var("gi"), tm))),
                       Let("mlen", E.min(tm, E.sub(M, Var("m0"))))]
    if g.a_res:
        row += [*panel_load(cs, bufs, "a", Var("m0"), Var("mlen"), a_off), cols, Free("a1")]
    else:
        row.append(cols)
    rows = Loop("gi", Const(0), ceil_div(Var("gmlen"), tm), Const(1), tuple(row),
                comment=f"l1_c_steps: up to {g.step_m} tile rows of the group"
                        + (", all reading B's resident panel" if g.b_res else ""))
    if g.b_res:
        return [*panel_load(cs, bufs, "b", Var("gn0"), Var("gnlen"), b_off), rows, Free("b1")]
    return [rows]


def group_cols(cs: CubeShape, bufs: dict[str, Buffer], g: GroupShape, tk: int, mm_comment: str, a_off: Expr,
               b_off: Expr, tn: int, tile_tail: list[Stmt]) -> Loop:
    """The C tiles of one tile row of a group (n inner): Lets n0/nlen, the k loop, `tile_tail`."""
    n0, nlen = Var("n0"), Var("nlen")
    k = group_k_loop(cs, bufs, g, tk, mm_comment, Var("m0"), Var("mlen"), n0, nlen, E.mul(Var("gj"), tn),
                     a_off, b_off)
    return Loop("gj", Const(0), ceil_div(Var("gnlen"), tn), Const(1), (
        Let("n0", E.add(Var("gn0"), E.mul(Var("gj"), tn))), Let("nlen", E.min(tn, E.sub(cs.N, n0))),
        *k, *tile_tail),
        comment=f"l1_c_steps: up to {g.step_n} C tiles along n"
                + (", all reading A's resident panel" if g.a_res else ""))


def l1_k_loops(cs: CubeShape, bufs: dict[str, Buffer], tk: int, sa: int, sb: int, n0: Expr, nlen: Expr,
                a_off: Expr, b_off: Expr, names: dict[Node, str]) -> list[Stmt]:
    """The k loop with an L1 level: A (B) is loaded into L1 sa (sb) k tiles at a time and each k tile
    moves on to L0A (L0B) from the resident slab. The operand with the larger step is loaded in the
    outer loop, the other in a middle loop (when the steps differ); tails are min(...) everywhere."""
    K = cs.K

    def slab(which: str, kv: str, step: int) -> tuple[list[Stmt], Callable[[Expr, Expr], Region]]:
        """(load statements for the slab starting at k tile `kv`, L1 region of k tile ko in it)."""
        k0 = E.mul(Var(kv), tk)
        slen = E.min(tk * step, E.sub(K, k0))
        q = "a1" if which == "a" else "b1"
        cols = Const(bufs[q].cols)
        if which == "a":
            if cs.ta:
                src = Region(cs.a_name, E.add(a_off, E.add(E.mul(k0, cs.lda), Var("m0"))), slen, Var("mlen"),
                             Const(cs.lda), gm=True)
                dst = Region(q, Const(0), slen, Var("mlen"), cols)
            else:
                src = Region(cs.a_name, E.add(a_off, E.add(E.mul(Var("m0"), cs.lda), k0)), Var("mlen"), slen,
                             Const(cs.lda), gm=True)
                dst = Region(q, Const(0), Var("mlen"), slen, cols)
        elif cs.tb:
            src = Region(cs.b_name, E.add(b_off, E.add(E.mul(n0, K), k0)), nlen, slen, Const(K), gm=True)
            dst = Region(q, Const(0), nlen, slen, cols)
        else:
            src = Region(cs.b_name, E.add(b_off, E.add(E.mul(k0, cs.N), n0)), slen, nlen, Const(cs.N), gm=True)
            dst = Region(q, Const(0), slen, nlen, cols)
        load = [Alloc(q), Copy(dst, src, nd2nz=cs.nd2nz(which),
                             comment=f"L1: {step} k tiles of {which.upper()} from k tile {kv}"),
                EnQue(q), DeQue(q)]

        def sub(ko: Expr, klen: Expr) -> Region:
            rel = E.mul(E.sub(ko, Var(kv)), tk)  # k offset inside the slab
            kmajor = cs.ta if which == "a" else not cs.tb  # k runs down the rows of the slab
            if which == "a":
                return (Region(q, E.mul(rel, cols), klen, Var("mlen"), cols) if kmajor
                        else Region(q, rel, Var("mlen"), klen, cols))
            return (Region(q, E.mul(rel, cols), klen, nlen, cols) if kmajor
                    else Region(q, rel, nlen, klen, cols))
        return load, sub

    outer_a = sa >= sb
    big, small = (sa, sb) if outer_a else (sb, sa)
    ko, klen = Var("ko"), Var("klen")
    load_x, sub_x = slab("a" if outer_a else "b", "kx", big)
    if sa == sb:
        load_y, sub_y = slab("b", "kx", big)
    else:
        load_y, sub_y = slab("b" if outer_a else "a", "ky", small)
    sub_a, sub_b = (sub_x, sub_y) if outer_a else (sub_y, sub_x)
    a_sub, b_sub = sub_a(ko, klen), sub_b(ko, klen)
    a2 = Region("a2", Const(0), a_sub.rows, a_sub.cols, Const(bufs["a2"].cols))
    b2 = Region("b2", Const(0), b_sub.rows, b_sub.cols, Const(bufs["b2"].cols))
    c = Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols))
    inner_var = "kx" if sa == sb else "ky"
    k_body: tuple[Stmt, ...] = (
        Let("klen", E.min(tk, E.sub(K, E.mul(ko, tk)))),
        Alloc("a2"), Copy(a2, a_sub, comment="L1 -> L0A: one k tile of the resident slab"), EnQue("a2"),
        Alloc("b2"), Copy(b2, b_sub, comment="L1 -> L0B: one k tile of the resident slab"), EnQue("b2"),
        DeQue("a2"), DeQue("b2"),
        Mmad(c, a2, b2, Var("mlen"), klen, nlen, E.sub(1, E.min(ko, 1)),
             b_layout="nk" if cs.tb else "kn", a_layout="km" if cs.ta else "mk",
             comment=f"{names[cs.root]} = {cs.root.op.value}"),
        Free("a2"), Free("b2"))
    step = big if sa == sb else small
    k_loop = Loop("ko", Var(inner_var), E.min(E.add(Var(inner_var), step), Var("k_tiles")), Const(1), k_body,
                  comment=f"split_loop: k in tiles of {tk} from the L1 slab")
    x_q, y_q = ("a1", "b1") if outer_a else ("b1", "a1")
    if sa == sb:
        body: tuple[Stmt, ...] = (*load_x, *load_y, k_loop, Free(x_q), Free(y_q))
    else:
        mid = Loop("ky", Var("kx"), E.min(E.add(Var("kx"), big), Var("k_tiles")), Const(small),
                   (*load_y, k_loop, Free(y_q)),
                   comment=f"L1: {y_q[0].upper()} in slabs of {small} k tiles inside the {big}-tile slab of "
                           f"{x_q[0].upper()}")
        body = (*load_x, mid, Free(x_q))
    return [Loop("kx", Const(0), Var("k_tiles"), Const(big), body,
                 comment=f"L1: A in slabs of {sa}, B in slabs of {sb} k tiles of {tk}")]
