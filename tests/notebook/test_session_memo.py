"""A session keeps the designs it built lately: a knob moved back to values it has built is not lowered,
simulated or generated again, but every move still gets a Design of its own (its knobs, its baseline); a
different target, what-if, directive or L2 protocol is another design."""

from __future__ import annotations

import kernelstudio as ks
from kernelstudio.notebook.session import _DESIGNS_KEPT, StudioSession
from kernelstudio.schedule.schedule import Directive

from .cells import MLA_CELL


def test_values_built_before_give_a_new_design_on_the_same_program_and_simulation():
    ses = StudioSession("mla", MLA_CELL)
    first = ses.rebuild({"tile_m": 32})
    code = first.code  # generated once, then carried to the next design of the same values
    other = ses.rebuild({"tile_m": 64})
    again = ses.rebuild({"tile_m": 32})
    assert again is not first and again.program is first.program and again.sim is first.sim
    assert again.code is code and again.knobs["tile_m"] == 32 and other.knobs["tile_m"] == 64
    assert other.program is not first.program
    assert again.unfused_sim is first.unfused_sim  # the baseline does not depend on the knobs


def test_compare_off_leaves_no_baseline_on_a_remembered_design():
    ses = StudioSession("mla", MLA_CELL)
    ses.rebuild({"tile_m": 32})
    d = ses.rebuild({"tile_m": 32}, compare=False)
    assert d.unfused_sim is None and d.unfused_program is None


def test_target_what_if_directives_and_l2_each_build_anew():
    ses = StudioSession("mla", MLA_CELL)
    base = ses.rebuild()
    assert ses.rebuild(target="ascend910b4").program is not base.program
    ses.rebuild(target="ascend910b2")
    slow = ses.rebuild(overrides={"hbm_bytes_per_s": ks.hw.get("ascend910b2").hbm_bytes_per_s / 8})
    assert slow.program is not base.program and slow.sim.time_us > base.sim.time_us
    ses.rebuild(overrides={})
    warm = ses.rebuild(l2="warm")
    assert warm.sim is not base.sim and warm.sim.metrics["l2_start"] == "warm"
    ses.rebuild(l2="cold")
    single = ses.rebuild(directives=(Directive("double_buffer", "out", None, False),))
    assert single.program is not base.program
    assert ses.rebuild(directives=()).program is base.program  # back to the first design's inputs


def test_the_session_keeps_a_bounded_number():
    ses = StudioSession("mla", MLA_CELL)
    for m in (16, 32, 64):
        for n in (128, 256):
            for k in (32, 64, 128):
                ses.rebuild({"tile_m": m, "tile_n": n, "tile_k": k, "double_buffer": False})
    assert len(ses._designs) == _DESIGNS_KEPT
