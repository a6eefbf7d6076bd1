"""The Studio's what-if panel on a real Studio: controls from the profile (value and source), a move rebuilds with
the overrides, a refused or no-longer-fitting value keeps the last good views, reset, and the side-by-side view."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.hw.whatif import KIB, WHATIF_FIELDS
from kernelstudio.notebook.render.compare import compare_data, comparison_figure
from kernelstudio.notebook.views import capacity_bars, timeline_data
from kernelstudio.notebook.whatif_view import WhatIfPanel
from kernelstudio.tune.whatif import compare_targets
from tests.notebook.cells import MLA_CELL, open_studio

B2 = "ascend910b2"


@pytest.fixture
def mla(shell):
    return open_studio(shell, f"mla --target {B2}", MLA_CELL)


def test_one_control_per_field_at_the_profiles_value_with_its_source_on_hover(mla):
    panel = WhatIfPanel(mla)
    p = ks.hw.get(B2)
    assert list(panel.controls) == [f.name for f in WHATIF_FIELDS]
    for name, w in panel.controls.items():
        assert w.value == getattr(p, name) and w.label.endswith("*")  # the profile's own stop is marked
        assert p.source(name) in w.tooltip and "the profile has" in w.tooltip
    assert panel.controls["ub_bytes"].label == "192*" and panel.overrides() == {}


def test_moving_a_control_rebuilds_the_studio_on_the_changed_profile(mla):
    panel = WhatIfPanel(mla)
    before = mla.session.design
    panel.controls["hbm_bytes_per_s"].value = 0.4e12
    d = mla.session.design
    assert d is not before and mla.session.overrides == {"hbm_bytes_per_s": 0.4e12}
    assert d.program.profile.hbm_bytes_per_s == 0.4e12 and d.program.profile.source("hbm_bytes_per_s") == "user"
    assert d.sim.metrics["bandwidth_pct"] > before.sim.metrics["bandwidth_pct"] and mla.error is None
    assert "hbm_bytes_per_s=0.4" in panel.status.value


def test_the_capacity_bars_measure_against_the_what_if_profile(mla):
    panel = WhatIfPanel(mla)
    panel.set(ub_bytes=96 * KIB, l0c_bytes=64 * KIB)
    bars = {b["tier"]: b for b in capacity_bars(mla.session.design.program)}
    assert bars["UB"]["capacity"] == 96 * KIB and bars["L0C"]["capacity"] == 64 * KIB
    assert "98,304" in mla.capacity.value


def test_a_design_that_no_longer_fits_shows_the_overflow_and_keeps_the_last_good_views(mla):
    panel = WhatIfPanel(mla)
    good, cards = mla.session.design, mla.cards.value
    panel.controls["l0b_bytes"].value = 48 * KIB  # the double-buffered 256x64 fp16 B tile needs 64 KiB
    assert mla.session.design is good and mla.session.overrides == {} and mla.cards.value == cards
    assert "L0B needs 65,536 B but ascend910b2 has 49,152 B" in panel.error
    assert panel.error == mla.error and "49,152" in mla.banner.value and "L0B" in mla.banner.value
    assert panel.set(l0b_bytes=64 * KIB) is not None and mla.error is None and mla.banner.value == ""


def test_a_refused_value_names_field_value_and_range_and_moves_nothing(mla):
    panel = WhatIfPanel(mla)
    good = mla.session.design
    assert panel.set(ub_bytes=16) is None
    assert "ub_bytes=16" in panel.error and "outside 32 B .. 64 MiB" in panel.error and mla.error == panel.error
    assert panel.controls["ub_bytes"].value == 192 * KIB and mla.session.design is good
    assert panel.set(nonsense=1) is None and "no control 'nonsense'" in panel.error


def test_cores_move_together_and_reset_returns_to_the_profile(mla):
    panel = WhatIfPanel(mla)
    panel.controls["aic_cores"].value = 8
    assert panel.controls["aiv_cores"].value == 16
    assert mla.session.overrides == {"aic_cores": 8, "aiv_cores": 16}
    assert mla.session.design.program.profile.aic_cores == 8
    panel.reset()
    assert mla.session.overrides == {} and panel.overrides() == {}
    assert mla.session.design.program.profile == ks.hw.get(B2)


def test_side_by_side_shows_the_table_and_one_figure_with_the_what_if_as_a_row(mla):
    panel = WhatIfPanel(mla)
    cmp = panel.compare()
    assert [r.target for r in cmp.rows] == [B2, "ascend910b4", "ascend950"] and all(r.ok for r in cmp.rows)
    assert cmp.rows[0].time_us == pytest.approx(mla.session.design.sim.time_us)
    assert all(t in panel.compare_table.value for t in ("ascend910b4", "ascend950 (provisional)", "[ini]"))
    assert panel.compare_box.children == (cmp.figure,)
    panel.set(ub_bytes=128 * KIB)
    cmp = panel.compare(figure=False)
    assert [r.label for r in cmp.rows][0] == f"{B2} (what-if: ub_bytes)" and len(cmp.rows) == 4


def test_the_figure_puts_every_targets_timeline_on_one_axis():
    def mla_design():
        x = ks.placeholder((64, 256), "float16", name="x")
        w = ks.placeholder((512, 256), "float16", name="w")
        return ks.gelu(ks.matmul(x, w, transpose_b=True))

    cmp = compare_targets(mla_design, (B2, "ascend310p3", "ascend950"))
    data = compare_data(cmp)
    assert [g["label"] for g in data["groups"]] == [r.label for r in cmp.rows]
    assert not data["groups"][1]["ok"] and "coupled chip" in data["groups"][1]["why"]
    slowest = max(s.time_us for s in cmp.sims.values())
    assert data["range"] == [0.0, pytest.approx(1.02 * slowest)]
    per = {label: len(timeline_data(s, max_per_lane=400)["bars"]["lane"]) for label, s in cmp.sims.items()}
    assert len(data["bars"]["y"]) == sum(per.values())
    fig = comparison_figure(cmp)
    assert len(fig.data) == 1 and len(fig.data[0].y) == sum(per.values())
    assert fig.layout.xaxis.range == tuple(data["range"]) and len(fig.layout.annotations) == 1
    assert "ascend310p3 is a coupled chip" in fig.layout.annotations[0].hovertext
    heads = [lane["tick"] for lane in data["lanes"] if lane["header"]]
    assert heads[1] == "<b>ascend310p3</b>  not lowered" and heads[2].endswith(f"{cmp.rows[2].time_us:,.2f} us")


def test_another_target_gives_the_controls_its_values_and_sources(mla):
    panel = WhatIfPanel(mla)
    mla.target.value = "ascend950"
    p = ks.hw.get("ascend950")
    assert mla.session.target == "ascend950" and panel.profile == p
    assert panel.controls["ub_bytes"].value == p.ub_bytes and panel.controls["ub_bytes"].label == "248*"
    assert p.source("ub_bytes") in panel.controls["ub_bytes"].tooltip
