"""Emit rule for `GateTopK` (MoE expert selection, lower/gating.py): scalar loops over each row.

The scalar unit reads the selection values with GetValue and writes the chosen ids and weights with
SetValue, exactly as `core.gating.gate_select` spells the selection (strict `>` while walking upward, so ties
go to the lower group, then the lower expert). The program's SetFlag/WaitFlag pairs around the statement
(V -> S and MTE3 -> S before, S -> V and S -> MTE3 after) order it with the vector unit and the copies.
The row's flags live in fixed-size local arrays (experts and groups are tiling constants).
"""

from __future__ import annotations

from ..core.errors import UnsupportedError
from ..tileir.expr import E, Var
from ..tileir.program import GateTopK
from .vector import INSTR_RULES, Method
from .writer import c_float

__all__ = ["GATING_INSTR_RULES"]


def _gate_topk(s: GateTopK, m: Method) -> None:
    sc, w = m.scope, m.w
    experts = sc.static(s.src.cols)
    if experts is None:
        raise UnsupportedError(f"kernel {sc.kernel.name}: gate_topk over rows of {s.src.cols} experts; the expert "
                               "count must be a tiling constant")
    per = experts // s.groups
    sel, scores = sc.tensor_name(s.src.buf), sc.tensor_name(s.scores.buf)
    wts, ids = sc.tensor_name(s.values.buf), sc.tensor_name(s.indices.buf)
    r = m.fresh("row")
    allowed, e, j, best, bv, v = (m.fresh(x) for x in ("allowed", "expert", "pick", "best", "bestValue", "value"))
    ninf = c_float(float("-inf"), "float32")
    with w.block(f"for (int32_t {r} = 0; {r} < {sc.expr(s.src.rows)}; ++{r})"):
        at = {f: sc.expr(E.add(getattr(s, f).offset, E.mul(Var(r), getattr(s, f).stride)))
              for f in ("src", "scores", "values", "indices")}
        w(f"bool {allowed}[{experts}];")
        if s.groups > 1:
            gs, kept, g, b1, b2 = (m.fresh(x) for x in ("groupScore", "kept", "group", "first", "second"))
            w(f"float {gs}[{s.groups}];", f"bool {kept}[{s.groups}];")
            with w.block(f"for (int32_t {g} = 0; {g} < {s.groups}; ++{g})"):
                w(f"float {b1} = {ninf};", f"float {b2} = {ninf};")
                with w.block(f"for (int32_t {e} = 0; {e} < {per}; ++{e})"):
                    w(f"const float {v} = {sel}.GetValue({at['src']} + {g} * {per} + {e});",
                      f"if ({v} > {b1}) {{ {b2} = {b1}; {b1} = {v}; }} else if ({v} > {b2}) {{ {b2} = {v}; }}")
                two = s.group_select == "top2_sum" and per > 1
                w(f"{gs}[{g}] = {b1 + ' + ' + b2 if two else b1};", f"{kept}[{g}] = false;")
            with w.block(f"for (int32_t {j} = 0; {j} < {s.topk_groups}; ++{j})"):
                w(f"int32_t {best} = -1;")
                with w.block(f"for (int32_t {g} = 0; {g} < {s.groups}; ++{g})"):
                    w(f"if (!{kept}[{g}] && ({best} < 0 || {gs}[{g}] > {gs}[{best}])) {{ {best} = {g}; }}")
                w(f"{kept}[{best}] = true;")
            with w.block(f"for (int32_t {e} = 0; {e} < {experts}; ++{e})"):
                w(f"{allowed}[{e}] = {kept}[{e} / {per}];")
        else:
            with w.block(f"for (int32_t {e} = 0; {e} < {experts}; ++{e})"):
                w(f"{allowed}[{e}] = true;")
        with w.block(f"for (int32_t {j} = 0; {j} < {s.k}; ++{j})"):
            w(f"int32_t {best} = -1;", f"float {bv} = {ninf};")
            with w.block(f"for (int32_t {e} = 0; {e} < {experts}; ++{e})"):
                with w.block(f"if ({allowed}[{e}])"):
                    w(f"const float {v} = {sel}.GetValue({at['src']} + {e});",
                      f"if ({best} < 0 || {v} > {bv}) {{ {best} = {e}; {bv} = {v}; }}")
            w(f"{allowed}[{best}] = false;",
              f"{ids}.SetValue({at['indices']} + {j}, {best});",
              f"{wts}.SetValue({at['values']} + {j}, {scores}.GetValue({at['scores']} + {best}));")


GATING_INSTR_RULES = {GateTopK: _gate_topk}
INSTR_RULES.update(GATING_INSTR_RULES)
