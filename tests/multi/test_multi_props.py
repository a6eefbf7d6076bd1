"""Properties of the per-device timeline, for random tiles, links and designs: the overlap never costs time
against the same work run serially, never beats its longest lane, and a faster link never slows it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio.multi.timeline import TileWork, run_timeline

M = ks.multi
LINK = M.get_link("hccs_910b")
EPS = 1e-6

tile_us = st.floats(0.0, 500.0, allow_nan=False)
nbytes = st.floats(0.0, 64 * 2**20, allow_nan=False)


def _tiles(draw_data, kind, alg, p, link):
    return [TileWork(c, M.collective_steps(kind, alg, n, p, link), e) for c, n, e in draw_data]


def _check(sim):
    assert sim.exposed_comm_us >= -EPS
    assert sim.exposed_comm_us <= sim.comm_us + EPS
    assert sim.time_us <= sim.serial_us + EPS
    assert sim.time_us + EPS >= sim.launch_us + max(sim.compute_us, sim.comm_us, sim.epilogue_us)
    for lane in ("compute", "comm", "epilogue"):
        evs = sorted((e for e in sim.events[0] if e.lane in ((lane, "sync") if lane == "compute" else (lane,))),
                     key=lambda e: e.start_us)
        for a, b in zip(evs, evs[1:], strict=False):
            assert b.start_us + EPS >= a.end_us, f"{lane} lane overlaps itself"


@settings(max_examples=150, deadline=None)
@given(work=st.lists(st.tuples(tile_us, nbytes, st.floats(0.0, 50.0)), min_size=1, max_size=16),
       kind=st.sampled_from(M.COLLECTIVES), alg=st.sampled_from(M.ALGORITHMS), p=st.sampled_from([1, 2, 4, 8]),
       order=st.sampled_from(["compute_first", "comm_first"]), speedup=st.floats(1.0, 100.0),
       sync=st.floats(0.0, 5.0), issue=st.floats(0.0, 20.0))
def test_timeline_invariants_and_a_faster_link_never_slows_it(work, kind, alg, p, order, speedup, sync, issue):
    if order == "comm_first":
        work = [(c, n, 0.0) for c, n, _ in work]
    kw = dict(devices=p, launch_us=5.0, sync_us=sync, issue_us=issue)
    local = TileWork(work[0][0], ()) if order == "comm_first" else None
    slow = run_timeline(order, _tiles(work, kind, alg, p, LINK), local=local, **kw)
    fast_link = LINK.with_overrides(**{f"{alg}_link_bytes_per_s": getattr(LINK, f"{alg}_link_bytes_per_s") * speedup})
    fast = run_timeline(order, _tiles(work, kind, alg, p, fast_link), local=local, **kw)
    _check(slow)
    _check(fast)
    assert fast.time_us <= slow.time_us + EPS
    assert fast.comm_us <= slow.comm_us + EPS
    if order == "compute_first":  # a tile's collective starts after its matmul and the SyncAll
        ev = slow.events[0]
        for i in range(len(work)):
            done = max(e.end_us for e in ev if e.tile == i and e.lane in ("compute", "sync"))
            starts = [e.start_us for e in ev if e.tile == i and e.lane == "comm"]
            assert all(s + EPS >= done for s in starts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.sampled_from([1024, 2048, 4096]), n=st.sampled_from([1024, 4096, 8192]),
       p=st.sampled_from([2, 4, 8]), tiles=st.integers(1, 16), alg=st.sampled_from(M.ALGORITHMS),
       kind=st.sampled_from(M.KINDS), bw=st.floats(5e9, 5e11), alpha=st.floats(1.0, 60.0))
def test_designs_obey_the_invariants_and_bandwidth_monotonicity(m, n, p, tiles, alg, kind, bw, alpha):
    x = ks.placeholder((m, 1024), "float16", name="x")
    w = ks.placeholder((1024, n), "float16", name="w")
    op = getattr(M, kind)
    base = M.Cluster(p).with_link(**{f"{alg}_link_bytes_per_s": bw, f"{alg}_alpha_us": alpha})
    try:
        d = op(x, w, cluster=base, tiles=tiles, algorithm=alg, tail="back")
    except M.TilingError:
        return
    _check(d.sim)
    faster = op(x, w, cluster=base.with_link(**{f"{alg}_link_bytes_per_s": bw * 2}), tiles=tiles, algorithm=alg,
                tail="back")
    assert faster.time_us <= d.time_us + EPS
    assert faster.compute_us == pytest.approx(d.compute_us)


@settings(max_examples=200, deadline=None)
@given(rows=st.integers(1, 20000), tiles=st.integers(1, 16), per_row=st.sampled_from([256, 2048, 16384]),
       tail=st.sampled_from(["back", "front"]))
def test_a_split_is_refused_exactly_when_cann_would(rows, tiles, per_row, tail):
    from kernelstudio.multi import tiling

    ok = tiles in tiling.feasible_tiles(rows, per_row)
    try:
        got = tiling.tile_rows(rows, tiles, tail, per_row, what="t")
    except M.TilingError:
        assert not ok
        return
    assert ok and sum(got) == rows and len(got) == tiles
    longs = sorted(got)[1:] if tiles > 1 else got
    assert len(set(longs)) == 1 and (tiles == 1 or longs[0] % M.ALIGN_ROWS == 0)
    assert tiles == 1 or min(got) * per_row >= M.MIN_COMM_BYTES
    assert (got[-1] if tail == "back" else got[0]) == min(got)
