"""ks.grouped_matmul's generated kernel: golden == run_tiled == twin (an expert with no rows, one expert with every
row, group sizes that are no multiple of the tile, rows past the total zeroed, count and cumsum lists, int32 and
int64), and the code an engineer expects: the group list read from GM on the cube core, the Matmul pointed at the
group's rows and expert per tile, SetSingleShape for a group's tail rows, the deal carried across groups."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, generate_files, op_names

M, E, K, N = 64, 8, 256, 128

CASES = {
    # name: (dtype, group list dtype, list type, counts, tiles (m, n, k) or None for the auto-schedule)
    "count_int32_empty_expert": ("bfloat16", "int32", "count", [9, 0, 7, 11, 5, 10, 8, 14], (16, 64, 256)),
    "count_int64_one_expert": ("bfloat16", "int64", "count", [0, 0, 0, M, 0, 0, 0, 0], (32, 128, 128)),
    "cumsum_int64_tails_and_zero_rows": ("float16", "int64", "cumsum", [3, 17, 0, 1, 20, 0, 5, 2], (16, 64, 128)),
    "cumsum_int32_float32_auto": ("float32", "int32", "cumsum", [30, 2, 0, 0, 0, 13, 1, 0], None),
}
TOL = {"bfloat16": 8e-3, "float16": 1e-3, "float32": 1e-5}


def _build(name: str):
    dtype, gdtype, list_type, counts, tiles = CASES[name]
    x = ks.placeholder((M, K), dtype, name="x")
    w = ks.placeholder((E, K, N), dtype, name="w")
    g = ks.placeholder((E,), gdtype, name="group_list")
    out = ks.grouped_matmul(x, w, g, group_list_type=list_type, name="y")
    s = ks.create_schedule(out)
    if tiles:
        s[out].split("m", tiles[0]).split("n", tiles[1]).split("k", tiles[2])
    prog = ks.lower(s, target="ascend910b2")
    inp = ks.random_inputs(out, seed=7)
    values = np.cumsum(counts) if list_type == "cumsum" else np.asarray(counts)
    inp["group_list"] = values.astype(gdtype)
    return out, prog, inp, sum(counts)


@pytest.mark.parametrize("name", list(CASES))
def test_golden_run_tiled_and_twin_agree(name, twin_cache) -> None:
    out, prog, inp, total = _build(name)
    dtype = CASES[name][0]
    want = np.asarray(ks.evaluate(out, inp), np.float32)
    tiled = np.asarray(ks.run_tiled(prog, inp), np.float32)
    got = np.asarray(twin.run(codegen(prog), inp, cache_dir=twin_cache), np.float32)
    tol = TOL[dtype]
    np.testing.assert_allclose(tiled, want, rtol=tol, atol=tol, err_msg=f"{name} run_tiled")
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{name} twin")
    np.testing.assert_allclose(got, tiled, rtol=tol, atol=tol, err_msg=f"{name} twin vs run_tiled")
    if dtype != "float32":  # the twin's Matmul sums K in its own blocks: a 16-bit result rarely rounds apart
        assert (got != tiled).mean() < 0.01
    assert (got[total:] == 0).all() and not np.isnan(got).any()


def _src(name: str) -> str:
    _, prog, _, _ = _build(name)
    files = generate_files(prog)
    return "\n".join(files[n.kernel_file] for n in op_names(prog).values())


def test_code_reads_the_group_list_and_deals_tiles_across_groups() -> None:
    src = _src("count_int32_empty_expert")
    assert "AscendC::GlobalTensor<int32_t> groupListGm;" in src
    assert "const int64_t cnt = static_cast<int64_t>(groupListGm.GetValue(g));" in src
    assert "for (int64_t j = (blockIdx + blockNum - base % blockNum) % blockNum; j < gtiles; j += blockNum)" in src
    assert "base += gtiles;" in src and "row0 += cnt;" in src
    assert "matmulObj.SetTensorA(xGm[m0 * K], false);" in src
    assert "matmulObj.SetTensorB(wGm[static_cast<int64_t>(g) * K * N + n0], false);" in src
    assert "matmulObj.SetSingleShape(mlen, nlen, K);" in src
    assert "matmulObj.IterateAll(yGm[m0 * N + n0]);" in src
    assert "KERNEL_TYPE_MIX_AIC_1_2" in src and "AscendC::DataCopyPad(yGm[z0 * N], zero, out);" in src


def test_cumsum_code_takes_differences_and_the_last_entry_as_total() -> None:
    src = _src("cumsum_int64_tails_and_zero_rows")
    assert "AscendC::GlobalTensor<int64_t> groupListGm;" in src
    assert "static_cast<int64_t>(groupListGm.GetValue(g)) - row0;" in src
    assert "const int64_t total = static_cast<int64_t>(groupListGm.GetValue(groups - 1));" in src


def test_host_tiling_carries_the_cube_tiling_and_the_group_count() -> None:
    _, prog, _, _ = _build("count_int32_empty_expert")
    files = generate_files(prog)
    header = next(v for k, v in files.items() if k.endswith("_tiling.h"))
    assert "TILING_DATA_FIELD_DEF(uint32_t, groups);" in header
    assert "TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);" in header


def test_twin_zeroes_rows_past_the_total_in_chunks_over_the_vector_cores(twin_cache) -> None:
    # float32 rows of 512: 8 rows per zero tile, 181 rows past the total: 23 chunks over 6 AIVs
    x = ks.placeholder((200, 32), "float32", name="x")
    w = ks.placeholder((2, 32, 512), "float32", name="w")
    g = ks.placeholder((2,), "int32", name="group_list")
    out = ks.grouped_matmul(x, w, g, name="y")
    s = ks.create_schedule(out)
    s[out].parallel(cores=3)
    prog = ks.lower(s, target="ascend910b2")
    inp = ks.random_inputs(out, seed=2)
    inp["group_list"] = np.array([19, 0], np.int32)
    got = np.asarray(twin.run(codegen(prog), inp, cache_dir=twin_cache), np.float32)
    np.testing.assert_allclose(got, ks.evaluate(out, inp), rtol=1e-5, atol=1e-5)
    assert (got[19:] == 0).all()
