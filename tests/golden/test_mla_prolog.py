"""ks.ops.mla_prolog at reduced sizes, golden == run_tiled == twin bit for bit in bfloat16, both cache modes, an
int64 cache_index whose slots share blocks and hit the last slot of a block; the caches are checked element by
element against rows placed by hand (every slot not indexed keeps its old value)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.tileir.program import Copy, walk

from ..codegen.merge import merge

SMALL = dict(T=8, N=2, He=256, Hcq=128, Hckv=64, D=32, Dr=16, block_size=16, block_num=4)
# slots of the 8 tokens: 15, 31, 47 and 63 are the last slots of blocks 0..3; 3 and 0 share block 0 with 15
SLOTS = np.array([15, 3, 31, 17, 63, 48, 0, 47], dtype=np.int64)
NZ_WEIGHTS = ("weight_dq", "weight_uq_qr", "weight_dkv_kr")  # FRACTAL_NZ in aclnnMlaProlog's doc
NAMES = ("token_x", "weight_dq", "weight_uq_qr", "weight_uk", "weight_dkv_kr", "rmsnorm_gamma_cq",
         "rmsnorm_gamma_ckv", "rope_sin", "rope_cos", "cache_index", "kv_cache", "kr_cache")


def _placed(old: np.ndarray, rows: np.ndarray, mode: str) -> np.ndarray:
    """The cache with row t written at SLOTS[t], placed by hand from the layout's definition."""
    out = np.array(old, copy=True)
    bs = SMALL["block_size"]
    for t, s in enumerate(SLOTS):
        if mode == "PA_BSND":  # (blocks, block_size, 1, row)
            out[s // bs, s % bs, 0, :] = rows[t]
        else:  # (blocks, row / 16, block_size, 16)
            out[s // bs, :, s % bs, :] = rows[t].reshape(-1, 16)
    return out


def test_mla_prolog_three_way_in_both_cache_modes_with_an_int64_index(twin_cache):
    progs, inputs, want = [], {}, []
    for i, mode in enumerate(("PA_BSND", "PA_NZ")):
        outs = ks.ops.mla_prolog(**SMALL, cache_mode=mode)
        feeds = ks.random_inputs(outs, seed=i)
        assert feeds["cache_index"].dtype == np.int64
        feeds["cache_index"] = SLOTS
        sched = ks.create_schedule(list(outs))
        prog = ks.lower(sched, target="ascend910b2")
        golden = ks.evaluate(list(outs), feeds, schedule=sched)  # the rounding points of the fused plan
        tiled = ks.run_tiled(prog, feeds)
        # the rows the scatters write, from the golden model of their inputs (unfused rounding: one bfloat16
        # step apart from the fused plan's), placed by hand: untouched slots keep their bits, written ones hold
        # their token's row
        parts = [ks.Tensor(o.node.inputs[2]) for o in outs[2:]]
        rows = ks.evaluate(parts, {k: feeds[k] for k in ks.random_inputs(parts)})
        for j, (cache, r) in enumerate(zip(("kv_cache", "kr_cache"), rows, strict=True)):
            placed = np.asarray(_placed(feeds[cache], np.asarray(r), mode), np.float32)
            g = np.asarray(golden[2 + j], np.float32)
            written = _placed(np.zeros(g.shape, bool), np.ones(np.asarray(r).shape, bool), mode)
            assert written.sum() == SMALL["T"] * np.asarray(r)[0].size
            np.testing.assert_array_equal(g[~written], np.asarray(feeds[cache], np.float32)[~written],
                                          err_msg=f"{mode} {cache}: a slot not indexed changed")
            np.testing.assert_allclose(g[written], placed[written], rtol=2e-2, atol=2e-2,
                                       err_msg=f"{mode} {cache}: a written row")
            assert not np.array_equal(g[written], np.asarray(feeds[cache], np.float32)[written])
        for name, g, t in zip(prog.outputs, golden, tiled, strict=True):
            np.testing.assert_array_equal(np.asarray(t, np.float32), np.asarray(g, np.float32),
                                          err_msg=f"{mode} {name} run_tiled")
        progs.append(prog)
        want.append(dict(zip(prog.outputs, golden, strict=True)))
        inputs.update({f"c{i}_{n}": v for n, v in feeds.items()})
    code = ks.codegen(merge(progs))
    nz = {f"c{i}_{w}" for i in range(2) for w in NZ_WEIGHTS}
    assert {t.name for t in code.inputs if t.format == "NZ"} == nz  # the run packs them with ks.to_nz
    got = ks.twin.run(code, inputs, cache_dir=twin_cache, by_name=True)
    for i, mode in enumerate(("PA_BSND", "PA_NZ")):
        for name, g in want[i].items():
            np.testing.assert_array_equal(np.asarray(got[f"c{i}_{name}"], np.float32), np.asarray(g, np.float32),
                                          err_msg=f"{mode} {name} twin")


def test_mla_prolog_names_shapes_and_output_order_are_canns():
    q, qr, kv, kr = ks.ops.mla_prolog(T=3, N=4, block_size=16, block_num=2, cache_mode="PA_NZ")
    prog = ks.lower(ks.create_schedule([q, qr, kv, kr]), target="ascend910b2")
    assert prog.outputs == ("query", "query_rope", "kv_cache", "kr_cache")
    assert (q.shape, qr.shape) == ((3, 4, 512), (3, 4, 64))
    assert (kv.shape, kr.shape) == ((2, 32, 16, 16), (2, 4, 16, 16))  # (BlockNum, H / 16, BlockSize, 16)
    feeds = ks.random_inputs([q, qr, kv, kr])
    assert sorted(feeds) == sorted(NAMES)
    shapes = {n: feeds[n].shape for n in NAMES}
    assert shapes["token_x"] == (3, 7168) and shapes["weight_uq_qr"] == (1536, 4 * 192)
    assert shapes["weight_uk"] == (4, 128, 512) and shapes["weight_dkv_kr"] == (7168, 576)
    assert shapes["rope_sin"] == shapes["rope_cos"] == (3, 64)  # one pair for q and k
    bsnd = ks.ops.mla_prolog(T=200, N=1, block_size=128)
    assert (bsnd[2].shape, bsnd[3].shape) == ((2, 128, 1, 512), (2, 128, 1, 64))  # two blocks hold 200 tokens


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    (dict(N=129), ks.ShapeError, "N=129"),
    (dict(N=0), ks.ShapeError, "N=0"),
    (dict(block_size=32), ks.ShapeError, "block_size=32"),
    (dict(T=300, block_num=2), ks.ShapeError, "hold 32 tokens, fewer than T=300.*block_num >= 19"),
    (dict(cache_mode="ND"), ks.UnsupportedError, "'ND'"),
    (dict(index_dtype="float32"), ks.DTypeError, "index_dtype='float32'"),
    (dict(dtype="int32"), ks.DTypeError, "dtype='int32'"),
    (dict(Dr=15), ks.ShapeError, "Dr=15"),
    (dict(Hckv=40, cache_mode="PA_NZ"), ks.ShapeError, "Hckv=40"),
    (dict(Hcq=100), ks.ShapeError, r"weight_dq \[7168, 100\].*multiples of 16.*weight_format='ND'"),
    (dict(dtype="float32"), ks.DTypeError, r"weight_dq .* float32.*weight_format='ND'"),
    (dict(weight_format="ZN"), ks.ShapeError, "weight_format: format 'ZN'"),
])
def test_mla_prolog_refuses_bad_sizes_naming_the_numbers(kwargs, error, words):
    args = {"T": 4, "N": 2, "block_size": 16} | kwargs
    with pytest.raises(error, match=words):
        ks.ops.mla_prolog(**args)


def test_int64_feeds_only_a_scatter_index():
    i = ks.placeholder((4,), "int64", name="i")
    with pytest.raises(ks.DTypeError, match="int64"):
        ks.add(i, 1)
    with pytest.raises(ks.DTypeError, match="int64"):
        ks.cast(i, "int32")


def test_compare_plans_reports_both_plans_and_why_ops_share_a_kernel():
    outs = ks.ops.mla_prolog(**SMALL)
    rep = ks.compare_plans(outs, name="mla_prolog")
    fused = ks.lower(ks.create_schedule(list(outs)), target="ascend910b2")
    unfused = ks.lower(ks.create_schedule(list(outs), fuse=False), target="ascend910b2")
    assert (rep.fused.kernels, rep.unfused.kernels) == (len(fused.kernels), len(unfused.kernels))
    assert rep.fused.kernels < rep.unfused.kernels
    assert rep.fused.time_us == pytest.approx(ks.simulate(fused).time_us)
    assert rep.unfused.hbm_bytes == ks.simulate(unfused).metrics["hbm_bytes"]
    epilogue = next(k for k in rep.shared if k.family == "cube_vector")
    assert ("rms_norm_reduce_mean", "cube_epilogue") in epilogue.ops
    text = str(rep)
    assert "cube_epilogue" in text and text.splitlines()[0] == "mla_prolog on ascend910b2"


def test_weights_are_nz_as_canns_doc_and_the_nz_copies_skip_the_conversion():
    """weight_dq, weight_uq_qr and weight_dkv_kr are FRACTAL_NZ by default (weight_uk stays ND): each reaches L1
    as a block copy; weight_format="ND" gives the row-major graph with the same golden values."""
    outs = ks.ops.mla_prolog(**SMALL)
    prog = ks.lower(ks.create_schedule(list(outs)), target="ascend910b2")
    assert {t.name for t in prog.tensors if t.format == "NZ"} == set(NZ_WEIGHTS)
    copies = [c for k in prog.kernels for c in walk(k.aic) if isinstance(c, Copy) and c.src.gm and not c.dst.gm]
    assert {c.src.buf for c in copies if not c.nd2nz} == set(NZ_WEIGHTS)
    assert all(c.nd2nz for c in copies if c.src.buf not in NZ_WEIGHTS)  # token_x, c_q, weight_uk convert
    nd = ks.ops.mla_prolog(**SMALL, weight_format="ND")
    assert all(ks.Tensor(n).format == "ND" for n in ks.ir.Graph([o.node for o in nd]).placeholders)
    feeds = ks.random_inputs(list(outs), seed=5)
    for a, b in zip(ks.evaluate(list(outs), feeds), ks.evaluate(list(nd), feeds), strict=True):
        np.testing.assert_array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32))
