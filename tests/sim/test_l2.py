"""The L2 model: re-reads and cross-kernel reuse hit while they fit, misses go to HBM."""

from __future__ import annotations

import pytest

import kernelstudio as ks
import kernelstudio.hw as hw
from kernelstudio.sim import simulate
from kernelstudio.sim.l2 import L2Error, hit_probability

PROF = hw.get("ascend910b2")


def _matmul_prog(n: int = 1024, tile: int = 128):
    a = ks.placeholder((n, n), "float16", name="a")
    b = ks.placeholder((n, n), "float16", name="b")
    s = ks.create_schedule(ks.matmul(a, b))
    s[s.kernels[0].name].split("m", tile).split("n", tile).split("k", 64)
    return ks.lower(s, "ascend910b2")


def test_hit_probability_is_all_below_two_thirds_of_l2_none_above_twice():
    assert hit_probability(0, 100) == 1.0
    assert hit_probability(66, 100) == 1.0
    assert hit_probability(200, 100) == 0.0
    assert 0 < hit_probability(100, 100) < 1
    assert hit_probability(100, 200) >= hit_probability(100, 100)


def test_working_set_well_under_l2_hits_on_every_re_read():
    prog = _matmul_prog()
    res = simulate(prog)
    m = res.metrics
    inputs = 2 * 1024 * 1024 * 2
    # only the first read of A and B comes from HBM; the output stays in the write-back L2 (6 MB fit)
    assert m["hbm_read_bytes"] == inputs
    assert m["hbm_write_bytes"] == 0
    assert m["l2_bytes"] - m["l2_read_bytes"] == 1024 * 1024 * 2
    assert res.traffic["HBM->L2"] == inputs
    assert m["l2_read_bytes"] == res.traffic["GM->L1"] - inputs
    assert m["l2_hit_ratio"] == pytest.approx(1 - inputs / res.traffic["GM->L1"])
    assert res.kernels[0]["l2_hit_ratio"] == pytest.approx(m["l2_hit_ratio"])
    assert m["hbm_bytes"] + m["l2_bytes"] == m["gm_bytes"]


def test_working_set_far_over_l2_misses():
    prog = _matmul_prog()
    tiny = PROF.with_overrides(l2_bytes=64 * 1024)
    res = simulate(prog, profile=tiny)
    assert res.metrics["l2_hit_ratio"] == 0.0
    assert res.metrics["hbm_read_bytes"] == res.traffic["GM->L1"]
    assert res.time_us >= simulate(prog).time_us


def test_intermediate_of_an_earlier_kernel_hits_while_it_fits():
    x = ks.placeholder((1024, 1024), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.exp(ks.relu(x)), fuse=False), "ascend910b2")
    assert len(prog.kernels) == 2
    res = simulate(prog)
    first, second = res.kernels
    assert first["l2_hit_ratio"] == 0.0  # x is cold
    assert second["l2_hit_ratio"] == 1.0  # relu(x) was just written
    cold = simulate(prog, profile=PROF.with_overrides(l2_bytes=1024))
    assert cold.kernels[1]["l2_hit_ratio"] == 0.0


def test_override_replaces_the_model_and_more_hits_are_never_slower():
    prog = _matmul_prog(2048, 128)
    times = []
    for h in (0.0, 0.5, 1.0):
        res = simulate(prog, l2_hit_ratio=h)
        assert res.metrics["l2_hit_ratio"] == pytest.approx(h)
        times.append(res.time_us)
    assert times[0] >= times[1] >= times[2]


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", True])
def test_override_out_of_range_is_an_error_naming_the_range(bad):
    with pytest.raises(L2Error, match="l2_hit_ratio.*from 0"):
        simulate(_matmul_prog(256, 128), l2_hit_ratio=bad)


# ---- the order of the C tiles (swizzle) and the L2 model that follows it

def _tiny_matmul(swizzle=None):
    """64^3 fp16 in 16x16 C tiles (4 x 4 tiles, K in 4 tiles) on one core: tile t runs in wave t."""
    a = ks.placeholder((64, 64), "float16", name="a")
    b = ks.placeholder((64, 64), "float16", name="b")
    s = ks.create_schedule(ks.matmul(a, b))
    st = s[s.kernels[0].name].split("m", 16).split("n", 16).split("k", 16).parallel(cores=1)
    st.l1_c_steps(1, 1)  # one C tile per walk step: the order alone decides the reuse distances
    if swizzle:
        st.swizzle(*swizzle)
    return ks.lower(s, "ascend910b2")


def test_row_major_and_swizzled_reuse_distances_computed_by_hand():
    # A and B panels are 16 x 64 x 2 B = 2048 B, C tiles 16 x 16 x 2 B = 512 B (written through L2).
    # The distance of a re-read in wave r of a panel last read in wave q is the distinct bytes of
    # waves q+1..r: the panels read there (itself included) and 512 B of C per wave.
    l2 = 12288
    tiny = PROF.with_overrides(l2_bytes=l2)

    def hit(d: int) -> float:
        return hit_probability(d, l2)

    # row-major: A re-read by the next tile of its row: itself, the next B panel, one C tile
    # = 4608; B re-read four tiles later: all 4 B panels + 2 A panels + 4 C tiles = 14336, or
    # 1 A panel when it was the row's last column (12288); each panel's first read is cold
    row = (12 * hit(4608) + 9 * hit(14336) + 3 * hit(12288)) / 32
    # swizzle(2, "m"): (0,0) (1,0) (0,1) (1,1) ... (1,3), then rows 2-3 from column 3 back to 0.
    # A: re-read two tiles later, 9216 (A0: 2 A + 2 B + 2 C) or 7168 (A1: 2 A + 1 B + 2 C);
    # B: re-read by the next tile (4608) except B2, B1, B0 of the second group: 14848, 18944, 23040
    swizzled = (6 * hit(9216) + 6 * hit(7168) + 9 * hit(4608) + hit(14848) + hit(18944) + hit(23040)) / 32
    reads = 32 * 2048  # 16 tiles x (A panel + B panel)
    got = {}
    for name, prog in (("row", _tiny_matmul()), ("swizzled", _tiny_matmul((2, "m")))):
        res = simulate(prog, profile=tiny)
        assert res.traffic["GM->L1"] == reads
        got[name] = res.metrics
    assert got["row"]["l2_hit_ratio"] == pytest.approx(row)  # 0.522
    assert got["swizzled"]["l2_hit_ratio"] == pytest.approx(swizzled)  # 0.641
    assert got["row"]["hbm_read_bytes"] == pytest.approx(reads * (1 - row), abs=1)
    assert got["swizzled"]["hbm_read_bytes"] == pytest.approx(reads * (1 - swizzled), abs=1)
    assert swizzled > row + 0.1


def _matmul_2048(order=None, target="ascend910b2"):
    a = ks.placeholder((2048, 2048), "float16", name="a")
    b = ks.placeholder((2048, 2048), "float16", name="b")
    s = ks.create_schedule(ks.matmul(a, b))
    st = s[s.kernels[0].name].split("m", 128).split("n", 128).split("k", 64)
    if order == "rows":
        st.reorder("m", "n")
    elif order:
        st.swizzle(*order)
    return ks.lower(s, target)


def test_swizzle_beats_row_major_when_b_exceeds_l2():
    small = PROF.with_overrides(l2_bytes=4 * 2**20)  # B is 8 MiB
    row = simulate(_matmul_2048("rows"), profile=small)
    swz = simulate(_matmul_2048((4, "m")), profile=small)
    assert swz.metrics["l2_hit_ratio"] > row.metrics["l2_hit_ratio"] + 0.1
    assert swz.metrics["hbm_read_bytes"] < 0.7 * row.metrics["hbm_read_bytes"]
    assert swz.time_us < row.time_us
    # the same tiles and reads: only the order differs
    assert swz.traffic["GM->L1"] == row.traffic["GM->L1"]


@pytest.mark.parametrize("order", ["rows", (4, "m"), (2, "n")])
def test_hit_ratio_never_falls_as_l2_grows_whatever_the_order(order):
    prog = _matmul_2048(order)
    ratios = [simulate(prog, profile=PROF.with_overrides(l2_bytes=mb * 2**20)).metrics["l2_hit_ratio"]
              for mb in (1, 2, 4, 8, 16, 32, 64)]
    assert ratios == sorted(ratios)
    assert ratios[0] < 0.2 and ratios[-1] == pytest.approx(1 - 1 / 16)  # 16 C tiles per panel, first read cold


def test_auto_schedule_swizzles_only_where_the_model_says_it_pays():
    small = PROF.with_overrides(l2_bytes=4 * 2**20)
    prog = _matmul_2048(target=small)
    note = next(n for n in prog.kernels[0].notes if n.startswith("auto swizzle("))
    assert "exceed L2 (4 MiB)" in note
    row = simulate(_matmul_2048("rows", target=small))
    assert simulate(prog).metrics["hbm_read_bytes"] < 0.7 * row.metrics["hbm_read_bytes"]
    # operands well inside L2 (the real 192 MB): every order hits, the default order stays
    assert not any("swizzle" in n for n in _matmul_2048().kernels[0].notes)


def test_long_walks_share_steps_and_stay_close_to_the_exact_stack(monkeypatch):
    from kernelstudio.tileir import l2_walk
    from kernelstudio.tileir.expr import Const, E, Var
    from kernelstudio.tileir.hints import Panel, TileWalk
    from kernelstudio.tileir.program import Let

    # 40 x 60 tiles on one core: 2400 waves, more than MAX_STEPS (512), so 5 waves share a step
    t = Var("t")
    walk = TileWalk(2400, (Let("mi", E.div(t, 60)), Let("ni", E.mod(t, 60))),
                    (Panel("a", Var("mi"), Const(1000)), Panel("b", Var("ni"), Const(1000))))
    sizes = (20_000, 50_000, 70_000, 200_000)
    coarse = [l2_walk.walk_hit_ratios(walk, 1, 100.0, s, {}) for s in sizes]
    monkeypatch.setattr(l2_walk, "MAX_STEPS", 4096)
    l2_walk.panel_reads.cache_clear()
    exact = [l2_walk.walk_hit_ratios(walk, 1, 100.0, s, {}) for s in sizes]
    l2_walk.panel_reads.cache_clear()
    # exact: A re-read by the next tile (d = 1000 + 1000 + 100) always hits; B re-read a row later:
    # 60 B panels + 2 A panels + 60 tiles x 100 B of output = 68000 (67000 from a row's last column)
    assert exact[0]["a"] == pytest.approx(1 - 40 / 2400)
    assert exact[0]["b"] == pytest.approx(0.0)
    assert exact[-1]["b"] == pytest.approx(1 - 60 / 2400)
    for c, e in zip(coarse, exact, strict=True):
        assert c["a"] == pytest.approx(e["a"], abs=0.01)
        assert c["b"] == pytest.approx(e["b"], abs=0.05)
    assert [c["b"] for c in coarse] == sorted(c["b"] for c in coarse)
