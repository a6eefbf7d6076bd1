"""%%ascend_kernel on a ks.multi design, in an in-process shell: the multi-device Studio, its controls, live
rebuilds, the banner on a split CANN refuses, and the single-chip Studio beside it unchanged."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

import kernelstudio as ks
from kernelstudio.notebook import get_studio
from kernelstudio.notebook.multi_studio import MultiStudio
from kernelstudio.notebook.studio import Studio
from kernelstudio.notebook.views import multi as VM
from tests.notebook.cells import MLA_CELL, studio_of

TP_CELL = '''
x1 = placeholder((4096, 4096), "float16", name="x1")
x2 = placeholder((4096, 8192), "float16", name="x2")
cluster = ks.multi.Cluster(devices=knob("devices", 8, [2, 4, 8]), target="ascend910b2")
out = ks.multi.matmul_allreduce(x1, x2, cluster=cluster, tiles=knob("tiles", 1, [1, 2, 3, 4, 8, 9, 16]),
                                tail=knob("tail", "auto", ["auto", "back", "front"]),
                                engine=knob("engine", "aicpu", ["aicpu", "aiv"]),
                                algorithm=knob("algorithm", "mesh", ["mesh", "ring"]))
'''


def run(sh, line: str, body: str):
    with capture_output() as cap:
        res = sh.run_cell(f"%%ascend_kernel {line}\n{body}")
    return res, cap


@pytest.fixture
def tp(shell):
    shell.user_ns.pop("tp", None)
    res, cap = run(shell, "tp", TP_CELL)
    assert res.success, res.error_in_exec
    return shell, studio_of(shell, "tp"), cap


def _exposed_in_figure(st: MultiStudio, device: int = 0) -> float:
    tl = st.data["timeline"]
    lanes = set(tl["groups"][device]["lanes"])
    t = st.timeline.data[0]
    return sum(w for lane, w, color in zip(t.y, t.x, t.marker.color, strict=True)
               if lane in lanes and color == VM.MULTI_COLORS["exposed"])


def test_a_multi_design_cell_stores_the_design_and_shows_the_multi_studio(tp):
    sh, st, cap = tp
    d = sh.user_ns["tp"]
    assert isinstance(d, ks.multi.Mc2Design) and d.schedule.tiles == 1 and d.cluster.devices == 8
    assert isinstance(st, MultiStudio) and get_studio("tp") is st
    assert list(st._knob_widgets) == ["devices", "tiles", "tail", "engine", "algorithm"]
    assert type(st._knob_widgets["tiles"]).__name__ == "SelectionSlider"
    assert type(st._knob_widgets["engine"]).__name__ == "Dropdown"
    [out] = cap.outputs
    assert "application/vnd.jupyter.widget-view+json" in out.data
    assert "matmul_allreduce on 8 x ascend910b2" in out.data["text/plain"]
    assert "communication exposed:" in out.data["text/plain"]
    assert f"{d.time_us:,.1f} us" in st.cards.value
    assert len({lane for lane in st.timeline.data[0].y}) == 16  # 8 devices x (compute, comm)


def test_moving_the_tile_count_shrinks_the_exposed_communication_on_the_timeline(tp):
    sh, st, _ = tp
    before = sh.user_ns["tp"]
    exposed_before = _exposed_in_figure(st)
    assert exposed_before == pytest.approx(before.exposed_comm_us, abs=1e-6)
    st._knob_widgets["tiles"].value = 4
    after = sh.user_ns["tp"]
    assert after is not before and after.schedule.tiles == 4 and st.error is None
    exposed_after = _exposed_in_figure(st)
    assert exposed_after == pytest.approx(after.exposed_comm_us, abs=1e-6)
    assert exposed_after < exposed_before
    assert "tiles 1 &rarr; 4" in st.changed.value
    even = len(set(after.tile_rows)) == 1  # the header names a short tile only when there is one
    assert ("short tile" in st.header.value) == (not even) and ("short tile" in after.summary()) == (not even)
    assert f"{after.time_us:,.1f} us" in st.cards.value
    share = after.exposed_comm_us / after.time_us
    assert f"{before.exposed_comm_us / before.time_us:.1%} &rarr; {share:.1%}" in st.cards.value
    # the sweep marks this setting and the best
    assert list(st.sweep.data[4].x) == [4]
    assert list(st.sweep.data[0].x) == list(after.feasible_tiles())
    sweep = after.sweep()  # every point drawn is the model's at that count
    assert list(st.sweep.data[0].y) == [d.time_us for d in sweep]
    assert list(st.sweep.data[1].y) == [d.exposed_comm_us for d in sweep]
    assert list(st.sweep.data[3].y) == [d.compute_us for d in sweep]
    refused = [t for t in range(1, 17) if t not in after.feasible_tiles()]
    assert list(st.sweep.data[6].x) == refused and all("tiles" in h for h in st.sweep.data[6].hovertext)


def test_a_split_cann_refuses_shows_the_banner_and_keeps_the_last_good_views(tp):
    sh, st, _ = tp
    st._knob_widgets["tiles"].value = 4
    good = sh.user_ns["tp"]
    cards, bars, sweep = st.cards.value, st.timeline.data[0].base, st.sweep.data[0].y
    st._knob_widgets["tiles"].value = 9  # 4,096 rows: 8 x 512 rows already cover them
    assert st.error is not None and "do not split into 9 tiles" in st.error
    assert "tile counts that work here: 1, 2, 3, 4, 5, 6, 7, 8, 11, 16" in st.error
    assert "not applied" in st.banner.value and "9 tiles" in st.banner.value
    assert "TilingError" not in st.banner.value and "cell line" not in st.banner.value  # the library's own words
    assert sh.user_ns["tp"] is good
    assert st.cards.value == cards and st.timeline.data[0].base == bars and st.sweep.data[0].y == sweep
    st._knob_widgets["tiles"].value = 8  # allowed again: the banner clears
    assert st.error is None and st.banner.value == ""
    assert sh.user_ns["tp"].schedule.tiles == 8


def test_engine_algorithm_and_devices_rebuild_every_view(tp):
    sh, st, _ = tp
    st.set_knobs(tiles=4, engine="aiv", algorithm="ring", devices=4)
    d = sh.user_ns["tp"]
    assert (d.schedule.tiles, d.schedule.engine, d.schedule.algorithm, d.cluster.devices) == (4, "aiv", "ring", 4)
    assert len({lane for lane in st.timeline.data[0].y}) == 8  # 4 devices x 2 lanes
    assert "aiv, ring" in st.header.value
    assert st.data["sweep"]["engine"] == "aiv" and st.data["sweep"]["devices"] == 4
    assert [b.description for b in st.expand_box.children[1:]] == [f"device {i}" for i in range(4)]
    with pytest.raises(ks.KernelStudioError, match="not among its choices"):
        st.set_knobs(tiles=5)
    with pytest.raises(ks.KernelStudioError, match="no knob 'tile_m'"):
        st.set_knobs(tile_m=32)


def test_expanding_a_device_draws_its_pipes_and_folding_it_back(tp):
    _, st, _ = tp
    st.set_knobs(tiles=2)
    lanes = len(st.data["timeline"]["lanes"])
    st.expand_box.children[1].value = True  # the "device 0" toggle
    assert 0 in st.expanded
    tl = st.data["timeline"]
    assert len(tl["lanes"]) > lanes and any(lane["lane"].endswith(" CUBE") for lane in tl["lanes"])
    assert len(st.timeline.layout.yaxis.ticktext) == len(tl["lanes"])
    st.set_knobs(tiles=4)  # a move keeps the device expanded
    assert any(lane["lane"].endswith(" CUBE") for lane in st.data["timeline"]["lanes"])
    st.expand(0, False)
    assert len(st.data["timeline"]["lanes"]) == lanes


def test_the_trace_button_offers_the_chrome_trace(tp):
    _, st, _ = tp
    st.trace_button.click()
    assert 'download="tp.trace.json"' in st.trace_link.value


def test_the_single_chip_studio_is_unchanged_beside_a_multi_one(tp):
    sh, _, _ = tp
    res, _ = run(sh, "mla", MLA_CELL)
    assert res.success
    st = studio_of(sh, "mla")
    assert isinstance(st, Studio) and not isinstance(st, MultiStudio)
    assert st.l2.value == "cold" and "compare with unfused" in st.compare.description
    st._knob_widgets["tile_m"].value = 32
    assert sh.user_ns["mla"].knobs["tile_m"] == 32 and st.error is None


def test_an_error_in_a_multi_cell_is_one_line(shell):
    res, _ = run(shell, "bad", TP_CELL.replace('tiles=knob("tiles", 1,', 'tiles=knob("tiles", 9,'))
    assert not res.success
    assert "TilingError" in str(res.error_in_exec) and "do not split into 9 tiles" in str(res.error_in_exec)
    assert "bad" not in shell.user_ns


def test_tune_chooses_the_split_and_apply_best_moves_the_controls(tp, tmp_path):
    sh, st, _ = tp
    panel = st.open_tune()
    panel.budget.value = 24
    r = st.tune(executor="inline", seed=0, db=str(tmp_path / "designs.sqlite"), progress=False)
    assert r is not None and r.target == "ascend910b2"
    assert "TilingError" in st.tune_panel.text  # the counts CANN refuses are pruned, by reason
    best = r.best.config
    st.tune_panel.apply_best()
    d = sh.user_ns["tp"]
    assert {k: st.knob_values()[k] for k in best} == best
    assert d.time_us == pytest.approx(r.best.time_us)
    assert all(d.time_us <= h.time_us + 1e-9 for h in r.history if h.ok)


@pytest.mark.parametrize("op", ["all_gather_matmul", "matmul_reduce_scatter"])
def test_the_other_two_operators_open_in_the_studio_too(shell, op):
    shell.user_ns.pop("op2", None)
    body = f'''
x = placeholder((2048, 4096), "float16", name="x")
w = placeholder((4096, 4096), "float16", name="w")
out = ks.multi.{op}(x, w, cluster=ks.multi.Cluster(devices=4), tiles=knob("tiles", 1, [1, 2, 4]))
'''
    res, _ = run(shell, "op2", body)
    assert res.success, res.error_in_exec
    st = studio_of(shell, "op2")
    assert isinstance(st, MultiStudio) and shell.user_ns["op2"].kind == op
    unsplit = shell.user_ns["op2"]
    st.set_knobs(tiles=4)
    split = shell.user_ns["op2"]
    assert split.schedule.tiles == 4 and st.error is None
    assert _exposed_in_figure(st) == pytest.approx(split.exposed_comm_us, abs=1e-6)
    assert split.exposed_comm_us < unsplit.exposed_comm_us


def test_the_ascend_c_tab_shows_the_mc2_code_and_follows_the_controls(tp):
    sh, st, _ = tp
    tab = st.tabs.titles.index("Ascend C")
    assert st.files == {} and st.code_view.value == ""  # drawn when opened, not before
    st.tabs.selected_index = tab
    d = sh.user_ns["tp"]
    want = ks.multi.codegen(d).files
    assert set(st.files) == set(want) and all(st.files[p] == want[p] for p in want)
    assert list(st.file_pick.options)[:3] == ["op_kernel/matmul_all_reduce.cpp", "op_host/matmul_all_reduce_tiling.h",
                                              "op_host/matmul_all_reduce.cpp"]
    assert st.file_pick.value == "op_kernel/matmul_all_reduce.cpp"
    shown = st.code_view.value
    assert "Commit" in shown and "Wait" in shown and "SyncAll" in shown and "ks-code" in shown
    assert "1 tile(s)" in shown
    st._knob_widgets["tiles"].value = 4  # the open tab follows the tile count
    assert st.code_view.value != shown and "4 tile(s)" in st.code_view.value
    st.file_pick.value = "op_host/matmul_all_reduce.cpp"
    assert "tiling.set_tileCnt(4);" in st.files["op_host/matmul_all_reduce.cpp"]
    assert "set_tileCnt" in st.code_view.value
    st._knob_widgets["engine"].value = "aiv"  # the file picked stays picked; its text is the new design's
    assert st.file_pick.value == "op_host/matmul_all_reduce.cpp"
    assert "tiling.set_commCores(" in st.files["op_host/matmul_all_reduce.cpp"]
    assert "kHcclClient" in st.files["op_kernel/matmul_all_reduce.cpp"]
    st.tabs.selected_index = 0  # a move while the tab is closed leaves it behind, and opening it catches up
    st._knob_widgets["tiles"].value = 8
    assert "8 tile(s)" not in st.files["op_kernel/matmul_all_reduce.cpp"]
    st.tabs.selected_index = tab
    assert "8 tile(s)" in st.files["op_kernel/matmul_all_reduce.cpp"]
    assert st.files == ks.multi.codegen(sh.user_ns["tp"]).files
