"""Block fingerprints: what about one core's run can change its timing, so the simulation of a kernel
runs blocks with equal fingerprints once (identical-core detection, multicore.py), and the bounds of a
core's outermost loops.
"""

from __future__ import annotations

from collections.abc import Callable

from .program import K_CSET, K_CWAIT, K_IF, K_LET, K_LOOP, K_SYNC, K_WORK, CoreProgram, zero_load

__all__ = ["fingerprint", "fingerprinter", "top_loop_bounds"]


_NOP = -1  # a reduced program's run of ops that add nothing to a fingerprint (queue ops, intra-core flags)
_KEPT = (K_WORK, K_LET, K_IF, K_LOOP, K_CSET, K_CWAIT, K_SYNC)


def fingerprint(cp: CoreProgram, env: dict, budget: int = 100_000) -> tuple | None:
    """Everything about one core's run that can change its timing (sizes, trip counts, branches,
    flags), with loops compressed into runs of equal-key iterations; None if too large to tell."""
    return fingerprinter(cp, budget)(env)


def fingerprinter(cp: CoreProgram, budget: int = 100_000) -> Callable[[dict], tuple | None]:
    """`fingerprint(cp, env, budget)` as a function of `env`, for the blocks of one kernel: the program is reduced
    once to the ops a fingerprint reads (the others are counted against the budget, not walked one by one)."""
    ops = _reduced(cp.ops)
    loops = cp.loops
    load = cp.load or zero_load  # a kernel's planned scalar reads (a grouped matmul's group sizes) shape its run

    def run(env: dict) -> tuple | None:
        out: list = []
        append = out.append
        left = [budget]

        def walk(pc: int, stop: int, env: dict) -> bool:
            while pc < stop:
                op = ops[pc]
                left[0] -= op[-1]  # the op and the ops left out before it
                if left[0] < 0:
                    return False
                k = op[0]
                if k == K_WORK:
                    append(tuple([f(env) for f in op[1]]))
                    pc += 1
                elif k == K_LET:
                    env[op[1]] = op[2](env, load)
                    pc += 1
                elif k == K_IF:
                    c = bool(op[1](env))
                    append(c)
                    pc = pc + 1 if c else op[2]
                elif k == K_LOOP:
                    _, var, f0, f1, f2, endpc, lid, _ = op
                    a, b, st = f0(env), f1(env), f2(env)
                    vals = range(a, b, st) if st > 0 else range(0)
                    append(("loop", len(vals)))
                    info = loops[lid]
                    inner = dict(env)
                    if info.key_fns is None:
                        for v in vals:
                            inner[var] = v
                            if not walk(pc + 1, endpc, inner):
                                return False
                    elif not info.key_fns:
                        if vals:
                            inner[var] = a
                            if not walk(pc + 1, endpc, inner):
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
                                if not walk(pc + 1, endpc, dict(inner)):
                                    return False
                                prev = key
                            else:
                                append(1)
                    pc = endpc
                elif k == _NOP:
                    pc += 1
                else:  # K_CSET, K_CWAIT, K_SYNC
                    append((k, op[1]))
                    pc += 1
            return True

        if not walk(0, len(ops), dict(env)):
            return None
        return tuple(out)

    return run


def _reduced(ops: list[tuple]) -> list[tuple]:
    """The ops a fingerprint reads, each with its weight last (itself and the ops left out just before it, which
    the walk would have counted against its budget one by one); loops without their END (a body is
    [pc + 1, endpc)); a run of left-out ops that ends a body is one _NOP."""
    out: list[tuple] = []

    def reduce(pc: int, stop: int) -> None:
        pending = 0
        while pc < stop:
            op = ops[pc]
            k = op[0]
            if k not in _KEPT:
                pending += 1
                pc += 1
                continue
            w = pending + 1
            pending = 0
            if k == K_WORK:
                out.append((K_WORK, op[3], w))
                pc += 1
            elif k == K_LET:
                out.append((K_LET, op[1], op[2], w))
                pc += 1
            elif k == K_IF:
                at = len(out)
                out.append(())
                reduce(pc + 1, op[2])
                out[at] = (K_IF, op[1], len(out), w)
                pc = op[2]
            elif k == K_LOOP:
                _, var, f0, f1, f2, endpc, lid = op
                at = len(out)
                out.append(())
                reduce(pc + 1, endpc - 1)  # the walk never reaches a loop's END
                out[at] = (K_LOOP, var, f0, f1, f2, len(out), lid, w)
                pc = endpc
            else:
                out.append((k, op[1], w))
                pc += 1
        if pending:
            out.append((_NOP, pending))

    reduce(0, len(ops))
    return out


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
