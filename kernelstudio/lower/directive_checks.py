"""No directive is silently ignored: a directive that cannot change a kernel raises `ScheduleError`
naming the kernel, the directive, why, and what the kernel does take.

Checked once the tiles are known (a clamp depends on them): `vectorize`/`compute_dtype` on a cube
kernel without an epilogue; `reorder`/`parallel(axis)`/`compute_dtype` on data-movement (layout)
kernels and on reductions over non-last axes; a split of the outer dim of such a reduction; an
epilogue chunk wider or taller than the C tile it comes from; `l1_k_steps` past the k tiles there are;
`l1_c_steps` with more C tiles than there are, on a mixed kernel that hands over one C tile at a time,
or beside an `l1_k_steps` for an operand it keeps resident with its whole K.
`swizzle` is refused where the tile walk is built (tile_order.py): on a row-reduction epilogue's
row blocks and with a group larger than the tile rows (columns); on vector kernels when applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.errors import ScheduleError
from ..fusion.partition import FusedKernel
from ..schedule.schedule import Directive
from .cube.shape import aiv_rows, sync_rows_per_aiv

__all__ = ["check_directives_act"]

_TAKES = {
    "cube": "split('m'/'n'/'k', ...), reorder, parallel, swizzle, double_buffer, l1_k_steps, l1_depth, l1_c_steps",
    "cube_vector": "split('m'/'n'/'k', ...), vectorize, reorder, parallel, swizzle, double_buffer, compute_dtype, "
                   "l1_k_steps, l1_depth, sync_all (row-reduction epilogues)",
    "layout": "split(...) / vectorize(...) of its tile, parallel(cores=...), double_buffer",
    "axis_reduce": "split/vectorize of the reduced or inner dims, parallel(cores=...), double_buffer",
}


def _text(d: Directive) -> str:
    args = [repr(a) for a in (d.axis if isinstance(d.axis, tuple) else (d.axis,)) if a is not None]
    if d.value is not None:
        args += [repr(v) for v in (d.value if isinstance(d.value, tuple) else (d.value,))]
    return f"{d.kind}({', '.join(args)})"


def _fail(fk: FusedKernel, d: Directive, why: str, kind: str) -> None:
    raise ScheduleError(f"kernel {fk.name}: {_text(d)} cannot apply: {why}; this kernel takes {_TAKES[kind]}")


def check_directives_act(fk: FusedKernel, directives: Sequence[Directive], kind: str,
                         tiling: dict[str, Any]) -> None:
    """`kind`: "cube", "cube_vector", "layout", "axis_reduce" or "vector"; `tiling`: the kernel's tiling
    with the chosen tiles (cube kernels: M, N, K, tile_m, tile_n, tile_k, k_tiles)."""
    for d in directives:
        if kind == "cube" and d.kind in ("vectorize", "compute_dtype"):
            _fail(fk, d, "a matmul/conv without an epilogue has no vector work (the result leaves L0C "
                         "through FixPipe)", "cube")
        if kind in ("layout", "axis_reduce"):
            what = ("moves data only (no arithmetic)" if kind == "layout" else
                    "accumulates in float32 (int32 for integers) whatever the input dtype")
            if d.kind == "compute_dtype":
                _fail(fk, d, f"this {'layout' if kind == 'layout' else 'reduction'} kernel {what}", kind)
            if d.kind == "reorder" or (d.kind == "parallel" and d.axis is not None):
                _fail(fk, d, "its tiles are dealt to cores in one fixed walk (layout and non-last-axis "
                             "reduction kernels have no loop order to choose); parallel(cores=...) sets "
                             "how many cores share them", kind)
            if kind == "axis_reduce" and d.kind == "split" and isinstance(d.axis, int):
                if d.axis % len(fk.space) < fk.row_dims - 1:
                    _fail(fk, d, f"axis {d.axis} is the outer dim ({fk.space[0]}) of the reduction, walked one "
                                 "slice at a time", kind)
        if kind in ("cube", "cube_vector") and d.kind == "l1_k_steps":
            kt = int(tiling["k_tiles"])
            if max(d.value) > kt:
                raise ScheduleError(
                    f"kernel {fk.name}: {_text(d)} cannot apply: there are only {kt} k tile(s) (K={tiling['K']} "
                    f"in tiles of {tiling['tile_k']}), so no L1 load can bring {max(d.value)}; use "
                    f"l1_k_steps(...) of at most {kt}, or a smaller split('k', ...) for more k tiles")
        if kind in ("cube", "cube_vector") and d.kind == "l1_c_steps":
            _check_c_steps(fk, d, kind, tiling, directives)
    if kind != "cube_vector":
        return
    tm, tn = int(tiling["tile_m"]), int(tiling["tile_n"])
    row_block = fk.has_row_reduction()
    cols = int(tiling["N"]) if row_block else tn
    half = aiv_rows(tm)
    if _sync(directives):  # every AIV takes its share of all the rows of C
        half = sync_rows_per_aiv(int(tiling["batch"]) * int(tiling["M"]), int(tiling["block_dim"]))
    for d in directives:
        if d.kind != "vectorize":
            continue
        on_cols = (d.axis % len(fk.space) >= fk.row_dims) if isinstance(d.axis, int) else d.axis in ("n", "cols")
        if on_cols and d.value > cols:
            src = f"the whole rows ({cols} columns)" if row_block else f"the C tile's {tn} columns (tile_n)"
            raise ScheduleError(
                f"kernel {fk.name}: {_text(d)} cannot apply: an epilogue chunk is at most {src}; use "
                f"vectorize(-1, ...) of at most {cols}" + ("" if row_block else ", or split('n', ...) wider"))
        if not on_cols and d.value > half and _sync(directives):
            raise ScheduleError(
                f"kernel {fk.name}: {_text(d)} cannot apply: with sync_all each of the {2 * int(tiling['block_dim'])} "
                f"vector cores takes {half} of the {int(tiling['batch']) * int(tiling['M'])} rows; use "
                f"vectorize('m', ...) of at most {half}, or parallel(cores=...) fewer")
        if not on_cols and d.value > half:
            raise ScheduleError(
                f"kernel {fk.name}: {_text(d)} cannot apply: each of the two vector cores takes half of the "
                f"{tm}-row C tile ({half} rows); use vectorize('m', ...) of at most {half}, or split('m', ...) "
                "taller")


def _sync(directives: Sequence[Directive]) -> bool:
    """The kernel's plan is sync_all (the last sync_all directive says so)."""
    on = False
    for d in directives:
        if d.kind == "sync_all":
            on = bool(d.value)
    return on


def _check_c_steps(fk: FusedKernel, d: Directive, kind: str, tiling: dict[str, Any],
                   directives: Sequence[Directive]) -> None:
    """l1_c_steps(m, n): groups of at most the C tiles there are, on kernels that walk groups, and no
    l1_k_steps for an operand whose whole K it keeps resident."""
    m, n = d.value
    mt, nt, kt = int(tiling["m_tiles"]), int(tiling["n_tiles"]), int(tiling["k_tiles"])
    if _sync(directives):
        kind = "cube"  # sync_all: the cube part walks C tiles as a plain matmul does
    if kind == "cube_vector" and not fk.has_row_reduction() and (m, n) != (1, 1):
        _fail(fk, d, "its elementwise epilogue takes each C tile from the workspace as soon as FixPipe wrote it "
                     "(one C tile per hand-off), so C tiles cannot be grouped; larger split('m'/'n', ...) tiles "
                     "read each operand fewer times", "cube_vector")
    if kind == "cube_vector" and m != 1:
        _fail(fk, d, "its row-reduction epilogue makes each core take one row block (one tile row) and walk all "
                     f"its {nt} n tiles; group along n only: l1_c_steps(1, n) with n <= {nt}", "cube_vector")
    for axis, v, have, tile in (("m", m, mt, "tile_m"), ("n", n, nt, "tile_n")):
        if v > have:
            extent = tiling["M" if axis == "m" else "N"]
            raise ScheduleError(
                f"kernel {fk.name}: {_text(d)} cannot apply: there are only {have} C tile(s) along {axis} "
                f"({axis.upper()}={extent} in tiles of {tiling[tile]}), so a group cannot span {v}; use "
                f"l1_c_steps(...) with {axis} <= {have}, or a smaller split('{axis}', ...) for more tiles")
    for k in directives:
        if k.kind != "l1_k_steps":
            continue
        for op, resident, step in (("A", n > 1, k.value[0]), ("B", m > 1, k.value[1])):
            if resident and step != kt:
                raise ScheduleError(
                    f"kernel {fk.name}: {_text(k)} cannot apply beside {_text(d)}: that keeps {op}'s whole K "
                    f"({kt} k tiles) resident in L1, loaded at once, so {op} has no slabs of {step}; drop "
                    f"l1_k_steps, give {op} all {kt} k tiles, or l1_c_steps(1, 1) to stream {op} in slabs")
