"""Memory shares per wave: each wave's moves see the concurrency of their own wave."""

from __future__ import annotations

import programs as P
import pytest

import kernelstudio.hw as hw
from kernelstudio.sim import simulate

PROF = hw.get("ascend910b2")
LOAD = "copy xin <- gm.x"
# Shares are rounded to 9 significant digits and times are float sums of cycles: 1e-6 relative is far
# above that noise and far below any modelled effect (the pairs compared below are equal or differ by
# whole moves).
TOL = 1e-6


def _chip(aiv: int):
    return PROF.with_overrides(aiv_cores=aiv, aic_cores=max(aiv // 2, 1))


def _one_tile_blocks(blocks: int, cols: int = 1000):
    """`blocks` blocks, one 8-row tile each: load, relu, store (all blocks move data in lockstep)."""
    return P.vector_program(rows=8 * blocks, cols=cols, tile=8, depth=2, block_dim=blocks, ops=("relu",))


def _load_cycles(res, tile: int) -> float:
    [ev] = [e for e in res.events if e.instr == LOAD and e.tile == tile]
    return (ev.end_us - ev.start_us) * PROF.clock_mhz


def _hbm_cycles(nbytes: float) -> float:
    return nbytes / (PROF.hbm_bytes_per_s / PROF.clock_hz)


@pytest.mark.parametrize("blocks", [48, 96])
def test_identical_cores_streaming_together_each_get_one_nth(blocks):
    res = simulate(_one_tile_blocks(blocks, cols=4096), profile=PROF)
    nbytes = 8 * 4096 * 2
    assert PROF.costs.move_cycles("GM", "UB", nbytes) < _hbm_cycles(48 * nbytes)  # bandwidth-bound
    for tile in (0, 47, blocks - 1):
        assert _load_cycles(res, tile) == pytest.approx(_hbm_cycles(48 * nbytes), rel=1e-9)


def test_the_sparse_last_wave_runs_at_its_own_concurrency():
    res = simulate(_one_tile_blocks(49), profile=PROF)
    nbytes = 8 * 1000 * 2
    curve = PROF.costs.move_cycles("GM", "UB", nbytes)
    assert _hbm_cycles(nbytes) < curve < _hbm_cycles(48 * nbytes)
    assert _load_cycles(res, 0) == pytest.approx(_hbm_cycles(48 * nbytes), rel=1e-9)
    assert _load_cycles(res, 48) == pytest.approx(curve, rel=1e-9)  # alone: the single-core curve


def test_waves_add_up_so_a_ragged_last_wave_can_cost_more_than_fewer_cores():
    """49 lockstep blocks on 48 cores = a 48-block kernel then a 1-block kernel; 26 cores do better."""
    def kernel_us(blocks: int, aiv: int) -> float:
        return simulate(_one_tile_blocks(blocks), profile=_chip(aiv)).kernels[0]["time_us"]

    full, alone, ragged = kernel_us(48, 48), kernel_us(1, 48), kernel_us(49, 48)
    assert ragged == pytest.approx(full + alone, rel=1e-9)
    assert kernel_us(49, 26) < ragged


def _sweep(prog, cores: list[int]) -> dict[int, float]:
    return {c: simulate(prog, profile=_chip(c)).time_us for c in cores}


@pytest.mark.parametrize("case", ["405x1000_55_blocks", "one_block_above_48_cores"])
def test_more_cores_are_never_slower_over_a_sweep(case):
    """k times the cores, or enough cores for a single wave, is never slower (module doc of multicore)."""
    if case == "405x1000_55_blocks":
        prog = P.vector_program(rows=405, cols=1000, tile=8, depth=2, block_dim=55, ops=("relu",))
    else:
        prog = P.vector_program(rows=49 * 24, cols=512, tile=8, depth=2, block_dim=49, ops=("relu",))
    bd = prog.kernels[0].block_dim
    times = _sweep(prog, list(range(2, 49, 2)) + [56, 64])
    checked = 0
    for big, t_big in times.items():
        for small, t_small in times.items():
            if small < big and (big % small == 0 or big >= bd):
                assert t_big <= t_small * (1 + TOL), (small, big)
                checked += 1
    assert checked > 60
    # 56 and 64 vector cores both run every block in one wave; 64 come with 32 AI cores of L2 write ports
    # (the [ini] rate is per core) where 56 have 28, so the outputs, which stay in L2, land no slower
    assert min(times.values()) == times[64] <= times[56] * (1 + TOL)
