"""The Studio's chrome from Python: header, cards, banner, target list, Tune panel and its words."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from IPython.utils.capture import capture_output

import kernelstudio as ks
from kernelstudio.notebook.render.strips import banner_html, capacity_html, header_html, plan_html
from kernelstudio.notebook.views.targets import target_choices
from kernelstudio.plan.choose import planning_target
from kernelstudio.sim.report import _bytes_delta
from kernelstudio.tune import evaluator as tuner_mod
from tests.notebook.cells import MLA_CELL, studio_of


def run(sh, line: str, body: str) -> None:
    with capture_output():
        res = sh.run_cell(f"%%ascend_kernel {line}\n{body}")
    assert res.success, res.error_in_exec


@pytest.fixture
def mla(shell):
    run(shell, "mla --target ascend910b2", MLA_CELL)
    return studio_of(shell, "mla")


@pytest.fixture
def no_db(tmp_path, monkeypatch):
    monkeypatch.setenv("KS_DESIGN_DB", str(tmp_path / "designs.sqlite"))
    tuner_mod._MEMO.clear()
    yield
    tuner_mod._MEMO.clear()


def mla_graph():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    return ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1) + b, name="out")


# --- the target list --------------------------------------------------------------------------------

def test_the_target_list_of_a_matmul_design_leaves_out_coupled_chips_and_marks_provisional(mla):
    options = dict((v, label) for label, v in mla.target.options)
    assert "ascend310p3" not in options
    assert options["ascend950"] == "ascend950 (provisional)"
    assert options["ascend910b2"] == "ascend910b2" and mla.target.value == "ascend910b2"
    for name in ks.hw.names():  # listed: the separated chips, "(provisional)" where the profile says so
        p = ks.hw.get(name)
        assert (name in options) == (p.arch == "separated")
        if name in options:
            assert options[name].endswith(" (provisional)") == p.provisional
    assert "not listed: ascend310p3 (coupled chip; matmul kernels need a separated one)" in mla.target_note.value
    assert "ascend310p3 is a coupled chip" in mla.target.tooltip


def test_a_vector_design_lists_every_target(shell):
    run(shell, "vec", 'x = placeholder((64, 512), "float16", name="x")\nout = gelu(layer_norm(x, axis=-1))\n')
    st = studio_of(shell, "vec")
    assert [v for _, v in st.target.options] == list(ks.hw.names())
    assert st.target_note.value == ""


@pytest.mark.parametrize("make", [mla_graph, lambda: ks.gelu(ks.placeholder((64, 512), "float16", name="x"))],
                         ids=["matmul", "vector"])
def test_the_target_list_agrees_with_lowering_on_every_profile(make):
    """The list's feature test and lower() give the same answer on every profile (lowering the auto schedule)."""
    out = make()
    d = ks.build(out, "ascend910b2", compare=False)
    ok = {c["name"]: c["ok"] for c in target_choices(d)}
    assert set(ok) == set(ks.hw.names())
    for name in ks.hw.names():
        with planning_target(name):
            s = ks.create_schedule(out)
        try:
            ks.lower(s, name)
            lowered = True
        except ks.UnsupportedError:
            lowered = False
        assert ok[name] == lowered, name


def test_a_target_switch_clears_the_tune_results_and_says_so(mla, no_db):
    panel = mla.open_tune()
    panel.strategy.value, panel.budget.value = "random", 3
    r = panel.run(executor="inline", progress=False)
    assert r is not None and r.target == "ascend910b2" and not panel.apply_button.disabled
    mla.target.value = "ascend910b4"
    assert mla.session.design.target == "ascend910b4"
    assert panel.result is None and panel.apply_button.disabled
    assert panel.text == ("target changed from ascend910b2 to ascend910b4: the results tuned on ascend910b2 were "
                          "cleared (press Run to tune on ascend910b4)")
    assert panel.out.outputs[0]["text"].strip() == panel.text
    panel.result = r  # results of the old target, e.g. kept by hand: apply best refuses them
    with pytest.raises(ks.TuneError, match="tuned on ascend910b2, the Studio is on ascend910b4; press Run"):
        panel.apply_best()
    assert mla.knob_values()["tile_m"] == 16


# --- the header, cards and toggles ------------------------------------------------------------------

def test_the_header_says_which_schedule_each_time_is_for(mla):
    d = mla.session.design
    choice = d.schedule.choices[0]
    assert "mla</b> &middot; ascend910b2 &middot; 1 kernel: cube_vector" in mla.header.value
    head = mla.plan.value
    assert f"fusion, chosen at the auto schedule: fusion pays on ascend910b2: fused {choice.fused_us:,.2f} us" in head
    assert f"the cards below are for the knobs as set: {d.sim.time_us:,.2f} us" in head
    assert f"{d.sim.time_us:,.2f} us</div>" in mla.cards.value and "predicted time, knobs as set" in mla.cards.value
    mla.set_knobs(tile_m=32)
    assert f"knobs as set: {mla.session.design.sim.time_us:,.2f} us" in mla.plan.value


def test_the_header_row_wraps_instead_of_squeezing_its_buttons(mla):
    row = mla.children[0]
    assert row.children[:5] == (mla.header, mla.advice_button, mla.what_if_button, mla.tune_button, mla.trace_button)
    assert row.layout.flex_flow == "row wrap"
    for b in (mla.advice_button, mla.what_if_button, mla.tune_button, mla.trace_button):
        assert b.layout.flex == "0 0 auto"  # never shrunk below its words
    assert mla.children[1] is mla.plan  # the long fusion line gets a row of its own, under the buttons


def test_a_toggle_says_on_or_off(mla):
    t = mla._knob_widgets["double_buffer"]
    assert (t.value, t.description, t.button_style, t.icon) == (True, "double_buffer: on", "info", "check-square-o")
    t.value = False
    assert (t.description, t.button_style, t.icon) == ("double_buffer: off", "", "square-o")
    assert mla.session.design.knobs["double_buffer"] is False
    mla.set_knobs(double_buffer=True)
    assert t.description == "double_buffer: on" and t.button_style == "info"


# --- the error banner -------------------------------------------------------------------------------

class _Boxes(HTMLParser):
    """Every element's tag, style (as a dict) and its ancestors' styles."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[dict[str, str]] = []
        self.seen: list[tuple[dict[str, str], list[dict[str, str]]]] = []

    def handle_starttag(self, tag, attrs):
        raw = dict(attrs).get("style") or ""
        style = {k.strip(): v.strip() for k, _, v in (p.partition(":") for p in raw.split(";")) if k.strip()}
        style["class"] = dict(attrs).get("class") or ""
        self.seen.append((style, list(self.stack)))
        self.stack.append(style)

    def handle_endtag(self, tag):
        self.stack.pop()


def _pct(v: str) -> float:
    m = re.fullmatch(r"(?:0 0 )?([\d.]+)%?", v)
    assert m, v
    return float(m.group(1))


def test_the_banners_overflow_bar_stays_inside_the_banner(mla):
    mla._knob_widgets["tile_k"].value = 128  # double-buffered 256x128 fp16 B tiles: L0B at 200 %
    html = mla.banner.value
    assert "200 % (128 / 64 KiB, over by 64 KiB)" in html.replace("&nbsp;", " ")
    assert 'title="131,072 / 65,536 B"' in html
    p = _Boxes()
    p.feed(html)
    banner = p.seen[0][0]
    assert banner["class"] == "ks-banner" and banner["overflow"] == "hidden" and banner["max-width"] == "100%"
    [bar] = [s for s, _ in p.seen if s["class"] == "ks-bar"]
    assert bar["overflow"] == "hidden" and bar["width"] == "100%"
    grid = next(s for s, up in p.seen if s.get("display") == "grid")
    assert "minmax(80px, 260px)" in grid["grid-template-columns"] and grid["max-width"] == "100%"
    inside = [s for s, up in p.seen if bar in up]
    flow = [_pct(s["flex"]) for s in inside if "flex" in s]
    assert len(flow) == 2 and sum(flow) <= 100.0  # the two B slots, scaled to the used bytes
    placed = [s for s in inside if s.get("position") == "absolute"]
    assert placed and all(_pct(s["left"]) + _pct(s["width"]) <= 100.0 + 1e-9 for s in placed)
    tick = next(s for s in placed if "border-right" in s)
    excess = next(s for s in placed if "repeating-linear-gradient" in s.get("background", ""))
    assert _pct(tick["width"]) == pytest.approx(50.0) and _pct(excess["left"]) == pytest.approx(50.0)
    for s, _ in p.seen:  # no fixed width wider than the bar, nothing let out
        for v in re.findall(r"(\d+)px", s.get("width", "")):
            assert int(v) <= 260
        assert s.get("overflow") != "visible"


def test_a_bar_within_capacity_has_no_overflow_part():
    bar = {"kernel": "k", "tier": "UB", "capacity": 1000, "used": 400, "pct": 40.0,
           "segments": [{"buffer": "a", "slot": 0, "depth": 1, "bytes": 400, "queue": "VECIN", "purpose": ""}]}
    html = banner_html("x", bar)
    assert "over by" not in html and "repeating-linear-gradient" not in html
    assert "flex:0 0 40.00%" in html and "width:100.00%" in html  # the capacity tick at the bar's end


# --- the feasibility map ----------------------------------------------------------------------------

def tiles():
    out = mla_graph()
    s = ks.create_schedule(out)
    s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512]))
    s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def _cell(data, xy):
    return data["xs"].index(xy[0]), data["ys"].index(xy[1])


def test_the_feasibility_map_marks_the_default_in_its_own_cell(no_db):
    go = pytest.importorskip("plotly.graph_objects")
    from kernelstudio.tune.feasibility import feasibility_figure

    r = ks.tune(tiles, target="ascend910b2", budget=4, strategy="random", seed=0, executor="inline",
                progress=False, db=False)
    # the default's slice: its outline sits on its own cell, which shows the default's own time
    data = r.feasibility_data("tile_n", "tile_k", at="default")
    assert data["base"] == r.default_config and data["default_note"] is None
    i, j = _cell(data, data["default_xy"])
    assert data["default_xy"] == (256, 64)
    cell = data["cells"][j][i]
    assert cell["is_default"] and cell["time_us"] == pytest.approx(r.default.time_us, rel=1e-12)
    fig = feasibility_figure(data)
    [outline] = [s for s in fig.layout.shapes if s.name == "default"]
    assert (outline.x0 + outline.x1) / 2 == pytest.approx(i) and (outline.y0 + outline.y1) / 2 == pytest.approx(j)
    assert outline.x1 - outline.x0 < 1 and outline.fillcolor == "rgba(0,0,0,0)"  # within the cell, number readable
    assert [t.name for t in fig.data] == ["illegal", "predicted time"] and isinstance(fig, go.Figure)
    # a slice without the default: no default outline anywhere, a note says where it is and its time
    other = r.feasibility_data("tile_n", "tile_k", at={"double_buffer": False})
    assert other["default_xy"] is None and not any(c["is_default"] for row in other["cells"] for c in row)
    assert other["default_note"] == (f"the default ({r.default.time_us:.2f} us) is not in this slice: it has "
                                     "double_buffer=True; feasibility_map(..., at='default') draws its slice")
    fig = feasibility_figure(other)
    assert "default" not in [s.name for s in fig.layout.shapes]
    assert other["default_note"].replace("; ", ";<br>") in fig.layout.annotations[0].text
    if other["best_xy"] is not None:  # the best, when in the slice, is outlined in its own cell too
        bi, bj = _cell(other, other["best_xy"])
        [b] = [s for s in fig.layout.shapes if s.name == "best"]
        assert (b.x0 + b.x1) / 2 == pytest.approx(bi) and other["cells"][bj][bi]["is_best"]


def test_feasibility_at_must_name_knobs(no_db):
    r = ks.tune(tiles, target="ascend910b2", budget=2, strategy="grid", executor="inline", progress=False, db=False)
    with pytest.raises(ks.TuneError, match="at= names 'tile_q', not a knob of tiles; its knobs are tile_n"):
        r.feasibility_data("tile_n", "tile_k", at={"tile_q": 1})
    with pytest.raises(ks.TuneError, match="at='worst'; use 'best', 'default' or a dict"):
        r.feasibility_data("tile_n", "tile_k", at="worst")


# --- words --------------------------------------------------------------------------------------------

def test_the_comparison_table_words_bytes_with_one_sign(mla):
    d = mla.session.design
    table = d.report(show=False)
    row = next(line for line in table.splitlines() if line.startswith("GM traffic (MB)"))
    f, u = d.sim.metrics["gm_bytes"], d.unfused_sim.metrics["gm_bytes"]
    assert f != u and row.endswith(f"{abs(u - f) / 1e6:.3f} MB {'less' if f < u else 'more'} ({(f - u) / u:+.1%})")
    assert "saved" not in table
    assert _bytes_delta(22.632e6, 14.233e6) == "8.399 MB more (+59.0%)"
    assert _bytes_delta(1.02e6, 1.28e6) == "0.260 MB less (-20.3%)"
    assert _bytes_delta(5.0, 5.0) == "same"


def test_the_header_counts_the_kinds_of_a_plan_of_many_kernels():
    """MlaProlog's 21 kernels read as their kinds in launch order, each counted (not a wall of 21 entries)."""
    cards = {"design": "mla_prolog", "target": "ascend910b2", "kernels": ["k"] * 5,
             "families": ["cube_vector", "cube", "vector", "cube", "vector"],
             "kernel_types": ["MIX_AIC_1_2", "AIC_ONLY", "AIV_ONLY", "AIC_ONLY", "AIV_ONLY"]}
    assert ("5 kernels: cube_vector (MIX_AIC_1_2), 2 cube (AIC_ONLY), 2 vector (AIV_ONLY)</div>"
            in header_html(cards))
    one = {**cards, "kernels": ["k"], "families": ["vector"], "kernel_types": ["AIV_ONLY"]}
    assert "1 kernel: vector (AIV_ONLY)</div>" in header_html(one)


def test_the_fusion_line_of_a_plan_of_many_kernels_names_its_kernel():
    """MlaProlog's fusion choice times one kernel (35.69 us) beside the whole plan's time: the line names it."""
    note = "fusion pays on ascend910b2: fused 35.69 us with sync_all vs split 39.65 us"
    cards = {"kernels": ["rms_norm_mul_1", "matmul_1", "query"], "fusion": [note],
             "fusion_kernels": ["rms_norm_mul_1"], "time_us": 271.23}
    text = plan_html(cards)
    assert f"fusion of kernel <b>rms_norm_mul_1</b>, chosen at the auto schedule: {note}" in text
    assert "those times are for that kernel alone, at auto tiles; the cards below are for the whole plan of " \
           "3 kernels, knobs as set: 271.23 us" in text
    one = {**cards, "kernels": ["rms_norm_mul_1"], "time_us": 35.69}
    assert f"fusion, chosen at the auto schedule: {note}" in plan_html(one) and "kernel <b>" not in plan_html(one)


def test_capacity_numbers_read_in_kib_and_fit_one_line():
    """524,288 / 524,288 B wrapped at 1,100 px: the label reads 512 / 512 KiB (the bytes stay in its tooltip)."""
    bar = {"kernel": "matmul_1", "tier": "L1", "capacity": 524_288, "used": 524_288, "pct": 100.0, "segments": []}
    text = capacity_html([bar])
    # non-breaking spaces: a narrow box (the error banner's bar) breaks the label only between its parts
    assert "100&nbsp;% (512&nbsp;/&nbsp;512&nbsp;KiB)" in text and 'title="524,288 / 524,288 B"' in text
    half = {**bar, "used": 1_536 + 524_288 // 4}
    assert "(129.5&nbsp;/&nbsp;512&nbsp;KiB)" in capacity_html([half])
    small = {**bar, "capacity": 512, "used": 100, "pct": 19.5}
    assert "(100&nbsp;/&nbsp;512&nbsp;B)" in capacity_html([small])


def test_a_long_kernel_name_in_a_capacity_row_ends_in_an_ellipsis_and_is_whole_in_its_tooltip():
    """attention_out read "attention_ou": a cut name looked like a typo."""
    bar = {"kernel": "attention_out", "tier": "UB", "capacity": 196_608, "used": 1_024, "pct": 0.5, "segments": []}
    text = capacity_html([bar])
    assert "attention_o\u2026 UB</span>" in text and 'title="attention_out UB"' in text
    assert "matmul_1 UB</span>" in capacity_html([{**bar, "kernel": "matmul_1"}])


def test_a_pass_diff_is_one_escaped_span_per_line_coloured_by_kind():
    from kernelstudio.notebook.render import diff_html

    diff = [(" ", "kernel k"), (" ", "  a <- b & c"), ("-", 'x = "1"'), ("+", "y = '2'"), ("+", "two\nlines"),
            (" ", "")]
    body = re.search(r"<pre[^>]*>(.*)</pre>", diff_html(diff), re.S).group(1)
    spans = re.findall(r'<span style="display:block; background:([^;]+);">(.) (.*?)</span>', body, re.S)
    assert spans == [("transparent", " ", "kernel k"), ("transparent", " ", "  a &lt;- b &amp; c"),
                     ("#ffe3e3", "-", "x = &quot;1&quot;"), ("#d3f9d8", "+", "y = &#x27;2&#x27;"),
                     ("#d3f9d8", "+", "two\nlines"), ("transparent", " ", "")]
    assert body.count("<span") == len(diff) and diff_html([]).count("<span") == 0
    pre = re.search(r"<pre style=\"([^\"]*)\"", diff_html(diff)).group(1)
    assert "white-space:pre;" in pre and "min-width:100%" in pre  # long lines scroll, never wrap
