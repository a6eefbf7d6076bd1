"""The Studio's Advice and What-if buttons: each opens its panel once, under the controls; an applied move's
gain is what the "what changed" strip then shows, with the directive it added; a what-if names the field it
changed there; clearing the advice or resetting the profile gives back the design as it was."""

from __future__ import annotations

import re

import pytest

from kernelstudio.notebook.advice_view import AdviceStrip
from kernelstudio.notebook.whatif_view import WhatIfPanel
from tests.notebook.cells import MLA_CELL, open_studio


@pytest.fixture
def mla(shell):
    return open_studio(shell, "mla --target ascend910b2", MLA_CELL)


SINGLE = MLA_CELL.replace('s[out].double_buffer(knob("double_buffer", True, [False, True]))',
                          "s[out].double_buffer(False)")  # single-buffered in the cell: no knob to move


@pytest.fixture
def single(shell):
    return open_studio(shell, "single --target ascend910b2", SINGLE)


def _changed_us(st) -> float:
    m = re.search(r">([+-][\d,.]+) us<", st.changed.value)
    assert m, st.changed.value
    return float(m.group(1).replace(",", ""))


def test_the_buttons_open_each_panel_once_under_the_controls(mla):
    assert mla.insight_box.children == ()
    mla.what_if_button.click()
    mla.advice_button.click()
    mla.advice_button.click()
    assert isinstance(mla.advice_strip, AdviceStrip) and isinstance(mla.what_if_panel, WhatIfPanel)
    assert mla.insight_box.children == (mla.advice_strip, mla.what_if_panel)
    assert mla.children.index(mla.insight_box) == mla.children.index(mla.controls) + 2  # after the Tune box
    assert mla.advice_strip.moves, "the Advice button advises at once"


def test_an_applied_schedule_move_shows_its_gain_and_directive_in_what_changed(single):
    mla = single
    strip = mla.open_advice()
    moves = strip.refresh()
    move = next(a for a in moves if a.fits and a.gain_us > 0 and a.directives and not a.knobs and not a.keep_out)
    before = mla.session.design.sim.time_us
    strip.apply(move)
    after = mla.session.design.sim.time_us
    assert after == pytest.approx(move.time_us, abs=1e-9) and before - after == pytest.approx(move.gain_us, abs=1e-9)
    assert _changed_us(mla) == pytest.approx(-move.gain_us, abs=0.006)  # the strip rounds to 0.01 us
    assert "+ <code>" in mla.changed.value and move.move.split("].", 1)[1] in mla.changed.value
    strip.clear()
    assert mla.session.directives == () and mla.session.design.sim.time_us == pytest.approx(before, abs=1e-9)
    assert "&minus; <code>" in mla.changed.value


def test_an_applied_knob_move_moves_the_control(mla):
    strip = mla.open_advice()
    move = next((a for a in strip.refresh() if a.fits and a.knobs), None)
    if move is None:
        pytest.skip("no knob move proposed for this design")  # the rules chose schedule moves only
    strip.apply(move)
    for name, value in move.knobs.items():
        assert mla._knob_widgets[name].value == value and mla.session.values[name] == value
    assert mla.session.design.sim.time_us == pytest.approx(move.time_us, abs=1e-9)


def test_a_what_if_names_the_field_in_what_changed_and_reset_gives_the_design_back(mla):
    base = mla.session.design.sim.time_us
    panel = mla.open_what_if()
    launch = mla.session.profile().launch_overhead_us
    panel.set(launch_overhead_us=launch + 10.0)
    assert mla.session.overrides == {"launch_overhead_us": launch + 10.0}
    assert f"launch_overhead_us {launch:g} &rarr; {launch + 10:g}" in mla.changed.value
    assert mla.session.design.sim.time_us == pytest.approx(base + 10.0, abs=1e-9)  # one kernel, one launch later
    assert _changed_us(mla) == pytest.approx(10.0, abs=0.006)
    panel.reset()
    assert mla.session.overrides == {} and mla.session.design.sim.time_us == pytest.approx(base, abs=1e-9)


def test_the_roofline_draws_the_what_if_profiles_roofs(mla):
    mla.open_what_if().set(hbm_bytes_per_s=2.4e12)
    mla.tabs.selected_index = 3  # Roofline
    assert mla._data["roofline"]["hbm_bytes_per_s"] == 2.4e12 and "user" in mla._data["roofline"]["hbm_source"]


def test_a_move_of_two_knobs_moves_both_controls_and_what_changed_shows_its_gain(mla):
    """MlaProlog-lite at its defaults fills L0B: the advisor's best move doubles the k tile and halves the n
    tile at once (one Advice, two knobs); Apply moves both controls and the strip shows the stated gain."""
    strip = mla.open_advice()
    moves = strip.refresh()
    assert moves[0].knobs == {"tile_k": 128, "tile_n": 128} and moves[0].gain_us > 0  # ranked first: the best
    assert [a.gain_us for a in moves if a.fits] == sorted((a.gain_us for a in moves if a.fits), reverse=True)
    move = moves[0]
    before = mla.session.design.sim.time_us
    strip.apply(move)
    assert mla._knob_widgets["tile_k"].value == 128 and mla._knob_widgets["tile_n"].value == 128
    assert mla.session.values["tile_k"] == 128 and mla.session.values["tile_n"] == 128
    assert mla.session.design.sim.time_us == pytest.approx(move.time_us, abs=1e-9)
    assert before - mla.session.design.sim.time_us == pytest.approx(move.gain_us, abs=1e-9)
    assert _changed_us(mla) == pytest.approx(-move.gain_us, abs=0.006)  # the strip rounds to 0.01 us
