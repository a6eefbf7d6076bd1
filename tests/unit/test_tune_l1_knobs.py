"""The memory-hierarchy directives as tuner knobs: l1_c_steps groups (tuple choices) and the swizzle group."""

from __future__ import annotations

import itertools

import pytest

import kernelstudio as ks
from tests.unit.tune_support import TARGET, tune_inline

C_STEPS = [(1, 1), (1, 2), (2, 2), (2, 4)]
GROUPS = [1, 2, 4]


@pytest.fixture(autouse=True)
def _db(fresh_db):
    return fresh_db


def matmul_l1(c_steps=None, group=None):
    """1024 x 2048 x 256 matmul, 128 x 256 C tiles: a group of C tiles keeps whole-K panels in L1 (the
    larger groups overflow it); the swizzle group orders the C tiles (these operands fit L2, so the
    order does not change the time here)."""
    x = ks.placeholder((1024, 256), "float16", name="x")
    w = ks.placeholder((2048, 256), "float16", name="w")
    out = ks.matmul(x, w, transpose_b=True, name="out")
    s = ks.create_schedule(out)
    s[out].split("m", 128)
    s[out].split("n", 256)
    s[out].split("k", 64)
    s[out].l1_c_steps(*(c_steps or ks.knob("c_steps", (1, 1), C_STEPS)))
    s[out].swizzle(group or ks.knob("group", 1, GROUPS), "m")
    return s


def test_l1_c_steps_and_swizzle_tune_against_brute_force():
    truth = {}
    for cs, g in itertools.product(C_STEPS, GROUPS):
        s = matmul_l1(cs, g)
        try:
            truth[(cs, g)] = ks.build(list(s.graph.outputs), TARGET, schedule=s, compare=False).sim.time_us
        except ks.KernelStudioError as e:
            truth[(cs, g)] = e
    legal = {k: v for k, v in truth.items() if not isinstance(v, Exception)}
    assert len(legal) >= 6 and len(set(legal.values())) > 1  # the knobs change the prediction
    r = tune_inline(matmul_l1, budget=100, strategy="grid", db=False)
    assert len(r.history) == len(truth)
    for t in r.history:
        want = truth[(tuple(t.config["c_steps"]), t.config["group"])]
        if isinstance(want, Exception):
            assert not t.ok and t.kind.startswith(type(want).__name__)
        else:
            assert t.time_us == pytest.approx(want, rel=1e-12)
    assert r.pruned == {"CapacityError: L1": len(truth) - len(legal)}  # whole-K panels past L1
    best = min(legal, key=legal.get)
    assert r.best_time_us == pytest.approx(legal[best], rel=1e-12)
    k = r.best.design.program.kernels[0]
    steps = dict(k.tiling)
    assert (steps.get("step_m", 1), steps.get("step_n", 1)) == tuple(r.best.config["c_steps"])
