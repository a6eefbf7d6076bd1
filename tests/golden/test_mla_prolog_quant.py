"""ks.ops.mla_prolog(quant=...): aclnnMlaProlog's partial quantization (int8 weight_uq_qr, per-token dynamic
quantization of RmsNorm(cQ)) and its kv cache quantization (int8 caches) at reduced sizes: golden == run_tiled
== twin bit for bit, against a NumPy reference of the quantized math, CANN's names / shapes / dtypes, the
quantization error against the bfloat16 operator, and the refused combinations."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks

from ..codegen.merge import merge

SMALL = dict(T=8, N=2, He=256, Hcq=128, Hckv=64, D=32, Dr=16, block_size=16, block_num=4)
SLOTS = np.array([15, 3, 31, 17, 63, 48, 0, 47], dtype=np.int64)  # shared blocks, last slots of blocks
CASES = (("partial", False), ("partial_kv_cache", True))  # (quant, smooth_scales)


def _f(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64)


def _rms(v: np.ndarray, g: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    return v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + eps) * g


def _rope(v: np.ndarray, sin: np.ndarray, cos: np.ndarray) -> np.ndarray:
    h = v.shape[-1] // 2
    return v * cos + np.concatenate([-v[..., h:], v[..., :h]], axis=-1) * sin


def _reference(f: dict, quant: str, smooth: bool) -> dict[str, np.ndarray]:
    """The quantized MlaProlog in NumPy (float64, no intermediate rounding): ops/mla_quant.py's formulas."""
    T, N, D, Dr, Hckv = (SMALL[k] for k in ("T", "N", "D", "Dr", "Hckv"))
    x = _f(f["token_x"])
    cq = _rms(x @ _f(f["weight_dq"]), _f(f["rmsnorm_gamma_cq"]))
    cqs = cq * _f(f["smooth_scales_cq"]) if smooth else cq
    s = np.abs(cqs).max(axis=-1, keepdims=True) / 127
    cq8 = np.clip(np.rint(cqs / s), -128, 127)
    qcqr = (cq8 @ _f(f["weight_uq_qr"])) * _f(f["dequant_scale_w_uq_qr"]) * s
    qc, qr = np.split(qcqr.reshape(T, N, D + Dr), [D], axis=-1)
    sin, cos = _f(f["rope_sin"]), _f(f["rope_cos"])
    out = {"query": np.einsum("tnd,ndh->tnh", qc, _f(f["weight_uk"])),
           "query_rope": _rope(qr, sin[:, None], cos[:, None])}
    ckv, kr = np.split(x @ _f(f["weight_dkv_kr"]), [Hckv], axis=-1)
    kv, kr = _rms(ckv, _f(f["rmsnorm_gamma_ckv"])), _rope(kr, sin, cos)
    if quant == "partial_kv_cache":
        kv = np.clip(np.rint(kv * _f(f["quant_scale_ckv"])), -128, 127)
        kr = np.clip(np.rint(kr * _f(f["quant_scale_ckr"])), -128, 127)
    out["kv_rows"], out["kr_rows"] = kv, kr
    return out


def _rows_at_slots(cache: np.ndarray) -> np.ndarray:
    bs = SMALL["block_size"]
    return np.stack([cache[s // bs, s % bs, 0, :] for s in SLOTS])  # PA_BSND (blocks, block_size, 1, row)


def test_quantized_mla_prolog_three_way_and_against_numpy(twin_cache):
    progs, inputs, want = [], {}, []
    for i, (quant, smooth) in enumerate(CASES):
        outs = ks.ops.mla_prolog(**SMALL, quant=quant, smooth_scales=smooth)
        feeds = ks.ops.mla_prolog_inputs(outs, seed=i)
        feeds["cache_index"] = SLOTS
        sched = ks.create_schedule(list(outs))
        prog = ks.lower(sched, target="ascend910b2")
        golden = dict(zip(prog.outputs, ks.evaluate(list(outs), feeds, schedule=sched), strict=True))
        tiled = ks.run_tiled(prog, feeds)
        for (name, g), t in zip(golden.items(), tiled, strict=True):
            np.testing.assert_array_equal(np.asarray(t, np.float32), np.asarray(g, np.float32),
                                          err_msg=f"{quant} {name} run_tiled")
        ref = _reference(feeds, quant, smooth)
        for name in ("query", "query_rope"):  # bfloat16 outputs: one rounding step plus a flipped int8 code
            g = _f(golden[name])
            scale = np.abs(ref[name]).max()
            np.testing.assert_allclose(g, ref[name], rtol=2e-2, atol=2e-2 * scale, err_msg=f"{quant} {name}")
        for cache, rows in (("kv_cache", "kv_rows"), ("kr_cache", "kr_rows")):
            got = _rows_at_slots(_f(golden[cache]))
            if quant == "partial_kv_cache":
                assert golden[cache].dtype == np.int8
                diff = np.abs(got - ref[rows])
                assert diff.max() <= 1, f"{cache}: an int8 code off by {diff.max()}"
                assert (diff == 0).mean() > 0.9  # off by one only where bfloat16 rounding tips a half
                assert np.abs(got).max() > 40  # the quant scales use the int8 range, not a corner of it
            else:
                np.testing.assert_allclose(got, ref[rows], rtol=2e-2, atol=2e-2 * np.abs(ref[rows]).max())
        progs.append(prog)
        want.append(golden)
        inputs.update({f"c{i}_{n}": v for n, v in feeds.items()})
    got = ks.twin.run(ks.codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, (quant, _) in enumerate(CASES):
        for name, g in want[i].items():
            np.testing.assert_array_equal(np.asarray(got[f"c{i}_{name}"], np.float32), np.asarray(g, np.float32),
                                          err_msg=f"{quant} {name} twin")


def test_quantized_inputs_carry_canns_names_shapes_and_dtypes():
    T, N, Hcq, Hckv, D, Dr = 3, 4, 1536, 512, 128, 64
    for quant, smooth in (*CASES, ("partial", True)):
        outs = ks.ops.mla_prolog(T=T, N=N, block_size=16, quant=quant, smooth_scales=smooth)
        feeds = ks.ops.mla_prolog_inputs(outs)
        spec = {n: (v.shape, v.dtype) for n, v in feeds.items()}
        assert spec["weight_uq_qr"] == ((Hcq, N * (D + Dr)), np.int8)
        assert spec["dequant_scale_w_uq_qr"] == ((1, N * (D + Dr)), np.float32)
        assert ("smooth_scales_cq" in spec) == smooth
        if smooth:
            assert spec["smooth_scales_cq"] == ((1, Hcq), np.float32)
        kv8 = quant == "partial_kv_cache"
        assert ("quant_scale_ckv" in spec, "quant_scale_ckr" in spec) == (kv8, kv8)
        if kv8:
            assert spec["quant_scale_ckv"] == ((1, Hckv), np.float32)
            assert spec["quant_scale_ckr"] == ((1, Dr), np.float32)
        assert (outs[2].dtype, outs[3].dtype) == (("int8",) * 2 if kv8 else ("bfloat16",) * 2)
        assert (outs[0].dtype, outs[1].dtype) == ("bfloat16", "bfloat16")  # queryOut / queryRopeOut stay bf16
        placeholders = {ks.Tensor(n).name: ks.Tensor(n) for n in ks.ir.Graph([o.node for o in outs]).placeholders}
        assert placeholders["weight_uq_qr"].format == "ND"  # int8 NZ is not modelled
        assert placeholders["weight_dq"].format == placeholders["weight_dkv_kr"].format == "NZ"
        assert not {"dequant_scale_x", "dequant_scale_w_dq", "dequant_scale_w_dkv_kr"} & set(spec)


def test_mla_prolog_inputs_quantize_a_weight_per_channel():
    outs = ks.ops.mla_prolog(**SMALL, quant="partial")
    f = ks.ops.mla_prolog_inputs(outs, seed=4)
    w8, s = f["weight_uq_qr"], f["dequant_scale_w_uq_qr"]
    assert (np.abs(w8.astype(np.int32)).max(axis=0) == 127).all()  # each channel uses its whole range
    assert (s > 0).all() and s.std() > 0  # per channel, not one number
    np.testing.assert_allclose(np.abs(w8 * s).max(axis=0), 127 * s[0], rtol=1e-6)
    assert ks.ops.mla_prolog_inputs(ks.ops.mla_prolog(**SMALL), seed=2).keys() == ks.random_inputs(
        ks.ops.mla_prolog(**SMALL), seed=2).keys()


def test_partial_quantization_stays_near_the_bfloat16_operator():
    """The same weight as int8 codes x per-channel scales, in bfloat16 without quant: the query outputs differ
    by the quantization error (a few percent of their range), not more."""
    q = ks.ops.mla_prolog(**SMALL, quant="partial")
    fq = ks.ops.mla_prolog_inputs(q, seed=7)
    fq["cache_index"] = SLOTS
    plain = ks.ops.mla_prolog(**SMALL)
    fp = {k: v for k, v in fq.items() if k in ks.random_inputs(plain)}
    fp["weight_uq_qr"] = fq["weight_uq_qr"].astype(np.float32) * fq["dequant_scale_w_uq_qr"]
    for name, a, b in zip(("query", "query_rope"), ks.evaluate(list(q), fq)[:2], ks.evaluate(list(plain), fp)[:2],
                          strict=True):
        a, b = _f(a), _f(b)
        err = np.abs(a - b).max() / np.abs(b).max()
        assert 0 < err < 0.05, f"{name}: relative error {err:.4f}"


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    (dict(quant="kv_cache"), ks.UnsupportedError, "only together with weightUqQr.*quant='partial_kv_cache'"),
    (dict(quant="both"), ks.UnsupportedError, "tokenX, weightDq and weightDkvKr in bfloat16.*'partial_kv_cache'"),
    (dict(quant="weight_uq_qr"), ks.UnsupportedError, "use quant='partial'"),
    (dict(quant="int4"), ks.UnsupportedError, "quant='int4'.*None, 'partial', 'partial_kv_cache'"),
    (dict(smooth_scales=True), ks.UnsupportedError, "smooth_scales=True needs a quantized weight_uq_qr"),
    (dict(quant="partial_kv_cache", cache_mode="PA_NZ", Dr=16, Hckv=64), ks.ShapeError,
     "PA_NZ cache of int8 stores rows in chunks of 32.*Dr=16"),
])
def test_quant_refuses_what_cann_does_not_support(kwargs, error, words):
    with pytest.raises(error, match=words):
        ks.ops.mla_prolog(**({"T": 4, "N": 2, "block_size": 16} | kwargs))


def test_int8_pa_nz_caches_hold_the_pa_bsnd_rows_in_chunks_of_32():
    """PA_NZ int8 caches are (BlockNum, H / 32, BlockSize, 32) (32 bytes a chunk); golden == run_tiled, and each
    written slot holds the row the PA_BSND graph writes (not run on the twin: its compile costs minutes)."""
    dims = SMALL | {"Dr": 32}
    nz = ks.ops.mla_prolog(**dims, quant="partial_kv_cache", cache_mode="PA_NZ")
    assert (nz[2].shape, nz[3].shape) == ((4, 2, 16, 32), (4, 1, 16, 32))
    bsnd = ks.ops.mla_prolog(**dims, quant="partial_kv_cache")
    feeds = ks.ops.mla_prolog_inputs(nz, seed=2)
    feeds["cache_index"] = SLOTS
    sched = ks.create_schedule(list(nz))
    golden = ks.evaluate(list(nz), feeds, schedule=sched)
    tiled = ks.run_tiled(ks.lower(sched, target="ascend910b2"), feeds)
    for g, t in zip(golden, tiled, strict=True):
        np.testing.assert_array_equal(np.asarray(t, np.float32), np.asarray(g, np.float32))
    fb = ks.ops.mla_prolog_inputs(bsnd, seed=2) | {k: v for k, v in feeds.items() if k not in ("kv_cache", "kr_cache")}
    ref = ks.evaluate(list(bsnd), fb, schedule=ks.create_schedule(list(bsnd)))
    bs = SMALL["block_size"]
    for j in (2, 3):
        got = np.stack([golden[j][s // bs, :, s % bs, :].reshape(-1) for s in SLOTS])
        np.testing.assert_array_equal(got, _rows_at_slots(ref[j]))
        assert got.dtype == np.int8 and np.abs(got.astype(np.int32)).max() > 40
