"""The two layers a Studio session puts on top of its cell: hardware overrides (a what-if on the target's
profile) and extra schedule directives (applied advice). Both persist across rebuilds until changed, and a bad
one raises and leaves the session's last good design in place."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.core.errors import CapacityError, KernelStudioError, ScheduleError, TargetError
from kernelstudio.notebook.session import StudioSession
from kernelstudio.schedule.schedule import Directive

from .cells import MLA_CELL


def _session() -> StudioSession:
    ses = StudioSession("mla", MLA_CELL)
    ses.rebuild()
    return ses


def test_overrides_build_on_the_changed_profile_and_persist():
    ses = _session()
    base = ses.design.sim.time_us
    slow = ks.hw.get("ascend910b2").hbm_bytes_per_s / 8
    d = ses.rebuild(overrides={"hbm_bytes_per_s": slow})
    assert d.program.profile.hbm_bytes_per_s == slow
    assert d.program.profile.source("hbm_bytes_per_s") == "user"
    assert d.sim.time_us > base
    assert ses.overrides == {"hbm_bytes_per_s": slow}
    again = ses.rebuild({"tile_m": 32})  # a knob move keeps the what-if
    assert again.program.profile.hbm_bytes_per_s == slow
    plain = StudioSession("plain", MLA_CELL).rebuild({"tile_m": 32}).sim.time_us
    assert ses.rebuild({"tile_m": 32}, overrides={}).sim.time_us == pytest.approx(plain, rel=0, abs=1e-9)
    assert ses.profile() is ks.hw.get("ascend910b2")


def test_the_unfused_baseline_follows_the_overrides():
    ses = _session()
    fast = ses.design.unfused_sim.time_us
    d = ses.rebuild(overrides={"launch_overhead_us": 50.0})
    assert d.unfused_sim.time_us > fast + 50.0  # several kernels, each launched after a 50 us gap


def test_a_smaller_ub_costs_time_and_one_too_small_is_refused():
    ses = _session()
    good = ses.design
    smaller = ses.build(overrides={"ub_bytes": 8192})  # the epilogue takes fewer rows per pass
    assert smaller.sim.time_us > good.sim.time_us
    with pytest.raises(CapacityError, match="UB needs"):
        ses.rebuild(overrides={"ub_bytes": 512})
    assert ses.design is good and ses.overrides == {}


def test_unknown_override_names_the_valid_fields():
    ses = _session()
    with pytest.raises(TargetError, match="valid fields"):
        ses.rebuild(overrides={"ub_size": 1})
    assert ses.overrides == {}


def test_directives_are_replayed_on_the_cells_schedule():
    ses = _session()
    kname = ses.design.schedule.kernels[0].name
    d0 = ses.rebuild({"double_buffer": False})
    extra = (Directive("double_buffer", kname, None, True),)
    d1 = ses.rebuild({"double_buffer": False}, directives=extra)
    assert d1.schedule.directives[-1] == extra[0]
    assert d1.knobs["double_buffer"] is False  # the knob is unchanged: the directive sits on top
    assert d1.sim.time_us != d0.sim.time_us
    assert ses.directives == extra
    assert ses.rebuild({"double_buffer": False, "tile_m": 32}).schedule.directives[-1] == extra[0]
    assert ses.rebuild({"double_buffer": False}, directives=()).sim.time_us == d0.sim.time_us


def test_a_directive_the_schedule_refuses_keeps_the_last_good_design():
    ses = _session()
    good = ses.design
    with pytest.raises(ScheduleError):
        ses.rebuild(directives=(Directive("split", "no_such_kernel", "m", 16),))
    assert ses.design is good and ses.directives == ()


def test_a_refusal_is_a_kernelstudio_error():
    assert issubclass(CapacityError, KernelStudioError) and issubclass(TargetError, KernelStudioError)
