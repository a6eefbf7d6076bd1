"""What a knob move sends to the front end: a figure's update in one comm message (its edit ids with it), a
widget whose properties change together in one, and the timeline of a simulation shown before not computed
again."""

from __future__ import annotations

import ipywidgets as W
import pytest

from kernelstudio.notebook import render as R
from kernelstudio.notebook import studio as S
from kernelstudio.notebook import views as V
from kernelstudio.notebook.session import StudioSession

from .cells import MLA_CELL


@pytest.fixture
def sent(monkeypatch):
    """Each comm message a widget sends: (widget, the names of the properties in it)."""
    log: list[tuple[W.Widget, tuple[str, ...]]] = []
    send = W.Widget._send

    def record(self, msg, buffers=None):
        log.append((self, tuple(sorted(msg.get("state", {})))))
        return send(self, msg, buffers)

    monkeypatch.setattr(W.Widget, "_send", record)
    return log


@pytest.fixture(scope="module")
def designs():
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    return [ses.rebuild({"tile_m": m}) for m in (16, 32)]


def test_a_figure_update_is_one_message_with_its_edit_ids(designs, sent):
    fig = R.new_timeline_figure()
    R.update_timeline(fig, V.studio_data(designs[0], passes=False)["timeline"])
    tl = V.studio_data(designs[1], passes=False)["timeline"]
    ids = fig._last_trace_edit_id
    sent.clear()
    R.update_timeline(fig, tl)
    mine = [names for w, names in sent if w is fig]
    assert mine == [("_last_layout_edit_id", "_last_trace_edit_id", "_py2js_update")]
    assert fig._py2js_update is None  # reset in Python, as plotly leaves it
    assert fig._last_trace_edit_id == ids + 1
    # the figure in Python holds the new data, as after plotly's own update (times to 1e-6 us: see the next test)
    assert list(fig.data[0].base) == [round(b, 6) for b, li in zip(tl["bars"]["start"], tl["bars"]["lane"],
                                                                   strict=True) if not tl["lanes"][li]["host"]]
    sent.clear()
    R.update_timeline(fig, tl)  # nothing changed: nothing sent
    assert [names for w, names in sent if w is fig] == []


def test_the_timeline_sends_times_to_a_millionth_of_a_microsecond_and_one_width_per_trace(designs):
    """Every bar where the simulation puts it, to 1e-6 us (a cycle is 500 to 1000 of those): the update's numbers
    are short, and a trace's bars share one width instead of a list of equal ones."""
    import json

    fig = R.new_timeline_figure()
    tl = V.studio_data(designs[1], passes=False)["timeline"]
    R.update_timeline(fig, tl)
    shown = [i for i, li in enumerate(tl["bars"]["lane"]) if not tl["lanes"][li]["host"]]
    b = tl["bars"]
    assert len(fig.data[0].base) == len(shown) > 20
    for i, base, x in zip(shown, fig.data[0].base, fig.data[0].x, strict=True):
        assert abs(base - b["start"][i]) <= 5e-7 and abs(base + x - b["end"][i]) <= 1e-6
    assert fig.data[0].width == 0.8 and fig.data[1].width == 0.7 and fig.data[2].width == 0.35
    numbers = json.dumps([list(fig.data[t].base) + list(fig.data[t].x) for t in range(4)])
    assert max(len(n.split(".")[-1]) for n in numbers.replace("[", "").replace("]", "").split(", ") if n) <= 6


def test_a_knob_move_sends_each_widget_once(sent):
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    st = S.Studio(ses)
    st._later = lambda: None
    w = st._knob_widgets["tile_m"]
    for v in (32, 16, 32):
        sent.clear()
        w.value = v
    widgets = [id(x) for x, _ in sent]
    assert len(widgets) == len(set(widgets))  # the group toggles' label and tooltip together, the figure's update
    assert any(isinstance(x, W.ToggleButton) and {"description", "tooltip"} <= set(names) for x, names in sent)


def test_the_timeline_of_a_simulation_shown_before_is_kept(designs):
    d = designs[0]
    first = V.sight_data(d)["timeline"]
    again = V.sight_data(d)["timeline"]
    assert again is first
    assert again == V.timeline_data(d.sim, unfused=d.unfused_sim, gaps=V.idle_gaps(d.sim, cores=None))
    assert V.sight_data(designs[1])["timeline"] is not first


def test_a_move_with_the_passes_tab_open_prints_the_picked_pass_once(sent, monkeypatch):
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    st = S.Studio(ses)
    st._later = lambda: None
    st.tabs.selected_index = st.tabs.titles.index("Passes")
    printed = []
    monkeypatch.setattr(S.R, "diff_html", lambda diff: printed.append(diff) or f"{len(printed)}")
    for m in (32, 64):
        printed.clear()
        sent.clear()
        st._knob_widgets["tile_m"].value = m
        picked = st._passes[st.pass_pick.value]
        assert picked["kind"] == "pass" and st.pass_pick.value == max(
            i for i, p in enumerate(st._passes) if p["kind"] == "pass")  # the last pass, as before the move
        assert printed == [picked["diff"]]  # the pass picked, printed once (not each pick the list's redraw makes)
        assert st.pass_view.value == "1"
        assert len([w for w, _ in sent if w is st.pass_pick]) <= 1  # its new list and pick in one message
    st.pass_pick.value = 0  # a pick by the user prints that pass
    assert printed[-1] == st._passes[0]["diff"] and st.pass_view.value == str(len(printed))


def test_an_on_off_knob_sends_its_new_look_in_one_message(sent):
    w = W.ToggleButton(value=False)
    S._toggle_look(w, "double_buffer")
    sent.clear()
    w.value = True
    S._toggle_look(w, "double_buffer")
    mine = [names for x, names in sent if x is w]
    assert ("button_style", "description", "icon", "tooltip") in mine and len(mine) == 2  # the value, then the look
    assert w.description == "double_buffer: on" and w.icon == "check-square-o" and w.button_style == "info"
