"""ks.tune chooses an MC2 split: the tile count (and engine, algorithm, tail) as knobs of a build function
that returns a ks.multi design; CANN's tiling rules prune the counts that do not split."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.multi import Mc2Design


def _design():
    x = ks.placeholder((4096, 4096), "float16", name="x")
    w = ks.placeholder((4096, 8192), "float16", name="w")
    return ks.multi.matmul_allreduce(x, w, cluster=ks.multi.Cluster(devices=8),
                                     tiles=ks.knob("tiles", 1, list(range(1, 17))),
                                     algorithm=ks.knob("algorithm", "mesh", ["mesh", "ring"]))


def test_tune_finds_the_best_split_and_prunes_what_cann_refuses():
    r = ks.tune(_design, budget=32, strategy="grid", executor="inline", db=False, progress=False)
    sweep = {(d.schedule.tiles, alg): d.time_us for alg in ("mesh", "ring")
             for d in _design().with_schedule(algorithm=alg).sweep()}
    best = min(sweep, key=sweep.get)
    assert (r.best.config["tiles"], r.best.config["algorithm"]) == best
    assert r.best.time_us == pytest.approx(sweep[best])
    assert sum(r.pruned.values()) == 2 * (16 - len(_design().feasible_tiles()))
    assert all(k.startswith("TilingError") for k in r.pruned)
    d = r.best.design
    assert isinstance(d, Mc2Design) and d.schedule.tiles == best[0] and d.time_us == pytest.approx(r.best.time_us)


def test_tune_refuses_a_cluster_on_another_chip():
    def other():
        x = ks.placeholder((1024, 512), "float16", name="x")
        w = ks.placeholder((512, 1024), "float16", name="w")
        return ks.multi.matmul_allreduce(x, w, cluster=ks.multi.Cluster(2, target="ascend910b3"),
                                         tiles=ks.knob("tiles", 1, [1, 2]))

    with pytest.raises(ks.TuneError, match=r"cluster of ascend910b3 but the tuner's target is ascend910b2; pass "
                                           r"target='ascend910b3'"):
        ks.tune(other, budget=2, strategy="grid", executor="inline", db=False, progress=False)
    r = ks.tune(other, target="ascend910b3", budget=2, strategy="grid", executor="inline", db=False, progress=False)
    assert r.best.config["tiles"] in (1, 2)


def test_a_tuned_multi_design_is_not_saved_as_a_single_chip_one(tmp_path):
    r = ks.tune(_design, budget=3, strategy="grid", executor="inline", db=False, progress=False)
    with pytest.raises(ks.DesignDBError, match="save_design takes a built design"):
        r.save(db=str(tmp_path / "d.sqlite"))


def test_the_split_sweep_runs_on_an_executor_like_any_other():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        r = ks.tune(_design, budget=16, strategy="grid", executor=pool, db=False, progress=False)
    inline = ks.tune(_design, budget=16, strategy="grid", executor="inline", db=False, progress=False)
    assert r.best.config == inline.best.config and r.best.time_us == pytest.approx(inline.best.time_us)
