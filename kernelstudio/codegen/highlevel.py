"""The `high_level=True` code generation option: a vector kernel that is exactly one softmax, layer_norm or
rms_norm over whole rows (`Kernel.row_composite`, set by the lowering; its tiles hold whole rows in UB)
is written with the Ascend C high-level API (`AscendC::SoftMax`, `LayerNorm`, `RmsNorm`) instead of the
TileIR's instruction sequence.

The kernel copies tiles of whole rows in and out as the basic code does (same tiles, same cores, same
tiling fields), and computes each tile with one API call on the queue tensors in the tensor's own dtype
(half or float; the API computes in float inside). gamma and beta are loaded once per core; a missing one
is a row of ones or zeros. The API's tiling structs are filled on the host by the API's tiling functions,
for a full tile and (when the rows leave one) for the last, shorter tile, and travel in the tiling data.
A kernel that takes its rows at run time (`Kernel.runtime_rows`, as the basic code does) reads its row count,
tiles and block dim from the tiling, and TilingFunc fills the last tile's API tiling for the run's tail.
The tmp buffer given to the API is sized from the API's minimum and maximum temporary space (the twin's
formulas, `tiling/norm_tiling.h`), as much of the maximum as UB leaves; TilingFunc asks the API for its
minimum again and fails when the kernel's buffer is smaller.

Kernels this does not cover (cube kernels, column-split row reductions, anything beyond the one
composite, bfloat16) keep the basic instructions; their kernel file says why. The simulator prices
the TileIR's instruction sequence either way, not the API's internals, which CANN does not publish.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.dtypes import BLOCK_BYTES, block_bytes, block_elems, itemsize
from ..tileir.capacity import profile_of
from ..tileir.program import Kernel, Program, Tier
from .kernel import HELPERS, KERNEL_TYPES, entry_signature, head_comments, kernel_params, launch_lines
from .naming import names_of, param_names
from .scope import Scope, runtime_rows
from .writer import Writer, c_float, ctype

__all__ = ["HighLevelPlan", "high_level_plan", "high_level_kernel_source", "high_level_tiling_fields",
           "high_level_tiling_fill"]

_API = {"softmax": "SoftMax", "layer_norm": "LayerNorm", "rms_norm": "RmsNorm"}
_STRUCT = {"softmax": "SoftMaxTiling", "layer_norm": "LayerNormTiling", "rms_norm": "RmsNormTiling"}
_FIELD = {"softmax": "softmaxTilingData", "layer_norm": "layernormTilingData", "rms_norm": "rmsnormTilingData"}
HONESTY = ("the simulator prices the TileIR's instruction sequence for this kernel, not this call: the "
           "API's internals are not public")


def _pad32(nbytes: int) -> int:
    return block_bytes(nbytes)


def tmp_row_bytes(name: str, cols_p: int, dtype: str) -> int:
    """Temporary space one row needs (the twin's GetXxxMinTmpSize, `include/tiling/norm_tiling.h`)."""
    half = itemsize(dtype) == 2
    if name == "softmax":  # a block of the row's max and sum, the row and 64 more, as float32
        return (block_elems(dtype) + cols_p + 64) * 4
    if name == "layer_norm":
        return (3 if half else 2) * cols_p * 4
    return (2 if half else 1) * cols_p * 4 + 32


@dataclass(frozen=True, slots=True)
class HighLevelPlan:
    """How one kernel is written with the high-level API: the composite, its element type, the tile
    geometry and the UB it takes."""

    kernel: Kernel
    name: str  # "softmax" | "layer_norm" | "rms_norm"
    dtype: str
    rows: int
    cols: int
    cols_p: int  # cols padded to 32 bytes: the row length in UB the API sees
    tile_rows: int
    tail_rows: int  # rows of the last tile when it is shorter, else 0
    depth: int
    tmp_bytes: int
    runtime: bool = False  # the rows are the run's: the last tile's length is known at run time only

    @property
    def has_tail(self) -> bool:
        """Whether the kernel carries a second API tiling for a shorter last tile."""
        return self.runtime or self.tail_rows > 0

    @property
    def api(self) -> str:
        return _API[self.name]

    @property
    def struct(self) -> str:
        return _STRUCT[self.name]

    @property
    def field(self) -> str:
        return _FIELD[self.name]

    @property
    def tail_field(self) -> str:
        return self.field.replace("TilingData", "TailTilingData")

    @property
    def row_bytes(self) -> int:
        return self.cols_p * itemsize(self.dtype)

    def stats_bytes(self) -> int:
        """Bytes of each of the two per-row result buffers (max and sum, or mean and variance)."""
        if self.name == "softmax":
            return self.tile_rows * 32  # one 32-byte block per row
        return _pad32(self.tile_rows * itemsize(self.dtype))


def high_level_plan(prog: Program, k: Kernel) -> HighLevelPlan | str:
    """The plan for writing `k` with the high-level API, or why it keeps the basic instructions."""
    comp = k.row_composite
    if k.family != "vector" or k.aic:
        return f"a {k.family} kernel; the option covers vector kernels only"
    t = dict(k.tiling)
    if t.get("tile_cols", t.get("cols")) != t.get("cols"):
        return f"its tiles hold {t['tile_cols']} of the {t['cols']} columns of a row; the API needs whole rows"
    if comp is None:
        return ("its work is not exactly one softmax, layer_norm or rms_norm over whole rows of a float16 or "
                "float32 tensor")
    rows, cols, tr = t["rows"], t["cols"], t["tile_rows"]
    dtype = prog.tensor(comp.x).dtype
    per = block_elems(dtype)
    cols_p = -(-cols // per) * per
    depth = max((b.depth for b in k.buffers if b.queue is not None and b.tier is Tier.UB), default=1)
    tail = rows % tr
    runtime = runtime_rows(prog) is not None
    plan = HighLevelPlan(k, comp.name, dtype, rows, cols, cols_p, tr, tail, depth, 0, runtime)
    profile = profile_of(prog)  # the profile it was lowered for: a user's ub_bytes override holds here too
    row = tmp_row_bytes(comp.name, cols_p, dtype)
    ub = profile.capacity_bytes("UB")
    free = ub - _ub_without_tmp(plan)
    tmp = min(tr * row, free // BLOCK_BYTES * BLOCK_BYTES)
    if tmp < row:
        return (f"UB ({ub} B) leaves {free} B for the API's tmp buffer after the tiles, below the "
                f"{row} B one {cols}-wide row needs")
    return HighLevelPlan(k, comp.name, dtype, rows, cols, cols_p, tr, tail, depth, tmp, runtime)


def _ub_without_tmp(p: HighLevelPlan) -> int:
    tile = _pad32(p.tile_rows * p.row_bytes)
    affine = 2 if p.name == "layer_norm" else (1 if p.name == "rms_norm" else 0)
    stats = 2 * p.stats_bytes() if p.name != "rms_norm" else 0
    return 2 * p.depth * tile + affine * _pad32(p.row_bytes) + stats


# ---- host side ---------------------------------------------------------------------------------------
def high_level_tiling_fields(p: HighLevelPlan) -> list[str]:
    """The API's tiling structs in the kernel's tiling data: a full tile's and the last tile's."""
    out = [f"TILING_DATA_FIELD_DEF_STRUCT({p.struct}, {p.field});"]
    if p.has_tail:
        out.append(f"TILING_DATA_FIELD_DEF_STRUCT({p.struct}, {p.tail_field});")
    return out


def high_level_tiling_fill(w: Writer, var: str, p: HighLevelPlan) -> None:
    """TilingFunc lines: each tiling struct from the API's host tiling function, for the tmp buffer the
    kernel gives the API, after checking that buffer against the API's minimum. With run-time rows, the last
    tile's struct is filled for the run's tail (`rows` is TilingFunc's local), when there is one."""
    tmp = p.tmp_bytes
    w(f"// {p.api} tiling from the API's host tiling functions, for the {tmp}-byte tmp buffer the kernel gives it")
    w(f"{{  // {p.tile_rows} rows")
    with w.indented():
        _api_tiling(w, var, p, p.field, str(p.tile_rows))
    w("}")
    if p.runtime:
        w("// the last tile's rows, from the run's row count (none when the tiles divide the rows)")
        with w.block(f"if (rows % {p.tile_rows} != 0)"):
            w(f"const int64_t tailRows = rows % {p.tile_rows};")
            _api_tiling(w, var, p, p.tail_field, "tailRows")
    elif p.tail_rows:
        w(f"{{  // {p.tail_rows} rows")
        with w.indented():
            _api_tiling(w, var, p, p.tail_field, str(p.tail_rows))
        w("}")


def _api_tiling(w: Writer, var: str, p: HighLevelPlan, field: str, rows: str) -> None:
    """One API tiling struct for tiles of `rows` (C++ text) rows."""
    size, tmp = itemsize(p.dtype), p.tmp_bytes
    if p.name == "softmax":
        w(f"const ge::Shape srcShape({{{rows}, {p.cols_p}}});",
          f"const uint32_t minTmp = AscendC::GetSoftMaxMinTmpSize(srcShape, {size}, false);")
        with w.block(f"if (minTmp > {tmp})"):
            w("return ge::GRAPH_FAILED;  // the kernel's tmp buffer is below the API's minimum")
        w(f"AscendC::SoftMaxTilingFunc(srcShape, {size}, {tmp}, {var}.{field});")
    elif p.name == "layer_norm":
        w(f"const ge::Shape srcShape({{1, {rows}, {p.cols_p}, {p.cols}}});  // B, S, H, original H",
          "uint32_t maxTmp = 0, minTmp = 0;",
          f"AscendC::GetLayerNormMaxMinTmpSize(srcShape, {size}, false, maxTmp, minTmp);")
        with w.block(f"if (minTmp > {tmp})"):
            w("return ge::GRAPH_FAILED;  // the kernel's tmp buffer is below the API's minimum")
        w(f"AscendC::GetLayerNormNDTilingInfo(srcShape, {tmp}, {size}, false, {var}.{field});")
    else:
        w(f"const ge::Shape srcShape({{1, {rows}, {p.cols_p}}});",
          f"const ge::Shape originShape({{1, {rows}, {p.cols}}});", "uint32_t maxTmp = 0, minTmp = 0;")
        with w.block(f"if (!AscendC::GetRmsNormMaxMinTmpSize(srcShape, {size}, maxTmp, minTmp) || "
                     f"minTmp > {tmp})"):
            w("return ge::GRAPH_FAILED;  // the kernel's tmp buffer is below the API's minimum")
        with w.block(f"if (!AscendC::GetRmsNormTilingInfo(srcShape, originShape, {tmp}, {size}, "
                     f"{var}.{field}))"):
            w("return ge::GRAPH_FAILED;")


# ---- kernel side -------------------------------------------------------------------------------------
def _call(p: HighLevelPlan, tiling: str) -> str:
    t = ctype(p.dtype)
    eps = c_float(p.kernel.row_composite.eps, "float32")
    eps_t = eps if p.dtype == "float32" else f"static_cast<{t}>({eps})"
    if p.name == "softmax":
        shape = (f"AscendC::SoftMaxShapeInfo{{static_cast<uint32_t>(rlen), {p.cols_p}, static_cast<uint32_t>(rlen), "
                 f"{p.cols}}}")
        return f"AscendC::SoftMax<{t}>(yLocal, sumLocal, maxLocal, xLocal, tmpLocal, {tiling}, {shape});"
    if p.name == "layer_norm":
        return (f"AscendC::LayerNorm<{t}>(yLocal, meanLocal, varianceLocal, xLocal, gammaLocal, betaLocal, tmpLocal, "
                f"{eps_t}, {tiling});")
    return f"AscendC::RmsNorm<{t}>(yLocal, xLocal, gammaLocal, tmpLocal, {eps_t}, {tiling});"


def _affine(p: HighLevelPlan) -> list[tuple[str, str, float]]:
    """(member stem, GM tensor or "", fill value) of the row vectors the API takes."""
    comp = p.kernel.row_composite
    if p.name == "layer_norm":
        return [("gamma", comp.gamma, 1.0), ("beta", comp.beta, 0.0)]
    if p.name == "rms_norm":
        return [("gamma", comp.gamma, 1.0)]
    return []


def high_level_kernel_source(prog: Program, p: HighLevelPlan) -> str:
    """The whole `op_kernel/<name>.cpp` of a kernel written with the high-level API."""
    k = p.kernel
    comp = k.row_composite
    scope = Scope(prog, k)
    names = names_of(prog, k)
    params = kernel_params(prog, k)
    pnames = param_names(prog, k, params)
    t = ctype(p.dtype)
    tile_bytes = _pad32(p.tile_rows * p.row_bytes)
    f = scope.field_name
    w = Writer()
    w(*head_comments(prog, k))
    w(f"// high_level: {comp.name} written as AscendC::{p.api} on tiles of whole rows; {HONESTY}",
      '#include "kernel_operator.h"', "", *HELPERS.splitlines(), "",
      f"constexpr int32_t BUFFER_NUM = {p.depth};  // queue depth: 2 = double buffering", "")
    args = "".join(f"GM_ADDR {pnames[n]}, " for n in params)
    affine = _affine(p)
    with w.block(f"class {names.cls}", "};"):
        w.level -= 1
        w("public:")
        with w.indented():
            w(f"__aicore__ inline {names.cls}() {{}}")
            w(f"template <typename TilingData>  // {names.tiling}, as GET_TILING_DATA fills it")
            with w.block(f"__aicore__ inline void Init({args}GM_ADDR workspace, const TilingData& tiling)"):
                for n in scope.tiling:
                    w(f"{f(n)} = static_cast<int32_t>(tiling.{f(n)});")
                w(f"apiTiling = tiling.{p.field};  // {p.tile_rows} rows")
                if p.has_tail:
                    w(f"apiTailTiling = tiling.{p.tail_field};  // the last tile's "
                      + ("rows, when the run leaves a shorter one" if p.runtime else f"{p.tail_rows} rows"))
                for n in params:
                    w(f"{scope.gm_name(n)}.SetGlobalBuffer((__gm__ {t}*)({pnames[n]}), {_gm_size(scope, n)});")
                w("blockIdx = AscendC::GetBlockIdx();", "blockNum = AscendC::GetBlockNum();",
                  f"pipe.InitBuffer(inQueueX, BUFFER_NUM, {tile_bytes});  // {p.tile_rows} x {p.cols_p} {t}: "
                  f"{comp.x} from GM",
                  f"pipe.InitBuffer(outQueueY, BUFFER_NUM, {tile_bytes});  // {p.tile_rows} x {p.cols_p} {t}: "
                  f"{comp.out} to GM")
                for stem, gm, _ in affine:
                    kind = "Que" if gm else "Buf"
                    what = f"{gm} from GM, once per core" if gm else "absent: filled with a constant"
                    w(f"pipe.InitBuffer({stem}{kind}, {'1, ' if gm else ''}{_pad32(p.row_bytes)});  "
                      f"// 1 x {p.cols_p} {t}: {stem} ({what})")
                if p.name == "softmax":
                    w(f"pipe.InitBuffer(maxBuf, {p.stats_bytes()});  // each row's max, one 32-byte block per row",
                      f"pipe.InitBuffer(sumBuf, {p.stats_bytes()});  // each row's sum, one 32-byte block per row")
                elif p.name == "layer_norm":
                    w(f"pipe.InitBuffer(meanBuf, {p.stats_bytes()});  // each row's mean",
                      f"pipe.InitBuffer(varianceBuf, {p.stats_bytes()});  // each row's variance")
                w(f"pipe.InitBuffer(tmpBuf, {p.tmp_bytes});  // {p.api} sharedTmpBuffer (the host checks it "
                  f"against the API's minimum)")
            with w.block("__aicore__ inline void Process()"):
                w("ProcessVector();")
        w("", "private:")
        with w.indented():
            _methods(w, scope, p, affine)
        w("private:")
        with w.indented():
            w("AscendC::TPipe pipe;")
            for n in params:
                w(f"AscendC::GlobalTensor<{t}> {scope.gm_name(n)};")
            w("int32_t blockIdx;", "int32_t blockNum;")
            for n in scope.tiling:
                w(f"int32_t {f(n)};")
            w(f"{p.struct} apiTiling;")
            if p.has_tail:
                w(f"{p.struct} apiTailTiling;")
            w("AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;",
              "AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;")
            for stem, gm, _ in affine:
                if gm:
                    w(f"AscendC::TQue<AscendC::QuePosition::VECIN, 1> {stem}Que;")
                else:
                    w(f"AscendC::TBuf<AscendC::QuePosition::VECCALC> {stem}Buf;")
                w(f"AscendC::LocalTensor<{t}> {stem}Local;")
            stats = {"softmax": ("maxBuf", "sumBuf"), "layer_norm": ("meanBuf", "varianceBuf")}.get(p.name, ())
            for b in (*stats, "tmpBuf"):
                w(f"AscendC::TBuf<AscendC::QuePosition::VECCALC> {b};")
        w.level += 1
    w("")
    with w.block(entry_signature(prog, k)):
        w("GET_TILING_DATA(tilingData, tiling);", f"KERNEL_TASK_TYPE_DEFAULT({KERNEL_TYPES[k.kernel_type]});",
          *launch_lines(prog, k, names.cls))
    return w.text()


def _gm_size(scope: Scope, n: str) -> str:
    """Elements of GM tensor `n`: its lowered size, or the run's rows times its row for one that takes them."""
    size, rt = scope.prog.tensor(n).size, scope.runtime
    if rt is None or n not in rt.tensors:
        return str(size)
    return f"{scope.field_name(rt.rows)} * {size // scope.tiling[rt.rows]}"


def _methods(w: Writer, scope: Scope, p: HighLevelPlan, affine: list[tuple[str, str, float]]) -> None:
    comp = p.kernel.row_composite
    t, size = ctype(p.dtype), itemsize(p.dtype)
    f = scope.field_name
    with w.block("__aicore__ inline void ProcessVector()"):
        if affine:
            w("LoadRowVectors();")
        with w.block(f"for (int32_t t = blockIdx; t < {f('tiles')}; t += {f('block_dim')})"):
            w(f"const int32_t r0 = t * {f('tile_rows')};",
              f"const int32_t rlen = KS_MIN({f('tile_rows')}, {f('rows')} - r0);",
              "CopyIn(r0, rlen);", "Compute(rlen);", "CopyOut(r0, rlen);")
        for stem, gm, _ in affine:
            if gm:
                w(f"{stem}Que.FreeTensor({stem}Local);")
    w("")
    if affine:
        with w.block("__aicore__ inline void LoadRowVectors()"):
            for stem, gm, value in affine:
                if gm:
                    w(f"{stem}Local = {stem}Que.AllocTensor<{t}>();",
                      f"AscendC::DataCopyExtParams {stem}Params{{1, static_cast<uint32_t>({p.cols * size}), 0, 0, 0}};",
                      f"AscendC::DataCopyPadExtParams<{t}> {stem}Pad{{false, 0, 0, 0}};",
                      f"AscendC::DataCopyPad({stem}Local, {scope.gm_name(gm)}, {stem}Params, {stem}Pad);",
                      f"{stem}Que.EnQue({stem}Local);", f"{stem}Local = {stem}Que.DeQue<{t}>();")
                else:
                    lit = c_float(value, "float32")
                    w(f"{stem}Local = {stem}Buf.Get<{t}>();  // no {stem} in the design: {value:g} everywhere",
                      f"AscendC::Duplicate({stem}Local, {lit if p.dtype == 'float32' else f'static_cast<{t}>({lit})'},"
                      f" {p.cols_p});")
        w("")
    row_copy = (f"AscendC::DataCopyExtParams copyParams{{static_cast<uint16_t>(rlen), "
                f"static_cast<uint32_t>({p.cols * size}), 0, 0, 0}};")
    with w.block("__aicore__ inline void CopyIn(int32_t r0, int32_t rlen)"):
        w(f"AscendC::LocalTensor<{t}> xLocal = inQueueX.AllocTensor<{t}>();", row_copy,
          f"AscendC::DataCopyPadExtParams<{t}> padParams{{false, 0, 0, 0}};",
          f"AscendC::DataCopyPad(xLocal, {scope.gm_name(comp.x)}[r0 * {p.cols}], copyParams, padParams);",
          "inQueueX.EnQue(xLocal);")
    w("")
    with w.block("__aicore__ inline void Compute(int32_t rlen)"):
        w(f"AscendC::LocalTensor<{t}> xLocal = inQueueX.DeQue<{t}>();",
          f"AscendC::LocalTensor<{t}> yLocal = outQueueY.AllocTensor<{t}>();",
          "AscendC::LocalTensor<uint8_t> tmpLocal = tmpBuf.Get<uint8_t>();")
        if p.name == "softmax":
            w(f"AscendC::LocalTensor<{t}> maxLocal = maxBuf.Get<{t}>();",
              f"AscendC::LocalTensor<{t}> sumLocal = sumBuf.Get<{t}>();")
        elif p.name == "layer_norm":
            w(f"AscendC::LocalTensor<{t}> meanLocal = meanBuf.Get<{t}>();",
              f"AscendC::LocalTensor<{t}> varianceLocal = varianceBuf.Get<{t}>();")
        w(f"// {comp.name} of each row in one high-level call ({HONESTY})")
        if p.has_tail:
            with w.block(f"if (rlen == {f('tile_rows')})"):
                w(_call(p, "apiTiling"))
            with w.block("else", "}"):
                w(f"{_call(p, 'apiTailTiling')}  // the last tile: "
                  + ("the run's tail rows" if p.runtime else f"{p.tail_rows} rows"))
        else:
            w(_call(p, "apiTiling"))
        w("outQueueY.EnQue(yLocal);", "inQueueX.FreeTensor(xLocal);")
    w("")
    with w.block("__aicore__ inline void CopyOut(int32_t r0, int32_t rlen)"):
        w(f"AscendC::LocalTensor<{t}> yLocal = outQueueY.DeQue<{t}>();", row_copy,
          f"AscendC::DataCopyPad({scope.gm_name(comp.out)}[r0 * {p.cols}], yLocal, copyParams);",
          "outQueueY.FreeTensor(yLocal);")
    w("")
