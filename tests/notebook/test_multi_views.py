"""The multi-device Studio's views as data: every number shown is the model's (Mc2Design / MultiSim)."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.notebook.render import multi as RM
from kernelstudio.notebook.views import multi as VM


@pytest.fixture(scope="module")
def case():
    """The MC2 best-practice case (CANN 8.0 Ascend C best practices) on 8 devices, split in 4."""
    x = ks.placeholder((4096, 4096), "float16", name="x1")
    w = ks.placeholder((4096, 8192), "float16", name="x2")
    return ks.multi.matmul_allreduce(x, w, cluster=ks.multi.Cluster(devices=8), tiles=4)


def test_cards_are_the_models_numbers(case):
    c = VM.multi_cards(case, "tp")
    sim, base = case.sim, case.baseline()
    assert c["name"] == "tp" and c["devices"] == 8 and c["tiles"] == 4 and c["tile_rows"] == list(case.tile_rows)
    for key in ("time_us", "compute_us", "comm_us", "exposed_comm_us", "hidden_comm_us", "serial_us", "epilogue_us"):
        assert c[key] == getattr(sim, key)
    assert c["exposed_share"] == sim.exposed_comm_us / sim.time_us
    assert c["unsplit_time_us"] == base.time_us and c["unsplit_exposed_comm_us"] == base.exposed_comm_us
    assert c["unsplit_exposed_share"] == base.exposed_comm_us / base.time_us
    assert c["gain"] == case.gain
    html = RM.multi_cards_html(c)
    for number in (f"{sim.time_us:,.1f} us", f"{sim.compute_us:,.1f} us", f"{sim.comm_us:,.1f} us",
                   f"{c['unsplit_exposed_share']:.1%} &rarr; {c['exposed_share']:.1%}", f"{case.gain:+.1%}"):
        assert number in html, number
    # overlap hides communication: the share shown falls from unsplit to split
    assert c["exposed_share"] < c["unsplit_exposed_share"]


def test_timeline_has_a_lane_group_per_device_and_its_exposed_part_is_the_models(case):
    tl = VM.multi_timeline(case)
    assert [g["device"] for g in tl["groups"]] == list(range(8))
    assert [lane["lane"] for lane in tl["lanes"] if lane["device"] == 3] == ["compute", "comm"]
    b = tl["bars"]
    for d in range(8):
        lanes = set(tl["groups"][d]["lanes"])
        exposed = sum(e - s for lane, s, e, k in zip(b["lane"], b["start"], b["end"], b["kind"], strict=True)
                      if lane in lanes and k == "exposed")
        hidden = sum(e - s for lane, s, e, k in zip(b["lane"], b["start"], b["end"], b["kind"], strict=True)
                     if lane in lanes and k == "hidden")
        assert exposed == pytest.approx(case.exposed_comm_us, abs=1e-6) == pytest.approx(tl["exposed_us"][d])
        assert hidden == pytest.approx(case.sim.hidden_comm_us, abs=1e-6)
        compute = sum(e - s for lane, s, e, k in zip(b["lane"], b["start"], b["end"], b["kind"], strict=True)
                      if lane in lanes and k in ("compute", "sync"))
        assert compute == pytest.approx(case.compute_us, abs=1e-6)
    assert tl["range"] == [0.0, case.time_us]
    # a hidden piece lies under a matmul tile; an exposed one under none
    busy = [(e.start_us, e.end_us) for e in case.sim.events[0] if e.lane in ("compute", "sync")]
    for seg in VM.comm_segments(case.sim.events[0]):
        mid = (seg["start"] + seg["end"]) / 2
        assert seg["hidden"] == any(a <= mid < z for a, z in busy)


def test_unsplit_everything_is_exposed_and_nothing_hidden():
    x = ks.placeholder((2048, 4096), "float16", name="x")
    w = ks.placeholder((4096, 4096), "float16", name="w")
    d = ks.multi.matmul_allreduce(x, w, cluster=ks.multi.Cluster(devices=4), tiles=1)
    tl = VM.multi_timeline(d)
    kinds = set(tl["bars"]["kind"])
    assert "hidden" not in kinds and "exposed" in kinds
    assert tl["exposed_us"][0] == pytest.approx(d.comm_us)


def test_an_expanded_device_shows_the_pipes_of_each_tiles_single_chip_simulation(case):
    tl = VM.multi_timeline(case, expand=[1])
    names = [lane["lane"] for lane in tl["lanes"] if lane["device"] == 1]
    assert "compute" not in names and "comm" in names and "sync" in names
    assert any(n.endswith(" CUBE") for n in names) and any(n.endswith(" MTE2") for n in names)
    assert [lane["lane"] for lane in tl["lanes"] if lane["device"] == 0] == ["compute", "comm"]
    # the pipes of tile i run inside tile i's compute interval (the tile's simulation, its launch taken off)
    lanes = {i for i, lane in enumerate(tl["lanes"]) if lane["device"] == 1 and lane["lane"].startswith("core")}
    b = tl["bars"]
    pipe_spans = [(s, e) for lane, s, e in zip(b["lane"], b["start"], b["end"], strict=True) if lane in lanes]
    tiles = [e for e in case.sim.events[1] if e.lane == "compute"]
    for s, e in pipe_spans:
        assert any(t.start_us - 1e-6 <= s and e <= t.end_us + 1e-6 for t in tiles), (s, e)
    # and the tile's simulation is what its matmul time came from
    sim0 = case.tile_sim(0)
    assert sim0.time_us - sim0.metrics["launch_overhead_us"] * len(sim0.kernels) == pytest.approx(tiles[0].us)


def test_sweep_is_every_allowed_count_with_the_refused_ones_and_their_reasons(case):
    sw = VM.multi_sweep(case)
    allowed = case.feasible_tiles()
    assert [p["tiles"] for p in sw["points"]] == list(allowed)
    assert sorted([p["tiles"] for p in sw["points"]] + [r["tiles"] for r in sw["refused"]]) == list(range(1, 17))
    for r in sw["refused"]:
        assert f"into {r['tiles']} tiles" in r["why"] or f"tiles={r['tiles']}" in r["why"]
    for p in sw["points"]:
        d = case.with_schedule(tiles=p["tiles"])
        assert p["time_us"] == d.time_us and p["exposed_comm_us"] == d.exposed_comm_us and p["gain"] == d.gain
    best = min(sw["points"], key=lambda p: p["time_us"])
    assert sw["best"] == best["tiles"] and sw["current"] == 4 and sw["unsplit_us"] == case.baseline().time_us
    # where overlap stops paying: past the best, every count from there on is over 2 % slower
    stop = sw["stops_paying"]
    assert stop is not None and stop > sw["best"]
    assert all(p["time_us"] > best["time_us"] * 1.02 for p in sw["points"] if p["tiles"] >= stop)
    assert sw["costs_from"] == min(p["tiles"] for p in sw["points"] if p["gain"] < 0)
    note = RM.sweep_note_html(sw)
    assert f"best: {sw['best']} tiles, {best['time_us']:,.1f} us" in note
    assert f"from {stop} tiles" in note


def test_link_table_names_every_figures_source(case):
    rows = VM.link_table(case)
    assert [r["field"] for r in rows] == list(ks.multi.LINK_FIELDS)
    for r in rows:
        assert r["value"] == getattr(case.cluster.link, r["field"]) and r["source"]
    user = case.cluster.with_link(mesh_link_bytes_per_s=40e9)
    d = ks.multi.matmul_allreduce(case.x, case.w, cluster=user, tiles=4)
    [row] = [r for r in VM.link_table(d) if r["field"] == "mesh_link_bytes_per_s"]
    assert row["value"] == 40e9 and row["source"].startswith("user")
    assert "assumed" in RM.link_html(rows)


def test_all_gather_and_reduce_scatter_views():
    x = ks.placeholder((2048, 4096), "float16", name="x")
    w = ks.placeholder((4096, 4096), "float16", name="w")
    c = ks.multi.Cluster(devices=4)
    for make in (ks.multi.all_gather_matmul, ks.multi.matmul_reduce_scatter):
        d = make(x, w, cluster=c, tiles=2)
        data = VM.multi_data(d, name="op")
        assert data["cards"]["time_us"] == d.time_us
        assert data["timeline"]["exposed_us"][0] == pytest.approx(d.exposed_comm_us, abs=1e-6)
        assert [p["tiles"] for p in data["sweep"]["points"]] == list(d.feasible_tiles())
    ag = ks.multi.all_gather_matmul(x, w, cluster=c, tiles=2)
    tl = VM.multi_timeline(ag, expand=[0])  # the local rows' matmul has pipes too
    assert any(lane["lane"].endswith(" CUBE") for lane in tl["lanes"] if lane["device"] == 0)


def test_what_changed_names_the_knob_and_the_deltas(case):
    before = case.baseline()
    data = VM.multi_data(case, before, {"tiles": 1}, {"tiles": 4})
    ch = data["changed"]
    assert ch["knobs"] == {"tiles": (1, 4)}
    assert ch["d_time_us"] == case.time_us - before.time_us
    assert ch["d_exposed_comm_us"] == case.exposed_comm_us - before.exposed_comm_us
    assert "tiles 1 &rarr; 4" in RM.multi_changed_html(ch)
