"""Lowering of `moe_gating_topk` (dsl/moe_gating.py): a vector kernel over tiles of token rows.

Per tile of `tile_rows` tokens (tile t on core t % block_dim): the logits and the bias come in (MTE2);
the vector unit makes the float32 scores (Cast when the logits are not float32, then Sigmoid) and the
selection values (Add of the bias row); after a V -> S event the scalar unit runs the group-limited
selection (`GateTopK`: GetValue / SetValue loops over each row, core/gating.py) into the weights and ids
tiles; after S -> V and S -> MTE3 events the vector unit renormalises the weights (a row sum, Adds of
eps, a Div by the per-row sum) and scales them (Muls), and MTE3 copies both tiles out. An MTE3 -> S
event before the selection keeps the scalar off an output slot still being copied out.
"""

from __future__ import annotations

from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..tileir.expr import Const, E, Var
from ..tileir.program import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
    DeQue,
    EnQue,
    Free,
    GateTopK,
    Kernel,
    Let,
    Loop,
    Pipe,
    QuePos,
    Reduce,
    Region,
    SetFlag,
    Stmt,
    Tier,
    VecOp,
    WaitFlag,
)
from .config import KernelConfig
from .ub import ub_buffer, whole_blocks
from .vector_body import ident

__all__ = ["lower_gating_kernel"]


def _flag(src: Pipe, dst: Pipe) -> tuple[Stmt, Stmt]:
    return SetFlag(src, dst, 0), WaitFlag(src, dst, 0)


def lower_gating_kernel(fk: FusedKernel, names: dict[Node, str], cfg: KernelConfig) -> Kernel:
    w_node = next((m for m in fk.nodes if m.attr("which") == "weights"), None)
    i_node = next((m for m in fk.nodes if m.attr("which") == "ids"), None)
    n = fk.nodes[0]
    x, b = n.inputs
    tokens, experts = x.shape
    k = n.attr("k")
    tr = max(1, min(cfg.tile_rows, tokens))
    total = -(-tokens // tr)
    bd = max(1, min(cfg.cores, total))
    xi, bi = names[x], names[b]
    b_x = ub_buffer(f"in_{ident(xi)}", x.dtype, tr, experts, cfg.depth, QuePos.VECIN, f"{xi} rows (router logits)")
    b_b = ub_buffer(f"in_{ident(bi)}", b.dtype, 1, experts, cfg.depth, QuePos.VECIN, f"{bi} (correction bias)")
    b_s = ub_buffer("gate_scores", "float32", tr, experts, 1, None, "sigmoid scores (the weights' source)")
    b_v = ub_buffer("gate_select", "float32", tr, experts, 1, None, "scores + bias (the selection values)")
    b_w = ub_buffer(f"out_{ident(names[w_node])}" if w_node is not None else "gate_weights", "float32", tr, k,
                    cfg.depth, QuePos.VECOUT if w_node is not None else None, "weights of the chosen experts")
    b_i = ub_buffer(f"out_{ident(names[i_node])}" if i_node is not None else "gate_ids", "int32", tr, k,
                    cfg.depth, QuePos.VECOUT if i_node is not None else None, "ids of the chosen experts")
    bufs: list[Buffer] = [b_x, b_b, b_s, b_v, b_w, b_i]

    def tile(buf: Buffer, cols: int, rows: object = Var("rlen")) -> Region:
        return Region(buf.name, Const(0), rows, Const(cols), Const(buf.cols))

    scores, sel, wts, ids = tile(b_s, experts), tile(b_v, experts), tile(b_w, k), tile(b_i, k)
    logits = tile(b_x, experts)
    stmts: list[Stmt] = [
        Let("r0", E.mul(Var("t"), tr)), Let("rlen", E.min(tr, E.sub(tokens, Var("r0")))),
        Alloc(b_x.name),
        Copy(logits, Region(xi, E.mul(Var("r0"), experts), Var("rlen"), Const(experts), Const(experts), gm=True),
             comment=f"copy in {xi}"),
        EnQue(b_x.name), DeQue(b_x.name),
        Alloc(b_b.name),
        Copy(tile(b_b, experts, Const(1)), Region(bi, Const(0), Const(1), Const(experts), Const(experts), gm=True),
             comment=f"copy in {bi}"),
        EnQue(b_b.name), DeQue(b_b.name)]
    if x.dtype == "float32":
        stmts.append(VecOp("sigmoid", scores, (logits,), comment="scores = sigmoid(logits)"))
        bias = tile(b_b, experts, Const(1))
    else:
        b_f = ub_buffer("gate_bias", "float32", 1, experts, 1, None, f"{bi} in float32")
        bufs.append(b_f)
        bias = tile(b_f, experts, Const(1))
        stmts += [VecOp("cast", scores, (logits,), comment=f"{xi} {x.dtype} -> float32"),
                  VecOp("sigmoid", scores, (scores,), comment="scores = sigmoid(logits)"),
                  VecOp("cast", bias, (tile(b_b, experts, Const(1)),), comment=f"{bi} {b.dtype} -> float32")]
    stmts += [VecOp("add", sel, (scores, bias), comment="selection values = scores + bias"),
              Free(b_x.name), Free(b_b.name)]
    outs = [(buf, m) for buf, m in ((b_w, w_node), (b_i, i_node)) if m is not None]
    stmts += [Alloc(buf.name) for buf, _ in outs]
    stmts += [*_flag(Pipe.V, Pipe.S), *_flag(Pipe.MTE3, Pipe.S),
              GateTopK(wts, ids, sel, scores, k, n.attr("groups"), n.attr("topk_groups"), n.attr("group_select"),
                       comment=f"top-{k} experts of {n.attr('topk_groups')}/{n.attr('groups')} groups (scalar)"),
              *_flag(Pipe.S, Pipe.V), *_flag(Pipe.S, Pipe.MTE3)]
    if n.attr("renorm"):
        acc = Buffer("gate_sum", Tier.UB, "float32", whole_blocks(tr, "float32"), 1, 1, None, CoreType.AIV,
                     "per-row sum of the weights")
        bufs.append(acc)
        col = Region(acc.name, Const(0), Var("rlen"), Const(1), Const(1))
        stmts += [Reduce("sum", col, wts, comment="row sums of the weights"),
                  VecOp("adds", col, (col,), n.attr("eps"), comment="+ eps"),
                  VecOp("div", wts, (wts, col), comment="weights / (sum + eps)")]
    if n.attr("route_scale") != 1.0:
        stmts.append(VecOp("muls", wts, (wts,), n.attr("route_scale"), comment="weights * route_scale"))
    stmts += [EnQue(buf.name) for buf, _ in outs]
    for buf, m in outs:
        stmts += [DeQue(buf.name),
                  Copy(Region(names[m], E.mul(Var("r0"), k), Var("rlen"), Const(k), Const(k), gm=True),
                       tile(buf, k), comment=f"copy out {names[m]}"),
                  Free(buf.name)]
    loop = Loop("t", Var("blk"), Var("tiles"), Var("block_dim"), tuple(stmts),
                comment=f"parallel_loop: {total} tiles over {bd} cores")
    tiling = (("gate_tokens", tokens), ("gate_experts", experts), ("gate_k", k), ("tile_rows", tr),
              ("tiles", total), ("block_dim", bd))
    return Kernel(name=ident(fk.name), family="vector", kernel_type="AIV_ONLY", block_dim=bd,
                  params=tuple(names[i] for i in fk.inputs) + tuple(names[o] for o in fk.outputs),
                  buffers=tuple(bufs), aiv=(loop,), tiling=tiling, ops=tuple(names[m] for m in fk.nodes),
                  vec_per_block=1,
                  notes=(f"MoE gating of {tokens} tokens over {experts} experts: top-{k} of {n.attr('topk_groups')}"
                         f"/{n.attr('groups')} groups",))
