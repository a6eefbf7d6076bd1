"""Prices of instructions: the profile's CostModel applied to TileIR instructions, plus memory sharing.

- Data moves: `move_cycles(src, dst, bytes, nd2nz=...)`, the measured single-core size curve.
  A move touching GM also shares the chip's memories: a share h of its bytes hits L2 (l2.py) and
  moves at the L2 rate, the rest at HBM's (`hbm_bytes_per_s`). The L2 rate is the per-core [ini]
  rate x AI cores, except for reads into UB: the vector cores reach only `aiv_l2_read_bytes_per_s`
  between them (measured on the 910B2C). Its
  duration is `max(curve, bytes * share * (h / l2_chip + (1 - h) / hbm_chip))`, where `share` is
  the time-averaged number of moves on its memory in flight during its executions in the same
  wave (multicore.py computes it).
- Mmad: `mmad_cycles(m, k, n, dtype)`; 2*m*k*n flops.
- Vector ops and reductions: `vector_cycles(op, dtype, rows*cols)` (reductions with `rows=`, and an
  extra add/max over the row results when accumulating) for an instruction that is one call.
- The calls of an instruction the code issues as several (lower/vec_calls.py: row reductions as
  WholeReduce levels, per-row operands spread by Brcb, row-looped ops), each priced on its own: a
  repeat-form call by the measured curve of its instruction at its repeat count (a WholeReduce level:
  VCADD / VCMAX at its repeats), a count-form call by `vector_cycles(op, dtype, count)`.
- Img2Col: an L1 -> L0B move of its output bytes (pixels x klen elements).
- GateTopK (MoE expert selection, scalar loops in the code): `gate_visits` element visits per row, each
  one scalar issue (`scalar_issue_cycles`, assumed: a GetValue, a compare and a branch pipelined as one).
- TopK (assumed sequence): ceil(log2(cols)) merge passes, each a compare and a select over the
  whole tile, as the sort-and-merge TopK of the vector unit does.
- MrgSort (assumed sequence): the code's packing and unpacking around Ascend C's MrgSort (codegen/merge.py),
  each a count-form vector call: the keys and the indices copied into the stage (two copies of the pairs'
  count; Muls instead of the key copy when the sort is ascending), the Gather that interleaves them and the
  Extract that splits the merged list (each priced as a float32 copy of 2 x pairs elements, assumed), and
  for an ascending sort the Muls that restores the keys; the merge itself one pass over the pairs, a compare
  of the float32 keys and a select each of the keys and of the int32 indices (priced as float32 selects).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.dtypes import itemsize, repeat_elems
from ..tileir.vector_ops import OPS, REDUCTIONS, reduction, vector_op
from .program import StaticInstr

__all__ = ["Pricer", "memory_kind", "TOPK_NOTE", "gate_visits"]

_CAST_COSTS = frozenset(r.cost for r in OPS.values() if r.form == "cast")  # priced with the dst dtype
_REDUCE_COSTS = frozenset(r.cost for r in REDUCTIONS.values())  # a WholeReduce call, priced by its rows

TOPK_NOTE = "TopK timed as ceil(log2(cols)) x (compare + select) over the tile (assumed sequence)"


def gate_visits(s) -> int:
    """Elements the scalar loops of a GateTopK visit per row: the group scores (every expert once), the
    group picks (groups per kept group), the expert picks (every expert per chosen one) and the 2k writes."""
    experts = s.src.cols.value  # a tiling constant (lower/gating.py)
    groups = s.groups
    visits = (experts + s.topk_groups * groups) if groups > 1 else 0
    return visits + s.k * experts + 2 * s.k


def memory_kind(st: StaticInstr, hits: dict[int, float]) -> str:
    """Which chip memory a GM move contends on: when all of it hits L2, "l2" for a read and "l2w" for a
    write (L2 reads and writes have rates of their own, [ini] l2_read_rate / l2_write_rate), else "hbm"
    (reads and writes share the HBM); "" when it is not a GM move."""
    if st.kind != "copy" or not st.tensor:
        return ""
    if hits.get(st.sid, 0.0) >= 1.0:
        return "l2w" if st.gm_write else "l2"
    return "hbm"


class Pricer:
    """Cycles, bytes and flops of each (static instruction, sizes); memoised per instruction."""

    def __init__(self, profile, statics: Sequence[StaticInstr], hits: dict[int, float],
                 share: dict[int, float] | None = None) -> None:
        self.costs = profile.costs
        self.scalar_cycles = profile.scalar_issue_cycles
        self.statics = statics
        self.share = share or {}
        self.hits = hits
        self.hbm_chip = profile.hbm_bytes_per_s / profile.clock_hz
        self.l2_chip_read = profile.l2_read_bytes_per_cycle * profile.aic_cores
        self.l2_chip_write = profile.l2_write_bytes_per_cycle * profile.aic_cores
        self.l2_chip_read_ub = profile.aiv_l2_read_bytes_per_s / profile.clock_hz
        self.tables: list[dict] = [{} for _ in statics]

    def memory_of(self, st: StaticInstr) -> str:
        """"hbm", "l2", "l2w" or "" (not a GM move)."""
        return memory_kind(st, self.hits)

    def price(self, sid: int, key: tuple) -> tuple[float, int, int]:
        """(cycles, bytes, flops) of static instruction `sid` with sizes `key`; cached."""
        st = self.statics[sid]
        c = self.costs
        kind = st.kind
        if kind == "copy":
            rows, cols = key
            nbytes = max(rows, 0) * max(cols, 0) * itemsize(st.dtype)
            cyc = c.move_cycles(st.src, st.dst, nbytes, nd2nz=st.nd2nz)
            if st.tensor and nbytes:
                h = self.hits.get(sid, 0.0)
                l2 = self.l2_chip_write if st.gm_write else \
                    self.l2_chip_read_ub if st.dst == "UB" else self.l2_chip_read
                cyc = max(cyc, nbytes * self.share.get(sid, 1.0) * (h / l2 + (1.0 - h) / self.hbm_chip))
            out = (cyc, nbytes, 0)
        elif kind == "mmad":
            m, k, n = key
            out = (c.mmad_cycles(m, k, n, st.dtype), 0, 2 * m * k * n)
        elif kind == "img2col":
            pixels, klen = key
            nbytes = max(pixels, 0) * max(klen, 0) * itemsize(st.dtype)
            out = (c.move_cycles("L1", "L0B", nbytes), nbytes, 0)
        elif kind == "vec":
            rows, cols = key
            count = max(rows, 0) * max(cols, 0)
            row = vector_op(st.op, "simulate")  # select is priced as "where": compare + select
            dst = {"dst_dtype": st.dst_dtype} if row.form == "cast" else {}
            cyc = c.vector_cycles(row.cost, st.dtype, count, **dst)
            out = (cyc, 0, count)
        elif kind == "vcall":  # one Ascend C call of an expanded instruction (lower/vec_calls.py)
            (n,) = key
            n = max(n, 0)
            if st.form == "count":
                count = n
                cyc = c.vector_cycles(st.op, st.dtype, n, dst_dtype=st.dst_dtype if st.op in _CAST_COSTS else None)
            else:  # n repeats of 256 bytes, whatever the mask
                count = n * repeat_elems(st.dtype)
                rows = {"rows": max(n, 1)} if st.op in _REDUCE_COSTS else {}
                cyc = c.vector_cycles(st.op, st.dtype, count, **rows) if n else 0.0
            out = (cyc, 0, count)
        elif kind == "reduce":
            rows, cols = key
            count = max(rows, 0) * max(cols, 0)
            red = reduction(st.op, "simulate")
            cyc = c.vector_cycles(red.cost, st.dtype, count, rows=max(rows, 1))
            if st.accumulate:
                cyc += c.vector_cycles(vector_op(red.combine).cost, st.dst_dtype, max(rows, 0))
            out = (cyc, 0, count)
        elif kind == "gate":
            (rows, _cols) = key
            n = max(rows, 0) * st.per_row
            out = (n * self.scalar_cycles, 0, 0)
        elif kind == "topk":
            rows, cols = key
            count = max(rows, 0) * max(cols, 0)
            passes = max(1, math.ceil(math.log2(max(cols, 2))))
            cyc = passes * (c.vector_cycles("compare", st.dtype, count)
                            + c.vector_cycles("select", st.dtype, count))
            out = (cyc, 0, count * passes)
        elif kind == "mrgsort":
            rows, cols = key
            count = max(rows, 0) * max(cols, 0)
            merge = (c.vector_cycles("compare", "float32", count) + c.vector_cycles("select", "float32", count)
                     + c.vector_cycles("select", "float32", count))  # the int32 indices: 4 bytes as float32
            negated = st.form == "negated"  # ascending: keys negated into the stage and back after Extract
            stage = c.vector_cycles("muls" if negated else "copy", "float32", count) + c.vector_cycles(
                "copy", "float32", count)
            pack = 2 * c.vector_cycles("copy", "float32", 2 * count)  # Gather in, Extract out
            cyc = merge + stage + pack + (c.vector_cycles("muls", "float32", count) if negated else 0.0)
            out = (cyc, 0, count)
        else:  # scalar spans and waits are never priced
            out = (0.0, 0, 0)
        self.tables[sid][key] = out
        return out
