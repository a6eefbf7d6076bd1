"""ks.multi pieces one by one: the link model and its sources, the algorithms' steps against HCCL's
formulas, CANN's tiling rules, the timeline's bookkeeping, the result's API."""

from __future__ import annotations

import math

import pytest

import kernelstudio as ks
from kernelstudio.multi import tiling
from kernelstudio.multi.link import LINK_SOURCE_TAGS, link_from_toml
from kernelstudio.multi.timeline import TileWork, run_timeline

M = ks.multi
MIB = 2**20


def _xw(m=1024, k=512, n=1024, dtype="float16"):
    return ks.placeholder((m, k), dtype, name="x"), ks.placeholder((k, n), dtype, name="w")


# --- the link model -----------------------------------------------------------------------------------
def test_every_link_figure_has_a_tagged_source():
    for name in M.link_names():
        link = M.get_link(name)
        for f in M.LINK_FIELDS:
            assert link.source(f).startswith(LINK_SOURCE_TAGS), (name, f)


def test_user_figures_say_user_and_change_the_time():
    link = M.get_link("hccs_910b").with_overrides(mesh_link_bytes_per_s=40e9)
    assert link.source("mesh_link_bytes_per_s") == "user"
    assert link.source("mesh_alpha_us").startswith("derived")
    x, w = _xw()
    slow = M.matmul_allreduce(x, w, cluster=M.Cluster(8))
    fast = M.matmul_allreduce(x, w, cluster=M.Cluster(8).with_link(mesh_link_bytes_per_s=40e9))
    assert fast.comm_us < slow.comm_us


@pytest.mark.parametrize("p", [2, 4, 8])
@pytest.mark.parametrize("nbytes", [64 * 1024, 3 * MIB, 64 * MIB])
def test_steps_sum_to_hccls_formulas(p, nbytes):
    link = M.get_link("hccs_910b")
    for alg in M.ALGORITHMS:
        a, b, g = link.params(alg)
        n = nbytes
        want = {
            ("all_reduce", "mesh"): 2 * a + 2 / p * n * b + (p - 1) / p * n * g,
            ("all_reduce", "ring"): 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g,
            ("all_gather", "mesh"): a + n / p * b,
            ("all_gather", "ring"): (p - 1) * (a + n / p * b),
            ("reduce_scatter", "mesh"): a + n / p * b + (p - 1) / p * n * g,
            ("reduce_scatter", "ring"): (p - 1) * (a + n / p * b + n / p * g),
        }
        for kind in M.COLLECTIVES:
            steps = M.collective_steps(kind, alg, n, p, link)
            assert sum(s.us for s in steps) == pytest.approx(want[kind, alg], rel=1e-12), (kind, alg)
    assert M.collective_steps("all_reduce", "mesh", nbytes, 1, link) == ()


def test_a_link_table_without_a_fit_must_give_every_figure():
    table = {"max_devices": {"value": 4, "source": "assumed: test"},
             "link": {f: {"value": 1.0, "source": "assumed: test"} for f in M.LINK_FIELDS if f != "max_devices"}}
    table["link"]["aiv_comm_cores"] = {"value": 2, "source": "assumed: test"}
    link = link_from_toml("t", table)
    assert link.max_devices == 4 and link.mesh_alpha_us == 1.0
    del table["link"]["ring_alpha_us"]
    with pytest.raises(M.LinkError, match="ring_alpha_us"):
        link_from_toml("t", table)
    table["link"]["ring_alpha_us"] = {"value": 1.0, "source": "a blog said so"}
    with pytest.raises(M.LinkError, match="must start with one of"):
        link_from_toml("t", table)


# --- tiling -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rows,tiles", [(4096, 1), (4096, 2), (4096, 3), (4096, 16), (1000, 2), (4096, 11)])
def test_tiles_cover_the_rows_on_the_128_row_grid(rows, tiles):
    for tail in ("back", "front"):
        got = tiling.tile_rows(rows, tiles, tail, 16384, what="t")
        assert sum(got) == rows and len(got) == tiles
        longs = got[:-1] if tail == "back" else got[1:]
        assert all(r % M.ALIGN_ROWS == 0 for r in longs) and len(set(longs)) <= 1
        short = got[-1] if tail == "back" else got[0]
        assert 0 < short <= max(got)


def test_the_feasible_counts_are_exactly_those_that_split():
    ok = tiling.feasible_tiles(4096, 16384)
    assert ok == (1, 2, 3, 4, 5, 6, 7, 8, 11, 16)
    for t in range(1, 17):
        if t in ok:
            tiling.tile_rows(4096, t, "back", 16384, what="t")
        else:
            with pytest.raises(M.TilingError, match="tile counts that work here: 1, 2, 3"):
                tiling.tile_rows(4096, t, "back", 16384, what="t")


def test_auto_tail_follows_canns_rule():
    x, w = _xw(4096, 4096, 8192)
    comm_bound = M.matmul_allreduce(x, w, cluster=M.Cluster(8), tiles=3)
    assert comm_bound.compute_us < comm_bound.comm_us and comm_bound.schedule.tail == "front"
    assert comm_bound.tile_rows[0] < comm_bound.tile_rows[-1]
    fast = M.Cluster(8).with_link(mesh_link_bytes_per_s=1e12, mesh_alpha_us=1.0)
    compute_bound = M.matmul_allreduce(x, w, cluster=fast, tiles=3)
    assert compute_bound.schedule.tail == "back" and compute_bound.tile_rows[-1] < compute_bound.tile_rows[0]


# --- the timeline ---------------------------------------------------------------------------------------
def test_a_hand_built_timeline():
    """Two tiles of 10 us compute and a one-step 15 us collective: the second matmul hides the first
    collective; the second collective is exposed."""
    link = M.get_link("hccs_910b").with_overrides(mesh_alpha_us=15.0, mesh_link_bytes_per_s=1e30,
                                                   mesh_reduce_bytes_per_s=1e30)
    steps = M.collective_steps("all_gather", "mesh", 1.0, 2, link)
    tiles = [TileWork(10.0, steps), TileWork(10.0, steps)]
    sim = run_timeline("compute_first", tiles, devices=2, launch_us=5.0, sync_us=1.0, issue_us=2.0)
    # cube: 5-15 tile 0, 15-16 sync, 16-26 tile 1, 26-27 sync; engine: 16-18 issue, 18-33 step,
    # 33-35 issue, 35-50 step
    assert sim.time_us == pytest.approx(50.0)
    assert sim.compute_us == pytest.approx(22.0) and sim.comm_us == pytest.approx(34.0)
    assert sim.exposed_comm_us == pytest.approx(50.0 - 27.0)
    assert sim.serial_us == pytest.approx(5 + 22 + 34)
    assert len(sim.events) == 2 and [e.device for e in sim.events[1]] == [1] * len(sim.events[1])
    assert [e.lane for e in sim.events[0]][:3] == ["compute", "sync", "comm"]


def test_result_api_and_events():
    x, w = _xw(2048, 1024, 4096)
    r = M.matmul_allreduce(x, w, cluster=M.Cluster(4), tiles=4)
    assert r.sim.events is r.events and len(r.events) == 4
    assert {e.lane for e in r.events[0]} == {"compute", "sync", "comm"}
    assert sum(e.tile >= 0 for e in r.events[0] if e.lane == "compute") == 4
    steps = [e for e in r.events[0] if e.lane == "comm" and "step" in e.name]
    assert sum(e.link_bytes for e in steps) == pytest.approx(2048 * 4096 * 2 / 4 * 2)  # RS + AG, n/p each
    assert all(e.end_us >= e.start_us for e in r.events[0])
    assert r.baseline().schedule.tiles == 1 and r.with_schedule(tiles=2).schedule.tiles == 2
    assert "4 devices" in r.summary() and "exposed" in r.summary()
    assert math.isclose(r.gain, 1 - r.time_us / r.baseline().time_us)


def test_one_device_has_no_communication():
    x, w = _xw()
    r = M.matmul_allreduce(x, w, cluster=M.Cluster(1), tiles=2)
    assert r.comm_us == 0 and r.exposed_comm_us == 0 and r.time_us == pytest.approx(r.serial_us)


def test_the_tile_count_can_be_a_knob():
    x, w = _xw(4096, 1024, 4096)
    with ks.schedule.knobs.knob_values({"tiles": 4}) as ctx:
        r = M.matmul_allreduce(x, w, cluster=M.Cluster(8), tiles=ks.knob("tiles", 2, [1, 2, 4, 8]))
    assert r.schedule.tiles == 4 and "tiles" in ctx.seen


def test_aiv_engine_issues_faster_and_takes_vector_cores_from_the_epilogue():
    x, w = _xw(2048, 1024, 4096)
    g = ks.placeholder((4096,), "float16", name="gamma")
    c = M.Cluster(8)
    cpu = M.matmul_allreduce(x, w, cluster=c, tiles=4, rms_norm=g)
    aiv = M.matmul_allreduce(x, w, cluster=c, tiles=4, rms_norm=g, engine="aiv")
    assert aiv.comm_us < cpu.comm_us  # 4 issues at 3 us instead of 9.2 us
    assert aiv.sim.epilogue_us > cpu.sim.epilogue_us  # 40 vector cores instead of 48


def test_the_other_two_operators_time_and_shape():
    x, w = _xw(1024, 512, 2048)
    c = M.Cluster(4)
    ag = M.all_gather_matmul(x, w, cluster=c, tiles=2)
    rs = M.matmul_reduce_scatter(x, w, cluster=c, tiles=2)
    assert ag.out_shape == (4096, 2048) and rs.out_shape == (256, 2048)
    assert ag.events[0][0].name == "matmul local rows"
    assert rs.split_rows == 256 and sum(rs.tile_rows) == 256
    for d in (ag, rs):
        assert max(d.compute_us, d.comm_us) <= d.time_us + 1e-9 <= d.serial_us + 1e-6


def test_chrome_trace_has_a_process_per_device_and_a_thread_per_lane(tmp_path):
    import json

    x, w = _xw(2048, 1024, 4096)
    r = M.matmul_allreduce(x, w, cluster=M.Cluster(2), tiles=2)
    trace = r.sim.to_chrome_trace(str(tmp_path / "t.json"))
    assert json.loads((tmp_path / "t.json").read_text()) == trace
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {1, 2} and len(spans) == sum(len(d) for d in r.events)
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    assert names == {"device 0", "device 1"}


def test_to_dict_is_plain_json():
    import json

    x, w = _xw(2048, 1024, 4096)
    r = M.matmul_allreduce(x, w, cluster=M.Cluster(2), tiles=2)
    data = json.loads(json.dumps(r.sim.to_dict()))
    assert data["time_us"] == pytest.approx(r.time_us) and len(data["events"]) == 2
    assert data["hidden_comm_us"] == pytest.approx(r.comm_us - r.exposed_comm_us)
    assert {e["lane"] for e in data["events"][1]} == {"compute", "sync", "comm"}
