"""The fused attention kernel reads BSND / BSH tensors and GQA's grouped heads in place (fusion/attention.py
`view`, lower/attention.py `attention_views`): one kernel and nothing else, whose Q/K/V loads and output store
address the user's tensors with their own row strides; golden == run_tiled with tails, causal, GQA and the
FlashDecode split; the bytes it moves are the compulsory ones; the unfused plan keeps today's glue kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.fusion.attention import attention_parts
from kernelstudio.tileir.program import Copy, walk

from .attention_cases import attention as _attention
from .attention_cases import bnsd as _bnsd
from .attention_cases import layout_shape as _shape

TARGET = "ascend910b2"


def _nbytes(*ts: ks.Tensor) -> int:
    return sum(math.prod(t.shape) * 2 for t in ts)


# (layout, B, Nq, Nkv, Sq, Skv, D, dtype, causal): S1 and S2 tails, GQA, causal, D = 64 / 128
CASES = (
    ("BNSD", 1, 4, 2, 40, 600, 64, "float16", False),   # GQA in BNSD: the grouping reshapes read through
    ("BSND", 2, 2, 2, 150, 700, 64, "float16", False),  # two S1 blocks (the second short), S2 a block and a tail
    ("BSH", 1, 4, 2, 33, 129, 128, "float16", False),   # BSH with GQA
    ("BSND", 1, 6, 3, 70, 600, 64, "bfloat16", True),   # BSND, GQA and the causal mask
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_one_kernel_reads_the_users_layout_in_place(case):
    layout, b, n, nkv, sq, skv, d, dt, causal = case
    out = _attention(layout, b, n, nkv, sq, skv, d, dt, causal)
    sched = ks.create_schedule([out], fuse=True)
    (fk,) = sched.kernels
    assert fk.family == "attention"
    m = attention_parts(fk.nodes)
    assert (m.q_in.name, m.k_in.name, m.v_in.name, m.o_out.name) == ("query", "key", "value", "attention_out")
    why = {n: r.name for n, r in fk.reasons}
    assert m.glue and {why[n] for n in m.glue} == {"attention_layout"}
    assert {why[n] for n in fk.nodes if n not in m.glue} == {"attention"}
    prog = ks.lower(sched, target=TARGET)
    (kern,) = prog.kernels
    assert kern.does == "flash_attention" and kern.params[:3] == ("query", "key", "value")
    # a Q tile is rows of D contiguous elements, N * D apart in BSND / BSH, D apart in BNSD
    q_load = next(s for s in walk(kern.aic) if isinstance(s, Copy) and s.src.gm and s.src.buf == "query")
    assert q_load.src.stride.value == (d if layout == "BNSD" else n * d)
    store = next(s for s in walk(kern.aiv) if isinstance(s, Copy) and s.dst.gm and s.dst.buf == "attention_out")
    assert store.dst.stride.value == q_load.src.stride.value  # the output in the query's layout
    feeds = ks.ops.flash_attention_inputs(out, seed=sq)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
    assert got.shape == _shape(layout, b, n, sq, d)
    tol = 8e-3 if dt == "float16" else 3e-2
    np.testing.assert_allclose(got, golden, rtol=tol, atol=tol)
    exact = ks.ops.plain_softmax_attention(_bnsd(feeds["query"], layout, n), _bnsd(feeds["key"], layout, nkv),
                                           _bnsd(feeds["value"], layout, nkv), mask=feeds.get("atten_mask"))
    np.testing.assert_allclose(_bnsd(got, layout, n), exact, rtol=tol, atol=tol)


@pytest.mark.parametrize(("layout", "nkv"), [("BSND", 8), ("BSH", 8), ("BNSD", 2)])
def test_bytes_moved_are_the_compulsory_ones(layout, nkv):
    """B = 1, N = 8, S = 1024, D = 128: the layouts and GQA move what BNSD moves, q, k and v read from HBM once
    (the tasks' re-reads of K and V hit L2, the output's writes land in L2), no layout copies."""
    out = _attention(layout, 1, 8, nkv, 1024, 1024, 128)
    prog = ks.lower(ks.create_schedule([out]), target=TARGET)
    assert [k.does for k in prog.kernels] == ["flash_attention"]
    r = ks.simulate(prog)
    q, k, v = (ks.placeholder(_shape(layout, 1, h, 1024, 128), "float16") for h in (8, nkv, nkv))
    assert r.metrics["compulsory_bytes"] == _nbytes(q, k, v, out)
    assert r.metrics["hbm_bytes"] == _nbytes(q, k, v)
    dense = ks.lower(ks.create_schedule([_attention("BNSD", 1, 8, nkv, 1024, 1024, 128)]), target=TARGET)
    assert r.metrics["gm_bytes"] == ks.simulate(dense).metrics["gm_bytes"]


@pytest.mark.parametrize("keep", ["root", "out"])
def test_unfused_attention_keeps_its_layout_kernels(keep):
    out = _attention("BSND", 1, 2, 2, 40, 136, 64)
    sched = ks.create_schedule([out], fuse=True)
    (fk,) = sched.kernels
    # the P V matmul kept out, or the output (the glue is the attention's): no attention kernel, the glue as it was
    sched.keep_out_of_fusion(fk.root if keep == "root" else out)
    fams = [k.family for k in sched.kernels]
    assert "attention" not in fams and fams.count("vector") >= 8  # transposes and reshapes of q, k, v and out
    prog = ks.lower(sched, target=TARGET)
    feeds = ks.ops.flash_attention_inputs(out)
    golden = np.asarray(ks.evaluate([out], feeds, schedule=sched)[0], np.float32)
    np.testing.assert_array_equal(np.asarray(ks.run_tiled(prog, feeds), np.float32), golden)


@pytest.mark.parametrize(("layout", "n", "nkv", "sq", "dense"), [
    ("BSH", 8, 2, 1, True),    # GQA at S_q = 1: each group's 4 query heads one task's rows (D apart in BSH too)
    ("BSND", 4, 2, 4, False),  # 4 query rows per head: the combine stores each output row at its BSND place
])
def test_flash_decode_split_writes_the_users_layout(layout, n, nkv, sq, dense):
    from kernelstudio.lower.attention import attention_views

    out = _attention(layout, 2, n, nkv, sq, 2048, 64)
    sched = ks.create_schedule([out], fuse=True)
    (fk,) = sched.kernels
    assert attention_views(attention_parts(fk.nodes)).dense_out is dense
    prog = ks.lower(sched, target=TARGET)
    (kern,) = prog.kernels
    assert dict(kern.tiling)["kv_splits"] > 1
    feeds = ks.ops.flash_attention_inputs(out, seed=n)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
    np.testing.assert_allclose(got, golden, rtol=8e-3, atol=8e-3)


# (layout, B, Nq, Nkv, Sq, Skv, D, causal) for the twin: S1 and S2 tails, GQA, causal, a FlashDecode split whose
# combine stores BSND rows one by one
TWIN_CASES = (
    ("BSND", 1, 2, 2, 40, 200, 64, True),
    ("BSH", 1, 4, 2, 24, 136, 64, False),
    ("BSND", 1, 4, 2, 4, 1100, 64, False),
)


def test_layouts_three_way_on_the_twin(twin_cache):
    from ..codegen.merge import merge

    progs, inputs, want = [], {}, []
    for i, case in enumerate(TWIN_CASES):
        layout, b, n, nkv, sq, skv, d, causal = case
        out = _attention(layout, b, n, nkv, sq, skv, d, causal=causal)
        prog = ks.lower(ks.create_schedule([out], fuse=True), target=TARGET)
        assert [k.does for k in prog.kernels] == ["flash_attention"]
        feeds = ks.ops.flash_attention_inputs(out, seed=i)
        tiled = np.asarray(ks.run_tiled(prog, feeds), np.float32)
        golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
        np.testing.assert_allclose(tiled, golden, rtol=8e-3, atol=8e-3, err_msg=f"{case} run_tiled")
        progs.append(prog)
        want.append((tiled, golden))
        inputs.update({f"c{i}_{k}": v for k, v in feeds.items()})
    assert dict(progs[2].kernels[0].tiling)["kv_splits"] > 1
    bundle = ks.codegen(merge(progs))
    src = "".join(t for name, t in bundle.files.items() if name.endswith(".cpp"))
    # BSND, 2 heads of 64 (S1 block 48, S2 block 208): Q and K rows 128 apart
    assert "mm1.SetOrgShape(48, 208, 128, 128);" in src
    # BSH, 4 query heads and 2 kv heads of 64: Q rows 256 apart, K and V rows 128; P V rows of 64
    assert "mm1.SetOrgShape(32, 144, 256, 128);" in src and "mm2.SetOrgShape(32, 128, 144, 144, 64);" in src
    got = ks.twin.run(bundle, inputs, cache_dir=twin_cache, by_name=True)
    for i, case in enumerate(TWIN_CASES):
        tiled, golden = want[i]
        twin = np.asarray(got[f"c{i}_attention_out"], np.float32)
        np.testing.assert_allclose(twin, tiled, rtol=2e-3, atol=2e-3, err_msg=f"{case} twin vs run_tiled")
        np.testing.assert_allclose(twin, golden, rtol=8e-3, atol=8e-3, err_msg=f"{case} twin vs golden")


def test_glue_that_is_no_strided_window_stays_a_kernel_of_its_own():
    """A key given as (B, N, D, S) and transposed in the layout composite has D elements S apart, no row of D
    contiguous elements: the attention leaves that transpose out and reads its result; the other inputs in place."""
    from kernelstudio.dsl import ops as O
    from kernelstudio.dsl.build import composite_scope
    from kernelstudio.fusion.attention import ATTENTION_LAYOUT

    q = ks.placeholder((1, 2, 40, 64), "float16", name="query")
    kt = ks.placeholder((1, 2, 64, 136), "float16", name="key_t")
    v = ks.placeholder((1, 2, 136, 64), "float16", name="value")
    with composite_scope(ATTENTION_LAYOUT):
        k = O.transpose(kt, (0, 1, 3, 2))
    out = ks.ops.flash_attention(q, k, v)
    sched = ks.create_schedule([out], fuse=True)
    assert [k.family for k in sched.kernels] == ["vector", "attention"]
    m = attention_parts(sched.kernels[1].nodes)
    assert not m.glue and m.k_in is m.k and m.q_in.name == "query"
    prog = ks.lower(sched, target=TARGET)
    feeds = ks.ops.flash_attention_inputs(out)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
    np.testing.assert_allclose(got, golden, rtol=8e-3, atol=8e-3)
