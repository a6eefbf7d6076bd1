"""The Studio's Tune button: ks.tune over the cell's knobs, the results, and "apply best"."""

from __future__ import annotations

import pickle

import cloudpickle
import pytest

import kernelstudio as ks
from kernelstudio.notebook.session import StudioSession
from kernelstudio.notebook.studio import Studio
from kernelstudio.notebook.tune_panel import CellDesign

CELL = '''
x = placeholder((ROWS, 256), "float16", name="x")
w = placeholder((512, 256), "float16", name="w")
b = placeholder((512,), "float16", name="bias")
out = gelu(layer_norm(matmul(x, w, transpose_b=True), axis=-1) + b, name="out")
s = create_schedule(out)
s[out].split("n", knob("tile_n", 256, [128, 256, 512]))
s[out].split("k", knob("tile_k", 64, [32, 64, 128]))
s[out].double_buffer(knob("double_buffer", True, [False, True]))
'''


def same_design():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1) + b, name="out")
    s = ks.create_schedule(out)
    s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512]))
    s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


@pytest.fixture(autouse=True)
def _db(fresh_db):
    return fresh_db


def make_studio():
    user_ns = {"ROWS": 64, "unrelated": object()}
    session = StudioSession("mla_cell", CELL, user_ns=user_ns, compare=False)
    session.rebuild({})
    return Studio(session)


def test_cell_design_holds_only_the_names_the_cell_reads():
    fn = CellDesign.of(CELL, "mla_cell", {"ROWS": 64, "unrelated": object(), "out": 1})
    assert fn.user_ns == {"ROWS": 64}
    back = pickle.loads(cloudpickle.dumps(fn))
    with ks.knob_values({"tile_k": 32}) as ctx:
        s = back()
    assert set(ctx.seen) == {"tile_n", "tile_k", "double_buffer"}
    assert any(d.kind == "split" and d.axis == "k" and d.value == 32 for d in s.directives)


def test_tune_button_runs_the_cells_knobs_and_applies_the_best():
    st = make_studio()
    assert st.tune_button.description == "Tune" and st.tune_panel is None
    st.tune_button.click()
    panel = st.tune_panel
    assert panel is not None and st.tune_box.children == (panel,)
    assert panel.budget.value == 18 and panel.apply_button.disabled
    panel.strategy.value = "grid"
    r = panel.run(executor="inline", progress=False)
    assert r is not None and len(r.history) == 18 and r.target == st.target.value
    ref = ks.tune(same_design, budget=18, strategy="grid", executor="inline", progress=False, db=False)
    assert [(t.config, t.time_us, t.kind) for t in r.history] == [(t.config, t.time_us, t.kind) for t in ref.history]
    assert "best" in panel.text and "pruned: CapacityError: L0B" in panel.text
    assert not panel.apply_button.disabled
    assert st.knob_values() != r.best.config
    panel.apply_button.click()
    assert st.knob_values() == r.best.config
    assert st.session.design.sim.time_us == pytest.approx(r.best_time_us, rel=1e-12)


def test_studio_tune_from_code_in_worker_processes():
    st = make_studio()
    r = st.tune(progress=False)  # the default process pool: the cell and ROWS travel to the workers
    assert "process pool" in r.executor and len(r.history) == 18
    assert r.best_time_us <= r.default.time_us


def test_tune_panel_reports_a_failure_in_its_text():
    # a Studio opened on a coupled chip, where matmul kernels do not lower (its target list offers no such
    # chip once a design is built; opened there, nothing is built yet)
    session = StudioSession("mla_cell", CELL, user_ns={"ROWS": 64}, target="ascend310p3", compare=False)
    with pytest.raises(ks.UnsupportedError, match="ascend310p3 is a coupled chip"):
        session.rebuild({})
    st = Studio(session)
    assert st.target.value == "ascend310p3" and session.design is None
    panel = st.open_tune()
    panel.strategy.value = "grid"
    assert panel.run(executor="inline", progress=False) is None  # its knobs unknown yet: the default is tried
    assert panel.text.startswith("tune failed: tune: none of the 1 configurations of mla_cell is legal on "
                                 "ascend310p3 (UnsupportedError")
    assert panel.apply_button.disabled


ATTENTION_CELL = '''
q = placeholder((1, 1, 512, 128), "float16", name="query")
k, v = (placeholder((1, 1, 512, 128), "float16", name=n) for n in ("key", "value"))
out = ops.flash_attention(q, k, v)
s = create_schedule(out)
s[out].slots(knob("slots", 3, [1, 3]))
'''


def test_apply_best_on_an_attention_cell_says_which_blocks_to_state():
    session = StudioSession("fa_cell", ATTENTION_CELL, user_ns={}, compare=False)
    session.rebuild({})
    st = Studio(session)
    panel = st.open_tune()
    r = panel.run(executor="inline", progress=False)
    assert [k.name for k in r.knobs] == ["slots", "attention_out.s1", "attention_out.s2"]
    best = r.best.config
    panel.apply_best()
    assert st.knob_values() == {"slots": best["slots"]}
    blocks = f"s['attention_out'].split('s1', {best['attention_out.s1']}).split('s2', {best['attention_out.s2']})"
    assert panel.out.outputs[-1]["text"] == (f"the cell has no controls for attention_out.s1, attention_out.s2: to "
                                             f"keep them, add {blocks} to the cell\n")
