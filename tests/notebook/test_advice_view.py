"""The Advice strip on a real Studio: it lists the advisor's simulated moves for the design on show, Apply moves
the knob controls or replays schedule moves on the cell's schedule, and Clear drops the applied ones."""

from __future__ import annotations

import html

import pytest

from kernelstudio.notebook.advice_view import AdviceStrip
from kernelstudio.plan.advise_rules import move_text
from tests.notebook.cells import MLA_CELL, open_studio

B2 = "ascend910b2"
CONV_CELL = '''
x = placeholder((1, 64, 112, 112), "float16", name="x")
w = placeholder((64, 64, 3, 3), "float16", name="w")
b = placeholder((64, 1, 1), "float16", name="bias")
out = relu(conv2d(x, w, padding="SAME") + b, name="out")
s = create_schedule(out)
s[out].split("n", knob("tile_n", 256, [128, 256, 512]))
s[out].double_buffer(knob("double_buffer", True, [False, True]))
'''
MULTI_CELL = '''
x1 = placeholder((1024, 1024), "float16", name="x1")
x2 = placeholder((1024, 2048), "float16", name="x2")
out = ks.multi.matmul_allreduce(x1, x2, cluster=ks.multi.Cluster(devices=2, target="ascend910b2"),
                                tiles=knob("tiles", 1, [1, 2, 4]))
'''


@pytest.fixture
def mla(shell):
    return open_studio(shell, f"mla --target {B2}", MLA_CELL)


def test_the_strip_lists_simulated_moves_with_an_apply_button_each(mla):
    strip = AdviceStrip(mla)
    moves = strip.refresh()
    listed = [a for a in moves if a.saves] + [a for a in moves if not a.fits]
    assert moves and strip.moves == listed[: strip.top] and len(strip.rows.children) == len(strip.moves)
    first = strip.rows.children[0]
    button, text = first.children
    assert button.description == "Apply" and not button.disabled
    assert html.escape(moves[0].move) in text.value and f"{moves[0].time_us:.2f} us" in text.value
    slower = sum(1 for a in moves if a.fits and not a.saves)
    assert "moves simulated for mla" in strip.status.value and f"{slower} slower or no faster" in strip.status.value
    assert any(a.knobs for a in moves)  # the cell's knobs are moves too, through the session's build
    strip.show_slower.value = True  # the slower moves listed too, after those that save time
    assert strip.moves == ([a for a in moves if a.fits] + [a for a in moves if not a.fits])[: strip.top]


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


def test_a_move_that_does_not_fit_has_no_live_apply_and_a_kept_out_op_is_replayed(mla):
    strip = AdviceStrip(mla, top=50)
    strip.show_slower.value = True
    moves = strip.refresh()
    for a, row in zip(strip.moves, strip.rows.children, strict=True):
        button = row.children[0]
        assert button.disabled == (not a.fits)
        if not a.fits:
            assert button.tooltip == a.why_not
    out = next(a for a in moves if a.keep_out)
    strip.apply(out)
    assert mla.error is None and mla.session.keep_out == out.keep_out
    assert mla.session.design.sim.time_us == pytest.approx(out.time_us, abs=1e-9)
    assert f"+ <code>{html.escape(move_text((), out.keep_out))}</code>" in mla.changed.value
    assert strip.clear_button.description == f"Clear applied ({len(out.keep_out) + len(out.directives)})"
    strip.clear()
    assert mla.session.keep_out == () and len(mla.session.design.schedule.kernels) == 1


def test_the_strip_says_when_no_move_helps_and_why(shell):
    conv = open_studio(shell, f"conv --target {B2}", CONV_CELL)
    strip = AdviceStrip(conv)
    moves = strip.refresh()
    assert moves and not any(a.saves for a in moves) and all(a.fits is False for a in strip.moves)
    closest = max((a for a in moves if a.fits), key=lambda a: a.gain_us)
    status = strip.status.value
    assert status.startswith("no move helps conv") and html.escape(closest.move) in status
    assert f"{-closest.gain_us:+.2f} us" in status and "-bound at" in status


def test_a_multi_device_studio_says_it_gets_no_advice(shell):
    st = open_studio(shell, "tp", MULTI_CELL)
    st.advice_button.click()
    assert st.insight_box.children == (st.advice_strip,) and st.advice_strip.rows.children == ()
    assert st.advice_strip.status.value.startswith("no advice for a multi-device design")


ATTENTION_CELL = '''
q = placeholder((1, 1, knob("S_q", 2048, [1, 512, 2048]), 128), "float16", name="query")
k, v = (placeholder((1, 1, 2048, 128), "float16", name=n) for n in ("key", "value"))
out = ops.flash_attention(q, k, v, causal=knob("causal", False, [False, True]))
s = create_schedule(out)
if s.kernels[-1].family == "attention":
    s[out].split("s2", knob("s2", 512, [256, 512])).slots(knob("slots", 3, [2, 3, 4]))
'''


def test_knobs_of_the_problem_are_left_out_before_they_are_built(shell):
    st = open_studio(shell, f"fa --target {B2}", ATTENTION_CELL)
    session, d = st.session, st.session.design
    assert session.problem(d.knobs) == d.schedule.graph.text()
    assert session.problem({**d.knobs, "S_q": 512}) != d.schedule.graph.text()
    assert session.problem({**d.knobs, "slots": 4}) == d.schedule.graph.text()
    built = []
    inner = session._build
    session._build = lambda values, *a, **kw: built.append(dict(values)) or inner(values, *a, **kw)
    moves = AdviceStrip(st).refresh()
    assert built and all(v["S_q"] == 2048 and v["causal"] is False for v in built)  # the knob moves built
    assert {n for a in moves for n in a.knobs} <= {"s2", "slots"} and any(a.knobs for a in moves)
