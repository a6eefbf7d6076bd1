"""Cost lookups against the measured msKPP curves: every measured point, shape of the curves, errors."""

from __future__ import annotations

import math

import pytest

from kernelstudio import hw
from kernelstudio.core.errors import ShapeError, UnsupportedError
from kernelstudio.hw import _calibration as cal
from kernelstudio.hw.vector_ops import (
    COMPOSITES,
    DTYPE_BYTES,
    DTYPE_TAGS,
    INSTRUCTIONS,
    REDUCTIONS,
    expand,
    reduction_levels,
)

NAMES = hw.names()
B2 = hw.get("ascend910b2")


def _check_point(model: float, raw: float) -> None:
    """The model reproduces a measured point within 1% (the measured shape is kept, no smoothing)."""
    assert model == pytest.approx(raw, rel=0.01), (raw, model)


# --- data moves ------------------------------------------------------------------------------------
def _unscaled_move_users() -> dict[str, tuple[str, str, str, bool]]:
    """curve key -> (profile, src, dst, nd2nz) of a profile that uses the curve unscaled."""
    out: dict[str, tuple[str, str, str, bool]] = {}
    for name in NAMES:
        for m in hw.get(name).move_curves:
            if m.bandwidth_scale == 1.0:
                out.setdefault(m.curve, (name, m.src, m.dst, False))
                if m.nd2nz_curve and m.nd2nz_curve != m.curve:
                    out.setdefault(m.nd2nz_curve, (name, m.src, m.dst, True))
    return out


USERS = _unscaled_move_users()
MOVE_ROWS = [(key, chip, size, gibps) for key in USERS for chip, size, gibps in cal.move_rows()[key]]


def test_every_profile_path_has_a_measured_curve_in_use() -> None:
    assert len(USERS) >= 15
    assert {"GM_TO_L1_910b1", "GM_TO_L1_TRANS_910b1", "GM_TO_UB_910b3", "L0C_TO_UB_91095"} <= set(USERS)


@pytest.mark.parametrize(("key", "chip", "size", "gibps"), MOVE_ROWS, ids=[f"{r[0]}-{r[2]}" for r in MOVE_ROWS])
def test_move_reproduces_measured_point(key: str, chip: str, size: int, gibps: float) -> None:
    """Every measured move point, at the clock of the profile that uses the curve, within 1%."""
    name, src, dst, nd2nz = USERS[key]
    p = hw.get(name)
    model = p.costs.move_cycles(src, dst, size, nd2nz=nd2nz)
    _check_point(model, cal.move_cycles_at(size, gibps, p.clock_mhz))


def test_measured_bandwidth_reproduced_on_every_profile_clock() -> None:
    """A move lasts its measured time whatever the profile's clock (910B1 runs at 1850 MHz, 910B2 at
    1800, 950 at 1650): one clock per profile turns the measured GiB/s into cycles."""
    for name, key, src, dst in [("ascend910b1", "GM_TO_L1_910b1", "GM", "L1"),
                                ("ascend910b2", "L1_TO_L0A_910b1", "L1", "L0A"),
                                ("ascend910b2", "UB_TO_UB_910b1", "UB", "UB"),
                                ("ascend910b3", "GM_TO_UB_910b3", "GM", "UB"),
                                ("ascend950", "L0C_TO_UB_91095", "L0C", "UB")]:
        p = hw.get(name)
        for _, size, gibps in cal.move_rows()[key]:
            seconds = p.costs.move_cycles(src, dst, size) / p.clock_hz
            assert size / seconds / 2**30 == pytest.approx(gibps, rel=0.01), (key, size)


def test_measuring_clock_is_the_raw_cycle_clock() -> None:
    assert cal.measuring_clock_mhz("Ascend910B1") == 1800
    assert cal.measuring_clock_mhz("Ascend910_95") == 1650
    with pytest.raises(UnsupportedError, match="Ascend910B1"):
        cal.measuring_clock_mhz("Ascend910C")
    # 1 KiB GM->L1 on 910B1: 1 MiB moved in 176977 counted cycles (raw columns of the CSV)
    per_instr = cal.measured_move_cycles("Ascend910B1", 1024, 9.932434723156117)
    assert per_instr == pytest.approx(176977 / 1024, rel=1e-4)


def test_moves_keep_their_time_and_compute_keeps_its_cycles_at_any_clock() -> None:
    slow = B2.with_overrides(clock_mhz=900)
    assert slow.costs.move_cycles("GM", "L1", 65536) == pytest.approx(B2.costs.move_cycles("GM", "L1", 65536) / 2)
    assert slow.costs.mmad_cycles(64, 64, 64) == B2.costs.mmad_cycles(64, 64, 64)
    assert slow.costs.vector_cycles("add", "float16", 4096) == B2.costs.vector_cycles("add", "float16", 4096)
    assert slow.costs.hbm_bytes_per_cycle_chip == pytest.approx(2 * B2.costs.hbm_bytes_per_cycle_chip)
    b1 = hw.get("ascend910b1")  # 1850 MHz: 2.8% more cycles than the 1800 MHz count, same time
    assert b1.costs.move_cycles("GM", "L1", 65536) == pytest.approx(
        B2.costs.move_cycles("GM", "L1", 65536) * 1850 / 1800)


def _sizes(curve_max: float) -> list[int]:
    sizes = {int(2 ** (e / 8)) for e in range(0, 8 * int(math.log2(3 * curve_max)) + 1)}
    return sorted(sizes | set(range(32, int(3 * curve_max), 2048)))


@pytest.mark.parametrize("name", NAMES)
def test_move_cycles_are_positive_and_grow_past_the_measured_sizes(name: str) -> None:
    costs = hw.get(name).costs
    for m in hw.get(name).move_curves:
        for nd2nz in {False, bool(m.nd2nz_curve)}:
            top = max(s for _, s, _ in cal.move_rows()[m.nd2nz_curve if nd2nz else m.curve])
            cyc = [costs.move_cycles(m.src, m.dst, s, nd2nz=nd2nz) for s in _sizes(top)]
            assert min(cyc) > 0
            beyond = [costs.move_cycles(m.src, m.dst, s, nd2nz=nd2nz) for s in (top, 2 * top, 3 * top)]
            assert beyond[0] < beyond[1] < beyond[2], (m.src, m.dst, nd2nz)


def test_nd2nz_curve_keeps_its_measured_peaks_at_aligned_sizes() -> None:
    """GM->L1 ND->NZ measured faster at 32 KiB and 64 KiB than at the sizes just below: kept, not
    flattened by forcing cycles to grow with size."""
    rows = {s: g for _, s, g in cal.move_rows()["GM_TO_L1_TRANS_910b1"]}
    for aligned in (32768, 65536):
        below = max(s for s in rows if s < aligned)
        assert rows[aligned] > rows[below]  # the data
        model = B2.costs.move_cycles("GM", "L1", aligned, nd2nz=True)
        assert model == pytest.approx(cal.move_cycles_at(aligned, rows[aligned], 1800), rel=1e-9)
        assert aligned / model > below / B2.costs.move_cycles("GM", "L1", below, nd2nz=True)


def test_move_interpolation_lies_between_neighbours() -> None:
    costs = B2.costs
    rows = cal.move_rows()["L1_TO_L0A_910b1"]  # measured monotone: model = data at the points
    for (_, s0, g0), (_, s1, g1) in zip(rows, rows[1:], strict=False):
        mid = costs.move_cycles("L1", "L0A", (s0 + s1) // 2)
        c0 = cal.measured_move_cycles("Ascend910B1", s0, g0)
        c1 = cal.measured_move_cycles("Ascend910B1", s1, g1)
        assert c0 * 0.999 <= mid <= c1 * 1.001
        assert mid == pytest.approx((c0 + c1) / 2, rel=0.01)  # linear in size between points


def test_move_extrapolation() -> None:
    costs = B2.costs
    top = 65536  # largest measured L1->L0A size
    per_byte = costs.move_cycles("L1", "L0A", 4 * top) - costs.move_cycles("L1", "L0A", 2 * top)
    assert 2 * top / per_byte == pytest.approx(263, rel=0.02)  # asymptotic ~437 GiB/s at 1.8 GHz
    startup = cal.move_curve("GM_TO_L1_910b1").startup
    assert 100 < startup < 172  # below the first point (1 KiB = 172.8 cycles)
    assert costs.move_cycles("GM", "L1", 32) == pytest.approx(startup, rel=0.01)
    assert costs.move_cycles("GM", "L1", 0) == 0.0


def test_derived_curves_are_scaled_measured_curves() -> None:
    b1, p310 = hw.get("ascend910b1").costs, hw.get("ascend310p3").costs
    for size in (1024, 8192, 65536):
        # the measured GiB/s x 114/64, as cycles of the 310P3's own 1060 MHz clock
        assert p310.move_cycles("UB", "GM", size) == pytest.approx(
            b1.move_cycles("UB", "GM", size) * 1060 / 1850 * 64 / 114)
        assert b1.move_cycles("L0C", "L1", size) == pytest.approx(b1.move_cycles("L0C", "GM", size) / 2)
    assert p310.move_source("UB", "GM").startswith("derived")
    assert p310.move_source("L0C", "UB").startswith("derived")
    assert "GM_TO_UB_910b3" in hw.get("ascend910b3").costs.move_source("GM", "UB")
    assert "GM_TO_UB_910b1" in hw.get("ascend910b2").costs.move_source("GM", "UB")
    assert "GM_TO_L1_TRANS_910b1" in b1.move_source("GM", "L1", nd2nz=True)
    assert "91095" in hw.get("ascend950").costs.move_source("L1", "UB")


def test_nd2nz_costs_more_than_a_plain_move() -> None:
    costs = B2.costs
    for size in (4096, 32768, 131072):
        assert costs.move_cycles("GM", "L1", size, nd2nz=True) > costs.move_cycles("GM", "L1", size)


def test_move_errors_name_the_known_paths() -> None:
    costs = B2.costs
    with pytest.raises(UnsupportedError) as e:
        costs.move_cycles("GM", "L0C", 1024)
    assert "GM->L1" in str(e.value) and "UB->GM" in str(e.value)
    with pytest.raises(UnsupportedError, match="has_l0c_to_ub"):
        costs.move_cycles("L0C", "UB", 1024)
    with pytest.raises(UnsupportedError, match="L1->UB"):
        costs.move_cycles("L1", "UB", 1024)
    with pytest.raises(UnsupportedError, match="memories are"):
        costs.move_cycles("DDR", "UB", 1024)
    with pytest.raises(UnsupportedError, match="nd2nz"):
        costs.move_cycles("GM", "UB", 1024, nd2nz=True)
    with pytest.raises(ShapeError):
        costs.move_cycles("GM", "UB", -1)
    p950 = hw.get("ascend950")
    assert p950.costs.has_move("l1", "ub") and p950.costs.move_cycles("UB", "L1", 4096) > 0
    no_path = p950.with_overrides(has_l0c_to_ub=False).costs
    assert not no_path.has_move("L0C", "UB")
    with pytest.raises(UnsupportedError, match="has_l0c_to_ub"):
        no_path.move_cycles("L0C", "UB", 1024)
    assert not hw.get("ascend310p3").costs.has_move("L0C", "GM")


def test_bandwidth_shares() -> None:
    costs = B2.costs
    assert costs.hbm_bytes_per_cycle_chip == pytest.approx(1.26e12 / 1.8e9)
    assert (costs.l2_bytes_per_cycle(read=True), costs.l2_bytes_per_cycle(read=False)) == (110, 86)


# --- cube ------------------------------------------------------------------------------------------
MMAD_USERS = {"MMAD_FP16_FP16_FP32_1_core_910b1": "ascend910b2", "MMAD_FP16_FP16_FP32_1_core_91095": "ascend950"}
MMAD_ROWS = [(key, *row) for key in MMAD_USERS for row in cal.mmad_rows()[key]]


MMAD_IDS = [f"{r[0][-6:]}-{r[1]}x{r[2]}x{r[3]}" for r in MMAD_ROWS]


@pytest.mark.parametrize(("key", "m", "k", "n", "ops"), MMAD_ROWS, ids=MMAD_IDS)
def test_mmad_reproduces_measured_point(key: str, m: int, k: int, n: int, ops: float) -> None:
    model = hw.get(MMAD_USERS[key]).costs.mmad_cycles(m, k, n)
    _check_point(model, 2 * m * k * n / ops)


def test_mmad_profiles_use_their_family_curve() -> None:
    for name in ("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "ascend310p3"):
        assert hw.get(name).mmad_curve.endswith("910b1")
    assert hw.get("ascend950").mmad_curve.endswith("91095")
    assert "910b1" in B2.costs.mmad_source


def test_mmad_fractal_model_beyond_the_grid() -> None:
    costs = B2.costs
    head = costs.mmad_head_cycles
    assert head > 1.0 and head < 3.0
    big = costs.mmad_cycles(128, 256, 256)  # 8 x 16 x 16 = 2048 fractals
    assert big == pytest.approx(head + 2048)
    assert 2 * 128 * 256 * 256 / big <= 8192  # never above the 16x16x16 MAC peak
    assert costs.mmad_cycles(17, 16, 16) == costs.mmad_cycles(32, 16, 16)  # padded to whole fractals


def test_mmad_dtypes_change_fractal_depth() -> None:
    costs = B2.costs
    assert costs.mmad_cycles(64, 64, 64, "int8") == costs.mmad_cycles(64, 32, 64)
    assert costs.mmad_cycles(64, 64, 64, "float32") == costs.mmad_cycles(64, 256, 64)
    assert costs.mmad_cycles(64, 64, 64, "hfloat32") == costs.mmad_cycles(64, 128, 64)
    assert costs.mmad_cycles(64, 64, 64, "bfloat16") == costs.mmad_cycles(64, 64, 64)
    with pytest.raises(UnsupportedError, match="float16"):
        costs.mmad_cycles(16, 16, 16, "float64")
    with pytest.raises(ShapeError):
        costs.mmad_cycles(0, 16, 16)


@pytest.mark.parametrize("name", ["ascend910b2", "ascend950"])
def test_mmad_non_decreasing_in_every_dimension(name: str) -> None:
    costs = hw.get(name).costs
    dims = [1, 8, 16, 17, 32, 48, 64, 100, 128, 256, 512, 1024, 2048, 4096]
    for a in (16, 64, 256):
        for which in range(3):
            cyc = [costs.mmad_cycles(*[(d if i == which else a) for i in range(3)]) for d in dims]
            assert all(b >= x for x, b in zip(cyc, cyc[1:], strict=False))


# --- vector ----------------------------------------------------------------------------------------
def _vector_cases() -> list[tuple[str, str, str, str]]:
    """(op, dtype, instr, dtypes) for every measured curve the vocabulary reaches without fallback."""
    cases = []
    keys = cal.vector_curve_keys("Ascend910B1")
    names = {v: k for k, v in DTYPE_TAGS.items()}
    for op, instr in (*INSTRUCTIONS.items(), *REDUCTIONS.items()):
        for dtypes in keys.get(instr, ()):
            tags = dtypes.split("_")
            dtype = f"{names[tags[0]]}->{names[tags[1]]}" if op == "cast" else names[tags[0]]
            if op == "cast" or B2.costs.vector_source(op, dtype).split(": ")[-1].startswith(f"{instr} {dtypes}"):
                cases.append((op, dtype, instr, dtypes))
    return cases


VEC_CASES = _vector_cases()
VEC_ROWS = [(*c, rep, cyc) for c in VEC_CASES for rep, cyc in cal.vector_rows()[("Ascend910B1", c[2], c[3])]]


def test_vector_cases_cover_the_vocabulary() -> None:
    assert {c[0] for c in VEC_CASES} == set(INSTRUCTIONS) | set(REDUCTIONS)
    assert len(VEC_ROWS) > 800


@pytest.mark.parametrize(
    ("op", "dtype", "instr", "dtypes", "rep", "raw"), VEC_ROWS, ids=[f"{r[0]}-{r[1]}-{r[4]}" for r in VEC_ROWS]
)
def test_vector_reproduces_measured_point(op: str, dtype: str, instr: str, dtypes: str, rep: int, raw: float) -> None:
    per_rep = int(256 // DTYPE_BYTES[dtypes.split("_")[0]])
    if op in REDUCTIONS:  # rep rows of one repeat each: a single level of `rep` repeats
        model = B2.costs.vector_cycles(op, dtype, rep * per_rep, rows=rep)
    else:
        model = B2.costs.vector_cycles(op, dtype, rep * per_rep)
    _check_point(model, raw)


def test_vector_glitch_rows_are_dropped() -> None:
    kept = {r for r, _ in cal.vector_rows()[("Ascend910B1", "VMULS", "FP32_FP32_FP32")]}
    assert kept == set(range(1, 14))  # repeats 14-16 measured at ~0.1 elements/cycle
    kept = {r for r, _ in cal.vector_rows()[("Ascend910B1", "VMUL", "INT16_INT16_INT16")]}
    assert kept == {1} | set(range(6, 17))  # repeats 2-5 measured at 0.04-2.9 elements/cycle
    total = sum(len(v) for v in cal.vector_rows().values())
    assert total == 2630 - 7


@pytest.mark.parametrize("op", [*INSTRUCTIONS, *REDUCTIONS, *COMPOSITES])
def test_vector_cycles_positive_and_growing_at_large_counts(op: str) -> None:
    dtype = "float16->float32" if op == "cast" else "float32"
    counts = [1, 2, 63, 64, 65, 100, 128, 129, 500, 1000, 1024, 2048, 4096, 10_000, 65_536, 100_000]
    cyc = [B2.costs.vector_cycles(op, dtype, c) for c in counts]
    assert min(cyc) > 0
    assert cyc[-1] > cyc[-2] > cyc[-3], op  # past the measured repeats: linear growth


def test_vector_counts_whole_repeats_and_extrapolates_linearly() -> None:
    costs = B2.costs
    assert costs.vector_cycles("add", "float16", 1) == costs.vector_cycles("add", "float16", 128)
    assert costs.vector_cycles("add", "float16", 129) == costs.vector_cycles("add", "float16", 256)
    assert costs.vector_cycles("add", "float16", 0) == 0.0
    step = costs.vector_cycles("add", "float16", 128 * 1000) - costs.vector_cycles("add", "float16", 128 * 500)
    assert step / 500 == pytest.approx(2.0, rel=0.01)  # VADD fp16: 2 cycles per repeat at large counts
    mid = costs.vector_cycles("add", "float16", 128 * 4)  # between measured repeats 3 and 5
    assert costs.vector_cycles("add", "float16", 128 * 3) <= mid <= costs.vector_cycles("add", "float16", 128 * 5)


def test_bfloat16_uses_the_float16_rate() -> None:
    costs = B2.costs
    assert costs.vector_cycles("exp", "bfloat16", 4096) == costs.vector_cycles("exp", "float16", 4096)
    assert "assumed" in costs.vector_source("exp", "bfloat16")
    assert "BF16_FP32" in costs.vector_source("cast", "bfloat16->float32")


def test_cast_forms() -> None:
    costs = B2.costs
    assert costs.vector_cycles("cast", "float32", 1000, dst_dtype="float16") == costs.vector_cycles(
        "cast", "float32->float16", 1000
    )
    with pytest.raises(UnsupportedError, match="destination"):
        costs.vector_cycles("cast", "float32", 1000)
    with pytest.raises(UnsupportedError, match="float64->float16.*float16->float32"):
        costs.vector_cycles("cast", "float64->float16", 1000)
    with pytest.raises(UnsupportedError, match="only cast"):
        costs.vector_cycles("add", "float16->float32", 1000)


@pytest.mark.parametrize(("pair", "via"), [
    ("int8->float32", ("int8->float16", "float16->float32")),
    ("int8->int32", ("int8->float16", "float16->int32")),
    ("int32->float16", ("int32->float32", "float32->float16")),
    ("bfloat16->float16", ("bfloat16->float32", "float32->float16")),
])
def test_unmeasured_casts_are_timed_as_chains_of_measured_ones(pair: str, via: tuple[str, str]) -> None:
    costs = B2.costs
    for count in (1, 1000, 100_000):
        assert costs.vector_cycles("cast", pair, count) == pytest.approx(
            sum(costs.vector_cycles("cast", p, count) for p in via))
    src = costs.vector_source("cast", pair)
    assert "assumed" in src and "->".join([via[0].split("->")[0], *(p.split("->")[1] for p in via)]) in src


def test_every_cast_between_kernelstudio_dtypes_is_priced() -> None:
    from kernelstudio.ir.ops import DTYPES

    for a in DTYPES:
        for b in DTYPES:
            if a != b:
                assert B2.costs.vector_cycles("cast", f"{a}->{b}", 4096) > 0, (a, b)


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max"])
def test_int32_reductions_use_the_float32_curve(op: str) -> None:
    costs = B2.costs
    assert costs.vector_cycles(op, "int32", 4096, rows=4) == costs.vector_cycles(op, "float32", 4096, rows=4) > 0
    assert "int32 timed by the float32 curve" in costs.vector_source(op, "int32")
    with pytest.raises(UnsupportedError, match="no measured curve for dtype 'int8'"):
        costs.vector_cycles(op, "int8", 4096)


def test_reductions_are_level_sequences() -> None:
    assert reduction_levels(4096, 64) == (64, 1)
    assert reduction_levels(128 * 128 * 2, 128) == (256, 2, 1)
    assert reduction_levels(8 * 512, 64, rows=8) == (64, 8)
    assert reduction_levels(64, 64) == (1,)
    with pytest.raises(UnsupportedError):
        reduction_levels(100, 64, rows=3)
    vcadd = cal.vector_curve("Ascend910B1", "VCADD", "FP32_FP32")
    assert B2.costs.vector_cycles("reduce_sum", "float32", 4096) == pytest.approx(vcadd(64) + vcadd(1))
    vcmax = cal.vector_curve("Ascend910B1", "VCMAX", "FP16_FP16")
    assert B2.costs.vector_cycles("reduce_max", "float16", 8 * 1024, rows=8) == pytest.approx(vcmax(64) + vcmax(8))
    with pytest.raises(UnsupportedError, match="rows"):
        B2.costs.vector_cycles("add", "float16", 1024, rows=2)


@pytest.mark.parametrize("op", sorted(COMPOSITES))
def test_composite_is_the_sum_of_its_sequence(op: str) -> None:
    seq = expand(op)
    assert seq and all(i in INSTRUCTIONS for i, _ in seq)
    for dtype in ("float16", "float32"):
        want = sum(p * B2.costs.vector_cycles(i, dtype, 3000) for i, p in seq)
        assert B2.costs.vector_cycles(op, dtype, 3000) == pytest.approx(want)
    assert B2.costs.vector_source(op, "float16").startswith("assumed sequence")


def test_composite_table_entries() -> None:
    assert expand("square") == (("mul", 1),)
    assert expand("neg") == (("muls", 1),)
    assert expand("where") == (("compare", 1), ("select", 1))
    silu = dict(expand("silu"))
    assert silu["exp"] == 1 and silu["mul"] == 1
    assert dict(expand("gelu"))["div"] == 1  # through erf
    for entries in COMPOSITES.values():
        assert all(i in INSTRUCTIONS or i in COMPOSITES for i, _ in entries)


def test_vector_errors_name_the_known_ones() -> None:
    costs = B2.costs
    with pytest.raises(UnsupportedError) as e:
        costs.vector_cycles("softplus", "float16", 128)
    assert all(op in str(e.value) for op in ("add", "reduce_sum", "gelu"))
    with pytest.raises(UnsupportedError) as e:
        costs.vector_cycles("exp", "int32", 128)
    assert "float16" in str(e.value) and "float32" in str(e.value)
    with pytest.raises(UnsupportedError, match="int32"):
        costs.vector_cycles("add", "int8", 128)
    with pytest.raises(UnsupportedError):
        costs.vector_source("softplus", "float16")
    with pytest.raises(ShapeError):
        costs.vector_cycles("add", "float16", -5)


def test_memoised_results_equal_fresh_ones() -> None:
    fresh = hw.CostModel(B2)
    for args in [("GM", "L1", 40000), ("UB", "GM", 777)]:
        assert B2.costs.move_cycles(*args) == fresh.move_cycles(*args) == B2.costs.move_cycles(*args)
    assert B2.costs.vector_cycles("gelu", "float32", 999) == fresh.vector_cycles("gelu", "float32", 999)
