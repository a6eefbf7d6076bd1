"""An MoE block in the Studio: the per-core load of its grouped matmuls in the Timeline tab and the cost of
imbalance (time vs the balanced block) in the cards; other designs show neither."""

from __future__ import annotations

import re

import pytest

import kernelstudio as ks
from kernelstudio.notebook import render as R
from kernelstudio.notebook import views as V
from kernelstudio.notebook.timeline_view import TimelineView
from kernelstudio.ops.moe_report import core_loads
from kernelstudio.plan.build import build
from tests.reference_kernels import mla_prolog_lite

_SIZE = {"tokens": 64, "hidden": 256, "intermediate": 128, "experts": 8, "top_k": 2}


@pytest.fixture(scope="module")
def one_hot():
    return build(ks.ops.moe(**_SIZE, imbalance="one_hot"), "ascend910b2")


@pytest.fixture(scope="module")
def uniform():
    return build(ks.ops.moe(**_SIZE, imbalance="uniform"), "ascend910b2", compare=False)


def test_the_load_is_the_reports_and_the_cost_is_against_the_balanced_block(one_hot, uniform):
    m = V.moe_data(one_hot)
    assert m["imbalance"] == "one_hot" and m["plan_sizes"][0] > m["plan_sizes"][1]
    assert m["balanced_us"] == pytest.approx(uniform.sim.time_us)
    assert m["cost"] == pytest.approx(one_hot.sim.time_us / uniform.sim.time_us)
    loads = core_loads(one_hot.program, one_hot.sim)
    assert [ld["stage"] for ld in m["loads"]] == [ld.stage for ld in loads] == ["gate_up", "down"]
    for mine, ref in zip(m["loads"], loads, strict=True):
        assert [c["busy_us"] for c in mine["cores"]] == list(ref.busy_us)
        assert [c["finish_us"] for c in mine["cores"]] == list(ref.finish_us)
        assert mine["cores"][0]["core"] == "core0.cubecore0" and len(mine["cores"]) == 24
        assert mine["cores"][mine["last"]]["finish_us"] == max(ref.finish_us)
        assert mine["idle_pct"] == ref.idle_pct
    assert V.moe_data(uniform)["cost"] == 1.0  # balanced already: its own time, nothing built


def test_find_moe_config_is_the_blocks_config_and_none_for_other_tensors():
    from kernelstudio.core.errors import InputError
    from kernelstudio.ops.moe import find_moe_config, moe_config

    out = ks.ops.moe(**_SIZE, imbalance="zipf")
    assert find_moe_config(out) is moe_config(out) and find_moe_config(out.node) is moe_config(out)
    assert find_moe_config(out).imbalance == "zipf"
    x = ks.placeholder((64, 256), "float16", name="x")
    assert find_moe_config(x) is None  # no error: the Studio asks this of every design
    with pytest.raises(InputError, match="is not the output of ks.ops.moe"):
        moe_config(x)


def test_other_designs_show_no_load_and_no_imbalance_card():
    d = ks.build(mla_prolog_lite(), "ascend910b2", compare=False)
    data = V.studio_data(d, passes=False)
    assert data["moe"] is None and "moe" not in data["cards"] and "imbalance" not in R.cards_html(data["cards"])
    view = TimelineView()
    view.update(data, sim=d.sim)
    assert view.load.value == ""


def test_the_timeline_tab_draws_a_column_per_cube_core_and_the_cards_the_cost(one_hot):
    data = V.studio_data(one_hot, passes=False)
    view = TimelineView()
    view.update(data, sim=one_hot.sim, unfused=one_hot.unfused_sim)
    html = view.load.value
    assert html.count('class="ks-load-row"') == 2 and html.count('class="ks-load-core"') == 2 * 24
    assert html.count("outline:1px solid") == 2  # each kernel's last core marked
    for ld in data["moe"]["loads"]:
        assert f"{ld['idle_pct']:.0f} %</b> of core time idle" in html
        last = ld["cores"][ld["last"]]
        assert f"last {last['core']} done at {last['finish_us']:,.2f} of {ld['span_us']:,.2f} us" in html
    heights = [float(h) for h in re.findall(r"height:([\d.]+)%", html)]
    assert heights and all(0.0 <= h <= 100.0 for h in heights)
    cards = R.cards_html(data["cards"])
    m = data["moe"]
    assert f"{m['cost']:.2f}x" in cards
    assert f"imbalance cost ({m['time_us']:,.1f} vs {m['balanced_us']:,.1f} us balanced)" in cards
