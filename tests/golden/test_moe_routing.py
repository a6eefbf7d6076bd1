"""ks.argsort / ks.sort and ks.moe_init_routing: the golden model's semantics (MoeInitRoutingV2's formulas, stable
order), the interpreter equal to it bit for bit, the simulator's prices that grow with what the kernels issue, and
every refusal."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio.core.errors import DTypeError, InputError, ShapeError, UnsupportedError
from kernelstudio.lower.sort import SORT_MAX_ROW
from kernelstudio.lower.sort_merge import SORT_TILE

SETTINGS = settings(max_examples=20, deadline=None)


def _routing(tokens=64, k=2, experts=8, hidden=256, dtype="bfloat16"):
    x = ks.placeholder((tokens, hidden), dtype, name="x")
    ids = ks.placeholder((tokens, k), "int32", name="ids")
    return ks.moe_init_routing(x, ids, experts, name="r")


def _reference(x: np.ndarray, ids: np.ndarray, experts: int):
    """MoeInitRoutingV2 (dropless, count mode) written from its documented formulas, pair by pair."""
    tokens, k = ids.shape
    pairs = sorted(range(tokens * k), key=lambda i: (ids.flat[i], i))  # sortedRowIdx: by expert, then pair
    expanded_x = np.stack([x[i // k] for i in pairs])
    row_idx = np.empty(tokens * k, np.int64)
    for p, i in enumerate(pairs):
        row_idx[i] = p  # expandedRowIdx[sortedRowIdx[p]] = p
    count = np.array([int((ids == e).sum()) for e in range(experts)])
    return expanded_x, row_idx, count


def _tiled(outs, inputs):
    prog = ks.lower(ks.create_schedule(outs), target="ascend910b2")
    got = ks.run_tiled(prog, inputs)
    return got if isinstance(got, tuple) else (got,)


def _ids(tokens, k, experts, seed):
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(experts, size=k, replace=False) for _ in range(tokens)]).astype(np.int32)


@pytest.mark.parametrize("ids_kind", ["random", "one_expert_empty", "all_to_one"])
def test_moe_init_routing_is_v2s_formulas_and_run_tiled_equals_it_bit_for_bit(ids_kind: str) -> None:
    outs = _routing()
    inp = ks.random_inputs(outs, seed=3)
    if ids_kind == "one_expert_empty":
        inp["ids"] = np.where(inp["ids"] == 5, 6, inp["ids"]).astype(np.int32)
        inp["ids"][:, 1] = np.where(inp["ids"][:, 0] == inp["ids"][:, 1], 7, inp["ids"][:, 1])
    elif ids_kind == "all_to_one":
        inp["ids"] = np.full((64, 2), 3, np.int32)
    ex, row_idx, count = ks.evaluate(outs, inp)
    want_x, want_idx, want_count = _reference(np.asarray(inp["x"], np.float32), inp["ids"], 8)
    np.testing.assert_array_equal(np.asarray(ex, np.float32), want_x)
    np.testing.assert_array_equal(row_idx, want_idx)
    np.testing.assert_array_equal(count, want_count)
    assert row_idx.dtype == np.int32 and count.dtype == np.int32 and ex.shape == (128, 256)
    if ids_kind == "one_expert_empty":
        assert count[5] == 0 and count.sum() == 128
    if ids_kind == "all_to_one":
        assert count.tolist() == [0, 0, 0, 128, 0, 0, 0, 0]
        np.testing.assert_array_equal(row_idx, np.arange(128))  # equal ids keep the pair order
    for got, want in zip(_tiled(outs, inp), (ex, row_idx, count), strict=True):
        np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))


def test_each_experts_rows_are_contiguous_and_in_token_order() -> None:
    outs = _routing(tokens=16, k=2, experts=4, hidden=32, dtype="float32")
    inp = {"x": np.arange(16, dtype=np.float32)[:, None] * np.ones((1, 32), np.float32), "ids": _ids(16, 2, 4, 0)}
    ex, row_idx, count = ks.evaluate(outs, inp)
    starts = np.concatenate([[0], np.cumsum(count)])
    for e in range(4):
        tokens = ex[starts[e]:starts[e + 1], 0]
        assert (inp["ids"][tokens.astype(int)] == e).any(axis=1).all()  # every row of the block routes to e
        assert list(tokens) == sorted(tokens)  # the tokens in their original order (stable)
    for i in range(32):  # expanded_row_idx: the pair's row in expanded_x holds the pair's token
        assert ex[row_idx[i], 0] == i // 2


@SETTINGS
@given(rows=st.integers(1, 5), cols=st.integers(1, 300), distinct=st.integers(1, 6), seed=st.integers(0, 2**16),
       descending=st.booleans(), dtype=st.sampled_from(["float32", "float16", "bfloat16", "int32"]))
def test_argsort_with_ties_is_numpys_stable_argsort_and_run_tiled_agrees(rows, cols, distinct, seed, descending,
                                                                        dtype) -> None:
    x = ks.placeholder((rows, cols), dtype, name="x")
    idx = ks.argsort(x, descending=descending)
    vals = ks.sort(x, descending=descending)
    keys = np.random.default_rng(seed).integers(-3, distinct, size=(rows, cols))  # few values: many ties
    inp = {"x": keys.astype(np.float32) * (0.5 if dtype != "int32" else 1)}
    want = np.argsort(-keys if descending else keys, axis=-1, kind="stable")
    got_idx, got_vals = ks.evaluate((idx, vals), inp)
    np.testing.assert_array_equal(got_idx, want)
    np.testing.assert_array_equal(np.asarray(got_vals, np.float32), np.take_along_axis(inp["x"], want, axis=-1))
    tiled = _tiled((idx, vals), inp)
    np.testing.assert_array_equal(tiled[0], want)
    np.testing.assert_array_equal(np.asarray(tiled[1], np.float32), np.asarray(got_vals, np.float32))


def test_equal_keys_keep_their_order_in_both_directions() -> None:
    x = ks.placeholder((1, 8), "float32", name="x")
    keys = np.array([[2, 1, 2, 1, 3, 1, 2, 3]], np.float32)
    up, down = ks.evaluate((ks.argsort(x), ks.argsort(x, descending=True)), {"x": keys})
    assert up.tolist() == [[1, 3, 5, 0, 2, 6, 4, 7]]
    assert down.tolist() == [[4, 7, 0, 2, 6, 1, 3, 5]]


def test_argsort_along_another_axis_is_golden_only() -> None:
    x = ks.placeholder((4, 3), "float32", name="x")
    i = ks.argsort(x, axis=0)
    v = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_array_equal(ks.evaluate(i, {"x": v}), np.argsort(v, axis=0, kind="stable"))
    with pytest.raises(UnsupportedError, match=r"only the last axis is lowered"):
        ks.lower(ks.create_schedule(i), target="ascend910b2")


def test_rows_longer_than_one_sort_tile_are_merged_through_a_workspace() -> None:
    x = ks.placeholder((2, SORT_MAX_ROW + 32), "float32", name="x")
    prog = ks.lower(ks.create_schedule(ks.argsort(x)), target="ascend910b2")
    (k,) = prog.kernels
    assert dict(k.tiling)["n_tiles"] == -(-(SORT_MAX_ROW + 32) // SORT_TILE) and "odd-even" in k.notes[0]
    assert sorted(t.dtype for t in prog.tensors if t.role == "workspace") == ["float32", "int32"]
    y = ks.placeholder((3, SORT_MAX_ROW), "int32", name="y")  # the limit itself fits UB: int32 keys cast to
    prog = ks.lower(ks.create_schedule((ks.argsort(y), ks.sort(y))), target="ascend910b2")  # float32, both out
    assert len(prog.kernels) == 1 and prog.kernels[0].tiling[1] == ("cols", SORT_MAX_ROW)


def test_moe_init_routing_of_more_pairs_than_a_tile_sorts_in_tiles_and_counts_in_chunks() -> None:
    outs = _routing(tokens=SORT_MAX_ROW // 2 + 1, k=2, experts=4, hidden=16)
    prog = ks.lower(ks.create_schedule(outs), target="ascend910b2")
    notes = {k.name: k.notes[0] if k.notes else "" for k in prog.kernels}
    assert "odd-even" in notes["r_sorted_row_idx"] and "odd-even" in notes["r_row_idx"]
    assert f"{SORT_MAX_ROW + 2} ids into 4 bins" in notes["r_count"] and "2 chunks of 4096" in notes["r_count"]


def test_ids_out_of_range_are_refused_naming_the_first() -> None:
    outs = _routing(tokens=4, k=2, experts=8, hidden=16, dtype="float32")
    inp = {"x": np.zeros((4, 16), np.float32), "ids": np.array([[0, 1], [2, 9], [8, 3], [-1, 4]], np.int32)}
    with pytest.raises(InputError, match=r"id 9 at \[1, 1\] is outside \[0, 8\) \(the first of 3 such\)"):
        ks.evaluate(outs, inp)


def test_int32_keys_beyond_float32s_exact_range_are_refused() -> None:
    x = ks.placeholder((3,), "int32", name="x")
    with pytest.raises(InputError, match=r"key 16777216 at \[1\]"):
        ks.evaluate(ks.argsort(x), {"x": np.array([1, 2**24, 3], np.int32)})


def test_random_inputs_give_ids_each_expert_can_take() -> None:
    outs = _routing(tokens=32, k=4, experts=6, hidden=16)
    ids = ks.random_inputs(outs, seed=0)["ids"]
    assert ids.min() >= 0 and ids.max() < 6 and ids.dtype == np.int32


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda x, i: ks.moe_init_routing(x, ks.cast(i, "float32"), 8), DTypeError, r"expert_ids .* must be int32"),
    (lambda x, i: ks.moe_init_routing(ks.cast(x, "int32"), i, 8), DTypeError, r"x .* must be float16, bfloat16"),
    (lambda x, i: ks.moe_init_routing(ks.reshape(x, (4, 4, 4)), i, 8), ShapeError, r"x .* must be 2-D \[T, H\]"),
    (lambda x, i: ks.moe_init_routing(x, ks.reshape(i, (8,)), 8), ShapeError, r"2-D \[T, k\] with T = 4"),
    (lambda x, i: ks.moe_init_routing(x, ks.reshape(i, (2, 4)), 8), ShapeError, r"2-D \[T, k\] with T = 4"),
    (lambda x, i: ks.moe_init_routing(x, i, 0), ShapeError, r"num_experts=0 must be an int >= 1"),
    (lambda x, i: ks.moe_init_routing(x, i, 2.5), ShapeError, r"num_experts=2.5 must be an int >= 1"),
    (lambda x, i: ks.argsort(x, stable=False), UnsupportedError, r"only the stable sort"),
    (lambda x, i: ks.argsort(x, descending=1), DTypeError, r"descending must be True or False"),
    (lambda x, i: ks.argsort(ks.cast(x, "int8")), DTypeError, r"must be one of float16, bfloat16, float32, int32"),
    (lambda x, i: ks.sort(x, axis=2), ShapeError, r"axis"),
])
def test_bad_calls_are_refused_with_the_numbers(call, error, match) -> None:
    x = ks.placeholder((4, 16), "float32", name="x")
    i = ks.placeholder((4, 2), "int32", name="i")
    with pytest.raises(error, match=match):
        call(x, i)


def _kernel_time(outs, name: str) -> float:
    sim = ks.simulate(ks.lower(ks.create_schedule(outs), target="ascend910b2"))
    return next(k["time_us"] for k in sim.kernels if k["name"] == name)


def test_simulated_sort_and_histogram_grow_with_what_they_issue() -> None:
    short = ks.argsort(ks.placeholder((1, 128), "float32", name="a"), name="s")
    long = ks.argsort(ks.placeholder((1, 2048), "float32", name="a"), name="s")
    assert _kernel_time(long, "s") > 4 * _kernel_time(short, "s")  # 16x the keys, 11 / 7 the merge passes
    t = {e: _kernel_time(_routing(tokens=64, k=2, experts=e, hidden=64), "r_count") for e in (4, 64, 124)}
    per_expert = (t[64] - t[4]) / 60  # three vector instructions per expert, whatever the count
    assert per_expert > 0
    assert (t[124] - t[64]) / 60 == pytest.approx(per_expert, rel=0.05)
    narrow = _routing(tokens=64, k=2, experts=8, hidden=64)
    wide = _routing(tokens=64, k=2, experts=8, hidden=1024)
    assert _kernel_time(wide, "r_x") > _kernel_time(narrow, "r_x")  # the gathered rows are longer
