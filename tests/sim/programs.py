"""Small hand-built TileIR programs for simulator tests (and the big benchmark kernel)."""

from __future__ import annotations

from kernelstudio.tileir.expr import Const, E, Var, ceil_div
from kernelstudio.tileir.program import (
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
    Program,
    QuePos,
    Reduce,
    Region,
    Tier,
    VecOp,
)

V = Var


def reg(buf, offset, rows, cols, stride, gm=False) -> Region:
    as_e = lambda x: Const(x) if isinstance(x, int) else (V(x) if isinstance(x, str) else x)  # noqa: E731
    return Region(buf, as_e(offset), as_e(rows), as_e(cols), as_e(stride), gm)


def loop(var, start, stop, body, step=1) -> Loop:
    as_e = lambda x: Const(x) if isinstance(x, int) else (V(x) if isinstance(x, str) else x)  # noqa: E731
    return Loop(var, as_e(start), as_e(stop), as_e(step), tuple(body))


def vector_kernel(name: str, rows: int, cols: int, tile: int, depth: int, block_dim: int,
                  src: str = "x", dst: str = "y", ops: tuple[str, ...] = ("muls", "adds", "relu"),
                  dtype: str = "float16") -> Kernel:
    """y = ops(x) row tile by row tile; tiles strided over blocks (vector family)."""
    tiles = -(-rows // tile)
    body = [
        Let("r0", E.mul("t", tile)),
        Let("rl", E.min(tile, E.sub(rows, "r0"))),
        Alloc("xin"),
        Copy(reg("xin", 0, "rl", cols, cols), reg(src, E.mul("r0", cols), "rl", cols, cols, True)),
        EnQue("xin"),
        DeQue("xin"),
        Alloc("yout"),
    ]
    prev = "xin"
    for op in ops:
        scalar = 2.0 if op in ("muls", "adds") else None
        body.append(VecOp(op, reg("yout", 0, "rl", cols, cols), (reg(prev, 0, "rl", cols, cols),), scalar))
        prev = "yout"
    body += [
        EnQue("yout"), Free("xin"), DeQue("yout"),
        Copy(reg(dst, E.mul("r0", cols), "rl", cols, cols, True), reg("yout", 0, "rl", cols, cols)),
        Free("yout"),
    ]
    bufs = (Buffer("xin", Tier.UB, dtype, tile, cols, depth, QuePos.VECIN),
            Buffer("yout", Tier.UB, dtype, tile, cols, depth, QuePos.VECOUT))
    return Kernel(name, "vector", "AIV_ONLY", block_dim, (src, dst), bufs,
                  aiv=(loop("t", "blk", tiles, body, step=block_dim),), tiling=(("tile", tile),))


def vector_program(rows: int = 1024, cols: int = 512, tile: int = 16, depth: int = 2,
                   block_dim: int = 8, ops: tuple[str, ...] = ("muls", "adds", "relu"),
                   target: str = "ascend910b2") -> Program:
    k = vector_kernel("vec", rows, cols, tile, depth, block_dim, ops=ops)
    t = (GmTensor("x", (rows, cols), "float16", "input"), GmTensor("y", (rows, cols), "float16", "output"))
    return Program("vec", target, t, (k,), ("x",), ("y",))


def single_copy_program(nbytes: int, src_tier: str = "GM", dst_tier: str = "UB", nd2nz: bool = False,
                        target: str = "ascend910b2") -> Program:
    """One Copy of `nbytes` (fp16 elements in one row) on one core."""
    n = nbytes // 2
    core = CoreType.AIC if "L1" in (src_tier, dst_tier) or "L0" in src_tier + dst_tier else CoreType.AIV
    bufs = []
    if src_tier != "GM":
        bufs.append(Buffer("s", Tier(src_tier), "float16", 1, n, 1, None, core))
    if dst_tier != "GM":
        bufs.append(Buffer("d", Tier(dst_tier), "float16", 1, n, 1, None, core))
    src = reg("x", 0, 1, n, n, True) if src_tier == "GM" else reg("s", 0, 1, n, n)
    dst = reg("y", 0, 1, n, n, True) if dst_tier == "GM" else reg("d", 0, 1, n, n)
    body = (Copy(dst, src, nd2nz=nd2nz),)
    side = {"aic": body} if core == CoreType.AIC else {"aiv": body}
    family = "cube" if core == CoreType.AIC else "vector"
    ktype = "AIC_ONLY" if core == CoreType.AIC else "AIV_ONLY"
    k = Kernel("copy", family, ktype, 1, ("x", "y"), tuple(bufs), **side)
    t = (GmTensor("x", (n,), "float16", "input"), GmTensor("y", (n,), "float16", "output"))
    return Program("copy", target, t, (k,), ("x",), ("y",))


def mix_kernel(m: int, n: int, k: int, tm: int, tk: int, depth: int, block_dim: int, vr: int = 8,
               norm: bool = False, name: str = "mix", tn: int | None = None) -> Kernel:
    """out = relu(x @ w^T + 1) (or an rms-norm-like epilogue with norm=True) as MIX_AIC_1_2:
    the AIC writes C tiles (tm x tn) to a workspace and sets flag 0 once a row band is complete;
    each AIV takes half the rows of the band."""
    tn = tn or n
    mtiles = -(-m // tm)
    ktiles = -(-k // tk)
    ntiles = -(-n // tn)
    kloop = loop("ko", 0, ktiles, [
        Let("kl", E.min(tk, E.sub(k, E.mul("ko", tk)))),
        Alloc("a1"), Alloc("b1"),
        Copy(reg("a1", 0, "ml", "kl", tk), reg("x", E.add(E.mul("m0", k), E.mul("ko", tk)), "ml", "kl", k, True),
             nd2nz=True),
        Copy(reg("b1", 0, "nl", "kl", tk), reg("w", E.add(E.mul("n0", k), E.mul("ko", tk)), "nl", "kl", k, True),
             nd2nz=True),
        EnQue("a1"), EnQue("b1"), DeQue("a1"), DeQue("b1"),
        Alloc("a2"), Alloc("b2"),
        Copy(reg("a2", 0, "ml", "kl", tk), reg("a1", 0, "ml", "kl", tk)),
        Copy(reg("b2", 0, "nl", "kl", tk), reg("b1", 0, "nl", "kl", tk)),
        EnQue("a2"), EnQue("b2"), Free("a1"), Free("b1"), DeQue("a2"), DeQue("b2"),
        Mmad(reg("c", 0, "ml", "nl", tn), reg("a2", 0, "ml", "kl", tk), reg("b2", 0, "nl", "kl", tk),
             V("ml"), V("kl"), V("nl"), E.sub(1, E.min(1, "ko")), "nk"),
        Free("a2"), Free("b2"),
    ])
    aic = (loop("t", "blk", mtiles, [
        Let("m0", E.mul("t", tm)), Let("ml", E.min(tm, E.sub(m, "m0"))),
        loop("nt", 0, ntiles, [
            Let("n0", E.mul("nt", tn)), Let("nl", E.min(tn, E.sub(n, "n0"))),
            Alloc("c"), kloop, EnQue("c"), DeQue("c"),
            Copy(reg("ws", E.add(E.mul("m0", n), "n0"), "ml", "nl", n, True), reg("c", 0, "ml", "nl", tn)),
            Free("c")]),
        CrossSet(0, Pipe.FIX),
    ], step=block_dim),)
    half = ceil_div("ml", 2)
    epi = [VecOp("adds", reg("yo32", 0, "rl", n, n), (reg("yin", 0, "rl", n, n),), 1.0),
           VecOp("relu", reg("yo32", 0, "rl", n, n), (reg("yo32", 0, "rl", n, n),))]
    if norm:
        epi = [VecOp("mul", reg("yo32", 0, "rl", n, n), (reg("yin", 0, "rl", n, n), reg("yin", 0, "rl", n, n))),
               Reduce("sum", reg("st", 0, "rl", 1, 8), reg("yo32", 0, "rl", n, n)),
               VecOp("rsqrt", reg("st", 0, "rl", 1, 8), (reg("st", 0, "rl", 1, 8),)),
               VecOp("mul", reg("yo32", 0, "rl", n, n), (reg("yin", 0, "rl", n, n), reg("st", 0, "rl", 1, 8)))]
    vloop = loop("r", 0, "vl", [
        Let("rl", E.min(vr, E.sub("vl", "r"))),
        Alloc("yin"),
        Copy(reg("yin", 0, "rl", n, n), reg("ws", E.mul(E.add("v0", "r"), n), "rl", n, n, True)),
        EnQue("yin"), DeQue("yin"), Alloc("yo"),
        *epi,
        VecOp("cast", reg("yo", 0, "rl", n, n), (reg("yo32", 0, "rl", n, n),)),
        EnQue("yo"), Free("yin"), DeQue("yo"),
        Copy(reg("out", E.mul(E.add("v0", "r"), n), "rl", n, n, True), reg("yo", 0, "rl", n, n)),
        Free("yo"),
    ], step=vr)
    aiv = (loop("t", "blk", mtiles, [
        Let("m0", E.mul("t", tm)), Let("ml", E.min(tm, E.sub(m, "m0"))),
        Let("v0", E.add("m0", E.mul("sub", half))),
        Let("vl", E.max(0, E.min(half, E.sub("ml", E.mul("sub", half))))),
        CrossWait(0),
        vloop,
    ], step=block_dim),)
    bufs = (
        Buffer("a1", Tier.L1, "float16", tm, tk, depth, QuePos.A1, CoreType.AIC),
        Buffer("b1", Tier.L1, "float16", tn, tk, depth, QuePos.B1, CoreType.AIC),
        Buffer("a2", Tier.L0A, "float16", tm, tk, depth, QuePos.A2, CoreType.AIC),
        Buffer("b2", Tier.L0B, "float16", tn, tk, depth, QuePos.B2, CoreType.AIC),
        Buffer("c", Tier.L0C, "float32", tm, tn, 1, QuePos.CO1, CoreType.AIC),
        Buffer("yin", Tier.UB, "float32", vr, n, depth, QuePos.VECIN),
        Buffer("yo", Tier.UB, "float16", vr, n, depth, QuePos.VECOUT),
        Buffer("yo32", Tier.UB, "float32", vr, n, 1, None),
        Buffer("st", Tier.UB, "float32", vr, 8, 1, None),
    )
    return Kernel(name, "cube_vector", "MIX_AIC_1_2", block_dim, ("x", "w", "out", "ws"), bufs,
                  aic=aic, aiv=aiv, tiling=(("tile_m", tm), ("tile_k", tk)), vec_per_block=2)


def mix_program(m: int = 64, n: int = 256, k: int = 256, tm: int = 16, tk: int = 64, depth: int = 2,
                block_dim: int = 4, vr: int = 8, norm: bool = False, target: str = "ascend910b2",
                tn: int | None = None) -> Program:
    kern = mix_kernel(m, n, k, tm, tk, depth, block_dim, vr, norm, tn=tn)
    t = (GmTensor("x", (m, k), "float16", "input"), GmTensor("w", (n, k), "float16", "input"),
         GmTensor("out", (m, n), "float16", "output"), GmTensor("ws", (m, n), "float32", "workspace"))
    return Program("mix", target, t, (kern,), ("x", "w"), ("out",))


def two_kernel_program(rows: int = 512, cols: int = 512, tile: int = 16, depth: int = 2,
                       block_dim: int = 8, target: str = "ascend910b2") -> Program:
    """An unfused plan: x -> relu -> h (intermediate) -> exp -> y."""
    k1 = vector_kernel("k_relu", rows, cols, tile, depth, block_dim, "x", "h", ("relu",))
    k2 = vector_kernel("k_exp", rows, cols, tile, depth, block_dim, "h", "y", ("exp",))
    t = (GmTensor("x", (rows, cols), "float16", "input"), GmTensor("h", (rows, cols), "float16", "intermediate"),
         GmTensor("y", (rows, cols), "float16", "output"))
    return Program("two", target, t, (k1, k2), ("x",), ("y",), fused=False)


def guarded(stmt_list, cond) -> If:
    return If(cond, tuple(stmt_list))


def big_program(target: str = "ascend910b2") -> Program:
    """M=16384, N=7168, K=1536 matmul + rms-norm epilogue: 128 x 28 x 24 = 86,016 k-iterations."""
    return mix_program(16384, 7168, 1536, tm=128, tk=64, depth=2, block_dim=24, vr=2, norm=True,
                       target=target, tn=256)
