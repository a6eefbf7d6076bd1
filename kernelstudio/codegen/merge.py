"""Emit rule for `MrgSort` (the merge of two sorted runs, lower/sort_merge.py): a scalar two-way merge.

On the device the merge is Ascend C's `MrgSort` of two lists in its 8-byte (score, index) layout. The code
here merges with the scalar unit instead (GetValue / SetValue over the keys and the indices, the layout the
rest of the kernel keeps), which the CPU twin runs exactly as the TileIR defines the merge: keys ascending (or
descending), equal keys by increasing index. `PipeBarrier<PIPE_ALL>` before and after orders the scalar reads
and writes with the copies and vector instructions around it.
"""

from __future__ import annotations

from ..tileir.expr import E, Var
from ..tileir.program import MrgSort
from .vector import INSTR_RULES, Method

__all__ = ["MERGE_INSTR_RULES"]


def _mrgsort(s: MrgSort, m: Method) -> None:
    sc, w = m.scope, m.w
    sk, si = sc.tensor_name(s.src_keys.buf), sc.tensor_name(s.src_indices.buf)
    dk, di = sc.tensor_name(s.keys.buf), sc.tensor_name(s.indices.buf)
    r, a, b, o, na, n = (m.fresh(x) for x in ("row", "runA", "runB", "out", "firstLen", "rowLen"))
    ka, kb, ia, ib, take, pick = (m.fresh(x) for x in ("keyA", "keyB", "indexA", "indexB", "takeA", "pick"))
    before = ">" if s.largest else "<"
    w("AscendC::PipeBarrier<PIPE_ALL>();  // the scalar merge reads what the copies and vector unit wrote")
    with w.block(f"for (int32_t {r} = 0; {r} < {sc.expr(s.src_keys.rows)}; ++{r})"):
        at = {f: sc.expr(E.add(getattr(s, f).offset, E.mul(Var(r), getattr(s, f).stride)))
              for f in ("src_keys", "src_indices", "keys", "indices")}
        w(f"const int32_t {na} = {sc.expr(s.first)};", f"const int32_t {n} = {sc.expr(s.src_keys.cols)};",
          f"int32_t {a} = 0;", f"int32_t {b} = {na};")
        with w.block(f"for (int32_t {o} = 0; {o} < {n}; ++{o})"):
            w(f"bool {take} = {b} >= {n};")
            with w.block(f"if ({a} < {na} && !{take})"):
                w(f"const float {ka} = {sk}.GetValue({at['src_keys']} + {a});",
                  f"const float {kb} = {sk}.GetValue({at['src_keys']} + {b});",
                  f"const int32_t {ia} = {si}.GetValue({at['src_indices']} + {a});",
                  f"const int32_t {ib} = {si}.GetValue({at['src_indices']} + {b});",
                  f"{take} = {ka} {before} {kb} || ({ka} == {kb} && {ia} < {ib});")
            w(f"const int32_t {pick} = {take} ? {a}++ : {b}++;",
              f"{dk}.SetValue({at['keys']} + {o}, {sk}.GetValue({at['src_keys']} + {pick}));",
              f"{di}.SetValue({at['indices']} + {o}, {si}.GetValue({at['src_indices']} + {pick}));")
    w("AscendC::PipeBarrier<PIPE_ALL>();  // the merged run is complete before the copies and vector unit use it")


MERGE_INSTR_RULES = {MrgSort: _mrgsort}
INSTR_RULES.update(MERGE_INSTR_RULES)
