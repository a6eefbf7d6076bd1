"""ks.grouped_matmul (the MoE experts' matmul, group sizes as run-time data): the golden model's semantics, the
interpreter equal to it for counts and cumsum group lists (an empty expert, one expert with every row, sizes that
are no multiple of the tile, rows past the total), every refusal, the simulator's round-robin deal across groups
on the planned sizes, and the imbalance figure of ks.grouped_load."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import DTypeError, InputError, ShapeError, UnsupportedError
from kernelstudio.lower.cube.grouped import planned_tiles

M, E, K, N = 64, 8, 256, 128


def _gmm(dtype="bfloat16", gdtype="int32", list_type="count", plan=None, m=M, e=E, k=K, n=N):
    x = ks.placeholder((m, k), dtype, name="x")
    w = ks.placeholder((e, k, n), dtype, name="w")
    g = ks.placeholder((e,), gdtype, name="group_list")
    return ks.grouped_matmul(x, w, g, group_list_type=list_type, plan_sizes=plan, name="y")


def _reference(inp: dict, counts: list[int]) -> np.ndarray:
    x, w = inp["x"].astype(np.float32), inp["w"].astype(np.float32)
    out = np.zeros((x.shape[0], w.shape[2]), np.float32)
    r = 0
    for g, c in enumerate(counts):
        out[r:r + c] = x[r:r + c] @ w[g]
        r += c
    return out


def _as_list(counts: list[int], list_type: str, gdtype: str) -> np.ndarray:
    v = np.cumsum(counts) if list_type == "cumsum" else np.asarray(counts)
    return v.astype(gdtype)


COUNTS = {
    "one_expert_empty": [9, 0, 7, 11, 5, 10, 8, 14],
    "one_expert_all_rows": [0, 0, 0, M, 0, 0, 0, 0],
    "tails_and_rows_past_total": [3, 17, 0, 1, 20, 0, 5, 2],  # 48 of 64 rows: 16 zero rows
}


@pytest.mark.parametrize("case", list(COUNTS))
@pytest.mark.parametrize("list_type,gdtype", [("count", "int32"), ("cumsum", "int64"), ("count", "int64")])
def test_golden_and_run_tiled_follow_the_group_list(case, list_type, gdtype) -> None:
    counts = COUNTS[case]
    out = _gmm(gdtype=gdtype, list_type=list_type)
    inp = ks.random_inputs(out, seed=3)
    inp["group_list"] = _as_list(counts, list_type, gdtype)
    want = ks.evaluate(out, inp)
    ref = _reference(inp, counts)
    np.testing.assert_allclose(want.astype(np.float32), ref, rtol=8e-3, atol=8e-3)
    assert (want[sum(counts):].astype(np.float32) == 0).all()
    s = ks.create_schedule(out)
    s[out].split("m", 16).split("n", 64)  # one k tile: the golden model's sum order, bit for bit
    got = ks.run_tiled(ks.lower(s), inp)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    s[out].split("k", 64)  # four k tiles: float32 partial sums in another order, one rounding apart
    got = ks.run_tiled(ks.lower(s), inp)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=8e-3, atol=8e-3)
    assert (got[sum(counts):].astype(np.float32) == 0).all()


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_run_tiled_equals_golden_in_float16_and_float32_with_auto_tiles(dtype) -> None:
    out = _gmm(dtype=dtype, m=40, e=3, k=96, n=48)
    inp = ks.random_inputs(out, seed=5)
    assert inp["group_list"].sum() == 40 and (inp["group_list"] >= 0).all()
    inp["group_list"] = np.array([13, 0, 21], np.int32)  # 34 of 40 rows
    want = ks.evaluate(out, inp)
    got = ks.run_tiled(ks.lower(ks.create_schedule(out)), inp)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3)
    assert (got[34:] == 0).all()


def test_random_group_lists_are_valid_counts_and_cumsums() -> None:
    for list_type in ("count", "cumsum"):
        v = ks.random_inputs(_gmm(list_type=list_type), seed=2)["group_list"]
        counts = np.diff(v, prepend=0) if list_type == "cumsum" else v
        assert v.shape == (E,) and (counts >= 0).all() and counts.sum() == M


def test_default_plan_is_the_even_split_and_a_given_plan_is_kept() -> None:
    assert _gmm(m=66, e=8).node.attr("plan_sizes") == (9, 9, 8, 8, 8, 8, 8, 8)
    assert _gmm(plan=[64, 0, 0, 0, 0, 0, 0, 0]).node.attr("plan_sizes") == (64, 0, 0, 0, 0, 0, 0, 0)


# ---- refusals ------------------------------------------------------------------------------------------------

def test_bad_shapes_and_dtypes_are_refused_with_the_numbers() -> None:
    x = ks.placeholder((M, K), "bfloat16", name="x")
    w = ks.placeholder((E, K, N), "bfloat16", name="w")
    g = ks.placeholder((E,), "int32", name="g")
    with pytest.raises(ShapeError, match=r"weights .* must be \[E, K, N\]"):
        ks.grouped_matmul(x, ks.placeholder((K, N), "bfloat16", name="w2"), g)
    with pytest.raises(ShapeError, match="K = 256 but weights .* have K = 128"):
        ks.grouped_matmul(x, ks.placeholder((E, 128, N), "bfloat16", name="w3"), g)
    with pytest.raises(ShapeError, match=r"group_list .* must be \[8\]"):
        ks.grouped_matmul(x, w, ks.placeholder((7,), "int32", name="g7"))
    with pytest.raises(DTypeError, match="must be int32 or int64"):
        ks.grouped_matmul(x, w, ks.placeholder((E,), "float32", name="gf"))
    with pytest.raises(DTypeError, match="must share one of"):
        ks.grouped_matmul(x, ks.placeholder((E, K, N), "float16", name="wh"), g)
    with pytest.raises(ShapeError, match=r"x .* must be \[M, K\]"):
        ks.grouped_matmul(ks.placeholder((2, M, K), "bfloat16", name="x3"), w, g)
    with pytest.raises(UnsupportedError, match="group_list_type 'sizes'"):
        ks.grouped_matmul(x, w, g, group_list_type="sizes")


def test_bad_plan_sizes_are_refused_naming_them() -> None:
    with pytest.raises(InputError, match=r"plan_sizes\[2\] is -3"):
        _gmm(plan=(10, 10, -3, 0, 0, 0, 0, 0))
    with pytest.raises(InputError, match="has 3 entries"):
        _gmm(plan=(10, 10, 10))
    with pytest.raises(InputError, match="sum to 80, more than x's 64 rows"):
        _gmm(plan=(10,) * 8)
    with pytest.raises(InputError, match="must be a tuple of 8 ints"):
        _gmm(plan=(8.0,) * 8)


def test_bad_group_list_data_is_refused_by_the_golden_model() -> None:
    out = _gmm()
    inp = ks.random_inputs(out)
    inp["group_list"] = np.array([8, 8, -1, 8, 8, 8, 8, 8], np.int32)
    with pytest.raises(InputError, match="entry 2 is -1"):
        ks.evaluate(out, inp)
    inp["group_list"] = np.array([20] * 8, np.int32)
    with pytest.raises(InputError, match="puts 160 rows in its groups but x has 64"):
        ks.evaluate(out, inp)
    out = _gmm(list_type="cumsum")
    inp["group_list"] = np.array([8, 16, 12, 20, 30, 40, 50, 60], np.int32)
    with pytest.raises(InputError, match="entry 2 is 12 after 16"):
        ks.evaluate(out, inp)


def test_an_epilogue_is_its_own_kernel() -> None:
    out = _gmm()
    r = ks.relu(out)
    prog = ks.lower(ks.create_schedule(r))
    assert len(prog.kernels) == 2 and prog.kernels[0].family == "cube"


# ---- simulator ------------------------------------------------------------------------------------------------

def _fix_rows(plan, cores: int, tm=16, tn=64) -> dict[str, list[int]]:
    out = _gmm(plan=plan, e=len(plan))
    s = ks.create_schedule(out)
    s[out].split("m", tm).split("n", tn).split("k", 128).parallel(cores=cores)
    sim = ks.simulate(ks.lower(s))
    fix = collections.defaultdict(list)
    for e in sim.events:
        if e.pipe == "FIX":  # one FixPipe per output tile: its bytes are its rows x tile_n x 2 (bfloat16)
            fix[e.core].append((e.start_us, e.bytes // (tn * 2)))
    return {c: [r for _, r in sorted(v)] for c, v in fix.items()}


def test_simulated_tiles_are_dealt_round_robin_across_groups_on_the_planned_sizes() -> None:
    # groups of 20, 0, 40 and 4 rows, 16x64 tiles, N = 128: 4 + 0 + 6 + 2 tiles, t -> core t % 5
    plan = (20, 0, 40, 4)
    tiles = planned_tiles(plan, 16, 2)
    assert [(g, mi) for g, mi, _ in tiles] == [(0, 0), (0, 0), (0, 1), (0, 1), (2, 0), (2, 0), (2, 1), (2, 1),
                                               (2, 2), (2, 2), (3, 0), (3, 0)]
    got = _fix_rows(plan, cores=5)
    assert got == {"core0.cubecore0": [16, 16, 4], "core1.cubecore0": [16, 16, 4], "core2.cubecore0": [4, 16],
                   "core3.cubecore0": [4, 8], "core4.cubecore0": [16, 8]}


def test_one_hot_plan_is_slower_than_the_even_split_and_imbalance_is_their_ratio() -> None:
    out = _gmm(plan=(M, 0, 0, 0, 0, 0, 0, 0))
    tiles = {"tile_m": 64, "tile_n": 128, "tile_k": 128}
    load = ks.grouped_load(out, tiles=tiles)
    assert load.even_sizes == (8,) * 8
    # the same two runs, lowered and simulated here
    times = []
    for plan in (load.plan_sizes, load.even_sizes):
        t = _gmm(plan=plan)
        s = ks.create_schedule(t)
        s[t].split("m", 64).split("n", 128).split("k", 128)
        times.append(ks.simulate(ks.lower(s)).kernels[0]["time_us"])
    assert (load.planned_us, load.even_us) == tuple(times)
    assert load.imbalance == times[0] / times[1]
    assert load.imbalance > 1.0
    # one expert's single 64-row tile: one cube core works, every other idles
    busy = [c for c, t in load.core_end_us.items() if t > 0]
    assert busy == ["core0.cubecore0"] and len(load.idle_cores) == len(load.core_end_us) - 1
    assert "imbalance" in load.summary()


def test_grouped_load_refuses_another_tensor() -> None:
    with pytest.raises(UnsupportedError, match="not the result of ks.grouped_matmul"):
        ks.grouped_load(ks.relu(_gmm()))


def test_rows_past_the_total_are_zeroed_in_chunks_over_every_vector_core() -> None:
    # float32 rows of 512: 8 rows per 16 KB zero tile, 181 rows past the total: 23 chunks over the AIVs
    out = _gmm(dtype="float32", m=200, e=2, k=32, n=512)
    s = ks.create_schedule(out)
    s[out].parallel(cores=3)
    prog = ks.lower(s)
    assert dict(prog.kernels[0].tiling)["zero_rows"] == 8
    inp = ks.random_inputs(out, seed=1)
    inp["group_list"] = np.array([19, 0], np.int32)
    got = ks.run_tiled(prog, inp)
    np.testing.assert_allclose(got, ks.evaluate(out, inp), rtol=1e-5, atol=1e-5)
    assert (got[19:] == 0).all() and np.abs(got[:19]).sum() > 0


def test_tile_knobs_and_double_buffering_act_on_the_kernel() -> None:
    out = _gmm()
    s = ks.create_schedule(out)
    s[out].split("m", 32).split("n", 64).split("k", 64).parallel(cores=4).double_buffer(False)
    k = ks.lower(s).kernels[0]
    t = dict(k.tiling)
    assert (t["tile_m"], t["tile_n"], t["tile_k"], t["block_dim"]) == (32, 64, 64, 4)
    assert {b.name: b.depth for b in k.buffers if b.name in ("a1", "b1", "a2", "b2")} == dict.fromkeys(
        ("a1", "b1", "a2", "b2"), 1)
    s[out].double_buffer(True)
    k2 = ks.lower(s).kernels[0]
    assert {b.name: b.depth for b in k2.buffers if b.name in ("a1", "b1")} == {"a1": 2, "b1": 2}
