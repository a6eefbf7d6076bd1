"""What a pipe waited on: the simulator's `why` per instruction and the idle breakdown built on it."""

from __future__ import annotations

import pytest
from programs import mix_program, vector_program

import kernelstudio as ks
from kernelstudio.notebook.views.idle import idle_breakdown, idle_gaps


def _causes(sim, core: str, pipe: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for g in idle_gaps(sim, cores=None):
        if g["core"] == core and g["pipe"] == pipe:
            out[g["cause"]] = out.get(g["cause"], 0.0) + g["end"] - g["start"]
    return out


def test_single_buffer_load_waits_for_the_slot_the_vector_frees():
    sim = ks.simulate(vector_program(rows=64, cols=512, tile=16, depth=1, block_dim=1))
    mte2 = _causes(sim, "core0.veccore0", "MTE2")
    assert "a free slot of xin (its Free)" in mte2
    v = _causes(sim, "core0.veccore0", "VECTOR")
    assert "xin filled (its EnQue)" in v
    released = {g["released_by"] for g in idle_gaps(sim, cores=None)
                if g["pipe"] == "MTE2" and g["cause"].startswith("a free slot of xin")}
    # the slot of xin is freed when the last vector instruction reading it ends
    assert all(r.startswith("core0.veccore0 VECTOR: ") for r in released) and released


def test_double_buffering_removes_most_slot_waits():
    one = _causes(ks.simulate(vector_program(rows=64, cols=512, tile=16, depth=1, block_dim=1)),
                  "core0.veccore0", "MTE2").get("a free slot of xin (its Free)", 0.0)
    two = _causes(ks.simulate(vector_program(rows=64, cols=512, tile=16, depth=2, block_dim=1)),
                  "core0.veccore0", "MTE2").get("a free slot of xin (its Free)", 0.0)
    assert one > 0
    assert two < one


def test_vector_core_waits_on_the_cross_core_flag_set_by_the_cube_core():
    sim = ks.simulate(mix_program(m=32, n=128, k=128, tm=16, tk=64, depth=2, block_dim=1))
    gaps = [g for g in idle_gaps(sim, cores=None) if g["core"] == "core0.veccore0" and g["pipe"] == "MTE2"]
    flag = [g for g in gaps if "cross_wait" in g["cause"]]
    assert flag, [g["cause"] for g in gaps]
    assert all(g["released_by"].startswith("core0.cubecore0 ") for g in flag)


def test_events_carry_slot_and_why():
    sim = ks.simulate(vector_program(rows=64, cols=512, tile=16, depth=2, block_dim=1))
    loads = [e for e in sim.events if e.pipe == "MTE2"]
    assert [e.slot for e in loads] == [0, 1, 0, 1]
    vec = [e for e in sim.events if e.pipe == "V"]
    assert vec[0].why == "xin filled (its EnQue)"


@pytest.mark.parametrize("depth", [1, 2])
def test_breakdown_sums_to_the_idle_time(depth):
    sim = ks.simulate(vector_program(rows=128, cols=256, tile=16, depth=depth, block_dim=2))
    for row in idle_breakdown(sim, cores=None):
        total = sum(c["us"] for c in row["causes"])
        assert total == pytest.approx(row["idle_us"], rel=1e-9)
        assert 0.0 <= row["idle_pct"] <= 100.0 + 1e-9
        # busy + idle covers the kernel's span on every lane that has work
        busy = sum(e.end_us - e.start_us for e in sim.events
                   if e.core == row["core"] and ks.sim.results.LANES.get(e.pipe) == row["pipe"])
        span = sim.kernels[0]["end_us"] - sim.kernels[0]["start_us"]
        assert busy + row["idle_us"] == pytest.approx(span, rel=1e-6)


def test_running_ends_match_a_loop_per_group():
    import numpy as np

    from kernelstudio.sim.idle import _running_ends

    rng = np.random.default_rng(7)
    for n in (1, 2, 17, 300):
        en = np.round(rng.random(n) * 50, int(rng.integers(0, 3)))  # ties included
        heads = np.unique(np.concatenate(([0], rng.integers(1, max(n, 2), size=n // 5)))).astype(np.int64)
        heads = heads[heads < n]
        starts = rng.random(len(heads))
        prev, last = _running_ends(en, heads, starts)
        bounds = [*heads.tolist(), n]
        for g in range(len(heads)):
            seg = en[bounds[g]:bounds[g + 1]]
            want = np.concatenate(([starts[g]], np.maximum.accumulate(seg)[:-1]))
            assert np.array_equal(prev[bounds[g]:bounds[g + 1]], want) and last[g] == seg.max()
    prev, last = _running_ends(np.empty(0), np.empty(0, dtype=np.int64), np.empty(0))
    assert len(prev) == 0 and len(last) == 0
