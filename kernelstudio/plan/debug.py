"""`ks.debug`: the first tile and TileIR instruction whose values leave the plan-aware golden model.

The checking itself is the interpreter's (interp/debug.py, which reads only the TileIR); this module brings
what it cannot: the golden value of every graph node under the plan of the schedule the program was lowered
from (`ks.evaluate(..., schedule=s)`), the names the lowering gave the program's tensors, the tolerance
defaults of the output dtypes, and the simulator's static instruction ids (so a tile links to its
instructions on the timeline).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.checks import check_inputs, need
from ..core.errors import InputError, UnsupportedError
from ..interp.checkpoints import InstrKey
from ..interp.debug import DebugReport, NodeGolden, check_program
from ..ir import golden
from ..lower.vector_body import ident
from ..schedule.rounding import rounding_plan
from ..schedule.schedule import Schedule
from ..sim.compile import compile_side
from ..tileir.program import (
    Alloc,
    Copy,
    CrossSet,
    DeQue,
    EnQue,
    Free,
    If,
    Kernel,
    Let,
    Loop,
    Program,
    SetFlag,
    Stmt,
    Tier,
    walk,
)
from ..tileir.vec_calls import calls_of

__all__ = ["debug", "TOLERANCE"]

# (atol, rtol) per output dtype: a few units in the last place of values near 1 (cube kernels and multi-pass row
# reductions sum in another order than the golden model, and a stored intermediate passes that on); integers exact
TOLERANCE: dict[str, tuple[float, float]] = {
    "float16": (4e-3, 4e-3), "bfloat16": (3.2e-2, 3.2e-2), "float32": (1e-5, 1e-5),
    "int8": (0.0, 0.0), "int32": (0.0, 0.0), "int64": (0.0, 0.0),
}


def debug(prog: Any, inputs: Mapping[str, Any], *, atol: float | None = None, rtol: float | None = None,
          schedule: Schedule | None = None) -> DebugReport:
    """Run `prog` (a Program with `schedule=` the Schedule it was lowered from, or a Design of ks.build) on
    `inputs` with checkpoints; report the first tile and instruction off the plan-aware golden model by more
    than atol + rtol * |golden| (defaults from the output dtype), and the error of every stored tile."""
    program, sched = _program_and_schedule(prog, schedule)
    atol_v, rtol_v = _tolerances(program, atol, rtol)
    specs = [(t.name, t.shape, t.dtype) for t in program.tensors if t.role == "input"]
    check_inputs(f"debug({program.name})", specs, inputs)
    expected, nodes = _golden(program, sched, inputs)
    sids = _sid_table(program)
    return check_program(program, inputs, expected=expected, nodes=nodes, atol=atol_v, rtol=rtol_v,
                         what="debug", sids=lambda k: sids.get(k, ()), reference="the plan-aware golden model")


def _program_and_schedule(prog: Any, schedule: Any) -> tuple[Program, Schedule]:
    if not isinstance(prog, Program) and isinstance(getattr(prog, "program", None), Program):
        schedule = prog.schedule if schedule is None else schedule  # a Design of ks.build
        prog = prog.program
    program = need(prog, Program, "debug")
    if schedule is None:
        raise InputError(f"debug({program.name}): the golden model follows the plan of the schedule the program "
                         "was lowered from, and a Program does not carry it; pass schedule=s (the Schedule given "
                         "to ks.lower), or pass the Design ks.build returned")
    sched = need(schedule, Schedule, "debug(schedule=...)")
    g = sched.graph
    computes = sorted(ident(g.names[o]) for o in g.outputs)
    if computes != sorted(program.outputs):
        raise InputError(f"debug({program.name}): the schedule computes {', '.join(computes)} but the program "
                         f"stores {', '.join(program.outputs)}; pass the schedule the program was lowered from")
    return program, sched


def _tolerance(value: Any, what: str, name: str, default: float) -> float:
    if value is None:
        return default
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not number or not math.isfinite(float(value)) or float(value) < 0:
        kind = "" if number else f" {type(value).__name__}"
        raise InputError(f"debug({name}): {what} must be a finite number >= 0, got{kind} {value!r}; pass e.g. "
                         f"{what}={default:g}, or leave it out for the output dtype's default ({default:g})")
    return float(value)


def _tolerances(program: Program, atol: Any, rtol: Any) -> tuple[float, float]:
    """The user's atol/rtol, checked; a missing one is the loosest default over the program's outputs."""
    dts = [program.tensor(o).dtype for o in program.outputs]
    a0 = max(TOLERANCE.get(d, (1e-5, 1e-5))[0] for d in dts)
    r0 = max(TOLERANCE.get(d, (1e-5, 1e-5))[1] for d in dts)
    return _tolerance(atol, "atol", program.name, a0), _tolerance(rtol, "rtol", program.name, r0)


def _golden(program: Program, sched: Schedule, inputs: Mapping[str, Any]
            ) -> tuple[dict[str, Any], dict[str, NodeGolden]]:
    """Golden values, under the plan of `sched`, of the program's stored tensors (by name) and of every node."""
    g = sched.graph
    computed = [n for n in g.nodes if n not in g.placeholders]
    plan = rounding_plan(sched)
    values = golden.evaluate(tuple(computed), inputs, rounding=plan) if computed else ()
    by_name = {ident(g.names[n]): (n, v) for n, v in zip(computed, values, strict=True)}
    nodes = {name: NodeGolden(v, n.dtype, n in plan.stored and n not in plan.everywhere)
             for name, (n, v) in by_name.items()}
    expected = {t.name: by_name[t.name][1] for t in program.tensors
                if t.role in ("output", "intermediate") and t.name in by_name
                and by_name[t.name][1].size == t.size}
    return expected, nodes


# ---- the simulator's static instruction ids ----------------------------------------------------------------

_NO_STATIC = (Alloc, EnQue, DeQue, Free, CrossSet, SetFlag)


def _statics(k: Kernel, s: Stmt) -> int:
    """How many static instructions the simulator's compiler makes of `s` (sim/compile.py's rules)."""
    if isinstance(s, _NO_STATIC):
        return 0
    if isinstance(s, Copy):
        tiers = {b.name: b.tier for b in k.buffers}
        if s.src.gm or s.dst.gm or tiers.get(s.src.buf) is not Tier.UB or tiers.get(s.dst.buf) is not Tier.UB:
            return 1
    try:
        exp = calls_of(k, s)
    except UnsupportedError:
        return 1
    if exp is None:
        return 1
    return sum(_statics(k, c) for c in walk(exp.stmts) if not isinstance(c, (Let, Loop, If)))


def _sid_table(program: Program) -> dict[InstrKey, tuple[int, ...]]:
    """InstrKey -> the simulator's sids of that instruction (several for a row reduction it splits into calls);
    a side whose count disagrees with the simulator's compiler gets none rather than wrong ones."""
    statics: list = []
    table: dict[InstrKey, tuple[int, ...]] = {}
    for kidx, k in enumerate(program.kernels):
        for side, body in (("aic", k.aic), ("aiv", k.aiv)):
            if not body:
                continue
            start = len(statics)
            compile_side(program, k, kidx, side, statics)
            pos, n, mine = start + 1, 0, {}  # the side's first static is its scalar unit's
            for s in walk(body):
                if isinstance(s, (Let, Loop, If)):
                    continue
                c = _statics(k, s)
                mine[InstrKey(kidx, side, n)] = tuple(range(pos, pos + c))
                pos, n = pos + c, n + 1
            if pos == len(statics):
                table.update(mine)
    return table
