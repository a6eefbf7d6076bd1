"""The generated Ascend C of ks.multi designs (no compiler needed): MC2's pattern and its tiling, the per-tile
matmul taken from the single-chip code generator, and the refusals."""

from __future__ import annotations

import re

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen import codegen as single_chip
from kernelstudio.core.errors import InputError, StageError
from kernelstudio.multi.codegen import _tile_program

M = ks.multi


def _design(kind="matmul_allreduce", devices=2, m=640, tiles=3, tail="auto", dtype="float16", **kw):
    x = ks.placeholder((m, 256), dtype, name="x")
    w = ks.placeholder((256, 256), dtype, name="w")
    return getattr(M, kind)(x, w, cluster=M.Cluster(devices), tiles=tiles, tail=tail, **kw)


def test_allreduce_kernel_follows_the_mc2_pattern():
    d = _design(tiles=3, tail="back")
    code = M.codegen(d)
    kernel = code.files["op_kernel/matmul_all_reduce.cpp"]
    # one collective per tile size, prepared on core 0, with the tile count as its repeat
    assert "notify_ = ASCEND_IS_AIC && AscendC::GetBlockIdx() == 0;" in kernel
    assert kernel.count("hccl_.AllReduce(") == 2 and "tiling_.tileCnt);" in kernel and "tiling_.tailCnt);" in kernel
    # per tile: the matmul on the cube cores, SyncAll, then core 0 commits that tile
    loop = kernel[kernel.index("void Process()"):kernel.index("void TileMatmul")]
    assert loop.index("TileMatmul(") < loop.index("AscendC::SyncAll<false>();") < loop.index("hccl_.Commit(")
    finish = kernel[kernel.index("void Finish()"):]
    assert finish.index("hccl_.Wait(tileHandle_)") < finish.index("SyncAll<false>()") < finish.index("Finalize()")
    assert "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);" in kernel
    assert '#include "lib/hccl/hccl.h"' in kernel and '#include "mc2_tile_matmul.h"' in kernel


@pytest.mark.parametrize("tail", ["back", "front"])
def test_tiling_header_and_host_carry_the_split(tail):
    d = _design(tiles=3, tail=tail)
    assert d.tile_rows == ((256, 256, 128) if tail == "back" else (128, 256, 256))
    t = M.mc2_tiling(d)
    assert (t.tile_m, t.tile_cnt, t.tail_m, t.tail_cnt, t.tail_first) == (256, 2, 128, 1, tail == "front")
    assert t.rows() == d.tile_rows
    code = M.codegen(d)
    header = code.files["op_host/matmul_all_reduce_tiling.h"]
    for field in ("rankDim", "tileM", "tileCnt", "tailM", "tailCnt", "tailFirst"):
        assert f"TILING_DATA_FIELD_DEF(uint32_t, {field});" in header
    assert "TILING_DATA_FIELD_DEF_STRUCT(Mc2TileMatmulTilingData, tileTiling);" in header
    assert "TILING_DATA_FIELD_DEF_STRUCT(Mc2TileMatmulTilingData, tailTiling);" in header
    host = code.files["op_host/matmul_all_reduce.cpp"]
    assert "tiling.set_tileCnt(2);" in host and "tiling.set_tailM(128);" in host
    assert f"tiling.set_tailFirst({int(tail == 'front')});" in host
    assert "TileTiling(context, 256, tiling.tileTiling" in host and "TileTiling(context, 128, tiling.tailTiling" in host


def test_one_tile_has_no_short_tile():
    d = _design(tiles=1)
    t = M.mc2_tiling(d)
    assert (t.tile_m, t.tile_cnt, t.tail_cnt) == (640, 1, 0)
    assert "TileTiling(context, 0," not in M.codegen(d).files["op_host/matmul_all_reduce.cpp"]


def test_the_tile_matmul_is_the_single_chip_generators_kernel():
    d = _design()
    tile = single_chip(_tile_program(d))
    code = M.codegen(d)
    single_kernel = tile.files["op_kernel/mc2_tile_matmul.cpp"]
    start = single_kernel.index("constexpr int32_t BUFFER_NUM")
    cls = single_kernel[start:single_kernel.index('extern "C"')].rstrip()
    assert cls in code.files["op_kernel/mc2_tile_matmul.h"]  # the class as generated, in a namespace of its own
    assert "namespace mc2_tile_matmul {" in code.files["op_kernel/mc2_tile_matmul.h"]
    assert 'extern "C"' not in code.files["op_kernel/mc2_tile_matmul.h"]
    for f in ("op_host/mc2_tile_matmul.cpp", "op_host/mc2_tile_matmul_tiling.h"):
        assert code.files[f] == tile.files[f]
    assert tile.inputs[0].runtime_dims == 1  # one kernel serves the long and the short tile


def test_reduce_scatter_and_all_gather_collectives():
    rs = M.codegen(_design("matmul_reduce_scatter", devices=4, m=4 * 384, tiles=3))
    k = rs.files["op_kernel/matmul_reduce_scatter.cpp"]
    assert "hccl_.ReduceScatter(partialGm_" in k and "tiling_.rankM / tiling_.rankDim" in k
    assert f"currentWorkspace[0] = (workspace > lib ? workspace : lib) + {4 * 384 * 256 * 2};" in rs.files[
        "op_host/matmul_reduce_scatter.cpp"]  # the send buffer of every rank block
    assert [t.shape for t in rs.outputs] == [(384, 256)]
    ag = M.codegen(_design("all_gather_matmul", devices=4, m=512, tiles=2))
    k = ag.files["op_kernel/all_gather_matmul.cpp"]
    assert "hccl_.AllGather<true>(" in k and "hccl_.Commit" not in k
    loop = k[k.index("void Process()"):k.index("void TileMatmul")]
    assert loop.index("hccl_.Wait(") < loop.index("AscendC::SyncAll<false>();") < loop.index("if (r == rank_)")
    assert [t.name for t in ag.outputs] == ["y", "gather_out"] and ag.outputs[1].shape == (2048, 256)


def test_launcher_runs_one_process_per_rank():
    code = M.codegen(_design(devices=4, tiles=2))
    main = code.files["main.cpp"]
    assert re.search(r"return ks_twin::hccl::run_ranks\(4, \d+, RunRank\);", main)
    assert code.devices == 4 and code.staging_bytes == 640 * 256 * 2
    assert 'ReadFile("x.bin"' in main and 'WriteFile("y.bin"' in main


def test_bf16_is_moved_as_bfp16():
    code = M.codegen(_design(dtype="bfloat16", tiles=1))
    assert "AscendC::HCCL_DATA_TYPE_BFP16" in code.files["op_kernel/matmul_all_reduce.cpp"]
    assert "using DataT = bfloat16_t;" in code.files["op_kernel/matmul_all_reduce.cpp"]


def _finish_loop(kernel: str) -> str:
    """The per-tile loop of the kernel's Finish(), or '' when Finish has none."""
    finish = kernel[kernel.index("void Finish()"):kernel.index("void Epilogue(") if "void Epilogue(" in kernel
                    else len(kernel)]
    head = "for (uint32_t i = 0, row = 0; i < tiling_.tileCnt + tiling_.tailCnt; ++i)"
    return finish[finish.index(head):finish.index("Finalize()")] if head in finish else ""


def test_epilogue_is_the_single_chip_vector_kernel_tile_by_tile():
    b = ks.placeholder((256,), "float16", name="bias")
    r = ks.placeholder((640, 256), "float16", name="resid")
    g = ks.placeholder((256,), "float16", name="gamma")
    code = M.codegen(_design(bias=b, add=r, rms_norm=g, tiles=3, tail="back"))
    assert [t.name for t in code.inputs] == ["x", "w", "bias", "resid", "gamma"]
    kernel = code.files["op_kernel/matmul_all_reduce.cpp"]
    assert '#include "mc2_epilogue.h"' in kernel
    assert "namespace mc2_epilogue {" in code.files["op_kernel/mc2_epilogue.h"]
    assert "hccl_.AllReduce(yGm_ + " in kernel and "resultGm_ + " in kernel  # partials in y, the sum in workspace
    # after the matmul loop, per tile: core 0 waits for that tile's collective, every core meets, the vector cores
    # run the epilogue on its rows; then Finalize
    loop = _finish_loop(kernel)
    assert loop.index("hccl_.Wait(tail ? tailHandle_ : tileHandle_);") < loop.index("AscendC::SyncAll<false>();") \
        < loop.index("if ASCEND_IS_AIV") < loop.index("Epilogue(row, tail);") < loop.index("row += rows;")
    epilogue = kernel[kernel.index("void Epilogue("):]
    row = "static_cast<uint64_t>(row) * tiling_.rankN * sizeof(DataT)"
    assert (f"op.Init(resultGm_ + {row}, biasGm_, addGm_ + {row}, gammaGm_, yGm_ + {row}, workspace_, t);"
            in epilogue)  # the row tensors from the tile's first row; bias and gamma whole
    assert "tail ? tiling_.epilogueTailTiling : tiling_.epilogueTiling" in epilogue
    header = code.files["op_host/matmul_all_reduce_tiling.h"]
    assert "TILING_DATA_FIELD_DEF_STRUCT(Mc2EpilogueTilingData, epilogueTiling);" in header
    assert "TILING_DATA_FIELD_DEF_STRUCT(Mc2EpilogueTilingData, epilogueTailTiling);" in header
    host = code.files["op_host/matmul_all_reduce.cpp"]
    assert "EpilogueTiling(context, 256, tiling.epilogueTiling, workspace)" in host  # the long tile's rows
    assert "EpilogueTiling(context, 128, tiling.epilogueTailTiling, workspace)" in host  # the short tile's
    assert "(tiling.epilogueTiling.get_blockDim() + 1) / 2" in host  # two AIVs per block
    plain = M.codegen(_design())
    assert "mc2_epilogue" not in " ".join(plain.files) and "resultGm_ = yGm_;" in plain.files[
        "op_kernel/matmul_all_reduce.cpp"]
    assert _finish_loop(plain.files["op_kernel/matmul_all_reduce.cpp"]) == ""


FAST = dict(mesh_alpha_us=0.01, mesh_link_bytes_per_s=1e15, mesh_reduce_bytes_per_s=1e15, aicpu_issue_us=0.01)


@pytest.mark.parametrize(("tiles", "tail", "engine", "fast"), [
    (1, "auto", "aicpu", False), (3, "front", "aicpu", False), (2, "back", "aiv", False), (5, "back", "aicpu", False),
    (3, "back", "aicpu", True)])  # fast: a link so quick that each tile's collective ends before the next matmul
def test_model_and_code_place_the_epilogue_alike(tiles, tail, engine, fast):
    """The model's epilogue events are the code's: one per tile, in tile order, each after that tile's
    collective and after the whole matmul loop (where the code's per-tile Wait and epilogue sit)."""
    r = ks.placeholder((640, 256), "float16", name="resid")
    x, w = ks.placeholder((640, 256), "float16", name="x"), ks.placeholder((256, 256), "float16", name="w")
    cluster = M.Cluster(2).with_link(**FAST) if fast else M.Cluster(2)
    d = M.matmul_allreduce(x, w, cluster=cluster, tiles=tiles, tail=tail, engine=engine, add=r, rms_norm=True)
    kernel = M.codegen(d).files["op_kernel/matmul_all_reduce.cpp"]
    loop = _finish_loop(kernel)
    assert loop.count("Epilogue(row, tail);") == 1 and loop.count("hccl_.Wait(") == 1  # one of each per tile
    t = M.mc2_tiling(d)
    ev = d.sim.events[0]
    epi = [e for e in ev if e.lane == "epilogue"]
    assert [e.tile for e in epi] == list(range(t.tile_cnt + t.tail_cnt))  # as many as the loop runs, in its order
    loop_end = max(e.end_us for e in ev if e.lane in ("compute", "sync"))
    for e in epi:
        comm_end = max(c.end_us for c in ev if c.lane == "comm" and c.tile == e.tile)
        assert e.start_us >= max(comm_end, loop_end) - 1e-9
    assert all(a.end_us <= b.start_us + 1e-9 for a, b in zip(epi, epi[1:], strict=False))  # one after another
    if fast:  # tile 0's collective is long done when the loop ends: its epilogue waits for the loop, not the link
        first_comm_end = max(c.end_us for c in ev if c.lane == "comm" and c.tile == 0)
        assert first_comm_end < loop_end and epi[0].start_us == pytest.approx(loop_end)
    # the whole-output form (AllGatherMatmul's bias) has no per-tile loop
    ag = _design("all_gather_matmul", bias=ks.placeholder((256,), "float16", name="bias"))
    assert _finish_loop(M.codegen(ag).files["op_kernel/all_gather_matmul.cpp"]) == ""


def test_aiv_engine_moves_the_client_to_a_vector_core_and_leaves_hccl_its_cores():
    r = ks.placeholder((640, 256), "float16", name="resid")
    aicpu, aiv = (M.codegen(_design(add=r, rms_norm=True, engine=e)) for e in ("aicpu", "aiv"))
    k_cpu, k_aiv = (c.files["op_kernel/matmul_all_reduce.cpp"] for c in (aicpu, aiv))
    assert "AscendC::Hccl<AscendC::HCCL_SERVER_TYPE_AICPU> hccl_;" in k_cpu
    assert "notify_ = ASCEND_IS_AIC && AscendC::GetBlockIdx() == 0;" in k_cpu
    assert "static constexpr AscendC::HcclServerConfig kHcclClient = {AscendC::CoreType::ON_AIV, 0};" in k_aiv
    assert "AscendC::Hccl<AscendC::HCCL_SERVER_TYPE_AICPU, kHcclClient> hccl_;" in k_aiv
    assert "notify_ = ASCEND_IS_AIV && AscendC::GetBlockIdx() == 0;" in k_aiv
    cores = M.Cluster(2).link.aiv_comm_cores
    assert "tiling.set_commCores(0);" in aicpu.files["op_host/matmul_all_reduce.cpp"]
    assert f"tiling.set_commCores({cores});" in aiv.files["op_host/matmul_all_reduce.cpp"]
    # the epilogue is lowered for the vector cores HCCL leaves, as the model times it
    def epi_cores(code) -> int:
        m = re.search(r"blockDim = tiles < (\d+) \? tiles : \d+;", code.files["op_host/mc2_epilogue.cpp"])
        return int(m.group(1))
    prof = M.Cluster(2).profile
    assert epi_cores(aicpu) == prof.aiv_cores and epi_cores(aiv) == prof.aiv_cores - cores


def test_refusals_name_the_thing_and_a_way_out():
    with pytest.raises(StageError, match="ks.multi.codegen takes a design .* got int"):
        M.codegen(3)
    x = ks.placeholder((640, 256), "float16", name="y")
    w = ks.placeholder((256, 256), "float16", name="w")
    with pytest.raises(InputError, match=r"placeholder name\(s\) \['y'\] .* rename"):
        M.codegen(M.matmul_allreduce(x, w, cluster=M.Cluster(2)))


def test_run_twin_input_errors_before_any_compile():
    d = _design(devices=4, tiles=2)
    good = d.random_inputs()
    per_rank = [{"x": good["x"][r], "w": good["w"][r]} for r in range(4)]
    with pytest.raises(InputError, match=r"3 per-rank input dict\(s\) for a cluster of 4 devices; pass one dict per "
                                         r"rank \(x \[640, 256\], w \[256, 256\]\)"):
        M.run_twin(d, per_rank[:3])
    bad = [dict(r) for r in per_rank]
    bad[2]["x"] = np.zeros((600, 256), np.float16)
    with pytest.raises(InputError, match=r"run_twin \(rank 2\): input 'x' has shape \[600,256\] but placeholder x is "
                                         r"\[640,256\] float16"):
        M.run_twin(d, bad)
    with pytest.raises(InputError, match=r"input 'x' has shape \[3,640,256\] but placeholder x is \[4,640,256\]"):
        M.run_twin(d, {"x": good["x"][:3], "w": good["w"]})
    with pytest.raises(InputError, match="inputs must be a dict .* or a list of 4 dicts"):
        M.run_twin(d, "x")
    with pytest.raises(StageError, match="run_twin takes an MC2 design"):
        M.run_twin(None, good)


def test_single_device_twin_run_refuses_a_multi_device_bundle():
    d = _design(devices=2, tiles=1)
    inputs = d.random_inputs()
    with pytest.raises(InputError, match=r"runs on 2 devices, one process per rank .* ks.multi.run_twin"):
        ks.twin.run(M.codegen(d), {"x": inputs["x"][0], "w": inputs["w"][0]})


def test_per_rank_dicts_share_the_bias():
    b = ks.placeholder((256,), "float16", name="bias")
    d = _design(devices=2, tiles=1, bias=b)
    good = d.random_inputs()
    per_rank = [{"x": good["x"][r], "w": good["w"][r], "bias": good["bias"] + r} for r in range(2)]
    with pytest.raises(InputError, match="bias differs between the ranks' dicts; it is one tensor for every device"):
        M.run_twin(d, per_rank)
    with pytest.raises(InputError, match=r"pass one dict per rank \(x \[640, 256\], w \[256, 256\], bias \[256\]\)"):
        M.run_twin(d, per_rank[:1])
