"""The Timeline tab: fitted x range, folded identical cores, barrier waits from each core's arrival, the
unfused plan on its own axis, the legend, the idle table and its rows marking lanes, zoom reset and pin."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.notebook import views as V
from kernelstudio.notebook.render.timeline import _LANE_PX
from kernelstudio.notebook.views.style import HIGHLIGHT, LANE_COLORS, PONG, shade
from kernelstudio.notebook.views.timeline import TITLE_NAMES
from kernelstudio.plan.build import build
from kernelstudio.sim.program import SYNC_TEXT
from kernelstudio.sim.results import LANES, EventTable
from tests.notebook.cells import MLA_CELL, studio_of
from tests.reference_kernels import mla_prolog_lite


def _mla_02(sync_all: bool):
    """Notebook 02's design (256x1024x1024), its row-block plan or the sync_all plan."""
    x = ks.placeholder((256, 1024), "float16", name="x")
    w = ks.placeholder((1024, 1024), "float16", name="w")
    b = ks.placeholder((1024,), "float16", name="bias")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5) + b, name="out")
    s = ks.create_schedule(out, fuse=True)
    s[out].split("m", 16)
    s[out].split("n", 256)
    s[out].split("k", 64)
    s[out].double_buffer(True)
    if sync_all:
        s[out].sync_all(True)
    return ks.build(out, "ascend910b2", schedule=s, compare=False)


@pytest.fixture(scope="module")
def tour():
    return ks.build(mla_prolog_lite(), "ascend910b2")  # the tour's plan: one SyncAll, no cross-core flags


@pytest.fixture(scope="module")
def rows_plan():
    return _mla_02(sync_all=False)


@pytest.fixture(scope="module")
def sync_plan():
    return _mla_02(sync_all=True)


def _events_of(sim, label: str) -> np.ndarray:
    """(pipe, start, duration) of every event of one core, sorted: what 'the same work' compares."""
    c = sim.events.columns
    m = c["core"] == sim.events.core_labels.index(label)
    rows = np.stack((c["pipe"][m].astype(float), c["start_us"][m], c["end_us"][m] - c["start_us"][m]), axis=1)
    return rows[np.lexsort((rows[:, 1], rows[:, 0]))]


def _fake_sim(shift_us: float):
    """Three vector cores with two instructions each; core2's second one starts `shift_us` later."""
    labels = ("core0.veccore0", "core1.veccore0", "core2.veccore0")
    core = np.array([0, 0, 1, 1, 2, 2])
    start = np.array([0.0, 0.5, 0.0, 0.5, 0.0, 0.5 + shift_us])
    end = start + 0.25
    n = len(core)
    cols = {"start_us": start, "end_us": end, "core": core, "pipe": np.zeros(n, dtype=np.int64),
            "instr": np.zeros(n, dtype=np.int64), "kernel": np.zeros(n, dtype=np.int64),
            "tile": np.zeros(n, dtype=np.int64), "inner": np.zeros(n, dtype=np.int64),
            "bytes": np.zeros(n, dtype=np.int64), "flops": np.zeros(n, dtype=np.int64),
            "slot": np.full(n, -1), "why": np.full(n, -1)}
    ev = EventTable(cols, labels, ("V",), ("vadd",), ("k",))
    return SimpleNamespace(events=ev, time_us=1.0, kernels=({"name": "k", "start_us": 0.0, "end_us": 1.0},))


# --- data ---------------------------------------------------------------------------------------------
def test_the_default_range_fits_the_kernel_and_leaves_the_launch_out(tour):
    tl = V.timeline_data(tour.sim)
    (k,) = tour.sim.kernels
    lo, hi = tl["range"]["kernel"]
    assert k["start_us"] - 0.05 * k["time_us"] < lo < k["start_us"] <= 5.0 < k["end_us"] < hi
    assert hi < k["end_us"] + 0.05 * k["time_us"]
    assert tl["range"]["full"][0] == 0.0 and tl["range"]["full"][1] >= tour.sim.time_us
    assert [lane["label"] for lane in tl["lanes"] if lane["host"]] == ["host LAUNCH"]


@pytest.mark.parametrize("which", ["rows_plan", "sync_plan"])
def test_the_axis_covers_every_cores_work(which, request):
    # notebook 02's row-block plan: the axis used to stop at the first two cores' end
    sim = request.getfixturevalue(which).sim
    tl = V.timeline_data(sim)
    assert tl["range"]["kernel"][1] >= float(sim.events.columns["end_us"].max())
    with_events = {sim.events.core_labels[i] for i in np.unique(sim.events.columns["core"])}
    assert {m for g in tl["groups"] for m in g["members"]} == with_events


def test_identical_cores_fold_into_one_group_with_a_count(tour):
    groups = V.core_groups(tour.sim)
    assert [(g["label"], g["count"]) for g in groups] == [
        ("host", 1), ("core0-15 cubecore0 x16", 16), ("core0-15 veccore0-1 x32", 32)]
    for g in groups:
        first = _events_of(tour.sim, g["members"][0])
        for m in g["members"][1:]:
            other = _events_of(tour.sim, m)
            assert other.shape == first.shape and np.abs(other - first).max() <= V.timeline.TOL_US
    folded = V.timeline_data(tour.sim)
    full = V.timeline_data(tour.sim, expand=True)
    per_core = {g["label"]: len(g["lanes"]) for g in folded["groups"]}
    assert len(full["lanes"]) == sum(per_core[g["label"]] * g["count"] for g in folded["groups"])
    assert folded["groups"][1]["lanes"] and not folded["groups"][1]["expanded"]


def test_a_core_with_other_work_keeps_its_own_group(sync_plan):
    groups = [g for g in V.core_groups(sync_plan.sim) if g["kind"] != "host"]
    labels = [g["label"] for g in groups]
    # 24 cube cores: 16 with two C tiles, 8 with one; the vector rows run out on core21
    assert "core0-15 cubecore0 x16" in labels and "core16-23 cubecore0 x8" in labels
    assert "core21.veccore0" in labels
    assert sum(g["count"] for g in groups) == 72
    # no two groups of one kind hold the same work
    reps = [(g["kind"], _events_of(sync_plan.sim, g["members"][0])) for g in groups]
    for i, (ka, a) in enumerate(reps):
        for kb, b in reps[i + 1:]:
            assert ka != kb or a.shape != b.shape or np.abs(a - b).max() > V.timeline.TOL_US


def test_cores_fold_within_the_tolerance_only():
    near, far = _fake_sim(0.0004), _fake_sim(0.004)  # 0.4 ns and 4 ns later
    assert [g["count"] for g in V.core_groups(near)] == [3]
    assert [g["count"] for g in V.core_groups(far)] == [2, 1]
    assert [g["count"] for g in V.core_groups(far, tol_us=0.01)] == [3]
    assert V.core_groups(far)[0]["label"] == "core0-1 veccore0 x2"


def test_group_labels_name_exactly_their_cores():
    label = V.timeline.group_label
    assert label(["core21.veccore1", "core22.veccore0", "core22.veccore1", "core23.veccore0",
                  "core23.veccore1"]) == "core21 veccore1, core22-23 veccore0-1 x5"
    assert label(["core0.cubecore0", "core2.cubecore0", "core3.cubecore0"]) == "core0,2-3 cubecore0 x3"


def test_the_barrier_wait_starts_at_each_cores_arrival(tour):
    sim = tour.sim
    tl = V.timeline_data(sim, expand=True)
    c = sim.events.columns
    names = [LANES.get(p, p) for p in sim.events.pipes]
    work = np.array([p not in ("SCALAR", "FLOWCTRL", "LAUNCH") for p in names])[c["pipe"]]
    b = tl["bars"]
    waits = [i for i, w in enumerate(b["wait"]) if w]
    assert len(waits) == 48  # one SyncAll per core
    later = 0
    for i in waits:
        core = tl["lanes"][b["lane"][i]]["core"]
        mine = c["core"] == sim.events.core_labels.index(core)
        arrived = float(c["end_us"][mine & work & (c["end_us"] <= b["end"][i] + 1e-9)].max())
        reached = float(c["start_us"][mine & (c["pipe"] == names.index("FLOWCTRL"))][0])
        assert b["start"][i] == pytest.approx(max(arrived, reached), abs=1e-12)
        later += b["start"][i] > reached + 1e-6
        assert SYNC_TEXT in b["text"][i] and "arrived" in b["text"][i]
    # the cube cores reach the barrier (scalar) at once but arrive after their last FixPipe write
    assert later == 48


def test_the_title_names_arrows_only_when_there_are_arrows(tour, rows_plan):
    tl = V.timeline_data(tour.sim)
    assert not tl["arrows"] and "arrow" not in tl["title"] and not tl["legend"]["arrows"]
    flags = V.timeline_data(rows_plan.sim)
    assert flags["arrows"] and f"red arrows: {len(flags['arrows'])} cross-core flag" in flags["title"]
    assert flags["legend"]["arrows"]
    assert "48 cores in 2 lane groups (identical cores folded)" in tl["title"]


def test_the_legend_is_the_style_of_the_bars(tour):
    tl = V.timeline_data(tour.sim)
    b = tl["bars"]
    legend = {p["pipe"]: p for p in tl["legend"]["pipes"]}
    assert set(legend) == set(b["pipe"])
    for p, entry in legend.items():
        assert entry["color"] == LANE_COLORS[p]
        colors = {col for q, col in zip(b["pipe"], b["color"], strict=True) if q == p}
        assert colors <= {LANE_COLORS[p], shade(LANE_COLORS[p], PONG)}
        assert (entry["pong"] is not None) == (shade(LANE_COLORS[p], PONG) in colors)
    assert legend["MTE2"]["pong"] == shade(LANE_COLORS["MTE2"], PONG)  # double-buffered loads
    assert tl["legend"]["waits"]


def test_the_unfused_plan_has_one_lane_per_kernel_with_its_launch_gap(tour):
    un = V.timeline_data(tour.sim, unfused=tour.unfused_sim)["unfused"]
    kernels = tour.unfused_sim.kernels
    assert [lane["kernel"] for lane in un["lanes"]] == [k["name"] for k in kernels]
    for i, k in enumerate(kernels):
        mine = [x for x in un["bars"] if x["lane"] == i]
        assert [x["kind"] for x in mine] == ["launch", "kernel"]
        assert mine[0]["end"] == pytest.approx(k["start_us"]) and mine[1]["end"] == k["end_us"]
    assert un["range"][1] >= tour.unfused_sim.time_us
    assert f"{len(kernels)} kernels" in un["title"] and "own time axis" in un["title"]


def test_a_plan_of_many_kernels_is_counted_in_the_titles_not_named():
    """20 kernel names do not fit a 500 px figure's title line: the titles count them (MoE block, 20 kernels)."""
    d = build(ks.ops.moe(tokens=64, hidden=256, intermediate=128, experts=8, top_k=2), "ascend910b2")
    tl = V.timeline_data(d.sim, unfused=d.unfused_sim)
    n = len(d.sim.kernels)
    assert n > TITLE_NAMES and tl["title"].startswith(f"fused plan of {n} kernels: ")
    assert d.sim.kernels[1]["name"] not in tl["title"]
    assert len(tl["title"]) <= 80 and len(tl["unfused"]["title"]) <= 80, (tl["title"], tl["unfused"]["title"])


def test_the_idle_table_has_one_row_per_group_and_pipe_and_no_zero_causes(tour, sync_plan):
    for d in (tour, sync_plan):
        tl = V.timeline_data(d.sim)
        rows = V.idle_table(d.sim, tl["groups"])
        assert len({(r["group"], r["pipe"]) for r in rows}) == len(rows)
        assert all(round(c["pct"]) >= 1 for r in rows for c in r["causes"])
        assert [r["group"] for r in rows] == sorted(r["group"] for r in rows)
        # every member of a group idles as its drawn core does: exactly (identical work), or within the share
        # that makes cores alike
        full = {(r["core"], r["pipe"]): r["idle_pct"] for r in V.idle_breakdown(d.sim, cores=None)}
        for r in rows:
            g = tl["groups"][r["group"]]
            assert r["core"] == g["drawn"]
            for m in g["members"]:
                assert full[(m, r["pipe"])] == pytest.approx(r["idle_pct"], abs=0.1 if g["exact"] else 100 * V.ALIKE)
    tour_rows = V.idle_table(tour.sim, V.timeline_data(tour.sim)["groups"])
    assert len(tour_rows) <= 8  # one screen
    assert not any("scalar to issue" in c["what"] for r in tour_rows for c in r["causes"])


def test_the_summary_does_not_call_a_barrier_wait_the_busiest_pipe(sync_plan):
    line = next(x for x in sync_plan.sim.summary().splitlines() if x.lstrip().startswith("pipes"))
    work, _, waits = line.partition("; waiting (not work): ")
    assert "FLOWCTRL" not in work and waits.startswith("FLOWCTRL")
    assert work.split()[1] in ("MTE2", "MTE1", "CUBE", "VECTOR", "MTE3", "FIXP")


# --- the widget ---------------------------------------------------------------------------------------
def _view(design):
    from kernelstudio.notebook.timeline_view import TimelineView

    view = TimelineView()
    view.update(V.studio_data(design, passes=False), sim=design.sim, unfused=design.unfused_sim)
    return view


def _ticks(fig) -> list[str]:
    return list(fig.layout.yaxis.ticktext)


def test_the_figure_fits_the_kernel_has_no_width_and_two_titled_axes(tour):
    view = _view(tour)
    fig, tl = view.figure, view.tl
    assert list(fig.layout.xaxis.range) == tl["range"]["kernel"]
    assert list(fig.layout.xaxis2.range) == tl["unfused"]["range"]
    assert fig.layout.width is None
    assert not any("LAUNCH" in t for t in _ticks(fig))
    assert len(fig.layout.yaxis2.ticktext) == len(tour.unfused_sim.kernels)
    assert any("unfused plan" in a.text for a in fig.layout.annotations)
    assert view.title.value.count("fused out") == 1 and not fig.layout.title.text  # above it: the modebar's room
    assert "MTE2" in view.legend.value and LANE_COLORS["MTE2"] in view.legend.value
    assert shade(LANE_COLORS["MTE2"], PONG) in view.legend.value
    assert {s for s in fig.data[0].marker.pattern.shape} == {"", "/"}  # waits hatched


def test_show_launch_and_zoom_to_kernel(tour):
    view = _view(tour)
    fig = view.figure
    view.show_launch.value = True
    assert list(fig.layout.xaxis.range) == view.tl["range"]["full"]
    assert any("LAUNCH" in t for t in _ticks(fig))
    fig.layout.xaxis.range = [6.0, 6.5]  # a user's zoom
    view.zoom_kernel.click()
    assert not view.show_launch.value and list(fig.layout.xaxis.range) == view.tl["range"]["kernel"]


def test_expanding_a_group_draws_its_cores_and_grows_the_figure(tour):
    view = _view(tour)
    fig = view.figure
    h, n = fig.layout.height, len(_ticks(fig))
    cube = next(b for b in view.groups_box.children[1:] if b.description.startswith("core0-15 cubecore0"))
    cube.value = True
    assert len(_ticks(fig)) == n + 15 * 6
    assert fig.layout.height - h == 15 * 6 * _LANE_PX  # the height follows the lanes drawn
    assert sum("core15.cubecore0" in t for t in _ticks(fig)) == 1
    cube.value = False
    assert len(_ticks(fig)) == n and fig.layout.height == h


def test_clicking_an_idle_row_marks_its_lanes(tour):
    view = _view(tour)
    fig = view.figure
    row = next(i for i, r in enumerate(view.idle) if r["pipe"] == "VECTOR")
    bands = lambda: [s for s in fig.layout.shapes if s.fillcolor == HIGHLIGHT]  # noqa: E731
    assert not bands()
    view.rows[row].click()
    [band] = bands()
    tick = _ticks(fig)[round((band.y0 + band.y1) / 2)]
    assert tick.endswith("VECTOR")
    lane = view.tl["lanes"][view.highlight_lanes()[0]]
    assert lane["pipe"] == "VECTOR" and lane["group"] == view.idle[row]["group"]
    assert view.rows[row].style.button_color is not None
    view.rows[row].click()  # again: cleared
    assert not bands() and view.rows[row].style.button_color is None


def test_a_knob_move_resets_the_zoom_unless_pinned(shell):
    from IPython.utils.capture import capture_output

    with capture_output():
        shell.run_cell(f"%%ascend_kernel mla --target ascend910b2\n{MLA_CELL}")
    st = studio_of(shell, "mla")
    view, fig = st.timeline_view, st.timeline
    assert view in st.tabs.children
    fig.layout.xaxis.range = [5.5, 5.6]
    st.set_knobs(tile_m=32)
    assert list(fig.layout.xaxis.range) == view.tl["range"]["kernel"] != [5.5, 5.6]
    view.pin_zoom.value = True
    fig.layout.xaxis.range = [5.5, 5.6]
    st.set_knobs(tile_m=16)
    assert list(fig.layout.xaxis.range) == [5.5, 5.6]
