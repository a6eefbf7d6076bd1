"""The shortcuts (identical blocks once, steady-state loops extrapolated) agree with the full run."""

from __future__ import annotations

import numpy as np
import programs as P
import pytest

from kernelstudio.sim import simulate

CASES = {
    "vector_d1": lambda: P.vector_program(rows=1000, cols=512, tile=16, depth=1, block_dim=8),
    "vector_d2_waves": lambda: P.vector_program(rows=4096, cols=256, tile=8, depth=2, block_dim=100),
    "mix_tail": lambda: P.mix_program(m=200, n=256, k=320, tm=16, tk=64, block_dim=6, tn=64),
    "mix_norm": lambda: P.mix_program(m=96, n=512, k=256, tm=32, tk=64, block_dim=3, vr=4, norm=True),
    "unfused": lambda: P.two_kernel_program(rows=600, cols=256, tile=16, block_dim=8),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shortcuts_agree_with_the_full_simulation(name):
    prog = CASES[name]()
    fast, full = simulate(prog), simulate(prog, exact=True)
    assert fast.time_us == pytest.approx(full.time_us, rel=0.01)
    assert fast.traffic == full.traffic
    assert len(fast.events) == len(full.events)
    for p, v in full.metrics["pipes"].items():
        assert fast.metrics["pipes"][p]["busy_us"] == pytest.approx(v["busy_us"], rel=0.01, abs=1e-9)
    # the events themselves: same multiset of (core, pipe, instr, tile) and close times
    def key(res):
        c = res.events.columns
        order = np.lexsort((c["start_us"], c["tile"], c["instr"], c["pipe"], c["core"]))
        return {k: c[k][order] for k in ("core", "pipe", "instr", "tile", "start_us")}
    a, b = key(fast), key(full)
    for k in ("core", "pipe", "instr", "tile"):
        assert np.array_equal(a[k], b[k])
    assert np.allclose(a["start_us"], b["start_us"], rtol=0.01, atol=0.01 * full.time_us)
    # and the shortcuts did something
    assert fast.stats["instructions_simulated"] < full.stats["instructions_simulated"]


def test_steady_state_is_extrapolated_in_one_block():
    prog = P.vector_program(rows=4096, cols=512, tile=16, depth=2, block_dim=1)
    fast, full = simulate(prog), simulate(prog, exact=True)
    assert fast.stats["instructions_simulated"] * 10 < full.stats["instructions_simulated"]
    assert fast.stats["instructions_represented"] == full.stats["instructions_simulated"]
    assert fast.time_us == pytest.approx(full.time_us, rel=1e-6)


def test_identical_blocks_are_simulated_once():
    fast = simulate(P.vector_program(rows=48 * 64, cols=512, tile=16, block_dim=48))
    assert fast.stats["block_classes"] == [1]
    tail = simulate(P.mix_program(m=200, n=256, k=256, tm=16, block_dim=6))
    assert tail.stats["block_classes"][0] in range(2, 6)
