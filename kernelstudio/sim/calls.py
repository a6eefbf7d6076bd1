"""What one core of a kernel issues, counted from the simulator's own program: the instruction list
`compile.compile_side` builds (every row reduction, per-row broadcast and row-looped op already split
into the Ascend C calls the code generator writes, lower/vec_calls.py), walked with the core's loop
bounds. The twin's API-call log of the generated code counts the same things (tests/codegen/test_parity.py).

    issued(prog, kernel_index, side="aiv", blk=0, sub=0)
    -> Counter: "vector" (calls on the vector pipe), ("vector", api) for the repeat-form calls of
       expanded instructions (WholeReduceSum, Brcb, Sub, ...), ("SetFlag", "V_S") / ("WaitFlag", ...)
       per event, "scalar_read" (index values read from on-chip memory by the scalar unit)
"""

from __future__ import annotations

from collections import Counter

from ..tileir.program import Program
from .compile import compile_side
from .errors import SimulationError
from .program import (
    K_END,
    K_FSET,
    K_FWAIT,
    K_IF,
    K_LET,
    K_LOOP,
    K_WORK,
    PIPE_INDEX,
    StaticInstr,
)

__all__ = ["issued"]

_V = PIPE_INDEX["V"]


def issued(prog: Program, kernel_index: int, side: str = "aiv", blk: int = 0, sub: int = 0,
           budget: int = 5_000_000) -> Counter:
    """Calls and flags core (`side`, `blk`, `sub`) of kernel `kernel_index` issues (see module doc).
    Scalar reads of buffers are counted, not performed (their value reads as 0)."""
    try:
        k = prog.kernels[kernel_index]
    except IndexError:
        raise SimulationError(f"program {prog.name} has {len(prog.kernels)} kernels; no kernel "
                              f"{kernel_index}") from None
    if side not in ("aic", "aiv"):
        raise SimulationError(f"side {side!r} is not a core side; use 'aic' or 'aiv'")
    statics: list[StaticInstr] = []
    cp = compile_side(prog, k, kernel_index, side, statics)
    env = dict(k.tiling)
    env.update(blk=blk, sub=sub, block_dim=k.block_dim)
    out: Counter = Counter()
    left = [budget]
    ops = cp.ops

    def load(buf: str, index: int) -> int:
        out["scalar_read"] += 1
        return 0

    def run(pc: int, stop: int, env: dict) -> None:
        while pc < stop:
            left[0] -= 1
            if left[0] < 0:
                raise SimulationError(f"kernel {k.name}: more than {budget} steps on one core; count a "
                                      "smaller problem")
            op = ops[pc]
            kind = op[0]
            if kind == K_WORK:
                st = statics[op[2]]
                if st.pipe == _V:
                    out["vector"] += 1
                    if st.kind == "vcall" and st.form == "repeat":
                        out[("vector", st.text.split(" ", 1)[0])] += 1
            elif kind == K_LET:
                env[op[1]] = op[2](env, load)
            elif kind == K_IF:
                if not op[1](env, load):
                    pc = op[2]
                    continue
            elif kind == K_LOOP:
                _, var, f0, f1, f2, endpc, _ = op
                a, b, step = f0(env, load), f1(env, load), f2(env, load)
                for v in range(a, b, step) if step > 0 else ():
                    inner = dict(env)
                    inner[var] = v
                    run(pc + 1, endpc - 1, inner)
                pc = endpc
                continue
            elif kind in (K_FSET, K_FWAIT):
                src, dst, _ = op[1]
                out[("SetFlag" if kind == K_FSET else "WaitFlag", f"{src}_{dst}")] += 1
            elif kind == K_END:
                raise SimulationError(f"kernel {k.name}: unbalanced loop end at {pc}")
            pc += 1

    run(0, len(ops), env)
    return out
