"""The measurement protocol (`simulate(prog, l2="cold"|"warm")`) and the write-back L2: where a run starts
and where its writes go decide how many bytes reach HBM."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.notebook.render.strips import cards_html
from kernelstudio.notebook.views.metrics import metric_cards
from kernelstudio.sim import simulate
from kernelstudio.sim.l2 import L2Error

PROF = ks.hw.get("ascend910b2")


def _relu(rows: int, cols: int = 4096) -> ks.Program:
    x = ks.placeholder((rows, cols), "float16", name="x")
    return ks.lower(ks.create_schedule(ks.relu(x)), "ascend910b2")


@pytest.mark.parametrize("bad", ["hot", "Cold", "", None, 1, True, ["warm"]])
def test_an_unknown_protocol_is_refused_naming_both(bad):
    with pytest.raises(L2Error, match=r"cold.*warm"):
        simulate(_relu(64), l2=bad)


def test_the_result_says_which_protocol_its_times_assume():
    prog = _relu(64)
    assert simulate(prog).metrics["l2_start"] == "cold"
    assert simulate(prog, l2="warm").metrics["l2_start"] == "warm"


def test_warm_inputs_that_fit_come_from_l2_and_cold_ones_from_hbm():
    prog = _relu(2048)  # 16 MB in, 16 MB out
    cold, warm = simulate(prog), simulate(prog, l2="warm")
    assert cold.metrics["hbm_read_bytes"] == 2048 * 4096 * 2
    assert warm.metrics["hbm_read_bytes"] == 0 and warm.metrics["l2_hit_ratio"] == 1.0
    assert warm.time_us < cold.time_us


def test_warm_inputs_larger_than_l2_still_miss():
    prog = _relu(2048)
    small = PROF.with_overrides(l2_bytes=4 << 20)  # 4 MB of L2 for a 32 MB working set
    cold, warm = simulate(prog, profile=small), simulate(prog, profile=small, l2="warm")
    assert warm.metrics["hbm_read_bytes"] == cold.metrics["hbm_read_bytes"] == 2048 * 4096 * 2
    assert warm.time_us == pytest.approx(cold.time_us)


def test_outputs_that_fit_stay_in_the_write_back_l2_and_a_stream_larger_than_l2_writes_to_hbm():
    fits = simulate(_relu(2048))
    assert fits.metrics["hbm_write_bytes"] == 0
    assert fits.traffic.get("L2->HBM", 0) == 0
    small = PROF.with_overrides(l2_bytes=4 << 20)
    spills = simulate(_relu(2048), profile=small)
    assert spills.metrics["hbm_write_bytes"] == 2048 * 4096 * 2 == spills.traffic["L2->HBM"]
    assert spills.time_us > fits.time_us


def test_a_hit_ratio_override_sends_every_write_to_hbm_as_mskpp_does():
    res = simulate(_relu(2048), l2_hit_ratio=0.5)
    assert res.metrics["hbm_write_bytes"] == 2048 * 4096 * 2


def test_l2_reads_and_writes_do_not_share_one_port():
    # warm: reads and writes both at L2, on their own rates: never slower than cold's reads from HBM
    prog = _relu(1024)
    assert simulate(prog, l2="warm").time_us <= simulate(prog).time_us


def test_vector_reads_from_l2_take_the_measured_vector_core_rate():
    prog = _relu(2048)
    fast = PROF.with_overrides(aiv_l2_read_bytes_per_s=4 * PROF.aiv_l2_read_bytes_per_s)
    slow = PROF.with_overrides(aiv_l2_read_bytes_per_s=PROF.aiv_l2_read_bytes_per_s / 4)
    t = [simulate(prog, profile=p, l2="warm").time_us for p in (fast, PROF, slow)]
    assert t[0] <= t[1] < t[2]
    # a cold run reads from HBM: the vector cores' L2 rate does not enter
    assert simulate(prog, profile=slow).time_us == pytest.approx(simulate(prog).time_us, rel=0.05)


@pytest.mark.parametrize("bad", [0, -1.0])
def test_the_vector_l2_rate_must_be_positive(bad):
    with pytest.raises(ks.TargetError, match="aiv_l2_read_bytes_per_s must be (positive|a finite non-negative)"):
        PROF.with_overrides(aiv_l2_read_bytes_per_s=bad)


def test_the_studio_card_says_which_protocol_the_time_assumes():
    x = ks.placeholder((256, 1024), "float16", name="x")
    d = ks.build(ks.relu(x), target="ascend910b2")
    cards = metric_cards(d)
    assert cards["l2_start"] == "cold"
    html = cards_html(cards)
    assert "L2 cold" in html and "l2=&#x27;warm&#x27;" in html  # the hover (escaped) says how to time warm
