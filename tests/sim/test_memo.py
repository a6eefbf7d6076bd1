"""The iteration memo (sim/memo.py): a grouped matmul's tiles that start from a state seen before replay their
recorded events. The timeline is the walked one: the same time (to float rounding of the shifts), the same
events column for column, with far fewer instructions walked; and what makes a loop unfit for it."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.sim import memo
from kernelstudio.tileir.expr import Const, E, Var
from kernelstudio.tileir.program import Let, Loop


def _grouped(sizes: tuple[int, ...], m: int = 2048, k: int = 256, n: int = 256):
    x = ks.placeholder((m, k), "bfloat16", name="x")
    w = ks.placeholder((len(sizes), k, n), "bfloat16", name="w")
    g = ks.placeholder((len(sizes),), "int32", name="g")
    y = ks.grouped_matmul(x, w, g, plan_sizes=sizes, name="y")
    sched = ks.create_schedule(y, target="ascend910b2")
    sched[y].split("m", 32)
    sched[y].split("n", 64)
    sched[y].split("k", 64)
    return ks.lower(sched, "ascend910b2")


@pytest.fixture
def walked():
    """simulate with the memo off."""
    def run(prog):
        memo.ENABLED = False
        try:
            return ks.simulate(prog)
        finally:
            memo.ENABLED = True
    return run


SKEWED = (400, 200, 120, 80, 60, 40, 20, 10, 10, 4, 0, 0, 80, 0, 0, 0) + (32,) * 30 + (0,) * 18
@pytest.mark.parametrize("sizes", [(32,) * 64, SKEWED])
def test_the_memo_gives_the_walked_timeline(sizes, walked) -> None:
    prog = _grouped(sizes)
    fast, full = ks.simulate(prog), walked(prog)
    assert fast.time_us == pytest.approx(full.time_us, rel=1e-12)
    a, b = fast.events.columns, full.events.columns
    assert set(a) == set(b)
    for c in a:
        if c in ("start_us", "end_us"):
            np.testing.assert_allclose(a[c], b[c], rtol=0, atol=1e-9 * full.time_us, err_msg=c)
        else:
            np.testing.assert_array_equal(a[c], b[c], err_msg=c)
    assert fast.traffic == full.traffic
    assert fast.stats["instructions_represented"] == full.stats["instructions_represented"]
    # the memo did the work: fewer instructions walked (under half when every group is alike)
    factor = 2 if len(set(sizes)) == 1 else 1.2
    assert fast.stats["instructions_simulated"] * factor < full.stats["instructions_simulated"], (
        fast.stats["instructions_simulated"], full.stats["instructions_simulated"])


def test_loops_that_carry_a_value_or_read_outside_it_are_keyed_or_refused() -> None:
    body = (Let("m", E.min(32, E.sub(Var("cnt"), E.mul(Var("j"), 32)))), Let("off", E.mul(Var("j"), 7)),
            Loop("k", Const(0), Var("m"), Const(1), ()))
    # the trip count reads m (a body let) and m reads cnt: the key holds m, not j nor the offset
    assert memo.memo_vars(Loop("j", Const(0), Const(4), Const(1), body)) == ("m",)
    carried = (Let("base", E.add(Var("base"), Var("n"))), Loop("k", Const(0), Var("base"), Const(1), ()))
    assert memo.memo_vars(Loop("g", Const(0), Const(4), Const(1), carried)) is None
    early = (Loop("k", Const(0), Var("q"), Const(1), ()), Let("q", Const(3)))  # q read before it is bound
    assert memo.memo_vars(Loop("g", Const(0), Const(4), Const(1), early)) is None
