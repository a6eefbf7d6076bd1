"""Engine semantics: calibration points, queue synchronisation, cross-core flags, launches, errors."""

from __future__ import annotations

import json

import programs as P
import pytest

import kernelstudio.hw as hw
from kernelstudio.sim import SimulationError, simulate
from kernelstudio.tileir.program import Alloc, DeQue, Free

PROF = hw.get("ascend910b2")


def _kernel_time_cycles(res) -> float:
    k = res.kernels[0]
    return (k["end_us"] - k["start_us"]) * PROF.clock_mhz


@pytest.mark.parametrize("nbytes", [1024, 8192, 65536, 262144])
@pytest.mark.parametrize("path", [("GM", "UB", False), ("GM", "L1", False), ("GM", "L1", True),
                                  ("UB", "GM", False)])
def test_single_copy_reproduces_the_calibration_curve(nbytes, path):
    src, dst, nd2nz = path
    res = simulate(P.single_copy_program(nbytes, src, dst, nd2nz), profile=PROF)
    [ev] = [e for e in res.events if e.pipe in ("MTE2", "MTE3")]
    want = PROF.costs.move_cycles(src, dst, nbytes, nd2nz=nd2nz)
    got = (ev.end_us - ev.start_us) * PROF.clock_mhz
    assert got == pytest.approx(want, rel=0.03)
    # and the kernel is that move plus one issue slot
    assert _kernel_time_cycles(res) == pytest.approx(want + PROF.scalar_issue_cycles, rel=0.03)


def test_vector_and_mmad_costs_come_from_the_profile():
    res = simulate(P.vector_program(rows=16, cols=1024, tile=16, depth=1, block_dim=1), profile=PROF)
    v = [e for e in res.events if e.pipe == "V"]
    assert [e.instr.split()[0] for e in v] == ["muls", "adds", "relu"]
    for e, op in zip(v, ("muls", "adds", "relu"), strict=True):
        want = PROF.costs.vector_cycles(op, "float16", 16 * 1024)
        assert (e.end_us - e.start_us) * PROF.clock_mhz == pytest.approx(want, rel=0.03)
    mix = simulate(P.mix_program(m=16, n=64, k=64, tm=16, tk=64, block_dim=1), profile=PROF)
    [mm] = [e for e in mix.events if e.pipe == "M"]
    assert (mm.end_us - mm.start_us) * PROF.clock_mhz == pytest.approx(
        PROF.costs.mmad_cycles(16, 64, 64, "float16"), rel=0.03)
    assert mm.flops == 2 * 16 * 64 * 64


def _first(res, pipe, tile):
    return next(e for e in res.events if e.pipe == pipe and e.tile == tile)


def test_double_buffering_emerges_from_queue_depth():
    p1 = P.vector_program(rows=64, cols=2048, tile=16, depth=1, block_dim=1)
    p2 = P.vector_program(rows=64, cols=2048, tile=16, depth=2, block_dim=1)
    r1, r2 = simulate(p1, exact=True), simulate(p2, exact=True)
    # depth 1: the second load waits until the compute released the only input slot
    assert _first(r1, "MTE2", 1).start_us >= _first(r1, "V", 0).start_us
    # depth 2: the second load runs right behind the first, overlapping the compute of tile 0
    assert _first(r2, "MTE2", 1).start_us == pytest.approx(_first(r2, "MTE2", 0).end_us)
    assert _first(r2, "MTE2", 1).start_us < _first(r2, "V", 0).end_us
    assert r2.time_us < r1.time_us
    # no formula: the compute of tile 1 still waits for its own load
    assert _first(r2, "V", 1).start_us >= _first(r2, "MTE2", 1).end_us


def test_mixed_kernel_vector_waits_for_the_cube_flag():
    res = simulate(P.mix_program(block_dim=4), exact=True)
    cores = {e.core for e in res.events if e.kernel == "mix"}
    assert {"core0.cubecore0", "core0.veccore0", "core0.veccore1"} <= cores
    fix = max(e.end_us for e in res.events if e.core == "core0.cubecore0" and e.pipe == "FIX")
    first_vec_load = min(e.start_us for e in res.events if e.core == "core0.veccore1" and e.pipe == "MTE2")
    assert first_vec_load >= fix - 1e-9
    assert any(e.pipe == "FLOW" and e.instr.startswith("cross_wait") for e in res.events)
    assert res.traffic["L0C->WS"] == res.traffic["WS->UB"] == 64 * 256 * 4


def test_cube_and_vector_overlap_across_tiles():
    # two m tiles per block: the AIV epilogue of tile 0 runs while the AIC computes tile 1
    res = simulate(P.mix_program(m=128, n=256, k=256, tm=16, block_dim=4), exact=True)
    cube = [e for e in res.events if e.core == "core0.cubecore0" and e.pipe in ("MTE2", "M") and e.tile == 4]
    vec = [e for e in res.events if e.core == "core0.veccore0" and e.pipe in ("MTE2", "V") and e.tile == 0]
    assert cube and vec
    assert any(v.start_us < c.end_us and c.start_us < v.end_us for v in vec for c in cube)


def test_waves_when_blocks_exceed_cores():
    one = simulate(P.vector_program(rows=48 * 16, cols=512, tile=16, block_dim=48), exact=True)
    two = simulate(P.vector_program(rows=96 * 16, cols=512, tile=16, block_dim=96), exact=True)
    assert two.metrics["cores_used"] == one.metrics["cores_used"] == 48
    k1, k2 = one.kernels[0]["time_us"], two.kernels[0]["time_us"]
    assert k2 > 1.8 * k1 and k2 < 2.2 * k1


def test_unfused_plan_shows_launch_gaps():
    res = simulate(P.two_kernel_program(), profile=PROF)
    gaps = [e for e in res.events if e.pipe == "LAUNCH"]
    assert len(gaps) == 2 and all(e.core == "host" for e in gaps)
    assert gaps[1].start_us == pytest.approx(res.kernels[0]["end_us"])
    assert res.kernels[1]["start_us"] == pytest.approx(res.kernels[0]["end_us"] + PROF.launch_overhead_us)
    second = [e for e in res.events if e.kernel == "k_exp" and e.pipe != "LAUNCH"]
    assert min(e.start_us for e in second) >= res.kernels[1]["start_us"]
    assert res.metrics["launch_overhead_us"] == pytest.approx(2 * PROF.launch_overhead_us)
    # the intermediate h is read back from L2 by the second kernel; h and the output are written into the
    # write-back L2 (1.5 MB fit), so no byte of either reaches HBM during the run
    assert res.metrics["l2_bytes"] == 3 * 512 * 512 * 2
    assert res.metrics["hbm_write_bytes"] == 0


def test_trace_has_msprof_names(tmp_path):
    res = simulate(P.mix_program())
    path = tmp_path / "t.json"
    res.to_chrome_trace(str(path))
    data = json.loads(path.read_text())
    names = {e["args"]["name"] for e in data["traceEvents"] if e["name"] == "process_name"}
    assert {"core0.cubecore0", "core0.veccore0", "core0.veccore1", "host"} <= names
    lanes = {e["args"]["name"] for e in data["traceEvents"] if e["name"] == "thread_name"}
    assert {"CUBE", "VECTOR", "MTE1", "MTE2", "MTE3", "FIXP", "SCALAR", "FLOWCTRL"} <= lanes
    xs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == len(res.events) and all(e["dur"] >= 0 for e in xs)


def test_results_are_plain_data():
    res = simulate(P.mix_program())
    d = res.to_dict()
    json.dumps(d)
    assert d["time_us"] == res.time_us and d["traffic"] == res.traffic
    assert "roofline" in res.summary()
    ev = res.events[0]
    assert ev.kernel == "mix"


def _replace_first(stmts, old_type, new):
    out = []
    done = False
    for s in stmts:
        if not done and isinstance(s, old_type):
            out.append(new)
            done = True
        else:
            out.append(s)
    return tuple(out)


def test_queue_misuse_is_reported():
    from dataclasses import replace

    p = P.vector_program(block_dim=1, depth=1)
    k = p.kernels[0]
    loop = k.aiv[0]
    bad = replace(loop, body=_replace_first(loop.body, Free, Alloc("xin")))  # Free(xin) -> Alloc(xin)
    with pytest.raises(SimulationError, match="xin"):
        simulate(replace(p, kernels=(replace(k, aiv=(bad,)),)))
    bad = replace(loop, body=tuple(s for s in loop.body if s != DeQue("yout")) + (DeQue("yout"),) * 2)
    with pytest.raises(SimulationError, match="DeQue"):
        simulate(replace(p, kernels=(replace(k, aiv=(bad,)),)))


def test_deadlock_is_reported():
    from dataclasses import replace

    p = P.mix_program(block_dim=1)
    k = p.kernels[0]
    aic = (k.aic[0],)
    # AIC never sets the flag the AIVs wait for
    loop = aic[0]
    body = tuple(s for s in loop.body if type(s).__name__ != "CrossSet")
    with pytest.raises(SimulationError, match="deadlock"):
        simulate(replace(p, kernels=(replace(k, aic=(replace(loop, body=body),)),)))


def test_wait_flag_holds_its_pipe_until_the_set_fires():
    import kernelstudio as ks

    tbl = ks.placeholder((16, 128), "float16", name="table")
    idx = ks.placeholder((40,), "int32", name="idx")
    prog = ks.lower(ks.create_schedule(ks.gather(tbl, idx)), "ascend910b2")
    r = ks.simulate(prog, exact=True)
    copies = [e for e in r.events if e.core == "core0.veccore0" and e.pipe in ("MTE2", "MTE3")]
    idx_in = next(e for e in copies if "idx" in e.instr)
    rows = [e for e in copies if "table" in e.instr]
    out = next(e for e in copies if e.pipe == "MTE3")
    assert all(row.start_us >= idx_in.end_us for row in rows)  # MTE2 -> S before the index read
    assert out.start_us >= max(row.end_us for row in rows)  # MTE2 -> MTE3 before the copy-out


def test_event_rows_flush_to_the_array_numpy_makes_of_them():
    import numpy as np

    from kernelstudio.sim.events import EventLog

    log = EventLog()
    rows = [(0.5, 3.25, 2, 7, -1, 4, 4096, 0, 1, -1.0), (3.25, 9.0, 5, 8, 2, -1, 0, 65536, -1, 1e6 + 3)]
    log.raw.extend(rows)
    log.flush()
    log.raw.append((9.0, 9.5, 0, 1, -1, -1, 0, 0, -1, -2.0))
    want = np.array([*rows, (9.0, 9.5, 0, 1, -1, -1, 0, 0, -1, -2.0)], dtype=np.float64)
    got = log.array()
    assert got.dtype == np.float64 and got.shape == (3, 10) and np.array_equal(got, want) and log.total() == 3
