"""The advisor's reasoning on the evidence: a larger k tile that overflows a full L0 tier is proposed with its
companion (the tier's other axis halved, two knobs at once); moves the evidence speaks against are tried
later (more tiles that only add a wave, larger tiles with fewer tiles than cores, the plan the planner found
slower); and the greedy rounds on MlaProlog-lite 64x256x512 reach ks.tune's best with few evaluations."""

from __future__ import annotations

from dataclasses import replace

import pytest

import kernelstudio as ks
from kernelstudio.plan.advise_evidence import gather
from kernelstudio.plan.advise_rules import k_tile, larger_c_tiles, more_c_tiles, sync_all
from kernelstudio.tune.greedy import advise_greedy
from tests import reference_kernels as reference

TARGET = "ascend910b2"


def _mla():
    """MlaProlog-lite 64x256x512 with the tile, L1-step and double-buffer knobs (as bench/bench_advise.py)."""
    out = reference.mla_prolog_lite()
    s = ks.create_schedule(out)
    st = s[out]
    st.split("m", ks.knob("tile_m", 16, [16, 32, 64]))
    st.split("n", ks.knob("tile_n", 256, [64, 128, 256, 512]))
    st.split("k", ks.knob("tile_k", 64, [32, 64, 128, 256]))
    st.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
    st.double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def _build(values: dict) -> ks.Design:
    with ks.knob_values(values, strict=False) as ctx:
        s = _mla()
    prog = ks.lower(s, TARGET)
    return ks.Design(s, prog, ks.simulate(prog), knobs={k: ctx.values.get(k, kb.default) for k, kb in ctx.seen.items()})


def _knobs() -> dict:
    with ks.knob_values({}, strict=False) as ctx:
        _mla()
    return ctx.seen


def _evidence(design: ks.Design):
    (ev,) = gather(design)
    return ev


def test_a_larger_k_tile_that_overflows_l0b_comes_with_a_halved_n_tile():
    d = _build({})
    ev = _evidence(d)
    assert ev.capacity["L0B"][0] == ev.capacity["L0B"][1]  # the default tiles fill L0B
    props = {c.directives: c for c in k_tile(ev)}
    pair = (ks.Directive("split", "out", "k", 128), ks.Directive("split", "out", "n", 128))
    alone = (ks.Directive("split", "out", "k", 128),)
    assert pair in props and alone in props
    assert props[pair].weight_us > 5 * props[alone].weight_us and "n tile halves to 128" in props[pair].cause
    moves = {a.move: a for a in d.advise()}
    both = moves["s['out'].split('k', 128).split('n', 128)"]
    assert both.fits and both.gain_us > 2.0
    assert not moves["s['out'].split('k', 128)"].fits and "L0B" in moves["s['out'].split('k', 128)"].why_not
    assert both.time_us == _build({"tile_k": 128, "tile_n": 128}).sim.time_us


def test_the_pair_is_one_move_of_two_knobs():
    d = _build({})
    moves = d.advise(_build, knobs=_knobs())
    a = next(a for a in moves if len(a.knobs) == 2)
    assert a.knobs == {"tile_k": 128, "tile_n": 128} and a.move == "tile_k 64 -> 128, tile_n 256 -> 128"
    assert a is moves[0] and a.time_us == _build(a.knobs).sim.time_us
    assert a.apply(d, _build).sim.time_us == a.time_us


def test_greedy_on_mla_prolog_lite_reaches_the_tuners_best_with_a_fifth_of_its_evaluations():
    tuned = _build({"tile_m": 32, "tile_n": 64, "tile_k": 128, "l1_k_steps": 2}).sim.time_us  # ks.tune's best
    g = advise_greedy(_mla, TARGET, rounds=5, executor="inline", per_round=2, patience=1)
    assert g.default_us == _build({}).sim.time_us
    assert g.time_us <= 1.05 * tuned and g.evaluations <= 12
    assert g.steps[0].knobs == {"tile_k": 128, "tile_n": 128}


def test_more_tiles_that_only_add_a_wave_are_tried_late():
    ev = _evidence(_build({"tile_k": 128, "tile_n": 128}))
    assert ev.t("tiles") == 16 and ev.max_cores == 24
    assert all(c.weight_us == 0.0 and "32 tiles of half the size take 2 wave(s)" in c.cause for c in more_c_tiles(ev))
    eight = replace(ev, tiling={**ev.tiling, "tiles": 8})  # 16 tiles of half the size still fit one wave
    assert [c.weight_us > 0 for c in more_c_tiles(eight)] == [True]  # the n tile (the m tile, 16, stays)


def test_larger_tiles_with_fewer_tiles_than_cores_are_weighted_by_the_cores_they_keep():
    ev = _evidence(_build({}))
    (m,) = [c for c in larger_c_tiles(ev) if c.directives[0].axis == "m"]
    many = replace(ev, tiling={**ev.tiling, "tiles": 48})
    (m48,) = [c for c in larger_c_tiles(many) if c.directives[0].axis == "m"]
    assert m.weight_us == pytest.approx(m48.weight_us * 4 / 24) and "leave more of them idle" in m.cause
    assert "leave more of them idle" not in m48.cause


def test_the_barrier_flip_reads_the_planners_estimate_of_the_other_plan():
    ev = _evidence(_build({}))
    note = next(n for n in ev.notes if n.startswith("fusion pays"))
    assert ev.sync_all is True and "with sync_all (row blocks: " in note
    chosen = float(note.split("fused ")[1].split(" us")[0])
    other = float(note.split("row blocks: ")[1].split(" us")[0])
    assert ev.planned_margin() == pytest.approx(other - chosen)
    (flip,) = sync_all(ev)
    wait = ev.top(("sync", "flag", "tail"))
    assert flip.weight_us == pytest.approx(max(0.0, wait.us - (other - chosen)))
    assert "the planner estimated the other plan" in flip.cause
    rows = replace(ev, sync_all=False)  # a kernel forced to row blocks: flipping back is what the planner chose
    assert rows.planned_margin() == pytest.approx(chosen - other)
    assert next(sync_all(rows)).weight_us == pytest.approx(wait.us)
    worse = replace(ev, notes=("fusion pays on x: fused 1,008.50 us in row blocks (sync_all: does not lower) vs ...",),
                    sync_all=False)
    assert worse.planned_margin() == float("inf") and next(sync_all(worse)).weight_us == 0.0
    assert replace(ev, notes=()).planned_margin() == 0.0
