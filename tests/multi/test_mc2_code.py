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


def test_epilogue_is_the_single_chip_vector_kernel_after_the_last_wait():
    b = ks.placeholder((256,), "float16", name="bias")
    r = ks.placeholder((640, 256), "float16", name="resid")
    g = ks.placeholder((256,), "float16", name="gamma")
    code = M.codegen(_design(bias=b, add=r, rms_norm=g))
    assert [t.name for t in code.inputs] == ["x", "w", "bias", "resid", "gamma"]
    kernel = code.files["op_kernel/matmul_all_reduce.cpp"]
    assert '#include "mc2_epilogue.h"' in kernel
    assert "namespace mc2_epilogue {" in code.files["op_kernel/mc2_epilogue.h"]
    assert "hccl_.AllReduce(yGm_ + " in kernel and "resultGm_ + " in kernel  # partials in y, the sum in workspace
    finish = kernel[kernel.index("void Finish()"):]
    assert finish.index("Finalize()") < finish.index("if ASCEND_IS_AIV") < finish.index(
        "op.Init(resultGm_, biasGm_, addGm_, gammaGm_, yGm_, workspace_, tiling_.epilogueTiling);")
    assert "TILING_DATA_FIELD_DEF_STRUCT(Mc2EpilogueTilingData, epilogueTiling);" in code.files[
        "op_host/matmul_all_reduce_tiling.h"]
    host = code.files["op_host/matmul_all_reduce.cpp"]
    assert "EpilogueTiling(context, tiling.epilogueTiling, workspace)" in host
    assert "(tiling.epilogueTiling.blockDim + 1) / 2" in host  # two AIVs per block
    plain = M.codegen(_design())
    assert "mc2_epilogue" not in " ".join(plain.files) and "resultGm_ = yGm_;" in plain.files[
        "op_kernel/matmul_all_reduce.cpp"]


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
