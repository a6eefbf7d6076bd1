"""Block fingerprints walk a program reduced to the ops they read, yet say exactly what a walk of every op says:
the same fingerprint, and None at the same budget (each op left out still counts one step)."""

from __future__ import annotations

import programs as P
import pytest

from kernelstudio import hw
from kernelstudio.sim import kernel_cache, multicore
from kernelstudio.sim.fingerprint import fingerprint, fingerprinter
from kernelstudio.sim.program import K_CSET, K_CWAIT, K_IF, K_LET, K_LOOP, K_SYNC, K_WORK, zero_load


def _every_op(cp, env: dict, budget: int):
    """The fingerprint by a walk of every op, each one step of the budget (the definition)."""
    ops, out, left = cp.ops, [], [budget]
    load = cp.load or zero_load

    def walk(pc: int, stop: int, env: dict) -> bool:
        while pc < stop:
            left[0] -= 1
            if left[0] < 0:
                return False
            op = ops[pc]
            k = op[0]
            if k == K_WORK:
                out.append(tuple(f(env) for f in op[3]))
            elif k == K_LET:
                env[op[1]] = op[2](env, load)
            elif k == K_IF:
                out.append(bool(op[1](env)))
                if not out[-1]:
                    pc = op[2]
                    continue
            elif k == K_LOOP:
                _, var, f0, f1, f2, endpc, lid = op
                a, b, st = f0(env), f1(env), f2(env)
                vals = range(a, b, st) if st > 0 else range(0)
                out.append(("loop", len(vals)))
                info, inner, prev = cp.loops[lid], dict(env), None
                for i, v in enumerate(vals):
                    inner[var] = v
                    if info.key_fns is None:
                        if not walk(pc + 1, endpc - 1, inner):
                            return False
                    elif not info.key_fns:
                        if i == 0 and not walk(pc + 1, endpc - 1, inner):
                            return False
                    else:
                        for name, f in info.lets:
                            inner[name] = f(inner, load)
                        key = tuple(f(inner) for f in info.key_fns)
                        if key == prev:
                            out.append(1)
                        else:
                            out.append(("run", key))
                            if not walk(pc + 1, endpc - 1, dict(inner)):
                                return False
                            prev = key
                pc = endpc
                continue
            elif k in (K_CSET, K_CWAIT, K_SYNC):
                out.append((k, op[1]))
            pc += 1
        return True

    return tuple(out) if walk(0, len(ops), dict(env)) else None


PROGRAMS = {
    "vector": lambda: P.vector_program(rows=300, cols=256, tile=16, depth=2, block_dim=4),
    "mix_tail": lambda: P.mix_program(m=200, n=256, k=320, tm=16, tk=64, block_dim=6, tn=64),
    "mix_norm": lambda: P.mix_program(m=96, n=512, k=256, tm=32, tk=64, block_dim=3, vr=4, norm=True),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_reduced_walk_is_the_walk_of_every_op_at_every_budget(name) -> None:
    prog = PROGRAMS[name]()
    profile = hw.get("ascend910b2")
    kernel = prog.kernels[0]
    sides = kernel_cache.compiled(prog, kernel).sides
    _, cores_of = multicore._placement(kernel, profile)
    for side, sub, _ in cores_of(0):
        env = multicore._env(kernel, kernel.block_dim - 1, sub)  # the tail block
        full = _every_op(sides[side], env, 100_000)
        assert full is not None and fingerprint(sides[side], env) == full
        steps = next(b for b in range(100_000) if _every_op(sides[side], env, b) is not None)
        assert steps > 10  # queue ops and flags were left out of the reduced program, yet counted
        walk = fingerprinter(sides[side], steps)
        assert walk(env) == full and fingerprinter(sides[side], steps - 1)(env) is None
        for budget in range(0, steps, max(steps // 7, 1)):
            assert fingerprint(sides[side], env, budget) is None
