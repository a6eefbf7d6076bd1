"""Block fingerprints: what about one core's run can change its timing, so the simulation of a kernel
runs blocks with equal fingerprints once (identical-core detection, multicore.py), and the bounds of a
core's outermost loops.
"""

from __future__ import annotations

from .program import K_CSET, K_CWAIT, K_IF, K_LET, K_LOOP, K_SYNC, K_WORK, CoreProgram, zero_load

__all__ = ["fingerprint", "top_loop_bounds"]


def fingerprint(cp: CoreProgram, env: dict, budget: int = 100_000) -> tuple | None:
    """Everything about one core's run that can change its timing (sizes, trip counts, branches,
    flags), with loops compressed into runs of equal-key iterations; None if too large to tell."""
    ops = cp.ops
    load = cp.load or zero_load  # a kernel's planned scalar reads (a grouped matmul's group sizes) shape its run
    out: list = []
    append = out.append
    left = [budget]

    def walk(pc: int, stop: int, env: dict) -> bool:
        while pc < stop:
            left[0] -= 1
            if left[0] < 0:
                return False
            op = ops[pc]
            k = op[0]
            if k == K_WORK:
                append(tuple([f(env) for f in op[3]]))
                pc += 1
            elif k == K_LET:
                env[op[1]] = op[2](env, load)
                pc += 1
            elif k == K_IF:
                c = bool(op[1](env))
                out.append(c)
                pc = pc + 1 if c else op[2]
            elif k == K_LOOP:
                _, var, f0, f1, f2, endpc, lid = op
                a, b, st = f0(env), f1(env), f2(env)
                vals = range(a, b, st) if st > 0 else range(0)
                out.append(("loop", len(vals)))
                info = cp.loops[lid]
                inner = dict(env)
                if info.key_fns is None:
                    for v in vals:
                        inner[var] = v
                        if not walk(pc + 1, endpc - 1, inner):
                            return False
                elif not info.key_fns:
                    if vals:
                        inner[var] = a
                        if not walk(pc + 1, endpc - 1, inner):
                            return False
                else:
                    prev = None
                    lets, key_fns = info.lets, info.key_fns
                    for v in vals:
                        inner[var] = v
                        for name, f in lets:
                            inner[name] = f(inner, load)
                        key = tuple([f(inner) for f in key_fns])
                        if key != prev:
                            append(("run", key))
                            if not walk(pc + 1, endpc - 1, dict(inner)):
                                return False
                            prev = key
                        else:
                            append(1)
                pc = endpc
            else:
                if k in (K_CSET, K_CWAIT, K_SYNC):
                    out.append((k, op[1]))
                pc += 1
        return True

    if not walk(0, len(ops), dict(env)):
        return None
    return tuple(out)


def top_loop_bounds(cp: CoreProgram, env: dict) -> dict[int, tuple[int, int]]:
    """(start, step) of every outermost loop for this env (blk, sub and tiling constants)."""
    ops = cp.ops
    env = dict(env)
    out: dict[int, tuple[int, int]] = {}
    pc = 0
    while pc < len(ops):
        op = ops[pc]
        k = op[0]
        if k == K_LET:
            env[op[1]] = op[2](env, cp.load or zero_load)
            pc += 1
        elif k == K_IF:
            pc = pc + 1 if op[1](env) else op[2]
        elif k == K_LOOP:
            out[op[6]] = (op[2](env), op[4](env))
            pc = op[5]
        else:
            pc += 1
    return out
