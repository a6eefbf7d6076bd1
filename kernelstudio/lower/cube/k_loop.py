"""One C tile of a cube-rooted kernel: its k loop (A and B, or the conv's weights and img2col patches, through
L1 and L0 into Mmad), in k tiles, in L1 slabs of several k tiles, or over resident panels (groups.py)."""

from __future__ import annotations

from ...tileir.expr import Const, E, Expr, Var
from ...tileir.program import Alloc, Copy, DeQue, EnQue, Free, Img2Col, Let, Loop, Mmad, Region, Stmt
from .groups import l1_k_loops
from .plan import CubePlan

__all__ = ["c_tile"]


def c_tile(p: CubePlan, n0: Expr, nlen: Expr) -> list[Stmt]:
    """The statements that compute C tile [m0, +mlen) x [n0, +nlen) into L0C, ending with it dequeued."""
    cs, bufs, tk, sa, sb = p.cs, p.bufs, p.tk, p.sa, p.sb
    a_off, b_off = p.a_off, p.b_off
    s: list[Stmt] = []
    if cs.conv:
        s += _slab_load(p, n0, a_off)
    if not cs.conv and (sa > 1 or sb > 1):
        s += [Alloc("c"), *l1_k_loops(cs, bufs, tk, sa, sb, n0, nlen, a_off, b_off, p.names)]
    elif cs.conv and sa > 1:
        s += [Alloc("c"), _conv_weight_slabs(p, n0, nlen)]
    else:
        s += [Alloc("c"), Loop("ko", Const(0), Var("k_tiles"), Const(1), tuple(_k_body(p, n0, nlen)),
                               comment=f"split_loop: k in tiles of {tk}")]
    if cs.conv:
        s.append(Free("slab"))
    s += [EnQue("c"), DeQue("c")]
    return s


def _k_body(p: CubePlan, n0: Expr, nlen: Expr) -> list[Stmt]:
    """One k tile of A and B (or of the weights and img2col patches) through L1 and L0 into Mmad."""
    cs, bufs, tk = p.cs, p.bufs, p.tk
    a_off, b_off = p.a_off, p.b_off
    ko, k0, klen = Var("ko"), Var("k0"), Var("klen")
    k_body: list[Stmt] = [Let("k0", E.mul(ko, tk)), Let("klen", E.min(tk, E.sub(cs.K, Var("k0"))))]
    a_valid = None
    if cs.conv:  # A = weights [Cout, K]
        a_src, a_valid = cs.weights(Var("m0"), Var("mlen"), k0, klen)
    elif cs.ta:
        a_src = Region(cs.a_name, E.add(a_off, E.add(E.mul(k0, cs.lda), Var("m0"))), klen, Var("mlen"),
                       Const(cs.lda), gm=True)
    else:
        a_src = Region(cs.a_name, E.add(a_off, E.add(E.mul(Var("m0"), cs.lda), k0)), Var("mlen"), klen,
                       Const(cs.lda), gm=True)
    a_dims = (a_src.rows, a_src.cols)
    a1 = Region("a1", Const(0), a_dims[0], a_dims[1], Const(bufs["a1"].cols))
    a2 = Region("a2", Const(0), a_dims[0], a_dims[1], Const(bufs["a2"].cols))
    k_body += [Alloc("a1"), Copy(a1, a_src, nd2nz=True, comment="split_loop: k tile of A", valid_cols=a_valid),
               EnQue("a1")]
    if cs.conv:
        b2 = Region("b2", Const(0), nlen, klen, Const(bufs["b2"].cols))
        k_body += [DeQue("a1"), Alloc("a2"), Copy(a2, a1), EnQue("a2"), Free("a1"),
                   Alloc("b2"), _img2col(p, b2, n0, nlen, k0, klen), EnQue("b2")]
    else:
        if cs.tb:
            b_src = Region(cs.b_name, E.add(b_off, E.add(E.mul(n0, cs.K), k0)), nlen, klen, Const(cs.K),
                           gm=True)
        else:
            b_src = Region(cs.b_name, E.add(b_off, E.add(E.mul(k0, cs.N), n0)), klen, nlen, Const(cs.N),
                           gm=True)
        b1 = Region("b1", Const(0), b_src.rows, b_src.cols, Const(bufs["b1"].cols))
        b2 = Region("b2", Const(0), b_src.rows, b_src.cols, Const(bufs["b2"].cols))
        k_body += [Alloc("b1"), Copy(b1, b_src, nd2nz=cs.nd2nz("b"), comment="split_loop: k tile of B"), EnQue("b1"),
                   DeQue("a1"), Alloc("a2"), Copy(a2, a1), EnQue("a2"), Free("a1"),
                   DeQue("b1"), Alloc("b2"), Copy(b2, b1), EnQue("b2"), Free("b1")]
    c = Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols))
    k_body += [DeQue("a2"), DeQue("b2"),
               Mmad(c, a2, b2, Var("mlen"), klen, nlen, E.sub(1, E.min(ko, 1)),
                    b_layout="nk" if (cs.tb or cs.conv) else "kn", a_layout="km" if cs.ta else "mk",
                    comment=p.mm_comment),
               Free("a2"), Free("b2")]
    return k_body


def _slab_load(p: CubePlan, n0: Expr, a_off: Expr) -> list[Stmt]:
    """A conv's pixel tile [n0, n0+nlen) spans output rows oh_a..oh_b: load the input rows it needs."""
    cs, slab_rows = p.cs, p.slab_rows
    return [Let("oh_a", E.div(n0, cs.ow)),
            Let("h0", E.sub(E.mul(Var("oh_a"), cs.stride[0]), cs.pad[0])),
            Let("h_lo", E.max(Var("h0"), 0)),
            Let("h_hi", E.min(cs.h, E.add(Var("h0"), slab_rows))),
            Alloc("slab"),
            Copy(Region("slab", E.mul(E.sub(Var("h_lo"), Var("h0")), cs.w), Const(cs.cin),
                        E.mul(E.sub(Var("h_hi"), Var("h_lo")), cs.w), Const(slab_rows * cs.w)),
                 Region(cs.a_name, E.add(a_off, E.mul(Var("h_lo"), cs.w)), Const(cs.cin),
                        E.mul(E.sub(Var("h_hi"), Var("h_lo")), cs.w), Const(cs.h * cs.w), gm=True),
                 comment="input rows for this pixel tile (img2col source)"),
            EnQue("slab"), DeQue("slab")]


def _img2col(p: CubePlan, b2: Region, n0: Expr, nlen: Expr, k0: Expr, klen: Expr) -> Img2Col:
    cs, slab_rows = p.cs, p.slab_rows
    return Img2Col(b2, Region("slab", Const(0), Const(cs.cin_pad), Const(slab_rows * cs.w), Const(slab_rows * cs.w)),
                   cs.cin_pad, cs.h, cs.w, cs.kh, cs.kw, cs.stride, cs.pad, cs.ow, slab_rows,
                   n0, nlen, k0, klen, Var("h0"), comment="img2col: patches of this pixel tile",
                   cin_valid=p.cin_valid)


def _conv_weight_slabs(p: CubePlan, n0: Expr, nlen: Expr) -> Loop:
    """A conv with l1_k_steps: the weights load into L1 in slabs of sa k tiles, the k loop reads them there."""
    cs, bufs, tk, sa = p.cs, p.bufs, p.tk, p.sa
    ko, k0, klen, kx = Var("ko"), Var("k0"), Var("klen"), Var("kx")
    slen = E.min(tk * sa, E.sub(cs.K, E.mul(kx, tk)))
    cols = Const(bufs["a1"].cols)
    w_src, w_valid = cs.weights(Var("m0"), Var("mlen"), E.mul(kx, tk), slen)
    a2 = Region("a2", Const(0), Var("mlen"), klen, Const(bufs["a2"].cols))
    b2 = Region("b2", Const(0), nlen, klen, Const(bufs["b2"].cols))
    inner = (Let("k0", E.mul(ko, tk)), Let("klen", E.min(tk, E.sub(cs.K, Var("k0")))),
             Alloc("a2"), Copy(a2, Region("a1", E.mul(E.sub(ko, kx), tk), Var("mlen"), klen, cols),
                               comment="L1 -> L0A: one k tile of the resident weight slab"),
             EnQue("a2"), Alloc("b2"), _img2col(p, b2, n0, nlen, k0, klen),
             EnQue("b2"), DeQue("a2"), DeQue("b2"),
             Mmad(Region("c", Const(0), Var("mlen"), nlen, Const(bufs["c"].cols)), a2, b2, Var("mlen"),
                  klen, nlen, E.sub(1, E.min(ko, 1)), b_layout="nk", a_layout="mk", comment=p.mm_comment),
             Free("a2"), Free("b2"))
    return Loop("kx", Const(0), Var("k_tiles"), Const(sa), (
        # the weights are FRACTAL_Z in GM (the host converts them), already the fractal layout L1 holds: the
        # code moves them with a plain DataCopy of C0-wide column blocks, so the move is not priced as ND->NZ
        Alloc("a1"), Copy(Region("a1", Const(0), Var("mlen"), slen, cols), w_src, nd2nz=False,
                          comment=f"L1: {sa} k tiles of the weights from k tile kx", valid_cols=w_valid),
        EnQue("a1"), DeQue("a1"),
        Loop("ko", kx, E.min(E.add(kx, sa), Var("k_tiles")), Const(1), inner,
             comment=f"split_loop: k in tiles of {tk} from the L1 slab"),
        Free("a1")), comment=f"L1: weights in slabs of {sa} k tiles of {tk}")
