"""The Advice strip on a real Studio: it lists the advisor's simulated moves for the design on show, Apply moves
the knob controls or replays schedule moves on the cell's schedule, and Clear drops the applied ones."""

from __future__ import annotations

import html

import pytest

from kernelstudio.notebook.advice_view import AdviceStrip
from tests.notebook.cells import MLA_CELL, open_studio

B2 = "ascend910b2"


@pytest.fixture
def mla(shell):
    return open_studio(shell, f"mla --target {B2}", MLA_CELL)


def test_the_strip_lists_simulated_moves_with_an_apply_button_each(mla):
    strip = AdviceStrip(mla)
    moves = strip.refresh()
    assert moves and len(strip.rows.children) == min(len(moves), strip.top)
    first = strip.rows.children[0]
    button, text = first.children
    assert button.description == "Apply" and not button.disabled
    assert html.escape(moves[0].move) in text.value and f"{moves[0].time_us:.2f} us" in text.value
    assert "moves simulated for mla" in strip.status.value
    assert any(a.knobs for a in moves)  # the cell's knobs are moves too, through the session's build


def test_apply_a_knob_move_moves_the_control(mla):
    strip = AdviceStrip(mla)
    a = next(a for a in strip.refresh() if a.knobs and a.fits)
    strip.apply(a)
    name, value = next(iter(a.knobs.items()))
    assert mla.knob_values()[name] == value and mla.session.design.sim.time_us == pytest.approx(a.time_us)


def test_apply_a_schedule_move_replays_it_and_clear_drops_it(mla):
    strip = AdviceStrip(mla)
    a = next((a for a in strip.refresh() if a.directives and a.fits), None)
    if a is None:
        pytest.skip("no schedule move for this design")
    strip.apply(a)
    assert mla.session.directives == a.directives and mla.error is None
    assert mla.session.design.sim.time_us == pytest.approx(a.time_us)
    assert strip.clear_button.description == "Clear applied (1)" and not strip.clear_button.disabled
    assert "design changed" in strip.status.value
    strip.clear()
    assert mla.session.directives == () and strip.clear_button.disabled


def test_a_move_the_session_cannot_replay_or_that_does_not_fit_has_no_live_apply(mla):
    strip = AdviceStrip(mla, top=50)
    moves = strip.refresh()
    for a, row in zip(moves, strip.rows.children, strict=True):
        button = row.children[0]
        assert button.disabled == (not a.fits or bool(a.keep_out))
        if a.keep_out:
            assert "in the cell" in button.tooltip
    assert any(a.keep_out for a in moves)
