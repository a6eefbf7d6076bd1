"""The per-kernel caches (sim/kernel_cache.py): a program whose kernels ran before is simulated from their cached
runs, bit for bit what a fresh simulation gives (time, events, metrics), and a schedule move that changes one
kernel of an unfused plan simulates that kernel only; simulate_time is simulate(...).time_us, the same float."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from programs import two_kernel_program

import kernelstudio as ks
from kernelstudio.core.errors import InputError
from kernelstudio.sim import kernel_cache, multicore, simulate_time
from tests import reference_kernels as ref

TARGET = "ascend910b2"


def _unfused(tile_n: int | None = None):
    """MlaProlog-lite as four kernels (matmul, layer_norm, add, gelu); `tile_n` moves the matmul's split only."""
    out = ref.mla_prolog_lite()
    s = ks.create_schedule(out, fuse=False)
    if tile_n is not None:
        s[s.kernels[0].name].split("n", tile_n)
    return ks.lower(s, TARGET)


def _fresh(prog, **kw):
    """simulate with the caches off: everything compiled and simulated anew."""
    kernel_cache.ENABLED = False
    try:
        return ks.simulate(prog, **kw)
    finally:
        kernel_cache.ENABLED = True


def _same(a, b) -> None:
    assert repr(a.time_us) == repr(b.time_us)
    assert repr(a.metrics) == repr(b.metrics) and a.traffic == b.traffic and repr(a.kernels) == repr(b.kernels)
    assert a.stats == b.stats
    ca, cb = a.events.columns, b.events.columns
    assert set(ca) == set(cb)
    for c in ca:
        np.testing.assert_array_equal(ca[c], cb[c], err_msg=c)
    assert a.events.why_text == b.events.why_text and a.events.instr_text == b.events.instr_text


@pytest.fixture
def counted(monkeypatch):
    """The kernel names simulated (block classes run on the engine) since the fixture started."""
    names: list[str] = []
    run = multicore._simulate_kernel

    def spy(kernel, *a, **k):
        names.append(kernel.name)
        return run(kernel, *a, **k)
    monkeypatch.setattr(multicore, "_simulate_kernel", spy)
    return names


@pytest.mark.parametrize("kw", [{}, {"l2": "warm"}, {"exact": True}, {"l2_hit_ratio": 0.5}])
def test_a_cached_run_is_the_fresh_one_bit_for_bit(kw) -> None:
    prog = _unfused()
    first = ks.simulate(prog, **kw)
    again = ks.simulate(prog, **kw)  # every kernel from the cache
    _same(again, first)
    _same(again, _fresh(prog, **kw))


def test_a_move_on_one_kernel_simulates_that_kernel_only(counted) -> None:
    kernel_cache.clear()
    base, moved = _unfused(), _unfused(tile_n=128)
    changed = [a.name for a, b in zip(base.kernels, moved.kernels, strict=True) if a is not b]
    assert changed == ["matmul"]  # lowering hands back the other kernels as they were
    ks.simulate(base)
    counted.clear()
    res = ks.simulate(moved)
    assert set(counted) == {"matmul"}  # once per pass of the memory shares
    _same(res, _fresh(moved))
    assert res.time_us != ks.simulate(base).time_us


def test_the_l2_state_a_kernel_starts_from_is_part_of_its_key(counted) -> None:
    """What earlier kernels (or, warm, the previous run) left in L2 reaches a kernel as its hit ratios: a warm
    start changes the reads of the program's inputs (x and w by the matmul, bias by the add), so those two kernels
    run again, and the result is the fresh one."""
    kernel_cache.clear()
    prog = _unfused()
    cold = ks.simulate(prog)
    counted.clear()
    warm = ks.simulate(prog, l2="warm")
    assert set(counted) == {"matmul", "add"}
    assert warm.metrics["hbm_read_bytes"] < cold.metrics["hbm_read_bytes"]
    _same(warm, _fresh(prog, l2="warm"))
    counted.clear()
    _same(ks.simulate(prog), cold)
    assert counted == []  # the cold runs are still cached


def test_a_kernel_is_compiled_again_when_the_tensors_it_reads_change() -> None:
    """The same kernel object in a program whose intermediate became a workspace: its copies' edges change (WS)."""
    prog = two_kernel_program()
    ks.simulate(prog)
    tensors = tuple(dataclasses.replace(t, role="workspace") if t.name == "h" else t for t in prog.tensors)
    other = dataclasses.replace(prog, tensors=tensors)
    res = ks.simulate(other)
    _same(res, _fresh(other))
    assert "WS->UB" in res.traffic and "WS->UB" not in ks.simulate(prog).traffic


def test_the_iteration_memo_switch_is_part_of_the_key() -> None:
    from kernelstudio.sim import memo

    prog = _unfused()
    fast = ks.simulate(prog)
    memo.ENABLED = False
    try:
        walked = ks.simulate(prog)
        assert walked.stats == _fresh(prog).stats
    finally:
        memo.ENABLED = True
    assert ks.simulate(prog).stats == fast.stats


@pytest.mark.parametrize("kw", [{}, {"l2": "warm"}, {"exact": True}])
def test_simulate_time_is_simulate_s_time(kw) -> None:
    for prog in (_unfused(), _unfused(tile_n=64), two_kernel_program()):
        assert repr(simulate_time(prog, **kw)) == repr(ks.simulate(prog, **kw).time_us)


def test_simulate_time_checks_its_arguments_as_simulate_does() -> None:
    with pytest.raises(InputError, match="simulate_time: exact must be True or False"):
        simulate_time(_unfused(), exact="yes")
    with pytest.raises(ks.KernelStudioError, match="l2="):
        simulate_time(_unfused(), l2="hot")


def test_kernels_compiled_on_their_own_are_placed_at_the_program_s_sids() -> None:
    """The static instructions are those of compiling the program kernel after kernel (compile_side into one
    list), and every event names an instruction of its own kernel."""
    from kernelstudio.sim.compile import compile_side

    for prog in (_unfused(), _unfused(tile_n=64)):
        whole: list = []
        for kidx, k in enumerate(prog.kernels):
            for side in ("aic", "aiv"):
                if getattr(k, side):
                    compile_side(prog, k, kidx, side, whole)
        assert multicore.run_program(prog, prog.profile).statics == whole
        ev = ks.simulate(prog).events
        cols = ev.columns
        mine = cols["instr"] < len(whole)  # launch gaps come after the instructions
        assert mine.sum() > 100
        kernel_of = np.array([s.kernel for s in whole])
        np.testing.assert_array_equal(kernel_of[cols["instr"][mine]], cols["kernel"][mine])
        waits = [t for t in ev.why_text if "wait_flag" in t or "cross_wait" in t]
        assert all(any(t.startswith(s.text) for s in whole) for t in waits)
