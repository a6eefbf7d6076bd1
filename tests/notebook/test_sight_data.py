"""The Studio's view data after a move: the strips' data at once, each tab's data when first read, the same values
as `studio_data`."""

from __future__ import annotations

import pytest

from kernelstudio.notebook import studio as S
from kernelstudio.notebook import views as V
from kernelstudio.notebook.session import StudioSession

from .cells import MLA_CELL

_TABS = ("dag_dot", "flow", "timeline", "idle", "roofline")


@pytest.fixture(scope="module")
def two():
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    a = ses.rebuild()
    return a, ses.rebuild({"tile_m": 32, "double_buffer": False})


def test_sight_data_reads_as_studio_data_and_computes_a_tab_when_read(two):
    a, b = two
    files = dict(a.code.files)
    eager = V.studio_data(b, a, files, passes=False)
    lazy = V.sight_data(b, a, files)
    assert not set(_TABS) & set(dict.keys(lazy))  # nothing of the tabs computed yet
    assert lazy.get("idle") == eager["idle"]  # get() computes too; the idle table brings the timeline with it
    assert "timeline" in dict.keys(lazy) and "dag_dot" not in dict.keys(lazy)
    assert {k: lazy[k] for k in eager} == eager
    assert lazy.get("no such view", 7) == 7
    with pytest.raises(KeyError):
        lazy["no such view"]


def test_the_studio_draws_a_hidden_tab_from_data_computed_when_it_is_drawn():
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    st = S.Studio(ses)
    st.tabs.selected_index = st.tabs.titles.index("Passes")
    st._later = lambda: None  # the hidden tabs wait
    st.set_knobs(tile_m=32)  # set_knobs settles: every tab drawn
    assert "timeline" in dict.keys(st._data) and st.timeline.data
    st._seq += 1
    st._knob_widgets["tile_m"].value = 64
    st._flush()
    assert not set(_TABS) & set(dict.keys(st._data))  # only the views in sight drawn
    st._settle()
    assert set(_TABS) <= set(dict.keys(st._data))
    want = V.studio_data(ses.design, passes=False)
    assert st._data["timeline"] == want["timeline"] and st._data["idle"] == want["idle"]

