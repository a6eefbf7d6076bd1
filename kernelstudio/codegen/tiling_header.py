"""The tiling header `op_host/<name>_tiling.h`: the kernel's tiling struct as CANN tiling data in
`namespace optiling` (with `tiling/tiling_api.h` when it holds a TCubeTiling, a TopkTiling or a high-level
API's tiling), and the values its fields take (`tiling_values`), which TilingFunc (tiling_func.py) fills in.
"""

from __future__ import annotations

from ..tileir.program import Kernel, Program
from .attention import SECOND_TILING, is_attention
from .highlevel import HighLevelPlan, high_level_tiling_fields
from .layout import topk_spec
from .naming import names_of
from .scope import Scope
from .writer import Writer, camel

__all__ = ["tiling_header", "tiling_values"]

def _is_cube(k: Kernel) -> bool:
    return bool(k.aic)


_LAST_VALUES: list = []  # [(program, kernel, values)]: the header, host and launcher of one kernel ask in turn


def tiling_values(prog: Program, k: Kernel) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """(field, value) pairs of the kernel's tiling struct and its TCubeTiling fields (if any)."""
    for p, kk, values in _LAST_VALUES:
        if p is prog and kk is k:
            return values
    fields = [(camel(n), v) for n, v in k.tiling]
    cube: dict[str, int] = {}
    if _is_cube(k):
        from .attention import attention_tilings
        from .cube import cube_tiling

        cube = attention_tilings(Scope(prog, k))[0] if is_attention(k) else cube_tiling(Scope(prog, k))
    _LAST_VALUES[:] = [*_LAST_VALUES[-7:], (prog, k, (fields, cube))]
    return fields, cube


def tiling_header(prog: Program, k: Kernel, hl: HighLevelPlan | None = None) -> str:
    names = names_of(prog, k)
    name = names.op_type
    guard = f"{names.snake.upper()}_TILING_H"
    fields, cube = tiling_values(prog, k)
    w = Writer()
    topk = topk_spec(prog, k)
    w(f"// Tiling data of {name} (kernel {k.name}), filled by TilingFunc in {names.host_file}; the kernel "
      "reads it with GET_TILING_DATA.",
      f"#ifndef {guard}", f"#define {guard}", '#include "register/tilingdata_base.h"')
    if cube or topk is not None or hl is not None:
        w('#include "tiling/tiling_api.h"  // ' + " and ".join(
            n for n, on in (("TCubeTiling", bool(cube)), ("TopkTiling", topk is not None),
                            (hl.struct if hl is not None else "", hl is not None)) if on))
    w("")
    with w.block("namespace optiling", "}  // namespace optiling"):
        w(f"BEGIN_TILING_DATA_DEF({names.tiling})")
        with w.indented():
            for f, _ in fields:
                w(f"TILING_DATA_FIELD_DEF(uint32_t, {f});")
            if cube:
                w("TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);")
            if is_attention(k):  # its second Matmul object's (codegen/attention.py)
                w(f"TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, {SECOND_TILING});")
            if topk is not None:
                w("TILING_DATA_FIELD_DEF_STRUCT(TopkTiling, topkTilingData);")
            if hl is not None:
                w(*high_level_tiling_fields(hl))
        w("END_TILING_DATA_DEF;", "", f"REGISTER_TILING_DATA_CLASS({name}, {names.tiling})")
    w(f"#endif  // {guard}")
    return w.text()
