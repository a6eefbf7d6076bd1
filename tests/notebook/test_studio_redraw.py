"""How a knob move redraws the Studio: the views in sight at once, the hidden tabs once the controls rest (or
when one is opened), and figures patched with only what changed end up as a full redraw would leave them."""

from __future__ import annotations

import asyncio

import pytest

from kernelstudio.notebook import render as R
from kernelstudio.notebook import studio as S
from kernelstudio.notebook import views as V
from kernelstudio.notebook.session import StudioSession

from .cells import MLA_CELL

MOVES = [{"tile_m": m, "double_buffer": db} for db in (True, False) for m in (16, 32, 64)]


@pytest.fixture(scope="module")
def designs():
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    return [ses.rebuild(m) for m in MOVES]


def _figure(fig) -> dict:
    d = fig.to_dict()
    for t in d["data"]:
        t.pop("uid", None)
    return d


def test_patched_figures_equal_a_fresh_drawing(designs):
    timeline, roofline = R.new_timeline_figure(), R.new_roofline_figure()
    for d in designs + designs[::-1]:
        data = V.studio_data(d, passes=False)
        R.update_timeline(timeline, data["timeline"])
        R.update_roofline(roofline, data["roofline"])
        fresh_t, fresh_r = R.new_timeline_figure(), R.new_roofline_figure()
        R.update_timeline(fresh_t, data["timeline"])
        R.update_roofline(fresh_r, data["roofline"])
        assert _figure(timeline) == _figure(fresh_t) and _figure(roofline) == _figure(fresh_r)


def test_a_zoom_in_the_browser_is_reset_by_the_next_move(designs):
    fig = R.new_timeline_figure()
    tl = V.studio_data(designs[0], passes=False)["timeline"]
    R.update_timeline(fig, tl)
    fig.plotly_relayout({"xaxis.range": [0.0, 0.001]})  # as plotly.js reports a zoom
    R.update_timeline(fig, tl)
    assert list(fig.layout.xaxis.range) == tl["range"]["kernel"]


def test_hidden_tabs_follow_once_the_controls_rest_or_when_opened():
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    st = S.Studio(ses)
    code, cards, bases = st.code_view.value, st.cards.value, st.timeline.data[0].base

    async def moves() -> None:
        st._knob_widgets["tile_m"].value = 32  # as the slider does: the build runs on the event loop
        await asyncio.sleep(0.05)
        assert st.cards.value != cards and st.timeline.data[0].base != bases  # in sight: at once
        assert st.code_view.value == code  # hidden: not yet
        await asyncio.sleep(S.REST_S + 0.2)
        assert st.code_view.value != code and not st._stale
        st._knob_widgets["tile_m"].value = 64
        await asyncio.sleep(0.05)
        before = st.code_view.value
        st.tabs.selected_index = S._TABS.index("Ascend C")  # opened while behind: drawn now
        assert st.code_view.value != before
        st._knob_widgets["tile_m"].value = 16
        await asyncio.sleep(0.05)
        st.tabs.selected_index = S._TABS.index("Passes")
        assert st.pass_pick.options and "plan_memory" in st.pass_pick.label

    asyncio.run(moves())
    st.set_knobs(tile_m=32)  # from code: every tab drawn on return
    assert not st._stale
