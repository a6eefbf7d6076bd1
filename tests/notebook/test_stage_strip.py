"""The Timeline's stage strip: the fused attention kernel's stages (bmm1, vec1, bmm2, vec2) marked on its TileIR
loops, carried by the simulator's events with their block, drawn one row per stage of the drawn cube and vector
core; absent for kernels without stages. And the attention kernel named by its family everywhere."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.codegen import generate_files
from kernelstudio.notebook.render.strips import header_html
from kernelstudio.notebook.render.timeline import legend_html, new_timeline_figure, update_timeline
from kernelstudio.notebook.views import idle_gaps, idle_table
from kernelstudio.notebook.views.metrics import metric_cards
from kernelstudio.notebook.views.stages import overlap_us, stage_spans
from kernelstudio.notebook.views.timeline import timeline_data
from kernelstudio.tileir.program import Loop, walk

TARGET = "ascend910b2"
CUBE, VEC = "core0.cubecore0", "core0.veccore0"
STAGES = ["bmm1", "vec1", "bmm2", "vec2"]


def _attention(slots: int | None = None, heads: int = 1, s2: int = 2048):
    q = ks.placeholder((1, heads, 128, 128), "float16", name="query")
    k = ks.placeholder((1, heads, s2, 128), "float16", name="key")
    v = ks.placeholder((1, heads, s2, 128), "float16", name="value")
    out = ks.ops.flash_attention(q, k, v)
    s = ks.create_schedule([out], fuse=True)
    if slots is not None:
        s[out].slots(slots)
    return out, s, ks.lower(s, target=TARGET)


@pytest.fixture(scope="module")
def sims():
    return {n: ks.simulate(_attention(n)[2]) for n in (1, 2, 3)}


def _by(spans, stage, block):
    return [(s["start"], s["end"]) for s in spans if s["stage"] == stage and s["block"] == block]


def test_the_lowering_marks_four_stage_loops():
    _, _, prog = _attention()
    (k,) = prog.kernels
    marked = [(side, x.stage, x.var) for side, body in (("aic", k.aic), ("aiv", k.aiv)) for x in walk(body)
              if isinstance(x, Loop) and x.stage]
    # bmm1 over j; bmm2 of block j - 2 in the loop and in the drain; vec1 and vec2 of one block (jx)
    assert {(side, st) for side, st, _ in marked} == {("aic", "bmm1"), ("aic", "bmm2"), ("aiv", "vec1"),
                                                      ("aiv", "vec2")}
    assert ("aic", "bmm1", "j") in marked and ("aiv", "vec2", "jx") in marked


def test_each_stage_of_each_block_is_one_span_in_pipeline_order(sims):
    sim = sims[3]
    cube, vec = stage_spans(sim, CUBE), stage_spans(sim, VEC)
    blocks = 2048 // 512
    for spans, stages in ((cube, ("bmm1", "bmm2")), (vec, ("vec1", "vec2"))):
        for st in stages:
            assert sorted(s["block"] for s in spans if s["stage"] == st) == list(range(blocks)), st
        assert [s["start"] for s in spans] == sorted(s["start"] for s in spans)
        assert all(s["end"] > s["start"] for s in spans)
    for j in range(blocks):  # block j: S, then its softmax, then P V, then the fold into O
        (b1,), (v1,), (b2,), (v2,) = (_by(cube + vec, st, j) for st in STAGES)
        assert b1[1] <= v1[1] <= b2[1] <= v2[1] and v1[0] >= b1[0] and b2[0] >= v1[0] and v2[0] >= b2[0], j
    # bmm1 runs 4 cube tiles of 128 columns per 512-column block (one Mmad each)
    mm = [e for e in sim.events.where(core=CUBE, pipe="M")]
    assert sum(1 for e in mm if "bmm1" in e.instr) == 4 * blocks


def test_more_slots_let_the_cube_run_ahead(sims):
    """One slot: bmm1(j + 1) comes after bmm2(j), which waits for vec1(j)'s P, so the cube idles through every
    softmax and the next S is computed beside vec2(j). Two or more slots: the cube works through every vec1
    (bmm1 of the next block first, bmm2 of an earlier one later on)."""
    one, two = sims[1], sims[2]
    c1, v1 = stage_spans(one, CUBE), stage_spans(one, VEC)
    c2, v2 = stage_spans(two, CUBE), stage_spans(two, VEC)
    cube1 = [(s["start"], s["end"]) for s in c1]
    cube2 = [(s["start"], s["end"]) for s in c2]
    for j in range(4):
        assert overlap_us(cube1, _by(v1, "vec1", j)) == 0.0
        assert overlap_us(cube2, _by(v2, "vec1", j)) > 0.0
    for j in range(3):
        assert overlap_us(_by(c1, "bmm1", j + 1), _by(v1, "vec2", j)) > 0.0
    assert overlap_us(_by(c2, "bmm1", 1), _by(v2, "vec1", 0)) > 0.0
    both = {n: overlap_us([(s["start"], s["end"]) for s in stage_spans(sims[n], CUBE)],
                          [(s["start"], s["end"]) for s in stage_spans(sims[n], VEC)]) for n in (1, 2, 3)}
    assert both[1] < both[2] <= both[3] + 1e-9
    assert sims[1].time_us > sims[2].time_us > sims[3].time_us


def test_timeline_data_and_figure_draw_the_strip_above_the_lanes(sims):
    tl = timeline_data(sims[3])
    st = tl["stages"]
    assert st["stages"] == STAGES
    assert [(r["core"], r["stage"]) for r in st["rows"]] == [(CUBE, "bmm1"), (CUBE, "bmm2"), (VEC, "vec1"),
                                                            (VEC, "vec2")]
    assert st["blocks"] == 4 and len(st["bars"]) == 16
    assert "bmm1 of block 2 (task 0) on core0.cubecore0" in " ".join(b["text"] for b in st["bars"])
    fig = new_timeline_figure()
    update_timeline(fig, tl)
    assert sorted(set(fig.data[3].y)) == [0, 1, 2, 3] and len(fig.data[3].y) == 16
    assert min(fig.data[0].y) == 4  # the pipe lanes start under the strip
    ticks = fig.layout.yaxis.ticktext
    assert "bmm1" in ticks[0] and CUBE in ticks[0] and "vec1" in ticks[2] and "MTE2" in ticks[4]
    assert len(ticks) == 4 + sum(not lane["host"] for lane in tl["lanes"])
    assert "stages:" in legend_html(tl) and "vec2" in legend_html(tl)
    # a pipe event's hover names its stage and block
    assert any("bmm2 of block 3" in t for t in tl["bars"]["text"])


def test_blocks_stay_right_on_many_tasks():
    """Three heads: core 0 and its neighbours each run their tasks' blocks 0..3 once per stage (the
    simulator's shortcuts replay iterations: their events take the block of the iteration replayed)."""
    sim = ks.simulate(_attention(heads=3)[2])
    for core in ("core0.veccore1", "core5.cubecore0"):
        spans = stage_spans(sim, core)
        for st in {s["stage"] for s in spans}:
            per_task: dict[int, list[int]] = {}
            for s in spans:
                if s["stage"] == st:
                    per_task.setdefault(s["task"], []).append(s["block"])
            assert all(sorted(b) == [0, 1, 2, 3] for b in per_task.values()), (core, st, per_task)


def test_kernels_without_stages_have_no_strip():
    x = ks.placeholder((256, 512), "float16", name="x")
    out = ks.softmax(ks.matmul(x, ks.placeholder((512, 512), "float16", name="w")), axis=-1)
    sim = ks.simulate(ks.lower(ks.create_schedule(out, fuse=True), target=TARGET))
    assert sim.events.instr_stage == ()
    assert stage_spans(sim, "core0.cubecore0") == []
    tl = timeline_data(sim)
    assert tl["stages"] is None
    fig = new_timeline_figure()
    update_timeline(fig, tl)
    assert len(fig.data[3].y or ()) == 0 and min(fig.data[0].y) == 0
    assert "stages:" not in legend_html(tl)


def test_the_attention_kernel_is_named_attention(sims):
    out, s, prog = _attention()
    assert prog.kernels[0].family == "attention"
    assert sims[3].kernels[0]["family"] == "attention"
    first = next(t for p, t in generate_files(prog).items() if p.startswith("op_kernel/") and p.endswith(".cpp"))
    assert first.splitlines()[0].startswith("// Attention") and "attention kernel (MIX_AIC_1_2)" in \
        first.splitlines()[0], first.splitlines()[0]
    design = ks.build(out, TARGET, schedule=s, compare=False)
    assert "1 kernel: attention (MIX_AIC_1_2)" in header_html(metric_cards(design))


def test_the_idle_view_names_the_stage_that_released_each_wait(sims):
    gaps = idle_gaps(sims[3], cores=1)
    rows = idle_table(sims[3], timeline_data(sims[3], gaps=gaps)["groups"], gaps=gaps)
    released = {c["released_short"] for r in rows for c in r["causes"] if c["released_short"]}
    # the vector cores wait for the cube's S (bmm1) and P V (bmm2) hand-offs, the cube for the vector's P (vec1)
    assert any(x.endswith("attention_out_ws_s <- c (bmm1)") for x in released), released
    assert any(x.endswith("attention_out_ws_o <- c (bmm2)") for x in released), released
    assert any(x.endswith("attention_out_ws_p <- px (vec1)") for x in released), released
