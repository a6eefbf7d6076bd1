"""Emit rules for the layout and selection statements of the vector core: `select` (ks.where),
`transpose`, `TopK`, and the pipe events around scalar reads of UB (the index of a gather).

select. `cond != 0` becomes a bit mask in a uint8 TBuf (`CompareScalar(mask, cond, 0, CMPMODE::NE)`),
then `Select(dst, mask, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE)`. A one-column (per-row) or scalar
operand is read with GetValue and selected in `VSEL_TENSOR_SCALAR_MODE`; when it is `a`, the mask is
built with CMPMODE::EQ so the tensor operand is `b`. A per-row condition is first spread over the row
with `Duplicate`.

transpose. 2-byte data whose rows are whole 32-byte blocks goes through the `Transpose` API one 16x16
block at a time: a strided `DataCopy` gathers the block into a 512-byte scratch, `Transpose` turns it,
and a strided `DataCopy` writes its valid rows into dst. Other dtypes (float32, int32, int8) use the
per-element fallback: the scalar unit waits for the pipe that wrote src (`MTE2_S` for a VECIN queue,
else `V_S`; `MTE3_S` before overwriting a VECOUT tensor), moves each element with GetValue/SetValue,
and signals the consumer (`S_MTE3` for a VECOUT queue, else `S_V`).

TopK. The high-level `TopK<T, isInitIndex=true>` API in Normal mode, one row per call (so one
`TopkTiling` fits every tile, tails included): the tiling is made on the host by `TopKTilingFunc`
(inner, outter=1, k) and travels in the tiling data as `topkTilingData`; the source indices are an
`ArithProgression` 0..inner-1; rows whose length is not a multiple of 32 are copied into a scratch
row of `inner` elements padded with -inf. Values come out descending, ties to the lower index.

Gather. The TileIR carries the events a gather needs as SetFlag/WaitFlag pairs (MTE2 -> S before the
scalar reads the index tile; MTE3 -> MTE2 and MTE2 -> MTE3 around the row copies into a VECOUT tensor,
which the queue's V -> MTE3 events do not cover); vector.py prints them as FetchEventID + SetFlag +
WaitFlag.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.dtypes import block_elems, itemsize
from ..core.errors import UnsupportedError
from ..tileir.expr import Const, E, Var
from ..tileir.memo import KernelMemo
from ..tileir.program import Kernel, Program, QuePos, TopK, VecOp, walk
from ..tileir.scratch import TRANSPOSE_BLOCK, statement_scratch, topk_inner, topk_tmp_bytes
from .scope import Scope
from .vector import INSTR_RULES, VEC_RULES, Method, _kind, _Rows
from .writer import Writer, c_float, ctype

__all__ = ["LAYOUT_VEC_RULES", "LAYOUT_INSTR_RULES", "TopkSpec", "topk_spec", "topk_tmp_bytes"]

BROADCAST = ("col", "scalar")


def _scratch(m: Method, s: object, member: str) -> str:
    """Ask for the scratch TBuf `member` as tileir/scratch.py sizes it for statement `s` (one it did not
    plan is caught when the kernel's TBufs are written)."""
    nbytes, purpose = statement_scratch(m.scope.kernel, s).get(member, (0, member))
    return m.scope.need_scratch(member, nbytes, purpose)


# ---- select ------------------------------------------------------------------------------------
def _vec_select(op: str, s: VecOp, m: Method) -> None:
    sc, w = m.scope, m.w
    cond, a, b = s.srcs
    kc, ka, kb = (_kind(r, s.dst) for r in s.srcs)
    dt = sc.dtype(s.dst)
    if sc.dtype(cond) != dt or sc.dtype(a) != dt or sc.dtype(b) != dt:
        raise UnsupportedError(f"kernel {sc.kernel.name}: select needs cond, a and b in {dt} (got "
                               f"{sc.dtype(cond)}, {sc.dtype(a)}, {sc.dtype(b)}); cast them first")
    t = ctype(dt)
    mask_buf = _scratch(m, s, "selMaskBuf")
    if any(k in BROADCAST for k in (kc, ka, kb)):
        m.sync("V_S")
    mask = m.fresh("selMask")
    w(f"AscendC::LocalTensor<uint8_t> {mask} = {mask_buf}.Get<uint8_t>();")
    spread = ""
    if kc in BROADCAST:
        buf = _scratch(m, s, "selCondBuf")
        spread = m.fresh("selCond")
        w(f"AscendC::LocalTensor<{t}> {spread} = {buf}.Get<{t}>();")
    # the tensor operand is src0 of Select; with `a` broadcast, invert the mask and select from `b`
    mode = "EQ" if ka in BROADCAST else "NE"
    zero = c_float(0.0, dt)
    with _Rows(m, s.dst, s.srcs) as rows:
        n, dst = rows.count, rows.operand(s.dst)
        if kc in BROADCAST:
            w(f"AscendC::Duplicate({spread}, {rows.scalar(cond)}, {n});")
            cnd = spread
        else:
            cnd = rows.operand(cond)
        w(f"AscendC::CompareScalar({mask}, {cnd}, {zero}, AscendC::CMPMODE::{mode}, {n});")
        if ka in BROADCAST and kb in BROADCAST:
            va, vb = rows.scalar(a), rows.scalar(b)
            w(f"AscendC::Duplicate({dst}, {vb}, {n});",
              f"AscendC::Select({dst}, {mask}, {dst}, {va}, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});")
        elif ka in BROADCAST:
            va = rows.scalar(a)
            w(f"AscendC::Select({dst}, {mask}, {rows.operand(b)}, {va}, "
              f"AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});")
        elif kb in BROADCAST:
            vb = rows.scalar(b)
            w(f"AscendC::Select({dst}, {mask}, {rows.operand(a)}, {vb}, "
              f"AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});")
        else:
            w(f"AscendC::Select({dst}, {mask}, {rows.operand(a)}, {rows.operand(b)}, "
              f"AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});")


# ---- transpose -----------------------------------------------------------------------------------
BLK = TRANSPOSE_BLOCK  # Transpose works on 16 x 16 blocks of 2-byte elements


def _src_event(m: Method, buf: str) -> str:
    """The event a scalar read of `buf` waits on: the MTE2 copy of a VECIN queue, else the vector pipe."""
    return "MTE2_S" if m.scope.buffer(buf).queue is QuePos.VECIN else "V_S"


def _blocks_fit(m: Method, s: VecOp) -> bool:
    sc = m.scope
    (src,) = s.srcs
    if sc.itemsize(s.dst) != 2 or sc.itemsize(src) != 2:
        return False
    ss, ds = sc.static(src.stride), sc.static(s.dst.stride)
    if ss is None or ds is None or ss % BLK or ds % BLK:
        return False
    max_rows = sc.buffer(src.buf).rows
    return (sc.multiple(src.offset, BLK) and sc.multiple(s.dst.offset, BLK)
            and ds >= -(-max_rows // BLK) * BLK)


def _vec_transpose(op: str, s: VecOp, m: Method) -> None:
    (src,) = s.srcs
    if _blocks_fit(m, s):
        _transpose_blocks(s, m)
    else:
        _transpose_scalar(s, m)


def _transpose_blocks(s: VecOp, m: Method) -> None:
    sc, w = m.scope, m.w
    (src,) = s.srcs
    t = sc.ctype(s.dst)
    buf = _scratch(m, s, "transBuf")
    blk_in, blk_out = m.fresh("blockIn"), m.fresh("blockOut")
    bi, bj = m.fresh("blockRow"), m.fresh("blockCol")
    rows, cols = sc.expr(src.rows), sc.expr(src.cols)
    src_gap = sc.static(src.stride) // BLK - 1
    dst_gap = sc.static(s.dst.stride) // BLK - 1
    w(f"AscendC::LocalTensor<{t}> {blk_in} = {buf}.Get<{t}>();",
      f"AscendC::LocalTensor<{t}> {blk_out} = {blk_in}[{BLK * BLK}];")
    with w.block(f"for (int32_t {bi} = 0; {bi} < ({rows} + {BLK - 1}) / {BLK}; ++{bi})"):
        with w.block(f"for (int32_t {bj} = 0; {bj} < ({cols} + {BLK - 1}) / {BLK}; ++{bj})"):
            src_at = sc.at(src, E.add(E.mul(E.mul(Var(bi), BLK), src.stride), E.mul(Var(bj), BLK)))
            dst_at = sc.at(s.dst, E.add(E.mul(E.mul(Var(bj), BLK), s.dst.stride), E.mul(Var(bi), BLK)))
            pin, pout = m.fresh("inParams"), m.fresh("outParams")
            w(f"AscendC::DataCopyParams {pin}{{static_cast<uint16_t>(KS_MIN({BLK}, {rows} - {bi} * {BLK})), 1, "
              f"{src_gap}, 0}};",
              f"AscendC::DataCopy({blk_in}, {src_at}, {pin});",
              f"AscendC::Transpose({blk_out}, {blk_in});",
              f"AscendC::DataCopyParams {pout}{{static_cast<uint16_t>(KS_MIN({BLK}, {cols} - {bj} * {BLK})), 1, "
              f"0, {dst_gap}}};",
              f"AscendC::DataCopy({dst_at}, {blk_out}, {pout});")


def _transpose_scalar(s: VecOp, m: Method) -> None:
    sc, w = m.scope, m.w
    (src,) = s.srcs
    dst_q = sc.buffer(s.dst.buf).queue
    m.sync(_src_event(m, src.buf))
    if dst_q is QuePos.VECOUT:
        m.sync("MTE3_S")
    r, c = m.fresh("row"), m.fresh("col")
    t = sc.ctype(s.dst)
    with w.block(f"for (int32_t {r} = 0; {r} < {sc.expr(src.rows)}; ++{r})"):
        with w.block(f"for (int32_t {c} = 0; {c} < {sc.expr(src.cols)}; ++{c})"):
            si = sc.expr(E.add(src.offset, E.add(E.mul(Var(r), src.stride), Var(c))))
            di = sc.expr(E.add(s.dst.offset, E.add(E.mul(Var(c), s.dst.stride), Var(r))))
            w(f"{sc.tensor_name(s.dst.buf)}.SetValue({di}, static_cast<{t}>({sc.tensor_name(src.buf)}"
              f".GetValue({si})));")
    m.sync("S_MTE3" if dst_q is QuePos.VECOUT else "S_V")


# ---- TopK ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TopkSpec:
    """The one TopK shape of a kernel: rows of `n` valid values padded to `inner`, top `k`, of `dtype`."""

    n: int
    inner: int
    k: int
    dtype: str
    largest: bool = True


_TOPKS = KernelMemo()  # a vector program's TopK statements (the kernel source, header and TilingFunc ask)


def topk_spec(prog: Program, k: Kernel) -> TopkSpec | None:
    """The TopK shape of `k`'s vector program, or None when it has no TopK."""
    tops = _TOPKS.get((k.aiv,), lambda: [s for s in walk(k.aiv) if isinstance(s, TopK)])
    if not tops:
        return None
    scope = Scope(prog, k)
    specs = set()
    for s in tops:
        n = scope.static(s.src.cols)
        if n is None:
            raise UnsupportedError(f"kernel {k.name}: TopK over rows of {s.src.cols} elements; the row length "
                                   "must be a tiling constant")
        specs.add(TopkSpec(n, topk_inner(n), s.k, scope.dtype(s.src), s.largest))
    if len(specs) > 1:
        raise UnsupportedError(f"kernel {k.name}: TopK of {len(specs)} different shapes; one TopkTiling per kernel "
                               "is generated, split the kernel")
    return specs.pop() if specs else None


def topk_tiling_call(spec: TopkSpec, platform: str, target: str) -> str:
    """The host call that fills a TopkTiling for `spec` (one row per kernel call). The element size is a
    number: host code has no `half`."""
    return (f"AscendC::TopKTilingFunc({platform}, {spec.inner}, 1, {spec.k}, {itemsize(spec.dtype)}, true, "
            f"AscendC::TopKMode::TOPK_NORMAL, {'true' if spec.largest else 'false'}, {target});")


def _topk(s: TopK, m: Method) -> None:
    sc, w = m.scope, m.w
    spec = topk_spec(sc.prog, sc.kernel)
    assert spec is not None
    dt = sc.dtype(s.src)
    if dt not in ("float16", "float32"):
        raise UnsupportedError(f"kernel {sc.kernel.name}: TopK sorts float16 or float32, not {dt}; cast first")
    t, per = ctype(dt), block_elems(dt)
    kv, ki = -(-spec.k // per) * per, -(-spec.k // 8) * 8
    for region, want in ((s.values, kv), (s.indices, ki)):
        if region.rows != Const(1) and sc.static(region.stride) != want:
            raise UnsupportedError(f"kernel {sc.kernel.name}: TopK writes rows {want} elements apart into "
                                   f"{region.buf}, whose rows are {region.stride} apart; pad its columns to {want}")
    inner, n = spec.inner, spec.n
    direct = sc.static(s.src.stride) == inner and n == inner
    tmp_buf, idx_buf = _scratch(m, s, "topkTmpBuf"), _scratch(m, s, "topkIndexBuf")
    tmp, idx, fin, info = m.fresh("topkTmp"), m.fresh("topkIndex"), m.fresh("topkFinish"), m.fresh("topkInfo")
    w(f"AscendC::LocalTensor<uint8_t> {tmp} = {tmp_buf}.Get<uint8_t>();",
      f"AscendC::LocalTensor<int32_t> {idx} = {idx_buf}.Get<int32_t>();",
      f"AscendC::LocalTensor<bool> {fin};  // no finished rows (isHasfinish = false)",
      f"AscendC::ArithProgression<int32_t>({idx}, 0, 1, {inner});",
      f"AscendC::TopKInfo {info};",
      f"{info}.outter = 1;", f"{info}.inner = {inner};", f"{info}.n = {n};")
    row_src = ""
    if not direct:
        row_buf = _scratch(m, s, "topkRowBuf")
        row_src = m.fresh("topkRow")
        w(f"AscendC::LocalTensor<{t}> {row_src} = {row_buf}.Get<{t}>();")
    r = m.fresh("row")
    with w.block(f"for (int32_t {r} = 0; {r} < {sc.expr(s.src.rows)}; ++{r})"):
        src_row = sc.at(s.src, E.mul(Var(r), s.src.stride))
        if not direct:
            pad = float("-inf") if s.largest else float("inf")  # padding sorts after every valid value
            w(f"AscendC::Duplicate({row_src}, {c_float(pad, dt)}, {inner});",
              f"AscendC::Adds({row_src}, {src_row}, {c_float(0.0, dt)}, {n});")
            src_row = row_src
        vals = sc.at(s.values, E.mul(Var(r), kv))
        inds = sc.at(s.indices, E.mul(Var(r), ki))
        w(f"AscendC::TopK<{t}, true, false, false, AscendC::TopKMode::TOPK_NORMAL>({vals}, {inds}, {src_row}, "
          f"{idx}, {fin}, {tmp}, {spec.k}, topkTiling, {info}, {'true' if s.largest else 'false'});")
        if s.index_base != Const(0):
            w(f"AscendC::Adds({inds}, {inds}, static_cast<int32_t>({sc.expr(s.index_base)}), {spec.k});")


def topk_members(prog: Program, k: Kernel, members: Writer, init: Writer) -> None:
    """The kernel's copy of the TopkTiling from the tiling data (when it has a TopK)."""
    if topk_spec(prog, k) is not None:
        members("TopkTiling topkTiling;")
        init("topkTiling = tiling.topkTilingData;")


LAYOUT_VEC_RULES = {"select": _vec_select, "transpose": _vec_transpose}  # by form (tileir/vector_ops.py)
LAYOUT_INSTR_RULES = {TopK: _topk}

# The vector-core rules tables are completed here (kernel.py imports this module).
VEC_RULES.update(LAYOUT_VEC_RULES)
INSTR_RULES.update(LAYOUT_INSTR_RULES)
