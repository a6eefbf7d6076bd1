"""The AIV epilogue of a mixed (cube_vector) kernel: the vector body over the rows of one unit the cube
core handed over in the workspace. The full lowering and the auto-schedule's UB probes build it alike."""

from __future__ import annotations

from dataclasses import replace

from ...core.errors import UnsupportedError
from ...fusion.partition import FusedKernel
from ...ir.node import Node
from ...tileir.expr import Const, E, Expr, Var, ceil_div
from ...tileir.hints import RuntimeRows
from ...tileir.program import Let, Loop, Region, Stmt
from ..config import KernelConfig
from ..operands import gm_operands
from ..vector_body import Operand, VecConfig, VectorBody
from .shape import CubeShape, aiv_rows

__all__ = ["mixed_epilogue"]


def mixed_epilogue(fk: FusedKernel, names: dict[Node, str], cs: CubeShape, cfg: KernelConfig, rt: RuntimeRows | None,
              row_block: bool, tm: int, tn: int, ws_name: str, ws_dtype: str, slot_base: Expr
              ) -> tuple[VectorBody, list[Stmt], Loop, str, int, int]:
    """A mixed kernel's AIV epilogue over the rows `lr0` of one unit in the workspace: its vector body,
    the statements hoisted out of the walk, the chunk loop, the scheme's note and the vector tile."""
    out_node = cs.root
    unit_cols = cs.N if row_block else tn
    row_base = E.add(E.mul(Var("bi"), cs.m_expr), Var("m0"))
    col_base = Const(0) if row_block else Var("n0")
    epi_inputs = {i for n in fk.nodes if n is not out_node for i in n.inputs}
    skip = {out_node} | {i for i in out_node.inputs if i not in epi_inputs}
    # a conv that takes its batch at run time reads tensors broadcast over the images at row % Cout
    periods = {i: cs.M for i in fk.inputs if cs.conv and rt is not None and names[i] not in rt.tensors
               and i not in cs.root.inputs and fk.input_view(i) in ("col", "full") and fk.input_period(i) is None}
    if cs.per_head:
        ins, outs = _per_head_operands(fk, names, cs, skip, col_base)
    else:
        ins, outs = gm_operands(fk, names, skip, E.add(row_base, Var("lr0")), col_base, periods)
    root_op = Operand(out_node, ws_name, "full", ws_dtype,
                      lambda r0, rlen, c0, clen: Region(ws_name, E.add(slot_base, E.add(
                          E.mul(E.add(Var("lr0"), r0), unit_cols), c0)), rlen, clen, Const(unit_cols), gm=True))
    vr = max(1, min(cfg.tile_rows, aiv_rows(tm)))
    vc = min(cfg.tile_cols, unit_cols)
    vb = VectorBody(fk, names, [root_op, *ins], outs,
                    VecConfig(vr, vc, cfg.depth_ub or cfg.depth, cfg.aligned, cfg.inline_scalars,
                              compute_dtype=cfg.compute_dtype),
                    skip=(out_node,),
                    row_len=cs.N)
    ucols = Const(cs.N) if row_block else Var("nlen")
    pre: list[Stmt] = []
    if row_block and vc < cs.N:
        inner = vb.multipass(Const(0), Var("crlen"), Const(0), ucols, "ci")
        scheme = (f"row reduction epilogue: multi-pass over column chunks of {vc} (narrower than the "
                  f"{cs.N}-wide row, by vectorize(-1, ...) or because whole rows do not fit UB); each AIV "
                  "re-reads its rows from the L2-resident workspace")
    elif row_block:
        pre = vb.hoist(ucols)  # row vectors (bias, gamma) are the same for every row block
        inner = vb.chunk(Const(0), Var("crlen"), Const(0), ucols)
        scheme = (f"row reduction epilogue: full rows ({cs.N} columns) per chunk of {vr} rows; the cube "
                  f"computes all {-(-cs.N // tn)} n tiles of a row block before handing it over")
    else:
        inner = None
        scheme = f"elementwise epilogue: per C tile hand-off, chunks of {vr}x{vc}"
    rows = (Let("lr0", E.add(Var("rs"), E.mul(Var("rc"), vr))),
            Let("crlen", E.min(vr, E.sub(Var("rl"), E.mul(Var("rc"), vr)))))
    if inner is not None:
        chunk_loop = Loop("rc", Const(0), ceil_div(Var("rl"), vr), Const(1), (*rows, *inner),
                          comment=f"vectorize_loop: {vr} rows per vector chunk")
    else:
        cc_body = vb.chunk(Const(0), Var("crlen"), Var("cc0"), Var("cclen"))
        chunk_loop = Loop("rc", Const(0), ceil_div(Var("rl"), vr), Const(1), (
            *rows,
            Loop("cq", Const(0), ceil_div(Var("nlen"), vc), Const(1), (
                Let("cc0", E.mul(Var("cq"), vc)), Let("cclen", E.min(vc, E.sub(Var("nlen"), Var("cc0")))),
                *cc_body), comment=f"vectorize_loop: {vc} columns per vector chunk")),
            comment=f"vectorize_loop: {vr} rows per vector chunk")
    return vb, pre, chunk_loop, scheme, vr, vc


def _per_head_operands(fk: FusedKernel, names: dict[Node, str], cs: CubeShape, skip: set[Node], col_base: Expr
                       ) -> tuple[list[Operand], list[Operand]]:
    """The epilogue's GM operands after a per-head matmul: C tile rows are tokens m0 + lr0 + r of head bi, so a
    tensor of C's whole [M, heads, N] shape is read and written in head bi's column band, rows heads * N apart;
    row vectors (one value per column) and scalars are the same for every head."""
    ins, outs = gm_operands(fk, names, skip, Const(0), col_base)
    ld = cs.ldc

    def band(op: Operand) -> Operand:
        if op.view in ("row", "scalar"):
            return op
        if op.view != "full" or tuple(op.node.shape) != tuple(cs.root.shape):
            raise UnsupportedError(
                f"kernel {fk.name}: {op.name}{list(op.node.shape)} in the epilogue of the per-head matmul "
                f"{names[cs.root]}{list(cs.root.shape)}: only tensors of its whole shape, one value per column "
                f"([{cs.N}]) or scalars follow its head bands; broadcast it to {list(cs.root.shape)} or keep the "
                f"epilogue out of the fusion (create_schedule(..., keep_out=[{names[cs.root]}]))")
        name = op.name

        def region(r0: Expr, rlen: Expr, c0: Expr, clen: Expr) -> Region:
            row = E.add(E.add(Var("m0"), Var("lr0")), r0)  # the token
            return Region(name, E.add(E.add(E.mul(Var("bi"), cs.N), E.mul(row, ld)), E.add(col_base, c0)),
                          rlen, clen, Const(ld), gm=True)

        return replace(op, region=region, row_region=None)

    return [band(o) for o in ins], [band(o) for o in outs]
