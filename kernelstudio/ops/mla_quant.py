"""MlaProlog's quantized variants (`ks.ops.mla_prolog(..., quant=...)`), as CANN's aclnnMlaProlog defines them.

Facts from the public operator doc (ops-transformer `attention/mla_prolog/docs/aclnnMlaProlog.md`, the parameter
table and the "supported scenarios" and "dtype and shape per scenario" tables; aclnnMlaPrologV2WeightNz takes
the same optional inputs):

- The optional inputs are dequantScaleXOptional (T, 1), dequantScaleWDqOptional (1, Hcq),
  dequantScaleWUqQrOptional (1, N*(D+Dr)), dequantScaleWDkvKrOptional (1, Hckv+Dr), quantScaleCkvOptional
  (1, Hckv), quantScaleCkrOptional (1, Dr) and smoothScalesCqOptional (1, Hcq), all FLOAT (float32), ND.
- Three scenarios are supported: no quantization; "partial quantization" with the kv cache not quantized
  (weightUqQr INT8 with dequantScaleWUqQr, smoothScalesCq optional; every other input and output bfloat16);
  "partial quantization" with the kv cache quantized (as before, plus kvCacheRef / krCacheRef INT8, updated
  with quantScaleCkv / quantScaleCkr). dequantScaleX, dequantScaleWDq and dequantScaleWDkvKr are left
  unset ("无需赋值") in all three: tokenX, weightDq and weightDkvKr stay bfloat16. The caches are never
  quantized without weightUqQr.
- The doc calls dequantScaleWUqQr the per-channel parameter of the dequantization after the MatmulQcQr
  matmul, and smoothScalesCq the parameter of the dynamic quantization of the RmsNorm(cQ) output.

The computation here (partial quantization):

    cQ = RmsNorm(x W_DQ)                                 (T, Hcq), dtype
    cQs = cQ * smoothScalesCq                            float32 (the multiply only when smooth_scales=True)
    s_t = RowMax(|cQs|) / 127                            (T, 1) float32: per-token dynamic quantization
    cQ8 = rint(cQs / s_t)                                int8 (nearest even, saturating)
    [qC | qR] = (cQ8 W_UQQR8) * dequantScaleWUqQr * s_t  int32 accumulation, dequantized in float32, to dtype

and the kv cache quantization: kvCache[i] = rint(RmsNorm(cKV) * quantScaleCkv), krCache[i] =
rint(RoPE(kR) * quantScaleCkr), int8 (assumed: the quant scale multiplies, as AscendQuant's y = round(x *
scale) does; the MlaProlog doc gives the shapes, not the formula).

Limits: the int8 weight_uq_qr is row-major (ND) here, where CANN stores it in FRACTAL_NZ (int8 NZ fractals
are 16 x 32, not modelled); weight_dq and weight_dkv_kr keep weight_format. A PA_NZ int8 cache stores rows in
chunks of 32 (32 bytes), so Hckv and Dr must be multiples of 32 there.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import UnsupportedError
from ..dsl import ops as O
from ..dsl.tensor import Tensor
from ..ir.golden import random_inputs

__all__ = ["MLA_QUANT_MODES", "check_quant", "quantized_qc_qr", "quantize_cache_rows", "mla_prolog_inputs"]

# aclnnMlaProlog's scenarios: None (非量化), "partial" (部分量化, kv_cache 非量化), "partial_kv_cache" (部分量化,
# kv_cache 量化)
MLA_QUANT_MODES = (None, "partial", "partial_kv_cache")
_HINTS = {"weight_uq_qr": "partial", "kv_cache": "partial_kv_cache", "both": "partial_kv_cache",
          "full": "partial_kv_cache"}


def check_quant(quant: object) -> tuple[bool, bool]:
    """(weight_uq_qr int8, caches int8) for a quant mode, or an error naming CANN's supported scenarios."""
    if quant in MLA_QUANT_MODES:
        return quant is not None, quant == "partial_kv_cache"
    modes = ", ".join(repr(m) for m in MLA_QUANT_MODES)
    hint = _HINTS.get(quant) if isinstance(quant, str) else None
    why = ""
    if quant == "kv_cache":
        why = ("aclnnMlaProlog quantizes kvCache / krCache only together with weightUqQr (partial quantization "
               "with the kv cache quantized); ")
    elif quant in ("full", "both"):
        why = ("aclnnMlaProlog's quantized scenarios keep tokenX, weightDq and weightDkvKr in bfloat16 "
               "(dequantScaleX / WDq / WDkvKr stay unset); ")
    way = f"use quant={hint!r}, or one of {modes}" if hint else f"use one of {modes}"
    raise UnsupportedError(f"mla_prolog: quant={quant!r} is not one of aclnnMlaProlog's scenarios: {why}{way} "
                           "(None: no quantization; 'partial': int8 weight_uq_qr with dequant_scale_w_uq_qr; "
                           "'partial_kv_cache': that plus int8 kv_cache / kr_cache with quant_scale_ckv / "
                           "quant_scale_ckr)")


def quantized_qc_qr(c_q: Tensor, w_uqqr: Tensor, dequant_w: Tensor, smooth: Tensor | None, dtype: str) -> Tensor:
    """[qC | qR] of the partial quantization (module doc): c_q quantized per token, an int8 x int8 matmul,
    dequantized by dequant_scale_w_uq_qr (per channel) times the token's scale."""
    cqs = O.cast(c_q, "float32") if smooth is None else O.mul(c_q, smooth)  # float32 from here
    s_tok = O.div(O.reduce_max(O.abs(cqs), axis=-1, keepdims=True), 127.0)  # (T, 1)
    c_q8 = O.cast(O.div(cqs, s_tok), "int8", rounding="rint", name="dynamic_quant_cq")
    acc = O.matmul(c_q8, w_uqqr)  # int32, exact
    per_channel = O.cast(acc, "float32", scale=dequant_w)
    return O.cast(O.mul(per_channel, s_tok), dtype, name="dequant_qc_qr")


def quantize_cache_rows(rows: Tensor, quant_scale: Tensor, name: str) -> Tensor:
    """A cache row quantized to int8 with its per-channel quant scale: rint(rows * quant_scale), saturating."""
    return O.cast(O.mul(rows, quant_scale), "int8", rounding="rint", name=name)


def mla_prolog_inputs(outs: object, *, seed: int = 0) -> dict[str, np.ndarray]:
    """`ks.random_inputs` for an mla_prolog graph, with its quantization inputs filled sensibly: weight_uq_qr
    an int8 per-channel quantization of a random weight (N(0, 1) / sqrt(Hcq)) and dequant_scale_w_uq_qr its
    scales (column absmax / 127); smooth_scales_cq in [0.5, 1.5]; quant_scale_ckv 127 / (4 |gamma_ckv|) (a
    RmsNorm row is gamma times a unit-scale value) and quant_scale_ckr 127 / 4. Unquantized graphs get
    random_inputs as they are."""
    feeds = random_inputs(outs, seed=seed)
    rng = np.random.default_rng([int(seed), 0x5CA1E])
    if "dequant_scale_w_uq_qr" in feeds:
        k, n = feeds["weight_uq_qr"].shape
        w = rng.standard_normal((k, n)).astype(np.float32) / np.float32(np.sqrt(k))
        scale = np.maximum(np.abs(w).max(axis=0, keepdims=True), np.float32(1e-6)) / np.float32(127)
        feeds["weight_uq_qr"] = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        feeds["dequant_scale_w_uq_qr"] = scale.astype(np.float32)
    if "smooth_scales_cq" in feeds:
        feeds["smooth_scales_cq"] = rng.uniform(0.5, 1.5, feeds["smooth_scales_cq"].shape).astype(np.float32)
    if "quant_scale_ckv" in feeds:
        gamma = np.abs(np.asarray(feeds["rmsnorm_gamma_ckv"], np.float32)).reshape(1, -1)
        feeds["quant_scale_ckv"] = (np.float32(127) / (4 * np.maximum(gamma, np.float32(1e-3)))).astype(np.float32)
        feeds["quant_scale_ckr"] = np.full(feeds["quant_scale_ckr"].shape, 127 / 4, np.float32)
    return feeds
