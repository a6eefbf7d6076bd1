"""The TileIR verifier: every program the lowering makes passes it, after every pass and at the end;
programs broken one rule at a time fail it with a message that names the kernel and the fault."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

import kernelstudio as ks
from kernelstudio.core.errors import KernelStudioError, VerifyError
from kernelstudio.hw import get as get_profile
from kernelstudio.lower import pipeline
from kernelstudio.tileir.expr import Bin, Const, Load, Var
from kernelstudio.tileir.program import (
    Alloc,
    Buffer,
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    If,
    Kernel,
    Let,
    Loop,
    Mmad,
    Pipe,
    Program,
    Region,
    SetFlag,
    SyncAll,
    Tier,
    VecOp,
    WaitFlag,
    walk,
)
from kernelstudio.tileir.verify import check_kernel, stmt_text, verify
from tests.codegen import programs as hand_built
from tests.codegen.reference import REFERENCE as CODEGEN_REFERENCE
from tests.reference_kernels import REFERENCE, conv_bias_relu, mla_prolog_lite

TARGET = "ascend910b2"


# ---- designs -------------------------------------------------------------------------------------

def _mm_norm(m: int, n: int, k: int, norm: str = "layer_norm", batch: tuple[int, ...] = ()):
    x = ks.placeholder((*batch, m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    y = ks.matmul(x, w, transpose_b=True)
    if norm == "rms_norm":
        return ks.rms_norm(y, ks.placeholder((n,), "float16", name="g"))
    if norm == "softmax":
        return ks.softmax(y, axis=-1)
    return ks.layer_norm(y, axis=-1)


def _transpose():
    return ks.transpose(ks.placeholder((40, 72), "float16", name="x")) * 2.0


def _topk():
    return list(ks.topk(ks.placeholder((12, 64), "float32", name="x"), 5))


def _gather():
    x = ks.placeholder((30, 48), "float16", name="x")
    return ks.gather(x, ks.placeholder((7,), "int32", name="i"), axis=0)


def _axis_reduce():
    return ks.reduce_sum(ks.placeholder((33, 70), "float32", name="x"), axis=0)


def _silu_where():
    x = ks.placeholder((9, 130), "float16", name="x")
    return ks.where(x, ks.silu(x), ks.exp(x)) + ks.reduce_max(x, axis=-1, keepdims=True)


def _matmul_ta():
    a = ks.placeholder((48, 40), "float16", name="a")
    b = ks.placeholder((48, 72), "float16", name="b")
    return ks.relu(ks.matmul(a, b, transpose_a=True))


def _conv_stride():
    x = ks.placeholder((2, 8, 15, 15), "float16", name="x")
    w = ks.placeholder((16, 8, 3, 3), "float16", name="w")
    return ks.relu(ks.conv2d(x, w, stride=2, padding=1))


EXTRA: dict[str, Callable] = {
    "transpose": _transpose, "topk": _topk, "gather": _gather, "axis_reduce": _axis_reduce,
    "silu_where": _silu_where, "matmul_ta": _matmul_ta, "conv_stride": _conv_stride,
    "mm_rms_norm": lambda: _mm_norm(40, 256, 128, "rms_norm"),
    "mm_softmax_batch": lambda: _mm_norm(20, 128, 64, "softmax", batch=(3,)),
}

DESIGNS: dict[str, Callable] = {
    **{f"ref_{n}": f for n, f in REFERENCE.items()},
    **{f"codegen_{n}": f for n, f in CODEGEN_REFERENCE.items()},
    **EXTRA,
}


def _schedule(build: Callable, fuse: bool | None, variant: str):
    out = build()
    s = ks.create_schedule(out, fuse=fuse)
    if variant == "single_buffer":
        for k in s.kernels:
            s[k.name].double_buffer(False)
    elif variant == "split":
        st = s[s.kernels[0].name]
        if s.kernels[0].root is not None:
            st.split("m", 16).split("n", 32)
        else:
            st.split(0, 3)
    return s


CASES = [(d, f, v) for d in DESIGNS for f in (None, True, False) for v in ("plain", "single_buffer", "split")]


def _lower_or_skip(design: str, fuse, variant: str, target: str = TARGET) -> Program:
    try:
        return ks.lower(_schedule(DESIGNS[design], fuse, variant), target=target)
    except KernelStudioError as e:  # a directive the design refuses: nothing to verify
        pytest.skip(f"{design} {variant}: {type(e).__name__}")


@pytest.mark.parametrize(("design", "fuse", "variant"), CASES, ids=[f"{d}-{f}-{v}" for d, f, v in CASES])
def test_every_lowered_program_verifies(design: str, fuse, variant: str) -> None:
    verify(_lower_or_skip(design, fuse, variant), after="plan_memory")


SYNC_ALL = {
    "mla_prolog_lite": (mla_prolog_lite, {}),
    "tails": (lambda: mla_prolog_lite(m=50, k=200, n=300), {"tiles": (32, 64, 48), "rows": 3}),
    "rms_norm": (lambda: _mm_norm(40, 256, 128, "rms_norm"), {"double": False}),
    "softmax": (lambda: _mm_norm(33, 192, 64, "softmax"), {}),
    "batch": (lambda: _mm_norm(20, 128, 64, batch=(3,)), {"tiles": (16, 64, 32)}),
    "multi-pass": (lambda: _mm_norm(8, 12288, 32), {}),
}


def _sync_schedule(build, on: bool = True, tiles=None, rows=None, double=None):
    s = ks.create_schedule(build(), fuse=True)
    st = s[s.kernels[0].name]
    st.sync_all(on)
    if tiles:
        st.split("m", tiles[0]).split("n", tiles[1]).split("k", tiles[2])
    if rows:
        st.vectorize("m", rows)
    if double is not None:
        st.double_buffer(double)
    return s


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("case", list(SYNC_ALL))
def test_sync_all_programs_verify(case: str, on: bool) -> None:
    build, kw = SYNC_ALL[case]
    prog = ks.lower(_sync_schedule(build, on, **kw), TARGET)
    if on:
        assert any(isinstance(s, SyncAll) for s in prog.kernels[0].aic)
    verify(prog)


@pytest.mark.parametrize("design", ["ref_softmax", "ref_layer_norm", "ref_elementwise_chain", "codegen_chain",
                                    "transpose", "silu_where"])
def test_vector_programs_of_a_coupled_chip_verify(design: str) -> None:
    verify(_lower_or_skip(design, None, "plain", target="ascend310p3"))


def test_dynamic_row_programs_verify() -> None:
    prog = ks.lower(ks.create_schedule(REFERENCE["softmax"]()), target=TARGET)
    assert prog.kernels[0].runtime_rows is not None
    verify(prog)


@pytest.mark.parametrize("name", list(hand_built.ALL))
def test_hand_built_programs_verify(name: str) -> None:
    prog, _ = hand_built.ALL[name]()
    verify(prog)


# ---- after every pass ------------------------------------------------------------------------------

def lower_verifying(schedule, target: str = TARGET) -> list[tuple[str, Program]]:
    """The program after every pass, made as `lower()` makes it (its pass loop, then `_emit`), each verified."""
    profile = get_profile(target)
    ctx = pipeline._Ctx(schedule, profile, pipeline.default_name(schedule))
    cfgs: pipeline.Configs = {}
    out = []
    for pname, fn in pipeline.PASSES:
        cfgs = fn(ctx, cfgs)
        prog = pipeline._emit(ctx, cfgs)
        verify(prog, after=pname)
        out.append((pname, prog))
    return out


PASS_CASES = ["ref_mla_prolog_lite", "ref_conv_bias_relu", "ref_softmax", "ref_layer_norm", "ref_elementwise_chain",
              "codegen_mla_prolog_lite_tails", "topk", "gather", "transpose", "axis_reduce"]


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("design", PASS_CASES)
def test_the_program_after_every_pass_verifies(design: str, fuse: bool) -> None:
    steps = lower_verifying(_schedule(DESIGNS[design], fuse, "plain"))
    assert [p for p, _ in steps] == [p for p, _ in pipeline.PASSES]
    final = ks.lower(_schedule(DESIGNS[design], fuse, "plain"), target=TARGET)
    assert steps[-1][1].kernels == final.kernels  # the helper makes what lower() makes


def test_the_program_after_every_pass_of_a_sync_all_design_verifies() -> None:
    lower_verifying(_sync_schedule(mla_prolog_lite, tiles=(16, 64, 64)))


# ---- broken programs -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mla() -> Program:
    return ks.lower(ks.create_schedule(mla_prolog_lite()), target=TARGET)  # sync_all: AIC C tiles, then AIV rows


@pytest.fixture(scope="module")
def softmax() -> Program:
    return ks.lower(ks.create_schedule(REFERENCE["softmax"](), fuse=True), target=TARGET)


@pytest.fixture(scope="module")
def conv() -> Program:
    return ks.lower(ks.create_schedule(conv_bias_relu(), fuse=True), target=TARGET)


def _map(stmts: tuple, fn: Callable) -> tuple:
    """`stmts` with `fn` applied to every statement (depth first); fn returns a statement, None to drop it,
    or a tuple to splice in."""
    out: list = []
    for s in stmts:
        if isinstance(s, (Loop, If)):
            s = dataclasses.replace(s, body=_map(s.body, fn))
        r = fn(s)
        if r is None:
            continue
        out.extend(r if isinstance(r, tuple) else (r,))
    return tuple(out)


def _edit(prog: Program, side: str, fn: Callable, kernel: int = 0, **kernel_fields) -> Program:
    k = prog.kernels[kernel]
    k = dataclasses.replace(k, **{side: _map(getattr(k, side), fn)}, **kernel_fields) if side else \
        dataclasses.replace(k, **kernel_fields)
    return dataclasses.replace(prog, kernels=(*prog.kernels[:kernel], k, *prog.kernels[kernel + 1:]))


def _first(stmts: tuple, pred: Callable):
    return next(s for s in walk(stmts) if pred(s))


def _fails(prog: Program, *words: str, after: str = "") -> str:
    with pytest.raises(VerifyError) as e:
        verify(prog, after=after)
    msg = str(e.value)
    assert msg.startswith("TileIR check failed"), msg
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    return msg


def test_the_real_programs_pass(mla: Program, softmax: Program, conv: Program) -> None:
    for p in (mla, softmax, conv):
        verify(p)


def test_a_dropped_free(mla: Program) -> None:
    once = [True]

    def drop(s):
        if isinstance(s, Free) and s.buf == "b1" and once[0]:
            once[0] = False
            return None
        return s
    msg = _fails(_edit(mla, "aic", drop), "kernel out, aic", "b1", "1 Alloc, 1 EnQue, 1 DeQue, 0 Free",
                 "one iteration of this loop", after="double_buffer")
    assert "after pass double_buffer" in msg and "Loop(var='kx'" in msg


def test_a_dropped_free_in_straight_line_code(mla: Program) -> None:
    _fails(_edit(mla, "aiv", lambda s: None if isinstance(s, Free) and s.buf == "in_bias" else s),
           "aiv", "in_bias", "0 Free", "outside loops")


def test_a_region_of_an_undeclared_buffer(softmax: Program) -> None:
    k = softmax.kernels[0]
    first = _first(k.aiv, lambda s: isinstance(s, VecOp))
    bad = dataclasses.replace(first, dst=dataclasses.replace(first.dst, buf="nowhere"))
    msg = _fails(_edit(softmax, "aiv", lambda s: bad if s == first else s), f"kernel {k.name}", "'nowhere'",
                 "does not declare")
    assert "VecOp(op=" in msg and len(msg) < 400


def test_gm_and_on_chip_regions_are_told_apart(softmax: Program) -> None:
    copy = _first(softmax.kernels[0].aiv, lambda s: isinstance(s, Copy) and s.src.gm)
    as_buffer = dataclasses.replace(copy, src=dataclasses.replace(copy.src, gm=False))
    _fails(_edit(softmax, "aiv", lambda s: as_buffer if s == copy else s), "the region needs gm=True")
    as_gm = dataclasses.replace(copy, dst=dataclasses.replace(copy.dst, gm=True))
    _fails(_edit(softmax, "aiv", lambda s: as_gm if s == copy else s), "the region needs gm=False")


def test_a_gm_tensor_the_kernel_does_not_take(mla: Program) -> None:
    k = mla.kernels[0]
    _fails(_edit(mla, "", None, params=tuple(p for p in k.params if p != "bias")), "bias",
           "not a param of the kernel")


@pytest.fixture(scope="module")
def mla_row_blocks() -> Program:
    """Each core computes row blocks of C and their epilogue: cross-core flags both ways."""
    return ks.lower(ks.create_schedule(mla_prolog_lite(), fuse=True), target=TARGET)


@pytest.mark.parametrize("side", ["aic", "aiv"])
def test_a_deleted_cross_set(mla_row_blocks: Program, side: str) -> None:
    other = "aiv" if side == "aic" else "aic"
    assert any(isinstance(x, CrossSet) for x in walk(getattr(mla_row_blocks.kernels[0], side)))
    _fails(_edit(mla_row_blocks, side, lambda s: None if isinstance(s, CrossSet) else s), f"kernel out, {other}",
           "CrossWait(flag=", "waits for cross-core flag", f"which the {side} side never sets")


@pytest.mark.parametrize("side", ["aic", "aiv"])
def test_a_deleted_cross_wait(mla_row_blocks: Program, side: str) -> None:
    _fails(_edit(mla_row_blocks, side, lambda s: None if isinstance(s, CrossWait) else s), "CrossSet(flag=",
           f"which the {side} side never waits for")


def test_hand_built_cross_flags() -> None:
    prog, _ = hand_built.mla_prolog_lite()
    _fails(_edit(prog, "aic", lambda s: None if isinstance(s, CrossSet) else s), "kernel mla_prolog_lite, aiv",
           "never sets")


def test_a_wait_flag_without_set_flag(softmax: Program) -> None:
    wait = WaitFlag(Pipe.MTE2, Pipe.S, 3)
    prog = _edit(softmax, "aiv", lambda s: (s, wait) if isinstance(s, Alloc) else s)
    _fails(prog, "WaitFlag(", "no SetFlag(MTE2, S, 3)")
    verify(_edit(softmax, "aiv", lambda s: (s, SetFlag(Pipe.MTE2, Pipe.S, 3), wait) if isinstance(s, Alloc) else s))


def test_a_sync_all_on_one_side_only() -> None:
    prog = ks.lower(_sync_schedule(mla_prolog_lite), TARGET)
    assert any(isinstance(s, SyncAll) for s in prog.kernels[0].aiv)
    _fails(_edit(prog, "aiv", lambda s: None if isinstance(s, SyncAll) else s), "aic", "SyncAll", "never reaches")


def test_an_unbound_variable_in_a_loop_bound(mla: Program) -> None:
    def rebound(s):
        if isinstance(s, Loop) and s.var == "kx":
            return dataclasses.replace(s, stop=Bin("+", s.stop, Var("nope")))
        return s
    _fails(_edit(mla, "aic", rebound), "kernel out, aic (in loop t > gi > gj)", "Loop(var='kx'", "'nope'",
           "stop")


def test_a_let_is_not_visible_outside_its_loop(softmax: Program) -> None:
    k = softmax.kernels[0]
    loop = next(s for s in k.aiv if isinstance(s, Loop))
    inner = next(s for s in loop.body if isinstance(s, Let))
    probe = Let("probe", Var(inner.var))
    assert inner.var not in dict(k.tiling)
    _fails(_edit(softmax, "", None, aiv=(*k.aiv, probe)), f"'{inner.var}'", "no enclosing loop")


def test_a_loop_variable_is_not_visible_on_the_other_side(mla: Program) -> None:
    k = mla.kernels[0]
    _fails(_edit(mla, "", None, aiv=(Let("x", Bin("+", Var("sub"), Var("gi"))), *k.aiv)), "'gi'", "aiv")
    _fails(_edit(mla, "", None, aic=(Let("x", Var("sub")), *k.aic)), "'sub'", "aic")


def test_not_an_expression(softmax: Program) -> None:
    loop = next(s for s in softmax.kernels[0].aiv if isinstance(s, Loop))
    bad = dataclasses.replace(loop, step=1)
    _fails(_edit(softmax, "aiv", lambda s: bad if s == loop else s), "step=1", "not an index expression")
    zero = dataclasses.replace(loop, step=Const(0))
    _fails(_edit(softmax, "aiv", lambda s: zero if s == loop else s), "step 0")
    _fails(_edit(softmax, "aiv", lambda s: dataclasses.replace(s, value=Bin("**", s.value, Const(2)))
                 if isinstance(s, Let) else s), "operator '**'")


def test_a_buffer_of_2_62_rows(softmax: Program) -> None:
    k = softmax.kernels[0]
    b = k.buffers[0]
    big = dataclasses.replace(b, rows=2 ** 62)
    _fails(_edit(softmax, "", None, buffers=(big, *k.buffers[1:])), f"kernel {k.name}", f"buffer {b.name}",
           "more than int64 holds")


def test_a_constant_past_int64(softmax: Program) -> None:
    _fails(_edit(softmax, "aiv", lambda s: dataclasses.replace(s, value=Bin("+", s.value, Const(2 ** 63)))
                 if isinstance(s, Let) else s), str(2 ** 63), "not an int64")


def test_a_static_region_past_its_buffer(softmax: Program) -> None:
    k = softmax.kernels[0]
    b = next(b for b in k.buffers if b.queue is not None)
    copy = _first(k.aiv, lambda s: isinstance(s, Copy) and s.dst.buf == b.name)
    bad = dataclasses.replace(copy, dst=Region(b.name, Const(b.slot_elems), Const(1), Const(1), Const(1)))
    _fails(_edit(softmax, "aiv", lambda s: bad if s == copy else s), "past the", f"a slot of {b.name}")
    neg = dataclasses.replace(copy, dst=Region(b.name, Const(0), Const(-1), Const(1), Const(1)))
    _fails(_edit(softmax, "aiv", lambda s: neg if s == copy else s), "dst.rows = -1 < 0")


def test_queue_ops_on_a_buffer_without_a_queue(softmax: Program) -> None:
    k = softmax.kernels[0]
    tbuf = next(b for b in k.buffers if b.queue is None)
    _fails(_edit(softmax, "", None, aiv=(Alloc(tbuf.name), *k.aiv)), f"Alloc(buf='{tbuf.name}')",
           "no queue position")


def test_a_buffer_on_the_wrong_core_or_tier(mla: Program) -> None:
    k = mla.kernels[0]
    ub = next(b for b in k.buffers if b.tier is Tier.UB)
    moved = dataclasses.replace(ub, core=k.buffers[0].core)
    _fails(_edit(mla, "", None, buffers=tuple(moved if b is ub else b for b in k.buffers)),
           f"buffer {ub.name} of the aic core on the aiv side")
    l1 = next(b for b in k.buffers if b.tier is Tier.L1)
    as_ub = dataclasses.replace(l1, tier=Tier.UB)
    _fails(_edit(mla, "", None, buffers=tuple(as_ub if b is l1 else b for b in k.buffers)),
           f"buffer {l1.name} in UB, which the aic core has not")


def test_operands_in_the_wrong_tier(mla: Program) -> None:
    mm = _first(mla.kernels[0].aic, lambda s: isinstance(s, Mmad))
    swapped = dataclasses.replace(mm, a=mm.b, b=mm.a)
    _fails(_edit(mla, "aic", lambda s: swapped if s == mm else s), "Mmad(", "must be in L0A")
    copy = _first(mla.kernels[0].aic, lambda s: isinstance(s, Copy) and not s.src.gm and not s.dst.gm)
    backwards = dataclasses.replace(copy, dst=copy.src, src=copy.dst)
    _fails(_edit(mla, "aic", lambda s: backwards if s == copy else s), "-> L1, a move no pipe makes")


def test_a_load_of_another_cores_buffer(mla: Program) -> None:
    k = mla.kernels[0]
    l1 = next(b for b in k.buffers if b.tier is Tier.L1)
    _fails(_edit(mla, "", None, aiv=(Let("v", Load(l1.name, Const(0))), *k.aiv)), f"buffer {l1.name} of the aic core")


def test_check_kernel_and_stmt_text(softmax: Program) -> None:
    gm = {t.name: t for t in softmax.tensors}
    check_kernel(softmax.kernels[0], gm)
    loop = next(s for s in softmax.kernels[0].aiv if isinstance(s, Loop))
    text = stmt_text(loop)
    assert text.startswith(f"Loop(var='{loop.var}', start=") and "body" not in text and len(text) <= 160
    long = Kernel("k", "vector", "AIV_ONLY", 1, (), (Buffer("b" * 300, Tier.UB, "float16", 1, 16),))
    assert len(stmt_text(Alloc(long.buffers[0].name))) == 160


def test_a_producer_loop_and_a_consumer_loop_pair_up(softmax: Program) -> None:
    k = softmax.kernels[0]
    b = next(b.name for b in k.buffers if b.queue is not None)

    def loops(stop_b):
        return (Loop("p", Const(0), Var("blk"), Const(1), (Alloc(b), EnQue(b))),
                Loop("q", Const(0), stop_b, Const(1), (DeQue(b), Free(b))))
    verify(_edit(softmax, "", None, aiv=(*loops(Var("blk")), *k.aiv)))
    _fails(_edit(softmax, "", None, aiv=(*loops(Bin("+", Var("blk"), Const(1))), *k.aiv)), "Loop(var='p'",
           f"queue operations on {b} do not pair up")
    static = (Loop("p", Const(0), Const(3), Const(1), (Alloc(b),)), Free(b), Free(b), Free(b))
    verify(_edit(softmax, "", None, aiv=(*static, *k.aiv)))
    _fails(_edit(softmax, "", None, aiv=(*static[:-1], *k.aiv)), "Loop(var='p'", "1 Alloc, 0 EnQue, 0 DeQue, 0 Free")


# --- the hook in lower() ---------------------------------------------------------------------------------


def test_lower_checks_after_every_pass_with_ks_verify(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = pipeline.verify

    def spy(prog: Program, *, after: str = "") -> None:
        seen.append(after)
        real(prog, after=after)

    monkeypatch.setattr(pipeline, "verify", spy)
    s = ks.create_schedule(mla_prolog_lite(), fuse=True)
    monkeypatch.delenv("KS_VERIFY", raising=False)
    ks.lower(s, target=TARGET)
    assert seen == [pipeline.PASSES[-1][0]]  # always: the final program
    seen.clear()
    monkeypatch.setenv("KS_VERIFY", "1")
    ks.lower(s, target=TARGET)
    assert seen == [name for name, _ in pipeline.PASSES]


def test_a_bad_pass_fails_where_it_happens(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass whose program loses a Free is named in the error, before any reader sees the program."""
    real_emit = pipeline._emit
    state = {"pass": ""}

    def emit(ctx, cfgs):
        prog = real_emit(ctx, cfgs)
        if state["pass"] != "double_buffer":
            return prog
        return _edit(prog, "aiv", lambda st: None if isinstance(st, Free) else st)

    def tag(name, fn):
        def run(ctx, cfgs):
            state["pass"] = name
            return fn(ctx, cfgs)
        return name, run

    monkeypatch.setattr(pipeline, "_emit", emit)
    monkeypatch.setattr(pipeline, "PASSES", [tag(n, f) for n, f in pipeline.PASSES])
    monkeypatch.setenv("KS_VERIFY", "1")
    with pytest.raises(VerifyError, match="after pass double_buffer"):
        ks.lower(ks.create_schedule(REFERENCE["softmax"](), fuse=True), target=TARGET)
