"""ks.DynamicKernel: shape buckets (the article's small / tall-skinny / general by default), one tuned
configuration per bucket, designs cached per bucket and shape, and the sweep of one dimension."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.tune import ShapeSweep, tail_efficiency


def mm_rms(m, n, k):
    a = ks.placeholder((m, k), "float16", name="a")
    w = ks.placeholder((k, n), "float16", name="w")
    s = ks.create_schedule(ks.rms_norm(ks.matmul(a, w), axis=-1), fuse=True)
    st = s[s.kernels[0].name]
    st.split("m", ks.knob("tile_m", 16, [16, 32, 64])).split("n", ks.knob("tile_n", 64, [32, 64, 128]))
    return s


def relu_rows(rows, cols):
    x = ks.placeholder((rows, cols), "float16", name="x")
    s = ks.create_schedule(ks.relu(x))
    s[s.kernels[0].name].split("rows", ks.knob("tile_rows", 8, [8, 16]))
    return s


def test_default_buckets_are_the_articles() -> None:
    dk = ks.DynamicKernel(mm_rms)
    assert [b.name for b in dk.buckets] == ["small", "tall_skinny", "general"]
    assert dk.bucket_of(m=64, n=64, k=999) == "small"
    assert dk.bucket_of(m=65, n=64, k=1) == "general"
    assert dk.bucket_of(m=1024, n=64, k=1) == "tall_skinny"
    assert dk.bucket_of(m=1024, n=65, k=1) == "general"
    assert dk.bucket_of(m=8, n=4096, k=1) == "general"


def test_user_buckets_and_a_shape_no_bucket_takes() -> None:
    dk = ks.DynamicKernel(mm_rms, [("decode", lambda m, **_: m <= 16), ks.Bucket("prefill", lambda m, **_: m >= 512)])
    assert dk.bucket_of(m=8, n=64, k=64) == "decode" and dk.bucket_of(m=4096, n=64, k=64) == "prefill"
    with pytest.raises(ks.TuneError, match=r"shape \{'m': 100, 'n': 64, 'k': 64\} is in none of the buckets "
                                           r"\['decode', 'prefill'\]; end the list with a catch-all bucket"):
        dk.bucket_of(m=100, n=64, k=64)


@pytest.mark.parametrize("make, match", [
    (lambda: ks.DynamicKernel(lambda: None), "takes no dimensions"),
    (lambda: ks.DynamicKernel(mm_rms, [("a", lambda **d: True), ("a", lambda **d: True)]), "distinct names"),
    (lambda: ks.DynamicKernel(mm_rms, ["general"]), "must be ks.Bucket"),
    (lambda: ks.DynamicKernel(mm_rms).bucket_of(m=8, n=8), r"missing \['k'\]"),
    (lambda: ks.DynamicKernel(mm_rms).bucket_of(m=8, n=8, k=8, b=2), r"unknown \['b'\]"),
    (lambda: ks.DynamicKernel(mm_rms).design(m=0, n=8, k=8), "m=0 must be a positive integer"),
    (lambda: ks.DynamicKernel(mm_rms).explore("q", [8]), "'q' is not a dimension"),
    (lambda: ks.DynamicKernel(mm_rms).tune({"m": 8, "n": 8, "k": 8}), "non-empty list of shapes"),
    (lambda: ks.DynamicKernel(mm_rms, [("q", lambda **d: d["q"] > 1)]).bucket_of(m=8, n=8, k=8),
     r"bucket 'q': its predicate reads dimension 'q', which the design does not have \(it is called with m=8"),
    (lambda: ks.DynamicKernel(mm_rms, [("one", lambda m: m > 1)]).bucket_of(m=8, n=8, k=8),
     r"bucket 'one': its predicate cannot be called with the dimensions as keywords .*lambda \*\*d"),
    (lambda: ks.DynamicKernel(mm_rms, [("arr", lambda **d: np.array([d["m"]]) > 1)]).bucket_of(m=8, n=8, k=8),
     r"bucket 'arr': its predicate returned ndarray .* must return True or False"),
    (lambda: ks.DynamicKernel(mm_rms, ks.Bucket("general", lambda **d: True)),
     r"buckets must be a list of buckets, got one"),
    (lambda: ks.DynamicKernel(mm_rms, 5), r"buckets must be a list of ks.Bucket\(name, when\), got int"),
    (lambda: ks.DynamicKernel(mm_rms).codegen(probe=10**9, n=64, k=64),
     r"probe=1,000,000,000 would call the bucket predicates .* at most 1,048,576"),
])
def test_mistakes_name_the_way_out(make, match) -> None:
    with pytest.raises(ks.TuneError, match=match):
        make()


def test_each_bucket_is_tuned_at_its_first_example_and_its_config_serves_the_bucket() -> None:
    dk = ks.DynamicKernel(mm_rms)
    res = dk.tune([dict(m=32, n=64, k=256), dict(m=48, n=64, k=256), dict(m=2048, n=64, k=256)], budget=9,
                  strategy="grid", executor="inline", db=False, progress=False)
    assert set(res) == {"small", "tall_skinny"} and dk.untuned == ["general"]
    assert dk.examples["small"] == dict(m=32, n=64, k=256)  # the first small example, not the second
    for bucket, r in res.items():
        assert dk.configs[bucket] == r.best.config
        assert r.best_time_us == min(t.time_us for t in r.history if t.ok)  # grid of 9: the exhaustive best
    d = dk.design(m=4096, n=64, k=256)  # another tall-skinny shape: built with that bucket's configuration
    assert d.knobs == dk.configs["tall_skinny"]
    assert dk.design(m=4096, n=64, k=256) is d  # cached per (bucket, shape)
    assert ("tall_skinny", (4096, 64, 256)) in dk.kernel_cache
    assert dk.design(m=512, n=64, k=256).knobs == {}  # general: untuned, the knobs' defaults


def test_tail_efficiency_is_tile_fill_times_wave_fill() -> None:
    # 480 rows in tiles of 8 = 60 tiles on the 48 vector cores: two waves of 48, 60/96 busy; rows fill tiles
    d = ks.DynamicKernel(relu_rows).design(rows=480, cols=128)
    assert d.program.kernels[0].block_dim == 48
    assert tail_efficiency(d.program) == pytest.approx(60 / 96)
    # 100 rows: 13 tiles of 8 hold 104 rows (one wave on 13 cores)
    d = ks.DynamicKernel(relu_rows).design(rows=100, cols=128)
    assert tail_efficiency(d.program, d.sim) == pytest.approx(100 / 104)


def test_explore_sweeps_one_dimension() -> None:
    dk = ks.DynamicKernel(mm_rms)
    sw = dk.explore("m", [16, 100, 1024, 4096], n=64, k=256)
    assert isinstance(sw, ShapeSweep) and [r["value"] for r in sw.rows] == [16, 100, 1024, 4096]
    assert [r["bucket"] for r in sw.rows] == ["small", "general", "tall_skinny", "tall_skinny"]
    for r in sw.rows:
        d = dk.design(m=r["value"], n=64, k=256)
        assert r["time_us"] == d.sim.time_us and r["roofline_pct"] == pytest.approx(100 * d.sim.metrics["efficiency"])
    assert sw.rows[1]["tail_efficiency"] == pytest.approx(100 / 112)  # 100 rows in 7 tiles of 16
    assert "tall_skinny" in sw.table() and sw.table().count("\n") == 5
    fig = sw.figure()
    assert {t.name for t in fig.data} >= {"small: time (us)", "general: time (us)", "tall_skinny: time (us)",
                                          "% of roofline bound", "tail efficiency (%)"}


def test_a_bucket_whose_examples_an_earlier_bucket_takes_is_warned_of() -> None:
    # "wide" (m >= 64) comes after the catch-all-ish "any" (m >= 1): every example is taken by "any"
    dk = ks.DynamicKernel(relu_rows, [("any", lambda rows, **_: rows >= 1), ("wide", lambda rows, **_: rows >= 64)])
    with pytest.warns(UserWarning, match=r"bucket 'wide' is never chosen: shapes that satisfy it \(such as "
                                         r"\{'rows': 64, 'cols': 64\}\) are all taken by an earlier bucket \('any'"):
        dk.tune([dict(rows=16, cols=64), dict(rows=128, cols=64)], budget=2, strategy="grid", executor="inline",
                db=False, progress=False)
    assert dk.untuned == ["wide"]


def test_a_catch_all_bucket_without_an_example_stays_untuned_quietly(recwarn) -> None:
    dk = ks.DynamicKernel(relu_rows, [("few", lambda rows, **_: rows <= 64), ("many", lambda rows, **_: True)])
    dk.tune([dict(rows=16, cols=64)], budget=2, strategy="grid", executor="inline", db=False, progress=False)
    assert dk.untuned == ["many"] and not [w for w in recwarn if "never chosen" in str(w.message)]
