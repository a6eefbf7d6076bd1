"""The Studio's Measured tab: the per-pipe table with its paired bars, one core's lanes measured above predicted,
and the own-kernel Studio that shows them (its card, its tab, re-timed with the target and L2 controls)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kernelstudio as ks
from kernelstudio.ascendc.msprof import MsprofFormatError
from kernelstudio.notebook.ascendc_view import AscendCStudio
from kernelstudio.notebook.measured_view import MEASURED, PREDICTED, measured_figure, measured_html, measured_lanes

from .conftest import KERNELS, halves

DATA = Path(__file__).parent / "msprof"
WRITTEN = DATA / "written" / "add_flags"


@pytest.fixture(scope="module")
def vector_sim() -> ks.SimResult:
    x = ks.placeholder((8, 4096), "float16", name="x")
    out = x * 2.0 + 1.0
    s = ks.create_schedule(out)
    s[out].parallel(0, cores=8)
    return ks.simulate(ks.lower(s, "ascend910b2"))


def test_table_pairs_each_pipes_bars_on_one_scale(vector_sim):
    cmp = ks.ascendc.compare_measured(vector_sim, DATA / "hamming_topk")
    page = measured_html(cmp)
    assert "155.740 us</b> measured" in page and f"{cmp.predicted_task_us:,.3f} us</b> simulated" in page
    rows = re.findall(r'<tr class="ks-measured-row".*?</tr>', page)
    assert len(rows) == len(cmp.rows) == 5  # the sub-core, MTE2, VECTOR, MTE3, SCALAR
    widths = {(who, float(v)): int(w) for who, v, w in
              re.findall(r'title="(measured|predicted) ([\d,.]+) us" style="height:6px; margin:1px 0; width:(\d+)px',
                         page.replace(",", ""))}
    assert widths[("measured", 155.431)] == 120  # the longest time spans the bar
    assert widths[("measured", 109.278)] == round(120 * 109.277779 / 155.431107)
    assert MEASURED in page and PREDICTED in page
    assert "x" in page and f"{cmp.row('vector', 'V').ratio:.2f}x" in page
    assert "topk_custom_0" in page  # the note that the operators differ
    assert "hamming_topk/OpBasicInfo.csv" in page


def test_lanes_put_each_measured_pipe_above_its_prediction(vector_sim):
    cmp = ks.ascendc.compare_measured(vector_sim, WRITTEN)
    data = measured_lanes(cmp)
    assert data["core"] == data["predicted_core"] == "core0.veccore0"
    lanes = data["lanes"]
    assert lanes[:2] == ["measured MTE2", "predicted MTE2"]
    assert "measured CACHEMISS" in lanes and "predicted CACHEMISS" not in lanes  # no pipe to simulate
    b = data["bars"]
    mte2 = [i for i, y in enumerate(b["y"]) if y == 0]
    assert len(mte2) == 8 and min(b["start"][i] for i in mte2) == 0.0
    pred = [i for i, y in enumerate(b["y"]) if y == 1]
    assert pred  # the simulated MTE2 lane has bars
    predicted = [i for i, y in enumerate(b["y"]) if lanes[y].startswith("predicted")]
    assert min(b["start"][i] for i in predicted) == 0.0  # each side's core starts at its own first event
    assert all(b["start"][i] <= b["end"][i] for i in range(len(b["y"])))
    fig = measured_figure(data)
    assert list(fig.layout.yaxis.ticktext) == lanes and len(fig.data[0].y) == len(b["y"])
    few = measured_lanes(cmp, "core0.veccore0", max_per_lane=3)
    per_lane = [b["y"].count(y) for y in range(len(lanes))]
    assert per_lane[0] == 8 and few["cut"] == sum(max(0, n - 3) for n in per_lane) > 0
    assert [few["bars"]["y"].count(y) for y in range(len(lanes))] == [min(n, 3) for n in per_lane]
    none = measured_lanes(ks.ascendc.compare_measured(vector_sim, DATA / "hamming_topk"))
    assert none["lanes"] == [] and none["core"] is None


def test_own_kernel_studio_shows_the_measurement(twin_cache):
    x = halves(8192)
    k = ks.ascendc.load(KERNELS / "add_flags" / "add_flags.cpp", kernel="add_flags",
                        args=[x, x, ks.ascendc.out(x.shape, "float16")], block_dim=4, cache_dir=twin_cache,
                        tiling={"blockLength": 2048, "tileLength": 512})
    plain = AscendCStudio(k)
    assert plain.tabs.titles == ("Timeline", "Roofline", "Sync check", "Source") and "measured" not in plain.cards.value
    with pytest.raises(MsprofFormatError, match="no such file or folder"):
        plain.show_measured(WRITTEN / "missing")
    assert plain.tabs.titles == ("Timeline", "Roofline", "Sync check", "Source")
    cmp = plain.show_measured(WRITTEN)
    assert plain.tabs.titles[-1] == "Measured" and plain.tabs.children[-1] is plain.measured_view
    assert "3.25 us" in plain.cards.value and f"x{cmp.task_ratio:.2f} the simulated" in plain.cards.value
    assert "ks-measured-table" in plain.measured_view.table.value
    assert plain.measured_view.lanes["core"] == "core0.veccore0"
    assert plain.measured_view.lanes_box.layout.display == "" and plain.measured_view.core.layout.display == "none"
    assert cmp.table() in plain.summary()

    st = AscendCStudio(k, measured=WRITTEN)
    assert st.tabs.titles == ("Timeline", "Roofline", "Sync check", "Source", "Measured")
    cold = st.comparison
    st.l2.value = "warm"  # re-timed: the comparison follows the new simulation
    assert st.comparison is not cold and st.comparison.sim is st.sim
    st.show_measured(WRITTEN / "PipeUtilization.csv")  # no task time, no trace
    assert "measured (no OpBasicInfo.csv)" in st.cards.value and st.measured_view.lanes_box.layout.display == "none"
    assert st.tabs.titles.count("Measured") == 1


def test_design_studio_shows_the_measurement_and_follows_the_setting():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "kernelstudio")
    magics = sh.magics_manager.registry["AscendKernelMagics"]
    cell = ('x = placeholder((8, 4096), "float16", name="x")\nout = x * 2.0 + 1.0\ns = create_schedule(out)\n'
            's[out].parallel(0, cores=knob("cores", 8, [4, 8]))\n')
    try:
        with capture_output():
            assert sh.run_cell(f"%%ascend_kernel measured_vec\n{cell}").success
        st = magics.studios["measured_vec"]
        titles = st.tabs.titles
        cmp = st.show_measured(WRITTEN)
        assert st.tabs.titles == (*titles, "Measured") and st.tabs.children[-1] is st.measured_view
        assert cmp.sim is st._prev.sim and cmp.measured_task_us == 3.25
        assert "ks-measured-table" in st.measured_view.table.value
        d4 = st.session.rebuild({"cores": 4})
        st._show(d4)  # a knob move: the Measured tab is behind until opened
        st.tabs.selected_index = len(st.tabs.children) - 1
        assert st.measured_view.cmp.sim is d4.sim
        st.show_measured(DATA / "hamming_topk")  # another run: the tab is kept, its data replaced
        assert st.tabs.titles.count("Measured") == 1 and st.measured_view.cmp.measured_task_us == 155.740005
    finally:
        magics.studios.clear()
        sh.user_ns.pop("measured_vec", None)
