"""The design database (schema version, corruption, saved designs), the feasibility map and ks.tune's
bad-input errors."""

from __future__ import annotations

import sqlite3

import pytest

import kernelstudio as ks
from kernelstudio.plan.choose import planning_target
from kernelstudio.tune import db as db_mod
from kernelstudio.tune.db import DesignDB, default_db_path
from tests.reference_kernels import mla_prolog_lite
from tests.unit.tune_support import TARGET, mla_design, tune_inline


@pytest.fixture(autouse=True)
def _db(fresh_db):
    return fresh_db


run = tune_inline


# --- the database ----------------------------------------------------------------------------------

def test_default_path_follows_the_env_var(_db, monkeypatch, tmp_path):
    assert default_db_path() == _db
    run(mla_design, budget=2, strategy="grid")
    assert _db.exists()
    monkeypatch.delenv("KS_DESIGN_DB")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_db_path() == tmp_path / "cache" / "kernelstudio" / "designs.sqlite"


@pytest.mark.parametrize("version,word", [(db_mod.SCHEMA_VERSION + 1, "newer"), (0, "older")])
def test_other_schema_version_is_refused_and_left_alone(_db, version, word):
    DesignDB(_db).close()
    con = sqlite3.connect(_db)
    with con:
        con.execute("UPDATE ks_schema SET version = ?", (version,))
    con.close()
    before = _db.read_bytes()
    with pytest.raises(ks.DesignDBError) as ei:
        run(mla_design, budget=2, strategy="grid")
    msg = str(ei.value)
    assert str(_db) in msg and f"schema version {version}" in msg and word in msg
    assert f"reads version {db_mod.SCHEMA_VERSION}" in msg and "move the file away" in msg
    assert _db.read_bytes() == before


def test_not_sqlite_is_refused_and_left_alone(_db):
    _db.write_bytes(b"these are not the designs you are looking for" * 100)
    before = _db.read_bytes()
    with pytest.raises(ks.DesignDBError, match="not an SQLite file") as ei:
        ks.designs()
    assert str(_db) in str(ei.value)
    assert _db.read_bytes() == before


def test_corrupted_sqlite_is_refused_and_left_alone(_db):
    run(mla_design, budget=18, strategy="grid")
    data = bytearray(_db.read_bytes())
    assert len(data) > 8192
    for i in range(4096, len(data), 97):  # scribble over every page after the first
        data[i] = 0xA5
    _db.write_bytes(bytes(data))
    with pytest.raises(ks.DesignDBError, match="corrupted") as ei:
        run(mla_design, budget=18, strategy="grid")
    assert str(_db) in str(ei.value) and "left untouched" in str(ei.value)
    assert _db.read_bytes() == bytes(data)


def test_another_programs_sqlite_is_refused(_db):
    con = sqlite3.connect(_db)
    with con:
        con.execute("CREATE TABLE photos (id INTEGER)")
    con.close()
    before = _db.read_bytes()
    with pytest.raises(ks.DesignDBError, match="another program .*photos"):
        ks.designs()
    assert _db.read_bytes() == before


def test_db_false_stores_nothing(_db):
    run(mla_design, budget=3, strategy="grid", db=False)
    assert not _db.exists()


def test_save_design_and_list(_db):
    r = run(mla_design, budget=18, strategy="grid")
    rec = r.save("mla_best")
    d = ks.build(mla_prolog_lite(), TARGET, compare=False)
    ks.save_design(d, name="mla_auto")
    rows = ks.designs()
    assert [x.name for x in rows] == ["mla_best", "mla_auto"]
    best = rows[0]
    assert best == rec and best.target == TARGET and best.config == r.best.config
    assert best.time_us == pytest.approx(r.best_time_us) and best.date.endswith("UTC")
    assert "matmul" in best.graph and '"split"' in best.schedule
    assert rows[1].config == {} and rows[1].time_us == pytest.approx(d.sim.time_us)
    # the schedule text replays onto the same graph, planned as it was (create_schedule's own choice of the
    # fused kernel's plan), and gives the same time
    s = ks.create_schedule(mla_prolog_lite(), target=TARGET)
    s.replay(best.schedule)
    assert ks.simulate(ks.lower(s, TARGET)).time_us == pytest.approx(best.time_us, rel=1e-9)
    assert ks.designs(target="ascend910b1") == []
    with pytest.raises(ks.DesignDBError, match="built design"):
        ks.save_design(mla_design(), name="x")


# --- the feasibility map ---------------------------------------------------------------------------

def test_feasibility_data_marks_illegal_cells_with_reasons():
    r = run(mla_design, budget=4, strategy="random", seed=0)
    tried = len(r.history)
    data = r.feasibility_data("tile_m", "tile_k")
    assert data["xs"] == [16, 32, 64] and data["ys"] == [32, 64, 128]
    assert len(data["cells"]) == 3 and all(len(row) == 3 for row in data["cells"])
    base = data["base"]
    assert base == r.best.config
    n_bad = 0
    for row in data["cells"]:
        for c in row:
            cfg = dict(base, tile_m=c["x"], tile_k=c["y"])
            assert c["config"] == cfg
            with planning_target(TARGET), ks.knob_values(cfg):
                s = mla_design()
            try:
                want = ks.simulate(ks.lower(s, TARGET)).time_us
            except ks.CapacityError as e:
                n_bad += 1
                assert not c["feasible"] and c["time_us"] is None
                assert c["tier"] == e.tier and c["overflow_bytes"] == e.need - e.have
                assert c["reason"] == (f"{e.tier} over by {e.need - e.have:,} B ({e.need:,} B needed, "
                                       f"{e.have:,} B available)")
            else:
                assert c["feasible"] and c["time_us"] == pytest.approx(want, rel=1e-12) and c["reason"] is None
            assert c["is_best"] == (cfg == r.best.config)
            assert c["is_default"] == (cfg == r.default_config)
    assert n_bad == (3 if base["double_buffer"] else 0)
    assert data["default_xy"] == (16, 64) and data["best_xy"] == (r.best.config["tile_m"], r.best.config["tile_k"])
    assert len(r.history) == tried  # the map evaluates cells beside the search, not into its history


def test_feasibility_map_with_double_buffering_shows_the_l0b_overflow():
    def design():
        out = mla_prolog_lite()
        s = ks.create_schedule(out)
        s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512]))
        s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
        s[out].double_buffer(True)
        return s

    r = run(design, budget=9, strategy="grid")
    data = r.feasibility_data("tile_n", "tile_k")
    bad = {(c["x"], c["y"]): c for row in data["cells"] for c in row if not c["feasible"]}
    assert bad and all(c["tier"] == "L0B" and c["overflow_bytes"] > 0 for c in bad.values())
    assert sum(r.pruned.values()) == len(bad)
    go = pytest.importorskip("plotly.graph_objects")
    fig = r.feasibility_map("tile_n", "tile_k")
    assert isinstance(fig, go.Figure)
    names = [t.name for t in fig.data]
    assert names == ["illegal", "predicted time"]  # default and best are cell outlines, not markers over the numbers
    assert [sh.name for sh in fig.layout.shapes] == ["default"] + (["best"] if data["best_xy"] else [])
    texts = [x for row in fig.data[1].text for x in row]
    assert sum("L0B +" in t for t in texts) == len(bad)


def test_feasibility_map_bad_axes():
    r = run(mla_design, budget=2, strategy="grid")
    with pytest.raises(ks.TuneError, match="'tile_q' is not a knob .*tile_m, tile_k, double_buffer"):
        r.feasibility_data("tile_q", "tile_k")
    with pytest.raises(ks.TuneError, match="both 'tile_m'"):
        r.feasibility_data("tile_m", "tile_m")


# --- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("budget", [0, -3, 2.5, True, "10", None])
def test_bad_budget(budget):
    with pytest.raises(ks.TuneError, match=f"budget .* positive int; got {budget!r}.*budget=32"):
        run(mla_design, budget=budget)


def test_unknown_strategy():
    with pytest.raises(ks.TuneError, match="unknown strategy 'anneal'.*grid, random, evolutionary"):
        run(mla_design, budget=4, strategy="anneal")


def test_unknown_target():
    with pytest.raises(ks.TargetError, match="ascend999"):
        ks.tune(mla_design, "ascend999", budget=4, executor="inline", progress=False)


def test_no_knobs():
    def plain():
        return mla_prolog_lite()

    with pytest.raises(ks.TuneError, match=r"plain\(\) declares no knobs.*ks.knob\(name, default, choices\)"):
        run(plain, budget=4)


def test_not_callable():
    with pytest.raises(ks.TuneError, match="must be a function .* got Tensor"):
        run(mla_prolog_lite(), budget=4)


def test_returns_a_non_tensor():
    def returns_int():
        ks.knob("tile_m", 16, [16, 32])
        return 42

    with pytest.raises(ks.TuneError, match=r"returns_int\(\) returned int, not the output tensor.*return out"):
        run(returns_int, budget=4)


def test_bad_executor():
    with pytest.raises(ks.TuneError, match="executor must be .*got 'gpu'"):
        run(mla_design, budget=4, executor="gpu")


def test_bug_in_build_fn_stops_with_the_config():
    def buggy():
        s = mla_design()
        if ks.knob("tile_m", 16, [16, 32, 64]) == 64:
            raise ZeroDivisionError("oops")
        return s

    with pytest.raises(ks.TuneError, match=r"raised ZeroDivisionError: oops at \{'tile_m': 64"):
        run(buggy, budget=18, strategy="grid")


def test_no_legal_configuration():
    def too_big():
        out = mla_prolog_lite()
        s = ks.create_schedule(out)
        s[out].split("k", ks.knob("tile_k", 256, [256]))
        s[out].split("n", ks.knob("tile_n", 512, [512]))
        s[out].double_buffer(True)
        return s

    with pytest.raises(ks.TuneError, match="none of the 1 configurations .*CapacityError: L0B: 1") as ei:
        run(too_big, budget=4)
    assert ei.value.result is not None and ei.value.result.pruned == {"CapacityError: L0B": 1}


def test_alignment_failures_are_pruned_and_mapped_with_the_rule():
    def design():
        out = mla_prolog_lite()
        s = ks.create_schedule(out)
        s[out].split("m", ks.knob("tile_m", 16, [16, 24, 32]))
        s[out].split("k", ks.knob("tile_k", 64, [40, 64]))
        return s

    r = run(design, budget=6, strategy="grid")
    assert r.pruned == {"ScheduleError: split('m', N) is not a multiple of N": 2,
                        "ScheduleError: split('k', N) is not a multiple of N": 2}
    cells = {(c["x"], c["y"]): c for row in r.feasibility_data("tile_m", "tile_k")["cells"] for c in row}
    assert cells[(24, 64)]["reason"] == "split('m', 24) is not a multiple of 16"
    assert cells[(16, 40)]["reason"] == "split('k', 40) is not a multiple of 16"
    assert cells[(24, 64)]["overflow_bytes"] is None and cells[(16, 64)]["feasible"]
