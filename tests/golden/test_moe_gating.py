"""MoE gating and finalize in the golden model and the interpreter: `moe_gating_topk` against an independent
NumPy statement of CANN's MoeGatingTopK (sigmoid, bias, group top-2 sums, groups kept, top-k, renorm, route
scale), its ties, biases that steer every token to one expert or keep one from all, the softmax gate, the
finalize against a MoeInitRouting-style sort, and every error path. The twin's side is
tests/codegen/test_moe_gating_code.py."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks


def _reference(logits: np.ndarray, bias: np.ndarray, k: int, groups: int, keep: int, renorm: bool, scale: float,
               rule: str = "top2_sum") -> tuple[np.ndarray, np.ndarray]:
    """MoeGatingTopK as its docs write it, with argsort (stable: ties to the lower index) instead of loops."""
    x = logits.astype(np.float32)
    s = (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)
    v = s + bias.astype(np.float32)
    t, e = v.shape
    grouped = v.reshape(t, groups, e // groups)
    top = -np.sort(-grouped, axis=-1)
    gscore = top[..., 0] + top[..., 1] if rule == "top2_sum" and e // groups > 1 else top[..., 0]
    kept = np.argsort(-gscore, axis=-1, kind="stable")[:, :keep]
    mask = np.zeros((t, groups), bool)
    np.put_along_axis(mask, kept, True, axis=-1)
    masked = np.where(np.repeat(mask, e // groups, axis=-1), v, -np.inf)
    ids = np.argsort(-masked, axis=-1, kind="stable")[:, :k]
    w = np.take_along_axis(s, ids, axis=-1)
    if renorm:
        w = w / (w.sum(-1, keepdims=True) + np.float32(1e-20))
    return (w * np.float32(scale)).astype(np.float32), ids.astype(np.int32)


def _gate(tokens: int, experts: int, k: int, dtype: str = "float32", **kw):
    x = ks.placeholder((tokens, experts), dtype, name="logits")
    b = ks.placeholder((experts,), dtype, name="bias")
    return x, b, ks.moe_gating_topk(x, b, k, name="gate", **kw)


def _feed(tokens: int, experts: int, seed: int, dtype: str = "float32", bias_scale: float = 0.1):
    rng = np.random.default_rng(seed)
    np_dt = np.float32 if dtype == "float32" else ks.core.dtypes.numpy_dtype(dtype)
    return {"logits": rng.standard_normal((tokens, experts)).astype(np_dt),
            "bias": (rng.standard_normal(experts) * bias_scale).astype(np_dt)}


def _run_both(outs, feed, tile_rows: int = 16):
    s = ks.create_schedule(list(outs))
    s[outs[0]].split(0, tile_rows)
    prog = ks.lower(s, target="ascend910b2")
    return ks.evaluate(list(outs), feed), ks.run_tiled(prog, feed), prog


CONFIGS = {  # tokens, experts, k, groups, kept, renorm, route scale
    "mixtral_like_8_top2": (64, 8, 2, 1, 1, True, 1.0),
    "grouped_32_4_keep2_top4": (64, 32, 4, 4, 2, True, 1.0),
    "deepseek_v3_256_8_keep4_top8": (48, 256, 8, 8, 4, True, 2.5),
    "no_renorm_scaled": (40, 16, 3, 2, 1, False, 1.5),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_gating_golden_and_run_tiled_follow_the_documented_definition(name: str) -> None:
    tokens, experts, k, groups, keep, renorm, scale = CONFIGS[name]
    _, _, (w, ids) = _gate(tokens, experts, k, groups=groups, topk_groups=keep, renorm=renorm, route_scale=scale)
    feed = _feed(tokens, experts, seed=len(name))
    want_w, want_ids = _reference(feed["logits"], feed["bias"], k, groups, keep, renorm, scale)
    golden, tiled, _ = _run_both((w, ids), feed)
    np.testing.assert_array_equal(golden[1], want_ids)
    np.testing.assert_allclose(golden[0], want_w, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(tiled[1], golden[1])
    np.testing.assert_allclose(tiled[0], golden[0], rtol=1e-6, atol=1e-7)
    if renorm:
        np.testing.assert_allclose(golden[0].sum(-1), np.full(tokens, scale, np.float32), rtol=1e-5)


def test_the_group_rule_max_scores_a_group_by_its_best_expert() -> None:
    _, _, (w, ids) = _gate(32, 16, 2, groups=4, topk_groups=1, group_select="max")
    feed = _feed(32, 16, seed=3)
    want_w, want_ids = _reference(feed["logits"], feed["bias"], 2, 4, 1, True, 1.0, rule="max")
    golden, tiled, _ = _run_both((w, ids), feed)
    np.testing.assert_array_equal(golden[1], want_ids)
    np.testing.assert_array_equal(tiled[1], want_ids)
    # one group kept: both experts of every token lie in one group of 4
    assert (golden[1][:, 0] // 4 == golden[1][:, 1] // 4).all()


def test_ties_go_to_the_lower_group_then_the_lower_expert() -> None:
    # every logit and bias equal: all groups tie, all experts tie
    _, _, (w, ids) = _gate(8, 32, 4, groups=4, topk_groups=2)
    feed = {"logits": np.zeros((8, 32), np.float32), "bias": np.zeros(32, np.float32)}
    golden, tiled, _ = _run_both((w, ids), feed, tile_rows=3)
    np.testing.assert_array_equal(golden[1], np.tile(np.arange(4, dtype=np.int32), (8, 1)))
    np.testing.assert_array_equal(tiled[1], golden[1])
    np.testing.assert_allclose(golden[0], np.full((8, 4), 0.25, np.float32))
    # experts 9 and 13 tie at the top of group 1 (and win it): the lower one first
    logits = np.zeros((8, 32), np.float32)
    logits[:, [9, 13]] = 3.0
    golden, tiled, _ = _run_both((w, ids), {"logits": logits, "bias": np.zeros(32, np.float32)})
    assert golden[1][0, :2].tolist() == [9, 13]
    np.testing.assert_array_equal(tiled[1], golden[1])


def test_the_bias_steers_selection_but_not_the_weights() -> None:
    _, _, (w, ids) = _gate(64, 8, 2, renorm=False)
    feed = _feed(64, 8, seed=5)
    feed["bias"][:] = 0
    feed["bias"][5] = 10.0  # every token picks expert 5 first ...
    feed["bias"][2] = -10.0  # ... and none picks expert 2
    golden, tiled, _ = _run_both((w, ids), feed)
    assert (golden[1][:, 0] == 5).all()
    assert not (golden[1] == 2).any()
    np.testing.assert_array_equal(tiled[1], golden[1])
    sig = 1 / (1 + np.exp(-feed["logits"].astype(np.float64)))
    np.testing.assert_allclose(golden[0][:, 0], sig[:, 5], rtol=1e-6)  # the score without the bias


def test_bfloat16_logits_are_scored_in_float32() -> None:
    _, _, (w, ids) = _gate(64, 32, 4, "bfloat16", groups=4, topk_groups=2)
    feed = _feed(64, 32, seed=7, dtype="bfloat16")
    want_w, want_ids = _reference(feed["logits"].astype(np.float32), feed["bias"].astype(np.float32), 4, 4, 2,
                                  True, 1.0)
    golden, tiled, _ = _run_both((w, ids), feed)
    assert golden[0].dtype == np.float32 and golden[1].dtype == np.int32
    np.testing.assert_array_equal(golden[1], want_ids)
    np.testing.assert_array_equal(tiled[1], want_ids)
    np.testing.assert_allclose(tiled[0], want_w, rtol=1e-6)


def test_ids_alone_lower_to_a_kernel_that_writes_only_them() -> None:
    _, _, (w, ids) = _gate(20, 16, 2, groups=2, topk_groups=1)
    feed = _feed(20, 16, seed=9)
    prog = ks.lower(ks.create_schedule(ids), target="ascend910b2")
    assert prog.outputs == ("gate_ids",)
    np.testing.assert_array_equal(ks.run_tiled(prog, feed), ks.evaluate(ids, feed))


def test_softmax_gate_is_softmax_then_topk() -> None:
    x = ks.placeholder((64, 8), "float32", name="logits")
    w, ids = ks.moe_gating_topk_softmax(x, 2, renorm=True, name="mix")
    feed = {"logits": np.random.default_rng(1).standard_normal((64, 8)).astype(np.float32)}
    p = np.exp(feed["logits"] - feed["logits"].max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    want_ids = np.argsort(-p, axis=-1, kind="stable")[:, :2]
    want_w = np.take_along_axis(p, want_ids, -1)
    want_w /= want_w.sum(-1, keepdims=True)
    golden = ks.evaluate([w, ids], feed)
    np.testing.assert_array_equal(golden[1], want_ids)
    np.testing.assert_allclose(golden[0], want_w, rtol=1e-5)
    prog = ks.lower(ks.create_schedule([w, ids]), target="ascend910b2")
    tiled = ks.run_tiled(prog, feed)
    np.testing.assert_array_equal(tiled[1], want_ids)
    np.testing.assert_allclose(tiled[0], want_w, rtol=1e-5)


def init_routing(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MoeInitRouting's order as its docs define it: (sorted_row_idx, expanded_row_idx) for ids [T, k], the
    original index of token t's j-th expert being j * T + t, rows sorted by expert (stable)."""
    t, k = ids.shape
    row_idx = (np.arange(k)[None, :] * t + np.arange(t)[:, None]).reshape(-1)  # [T, k] flattened row-major
    order = np.argsort(ids.reshape(-1), kind="stable")
    sorted_row_idx = row_idx[order]
    expanded = np.empty(t * k, np.int32)
    expanded[sorted_row_idx] = np.arange(t * k, dtype=np.int32)
    return sorted_row_idx, expanded


def finalize_case(tokens: int = 24, k: int = 2, hidden: int = 40, experts: int = 8, seed: int = 0,
                  dtype: str = "float32"):
    rng = np.random.default_rng(seed)
    ids = np.stack([rng.permutation(experts)[:k] for _ in range(tokens)]).astype(np.int32)
    sorted_row_idx, expanded = init_routing(ids)
    x = rng.standard_normal((tokens, hidden)).astype(np.float32)
    # expert e scales its token by e + 1: row p holds token sorted_row_idx[p] % T through its expert
    tok = sorted_row_idx % tokens
    exp_of = ids.reshape(-1)[np.argsort(ids.reshape(-1), kind="stable")]
    np_dt = ks.core.dtypes.numpy_dtype(dtype)
    expert_out = (x[tok] * (exp_of[:, None] + 1)).astype(np_dt)
    weights = rng.random((tokens, k)).astype(np.float32)
    shared = rng.standard_normal((tokens, hidden)).astype(np_dt)
    feed = {"expert_out": expert_out, "weights": weights.astype(np_dt), "row_idx": expanded, "shared": shared}
    want = shared.astype(np.float32) + sum(weights.astype(np_dt).astype(np.float32)[:, j:j + 1]
                                           * (x * (ids[:, j:j + 1] + 1)).astype(np_dt).astype(np.float32)
                                           for j in range(k))
    return feed, want


def finalize_graph(tokens: int = 24, k: int = 2, hidden: int = 40, dtype: str = "float32") -> ks.Tensor:
    eo = ks.placeholder((tokens * k, hidden), dtype, name="expert_out")
    w = ks.placeholder((tokens, k), dtype, name="weights")
    idx = ks.placeholder((tokens * k,), "int32", name="row_idx")
    sh = ks.placeholder((tokens, hidden), dtype, name="shared")
    return ks.moe_finalize_routing(eo, w, idx, shared=sh, name="moe_out")


def test_finalize_combines_each_tokens_experts_through_expanded_row_idx() -> None:
    feed, want = finalize_case()
    out = finalize_graph()
    golden = ks.evaluate(out, feed)
    np.testing.assert_allclose(golden, want, rtol=1e-5, atol=1e-5)
    tiled = ks.run_tiled(ks.lower(ks.create_schedule(out), target="ascend910b2"), feed)
    np.testing.assert_allclose(tiled, want, rtol=1e-5, atol=1e-5)
    # the other direction of the mapping (sorted position -> original index) gives another answer
    wrong = dict(feed, row_idx=np.argsort(feed["row_idx"]).astype(np.int32))
    assert not np.allclose(ks.evaluate(out, wrong), want, atol=1e-3)


def test_finalize_without_shared_is_the_weighted_sum_alone() -> None:
    feed, want = finalize_case(tokens=6, k=3, hidden=16, seed=2)
    eo = ks.placeholder((18, 16), "float32", name="expert_out")
    w = ks.placeholder((6, 3), "float32", name="weights")
    idx = ks.placeholder((18,), "int32", name="row_idx")
    out = ks.moe_finalize_routing(eo, w, idx)
    got = ks.evaluate(out, {n: feed[n] for n in ("expert_out", "weights", "row_idx")})
    np.testing.assert_allclose(got, want - feed["shared"], rtol=1e-5, atol=1e-5)


def test_finalize_rejects_positions_outside_the_expanded_rows() -> None:
    feed, _ = finalize_case(tokens=4, k=2, hidden=8)
    feed["row_idx"][3] = 8
    with pytest.raises(ks.InputError, match="out of range"):
        ks.evaluate(finalize_graph(4, 2, 8), feed)


# ---- error paths ---------------------------------------------------------------------------------
def _x(shape=(16, 32), dtype="float32"):
    return ks.placeholder(shape, dtype, name="logits")


def _b(n=32, dtype="float32"):
    return ks.placeholder((n,), dtype, name="bias")


@pytest.mark.parametrize(("kw", "err", "match"), [
    (dict(k=33), ks.ShapeError, r"k=33 must be in 1\.\.32"),
    (dict(k=0), ks.ShapeError, r"k=0 must be in 1\.\.32"),
    (dict(k=2, groups=5), ks.ShapeError, r"groups=5 does not divide the 32 experts"),
    (dict(k=2, groups=4, topk_groups=5), ks.ShapeError, r"topk_groups=5 must be in 1\.\.groups=4"),
    (dict(k=9, groups=4, topk_groups=1), ks.ShapeError, r"k=9 must be in 1\.\.8: the experts of the 1 kept"),
    (dict(k=2, groups=4, group_select="mean"), ks.ShapeError, r"group_select='mean' is not one of"),
    (dict(k=2, score="softmax"), ks.UnsupportedError, r"moe_gating_topk_softmax"),
])
def test_gating_rejects_bad_settings(kw, err, match) -> None:
    with pytest.raises(err, match=match):
        ks.moe_gating_topk(_x(), _b(), **kw)


def test_gating_rejects_bad_inputs() -> None:
    with pytest.raises(ks.DTypeError, match="logits .* must be float16, bfloat16 or float32"):
        ks.moe_gating_topk(_x(dtype="int32"), _b(dtype="int32"), 2)
    with pytest.raises(ks.ShapeError, match=r"must be 2-D \[tokens, experts\]"):
        ks.moe_gating_topk(_x((2, 8, 32)), _b(), 2)
    with pytest.raises(ks.DTypeError, match="must have the logits' dtype float32"):
        ks.moe_gating_topk(_x(), _b(dtype="bfloat16"), 2)
    with pytest.raises(ks.ShapeError, match=r"must be 1-D \(32,\)"):
        ks.moe_gating_topk(_x(), _b(16), 2)
    with pytest.raises(ks.ShapeError, match=r"k=9 must be an int in 1\.\.8"):
        ks.moe_gating_topk_softmax(_x((4, 8)), 9)


def test_finalize_rejects_bad_inputs() -> None:
    eo = ks.placeholder((8, 16), "float32", name="eo")
    w = ks.placeholder((4, 2), "float32", name="w")
    idx = ks.placeholder((8,), "int32", name="idx")
    with pytest.raises(ks.ShapeError, match=r"must be \[tokens \* k, H\] = \[8, H\]"):
        ks.moe_finalize_routing(ks.placeholder((6, 16), "float32", name="eo6"), w, idx)
    with pytest.raises(ks.DTypeError, match="expanded_row_idx .* must be int32"):
        ks.moe_finalize_routing(eo, w, ks.placeholder((8,), "float32", name="fidx"))
    with pytest.raises(ks.ShapeError, match=r"must be 1-D \(8,\)"):
        ks.moe_finalize_routing(eo, w, ks.placeholder((4, 2), "int32", name="idx2"))
    with pytest.raises(ks.ShapeError, match=r"shared .* must be \[4, 16\] float32"):
        ks.moe_finalize_routing(eo, w, idx, shared=ks.placeholder((4, 8), "float32", name="sh"))
    with pytest.raises(ks.ShapeError, match=r"weights .* must be 2-D"):
        ks.moe_finalize_routing(eo, ks.placeholder((8,), "float32", name="w1"), idx)


def test_gate_route_and_finalize_end_to_end_with_moe_init_routing() -> None:
    """Gate, route (ks.moe_init_routing numbers the pairs t * k + j), an expert that scales its rows by a
    per-row factor, finalize with row_order="token_major": out[t] = x[t] * sum_j w[t, j] * (row factor)."""
    tokens, experts, hidden, k = 16, 8, 32, 2
    x = ks.placeholder((tokens, hidden), "float32", name="x")
    logits = ks.placeholder((tokens, experts), "float32", name="logits")
    b = ks.placeholder((experts,), "float32", name="bias")
    w, ids = ks.moe_gating_topk(logits, b, k)
    ex, row_idx, _ = ks.moe_init_routing(x, ids, experts)
    f = ks.placeholder((tokens * k, 1), "float32", name="row_factor")
    out = ks.moe_finalize_routing(ex * f, w, row_idx, row_order="token_major")
    rng = np.random.default_rng(3)
    feed = {"x": rng.standard_normal((tokens, hidden)).astype(np.float32),
            "logits": rng.standard_normal((tokens, experts)).astype(np.float32),
            "bias": np.zeros(experts, np.float32), "row_factor": np.ones((tokens * k, 1), np.float32)}
    want = feed["x"] * ks.evaluate(w, {n: feed[n] for n in ("logits", "bias")}).sum(-1, keepdims=True)
    np.testing.assert_allclose(ks.evaluate(out, feed), want, rtol=1e-5, atol=1e-6)
    tiled = ks.run_tiled(ks.lower(ks.create_schedule(out), target="ascend910b2"), feed)
    np.testing.assert_allclose(tiled, want, rtol=1e-5, atol=1e-6)
    # the k-major reading of the same indices combines other rows
    wrong = ks.moe_finalize_routing(ex * f, w, row_idx)
    feed["row_factor"] = np.arange(1, tokens * k + 1, dtype=np.float32)[:, None]
    assert not np.allclose(ks.evaluate(wrong, feed), ks.evaluate(out, feed), atol=1e-3)


def test_finalize_rejects_an_unknown_row_order() -> None:
    eo = ks.placeholder((8, 16), "float32", name="eo")
    with pytest.raises(ks.UnsupportedError, match="row_order='rows' is not one of k_major, token_major"):
        ks.moe_finalize_routing(eo, ks.placeholder((4, 2), "float32", name="w"),
                                ks.placeholder((8,), "int32", name="idx"), row_order="rows")
