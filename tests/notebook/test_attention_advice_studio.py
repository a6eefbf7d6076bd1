"""Notebook 10's Studio with its slots slider at 1: the Advice strip's top move is the slots knob, and applying it
moves the slider and gives the simulated time it stated."""

from __future__ import annotations

import pytest

from tests.notebook.cells import open_studio

# notebook 10's cell at one head (the same kernel, a third of the tasks)
CELL = '''
q = placeholder((1, 1, knob("S_q", 2048, [1, 512, 2048]), 128), "float16", name="query")
k, v = (placeholder((1, 1, 2048, 128), "float16", name=n) for n in ("key", "value"))
out = ops.flash_attention(q, k, v, causal=knob("causal", False, [False, True]))
s1, s2, slots = knob("s1", 128, [64, 128]), knob("s2", 512, [128, 256, 512]), knob("slots", 3, [1, 2, 3, 4])
s = create_schedule(out)
if s.kernels[-1].family == "attention":
    s[out].split("s1", s1).split("s2", s2).slots(slots)
'''


def test_one_slot_gets_the_slots_knob_as_its_top_move(shell):
    st = open_studio(shell, "attention --target ascend910b2", CELL)
    st.set_knobs(slots=1)
    before = st.session.design.sim.time_us
    strip = st.open_advice()
    top = strip.refresh()[0]
    assert top.rule == "attention_slots" and set(top.knobs) == {"slots"} and top.knobs["slots"] > 1
    assert top.gain_us > 0 and top.before_us == before
    strip.apply(top)
    assert st._knob_widgets["slots"].value == top.knobs["slots"]
    assert st.session.design.sim.time_us == pytest.approx(top.time_us, abs=1e-9)
