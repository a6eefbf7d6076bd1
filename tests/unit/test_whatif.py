"""Hardware what-if: the field table, what_if's checks, compare_targets and what_if_sweep, and the README's
"What if the chip were different" example printing what the README shows."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import io
import math
import re
from pathlib import Path

import pytest

import kernelstudio as ks
from kernelstudio.hw.profile import SPEC_FIELDS
from kernelstudio.hw.whatif import KIB, WHATIF_FIELDS, WhatIfError, what_if, whatif_field, whatif_table
from kernelstudio.lower.pipeline import needs_other_chip
from kernelstudio.tune.whatif import DEFAULT_TARGETS, compare_targets, what_if_sweep

B2 = "ascend910b2"


def mla():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    return ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1) + b, name="out")


def mla_knobs():
    out = mla()
    s = ks.create_schedule(out)
    s[out].split("m", ks.knob("tile_m", 16, [16, 32, 64]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def mla_fixed_tiles():
    out = mla()
    s = ks.create_schedule(out)
    s[out].split("m", ks.knob("tile_m", 16, [16, 32, 64])).split("n", 256).split("k", 64).double_buffer(True)
    return s


def relu():
    return ks.relu(ks.placeholder((8, 64), "float16", name="x"))


# --- the field table ----------------------------------------------------------------------------------------

def test_the_table_names_real_profile_fields_with_the_profiles_values_and_sources():
    want = {"ub_bytes", "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "hbm_bytes_per_s", "l2_bytes",
            "aic_cores", "aiv_cores", "clock_mhz", "launch_overhead_us", "sync_all_us"}
    assert {f.name for f in WHATIF_FIELDS} == want and want <= set(SPEC_FIELDS)
    for name in ks.hw.names():
        p = ks.hw.get(name)
        for row in whatif_table(p):
            f = row["field"]
            assert row["value"] == getattr(p, f) and row["value"] in row["choices"]
            assert row["source"] == p.source(f) and row["note"] == p.note(f)
            assert row["choices"] == sorted(row["choices"]) and row["range_source"].startswith("assumed")
            assert row["lo"] <= min(row["choices"]) and max(row["choices"]) <= row["hi"]
            what_if(p, **{f: max(row["choices"])})  # every stop is accepted


def test_the_ub_slider_runs_from_64_to_512_kib_in_32_kib_steps_plus_the_profiles_own():
    row = next(r for r in whatif_table(ks.hw.get("ascend950")) if r["field"] == "ub_bytes")
    grid = [k * KIB for k in range(64, 513, 32)]
    assert sorted(set(row["choices"]) - set(grid)) == [ks.hw.get("ascend950").ub_bytes]  # 248 KiB, off the grid
    assert set(grid) <= set(row["choices"]) and row["display"] == "248 KiB"


# --- what_if ------------------------------------------------------------------------------------------------

def test_what_if_is_with_overrides_and_marks_the_changed_fields_user():
    p = what_if(B2, ub_bytes=128 * KIB, hbm_bytes_per_s=2e12)
    assert p == ks.hw.get(B2).with_overrides(ub_bytes=128 * KIB, hbm_bytes_per_s=2e12)
    assert p.source("ub_bytes") == "user" and p.source("clock_mhz") == ks.hw.get(B2).source("clock_mhz")
    assert what_if(B2) is ks.hw.get(B2) and what_if(B2, ub_bytes=ks.hw.get(B2).ub_bytes) is ks.hw.get(B2)


def test_cube_and_vector_cores_move_together():
    assert (what_if(B2, aic_cores=8).aiv_cores, what_if(B2, aiv_cores=8).aic_cores) == (16, 4)
    with pytest.raises(WhatIfError, match=r"aiv_cores=7: .* multiple of 2; try aiv_cores=6"):
        what_if(B2, aiv_cores=7)
    with pytest.raises(WhatIfError, match="aiv_cores must be 16; give only one of them"):
        what_if(B2, aic_cores=8, aiv_cores=10)


@pytest.mark.parametrize("change, words", [
    ({"ub_bytes": 16}, ["ub_bytes=16", "outside 32 B .. 64 MiB", "one 32 B block", "has 192 KiB", "leave ub_bytes"]),
    ({"ub_bytes": -32}, ["ub_bytes=-32", "outside 32 B"]),
    ({"aic_cores": 0}, ["aic_cores=0", "1 cores .. 256 cores", "at least one core", "has 24 cores"]),
    ({"ub_bytes": 1000}, ["multiple of 32 B", "try ub_bytes=992"]),
    ({"l0a_bytes": 1000}, ["multiple of 512 B", "try l0a_bytes=512"]),
    ({"clock_mhz": math.nan}, ["clock_mhz=nan", "finite number", "100 MHz .. 5,000 MHz"]),
    ({"hbm_bytes_per_s": True}, ["hbm_bytes_per_s=True", "finite number"]),
    ({"aic_cores": 2.5}, ["whole number", "aic_cores=2"]),
    ({"hccs_foo": 1}, ["'hccs_foo' is not a what-if field", "ub_bytes", "sync_all_us"]),
])
def test_an_impossible_value_names_the_field_the_value_the_range_and_a_way_out(change, words):
    with pytest.raises(WhatIfError) as e:
        what_if(B2, **change)
    assert isinstance(e.value, ks.TargetError)
    for w in words:
        assert w in str(e.value)


def test_what_if_refuses_a_non_profile_and_an_unknown_name():
    with pytest.raises(WhatIfError, match="HardwareProfile or a profile name"):
        what_if(3, ub_bytes=64 * KIB)
    with pytest.raises(ks.TargetError, match="unknown hardware target"):
        what_if("ascend999", ub_bytes=64 * KIB)
    assert whatif_field("ub_bytes").display(65536) == "64 KiB"


# --- compare_targets ----------------------------------------------------------------------------------------

def test_compare_targets_times_each_target_as_lower_and_simulate_do():
    cmp = compare_targets(mla, DEFAULT_TARGETS)
    assert [r.target for r in cmp.rows] == list(DEFAULT_TARGETS) and all(r.ok for r in cmp.rows)
    for r in cmp.rows:
        sim = ks.simulate(ks.lower(ks.create_schedule(mla(), target=r.target), r.target))
        assert r.time_us == pytest.approx(sim.time_us) and r.tflops == pytest.approx(sim.metrics["tflops"])
        assert r.efficiency == pytest.approx(sim.metrics["efficiency"]) and r.bound
        assert dict((f, v) for f, v, _ in r.headline)["aic_cores"] == ks.hw.get(r.target).aic_cores
        assert cmp.sims[r.label].time_us == r.time_us
    assert cmp.best is min(cmp.rows, key=lambda r: r.time_us)
    assert cmp.rows[2].label == "ascend950 (provisional)" and cmp.figure is None


def test_a_target_the_design_cannot_lower_on_says_why_as_the_target_list_does():
    cmp = compare_targets(mla(), ("ascend310p3", B2))
    bad, good = cmp.rows
    assert not bad.ok and good.ok and math.isnan(bad.time_us) and "ascend310p3" not in cmp.sims
    why = needs_other_chip(ks.create_schedule(mla()), ks.hw.get("ascend310p3"))
    assert bad.why == f"UnsupportedError: {why}"
    assert f"not on ascend310p3: UnsupportedError: {why}" in cmp.table()


def test_a_what_if_profile_is_a_target_of_its_own_with_user_sources():
    small = what_if(B2, ub_bytes=64 * KIB)
    cmp = compare_targets(relu, (B2, small))
    assert [r.label for r in cmp.rows] == [B2, f"{B2} (what-if: ub_bytes)"]
    assert "UB 64 KiB user" in cmp.table() and "UB 192 KiB [ini]" in cmp.table()
    assert cmp.programs[cmp.rows[1].label].profile.ub_bytes == 64 * KIB


def test_compare_targets_takes_a_schedule_and_a_config_and_refuses_bad_targets():
    s = ks.create_schedule(mla())
    assert compare_targets(s, (B2,)).rows[0].time_us == pytest.approx(ks.simulate(ks.lower(s, B2)).time_us)
    a, b = (compare_targets(mla_knobs, (B2,), config={"tile_m": m}).rows[0].time_us for m in (16, 64))
    assert a != b
    with pytest.raises(ks.TuneError, match="given twice"):
        compare_targets(relu, (B2, B2))
    with pytest.raises(ks.TuneError, match="no targets"):
        compare_targets(relu, ())
    with pytest.raises(ks.TuneError, match="profile name or a HardwareProfile"):
        compare_targets(relu, (3,))
    with pytest.raises(ks.TargetError, match="unknown hardware target"):
        compare_targets(relu, ("nochip",))
    with pytest.raises(ks.TuneError, match="design must be a build function.*got int"):
        compare_targets(42, (B2,))

    def buggy():
        return 1 / 0

    with pytest.raises(ks.TuneError, match=r"buggy\(\) raised ZeroDivisionError.*fix the build function"):
        compare_targets(buggy, (B2,))


# --- what_if_sweep ------------------------------------------------------------------------------------------

def test_a_sweep_evaluates_every_target_and_configuration_and_keeps_each_targets_best():
    sw = what_if_sweep(mla_knobs, DEFAULT_TARGETS, configs=None, executor="inline")
    assert len(sw.configs) == 6 and sw.evaluated == 18 and sw.runner == "in-process"
    for t, row in zip(sw.targets, sw.best.rows, strict=True):
        times = [o.time_us for o in sw.outcomes[t]]
        assert row.ok and row.time_us == pytest.approx(min(times))
        assert sw.best_configs[t] == sw.configs[times.index(min(times))]
    assert "3 targets x 6 configurations = 18 builds" in sw.table()


def test_a_sweep_on_an_executor_matches_inline_and_a_count_spreads_over_the_grid():
    cfgs = [{"tile_m": 16}, {"tile_m": 64, "double_buffer": False}]
    inline = what_if_sweep(mla_knobs, (B2, "ascend950"), configs=cfgs, executor="inline")
    with cf.ThreadPoolExecutor(2) as ex:
        pooled = what_if_sweep(mla_knobs, (B2, "ascend950"), configs=cfgs, executor=ex)
    assert pooled.runner == "ThreadPoolExecutor"
    assert {t: [o.time_us for o in v] for t, v in pooled.outcomes.items()} == \
        {t: [o.time_us for o in v] for t, v in inline.outcomes.items()}
    four = what_if_sweep(mla_knobs, (B2,), configs=4, executor="inline")
    assert {c["tile_m"] for c in four.configs} == {16, 32, 64} and len(four.configs) == 4


def test_a_sweep_reports_illegal_configurations_and_refuses_bad_arguments():
    small = what_if(B2, l0b_bytes=48 * KIB)  # the double-buffered 256x64 fp16 B tile needs 64 KiB
    sw = what_if_sweep(mla_fixed_tiles, (small,), configs=[{"tile_m": 64}], executor="inline")
    (out,) = next(iter(sw.outcomes.values()))
    assert not out.ok and out.kind == "CapacityError: L0B" and out.info["have"] == 48 * KIB
    assert not sw.best.rows[0].ok and sw.best.rows[0].why.startswith("no configuration lowers")
    with pytest.raises(ks.TuneError, match="configs must be"):
        what_if_sweep(mla_knobs, (B2,), configs=0, executor="inline")
    with pytest.raises(ks.TuneError, match="configs must be"):
        what_if_sweep(mla_knobs, (B2,), configs=["tile_m"], executor="inline")
    with pytest.raises(ks.TuneError, match="build_fn must be a function"):
        what_if_sweep(3, (B2,))
    with pytest.raises(ks.TuneError, match="repeat one"):
        what_if_sweep(mla_knobs, (B2, B2), configs=2, executor="inline")


# --- the README ---------------------------------------------------------------------------------------------

def test_the_readmes_what_if_example_prints_what_the_readme_shows():
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text.split("## What if the chip were different\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```\n```text\n(.*?)```\n", section, flags=re.S)
    assert len(blocks) == 1
    code, shown = blocks[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    assert out.getvalue() == shown
