"""TileIR programs built by hand, shaped as the lowering shapes them, with NumPy references.

Each builder returns `(program, reference)` where `reference(inputs) -> {output: float32 array}`.
They let the code generator be tested on every statement form without the front half.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from kernelstudio.tileir.expr import Const, E, Expr, Var, as_expr, ceil_div
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

Ref = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
V = Var


def R(buf: str, off: Expr | int | str, rows: Expr | int | str, cols: Expr | int | str,
      stride: Expr | int | str, gm: bool = False) -> Region:
    return Region(buf, as_expr(off), as_expr(rows), as_expr(cols), as_expr(stride), gm)


def pad(n: int, dtype_bytes: int) -> int:
    q = 32 // dtype_bytes
    return (n + q - 1) // q * q


def load(buf: str, dst: Region, src: Region) -> tuple:
    return (Alloc(buf), Copy(dst, src), EnQue(buf))


def store(buf: str, dst: Region, src: Region) -> tuple:
    return (DeQue(buf), Copy(dst, src), Free(buf))


def _tile_loop(body: tuple, comment: str = "parallel: tiles over cores") -> Loop:
    return Loop("t", V("blk"), V("ntiles"), V("block_dim"), body, comment)


def _f16(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float16).astype(np.float32)


# ---- elementwise chain with row broadcasts and 2-D tails -----------------------------------------
def elementwise(rows: int = 37, cols: int = 75, tile_rows: int = 8, tile_cols: int = 32, depth: int = 2,
                block_dim: int = 3, name: str = "scale_shift_relu") -> tuple[Program, Ref]:
    """out = relu(x * g + b) for x [rows, cols] f16, g and b [cols] f16 (broadcast over rows)."""
    tcp = pad(tile_cols, 2)
    ncol = math.ceil(cols / tile_cols)
    ntiles = math.ceil(rows / tile_rows) * ncol
    tiling = (("rows", rows), ("cols", cols), ("tile_rows", tile_rows), ("tile_cols", tile_cols),
              ("ncol_tiles", ncol), ("ntiles", ntiles), ("block_dim", block_dim))
    bufs = (
        Buffer("x_in", Tier.UB, "float16", tile_rows, tcp, depth, QuePos.VECIN),
        Buffer("g_in", Tier.UB, "float16", 1, tcp, depth, QuePos.VECIN),
        Buffer("b_in", Tier.UB, "float16", 1, tcp, depth, QuePos.VECIN),
        Buffer("y_out", Tier.UB, "float16", tile_rows, tcp, depth, QuePos.VECOUT),
        Buffer("xf", Tier.UB, "float32", tile_rows, tcp, purpose="fp32 math"),
        Buffer("gf", Tier.UB, "float32", 1, tcp),
        Buffer("bf", Tier.UB, "float32", 1, tcp),
    )
    rl, cl = V("rlen"), V("clen")
    tile = R("xf", 0, rl, cl, tcp)
    row = R("gf", 0, 1, cl, tcp)
    gm_off = E.add(E.mul("r0", "cols"), "c0")
    body = (
        Let("r0", E.mul(E.div("t", "ncol_tiles"), "tile_rows")),
        Let("c0", E.mul(E.mod("t", "ncol_tiles"), "tile_cols")),
        Let("rlen", E.min("tile_rows", E.sub("rows", "r0"))),
        Let("clen", E.min("tile_cols", E.sub("cols", "c0"))),
        *load("x_in", R("x_in", 0, rl, cl, tcp), R("x", gm_off, rl, cl, "cols", gm=True)),
        *load("g_in", R("g_in", 0, 1, cl, tcp), R("g", "c0", 1, cl, "cols", gm=True)),
        *load("b_in", R("b_in", 0, 1, cl, tcp), R("b", "c0", 1, cl, "cols", gm=True)),
        DeQue("x_in"), DeQue("g_in"), DeQue("b_in"),
        VecOp("cast", tile, (R("x_in", 0, rl, cl, tcp),), comment="x * g + b: fp32 math"),
        VecOp("cast", row, (R("g_in", 0, 1, cl, tcp),)),
        VecOp("cast", R("bf", 0, 1, cl, tcp), (R("b_in", 0, 1, cl, tcp),)),
        Free("x_in"), Free("g_in"), Free("b_in"),
        VecOp("mul", tile, (tile, row), comment="mul: g broadcast over rows"),
        VecOp("add", tile, (tile, R("bf", 0, 1, cl, tcp))),
        VecOp("relu", tile, (tile,), comment="relu"),
        Alloc("y_out"), VecOp("cast", R("y_out", 0, rl, cl, tcp), (tile,)), EnQue("y_out"),
        *store("y_out", R("out", gm_off, rl, cl, "cols", gm=True), R("y_out", 0, rl, cl, tcp)),
    )
    k = Kernel(name, "vector", "AIV_ONLY", block_dim, ("x", "g", "b", "out"), bufs,
               aiv=(_tile_loop(body),), tiling=tiling, ops=("mul", "add", "relu"))
    tensors = (GmTensor("x", (rows, cols), "float16", "input"), GmTensor("g", (cols,), "float16", "input"),
               GmTensor("b", (cols,), "float16", "input"), GmTensor("out", (rows, cols), "float16", "output"))
    prog = Program(name, "ascend910b2", tensors, (k,), ("x", "g", "b"), ("out",))

    def ref(inp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x, g, b = (inp[n].astype(np.float32) for n in ("x", "g", "b"))
        return {"out": _f16(np.maximum(x * g + b, 0))}

    return prog, ref


# ---- row reductions: softmax and layer_norm ------------------------------------------------------
def _row_kernel(name: str, rows: int, cols: int, tile_rows: int, depth: int, block_dim: int,
                compute: Callable[[Expr, int], tuple], extra: tuple[Buffer, ...], ops: tuple[str, ...],
                src: str = "x", dst: str = "out") -> Kernel:
    cp = pad(cols, 2)
    tiling = (("rows", rows), ("cols", cols), ("tile_rows", tile_rows),
              ("ntiles", math.ceil(rows / tile_rows)), ("block_dim", block_dim))
    bufs = (Buffer("x_in", Tier.UB, "float16", tile_rows, cp, depth, QuePos.VECIN),
            Buffer("y_out", Tier.UB, "float16", tile_rows, cp, depth, QuePos.VECOUT),
            Buffer("xf", Tier.UB, "float32", tile_rows, cp, purpose="fp32 row tile"),
            Buffer("stat", Tier.UB, "float32", tile_rows, 8, purpose="one value per row"), *extra)
    rl = V("rlen")
    tile_in = R("x_in", 0, rl, "cols", cp)
    body = (
        Let("r0", E.mul("t", "tile_rows")),
        Let("rlen", E.min("tile_rows", E.sub("rows", "r0"))),
        *load("x_in", tile_in, R(src, E.mul("r0", "cols"), rl, "cols", "cols", gm=True)),
        DeQue("x_in"),
        VecOp("cast", R("xf", 0, rl, "cols", cp), (tile_in,)),
        Free("x_in"),
        *compute(rl, cp),
        Alloc("y_out"), VecOp("cast", R("y_out", 0, rl, "cols", cp), (R("xf", 0, rl, "cols", cp),)),
        EnQue("y_out"),
        *store("y_out", R(dst, E.mul("r0", "cols"), rl, "cols", "cols", gm=True), R("y_out", 0, rl, "cols", cp)),
    )
    return Kernel(name, "vector", "AIV_ONLY", block_dim, (src, dst), bufs, aiv=(_tile_loop(body),),
                  tiling=tiling, ops=ops)


def _softmax_body(rl: Expr, cp: int) -> tuple:
    x, st = R("xf", 0, rl, "cols", cp), R("stat", 0, rl, 1, 8)
    return (Reduce("max", st, x, comment="softmax: row max"), VecOp("sub", x, (x, st)),
            VecOp("exp", x, (x,)), Reduce("sum", st, x, comment="softmax: row sum"), VecOp("div", x, (x, st)))


def _layer_norm_body(cols: int, eps: float) -> Callable[[Expr, int], tuple]:
    def body(rl: Expr, cp: int) -> tuple:
        x, st = R("xf", 0, rl, "cols", cp), R("stat", 0, rl, 1, 8)
        sq = R("sq", 0, rl, "cols", cp)
        return (Reduce("sum", st, x, comment="layer_norm: mean"), VecOp("muls", st, (st,), 1.0 / cols),
                VecOp("sub", x, (x, st)), VecOp("square", sq, (x,)),
                Reduce("sum", st, sq, comment="layer_norm: variance"), VecOp("muls", st, (st,), 1.0 / cols),
                VecOp("adds", st, (st,), eps), VecOp("rsqrt", st, (st,)), VecOp("mul", x, (x, st)))
    return body


def softmax(rows: int = 45, cols: int = 100, tile_rows: int = 8, depth: int = 2,
            block_dim: int = 4) -> tuple[Program, Ref]:
    k = _row_kernel("softmax_rows", rows, cols, tile_rows, depth, block_dim, _softmax_body, (),
                    ("reduce_max", "sub", "exp", "reduce_sum", "div"))
    prog = Program("softmax_rows", "ascend910b2", (GmTensor("x", (rows, cols), "float16", "input"),
                                                    GmTensor("out", (rows, cols), "float16", "output")),
                   (k,), ("x",), ("out",))

    def ref(inp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inp["x"].astype(np.float32)
        e = np.exp(x - x.max(-1, keepdims=True))
        return {"out": _f16(e / e.sum(-1, keepdims=True))}

    return prog, ref


def layer_norm(rows: int = 30, cols: int = 64, tile_rows: int = 8, depth: int = 1,
               block_dim: int = 2, eps: float = 1e-5) -> tuple[Program, Ref]:
    sq = Buffer("sq", Tier.UB, "float32", tile_rows, pad(cols, 2))
    k = _row_kernel("layer_norm_rows", rows, cols, tile_rows, depth, block_dim, _layer_norm_body(cols, eps),
                    (sq,), ("reduce_mean", "sub", "square", "rsqrt", "mul"))
    prog = Program("layer_norm_rows", "ascend910b2", (GmTensor("x", (rows, cols), "float16", "input"),
                                                      GmTensor("out", (rows, cols), "float16", "output")),
                   (k,), ("x",), ("out",))

    def ref(inp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"out": _f16(_ln(inp["x"].astype(np.float32), eps))}

    return prog, ref


def _ln(x: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


def unfused_chain(rows: int = 20, cols: int = 48) -> tuple[Program, Ref]:
    """softmax(layer_norm(x)) as two kernels with a GM intermediate."""
    sq = Buffer("sq", Tier.UB, "float32", 8, pad(cols, 2))
    k1 = _row_kernel("ln_part", rows, cols, 8, 2, 2, _layer_norm_body(cols, 1e-5), (sq,), ("layer_norm",),
                     dst="mid")
    k2 = _row_kernel("softmax_part", rows, cols, 8, 2, 3, _softmax_body, (), ("softmax",), src="mid")
    tensors = (GmTensor("x", (rows, cols), "float16", "input"),
               GmTensor("mid", (rows, cols), "float16", "intermediate"),
               GmTensor("out", (rows, cols), "float16", "output"))
    prog = Program("ln_softmax", "ascend910b2", tensors, (k1, k2), ("x",), ("out",), fused=False)

    def ref(inp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        h = _f16(_ln(inp["x"].astype(np.float32), 1e-5))
        e = np.exp(h - h.max(-1, keepdims=True))
        return {"out": _f16(e / e.sum(-1, keepdims=True))}

    return prog, ref


# ---- MIX: matmul (transpose_b) + layer_norm + bias + relu epilogue ------------------------------
def mla_prolog_lite(M: int = 64, N: int = 512, K: int = 256, tile_m: int = 16, tile_k: int = 32,
                    block_dim: int = 3, vec_rows: int = 8, act: str = "relu") -> tuple[Program, Ref]:
    """out = act(layer_norm(x @ w.T) + bias): the cube writes C row tiles to a workspace, the two AIVs
    of the block wait for the flag and run the epilogue on half the rows each."""
    ntiles, nk = math.ceil(M / tile_m), math.ceil(K / tile_k)
    tiling = (("M", M), ("N", N), ("K", K), ("tile_m", tile_m), ("tile_n", N), ("tile_k", tile_k),
              ("ntiles", ntiles), ("nk", nk), ("block_dim", block_dim), ("vec_rows", vec_rows))
    aic, aiv = CoreType.AIC, CoreType.AIV
    bufs = (
        Buffer("a1", Tier.L1, "float16", tile_m, tile_k, 2, QuePos.A1, aic),
        Buffer("b1", Tier.L1, "float16", N, tile_k, 2, QuePos.B1, aic),
        Buffer("a2", Tier.L0A, "float16", tile_m, tile_k, 2, QuePos.A2, aic),
        Buffer("b2", Tier.L0B, "float16", N, tile_k, 2, QuePos.B2, aic),
        Buffer("c", Tier.L0C, "float32", tile_m, N, 1, QuePos.CO1, aic),
        Buffer("y_in", Tier.UB, "float32", vec_rows, N, 2, QuePos.VECIN, aiv),
        Buffer("bias_in", Tier.UB, "float16", 1, N, 1, QuePos.VECIN, aiv),
        Buffer("o_out", Tier.UB, "float16", vec_rows, N, 2, QuePos.VECOUT, aiv),
        Buffer("biasf", Tier.UB, "float32", 1, N, core=aiv),
        Buffer("xf", Tier.UB, "float32", vec_rows, N, core=aiv),
        Buffer("sq", Tier.UB, "float32", vec_rows, N, core=aiv),
        Buffer("stat", Tier.UB, "float32", vec_rows, 8, core=aiv),
    )
    ml, kl = V("mlen"), V("klen")
    k_loop = Loop("ko", Const(0), V("nk"), Const(1), (
        Let("k0", E.mul("ko", "tile_k")),
        Let("klen", E.min("tile_k", E.sub("K", "k0"))),
        *load("a1", R("a1", 0, ml, kl, "tile_k"), R("x", E.add(E.mul("m0", "K"), "k0"), ml, kl, "K", gm=True)),
        *load("b1", R("b1", 0, "N", kl, "tile_k"), R("w", "k0", "N", kl, "K", gm=True)),
        DeQue("a1"), Alloc("a2"), Copy(R("a2", 0, ml, kl, "tile_k"), R("a1", 0, ml, kl, "tile_k")), EnQue("a2"),
        Free("a1"),
        DeQue("b1"), Alloc("b2"), Copy(R("b2", 0, "N", kl, "tile_k"), R("b1", 0, "N", kl, "tile_k")),
        EnQue("b2"), Free("b1"),
        DeQue("a2"), DeQue("b2"),
        Mmad(R("c", 0, ml, "N", "N"), R("a2", 0, ml, kl, "tile_k"), R("b2", 0, "N", kl, "tile_k"), ml, kl,
             V("N"), E.sub(1, E.min("ko", 1)), b_layout="nk", comment="matmul(x, w, transpose_b)"),
        Free("a2"), Free("b2"),
    ), comment="split k")
    aic_prog = (Loop("t", V("blk"), V("ntiles"), V("block_dim"), (
        Let("m0", E.mul("t", "tile_m")),
        Let("mlen", E.min("tile_m", E.sub("M", "m0"))),
        Alloc("c"), k_loop,
        Copy(R("ws", E.mul("m0", "N"), ml, "N", "N", gm=True), R("c", 0, ml, "N", "N"),
             comment="FixPipe C tile -> workspace"),
        Free("c"),
        CrossSet(0, Pipe.FIX),
    ), comment="parallel m tiles over cores"),)

    rl = V("rlen")
    x, st, sq = R("xf", 0, rl, "N", "N"), R("stat", 0, rl, 1, 8), R("sq", 0, rl, "N", "N")
    act_op = VecOp(act, x, (x,), comment=act)
    epilogue = (
        *load("y_in", R("y_in", 0, rl, "N", "N"), R("ws", E.mul("r0", "N"), rl, "N", "N", gm=True)),
        DeQue("y_in"), VecOp("copy", x, (R("y_in", 0, rl, "N", "N"),)), Free("y_in"),
        Reduce("sum", st, x, comment="layer_norm: mean"), VecOp("muls", st, (st,), 1.0 / N),
        VecOp("sub", x, (x, st)), VecOp("mul", sq, (x, x)),
        Reduce("sum", st, sq, comment="layer_norm: variance"), VecOp("muls", st, (st,), 1.0 / N),
        VecOp("adds", st, (st,), 1e-5), VecOp("rsqrt", st, (st,)), VecOp("mul", x, (x, st)),
        VecOp("add", x, (x, R("biasf", 0, 1, "N", "N")), comment="add bias"),
        act_op,
        Alloc("o_out"), VecOp("cast", R("o_out", 0, rl, "N", "N"), (x,)), EnQue("o_out"),
        *store("o_out", R("out", E.mul("r0", "N"), rl, "N", "N", gm=True), R("o_out", 0, rl, "N", "N")),
    )
    aiv_prog = (
        *load("bias_in", R("bias_in", 0, 1, "N", "N"), R("bias", 0, 1, "N", "N", gm=True)),
        DeQue("bias_in"), VecOp("cast", R("biasf", 0, 1, "N", "N"), (R("bias_in", 0, 1, "N", "N"),)),
        Free("bias_in"),
        Loop("t", V("blk"), V("ntiles"), V("block_dim"), (
            CrossWait(0),
            Let("m0", E.mul("t", "tile_m")),
            Let("mlen", E.min("tile_m", E.sub("M", "m0"))),
            Let("half", ceil_div("mlen", 2)),
            Let("vlen", E.max(0, E.min("half", E.sub("mlen", E.mul("sub", "half"))))),
            Loop("v", Const(0), ceil_div("vlen", "vec_rows"), Const(1), (
                Let("r0", E.add(E.add("m0", E.mul("sub", "half")), E.mul("v", "vec_rows"))),
                Let("rlen", E.min("vec_rows", E.sub("vlen", E.mul("v", "vec_rows")))),
                *epilogue,
            ), comment="rows of this AIV"),
        ), comment="parallel m tiles over cores"),
    )
    k = Kernel("mla_prolog_lite", "cube_vector", "MIX_AIC_1_2", block_dim, ("x", "w", "bias", "out", "ws"),
               bufs, aic=aic_prog, aiv=aiv_prog, tiling=tiling, ops=("matmul", "layer_norm", "add", act),
               vec_per_block=2)
    tensors = (GmTensor("x", (1, M, K), "float16", "input"), GmTensor("w", (N, K), "float16", "input"),
               GmTensor("bias", (N,), "float16", "input"), GmTensor("out", (1, M, N), "float16", "output"),
               GmTensor("ws", (M, N), "float32", "workspace"))
    prog = Program("mla_prolog_lite", "ascend910b2", tensors, (k,), ("x", "w", "bias"), ("out",))

    def ref(inp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        y = inp["x"].astype(np.float32)[0] @ inp["w"].astype(np.float32).T
        h = _ln(y, 1e-5) + inp["bias"].astype(np.float32)
        h = np.maximum(h, 0) if act == "relu" else h
        return {"out": _f16(h)[None]}

    return prog, ref


ALL = {"elementwise": elementwise, "softmax": softmax, "layer_norm": layer_norm,
       "unfused_chain": unfused_chain, "mla_prolog_lite": mla_prolog_lite}
