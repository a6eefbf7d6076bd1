"""lower/vec_calls.py: the Ascend C calls of a row reduction, a per-row broadcast and a row-looped op, as the
code generator writes them and the simulator prices them (tests/codegen/test_parity.py checks them against
the twin's call log)."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.core.errors import UnsupportedError
from kernelstudio.sim.calls import issued
from kernelstudio.sim.compile import compile_side
from kernelstudio.sim.errors import SimulationError
from kernelstudio.tileir.expr import Const, E, Var, ceil_div
from kernelstudio.tileir.program import Buffer, If, Kernel, Loop, QuePos, Reduce, Region, Tier, VecCall, VecOp, walk
from kernelstudio.tileir.vec_calls import WORK, calls_of, expand, work_of
from tests.reference_kernels import REFERENCE

BUFS = {
    "x": Buffer("x", Tier.UB, "float32", 8, 200, 2, QuePos.VECIN),
    "w": Buffer("w", Tier.UB, "float32", 8, 2000),
    "v": Buffer("v", Tier.UB, "float32", 2, 8192),
    "y": Buffer("y", Tier.UB, "float32", 8, 200),
    "n": Buffer("n", Tier.UB, "float32", 8, 40),
    "h": Buffer("h", Tier.UB, "float16", 16, 256),
    "col": Buffer("col", Tier.UB, "float32", 8, 1),
    "g": Buffer("g", Tier.UB, "float32", 1, 200),
}
R = Var("rlen")


def full(buf: str, cols: int, stride: int | None = None) -> Region:
    return Region(buf, Const(0), R, Const(cols), Const(stride or cols))


COL = Region("col", Const(0), R, Const(1), Const(1))


def calls(stmts) -> list[VecCall]:
    return [s for s in walk(stmts) if isinstance(s, VecCall)]


def test_a_wide_row_reduces_per_row_then_over_all_rows() -> None:
    exp = expand(Reduce("sum", COL, full("w", 2000)), BUFS, {})  # 31 column groups: more than 8 rows x 2 calls
    loop, final = exp.stmts
    assert isinstance(loop, Loop) and loop.stop == R
    main, tail = loop.body
    assert (main.api, main.mask, main.repeats, main.params) == ("WholeReduceSum", Const(64), Const(31), (1, 1, 8))
    assert (tail.mask, tail.repeats) == (Const(16), Const(1))  # 2000 = 31 x 64 + 16
    assert main.dst.buf == WORK and main.dst.offset == E.mul(Var("row"), 32)  # 32 partials per row, padded
    assert (final.api, final.dst, final.mask, final.repeats, final.params) == (
        "WholeReduceSum", COL, Const(32), R, (1, 1, 4))  # 32 partials per row, rows 4 blocks apart
    assert exp.work == 8 * 32 and exp.dtype == "float32"


def test_a_row_of_more_than_64_repeats_takes_two_per_row_levels() -> None:
    exp = expand(Reduce("max", COL, Region("v", Const(0), Const(2), Const(8192), Const(8192))), BUFS, {})
    first, second, final = exp.stmts
    assert isinstance(first, Loop) and isinstance(second, Loop)
    (a,) = first.body  # 8192 = 128 whole repeats, no tail
    assert (a.mask, a.repeats, a.dst.offset) == (Const(64), Const(128), E.mul(Var("row"), 128))
    (b,) = second.body  # 128 partials = 2 repeats per row, into the next area
    assert (b.mask, b.repeats, b.srcs[0].offset) == (Const(64), Const(2), E.mul(Var("row"), 128))
    assert b.dst.offset == E.add(Const(2 * 128), E.mul(Var("row"), 8))
    assert (final.mask, final.repeats, final.params) == (Const(2), Const(2), (1, 1, 1))
    assert exp.work == 2 * 128 + 2 * 8


def test_few_column_groups_are_folded_over_every_row_first() -> None:
    exp = expand(Reduce("sum", COL, full("x", 200)), BUFS, {})  # 3 whole groups + a tail of 8
    *folds, final = exp.stmts
    assert [(f.api, f.mask, f.repeats) for f in folds] == [("Add", Const(64), R)] * 2 + [("Add", Const(8), R)]
    assert [f.srcs[1].offset for f in folds] == [Const(64), Const(128), Const(192)]
    assert folds[0].params == (1, 1, 1, 8, 25, 25) and folds[1].params == (1, 1, 1, 8, 8, 25)
    assert (final.api, final.mask, final.repeats, final.params) == ("WholeReduceSum", Const(64), R, (1, 1, 8))
    assert exp.work == 8 * 64
    first, *rest = expand(Reduce("max", COL, full("y", 100, 104)), BUFS, {}).stmts  # one group + a tail: copy first
    assert first.api == "Adds" and first.scalar == 0.0 and rest[0].api == "Max" and rest[0].mask == Const(36)


def test_a_row_of_one_repeat_is_one_call_and_max_keeps_values_only() -> None:
    exp = expand(Reduce("max", COL, full("n", 40)), BUFS, {})
    (only,) = exp.stmts
    assert (only.api, only.op, only.mask, only.repeats, only.params) == ("WholeReduceMax", "reduce_max", Const(40), R,
                                                                          (1, 1, 5))
    assert exp.work == 0


def test_accumulating_reduction_adds_the_chunk_into_dst() -> None:
    exp = expand(Reduce("sum", COL, full("n", 40), accumulate=True), BUFS, {})
    first, add = exp.stmts
    assert first.dst.buf == WORK and (add.api, add.form, add.count) == ("Add", "count", R)
    assert add.srcs == (COL, first.dst)


def test_a_dynamic_row_length_puts_the_tail_under_an_if() -> None:
    exp = expand(Reduce("sum", COL, Region("x", Const(0), R, Var("clen"), Const(200))), BUFS, {})  # not folded
    assert any(isinstance(s, If) for s in walk(exp.stmts))


def test_unaligned_rows_are_refused() -> None:
    with pytest.raises(UnsupportedError, match="32-byte boundaries"):
        expand(Reduce("sum", COL, Region("x", Const(3), R, Const(40), Const(200))), BUFS, {})


def test_a_per_row_value_is_spread_by_brcb_and_read_with_block_stride_zero() -> None:
    exp = expand(VecOp("sub", full("n", 40), (full("n", 40), COL)), BUFS, {})
    brcb, sub = exp.stmts
    assert (brcb.api, brcb.srcs, brcb.repeats, brcb.params) == ("Brcb", (COL,), ceil_div(R, 8), (1, 8))
    assert (sub.api, sub.mask, sub.repeats, sub.params) == ("Sub", Const(40), R, (1, 1, 0, 5, 5, 1))
    assert sub.srcs[1].buf == WORK  # the blocks, one per row
    assert exp.work == 8 * 8  # 8 rows x one 8-float block
    # a scalar (1 x 1) operand: one Brcb repeat, every row reads block 0
    one = Region("col", Const(0), Const(1), Const(1), Const(1))
    _, add = expand(VecOp("add", full("n", 40), (one, full("n", 40))), BUFS, {}).stmts
    assert add.params == (1, 0, 1, 5, 0, 5)


def test_wide_rows_use_column_groups_and_a_one_row_operand_has_repeat_stride_zero() -> None:
    exp = expand(VecOp("mul", full("y", 200), (full("y", 200), Region("g", Const(0), Const(1), Const(200),
                                                                       Const(200)))), BUFS, {})
    got = calls(exp.stmts)
    assert [c.mask for c in got] == [Const(64)] * 3 + [Const(8)]
    assert all(c.repeats == R and c.params == (1, 1, 1, 25, 25, 0) for c in got)
    assert [c.dst.offset for c in got] == [Const(0), Const(64), Const(128), Const(192)]


def test_contiguous_ops_are_one_call_and_are_not_expanded() -> None:
    assert expand(VecOp("exp", full("n", 40), (full("n", 40),)), BUFS, {}) is None
    assert expand(VecOp("add", full("n", 40), (full("n", 40), full("n", 40))), BUFS, {}) is None


def test_issued_counts_what_the_simulator_walks() -> None:
    x = ks.placeholder((20, 200), "float32", name="x")
    prog = ks.lower(ks.create_schedule(ks.softmax(x)), "ascend910b2")
    got = issued(prog, 0, "aiv", 0, 0)
    statics: list = []
    compile_side(prog, prog.kernels[0], 0, "aiv", statics)
    assert not any(s.kind == "reduce" for s in statics)  # every reduction is split into its calls
    assert got[("vector", "WholeReduceMax")] > 0 and got[("vector", "Brcb")] > 0
    assert not any(k[0] in ("SetFlag", "WaitFlag") and k[1] in ("V_S", "S_V") for k in got if isinstance(k, tuple))
    with pytest.raises(SimulationError, match="no kernel 5"):
        issued(prog, 5)
    with pytest.raises(SimulationError, match="not a core side"):
        issued(prog, 0, "vec")


def test_a_reduction_is_priced_as_its_calls() -> None:
    """The vcall prices are the measured curves at each call's repeats: the per-row level pays its
    start-up once per row."""
    from kernelstudio.hw import get
    from kernelstudio.sim.costs import Pricer

    x = ks.placeholder((8, 200), "float32", name="x")
    prog = ks.lower(ks.create_schedule(ks.reduce_sum(x, axis=-1, keepdims=True)), "ascend910b2")
    statics: list = []
    compile_side(prog, prog.kernels[0], 0, "aiv", statics)
    level = next(s for s in statics if s.kind == "vcall" and s.op == "reduce_sum" and s.form == "repeat")
    profile = get("ascend910b2")
    pricer = Pricer(profile, statics, {})
    cyc, _, elems = pricer.price(level.sid, (3,))
    assert elems == 3 * 64
    assert cyc == profile.costs.vector_cycles("reduce_sum", "float32", 3 * 64, rows=3)
    assert pricer.price(level.sid, (0,))[0] == 0.0


def test_more_than_255_repeats_in_a_row_are_split_into_calls_of_255() -> None:
    bufs = {**BUFS, "u": Buffer("u", Tier.UB, "float32", 1, 20000)}
    exp = expand(Reduce("sum", COL, Region("u", Const(0), Const(1), Const(20000), Const(20000))), bufs, {})
    level1 = exp.stmts[0].body
    assert [c.repeats for c in level1[:2]] == [Const(255), Const(57)]  # 20000 = 312 x 64 + 32
    assert level1[1].srcs[0].offset == E.add(E.mul(Var("row"), 20000), 255 * 64)
    assert level1[1].dst.offset == E.add(E.mul(Var("row"), 320), 255)  # 313 partials, padded to 320
    assert level1[2].mask == Const(32)  # the tail


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("fuse", [True, False])
def test_scratch_sizing_agrees_with_the_calls(name: str, fuse: bool) -> None:
    """work_of (the capacity check's shortcut) == the work of the calls the code and simulator use."""
    prog = ks.lower(ks.create_schedule(REFERENCE[name](), fuse=fuse))
    seen = 0
    for k in prog.kernels:
        for s in walk(k.aiv):
            if not isinstance(s, (Reduce, VecOp)):
                continue
            try:
                exp = calls_of(k, s)
            except UnsupportedError:
                exp = None
            want = (exp.work, exp.dtype) if exp is not None and exp.work else (0, "")
            assert work_of(k, s) == want, (k.name, str(s))
            seen += bool(want[0])
    if name in ("mla_prolog_lite", "layer_norm", "softmax"):
        assert seen  # these use the work area


HAND_BUILT = [
    Reduce("sum", COL, full("w", 2000)), Reduce("max", COL, Region("v", Const(0), Const(2), Const(8192), Const(8192))),
    Reduce("sum", COL, full("x", 200)), Reduce("max", COL, full("y", 100, 104)), Reduce("max", COL, full("n", 40)),
    Reduce("sum", COL, full("n", 40), accumulate=True), Reduce("sum", COL, full("w", 2000), accumulate=True),
    Reduce("sum", COL, Region("x", Const(0), R, Var("clen"), Const(200))),
    Reduce("sum", COL, Region("x", Const(3), R, Const(40), Const(200))),  # refused: no scratch
    Reduce("sum", Region("col", Const(0), R, Const(1), Const(2)), full("n", 40), accumulate=True),  # refused
    VecOp("sub", full("n", 40), (full("n", 40), COL)), VecOp("copy", full("y", 200), (COL,)),
    VecOp("add", full("n", 40), (Region("col", Const(0), Const(1), Const(1), Const(1)), full("n", 40))),
    VecOp("mul", full("y", 200), (full("y", 200), COL)), VecOp("exp", full("n", 40), (full("n", 40),)),
]


@pytest.mark.parametrize("s", HAND_BUILT, ids=[f"{type(s).__name__}{i}" for i, s in enumerate(HAND_BUILT)])
@pytest.mark.parametrize("rows", [8, 3])
def test_work_of_equals_the_work_of_the_calls(s, rows: int) -> None:
    k = Kernel("k", "vector", "AIV_ONLY", 1, (), tuple(BUFS.values()), aiv=(s,), tiling=(("rlen", rows),))
    try:
        exp = calls_of(k, s)
    except UnsupportedError:
        exp = None
    want = (exp.work, exp.dtype) if exp is not None and exp.work else (0, "")
    assert work_of(k, s) == want
