"""ks.tune: the search against brute force, seeds, pruning, the cache, and the executors."""

from __future__ import annotations

import itertools
import math
import os
from collections import Counter

import pytest

import kernelstudio as ks
from kernelstudio.plan.choose import planning_target
from kernelstudio.tune import evaluator as tuner_mod
from kernelstudio.tune import executors as executors_mod
from tests.reference_kernels import conv_bias_relu, mla_prolog_lite
from tests.unit.tune_support import TARGET, mla_design, tune_inline


@pytest.fixture(autouse=True)
def _db(fresh_db):
    return fresh_db


def run(fn, **kw):
    return tune_inline(fn, **{"db": False, **kw})


def mla_wide():
    """Four knobs, 54 configurations: room for a search to differ from the grid."""
    out = mla_prolog_lite()
    s = ks.create_schedule(out)
    s[out].split("m", ks.knob("tile_m", 16, [16, 32, 64]))
    s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512]))
    s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    s[out].l1_c_steps(1, 1)  # the landscape the search is measured on: every n tile reloads its A tile
    return s


def conv_design():
    """Conv+Bias+ReLU: output pixels per C tile x double buffering."""
    out = conv_bias_relu()
    s = ks.create_schedule(out)
    s[out].split("n", ks.knob("tile_n", 256, [64, 128, 256, 512]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def crashes_in_workers():
    """tile_k=128 kills the worker process it runs in (never this one)."""
    import multiprocessing

    s = mla_design()
    if ks.knob("tile_k", 64, [32, 64, 128]) == 128 and multiprocessing.parent_process() is not None:
        os._exit(3)
    return s


def brute_force(fn):
    """Every configuration built by hand, without the tuner: config tuple -> time or the error."""
    with ks.knob_values({}) as ctx:
        fn()
    knobs = list(ctx.seen.values())
    out = {}
    for combo in itertools.product(*(k.choices for k in knobs)):
        cfg = dict(zip((k.name for k in knobs), combo, strict=True))
        with planning_target(TARGET), ks.knob_values(cfg):
            s = fn()
        try:
            out[combo] = ks.simulate(ks.lower(s, TARGET)).time_us
        except ks.KernelStudioError as e:
            out[combo] = e
    return [k.name for k in knobs], out


def trace(r):
    return [(tuple(t.config.items()), t.time_us, t.kind) for t in r.history]


# --- the search ------------------------------------------------------------------------------------

def test_grid_finds_the_brute_force_optimum():
    names, truth = brute_force(mla_design)
    r = run(mla_design, budget=100, strategy="grid")
    assert len(r.history) == len(truth) == 18
    for t in r.history:
        want = truth[tuple(t.config[n] for n in names)]
        if isinstance(want, Exception):
            assert not t.ok and t.kind.startswith(type(want).__name__)
        else:
            assert t.time_us == pytest.approx(want, rel=1e-12)
    legal = {c: v for c, v in truth.items() if not isinstance(v, Exception)}
    best = min(legal, key=legal.get)
    assert r.best_time_us == pytest.approx(legal[best], rel=1e-12)
    assert tuple(r.best.config[n] for n in names) == best
    assert r.best.design.sim.time_us == pytest.approx(legal[best], rel=1e-12)
    assert r.best.design.knobs == r.best.config


def test_pruned_reasons_counted_by_kind():
    names, truth = brute_force(mla_design)
    want = Counter(f"CapacityError: {e.tier}" for e in truth.values() if isinstance(e, ks.CapacityError))
    assert want  # the space has illegal configurations
    r = run(mla_design, budget=100, strategy="grid")
    assert r.pruned == dict(want)
    assert r.pruned.get("CapacityError: L0B", 0) == sum(1 for c, v in truth.items() if isinstance(v, Exception))
    bad = [t for t in r.history if not t.ok]
    assert all("L0B needs" in t.error and t.info["need"] > t.info["have"] for t in bad)


@pytest.mark.parametrize("strategy", ["random", "evolutionary"])
def test_strategies_reproducible_and_never_worse_than_default(strategy):
    a = run(mla_wide, budget=14, strategy=strategy, seed=3)
    tuner_mod._MEMO.clear()
    b = run(mla_wide, budget=14, strategy=strategy, seed=3)
    assert trace(a) == trace(b)
    assert len(a.history) == 14 and len({tuple(t.config.items()) for t in a.history}) == 14
    assert a.history[0].config == a.default_config
    assert a.history[0].ok and a.best_time_us <= a.history[0].time_us
    others = [trace(run(mla_wide, budget=14, strategy=strategy, seed=s)) for s in (4, 5)]
    assert any(o != trace(a) for o in others)  # the seed matters


def test_evolutionary_comes_within_2_percent_with_under_half_the_space():
    _, truth = brute_force(mla_wide)
    best = min(v for v in truth.values() if not isinstance(v, Exception))
    found = [run(mla_wide, budget=24, strategy="evolutionary", seed=s).best_time_us for s in range(5)]
    assert all(t <= best * 1.02 for t in found)
    assert any(t == pytest.approx(best, rel=1e-12) for t in found)


def test_grid_with_a_small_budget_says_it_sampled():
    r = run(mla_wide, budget=10, strategy="grid")
    assert len(r.history) == 10 and any("evenly spaced subset" in n for n in r.notes)


def test_build_fn_returning_tensors_uses_the_auto_schedule():
    def design():
        out = mla_prolog_lite(k=ks.knob("k", 256, [128, 256]))
        return out

    r = run(design, budget=4, strategy="grid")
    for t in r.history:
        with planning_target(TARGET):
            s = ks.create_schedule(mla_prolog_lite(k=t.config["k"]), target=TARGET)
        assert t.time_us == pytest.approx(ks.simulate(ks.lower(s, TARGET)).time_us, rel=1e-12)


def test_conv_bias_relu_tunes():
    r = run(conv_design, budget=8, strategy="grid")
    assert len(r.history) == 8 and r.best_time_us <= r.default.time_us


# --- the cache -------------------------------------------------------------------------------------

def test_second_tune_reuses_the_database_and_rebuilds_nothing(_db, monkeypatch):
    first = run(mla_design, budget=100, strategy="grid", db=None)
    assert first.cache_hits == 0 and first.evaluated == 18 and _db.exists()

    def no_build(*a, **k):
        raise AssertionError("rebuilt a configuration that is in the database")

    monkeypatch.setattr(executors_mod, "evaluate_config", no_build)
    second = run(mla_design, budget=100, strategy="grid", db=None)
    assert second.cache_hits == 18 and second.evaluated == 0
    assert trace(second) == trace(first)
    from kernelstudio.tune.db import DesignDB

    with DesignDB(_db) as db:
        runs = db.runs()
    assert [r["cache_hits"] for r in runs] == [0, 18]


def test_cache_is_keyed_by_graph_and_profile(_db, monkeypatch):
    run(mla_design, budget=4, strategy="random", db=None)
    calls = []
    real = executors_mod.evaluate_config

    def counting(fn, cfg, target):
        calls.append(cfg)
        return real(fn, cfg, target)

    monkeypatch.setattr(executors_mod, "evaluate_config", counting)
    r = ks.tune(mla_design, "ascend910b1", budget=4, strategy="random", executor="inline", progress=False)
    assert r.cache_hits == 0 and len(calls) == 4  # another profile: nothing reused

    def bigger():
        out = mla_prolog_lite(m=128)
        s = ks.create_schedule(out)
        s[out].split("m", ks.knob("tile_m", 16, [16, 32, 64]))
        return s

    calls.clear()
    r = run(bigger, budget=3, strategy="grid", db=None)
    assert r.cache_hits == 0 and len(calls) == 3


# --- executors -------------------------------------------------------------------------------------

def test_process_pool_matches_in_process():
    inline = run(mla_wide, budget=16, strategy="evolutionary", seed=1)
    tuner_mod._MEMO.clear()
    pool = run(mla_wide, budget=16, strategy="evolutionary", seed=1, executor=None)
    assert "process pool" in pool.executor
    assert trace(pool) == trace(inline)


@pytest.mark.parametrize("processes", [False, True])
def test_dask_matches_process_pool(processes):
    distributed = pytest.importorskip("distributed")
    pool = run(mla_wide, budget=12, strategy="evolutionary", seed=2, executor=None)
    tuner_mod._MEMO.clear()
    with distributed.LocalCluster(n_workers=1 if not processes else 2, threads_per_worker=1, processes=processes,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        dask = run(mla_wide, budget=12, strategy="evolutionary", seed=2, executor=client)
    assert dask.executor.startswith("dask")
    assert trace(dask) == trace(pool)


def test_dead_worker_loses_no_finished_result(_db):
    with pytest.raises(ks.TuneError, match="worker process died") as ei:
        run(crashes_in_workers, budget=100, strategy="grid", executor=None, db=None)
    assert "re-running ks.tune resumes" in str(ei.value)
    partial = ei.value.result
    assert partial is not None and partial.history and all(t.ok or t.kind for t in partial.history)
    from kernelstudio.tune.db import DesignDB

    with DesignDB(_db) as db:
        stored = db.count_results()
    assert 0 < stored < 18
    assert len(partial.history) == stored
    # this process does not crash: the re-run takes every stored result from the database
    again = run(crashes_in_workers, budget=100, strategy="grid", db=None)
    assert again.cache_hits == stored and len(again.history) == 18
    _, truth = brute_force(mla_design)
    for t in again.history:
        want = truth[(t.config["tile_m"], t.config["tile_k"], t.config["double_buffer"])]
        assert (t.time_us == pytest.approx(want, rel=1e-12)) if t.ok else isinstance(want, ks.CapacityError)
    # the broken pool is replaced: the next tune runs in a fresh one
    fresh = run(mla_wide, budget=3, strategy="grid", executor=None)
    assert "process pool" in fresh.executor and fresh.evaluated == 3


def test_unpicklable_build_fn_runs_in_process_and_says_so():
    import threading

    lock = threading.Lock()

    def design():
        with lock:
            return mla_design()

    with pytest.warns(UserWarning, match="cannot be pickled .*evaluated in this process"):
        r = run(design, budget=3, strategy="grid", executor=None)
    assert r.executor == "in-process"
    assert any("cannot be pickled" in n and "in this process" in n for n in r.notes)


def test_progress_bar_reports(capsys):
    run(mla_design, budget=3, strategy="grid", progress=True)
    err = capsys.readouterr().err
    assert "tune mla_design" in err and "3/3" in err


def test_plot_parallel_coordinates_and_scatter():
    go = pytest.importorskip("plotly.graph_objects")
    wide = run(mla_wide, budget=8, strategy="random")
    fig = wide.plot()
    assert isinstance(fig.data[0], go.Parcoords)
    assert [d.label for d in fig.data[0].dimensions] == ["tile_m", "tile_n", "tile_k", "double_buffer", "time (us)"]
    assert list(fig.data[0].dimensions[-1].values) == [t.time_us for t in wide.history if t.ok]
    small = run(conv_design, budget=8, strategy="grid")
    fig = small.plot()
    assert isinstance(fig.data[0], go.Scatter)
    assert list(fig.data[0].y) == [t.time_us for t in small.history if t.ok]
    assert math.isclose(min(fig.data[0].y), small.best_time_us)


@pytest.mark.slow
def test_dask_worker_death_keeps_finished_results(_db):
    distributed = pytest.importorskip("distributed")
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        with pytest.raises(ks.TuneError, match="workers died while holding configuration .*ks.tune resumes"):
            run(crashes_in_workers, budget=100, strategy="grid", executor=client, db=None)
    from kernelstudio.tune.db import DesignDB

    with DesignDB(_db) as db:
        stored = db.count_results()
    again = run(crashes_in_workers, budget=100, strategy="grid", db=None)
    assert stored > 0 and again.cache_hits == stored


def l1_steps_design():
    x = ks.placeholder((64, 64), "float16", name="x")
    w = ks.placeholder((64, 128), "float16", name="w")
    out = ks.matmul(x, w)
    s = ks.create_schedule(out)
    s[out].split("k", 32).l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))  # 2 k tiles: 4 cannot apply
    return s


def test_pruned_reasons_keep_the_directive_names():
    r = run(l1_steps_design, budget=3, strategy="grid")
    (reason,) = r.pruned
    assert reason.startswith("ScheduleError: l1_k_steps(N, N) cannot apply") and r.pruned[reason] == 1


def test_a_build_function_that_needs_arguments_is_refused_up_front() -> None:
    def design(m):
        return ks.relu(ks.placeholder((m, 64), "float16", name="x"))

    with pytest.raises(ks.TuneError, match=r"design\(m\) needs 1 argument\(s\).*ks.knob\('m'"):
        ks.tune(design, "ascend910b2", budget=2, executor="inline", progress=False)


def test_a_build_function_that_fails_at_its_defaults_is_a_tune_error() -> None:
    def design():
        ks.knob("t", 16, [16, 32])
        raise ValueError("bad shape list")

    with pytest.raises(ks.TuneError, match=r"design\(\) raised ValueError: bad shape list at its defaults") as e:
        ks.tune(design, "ascend910b2", budget=2, executor="inline", progress=False)
    assert isinstance(e.value.__cause__, ValueError)
