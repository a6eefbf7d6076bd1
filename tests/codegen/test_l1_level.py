"""The L1 level of cube kernels: A and B slabs of several k tiles stay in L1 (TCubeTiling stepKa /
stepKb, depthA1 / depthB1), validated, auto-chosen, printed, emitted, run and three-way exact."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.codegen import codegen
from kernelstudio.codegen.cube import cube_tiling
from kernelstudio.codegen.scope import Scope
from kernelstudio.core.errors import CapacityError, ScheduleError
from kernelstudio.tileir.program import Copy, Tier, walk

from .reference import three_way


def _mm(m: int, k: int, n: int, ta: bool = False, tb: bool = False):
    a = ks.placeholder((k, m) if ta else (m, k), "float16", name="a")
    b = ks.placeholder((n, k) if tb else (k, n), "float16", name="b")
    return ks.matmul(a, b, transpose_a=ta, transpose_b=tb)


def _lower(out, **steps):
    s = ks.create_schedule(out)
    st = s[s.kernels[0].name]
    if "tiles" in steps:
        tm, tn, tk = steps.pop("tiles")
        st.split("m", tm).split("n", tn).split("k", tk)
    if "k_steps" in steps:
        st.l1_k_steps(*steps.pop("k_steps"))
    if "depth" in steps:
        st.l1_depth(*steps.pop("depth"))
    return ks.lower(s, "ascend910b2")


def _l1(prog):
    return {b.name: b for b in prog.kernels[0].buffers if b.tier is Tier.L1}


def test_auto_schedule_fills_l1_with_slabs_of_several_k_tiles():
    prog = _lower(_mm(4096, 4096, 4096))
    t = dict(prog.kernels[0].tiling)
    assert (t["tile_m"], t["tile_n"], t["tile_k"]) == (256, 128, 64)
    assert (t["step_ka"], t["step_kb"]) == (4, 8)  # equal 128 KiB slabs of A and B
    l1 = _l1(prog)
    assert (l1["a1"].rows, l1["a1"].cols, l1["a1"].depth) == (256, 256, 2)
    assert (l1["b1"].rows, l1["b1"].cols, l1["b1"].depth) == (512, 128, 2)
    assert sum(b.nbytes for b in l1.values()) <= ks.hw.get("ascend910b2").l1_bytes
    text = prog.passes[-1][1]
    assert "step_ka=4 step_kb=8" in text and "L1: A in slabs of 4, B in slabs of 8" in text
    big = [c for c in walk(prog.kernels[0].aic) if isinstance(c, Copy) and c.src.gm]
    assert len(big) == 2 and all(c.nd2nz for c in big)


def test_l1_slabs_make_the_large_matmul_cube_bound():
    prog = _lower(_mm(4096, 4096, 4096))
    t = dict(prog.kernels[0].tiling)
    # the same tiles, one k tile per L1 load
    flat = _lower(_mm(4096, 4096, 4096), tiles=(t["tile_m"], t["tile_n"], t["tile_k"]), k_steps=(1, 1))
    fast, slow = ks.simulate(prog), ks.simulate(flat)
    assert fast.time_us < 0.5 * slow.time_us
    assert fast.metrics["pipes"]["M"]["utilisation"] > 0.8
    assert fast.traffic["GM->L1"] == slow.traffic["GM->L1"]  # same bytes, bigger moves


def test_generated_tiling_carries_the_steps_and_depths_in_base_blocks():
    prog = _lower(_mm(512, 1000, 256), tiles=(128, 64, 64), k_steps=(2, 4), depth=(2, 1))
    t = cube_tiling(Scope(prog, prog.kernels[0]))
    assert (t["stepKa"], t["stepKb"], t["depthA1"], t["depthB1"]) == (2, 4, 4, 4)
    assert (t["baseM"], t["baseN"], t["baseK"]) == (128, 64, 64)
    host = "\n".join(codegen(prog).files.values())
    assert "set_stepKa(2);" in host and "set_stepKb(4);" in host and "set_depthA1(4);" in host


@pytest.mark.parametrize(("shape", "ta", "tb", "tiles", "k_steps", "depth"), [
    ((200, 1000, 300), False, False, (64, 64, 64), (2, 8), (2, 2)),   # k tail: 1000 = 15 x 64 + 40
    ((200, 1000, 300), False, True, (64, 64, 64), (4, 2), (2, 1)),    # B given as [n, k]
    ((96, 777, 80), True, False, (32, 32, 32), (3, 3), (1, 1)),       # A given as [k, m], equal steps
    ((130, 520, 100), True, True, (64, 32, 32), (16, 4), (2, 2)),     # steps past the k tiles: clamped
])
def test_three_way_with_l1_slabs_and_tails(twin_cache, shape, ta, tb, tiles, k_steps, depth):
    out = _mm(*shape, ta=ta, tb=tb)
    prog = _lower(out, tiles=tiles, k_steps=k_steps, depth=depth)
    assert any(b.name == "a1" and b.cols * b.rows > tiles[0] * tiles[2] for b in prog.kernels[0].buffers)
    three_way(out, prog, twin_cache)


def test_three_way_mixed_kernel_with_l1_slabs(twin_cache):
    x = ks.placeholder((96, 700), "float16", name="x")
    w = ks.placeholder((700, 256), "float16", name="w")
    out = ks.rms_norm(ks.matmul(x, w))
    prog = _lower(out, tiles=(32, 64, 64), k_steps=(4, 2))
    assert dict(prog.kernels[0].tiling)["step_ka"] == 4
    three_way(out, prog, twin_cache)


def test_l1_overflow_names_the_bytes_and_the_way_out():
    with pytest.raises(CapacityError) as e:
        _lower(_mm(4096, 4096, 4096), tiles=(256, 128, 64), k_steps=(16, 16))
    msg = str(e.value)
    assert "L1 needs 1,572,864 B" in msg and "524,288 B" in msg and "l1_k_steps" in msg


@pytest.mark.parametrize(("call", "match"), [
    (lambda st: st.l1_k_steps(3, 4), "multiple of the smaller"),
    (lambda st: st.l1_k_steps(0), "whole number >= 1"),
    (lambda st: st.l1_depth(3), "1 \\(single\\) or 2"),
])
def test_bad_l1_directives_are_schedule_errors(call, match):
    s = ks.create_schedule(_mm(64, 64, 64))
    with pytest.raises(ScheduleError, match=match):
        call(s[s.kernels[0].name])


def test_l1_directives_apply_to_cube_kernels_only():
    x = ks.placeholder((64, 64), "float16", name="x")
    out = ks.relu(x)
    s = ks.create_schedule(out)
    with pytest.raises(ScheduleError, match="matmul/conv kernels"):
        s[out].l1_k_steps(2)


def test_l1_directives_replay_from_json():
    out = _mm(256, 512, 256)
    s = ks.create_schedule(out)
    s[s.kernels[0].name].l1_k_steps(2, 4).l1_depth(1, 2)
    again = ks.create_schedule(out)
    again.replay(s.to_json())
    assert again.directives == s.directives
    t = dict(ks.lower(again, "ascend910b2").kernels[0].tiling)
    assert (t["step_ka"], t["step_kb"]) == (2, 4)


@pytest.mark.parametrize("k_steps", [(2, 8), (4, 4)])
def test_simulator_shortcuts_agree_with_the_full_simulation_on_l1_loops(k_steps):
    prog = _lower(_mm(1024, 1000, 512), tiles=(128, 64, 64), k_steps=k_steps)
    fast, full = ks.simulate(prog), ks.simulate(prog, exact=True)
    assert fast.time_us == pytest.approx(full.time_us, rel=0.01)
    assert fast.traffic == full.traffic


def _conv(cin: int, hw: int, cout: int):
    x = ks.placeholder((1, cin, hw, hw), "float16", name="x")
    w = ks.placeholder((cout, cin, 3, 3), "float16", name="w")
    b = ks.placeholder((cout, 1, 1), "float16", name="bias")
    return ks.relu(ks.conv2d(x, w, padding="SAME") + b)


def test_conv_weights_load_in_l1_slabs_beside_the_img2col_source():
    prog = ks.lower(ks.create_schedule(_conv(64, 112, 64)), "ascend910b2")
    t = dict(prog.kernels[0].tiling)
    assert t["step_ka"] > 1 and t["step_kb"] == 1  # the img2col source already holds all of K
    l1 = _l1(prog)
    assert l1["a1"].cols == t["tile_k"] * t["step_ka"] and "slab" in l1
    assert sum(b.nbytes for b in l1.values()) <= ks.hw.get("ascend910b2").l1_bytes
    flat = ks.create_schedule(_conv(64, 112, 64))
    flat[flat.kernels[0].name].l1_k_steps(1)
    assert ks.simulate(prog).time_us < ks.simulate(ks.lower(flat, "ascend910b2")).time_us


@pytest.mark.parametrize(("args", "steps"), [((32, 20, 48), 2), ((16, 15, 32), 3), ((48, 12, 16), 4)])
def test_three_way_conv_with_weight_slabs_and_k_tails(twin_cache, args, steps):
    out = _conv(*args)
    s = ks.create_schedule(out)
    s[s.kernels[0].name].split("k", 64).l1_k_steps(steps)
    prog = ks.lower(s, "ascend910b2")
    assert dict(prog.kernels[0].tiling)["K"] % (64 * steps) != 0  # the last weight slab is partial
    three_way(out, prog, twin_cache)
