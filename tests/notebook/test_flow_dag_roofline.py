"""The Memory flow, Fused DAG and Roofline tabs: their data against the simulator, the graph and the profile,
and what their renderers put on the figures."""

from __future__ import annotations

import re

import pytest

import kernelstudio as ks
from kernelstudio.notebook import render as R
from kernelstudio.notebook import views as V
from kernelstudio.notebook.render import flow as RF
from kernelstudio.notebook.render.base import nbytes
from tests.reference_kernels import conv_bias_relu, mla_prolog_lite


def _tour():
    """The design of notebooks/00_tour.ipynb's Studio cell (its knobs at their defaults)."""
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5) + b, name="out")
    s = ks.create_schedule(out)
    s[out].split("m", 16).split("n", 256).split("k", 64).double_buffer(True)
    return ks.build(out, "ascend910b2", schedule=s, name="mla_prolog_lite")


def _vector():
    x = ks.placeholder((256, 512), "float16", name="x")
    g = ks.placeholder((512,), "float16", name="g")
    return ks.build(ks.relu(ks.rms_norm(x) * g), "ascend910b2")


@pytest.fixture(scope="module")
def designs():
    return {"tour": _tour(), "vector": _vector(), "conv": ks.build(conv_bias_relu(), "ascend910b2"),
            "mla": ks.build(mla_prolog_lite(), "ascend910b2")}


# --- memory flow ---------------------------------------------------------------------------------------------

_MAY_DIFFER = {"L1", "L0C", "UB", "workspace"}


def _check_balance(d: dict) -> None:
    """Each node's in/out are the sums of its links; sources only send, sinks only receive; a node that only
    moves data sends what it takes; a node that may differ (L1 reuse, Mmad, vector compute, workspace read
    back) says both numbers and why in its hover."""
    nodes, links = d["nodes"], d["links"]
    for i, n in enumerate(nodes):
        got = sum(lk["bytes"] for lk in links if lk["target"] == i)
        sent = sum(lk["bytes"] for lk in links if lk["source"] == i)
        assert (n["in"], n["out"]) == (got, sent), n["name"]
        assert got + sent > 0, f"{n['name']} is drawn without a link"
        if n["kind"] == "source":
            assert got == 0 and sent > 0
        elif n["kind"] == "sink":
            assert sent == 0 and got > 0
        elif got != sent:
            assert n["name"] in _MAY_DIFFER and not n["balanced"], (n["name"], got, sent)
            assert f"{got:,} B in, {sent:,} B out: " in n["hover"] and len(n["hover"]) > 60
        else:
            assert n["balanced"], n["name"]
    assert all(lk["bytes"] > 0 and lk["source"] != lk["target"] for lk in links)


def _legs(d: dict) -> dict[str, int]:
    names = [n["name"] for n in d["nodes"]]
    return {f"{names[lk['source']]} -> {names[lk['target']]}": lk["bytes"] for lk in d["links"]}


@pytest.mark.parametrize("which", ["tour", "vector", "conv", "mla"])
def test_every_node_of_the_flow_balances_or_says_why(designs, which):
    d = designs[which]
    flow = V.flow_data(d)
    for plan, sim in (("fused", d.sim), ("unfused", d.unfused_sim)):
        f = flow[plan]
        _check_balance(f)
        m = sim.metrics
        legs = _legs(f)
        # reads: misses from HBM, hits from L2 (the workspace's reads are L2 hits drawn at the workspace)
        assert legs["HBM (read) -> GM read"] == sim.traffic["HBM->L2"] == m["hbm_read_bytes"]
        ws_reads = sim.traffic.get("WS->UB", 0)
        assert abs(legs.get("L2 (read) -> GM read", 0) + ws_reads - m["l2_read_bytes"]) <= 1
        # writes: what L2 writes back reaches HBM; the workspace stays in L2
        assert legs.get("GM write -> HBM (written back)", 0) == sim.traffic.get("L2->HBM", 0) == m["hbm_write_bytes"]
        # GM read + GM write + the workspace's two legs are every GM byte the simulator counts
        gm_side = f["gm_read_bytes"] + f["gm_write_bytes"] + sim.traffic.get("L0C->WS", 0) + ws_reads
        assert gm_side == sum(b for e, b in sim.traffic.items() if ("GM" in e or "WS" in e) and "HBM" not in e)
        assert abs(gm_side - m["gm_bytes"]) <= 1
        # every data move of the simulator is one link, with its bytes
        moves = {lk["edge"]: lk["bytes"] for lk in f["links"] if "->" in lk["edge"] and "Mmad" not in lk["edge"]
                 and lk["edge"] not in ("HBM->L2", "L2->HBM")}
        assert moves == {e: b for e, b in sim.traffic.items() if b > 0 and e not in ("HBM->L2", "L2->HBM")}
        assert f["total_bytes"] == sum(moves.values())
        assert f["gm_bytes"] == m["gm_bytes"]


@pytest.mark.parametrize("which", ["tour", "mla"])
def test_the_unbalanced_nodes_are_exactly_reuse_mmad_and_vector(designs, which):
    d = designs[which]
    t = d.sim.traffic
    f = V.flow_data(d)["fused"]
    off = {n["name"]: (n["in"], n["out"]) for n in f["nodes"] if n["in"] != n["out"] and n["kind"] not in
           ("source", "sink")}
    want = {
        "L1": (t["GM->L1"], t["L1->L0A"] + t["L1->L0B"]),  # a tile loaded once is moved on for every reuse
        "L0C": (t["L1->L0A"] + t["L1->L0B"], t["L0C->WS"]),  # Mmad reduces k: operand bytes in, results out
        "UB": (t["GM->UB"] + t["WS->UB"], t["UB->GM"]),  # bias + C tile in, one output out
    }
    assert off == {k: v for k, v in want.items() if v[0] != v[1]}
    assert {"L0C", "UB"} <= set(off)
    # L1 moves a byte on more than once exactly when the plan keeps a panel resident across C tiles
    tiling = dict(d.program.kernels[0].tiling)
    assert ("L1" in off) == (tiling.get("step_m", 1) * tiling.get("step_n", 1) > 1)
    hover = {n["name"]: n["hover"] for n in f["nodes"]}
    assert "Mmad" in hover["L0C"] and "vector" in hover["UB"]
    assert "reuses" in hover["L1"] or "L1" not in off
    # the hand-off of the fused kernel: L0C -> workspace -> UB, in L2, never to HBM
    legs = _legs(f)
    assert legs["L0C -> workspace"] == legs["workspace -> UB"] == t["L0C->WS"]
    assert not any("L0C -> GM write" == k for k in legs)
    assert "L0C -> GM write" in _legs(V.flow_data(d)["unfused"])


def test_flow_balances_on_random_designs():
    from tests.property.test_random_pipeline import random_graph, random_schedule

    checked = 0
    for seed in range(0, 60, 3):
        out, what = random_graph(seed)
        try:
            prog = ks.lower(random_schedule(seed, out), "ascend910b2")
        except ks.KernelStudioError:
            continue
        sim = ks.simulate(prog)
        f = V.sankey_data(sim.traffic, sim.metrics["cube_flops"])
        _check_balance(f)
        legs = _legs(f)
        assert legs["HBM (read) -> GM read"] == sim.metrics["hbm_read_bytes"], what
        assert legs.get("GM write -> HBM (written back)", 0) == sim.metrics["hbm_write_bytes"], what
        checked += 1
    assert checked >= 12


def test_a_copy_inside_one_tier_is_said_not_drawn():
    f = V.sankey_data({"GM->UB": 100, "UB->UB": 40, "UB->GM": 100, "HBM->L2": 100, "L2->HBM": 100})
    _check_balance(f)
    ub = next(n for n in f["nodes"] if n["name"] == "UB")
    assert f["within"] == {"UB": 40} and "40 B copied within UB" in ub["hover"]
    assert f["total_bytes"] == 240


def test_a_flow_with_a_cycle_keeps_its_columns_in_stage_order():
    """The fused attention kernel's workspace feeds UB and L1 and takes their P and S back: the columns still run
    GM read -> L1 -> L0 -> L0C -> workspace -> UB -> GM write, one apart, with no column past the sinks'."""
    f = V.sankey_data({"GM->L1": 300, "L1->L0A": 200, "L1->L0B": 300, "L0C->WS": 400, "WS->UB": 500,
                       "UB->WS": 200, "WS->L1": 200, "UB->GM": 50, "HBM->L2": 300, "L2->HBM": 50})
    col = {n["name"]: n["column"] for n in f["nodes"]}
    assert [col[n] for n in ("GM read", "L1", "L0A", "L0C", "workspace", "UB", "GM write")] == [1, 2, 3, 4, 5, 6, 7]
    assert col["HBM (read)"] == 0 and col["HBM (written back)"] == 8
    assert max(col.values()) == 8


def test_flow_figures_have_their_own_titles_and_byte_labels(designs):
    import html

    d = designs["tour"]
    flow = V.flow_data(d)
    box = R.new_flow_figure()
    R.update_flow(box, flow)
    fused, unfused = (c.value for c in box.children)
    assert fused.count("<b>fused plan</b>") == 1 and "unfused" not in fused
    assert unfused.count("<b>unfused plan</b>") == 1
    assert nbytes(flow["fused"]["gm_bytes"]) in fused and nbytes(flow["unfused"]["gm_bytes"]) in unfused
    for page, f in ((fused, flow["fused"]), (unfused, flow["unfused"])):
        svg = page[page.index("<svg"):]
        assert svg.startswith('<svg class="ks-sankey" width="100%"')  # follows its container, scrolls below
        assert f"min-width:{RF.MIN_WIDTH_PX}px" in svg
        labels = [html.unescape(re.sub(r"<[^>]+>", "|", m)) for m in re.findall(
            r'<text class="ks-node-label"[^>]*>(.*?)<title>', svg)]
        assert len(labels) == len(f["nodes"])
        for n, text in zip(f["nodes"], labels, strict=True):
            parts = [p for p in text.split("|") if p]
            short = RF._short_bytes  # three significant figures on the label; the hover has every byte
            if n["kind"] == "source":
                assert parts == [n["short"], short(n["out"])]
            elif n["in"] == n["out"] or n["kind"] == "sink":
                assert parts == [n["short"], short(n["in"])]
            else:
                assert parts == [n["short"], f"in {short(n['in'])}", f"out {short(n['out'])}"]
            assert f"{n['in']:,}" in n["hover"] or f"{n['out']:,}" in n["hover"] or _b_in(n)
        hovers = [html.unescape(t) for t in re.findall(r'<path class="ks-band"[^>]*><title>(.*?)</title>', svg)]
        assert sorted(hovers) == sorted(lk["hover"] for lk in f["links"])
    R.update_flow(box, {"fused": flow["fused"], "unfused": None})
    assert "compare is off" in box.children[1].value and "<svg" not in box.children[1].value


def test_flow_bands_fit_their_nodes_on_one_scale(designs):
    """Each band is its bytes at the scale both plans share; the bands on a node's side stack inside it."""
    flow = V.flow_data(designs["mla"])
    per_byte = RF._scale([flow["fused"], flow["unfused"]])
    for plan in ("fused", "unfused"):
        f = flow[plan]
        geo = RF._layout(f, per_byte)
        assert len(geo["bands"]) == len(f["links"])
        for i, n in enumerate(f["nodes"]):
            assert geo["h"][i] == pytest.approx(max(2.0, max(n["in"], n["out"]) * per_byte))
            for side, at in (("source", 1), ("target", 3)):
                ends = sorted((b[at], b[at] + b[2]) for b in geo["bands"] if b[0][side] == i)
                for (_, a1), (b0, _) in zip(ends, ends[1:], strict=False):
                    assert a1 == pytest.approx(b0)  # stacked without overlap
                if ends:
                    assert ends[0][0] == pytest.approx(geo["y"][i])
                    assert ends[-1][1] <= geo["y"][i] + geo["h"][i] + len(ends) + 1e-6  # 1 px floor per band
        for lk, _, w, _ in geo["bands"]:
            assert w == pytest.approx(max(1.0, lk["bytes"] * per_byte))
    tallest = max(RF._column_bytes(flow[p]) for p in ("fused", "unfused"))
    assert tallest * per_byte == pytest.approx(RF._TALLEST)


# --- fused DAG -----------------------------------------------------------------------------------------------

def _clusters(dot: str) -> list[str]:
    return re.findall(r'subgraph "?(cluster_[^" ]+)"? \{', dot)


def test_dag_has_one_cluster_per_kernel_and_constants_inside_it(designs):
    d = designs["tour"]
    dot = V.dag_dot(d)
    names = _clusters(dot)
    assert len(names) == len(set(names))
    kernels = [n for n in names if n.startswith("cluster_kernel_")]
    assert len(kernels) == len(d.schedule.kernels) == 1
    top = [n for n in names if not n.startswith(("cluster_kernel_", "cluster_k", "cluster_legend"))]
    assert top == []  # no composite cluster outside the kernels (it held only the constants)
    kernel = dot[dot.index('subgraph "cluster_kernel_0"'):dot.index("subgraph cluster_legend")]
    for const in ("layer_norm_const", "gelu_const", "gelu_const_1", "gelu_const_2"):
        assert f'"{const}" [' in kernel, const
    assert kernel.count('label="layer_norm#0"') == 1 and dot.count('label="layer_norm#0"') == 1


def test_unfused_dag_puts_each_constant_in_the_kernel_that_uses_it(designs):
    s = ks.create_schedule(designs["tour"].graph.outputs[0], fuse=False)
    assert len(s.kernels) > 1
    dot = ks.to_dot(s.outputs, clusters=[(k.name, k.nodes) for k in s.kernels])
    assert len(set(_clusters(dot))) == len(_clusters(dot))
    body = dot[:dot.index("subgraph cluster_legend")]
    blocks = body.split('  subgraph "cluster_kernel_')[1:]
    kernel_of = {name: i for i, b in enumerate(blocks) for name in re.findall(r'\n\s+"(\w+)" \[', b)}
    consts = [c for c in re.findall(r'"(\w+)" \[label="[^"]*", shape=ellipse', dot)]
    assert set(consts) == {"layer_norm_const", "gelu_const", "gelu_const_1", "gelu_const_2"}
    for c in consts:
        users = re.findall(rf'"{c}" -> "(\w+)"', dot)
        assert users and c in kernel_of and kernel_of[c] == kernel_of[users[0]], c


def test_dag_box_fits_by_default_and_zooms(designs):
    svg = V.render_svg(V.dag_dot(designs["tour"]))
    w, h = (float(x) for x in re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"', svg).groups())
    fit = R.dag_html(svg)
    head = fit[:fit.index(">", fit.index("<svg")) + 1]
    assert 'width="100%"' in head and "max-height:75vh" in head and f"max-width:{w:.0f}pt" in head
    assert not re.search(r'\swidth="[\d.]+pt"', head)  # Graphviz's fixed size is gone
    assert "overflow:hidden" in fit[:fit.index("<svg")]
    big = R.dag_html(svg, 2.0)
    assert f'width="{2 * w:.0f}pt" height="{2 * h:.0f}pt"' in big and "overflow:auto" in big
    box = R.new_dag_view()
    R.update_dag(box, svg)
    zoom, view = box.children
    assert zoom.value == "fit" and view.value == fit
    zoom.value = "100 %"
    assert view.value == R.dag_html(svg, 1.0) and f'width="{w:.0f}pt"' in view.value
    R.update_dag(box, None, "no Graphviz <renderer>")
    assert view.value == "<pre>no Graphviz &lt;renderer&gt;</pre>"


# --- roofline ------------------------------------------------------------------------------------------------

def test_roofline_ticks_carry_their_magnitude():
    t = V.log_ticks(0.3, 2500)
    assert t["vals"] == [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
    assert t["text"] == ["0.1", "1", "10", "100", "1k", "10k"]
    assert V.log_ticks(0.004, 0.05)["text"] == ["0.001", "0.01", "0.1"]
    assert V.log_ticks(2e5, 3e6)["text"] == ["100k", "1M", "10M"]


def test_roofline_labels_name_the_roofs_with_their_values_and_sources(designs):
    rf = V.roofline_data(designs["tour"])
    prof = ks.hw.get("ascend910b2")
    lb = rf["labels"]
    assert lb["peak"]["text"] == f"float16 cube peak {prof.peak_flops('float16') / 1e12:,.1f} TFLOPS"
    assert lb["peak"]["text"] == "float16 cube peak 353.9 TFLOPS"
    assert prof.source("hbm_bytes_per_s").startswith("measured")
    assert lb["hbm"]["text"] == "HBM 1,260 GB/s (measured)"
    assert prof.source("hbm_bytes_per_s") in lb["hbm"]["hover"]
    assert lb["ridge"]["text"] == f"ridge {rf['ridge']:,.0f} FLOP/B" and lb["ridge"]["x"] == rf["ridge"]
    for a in lb.values():  # plotly places annotations on log axes by log10
        assert 10 ** a["x_log10"] == pytest.approx(a["x"]) and 10 ** a["y_log10"] == pytest.approx(a["y"])
        assert rf["x_range"][0] <= a["x_log10"] <= rf["x_range"][1] + 1e-9
        assert rf["y_range"][0] <= a["y_log10"] <= rf["y_range"][1]
    # the bandwidth label sits on the bandwidth roof
    assert lb["hbm"]["y"] == pytest.approx(lb["hbm"]["x"] * prof.hbm_bytes_per_s / 1e12)
    assert rf["roof"]["x"][1] == rf["ridge"] and rf["roof"]["y"][1:] == [rf["peak_tflops"]] * 2
    derived = V.roofline_data(ks.build(mla_prolog_lite(), "ascend910b4"))
    assert ks.hw.get("ascend910b4").source("hbm_bytes_per_s").startswith("derived")
    assert derived["labels"]["hbm"]["text"] == "HBM 960 GB/s (derived)"


def test_roofline_figure_draws_the_labels_ticks_and_titles(designs):
    rf = V.roofline_data(designs["tour"])
    fig = R.new_roofline_figure()
    R.update_roofline(fig, rf)
    assert fig.layout.xaxis.title.text.startswith("arithmetic intensity (FLOP/byte")
    assert fig.layout.yaxis.title.text == "TFLOPS"
    assert list(fig.layout.xaxis.ticktext) == rf["x_ticks"]["text"] and "1k" in fig.layout.xaxis.ticktext
    assert list(fig.layout.xaxis.tickvals) == rf["x_ticks"]["vals"]
    texts = [a.text for a in fig.layout.annotations]
    assert texts == [rf["labels"][k]["text"] for k in ("peak", "hbm", "ridge")]
    ridge = fig.data[1]
    assert list(ridge.x) == [rf["ridge"]] * 2 and ridge.y[-1] == rf["peak_tflops"]
    assert fig.layout.width is None
    drawn = [p for p in rf["points"] if p["intensity"] > 0 and p["tflops"] > 0]
    assert list(fig.data[2].text) == [p["label"] for p in drawn]


def _b_in(n) -> bool:
    """The node's hover names its bytes in the Studio's byte unit (two decimals)."""
    return nbytes(n["in"]) in n["hover"] or nbytes(n["out"]) in n["hover"]


def test_short_byte_labels_keep_three_significant_figures():
    assert [RF._short_bytes(v) for v in (295_940, 1_130_000, 65_536, 512, 2.5e9)] == [
        "296 KB", "1.13 MB", "65.5 KB", "512 B", "2.5 GB"]

