"""msprof's outputs read and compared with a simulation: the real public runs in msprof/ (README there says where
each came from), the files written from the documented format, a simulation's own Chrome trace read back, and
every malformed input refused with the file, the line and column and what was expected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.ascendc.measured import predicted_core_pipes
from kernelstudio.ascendc.msprof import MsprofFormatError
from kernelstudio.core.errors import InputError, KernelStudioError

from .conftest import KERNELS, halves

DATA = Path(__file__).parent / "msprof"
WRITTEN = DATA / "written"


@pytest.fixture(scope="module")
def vector_sim() -> ks.SimResult:
    """A designed vector kernel's simulation (no twin): x * 2 + 1 over 4096 fp16 on 8 cores."""
    x = ks.placeholder((8, 4096), "float16", name="x")
    out = x * 2.0 + 1.0
    s = ks.create_schedule(out)
    s[out].parallel(0, cores=8)
    return ks.simulate(ks.lower(s, "ascend910b2"))


# ---- the real public runs ---------------------------------------------------------------------------------
def test_real_op_basic_info_reads_every_documented_column():
    (row,) = ks.ascendc.read_op_basic_info(DATA / "hamming_topk" / "OpBasicInfo.csv")
    assert (row.op_name, row.op_type, row.task_duration_us, row.block_dim) == ("topk_custom_0", "vector", 155.740005, 1)
    assert row.mix_block_dim is None  # NA: not a mixed operator
    assert (row.device_id, row.pid, row.current_freq_mhz, row.rated_freq_mhz) == (4, 1304945, 1800.0, 1800.0)
    assert row.clock_ratio == 1.0


def test_real_pipe_utilization_maps_columns_to_the_simulators_pipes():
    pu = ks.ascendc.read_pipe_utilization(DATA / "hamming_dist_top_k" / "PipeUtilization.csv")
    (r,) = pu.rows
    assert (r.block_id, r.sub_block, r.unit, r.time_us, r.total_cycles) == (0, "vector0", "vector", 149.146118, 268463)
    assert dict(r.pipe_us) == {"V": 50.73, "S": 39.296112, "MTE2": 81.882225, "MTE3": 0.001111}
    assert r.ratios["MTE2"] == 0.549007
    assert pu.of("cube") == [] and pu.pipes("vector") == ["MTE2", "V", "MTE3", "S"]
    assert pu.pipe_us("vector", "MTE2") == pu.pipe_us("vector", "MTE2", "max") == 81.882225
    assert pu.pipe_us("cube", "M") is None


def test_real_run_folder_next_to_a_simulation(vector_sim):
    run = ks.ascendc.read_msprof(DATA / "hamming_topk")
    assert set(run.files) == {"basic", "pipes"} and run.trace is None
    cmp = ks.ascendc.compare_measured(vector_sim, run)
    core = cmp.row("vector", "core")
    assert core.measured_us == 155.431107 and core.cores_measured == 1
    v = cmp.row("vector", "V")
    want = np.mean([c["pipes"].get("V", 0.0) for c in predicted_core_pipes(vector_sim).values()
                    if c["unit"] == "vector"])
    assert v.predicted_us == pytest.approx(want) and v.ratio == pytest.approx(109.277779 / want)
    assert cmp.measured_task_us == 155.740005
    assert cmp.predicted_task_us == pytest.approx(sum(k["time_us"] for k in vector_sim.kernels))
    assert any("'topk_custom_0'" in n for n in cmp.notes)  # another operator than the simulated one
    assert any("1 vector sub-core(s) measured" in n for n in cmp.notes)
    text = cmp.table()
    assert "VECTOR" in text and "109.278" in text and "note:" in text
    assert cmp.to_dict()["rows"][0]["unit"] == "vector"


# ---- files written from the documented format --------------------------------------------------------------
def test_simulator_trace_with_named_processes_and_threads():
    tr = ks.ascendc.read_trace(WRITTEN / "add_flags" / "simulator" / "trace.json")
    assert tr.cores == ["core0.veccore0"] and tr.ignored == 1  # the flow event
    lanes = {s.lane: s.pipe for s in tr.spans}
    assert lanes == {"MTE2": "MTE2", "VECTOR": "V", "SCALAR": "S", "MTE3": "MTE3", "FLOWCTRL": "FLOW",
                     "CACHEMISS": None}
    assert tr.busy_us("core0.veccore0", "MTE2") == pytest.approx(8 * 0.18)
    assert tr.start_us == 0.0 and tr.end_us == pytest.approx(4 * (2 * 0.19 + 0.02 + 0.11) - 0.01)


def test_ratio_only_mixed_kernel_and_a_slow_clock(vector_sim):
    run = ks.ascendc.read_msprof(WRITTEN / "mix_ratios")
    b = run.basic
    assert (b.op_type, b.block_dim, b.mix_block_dim, b.pid, b.device_id) == ("mix", 2, 4, None, 0)
    assert b.clock_ratio == 2.25
    cube = run.pipes.of("cube")
    assert [r.block_id for r in cube] == [0, 1] and cube[0].pipe_us["M"] == 0.5 * 30.0  # aic_mac_ratio x aic_time
    assert run.pipes.pipe_us("vector", "V") == pytest.approx(np.mean([0.25 * t for t in (20, 22, 18, 20)]))
    assert run.pipes.pipe_us("cube", "MTE2", "max") == pytest.approx(0.4 * 34.0)
    cmp = ks.ascendc.compare_measured(vector_sim, run)
    assert any("800 MHz of its rated 1800 MHz" in n and "x2.25" in n for n in cmp.notes)
    assert any("msprof measured 2 cube sub-core(s); the simulation ran none" in n for n in cmp.notes)
    m = cmp.row("cube", "M")
    assert m.measured_us == pytest.approx((0.5 * 30 + 0.5 * 34) / 2) and m.cores_measured == 2
    assert m.predicted_us is None and m.ratio is None


def test_a_simulations_own_chrome_trace_compares_equal_pipe_by_pipe(vector_sim, tmp_path):
    """Numeric pid/tid named by process_name/thread_name metadata, as ks's and Perfetto's traces are written."""
    vector_sim.to_chrome_trace(str(tmp_path / "trace.json"))
    cmp = ks.ascendc.compare_measured(vector_sim, tmp_path)
    assert cmp.measured_task_us is None and cmp.rows
    assert {r.pipe for r in cmp.rows} >= {"MTE2", "V", "MTE3"}
    for r in cmp.rows:
        assert r.source == "trace.json" and r.cores_measured == r.cores_predicted
        assert r.measured_us == pytest.approx(r.predicted_us, rel=1e-9) and r.ratio == pytest.approx(1.0)


def test_read_msprof_finds_the_opprof_folder_and_its_simulator_folder(tmp_path):
    run_dir = tmp_path / "out" / "OPPROF_20260101000000_ABC"
    shutil.copytree(WRITTEN / "add_flags", run_dir)
    for where in (tmp_path / "out", run_dir, run_dir / "simulator" / "trace.json"):
        run = ks.ascendc.read_msprof(where)
        assert run.trace is not None and len(run.trace.spans) == 25
    assert ks.ascendc.read_msprof(run_dir).basic.op_name == "add_flags_0"
    assert ks.ascendc.read_msprof(ks.ascendc.read_msprof(run_dir)).basic.block_dim == 4


# ---- refusals ---------------------------------------------------------------------------------------------
def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


BASIC = "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim\n"
PIPES = "block_id,sub_block_id,aiv_time(us),aiv_vec_time(us),aiv_vec_ratio\n"


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("OpBasicInfo.csv", "Name,Duration\nx,1\n", "line 1 has no column 'Op Name', 'Task Duration(us)'"),
    ("OpBasicInfo.csv", BASIC + "add,vector,fast,8,NA\n", "line 2, column 3 (Task Duration(us)): 'fast' is not a "
                                                          "number"),
    ("OpBasicInfo.csv", BASIC + "add,vector,1.5,8.5,NA\n", "line 2, column 4 (Block Dim): '8.5'; expected a whole"),
    ("OpBasicInfo.csv", BASIC + "add,vector,-2,8,NA\n", "-2 is negative"),
    ("OpBasicInfo.csv", BASIC + "add,vector,NA,8,NA\n", "line 2, column 3 (Task Duration(us)) is empty"),
    ("OpBasicInfo.csv", BASIC + "add,vector,1.5\n", "line 2 has 3 cells for the header's 5 columns"),
    ("OpBasicInfo.csv", BASIC + "add,vector,1.5,8,NA,9\n", "line 2 has 6 cells"),
    ("OpBasicInfo.csv", BASIC, "no data row under the header"),
    ("OpBasicInfo.csv", "", "line 1 is empty"),
    ("OpBasicInfo.csv", BASIC + "a_0,vector,1,1,NA\nb_0,vector,2,1,NA\n", "2 operator rows (a_0, b_0)"),
    ("OpBasicInfo.csv", b"Op Name,Task Duration(us)\n\xff\xfe,1\n", "is not UTF-8 text"),
    ("PipeUtilization.csv", "block_id,sub_block_id,foo\n0,vector0,1\n", "none of the time or ratio columns"),
    ("PipeUtilization.csv", PIPES + "0,matrix0,1,1,1\n", "line 2, column 2 (sub_block_id): 'matrix0'"),
    ("PipeUtilization.csv", PIPES + "0,vector0,1,-0.5,1\n", "line 2, column 4 (aiv_vec_time(us)): -0.5 is negative"),
    ("PipeUtilization.csv", PIPES + "x,vector0,1,1,1\n", "line 2, column 1 (block_id): 'x' is not a number"),
    ("trace.json", '{"traceEvents": [\n{"ph": "X", "ts": 1,}\n]}', "line 2, column 21: not JSON"),
    ("trace.json", '{"events": []}', "without a traceEvents list"),
    ("trace.json", '[{"ph": "X", "name": "vadd", "pid": "core0.veccore0", "tid": "VECTOR", "ts": "0", "dur": 1}]',
     "traceEvents[0] ('vadd') has ts '0'; expected a number of microseconds"),
    ("trace.json", '[{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": -1}]', "traceEvents[0] has dur -1"),
    ("trace.json", '[{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "core0.veccore0"}}]',
     "no complete (\"ph\": \"X\") event among its 1 events"),
    ("trace.json", '[1]', "traceEvents[0] is a int; expected an event object"),
    ("memory.csv", "a,b\n", "not an msprof file this reads"),
])
def test_malformed_files_name_the_file_the_place_and_what_was_expected(tmp_path, name, text, needle):
    path = _write(tmp_path, name, text)
    with pytest.raises(MsprofFormatError) as e:
        ks.ascendc.read_msprof(path)
    assert needle in str(e.value) and str(path) in str(e.value)
    assert isinstance(e.value, KernelStudioError)


def test_folders_that_hold_no_run_or_several_are_refused(tmp_path, vector_sim):
    with pytest.raises(MsprofFormatError, match="no such file or folder"):
        ks.ascendc.read_msprof(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MsprofFormatError, match="no OpBasicInfo.csv, PipeUtilization.csv or trace.json in it"):
        ks.ascendc.read_msprof(tmp_path / "empty")
    for stamp in ("1", "2"):
        shutil.copytree(WRITTEN / "add_flags", tmp_path / "two" / f"OPPROF_{stamp}")
    with pytest.raises(MsprofFormatError, match="2 OPPROF_\\* folders \\(OPPROF_1, OPPROF_2\\); give the one"):
        ks.ascendc.read_msprof(tmp_path / "two")
    with pytest.raises(InputError, match="str has no simulation; pass a kernel"):
        ks.ascendc.compare_measured("not a run", WRITTEN / "add_flags")
    with pytest.raises(KernelStudioError, match="how='median': expected 'mean' or 'max'"):
        ks.ascendc.read_msprof(WRITTEN / "add_flags").pipes.pipe_us("vector", "V", how="median")


# ---- a loaded kernel -----------------------------------------------------------------------------------------
def test_loaded_kernel_next_to_msprofs_run_of_it(twin_cache):
    x = halves(8192)
    k = ks.ascendc.load(KERNELS / "add_flags" / "add_flags.cpp", kernel="add_flags",
                        args=[x, x, ks.ascendc.out(x.shape, "float16")], block_dim=4, cache_dir=twin_cache,
                        tiling={"blockLength": 2048, "tileLength": 512})
    cmp = ks.ascendc.compare_measured(k, WRITTEN / "add_flags")
    assert cmp.kernel == "add_flags" and cmp.block_dim == 4
    assert cmp.notes == ()  # add_flags_0 is add_flags; Block Dim 4 as loaded; 4 sub-cores each side; rated clock
    pred = predicted_core_pipes(k.sim)
    assert len(pred) == 4 and all(v["unit"] == "vector" for v in pred.values())
    mte2 = cmp.row("vector", "MTE2")
    assert mte2.measured_us == pytest.approx((1.5 + 1.6 + 1.4 + 1.5) / 4) and mte2.measured_max_us == 1.6
    assert mte2.predicted_us == pytest.approx(np.mean([v["pipes"]["MTE2"] for v in pred.values()]))
    assert cmp.task_ratio == pytest.approx(3.25 / k.sim.kernels[0]["time_us"])
    warm = ks.ascendc.compare_measured(k, WRITTEN / "add_flags", sim=k.simulate(l2="warm"))
    assert warm.sim is not cmp.sim and warm.measured_task_us == 3.25
    assert json.dumps(cmp.to_dict())


def test_per_core_traces_are_read_together_when_there_is_no_summary(tmp_path):
    """msprof op simulator also writes simulator/coreN.veccoreM/trace.json; a process they leave unnamed is the
    folder's core."""
    sim = tmp_path / "OPPROF_1" / "simulator"
    for core, dur in (("core0.veccore0", 0.5), ("core1.veccore0", 0.75)):
        (sim / core).mkdir(parents=True)
        (sim / core / "trace.json").write_text(json.dumps({"traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 3, "args": {"name": "MTE2"}},
            {"ph": "X", "name": "MOV_OUT_TO_UB", "pid": 0, "tid": 3, "ts": 1.0, "dur": dur},
            {"ph": "i", "name": "mark", "pid": 0, "tid": 3, "ts": 1.0}]}))
    for where in (tmp_path, sim):
        run = ks.ascendc.read_msprof(where)
        assert run.trace.cores == ["core0.veccore0", "core1.veccore0"] and run.trace.ignored == 2
        assert [run.trace.busy_us(c, "MTE2") for c in run.trace.cores] == [0.5, 0.75]
    (sim / "trace.json").write_text(json.dumps([{"ph": "X", "pid": "core0.veccore0", "tid": "VECTOR", "ts": 0,
                                                 "dur": 1}]))
    assert ks.ascendc.read_msprof(tmp_path).trace.cores == ["core0.veccore0"]  # the summary wins
