"""A plan of many kernels fits the Timeline tab: alike vector cores fold, only the lane groups that matter are
drawn (the rest behind "show more cores"), and the unfused plan's kernels share one lane (notebook 05's
MlaProlog at T = 128: 21 kernels, 73 cores)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.notebook import views as V
from kernelstudio.notebook.timeline_view import TimelineView
from kernelstudio.notebook.views.lanes import MAX_GROUPS
from kernelstudio.notebook.views.timeline import PLAN_LANES


@pytest.fixture(scope="module")
def prefill():
    return ks.build(ks.ops.mla_prolog(T=128, N=128), "ascend910b2")


@pytest.fixture(scope="module")
def view(prefill):
    v = TimelineView()
    v.update(V.studio_data(prefill, passes=False), sim=prefill.sim, unfused=prefill.unfused_sim)
    return v


def _finish(sim, core: str) -> np.ndarray:
    """The end of `core`'s last work in each kernel, from the kernel's start, as a share of its span."""
    c = sim.events.columns
    names = list(sim.events.kernel_names)
    work = [i for i, p in enumerate(sim.events.pipes) if p not in ("S", "FLOW", "LAUNCH")]
    mine = (c["core"] == sim.events.core_labels.index(core)) & np.isin(c["pipe"], work)
    out = []
    for k in sim.kernels:
        m = mine & (c["kernel"] == names.index(k["name"]))
        span = k["end_us"] - k["start_us"]
        out.append((c["end_us"][m].max() - k["start_us"]) / span if m.any() else 0.0)
    return np.array(out)


def test_alike_vector_cores_fold_and_say_so(prefill):
    exact = V.core_groups(prefill.sim)
    alike = V.core_groups(prefill.sim, alike=V.ALIKE)
    assert len(exact) - 1 == 51  # one group per vector core: no two run the same instructions
    assert len(alike) - 1 <= 16
    assert sum(g["count"] for g in alike) == sum(g["count"] for g in exact) == 73
    vec = [g for g in alike if g["kind"] == "veccore" and g["count"] > 1]
    assert vec and all(not g["exact"] and g["label"].endswith(f"~x{g['count']}") for g in vec)
    for g in vec:  # every member ends its work in each kernel within ALIKE of the span of where its drawn core does
        drawn = _finish(prefill.sim, g["drawn"])
        for m in g["members"]:
            assert np.abs(_finish(prefill.sim, m) - drawn).max() <= V.ALIKE + 1e-9
    assert [g["label"] for g in alike if g["kind"] == "cubecore"] == [
        "core0-11 cubecore0 x12", "core12-15 cubecore0 x4", "core16-23 cubecore0 x8"]  # identical: no "~"


def test_only_the_groups_that_set_the_time_are_drawn(prefill):
    tl = V.timeline_data(prefill.sim)
    drawn = [g for g in tl["groups"] if g["kind"] != "host" and not g["hidden"]]
    hidden = [g for g in tl["groups"] if g["hidden"]]
    assert len(drawn) == MAX_GROUPS and hidden and not any(g["lanes"] for g in hidden)
    assert tl["hidden"] == {"groups": len(hidden), "cores": sum(g["count"] for g in hidden)}
    # the core that finishes the longest kernel last is drawn
    longest = max(prefill.sim.kernels, key=lambda k: k["end_us"] - k["start_us"])
    c = prefill.sim.events.columns
    m = c["kernel"] == list(prefill.sim.events.kernel_names).index(longest["name"])
    last = prefill.sim.events.core_labels[int(c["core"][m][np.argmax(c["end_us"][m])])]
    assert any(last in g["members"] for g in drawn)
    assert tl["title"].endswith(f"lane groups (alike folded), {MAX_GROUPS} drawn") and len(tl["title"]) <= 80
    full = V.timeline_data(prefill.sim, max_groups=None)
    assert not any(g["hidden"] for g in full["groups"]) and len(full["lanes"]) > len(tl["lanes"])


def test_a_plan_of_many_kernels_draws_its_unfused_kernels_on_one_lane(prefill):
    un = V.timeline_data(prefill.sim, unfused=prefill.unfused_sim)["unfused"]
    n = len(prefill.unfused_sim.kernels)
    assert n > PLAN_LANES and len(un["lanes"]) == 1 and {b["lane"] for b in un["bars"]} == {0}
    assert [b["text"].split(" (")[0] for b in un["bars"] if b["kind"] == "kernel"] == [
        f"unfused kernel {k['name']}" for k in prefill.unfused_sim.kernels]  # the hover names each


def test_the_timeline_tab_of_a_21_kernel_plan_fits(view):
    fig = view.figure
    assert fig.layout.height <= 1000  # was 5,400 px: 259 lanes and 25 kernel lanes
    assert len(fig.layout.yaxis.ticktext) <= 48 and len(fig.layout.yaxis2.ticktext) == 1
    # the idle table (was 156 rows): the drawn groups' rows, of which the first groups' are listed
    assert len(view.all_idle) <= 4 * MAX_GROUPS and len(view.idle) <= V.IDLE_ROWS < len(view.all_idle)
    drawn = {g["label"] for g in view.tl["groups"] if not g["hidden"]}
    assert {r["label"] for r in view.all_idle} <= drawn
    first = view.tl["groups"][view.tl["rank"][0]]["label"]  # the group holding the longest kernel's last core
    assert {r["label"] for r in view.idle} >= {first}
    assert view.all_rows.layout.display is None
    n, left = len(view.all_idle), len(view.all_idle) - len(view.idle)
    assert view.all_rows.description == f"show all {n} rows ({left} more)"
    view.all_rows.value = True
    assert view.idle == view.all_idle and len(view.rows) == len(view.all_idle)
    view.all_rows.value = False
    assert len(view.rows) == len(view.idle) <= V.IDLE_ROWS
    assert view.more.layout.display is None and view.more.description == f"show {view.tl['hidden']['cores']} more cores"
    assert "alike cores folded, the busiest drawn" in view.legend.value and "5%" in view.legend.value


def test_show_more_cores_draws_every_group_and_back(view):
    fig = view.figure
    h, rows = fig.layout.height, len(view.all_idle)
    view.more.value = True
    assert fig.layout.height > h and len(view.all_idle) > rows and view.tl["hidden"] == {"groups": 0, "cores": 0}
    assert view.more.description == "fewer cores"
    view.more.value = False
    assert fig.layout.height == h and len(view.all_idle) == rows
