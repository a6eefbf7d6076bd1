"""DeepSeek's MlaProlog as CANN defines it (aclnnMlaProlog, without quantization and with ND weights), written with
the DSL's ops at small sizes: RmsNorm(x W_DQ), the per-head W_UK matmul, RoPE of the rotary parts, and the KV /
KR cache updates in place; golden == run_tiled == twin, bit for bit in bfloat16."""

from __future__ import annotations

import numpy as np

import kernelstudio as ks

T, HE, HCQ, N, D, DR, HCKV, BLOCKS, BLOCK_SIZE = 8, 256, 128, 2, 32, 16, 64, 4, 16


def mla_prolog(dt: str = "bfloat16") -> list[ks.Tensor]:
    x = ks.placeholder((T, HE), dt, name="token_x")
    w_dq = ks.placeholder((HE, HCQ), dt, name="weight_dq")
    w_uqqr = ks.placeholder((HCQ, N * (D + DR)), dt, name="weight_uq_qr")
    w_uk = ks.placeholder((N, D, HCKV), dt, name="weight_uk")
    w_dkvkr = ks.placeholder((HE, HCKV + DR), dt, name="weight_dkv_kr")
    g_cq = ks.placeholder((HCQ,), dt, name="rmsnorm_gamma_cq")
    g_ckv = ks.placeholder((HCKV,), dt, name="rmsnorm_gamma_ckv")
    sin_q = ks.placeholder((T, 1, DR), dt, name="rope_sin")
    cos_q = ks.placeholder((T, 1, DR), dt, name="rope_cos")
    sin_k = ks.placeholder((T, DR), dt, name="rope_sin_k")
    cos_k = ks.placeholder((T, DR), dt, name="rope_cos_k")
    index = ks.placeholder((T,), "int32", name="cache_index")
    kv_cache = ks.placeholder((BLOCKS, BLOCK_SIZE, 1, HCKV), dt, name="kv_cache")
    kr_cache = ks.placeholder((BLOCKS, BLOCK_SIZE, 1, DR), dt, name="kr_cache")

    c_q = ks.rms_norm(ks.matmul(x, w_dq), g_cq, eps=1e-5)
    q_c, q_r = ks.split(ks.reshape(ks.matmul(c_q, w_uqqr), (T, N, D + DR)), [D, DR], axis=-1)
    query = ks.matmul(q_c, w_uk, batch_axis=1, name="query")
    query_rope = ks.rope(q_r, sin_q, cos_q, name="query_rope")
    c_kv, k_r = ks.split(ks.matmul(x, w_dkvkr), [HCKV, DR], axis=-1)
    kv = ks.scatter(kv_cache, index, ks.rms_norm(c_kv, g_ckv, eps=1e-5), name="kv_cache_out")
    kr = ks.scatter(kr_cache, index, ks.rope(k_r, sin_k, cos_k), name="kr_cache_out")
    return [query, query_rope, kv, kr]


def test_mla_prolog_runs_as_its_golden_model_on_the_interpreter_and_the_twin(twin_cache):
    outs = mla_prolog()
    s = ks.create_schedule(outs)
    prog = ks.lower(s, target="ascend910b2")
    assert prog.outputs[2:] == ("kv_cache", "kr_cache")  # the caches, updated in place
    assert [t.shape for t in (prog.tensor("query"), prog.tensor("query_rope"))] == [(T, N, HCKV), (T, N, DR)]
    feeds = ks.random_inputs(outs, seed=0)
    golden = ks.evaluate(outs, feeds, schedule=s)
    tiled = ks.run_tiled(prog, feeds)
    twin = ks.twin.run(ks.codegen(prog), feeds, cache_dir=twin_cache)
    for name, g, t, w in zip(prog.outputs, golden, tiled, twin, strict=True):
        np.testing.assert_array_equal(np.asarray(t, np.float32), np.asarray(g, np.float32), err_msg=f"{name} tiled")
        np.testing.assert_array_equal(np.asarray(w, np.float32), np.asarray(g, np.float32), err_msg=f"{name} twin")
    assert ks.simulate(prog).time_us > 0
