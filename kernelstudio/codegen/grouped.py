"""`op_kernel/<op>.cpp` of a grouped matmul kernel (lower/cube/grouped.py): Matmul API calls per output tile on
the AIC, with the tile list computed from the group list in GM, and the zeroing of the rows past the groups'
total on the AIVs.

The AIC walks the groups in order: it reads each group's size from the group list (`GetValue`, a count or the
difference of two cumsum entries), and takes the group's tiles j with (base + j) % blockNum == blockIdx, base
counting the tiles of the groups before, so the deal of tiles over cores goes on across groups. Per tile:

    matmulObj.SetTensorA(xGm[m0 * K], false);          // the group's rows [m0, m0 + mlen) of x
    matmulObj.SetTensorB(wGm[g * K * N + n0], false);  // expert g's weights, columns from n0
    matmulObj.SetSingleShape(mlen, nlen, K);           // a group's last tile row has its tail rows
    matmulObj.IterateAll(yGm[m0 * N + n0]);  matmulObj.End();

The host TilingFunc fills TCubeTiling as for any matmul (M = x's rows, singleCoreM/N = the tile). The AIVs sum
the group list too and copy a zeroed UB tile over rows [total, M), chunks of rows dealt over every AIV.
"""

from __future__ import annotations

from ..tileir.program import Kernel, Program
from .cube import CubePart
from .kernel import HELPERS, KERNEL_TYPES, entry_signature, head_comments, kernel_params, launch_lines
from .naming import names_of, param_names
from .scope import Scope
from .writer import Writer, ctype

__all__ = ["is_grouped", "grouped_kernel_source"]


def is_grouped(k: Kernel) -> bool:
    """Whether `k` is a grouped matmul kernel (its tiling has the groups and its plan reads the group list)."""
    return bool(k.planned_loads) and "groups" in dict(k.tiling)


def grouped_kernel_source(prog: Program, k: Kernel) -> str:
    sc = Scope(prog, k)
    t = dict(k.tiling)
    x, wt, gl, y = k.params
    names = names_of(prog, k)
    cls = names.cls
    params = kernel_params(prog, k)
    pnames = param_names(prog, k, params)
    cube = CubePart(sc)  # the Matmul types and tiling, found from the AIC program as for any matmul
    c_t = ctype(prog.tensor(y).dtype)
    cumsum = bool(t["cumsum"])
    zero = k.buffer("zero")
    fields = ("M", "N", "K", "groups", "tile_m", "tile_n", "n_tiles", "zero_rows")
    f = {n: sc.field_name(n) for n in fields}
    gm = {p: sc.gm_name(p) for p in k.params}
    members, init = Writer(), Writer()
    cube.declare(members, init)  # the Matmul's types and tiling as any matmul kernel has them; ProcessCube is ours
    w = Writer()
    w(*head_comments(prog, k))
    w("#ifndef ASCENDC_CUBE_ONLY",
      "#define ASCENDC_CUBE_ONLY  // the AIC drives Matmul itself; the AIVs only zero the rows past the total",
      "#endif", '#include "kernel_operator.h"', '#include "lib/matmul_intf.h"', "", *HELPERS.splitlines(), "")
    with w.block(f"class {cls}", "};"):
        w.level -= 1
        w("public:")
        with w.indented():
            w(f"__aicore__ inline {cls}() {{}}")
            w(f"template <typename TilingData>  // {names.tiling}, as GET_TILING_DATA fills it")
            args = "".join(f"GM_ADDR {pnames[p]}, " for p in params)
            with w.block(f"__aicore__ inline void Init({args}GM_ADDR workspace, const TilingData& tiling)"):
                for n in fields:
                    w(f"{f[n]} = static_cast<int32_t>(tiling.{f[n]});")
                w.extend(init)
                for p in k.params:
                    w(f"{gm[p]}.SetGlobalBuffer((__gm__ {ctype(prog.tensor(p).dtype)}*)({pnames[p]}), "
                      f"{prog.tensor(p).size});")
                w("if ASCEND_IS_AIV {",
                  "    blockIdx = AscendC::GetBlockIdx() / AscendC::GetTaskRation();  // AIVs count 2 per block",
                  f"    pipe.InitBuffer(zeroBuf, {zero.slot_bytes});  // {zero.purpose}",
                  "} else {", "    blockIdx = AscendC::GetBlockIdx();", "}",
                  "subBlockIdx = AscendC::GetSubBlockIdx();", "blockNum = AscendC::GetBlockNum();")
            with w.block("__aicore__ inline void Process()"):
                w("if ASCEND_IS_AIC {", "    ProcessCube();", "}", "if ASCEND_IS_AIV {", "    ProcessVector();", "}")
        w("", "private:")
        with w.indented():
            _cube(w, f, gm, x, wt, gl, y, cumsum)
            _vector(w, f, gm, gl, y, c_t, cumsum, zero.rows * zero.cols)
        w("private:")
        with w.indented():
            w("AscendC::TPipe pipe;")
            w.extend(members)
            w("AscendC::TBuf<AscendC::QuePosition::VECCALC> zeroBuf;")
            for p in k.params:
                w(f"AscendC::GlobalTensor<{ctype(prog.tensor(p).dtype)}> {gm[p]};")
            w("int32_t blockIdx;", "int32_t subBlockIdx;", "int32_t blockNum;")
            w(*(f"int32_t {f[n]};" for n in fields))
        w.level += 1
    w("")
    with w.block(entry_signature(prog, k)):
        w("GET_TILING_DATA(tilingData, tiling);", f"KERNEL_TASK_TYPE_DEFAULT({KERNEL_TYPES[k.kernel_type]});",
          *launch_lines(prog, k, cls))
    return w.text()


def _count(gm: dict[str, str], gl: str, cumsum: bool, g: str) -> str:
    v = f"static_cast<int64_t>({gm[gl]}.GetValue({g}))"
    return f"{v} - row0" if cumsum else v


def _cube(w: Writer, f: dict[str, str], gm: dict[str, str], x: str, wt: str, gl: str, y: str, cumsum: bool) -> None:
    with w.block("__aicore__ inline void ProcessCube()"):
        w("REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), matmulObj, &cubeTiling);",
          "int64_t base = 0;  // tiles of the groups before this one: the deal goes on across groups",
          "int64_t row0 = 0;  // the group's first row of x and y")
        with w.block(f"for (int32_t g = 0; g < {f['groups']}; ++g)"):
            w(f"const int64_t cnt = {_count(gm, gl, cumsum, 'g')};  // the group's rows, from the group list",
              f"const int64_t gtiles = (cnt + {f['tile_m']} - 1) / {f['tile_m']} * {f['n_tiles']};",
              "// this core's tiles of the group: (base + j) % blockNum == blockIdx")
            with w.block("for (int64_t j = (blockIdx + blockNum - base % blockNum) % blockNum; j < gtiles; "
                         "j += blockNum)"):
                w(f"const int64_t mi = j / {f['n_tiles']};",
                  f"const int64_t n0 = j % {f['n_tiles']} * {f['tile_n']};",
                  f"const int64_t m0 = row0 + mi * {f['tile_m']};",
                  f"const int32_t mlen = static_cast<int32_t>(KS_MIN(static_cast<int64_t>({f['tile_m']}), "
                  f"cnt - mi * {f['tile_m']}));  // a group's last tile row: its tail",
                  f"const int32_t nlen = static_cast<int32_t>(KS_MIN(static_cast<int64_t>({f['tile_n']}), "
                  f"{f['N']} - n0));",
                  f"matmulObj.SetTensorA({gm[x]}[m0 * {f['K']}], false);",
                  f"matmulObj.SetTensorB({gm[wt]}[static_cast<int64_t>(g) * {f['K']} * {f['N']} + n0], false);",
                  f"matmulObj.SetSingleShape(mlen, nlen, {f['K']});",
                  f"matmulObj.IterateAll({gm[y]}[m0 * {f['N']} + n0]);",
                  "matmulObj.End();")
            w("base += gtiles;", "row0 += cnt;")
    w("")


def _vector(w: Writer, f: dict[str, str], gm: dict[str, str], gl: str, y: str, c_t: str, cumsum: bool,
            elems: int) -> None:
    with w.block("__aicore__ inline void ProcessVector()"):
        if cumsum:
            w(f"const int64_t total = static_cast<int64_t>({gm[gl]}.GetValue({f['groups']} - 1));")
        else:
            w("int64_t total = 0;")
            with w.block(f"for (int32_t g = 0; g < {f['groups']}; ++g)"):
                w(f"total += static_cast<int64_t>({gm[gl]}.GetValue(g));")
        w(f"if (total >= {f['M']}) {{", "    return;  // every row is in a group", "}")
        w(f"AscendC::LocalTensor<{c_t}> zero = zeroBuf.Get<{c_t}>();",
          f"AscendC::Duplicate(zero, static_cast<{c_t}>(0), {elems});",
          "auto ev = pipe.FetchEventID(AscendC::HardEvent::V_MTE3);",
          "AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(ev);",
          "AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(ev);",
          f"const int64_t chunks = ({f['M']} - total + {f['zero_rows']} - 1) / {f['zero_rows']};",
          "// rows [total, M) in chunks of zeroRows, over every AIV of the launch")
        with w.block("for (int64_t zc = blockIdx * 2 + subBlockIdx; zc < chunks; zc += blockNum * 2)"):
            w(f"const int64_t z0 = total + zc * {f['zero_rows']};",
              f"const uint16_t zlen = static_cast<uint16_t>(KS_MIN(static_cast<int64_t>({f['zero_rows']}), "
              f"{f['M']} - z0));",
              f"AscendC::DataCopyExtParams out{{zlen, static_cast<uint32_t>({f['N']} * sizeof({c_t})), 0, 0, 0}};",
              f"AscendC::DataCopyPad({gm[y]}[z0 * {f['N']}], zero, out);")
    w("")
