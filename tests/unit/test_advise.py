"""The advisor: every proposed move is a simulation of the design with that move, ranked by the time it saves;
moves the lowering refuses are reported with the reason; knob moves need a build function; bad arguments
raise AdviceError."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio.plan.advise import Advice, AdviceError, advise
from kernelstudio.plan.advise_rules import RULES, move_text
from kernelstudio.tune.greedy import advise_greedy
from tests import reference_kernels as reference

TARGET = "ascend910b2"


def _conv_single_buffered(l2: str = "cold"):
    out = reference.conv_bias_relu(n=1, cin=64, hw=56, cout=64)
    s = ks.create_schedule(out)
    s[out].double_buffer(False)
    return out, ks.build(out, schedule=s, compare=False, l2=l2)


def _simulate(design, advice: Advice) -> float:
    prog = ks.lower(advice.schedule(design.schedule), design.program.profile or TARGET, name=design.program.name)
    return ks.simulate(prog, l2=design.sim.metrics["l2_start"]).time_us


def test_double_buffer_off_proposes_it_with_its_simulated_gain():
    out, d = _conv_single_buffered()
    moves = d.advise()
    db = [a for a in moves if a.directives and a.directives[0].kind == "double_buffer"]
    assert len(db) == 1 and db[0].fits and db[0].directives[0].value is True
    a = db[0]
    s = ks.create_schedule(out)
    s[out].double_buffer(True)
    with_it = ks.simulate(ks.lower(s, TARGET)).time_us
    assert a.gain_us > 0
    assert a.gain_us == pytest.approx(d.sim.time_us - with_it, abs=1e-9)
    assert a.time_us == pytest.approx(with_it, abs=1e-9)
    assert "single-buffered" in a.cause and "idle" in a.cause and a.move == "s['relu'].double_buffer(True)"


def test_moves_are_ranked_by_gain_and_every_gain_is_before_minus_after():
    _, d = _conv_single_buffered()
    moves = d.advise()
    fits = [a for a in moves if a.fits]
    assert fits and [a.gain_us for a in fits] == sorted((a.gain_us for a in fits), reverse=True)
    assert all(not a.fits for a in moves[len(fits):])
    for a in fits:
        assert a.gain_us == d.sim.time_us - a.time_us and a.before_us == d.sim.time_us


def test_the_top_advice_applied_gives_exactly_its_time():
    _, d = _conv_single_buffered()
    top = d.advise()[0]
    assert _simulate(d, top) == top.time_us
    assert top.apply(d).sim.time_us == top.time_us
    assert top.schedule(d.schedule).directives[-len(top.directives):] == top.directives
    assert d.schedule.directives == (ks.Directive("double_buffer", "relu", None, False),)  # the design is untouched


def test_the_l2_protocol_of_the_design_is_kept():
    _, d = _conv_single_buffered(l2="warm")
    top = d.advise()[0]
    assert _simulate(d, top) == top.time_us


def test_a_move_that_overflows_is_reported_with_the_buffer_and_bytes():
    x = ks.placeholder((512, 1024), "float16", name="x")
    w = ks.placeholder((1024, 1024), "float16", name="w")
    out = ks.relu(ks.matmul(x, w, transpose_b=True))
    s = ks.create_schedule(out)
    s[out].split("m", 128).split("n", 128).split("k", 128)
    d = ks.build(out, schedule=s, compare=False)
    moves = d.advise()
    bad = {a.move: a for a in moves if not a.fits}
    a = bad["s['relu'].split('m', 256)"]
    assert a.time_us is None and a.gain_us == 0.0
    assert "L0A needs 131,072 B but has 65,536 B" in a.why_not and "a2" in a.why_not
    assert "does not fit" in a.text
    with pytest.raises(ks.CapacityError):
        _simulate(d, a)


def test_moves_change_something():
    """A directive the kernel already follows is not proposed (double buffering is on by default)."""
    d = ks.build(reference.mla_prolog_lite(), compare=False)
    for a in d.advise():
        assert a.directives not in ((ks.Directive("double_buffer", "out", None, True),),)
        assert a.time_us is None or a.time_us != d.sim.time_us or a.directives


def _knob_build(values):
    """A Studio-like build function: knob values -> Design (with the values it was built with)."""
    with ks.knob_values(values, strict=False) as ctx:
        out = reference.mla_prolog_lite()
        s = ks.create_schedule(out)
        st_ = s[out]
        st_.split("n", ks.knob("tile_n", 256, [64, 128, 256, 512]))
        st_.split("k", ks.knob("tile_k", 64, [32, 64, 128, 256]))
        st_.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
    d = ks.build(out, schedule=s, compare=False)
    d.knobs = {k: ctx.values.get(k, kb.default) for k, kb in ctx.seen.items()}
    return d


def test_knob_moves_only_with_a_build_function():
    d = _knob_build({})
    assert all(not a.knobs for a in d.advise())
    with pytest.raises(AdviceError, match="knobs=session.knobs"):
        d.advise(_knob_build)  # it sets its own knob values, so its choices cannot be seen from outside
    with ks.knob_values({}, strict=False) as ctx:
        out = reference.mla_prolog_lite()
        st_ = ks.create_schedule(out)[out]
        st_.split("n", ks.knob("tile_n", 256, [64, 128, 256, 512]))
        st_.split("k", ks.knob("tile_k", 64, [32, 64, 128, 256]))
        st_.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
    moves = d.advise(_knob_build, knobs=ctx.seen)
    knobbed = [a for a in moves if a.knobs]
    assert knobbed
    for a in knobbed:
        assert not a.directives and " -> " in a.move
        if a.fits:
            assert a.time_us == _knob_build({**d.knobs, **a.knobs}).sim.time_us
            assert a.gain_us == d.sim.time_us - a.time_us
    l1 = next(a for a in knobbed if "l1_k_steps" in a.knobs)
    assert l1.knobs == {"l1_k_steps": 2} and "MTE1 idle" in l1.cause  # the evidence, spoken as the knob
    assert l1.apply(d, _knob_build).sim.time_us == l1.time_us
    with pytest.raises(AdviceError, match="build function"):
        l1.apply(d)


def test_bad_arguments_raise_advice_errors():
    d = ks.build(reference.softmax(), compare=False)
    with pytest.raises(AdviceError, match="ks.build"):
        advise("not a design")
    with pytest.raises(AdviceError, match="build_fn"):
        advise(d, 3)
    with pytest.raises(AdviceError, match="limit"):
        advise(d, limit=0)
    with pytest.raises(AdviceError, match="rounds"):
        advise_greedy(reference.softmax, rounds=0)
    with pytest.raises(AdviceError, match="build_fn"):
        advise_greedy("softmax")
    assert issubclass(AdviceError, ks.KernelStudioError) and ks.AdviceError is AdviceError


def test_rules_are_a_table():
    assert len(RULES) >= 8 and all(callable(r) and r.__doc__ for r in RULES)
    assert move_text((ks.Directive("split", "out", "m", 64), ks.Directive("double_buffer", "out", None, True))) == \
        "s['out'].split('m', 64).double_buffer(True)"


def test_advice_for_a_reference_design_is_fast():
    """The budget is 1 s on an idle machine (bench/bench_advise.py measures it); shared CI gets 3x."""
    d = ks.build(reference.mla_prolog_lite(), compare=False)
    t0 = time.perf_counter()
    moves = d.advise()
    assert time.perf_counter() - t0 < 3.0 and moves


def test_idle_analysis_lives_below_the_notebook():
    from kernelstudio.notebook.views import idle as views_idle
    from kernelstudio.sim import idle

    assert views_idle.idle_gaps is idle.idle_gaps and views_idle.idle_breakdown is idle.idle_breakdown


def _tiles():
    out = reference.mla_prolog_lite()
    s = ks.create_schedule(out)
    st_ = s[out]
    st_.split("n", ks.knob("tile_n", 256, [128, 256]))
    st_.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
    return s


def test_greedy_rounds_take_simulated_moves():
    r = advise_greedy(_tiles, TARGET, rounds=2, executor="inline")
    assert r.default_us == pytest.approx(ks.tune(_tiles, TARGET, budget=1, strategy="grid", executor="inline",
                                                 db=False, progress=False).default.time_us)
    assert 1 <= len(r.steps) <= 2 and all(a.gain_us > 0 for a in r.steps)
    assert r.time_us == pytest.approx(r.default_us - sum(a.gain_us for a in r.steps))
    assert r.design.sim.time_us == r.time_us and r.evaluations >= len(r.steps) + 1
    assert (r.config != {"tile_n": 256, "l1_k_steps": 1} or r.directives) and r.speedup() > 1
    assert f"{r.default_us:.2f} -> {r.time_us:.2f} us" in r.summary()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tile_n=st.sampled_from([64, 128, 256]), tile_k=st.sampled_from([32, 64, 128]), db=st.booleans())
def test_every_fitting_move_is_its_own_simulation(tile_n, tile_k, db):
    out = reference.mla_prolog_lite()
    s = ks.create_schedule(out)
    s[out].split("n", tile_n).split("k", tile_k).double_buffer(db)
    try:
        d = ks.build(out, schedule=s, compare=False)
    except ks.CapacityError:
        return
    for a in d.advise(limit=4):
        if a.fits:
            assert _simulate(d, a) == a.time_us and a.gain_us == d.sim.time_us - a.time_us
        else:
            assert a.why_not and a.time_us is None


def test_keeping_the_epilogue_out_of_fusion_is_a_move_too():
    out = reference.mla_prolog_lite()
    d = ks.build(out, compare=False)
    a = next(a for a in d.advise() if a.keep_out)
    assert a.move == "s.keep_out_of_fusion(matmul)" and not a.directives and a.fits
    s = ks.create_schedule(out)
    s.keep_out_of_fusion(s.graph.node("matmul"))
    assert a.time_us == ks.simulate(ks.lower(s, TARGET, name=d.program.name)).time_us
    assert a.apply(d).sim.time_us == a.time_us and len(a.apply(d).program.kernels) >= 2
    assert "the planner found fusion pays" in a.cause


def test_keeping_out_drops_the_directives_the_split_kernels_refuse_and_says_so():
    d = _knob_build({})
    a = next(a for a in d.advise() if a.keep_out)
    assert a.fits and "(drops s['out'].split('n', 256).split('k', 64).l1_k_steps(1, 1), written for the fused kernel)" \
        in a.move
    assert _simulate(d, a) == a.time_us and a.schedule(d.schedule).directives == ()
    assert a.drops == d.schedule.directives


def _rows_schedule():
    """MlaProlog-lite with a knob of the problem (its reduction length) beside one of the schedule (tile_n)."""
    out = reference.mla_prolog_lite(64, ks.knob("depth", 256, [128, 256, 512]), 512)
    s = ks.create_schedule(out)
    s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512]))
    return out, s


def _rows_build(values: dict):
    with ks.knob_values(values, strict=False) as ctx:
        out, s = _rows_schedule()
    d = ks.build(out, TARGET, schedule=s, compare=False)
    d.knobs = {k: ctx.values.get(k, kb.default) for k, kb in ctx.seen.items()}
    return d


def test_a_knob_of_the_problem_is_no_move():
    d = _rows_build({})
    with ks.knob_values({}, strict=False) as ctx:
        _rows_schedule()
    assert set(ctx.seen) == {"depth", "tile_n"}
    assert _rows_build({"depth": 128}).sim.time_us < d.sim.time_us  # a shorter reduction: another operator
    moves = d.advise(_rows_build, knobs=ctx.seen)
    assert any("tile_n" in a.knobs for a in moves)
    assert not any("depth" in a.knobs for a in moves)


def test_graph_only_keeps_kernels_fused_without_simulating_the_plans(monkeypatch):
    from kernelstudio.plan import choose

    out = reference.mla_prolog_lite(256, 1024, 1024)
    assert ks.create_schedule(out).choices  # the planner simulates fused against split (and picks sync_all)
    monkeypatch.setattr(choose, "_decide", lambda *a: pytest.fail("graph_only simulated a plan"))
    with choose.graph_only():
        s = ks.create_schedule(out)
    assert s.choices == () and [k.family for k in s.kernels] == ["cube_vector"] and not s.kernels[0].sync_all
