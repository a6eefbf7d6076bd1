"""sync_all: a matmul + row-reduction epilogue whose C tiles spread over every cube core into a whole-C
workspace, meet at one all-core barrier (Ascend C's hard SyncAll<false>()), then have their rows spread over
every vector core. Lowered, interpreted, priced, emitted and run on the twin (three-way, tails included),
chosen by the cost-aware fusion where it pays, refused where it cannot apply."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen
from kernelstudio.core.errors import KernelStudioError, ScheduleError, TwinError
from kernelstudio.sim.errors import SimulationError
from kernelstudio.tileir.program import SyncAll, walk
from tests.reference_kernels import mla_prolog_lite

from .reference import three_way

TARGET = "ascend910b2"


def _mm_norm(m: int, n: int, k: int, norm: str = "layer_norm", batch: tuple[int, ...] = ()):
    x = ks.placeholder((*batch, m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    y = ks.matmul(x, w, transpose_b=True)
    if norm == "rms_norm":
        return ks.rms_norm(y, ks.placeholder((n,), "float16", name="g"))
    if norm == "softmax":
        return ks.softmax(y, axis=-1)
    return ks.layer_norm(y, axis=-1)


def _sync(out, on: bool = True, tiles: tuple[int, int, int] | None = None, rows: int | None = None,
          double: bool | None = None):
    s = ks.create_schedule(out, fuse=True)
    st = s[s.kernels[0].name]
    st.sync_all(on)
    if tiles:
        st.split("m", tiles[0]).split("n", tiles[1]).split("k", tiles[2])
    if rows:
        st.vectorize("m", rows)
    if double is not None:
        st.double_buffer(double)
    return ks.lower(s, TARGET)


CASES = {
    "mla_prolog_lite": (mla_prolog_lite, {}),
    "tails": (lambda: mla_prolog_lite(m=50, k=200, n=300), {"tiles": (32, 64, 48), "rows": 3}),
    "rms_norm": (lambda: _mm_norm(40, 256, 128, "rms_norm"), {"double": False}),
    "softmax": (lambda: _mm_norm(33, 192, 64, "softmax"), {}),
    "batch": (lambda: _mm_norm(20, 128, 64, batch=(3,)), {"tiles": (16, 64, 32)}),
    # rows wider than UB holds at once: the epilogue passes over column chunks
    "multi-pass": (lambda: _mm_norm(8, 12288, 32), {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_golden_equals_interpreter_equals_twin(case: str, twin_cache: Path) -> None:
    build, kw = CASES[case]
    out = build()
    prog = _sync(out, **kw)
    (k,) = prog.kernels
    assert k.kernel_type == "MIX_AIC_1_2" and any("sync_all" in n for n in k.notes)
    assert [type(s) for s in walk(k.aic) if isinstance(s, SyncAll)] == [SyncAll]
    assert [type(s) for s in walk(k.aiv) if isinstance(s, SyncAll)] == [SyncAll]
    if case == "multi-pass":
        assert "multi-pass over column chunks" in k.notes[-1]
    three_way(out, prog, twin_cache)


def test_every_core_of_the_chip_works_and_the_epilogue_starts_after_the_barrier() -> None:
    out = mla_prolog_lite()
    prog = _sync(out, tiles=(16, 64, 64))
    (k,) = prog.kernels
    # 4 x 8 C tiles of 16 x 64 (in auto groups of 1 x 2: as many per core) over 16 cube cores; the
    # row-block plan takes the 4 row blocks on 4
    assert k.block_dim == 16
    assert _sync(out, on=False, tiles=(16, 64, 64)).kernels[0].block_dim == 4
    sim = ks.simulate(prog)
    ev = [sim.events[i] for i in range(len(sim.events))]
    fix_end = max(e.end_us for e in ev if e.pipe == "FIX")
    reads = [e.start_us for e in ev if "copy in_" in e.instr and "_ws" in e.instr]
    assert reads and min(reads) >= fix_end + ks.hw.get(TARGET).sync_all_us - 1e-9
    # every AIV core of the launch works: 64 rows over 32 AIVs
    assert len({e.core for e in ev if e.pipe == "V"}) == 32


def test_the_barrier_costs_what_the_profile_says() -> None:
    prog = _sync(mla_prolog_lite())
    base = ks.simulate(prog).time_us
    slow = ks.simulate(prog, profile=ks.hw.get(TARGET).with_overrides(sync_all_us=4.0)).time_us
    assert slow == pytest.approx(base + 3.0, abs=1e-6)


def test_the_code_calls_the_hard_sync_on_both_sides_with_a_workspace() -> None:
    code = codegen(_sync(mla_prolog_lite()))
    src = code.files["op_kernel/mla_prolog_lite.cpp"] if "op_kernel/mla_prolog_lite.cpp" in code.files else next(
        v for p, v in code.files.items() if p.startswith("op_kernel/"))
    cube = src[src.index("void ProcessCube()"):]
    vector = src[src.index("void ProcessVector()"):]
    assert "AscendC::SyncAll<false>();" in cube.split("\n    }\n", 1)[0]
    assert "AscendC::SyncAll<false>();" in vector.split("\n    }\n", 1)[0]
    host = next(v for p, v in code.files.items() if p.startswith("op_host/") and p.endswith(".cpp"))
    assert re.search(r"GetWorkspaceSizes\(1\)", host)


def _edited(code, path: str, old: str, new: str):
    files = dict(code.files)
    assert old in files[path], old
    files[path] = files[path].replace(old, new)
    return dataclasses.replace(code, files=files)


def test_the_twin_refuses_more_blocks_than_cores(twin_cache: Path) -> None:
    out = mla_prolog_lite()
    code = codegen(_sync(out, tiles=(16, 64, 64)))
    bad = _edited(code, "main.cpp", "launch.block_dim,", "launch.block_dim + 20,")
    with pytest.raises(TwinError, match=r"sync:.*blockDim 36 on a chip of 24 AI cores.*launch at most 24"):
        twin.run(bad, ks.random_inputs(out, seed=0), cache_dir=twin_cache)


def test_the_twin_reports_a_core_that_never_reaches_the_barrier(twin_cache: Path) -> None:
    out = mla_prolog_lite()
    code = codegen(_sync(out))
    path = next(p for p in code.files if p.startswith("op_kernel/"))
    src = code.files[path]
    vec = src.index("void ProcessVector()")
    at = src.index("AscendC::SyncAll<false>();", vec)
    files = dict(code.files)
    files[path] = src[:at] + src[at:].replace("AscendC::SyncAll<false>();", "", 1)
    with pytest.raises(TwinError, match=r"sync:.*returned without calling it"):
        twin.run(dataclasses.replace(code, files=files), ks.random_inputs(out, seed=0), cache_dir=twin_cache)


def test_simulator_and_interpreter_refuse_a_barrier_some_blocks_can_never_reach() -> None:
    out = mla_prolog_lite()
    prog = _sync(out, tiles=(16, 64, 64))
    (k,) = prog.kernels
    big = dataclasses.replace(prog, kernels=(dataclasses.replace(k, block_dim=30),))
    with pytest.raises(SimulationError, match=r"block_dim 30 on a chip of 24 AI cores.*at most 24"):
        ks.simulate(big)
    with pytest.raises(KernelStudioError, match=r"block_dim 30.*24 AI cores"):
        ks.run_tiled(big, ks.random_inputs(out, seed=0))


def test_a_core_that_skips_the_barrier_is_a_hang_in_every_reader() -> None:
    out = mla_prolog_lite()
    prog = _sync(out)
    (k,) = prog.kernels
    no_sync = tuple(s for s in k.aiv if not isinstance(s, SyncAll))
    bad = dataclasses.replace(prog, kernels=(dataclasses.replace(k, aiv=no_sync),))
    with pytest.raises(SimulationError, match=r"SyncAll 1 is never reached by .*aiv"):
        ks.simulate(bad)
    with pytest.raises(KernelStudioError, match=r"wait at SyncAll, which every core of the launch must reach"):
        ks.run_tiled(bad, ks.random_inputs(out, seed=0))


def test_directives_that_the_row_block_plan_refuses_act_on_the_sync_plan() -> None:
    out = mla_prolog_lite()
    for directive in (lambda st: st.reorder("n", "m"), lambda st: st.l1_c_steps(2, 1), lambda st: st.swizzle(2)):
        s = ks.create_schedule(out, fuse=True)
        directive(s[out])
        with pytest.raises(ScheduleError):
            ks.lower(s, TARGET)
        s[out].sync_all(True)
        plain = ks.create_schedule(out, fuse=True)
        plain[out].sync_all(True)
        assert ks.lower(s, TARGET).passes[-1][1] != ks.lower(plain, TARGET).passes[-1][1]


@pytest.mark.parametrize("build", [
    lambda: ks.gelu(ks.matmul(ks.placeholder((64, 128), "float16", name="x"),
                              ks.placeholder((128, 256), "float16", name="w"))),
    lambda: ks.matmul(ks.placeholder((64, 128), "float16", name="x"), ks.placeholder((128, 256), "float16", name="w")),
    lambda: ks.layer_norm(ks.placeholder((64, 128), "float16", name="x")),
])
def test_sync_all_where_it_cannot_apply_says_why(build) -> None:
    s = ks.create_schedule(build(), fuse=True)
    name = s.kernels[0].name
    with pytest.raises(ScheduleError, match=rf"kernel {name}: sync_all applies to a matmul fused with an epilogue "
                                            "that reduces whole rows"):
        s[name].sync_all(True)


def test_sync_all_takes_a_bool() -> None:
    s = ks.create_schedule(mla_prolog_lite(), fuse=True)
    with pytest.raises(ScheduleError, match="sync_all takes True or False, got 'yes'"):
        s[s.kernels[0].name].sync_all("yes")


def test_the_cost_aware_fusion_weighs_both_fused_plans() -> None:
    out = mla_prolog_lite()
    s = ks.create_schedule(out, target=TARGET)
    (choice,) = s.choices
    assert choice.fused and choice.sync_all
    assert choice.fused_us < choice.other_us  # the row-block plan, simulated too
    assert "with sync_all (row blocks:" in choice.note()
    (k,) = s.kernels
    assert k.sync_all
    prog = ks.lower(s, TARGET)
    assert any(isinstance(x, SyncAll) for x in walk(prog.kernels[0].aic))
    # the user's directive overrides the choice
    s2 = ks.create_schedule(out, target=TARGET)
    s2[out].sync_all(False)
    assert not any(isinstance(x, SyncAll) for x in walk(ks.lower(s2, TARGET).kernels[0].aic))
    assert ks.simulate(prog).time_us == pytest.approx(choice.fused_us, rel=1e-9)


def test_the_idle_view_names_the_barrier_and_the_last_core_to_arrive() -> None:
    from kernelstudio.notebook.views import idle_gaps

    sim = ks.simulate(_sync(mla_prolog_lite()))
    waits = [g for g in idle_gaps(sim, cores=1) if g["cause"].startswith("sync_all")]
    assert waits and all(g["cause"].endswith("(the last core had not arrived)") for g in waits)
    assert all(g["released_by"].startswith("the last core to arrive, core") for g in waits)
    assert all("FIXP: copy gm.out_ws <- c" in g["released_by"] for g in waits)


def test_numbers_do_not_depend_on_the_readers_order() -> None:
    out = _mm_norm(40, 256, 128, "rms_norm")
    prog = _sync(out)
    inputs = ks.random_inputs(out, seed=3)
    a = np.asarray(ks.run_tiled(prog, inputs), dtype=np.float32)
    b = np.asarray(ks.run_tiled(prog, inputs), dtype=np.float32)
    np.testing.assert_array_equal(a, b)
