"""The Studio's views as plain data: each checked against the design it is drawn from."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.notebook import views as V
from kernelstudio.notebook.session import StudioSession
from tests.reference_kernels import conv_bias_relu, mla_prolog_lite


@pytest.fixture(scope="module")
def mla():
    return ks.build(mla_prolog_lite(), "ascend910b2")


@pytest.fixture(scope="module")
def conv():
    return ks.build(conv_bias_relu(), "ascend910b2")


@pytest.mark.parametrize("which", ["mla", "conv"])
def test_sankey_bytes_equal_the_simulated_traffic(which, request):
    d = request.getfixturevalue(which)
    flow = V.flow_data(d)
    for plan, sim in (("fused", d.sim), ("unfused", d.unfused_sim)):
        links = flow[plan]["links"]
        moved = {lk["edge"]: lk["bytes"] for lk in links if "->" in lk["edge"] and "Mmad" not in lk["edge"]}
        assert moved == {e: b for e, b in sim.traffic.items() if b > 0}
        assert flow[plan]["total_bytes"] == sum(b for e, b in sim.traffic.items() if e not in ("HBM->L2", "L2->HBM"))
        assert all(lk["source"] != lk["target"] for lk in links)


def test_flow_shows_hbm_and_l2_behind_gm(mla):
    """The GM reads are fed by HBM (the misses) and L2 (the hits): the node balances (it did not while L2
    was missing from the picture)."""
    f = V.flow_data(mla)["fused"]
    names = [n["name"] for n in f["nodes"]]
    into_gm = {names[lk["source"]]: lk["bytes"] for lk in f["links"] if names[lk["target"]] == "GM read"}
    out_of_gm = sum(lk["bytes"] for lk in f["links"] if names[lk["source"]] == "GM read")
    assert into_gm["HBM (read)"] == mla.sim.metrics["hbm_read_bytes"]
    assert into_gm["HBM (read)"] + into_gm["L2 (read)"] == out_of_gm
    assert f["gm_bytes"] == mla.sim.metrics["gm_bytes"]


def test_fused_flow_has_no_gm_round_trip_of_the_intermediate(mla):
    flow = V.flow_data(mla)
    fused = {lk["edge"] for lk in flow["fused"]["links"]}
    assert {"L0C->WS", "WS->UB"} <= fused  # the C tile goes through the workspace, not a GM output
    assert "L0C->GM" not in fused and "L0C->GM" in {lk["edge"] for lk in flow["unfused"]["links"]}
    assert V.flow_data(mla)["unfused"]["total_bytes"] > flow["fused"]["total_bytes"]


def test_capacity_bars_equal_the_lowered_buffers(mla):
    """The bars read the count the lowering checks (tileir/capacity.py): every buffer slot and the vector
    statements' scratch, per tier."""
    from kernelstudio.tileir.capacity import usage
    from kernelstudio.tileir.scratch import scratch_buffers

    bars = V.capacity_bars(mla.program)
    k = mla.program.kernels[0]
    assert {b["tier"] for b in bars} == {"L1", "L0A", "L0B", "L0C", "UB"}
    use = usage(k)
    for bar in bars:
        bufs = [b for b in k.buffers if b.tier.value == bar["tier"]]
        scratch = scratch_buffers(k) if bar["tier"] == "UB" else {}
        assert bar["used"] == max(n for (_, t), n in use.items() if t == bar["tier"])
        assert bar["used"] == sum(b.nbytes for b in bufs) + sum(n for n, _ in scratch.values())
        assert sum(s["bytes"] for s in bar["segments"]) == bar["used"]
        assert len(bar["segments"]) == sum(b.depth for b in bufs) + len(scratch)
        assert bar["capacity"] == ks.hw.get("ascend910b2").capacity_bytes(bar["tier"])
        assert bar["pct"] == pytest.approx(100 * bar["used"] / bar["capacity"])


def test_capacity_bars_show_the_scratch_of_a_softmax():
    prog = ks.lower(ks.create_schedule(ks.softmax(ks.placeholder((64, 1000), "float16", name="x"))), "ascend910b2")
    ub = next(b for b in V.capacity_bars(prog) if b["tier"] == "UB")
    scratch = [s for s in ub["segments"] if s["queue"] == "TBuf (scratch)"]
    assert scratch, "a softmax's row reductions need a work area, and the UB bar shows it"
    assert ub["used"] == sum(s["bytes"] for s in ub["segments"])


def test_capacity_bars_keep_the_programs_overridden_profile(mla):
    small = ks.hw.get("ascend910b2").with_overrides(ub_bytes=150_000)
    s = ks.create_schedule(mla_prolog_lite(), fuse=True)
    prog = ks.lower(s, small)
    ub = next(b for b in V.capacity_bars(prog) if b["tier"] == "UB")
    assert ub["capacity"] == 150_000
    assert ub["pct"] == pytest.approx(100 * ub["used"] / 150_000)


def test_double_buffering_draws_two_half_slots():
    def bars(db: bool):
        out = mla_prolog_lite()
        s = ks.create_schedule(out)
        s[out].split("m", 16).split("n", 256).split("k", 64).double_buffer(db)
        return {b["tier"]: b for b in V.capacity_bars(ks.lower(s, "ascend910b2"))}

    one, two = bars(False), bars(True)
    l0b1, l0b2 = one["L0B"]["segments"], two["L0B"]["segments"]
    assert len(l0b1) == 1 and len(l0b2) == 2
    assert l0b2[0]["bytes"] == l0b2[1]["bytes"] == l0b1[0]["bytes"]
    assert two["L0B"]["used"] == 2 * one["L0B"]["used"]


def test_capacity_error_carries_the_overflowing_bar():
    out = mla_prolog_lite()
    s = ks.create_schedule(out)
    s[out].split("m", 16).split("n", 256).split("k", 128).double_buffer(True)
    with pytest.raises(ks.CapacityError) as e:
        ks.lower(s, "ascend910b2")
    bar = V.overflow_bar(e.value)
    assert (bar["tier"], bar["used"], bar["capacity"]) == ("L0B", 131072, 65536)
    assert bar["pct"] == pytest.approx(200.0)
    assert [s["slot"] for s in bar["segments"]] == [0, 1]
    assert V.overflow_bar(ks.ScheduleError("no numbers")) is None


def test_timeline_lanes_hold_every_event_of_the_shown_cores(mla):
    tl = V.timeline_data(mla.sim, cores=None, expand=True)  # every group drawn core by core
    per_lane = {}
    for lane in tl["bars"]["lane"]:
        per_lane[lane] = per_lane.get(lane, 0) + 1
    assert sum(lane["events"] for lane in tl["lanes"]) == len(mla.sim.events)
    assert [per_lane.get(i, 0) for i in range(len(tl["lanes"]))] == [lane["events"] for lane in tl["lanes"]]
    assert not tl["lod"]
    labels = [lane["label"] for lane in tl["lanes"]]
    assert labels[0] == "host LAUNCH"
    # grouped per core (a group of identical cores together, in core order), pipes in data-flow order
    assert labels.index("core0.cubecore0 MTE2") < labels.index("core0.cubecore0 CUBE") < \
        labels.index("core1.cubecore0 MTE2") < labels.index("core0.veccore0 MTE2") < labels.index("core0.veccore1 MTE2")


def test_timeline_shows_the_first_cores_and_says_so(mla):
    tl = V.timeline_data(mla.sim, cores=1)
    assert tl["cores_shown"] == [0] and tl["cores_total"] == mla.sim.kernels[0]["blocks"]
    assert all(lane["core"] in ("host", "core0.cubecore0", "core0.veccore0", "core0.veccore1") for lane in tl["lanes"])


def test_ping_and_pong_slots_get_two_shades(mla):
    tl = V.timeline_data(mla.sim, cores=1)
    b = tl["bars"]
    mte2 = {c for c, p in zip(b["color"], b["pipe"], strict=True) if p == "MTE2"}
    assert len(mte2) == 2  # double-buffered loads alternate slots


def test_level_of_detail_merges_long_lanes():
    from tests.sim.programs import vector_program

    sim = ks.simulate(vector_program(rows=4096, cols=64, tile=8, depth=2, block_dim=1))
    full = V.timeline_data(sim, cores=None, max_per_lane=100000)
    lod = V.timeline_data(sim, cores=None, max_per_lane=50)
    v = [i for i, lane in enumerate(lod["lanes"]) if lane["pipe"] == "VECTOR"][0]
    assert lod["lanes"][v]["events"] > 50
    assert sum(1 for x in lod["bars"]["lane"] if x == v) == 50
    assert lod["lod"][lod["lanes"][v]["label"]] == lod["lanes"][v]["events"]
    # merged spans cover exactly the time of the events they stand for
    spans = [(s, e) for x, s, e in zip(lod["bars"]["lane"], lod["bars"]["start"], lod["bars"]["end"], strict=True)
             if x == v]
    evs = [(s, e) for x, s, e in zip(full["bars"]["lane"], full["bars"]["start"], full["bars"]["end"], strict=True)
           if full["lanes"][x]["pipe"] == "VECTOR"]
    assert spans[0][0] == min(s for s, _ in evs) and spans[-1][1] == max(e for _, e in evs)
    assert not full["lod"]


def test_cross_core_flags_become_arrows():
    # the row-block plan hands each row block over with cross-core flags (sync_all has none: one barrier)
    sim = ks.simulate(ks.lower(ks.create_schedule(mla_prolog_lite(), fuse=True), "ascend910b2"))
    tl = V.timeline_data(sim, cores=1)
    assert tl["arrows"]
    for a in tl["arrows"]:
        assert tl["lanes"][a["from_lane"]]["core"] == "core0.cubecore0"
        assert tl["lanes"][a["to_lane"]]["pipe"] == "FLOWCTRL"


def test_unfused_plan_on_the_same_axis(mla):
    tl = V.timeline_data(mla.sim, unfused=mla.unfused_sim)
    un = tl["unfused"]
    assert [k["name"] for k in un["kernels"]] == [k["name"] for k in mla.unfused_sim.kernels]
    assert len(un["gaps"]) == len(mla.unfused_program.kernels)
    assert un["time_us"] == mla.unfused_sim.time_us


def test_cards_and_what_changed(mla):
    cards = V.metric_cards(mla)
    assert cards["speedup"] == pytest.approx(mla.unfused_sim.time_us / mla.sim.time_us)
    assert cards["gm_bytes"] == mla.sim.metrics["gm_bytes"]
    assert cards["bottleneck"] in ("MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP")
    src = "out = relu(placeholder((256, 512), 'float16', name='x'))\ns = create_schedule(out)\n" \
          "s[out].split(0, knob('rows', 16, [8, 16, 32]))\n"
    ses = StudioSession("v", src)
    a = ses.rebuild()
    b = ses.rebuild({"rows": 32})
    ch = V.what_changed(a, b, a.code.files, b.code.files)
    assert ch["knobs"] == {"rows": (16, 32)}
    assert ch["d_time_us"] == pytest.approx(b.sim.time_us - a.sim.time_us)
    assert ch["d_gm_bytes"] == b.sim.metrics["gm_bytes"] - a.sim.metrics["gm_bytes"]
    added, removed = ch["code_lines"]
    assert added > 0 and removed > 0
    assert V.what_changed(None, a) is None


def test_passes_diff_rebuilds_each_text(mla):
    ps = V.passes_data(mla.program)
    assert [p["name"] for p in ps] == [n for n, _ in mla.program.passes] + [n for n, _, _ in ks.ANALYSES]
    assert [p["kind"] for p in ps] == ["pass"] * len(mla.program.passes) + ["analysis"] * len(ks.ANALYSES)
    for p in ps:
        assert "\n".join(line for k, line in p["diff"] if k != "-") == p["text"].rstrip("\n")
    assert ps[0]["removed"] == 0


def test_the_passes_view_prints_the_analyses_the_readers_run(mla):
    """Vector-call expansion, scratch sizing and naming run after the passes (inside the readers' caches);
    the view prints what each decided for the final program."""
    by = {p["name"]: p for p in V.passes_data(mla.program)}
    calls = by["expand_vector_calls"]["text"]
    assert "WholeReduceSum(" in calls  # layer_norm's row mean, as the code writes it
    from kernelstudio.tileir.scratch import scratch_buffers

    for name, (nbytes, _) in scratch_buffers(mla.program.kernels[0]).items():
        assert f"{name}: {nbytes:,} B" in by["size_scratch"]["text"]
    ops = ks.codegen(mla.program)
    assert all(f"op_kernel/{p.split('/')[-1]}" in by["name_operators"]["text"]
               for p in ops.files if p.startswith("op_kernel/"))


def test_dag_has_kernel_clusters_with_fusion_reasons(mla):
    dot = V.dag_dot(mla)
    assert "cluster_kernel_0" in dot and "cube_epilogue" in dot
    assert "tooltip=" in dot
    svg = V.render_svg(dot)
    assert svg.startswith("<svg") and "cube_epilogue" in svg


def test_roofline_points(mla):
    rf = V.roofline_data(mla)
    prof = ks.hw.get("ascend910b2")
    assert rf["peak_tflops"] == pytest.approx(prof.peak_flops("float16") / 1e12)
    assert rf["ridge"] == pytest.approx(prof.peak_flops("float16") / prof.hbm_bytes_per_s)
    labels = [p["label"] for p in rf["points"]]
    assert labels[0] == "fused plan" and labels[-1] == "unfused plan"
    assert rf["points"][0]["tflops"] == pytest.approx(mla.sim.metrics["flops"] / mla.sim.time_us / 1e6)
    # x is the algorithm's intensity (compulsory bytes), so no plan sits above the bandwidth roof
    assert rf["points"][0]["bytes"] == mla.sim.metrics["compulsory_bytes"]
    for p in rf["points"]:
        assert p["tflops"] <= rf["hbm_bytes_per_s"] * p["intensity"] / 1e12 * (1 + 1e-9)
    assert rf["limiter"] == mla.sim.metrics["roofline_limiter"]


def test_code_highlighting_keeps_the_text(mla):
    import html
    import re

    files = V.code_files(mla)
    assert set(files) == set(mla.code.files)
    from kernelstudio.codegen import names_of

    text = files[names_of(mla.program, mla.program.kernels[0]).kernel_file]
    out = V.highlight_cpp(text)
    assert "<span" in out
    plain = html.unescape(re.sub(r"<[^>]+>", "", out))
    for line in text.splitlines()[:40]:
        assert line.strip() in plain


def test_studio_data_has_every_view(mla):
    data = V.studio_data(mla)
    assert set(data) == {"cards", "changed", "capacity", "dag_dot", "flow", "timeline", "idle", "roofline",
                         "passes", "files", "moe"}
    assert data["moe"] is None  # not an ks.ops.moe block
    assert V.studio_data(mla, passes=False)["passes"] is None


def test_code_diff_lines_counts_changed_lines_only() -> None:
    from kernelstudio.notebook.views import code_diff_lines

    old = {"k.cpp": "a\nb\n++i;\nc\nd\n", "gone.h": "x\ny\n"}
    new = {"k.cpp": "a\nb\n--j;\n++i;\nc\nD\n", "new.h": "z\n"}
    # k.cpp: +"--j;", -"d" +"D"; gone.h: -2; new.h: +1
    assert code_diff_lines(old, new) == (3, 3)
    assert code_diff_lines(new, new) == (0, 0)


def test_code_diff_lines_are_the_unified_diffs_plus_and_minus_lines() -> None:
    """The counts are those of the + and - lines of a unified diff of the part between the lines both files keep at
    the top and the bottom: many lines repeated (the matcher junks popular lines from 200 on) and few."""
    import difflib
    import random

    from kernelstudio.notebook.views import code_diff_lines

    def unified(a: list[str], b: list[str]) -> tuple[int, int]:
        head = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        tail = next((i for i, (x, y) in enumerate(zip(a[::-1][:len(a) - head], b[::-1][:len(b) - head], strict=False))
                     if x != y), min(len(a), len(b)) - head)
        lines = list(difflib.unified_diff(a[head:len(a) - tail], b[head:len(b) - tail], n=0, lineterm=""))[2:]
        return sum(x.startswith("+") for x in lines), sum(x.startswith("-") for x in lines)

    rnd = random.Random(7)
    for n in (0, 3, 40, 199, 200, 450):
        for words in (2, 6, 50):
            a = [f"line {rnd.randrange(words)}" for _ in range(n)]
            b = list(a)
            for _ in range(rnd.randrange(1, 12)):
                at = rnd.randrange(len(b) + 1)
                b[at:at + rnd.randrange(4)] = [f"line {rnd.randrange(words)}" for _ in range(rnd.randrange(4))]
            if a == b:
                continue
            assert code_diff_lines({"k.cpp": "\n".join(a)}, {"k.cpp": "\n".join(b)}) == unified(a, b), (n, words)
