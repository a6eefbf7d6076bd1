"""%%ascend_kernel in an in-process shell: output, the namespace object, live rebuilds, errors."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

import kernelstudio as ks
from kernelstudio.notebook import views as V
from kernelstudio.notebook.cell import CellError
from kernelstudio.notebook.magic import MagicUsageError, parse_args
from kernelstudio.plan.build import Design
from kernelstudio.sim.l2 import L2Error
from tests.notebook.cells import MLA_CELL, studio_of


def run(sh, line: str, body: str):
    with capture_output() as cap:
        res = sh.run_cell(f"%%ascend_kernel {line}\n{body}")
    return res, cap


def test_magic_stores_the_design_and_displays_the_studio(shell):
    res, cap = run(shell, "mla --target ascend910b2", MLA_CELL)
    assert res.success, res.error_in_exec
    d = shell.user_ns["mla"]
    assert isinstance(d, Design)
    assert d.name == "mla" and d.target == "ascend910b2"
    assert d.knobs == {"tile_m": 16, "tile_n": 256, "tile_k": 64, "double_buffer": True}
    assert d.unfused_sim is not None and d.unfused_sim.time_us > 0
    assert "op_kernel/mla.cpp" in d.code.files  # the operator is named after the design
    assert "OP_ADD(Mla);" in d.code.files["op_host/mla.cpp"]
    [out] = cap.outputs
    assert "application/vnd.jupyter.widget-view+json" in out.data
    # without a widget front end the text/plain part is the Studio's summary
    assert "fused vs unfused" in out.data["text/plain"] and "tile_m=16" in out.data["text/plain"]


def test_knob_controls_follow_the_cell(shell):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    assert list(st._knob_widgets) == ["tile_m", "tile_n", "tile_k", "double_buffer"]
    assert type(st._knob_widgets["tile_m"]).__name__ == "SelectionSlider"
    assert list(st._knob_widgets["tile_m"].options) == [16, 32, 64]
    assert type(st._knob_widgets["double_buffer"]).__name__ == "ToggleButton"


def test_moving_a_slider_rebuilds_code_timeline_and_metrics(shell):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    before = shell.user_ns["mla"]
    tl_before = st.timeline.data[0].base
    st._knob_widgets["tile_m"].value = 32
    after = shell.user_ns["mla"]
    assert after is not before and after.knobs["tile_m"] == 32
    assert after.program.kernels[0].tiling_value("tile_m") == 32
    assert after.code.files != before.code.files
    assert after.sim.time_us != before.sim.time_us
    assert st.timeline.data[0].base != tl_before
    assert "tile_m 16 &rarr; 32" in st.changed.value
    assert f"{after.sim.time_us:,.2f} us" in st.cards.value
    assert st.error is None and st.banner.value == ""


def test_a_bad_setting_shows_the_banner_and_keeps_the_views(shell):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    good = shell.user_ns["mla"]
    cards, timeline = st.cards.value, st.timeline.data[0].base
    st._knob_widgets["tile_k"].value = 128  # double-buffered 256x128 B tiles overflow L0B
    assert st.error is not None and "L0B needs 131,072 B" in st.error
    assert "CapacityError" not in st.banner.value and "not applied" in st.banner.value
    assert "200&nbsp;%" in st.banner.value  # the overflowing bar, drawn past 100 %
    assert shell.user_ns["mla"] is good
    assert st.cards.value == cards and st.timeline.data[0].base == timeline
    st._knob_widgets["double_buffer"].value = False  # now it fits: the banner clears
    assert st.error is None and st.banner.value == ""
    assert shell.user_ns["mla"].knobs == {"tile_m": 16, "tile_n": 256, "tile_k": 128, "double_buffer": False}


def test_set_knobs_builds_once(shell, monkeypatch):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    calls = []
    real = st.session.rebuild
    monkeypatch.setattr(st.session, "rebuild", lambda *a, **k: calls.append(a) or real(*a, **k))
    st.set_knobs(tile_m=64, double_buffer=False)
    assert len(calls) == 1
    assert shell.user_ns["mla"].knobs["tile_m"] == 64
    with pytest.raises(Exception, match="has no knob 'tile_q'"):
        st.set_knobs(tile_q=1)


def test_a_result_older_than_the_latest_move_is_dropped(shell, monkeypatch):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    shown = st.cards.value
    real = st.session.rebuild

    def slow_rebuild(*a, **k):
        d = real(*a, **k)
        st._seq += 1  # a newer move arrives while this one builds
        return d

    monkeypatch.setattr(st.session, "rebuild", slow_rebuild)
    st._flush()
    assert st.cards.value == shown  # the stale result was not drawn


def test_target_and_compare_controls(shell):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    st.compare.value = False
    assert shell.user_ns["mla"].unfused_sim is None
    st.target.value = "ascend910b4"
    assert shell.user_ns["mla"].target == "ascend910b4"
    assert "ascend910b4" in st.header.value


def test_the_l2_start_control_times_both_plans_warm_and_the_card_says_so(shell):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    cold = shell.user_ns["mla"]
    assert st.l2.value == "cold" and "L2 cold" in st.cards.value
    st.l2.value = "warm"
    warm = shell.user_ns["mla"]
    assert warm.sim.metrics["l2_start"] == warm.unfused_sim.metrics["l2_start"] == "warm"
    assert "L2 warm" in st.cards.value and st.session.l2 == "warm"
    assert warm.sim.metrics["hbm_read_bytes"] < cold.sim.metrics["hbm_read_bytes"]
    assert warm.sim.time_us <= cold.sim.time_us
    with pytest.raises(L2Error, match="cold.*warm"):
        st.session.rebuild(l2="hot")
    assert st.session.l2 == "warm" and shell.user_ns["mla"] is warm  # a refused protocol loses nothing


def test_cell_error_is_short_and_names_the_line(shell):
    res, cap = run(shell, "bad", 'x = placeholder((64, 256), "float16", name="x")\ny = matmul(x, x)\n')
    assert not res.success
    text = cap.stdout + cap.stderr
    assert "ShapeError" in text and "cell line 2: y = matmul(x, x)" in text
    assert "Traceback" not in text and len(text.splitlines()) <= 3
    assert "bad" not in shell.user_ns


def test_cell_without_output_says_what_to_do(shell):
    res, cap = run(shell, "bad", 'x = placeholder((4, 4), "float16", name="x")\n')
    assert not res.success
    assert "assign the result to `out`" in cap.stdout + cap.stderr


def test_last_expression_is_the_output(shell):
    res, _ = run(shell, "vec --no-compare", 'x = placeholder((8, 64), "float16", name="x")\nrelu(x) + 1\n')
    assert res.success
    d = shell.user_ns["vec"]
    assert d.unfused_sim is None and d.program.kernels[0].family == "vector"


def test_cell_sees_notebook_variables(shell):
    shell.user_ns["ROWS"] = 24
    res, _ = run(shell, "vec", 'out = relu(placeholder((ROWS, 64), "float16", name="x"))\n')
    assert res.success
    assert shell.user_ns["vec"].program.tensor("x").shape == (24, 64)


def test_syntax_error_is_short(shell):
    res, cap = run(shell, "bad", "out = relu(\n")
    assert not res.success
    assert "SyntaxError" in cap.stdout + cap.stderr and "Traceback" not in cap.stdout + cap.stderr


@pytest.mark.parametrize("line, words", [
    ("", "needs a name"),
    ("my-op", "must be a Python identifier"),
    ("a b", "one design name expected"),
    ("a --target", "--target needs a value"),
    ("a --target ascend999", "unknown target 'ascend999'"),
    ("a --fast", "unknown option '--fast'"),
    ("a 'unclosed", "cannot read the magic line"),
])
def test_bad_magic_lines(line, words):
    with pytest.raises(MagicUsageError, match=words):
        parse_args(line)


def test_flags_parse():
    a = parse_args("mla --target=ascend910b4 --no-compare --no-panel")
    assert (a.name, a.target, a.compare, a.panel) == ("mla", "ascend910b4", False, False)


def test_plain_ipython_prints_a_summary(capsys):
    from kernelstudio.notebook.magic import AscendKernelMagics

    m = AscendKernelMagics.__new__(AscendKernelMagics)  # a shell that looks like terminal IPython
    m.shell = type("S", (), {"user_ns": {}})()
    m.shell.__class__.__name__ = "TerminalInteractiveShell"
    m.studios = {}
    m.ascend_kernel("vec", 'out = relu(placeholder((8, 64), "float16", name="x"))\n')
    printed = capsys.readouterr().out
    assert "fused vs unfused" in printed
    assert isinstance(m.shell.user_ns["vec"], Design)


def test_a_knob_under_an_if_comes_and_goes(shell):
    body = ('x = placeholder((64, 128), "float16", name="x")\n'
            'out = relu(x)\n'
            's = create_schedule(out)\n'
            'if knob("tile_rows", True, [False, True]):\n'
            '    s[out].split(0, knob("rows", 16, [8, 16]))\n')
    res, _ = run(shell, "vec", body)
    assert res.success
    st = studio_of(shell, "vec")
    assert list(st._knob_widgets) == ["tile_rows", "rows"]
    st._knob_widgets["tile_rows"].value = False  # `rows` is no longer declared: not an error
    assert st.error is None and list(st._knob_widgets) == ["tile_rows"]
    st._knob_widgets["tile_rows"].value = True
    assert list(st._knob_widgets) == ["tile_rows", "rows"]


def test_session_build_refuses_a_misspelt_knob():
    import kernelstudio as ks
    from kernelstudio.notebook.session import StudioSession

    ses = StudioSession("mla", MLA_CELL)
    with pytest.raises(ks.KnobError, match="did you mean 'tile_m'"):
        ses.build({"tile_mm": 32})


LN_CELL = '''x = placeholder((64, 1024), "float16", name="x")
w = placeholder((1024, 1024), "float16", name="w")
out = layer_norm(matmul(x, w, transpose_b=True), axis=-1, name="out")
s = create_schedule(out)
s[out].vectorize(-1, knob("cols", 1024, [512, 1024]))
'''


def test_header_shows_the_fusion_choice_for_the_studio_target(shell):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    assert "fusion, chosen at the auto schedule: fusion pays on ascend910b2" in st.plan.value
    st.target.value = "ascend910b4"  # the cell re-runs and chooses for the new target
    assert "fusion, chosen at the auto schedule: fusion pays on ascend910b4" in st.plan.value
    assert shell.user_ns["mla"].schedule.choices[0].target == "ascend910b4"
    run(shell, "ln", LN_CELL)
    st = studio_of(shell, "ln")
    assert "fusion, chosen at the auto schedule: fusion pays on ascend910b2" in st.plan.value
    assert "with sync_all (row blocks:" in st.plan.value  # the fused kernel's better plan, and the other's time
    assert [(k.family, k.sync_all) for k in shell.user_ns["ln"].schedule.kernels] == [("cube_vector", True)]
    # launch gaps taken out, the split pair wins, and the card says so
    no_gaps = ks.hw.get("ascend910b2").with_overrides(launch_overhead_us=0.0)
    d = ks.build(shell.user_ns["ln"].graph.outputs[0], no_gaps, compare=False)
    assert [k.family for k in d.schedule.kernels] == ["cube", "vector"]
    assert V.metric_cards(d)["fusion"][0].startswith("kept apart")


def test_sys_exit_in_a_cell_is_a_short_cell_error(shell):
    res, cap = run(shell, "bad", "import sys\nsys.exit(3)\n")
    assert not res.success and isinstance(res.error_in_exec, CellError)
    text = cap.stdout + cap.stderr
    assert "SystemExit" in text and ": 3 (cell line 2: sys.exit(3))" in text and "Traceback" not in text


@pytest.mark.parametrize("body, words", [
    ('knob("t", [16], [[16], [32]])\n', ("default [16] is not a plain value", "as a tuple")),
    ('import numpy as np\nknob("t", np.array([1, 2]), [1, 2])\n', ("default array([1, 2]) is not a plain value",)),
    ('knob("t", 16, [16, [32]])\n', ("choice [32] is not a plain value",)),
])
def test_knobs_take_plain_values(shell, body, words):
    res, cap = run(shell, "bad", body + 'out = relu(placeholder((8, 64), "float16", name="x"))\n')
    assert not res.success
    text = cap.stdout + cap.stderr
    assert "KnobError" in text and all(w in text for w in words), text
    assert "Traceback" not in text


def test_set_knobs_refuses_a_value_that_is_not_a_choice_and_keeps_the_controls(shell):
    run(shell, "mla", MLA_CELL)
    st = studio_of(shell, "mla")
    before = st.knob_values()
    with pytest.raises(ks.KnobError, match=r"knob tile_m = 24 is not among its choices \[16, 32, 64\]"):
        st.set_knobs(tile_m=24, tile_n=128)
    assert st.knob_values() == before


@pytest.mark.parametrize("name, words", [
    ("ks", ("the notebook's module kernelstudio", "ks_design")),
    ("np", ("the notebook's module numpy",)),
    ("matmul", ("a kernelstudio name the cell preloads", "my_matmul")),
])
def test_a_design_name_may_not_replace_a_module_or_a_dsl_name(shell, name, words):
    shell.run_cell("import kernelstudio as ks\nimport numpy as np")
    res, cap = run(shell, name, MLA_CELL)
    assert not res.success and isinstance(res.error_in_exec, MagicUsageError)
    assert all(w in str(res.error_in_exec) for w in words), str(res.error_in_exec)
    assert shell.user_ns["ks"] is ks
