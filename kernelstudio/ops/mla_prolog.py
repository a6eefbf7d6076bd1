"""DeepSeek's MlaProlog as CANN's aclnnMlaProlog defines it, written with the DSL's ops (the quantized
variants, `quant=`, in mla_quant.py).

    cQ = RmsNorm(x W_DQ)                      (T, Hcq)
    [qC | qR] = cQ W_UQQR, per head            (T, N, D) and (T, N, Dr)
    queryOut = qC W_UK, per head               (T, N, Hckv)
    queryRopeOut = RoPE(qR)                    (T, N, Dr)
    [cKV | kR] = x W_DKVKR                     (T, Hckv) and (T, Dr)
    kvCache[cacheIndex] = RmsNorm(cKV); krCache[cacheIndex] = RoPE(kR), in place

One ropeSin / ropeCos pair (T, Dr) serves q and k, as in CANN: the q side reads it as (T, 1, Dr), broadcast
over the heads. CANN takes weightDq (He, Hcq), weightUqQr (Hcq, N * (D + Dr)) and weightDkvKr (He, Hckv + Dr) in
FRACTAL_NZ: with weight_format="NZ" (the default) those three placeholders are `format="NZ"` (their shapes the
logical matrices; the cube copies their fractals to L1 as they are, with no ND -> NZ conversion), with "ND" they
are row-major. Cache modes: "PA_BSND" caches are (BlockNum, BlockSize, 1, H); "PA_NZ" caches are
(BlockNum, H / 16, BlockSize, 16) for 2-byte dtypes (dsl/cache.py).
"""

from __future__ import annotations

from ..core.dtypes import BLOCK_BYTES, FLOAT_DTYPES, itemsize
from ..core.errors import DTypeError, ShapeError, UnsupportedError
from ..core.formats import check_format, check_nz
from ..dsl import cache as C
from ..dsl import composites as K
from ..dsl import ops as O
from ..dsl.tensor import Tensor
from .mla_quant import check_quant, quantize_cache_rows, quantized_qc_qr

__all__ = ["mla_prolog", "MLA_CACHE_MODES", "MLA_BLOCK_SIZES", "MLA_MAX_HEADS"]

MLA_CACHE_MODES = ("PA_BSND", "PA_NZ")
MLA_BLOCK_SIZES = (16, 128)  # aclnnMlaProlog's BlockSize
MLA_MAX_HEADS = 128  # aclnnMlaProlog's N


def _positive(**dims: object) -> None:
    for k, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ShapeError(f"mla_prolog: {k}={v!r} must be an int >= 1")


def mla_prolog(*, T: int, N: int, He: int = 7168, Hcq: int = 1536, Hckv: int = 512, D: int = 128, Dr: int = 64,
               block_num: int | None = None, block_size: int = 128, cache_mode: str = "PA_BSND",
               dtype: str = "bfloat16", index_dtype: str = "int64", eps_cq: float = 1e-5,
               eps_ckv: float = 1e-5, weight_format: str = "NZ", quant: str | None = None,
               smooth_scales: bool = False) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """MlaProlog for T tokens and N heads: (query, query_rope, kv_cache, kr_cache), CANN's output order (module
    doc). The caches are updated in place (their results are the kv_cache / kr_cache placeholders).

    block_num defaults to the fewest blocks holding T slots. The placeholders carry CANN's names: token_x,
    weight_dq, weight_uq_qr, weight_uk, weight_dkv_kr, rmsnorm_gamma_cq, rmsnorm_gamma_ckv, rope_sin, rope_cos,
    cache_index, kv_cache, kr_cache. weight_format "NZ" (CANN's) or "ND": the storage of weight_dq,
    weight_uq_qr and weight_dkv_kr.

    quant: aclnnMlaProlog's scenarios (ops/mla_quant.py): None; "partial" (int8 weight_uq_qr, row-major, with
    dequant_scale_w_uq_qr (1, N*(D+Dr)) float32; the RmsNorm(cQ) output quantized per token); "partial_kv_cache"
    (that plus int8 kv_cache / kr_cache, written with quant_scale_ckv (1, Hckv) / quant_scale_ckr (1, Dr)).
    smooth_scales=True adds smooth_scales_cq (1, Hcq) (CANN's optional smoothScalesCq) to a quantized graph.
    `ks.ops.mla_prolog_inputs(outs)` fills the scales sensibly."""
    _positive(T=T, N=N, He=He, Hcq=Hcq, Hckv=Hckv, D=D, Dr=Dr)
    if N > MLA_MAX_HEADS:
        raise ShapeError(f"mla_prolog: N={N} heads; aclnnMlaProlog takes 1..{MLA_MAX_HEADS}: split the heads over "
                         "several calls")
    if Dr % 2:
        raise ShapeError(f"mla_prolog: Dr={Dr} must be even (RoPE rotates pairs)")
    if block_size not in MLA_BLOCK_SIZES:
        raise ShapeError(f"mla_prolog: block_size={block_size!r}; aclnnMlaProlog's BlockSize is 16 or 128")
    if cache_mode not in MLA_CACHE_MODES:
        raise UnsupportedError(f"mla_prolog: cache_mode={cache_mode!r} is not one of {', '.join(MLA_CACHE_MODES)}")
    if dtype not in FLOAT_DTYPES:
        raise DTypeError(f"mla_prolog: dtype={dtype!r}; use a float dtype ({', '.join(FLOAT_DTYPES)}; CANN's "
                         "MlaProlog is bfloat16)")
    if index_dtype not in C.INDEX_DTYPES:
        raise DTypeError(f"mla_prolog: index_dtype={index_dtype!r}; cache_index is {' or '.join(C.INDEX_DTYPES)} "
                         "(CANN's is int64)")
    wfmt = check_format("mla_prolog: weight_format", weight_format)
    q_w8, q_cache8 = check_quant(quant)
    if smooth_scales and not q_w8:
        raise UnsupportedError("mla_prolog: smooth_scales=True needs a quantized weight_uq_qr (smoothScalesCq "
                               "scales the dynamic quantization of RmsNorm(cQ)); use quant='partial' or "
                               "'partial_kv_cache', or leave smooth_scales out")
    cache_dtype = "int8" if q_cache8 else dtype
    blocks = -(-T // block_size) if block_num is None else block_num
    _positive(block_num=blocks)
    if blocks * block_size < T:
        raise ShapeError(f"mla_prolog: {blocks} blocks of {block_size} slots hold {blocks * block_size} tokens, "
                         f"fewer than T={T} (each token takes its own slot); use block_num >= "
                         f"{-(-T // block_size)}")
    c0 = BLOCK_BYTES // itemsize(cache_dtype)
    if cache_mode == "PA_NZ" and (Hckv % c0 or Dr % c0):
        raise ShapeError(f"mla_prolog: a PA_NZ cache of {cache_dtype} stores rows in chunks of {c0}; Hckv={Hckv} "
                         f"and Dr={Dr} must be multiples of {c0} (or use cache_mode='PA_BSND')")

    def ph(shape: tuple[int, ...], name: str, dt: str = dtype) -> Tensor:
        return O.placeholder(shape, dt, name=name)

    def cache(row: int, name: str) -> Tensor:
        shape = (blocks, block_size, 1, row) if cache_mode == "PA_BSND" else (blocks, row // c0, block_size, c0)
        return ph(shape, name, cache_dtype)

    def weight(shape: tuple[int, int], name: str) -> Tensor:
        if wfmt == "NZ":
            try:
                check_nz(f"mla_prolog: {name} {list(shape)} {dtype}", shape, dtype)
            except (ShapeError, DTypeError) as e:
                raise type(e)(f"{e}; CANN stores it in FRACTAL_NZ: weight_format='ND' takes it row-major") from None
        return O.placeholder(shape, dtype, name=name, format=wfmt)

    x = ph((T, He), "token_x")
    w_dq = weight((He, Hcq), "weight_dq")
    if q_w8:  # int8, row-major: int8 FRACTAL_NZ (16 x 32 fractals) is not modelled (mla_quant.py)
        w_uqqr = ph((Hcq, N * (D + Dr)), "weight_uq_qr", "int8")
    else:
        w_uqqr = weight((Hcq, N * (D + Dr)), "weight_uq_qr")
    w_uk = ph((N, D, Hckv), "weight_uk")
    w_dkvkr = weight((He, Hckv + Dr), "weight_dkv_kr")
    g_cq, g_ckv = ph((Hcq,), "rmsnorm_gamma_cq"), ph((Hckv,), "rmsnorm_gamma_ckv")
    sin, cos = ph((T, Dr), "rope_sin"), ph((T, Dr), "rope_cos")
    index = ph((T,), "cache_index", index_dtype)
    kv_cache, kr_cache = cache(Hckv, "kv_cache"), cache(Dr, "kr_cache")

    c_q = K.rms_norm(O.matmul(x, w_dq), g_cq, eps=eps_cq)
    if q_w8:
        dq_w = ph((1, N * (D + Dr)), "dequant_scale_w_uq_qr", "float32")
        smooth = ph((1, Hcq), "smooth_scales_cq", "float32") if smooth_scales else None
        qc_qr = quantized_qc_qr(c_q, w_uqqr, dq_w, smooth, dtype)
    else:
        qc_qr = O.matmul(c_q, w_uqqr)
    q_c, q_r = O.split(O.reshape(qc_qr, (T, N, D + Dr)), [D, Dr], axis=-1)
    query = O.matmul(q_c, w_uk, batch_axis=1, name="query")
    query_rope = K.rope(q_r, O.reshape(sin, (T, 1, Dr)), O.reshape(cos, (T, 1, Dr)), name="query_rope")
    c_kv, k_r = O.split(O.matmul(x, w_dkvkr), [Hckv, Dr], axis=-1)
    kv_rows, kr_rows = K.rms_norm(c_kv, g_ckv, eps=eps_ckv), K.rope(k_r, sin, cos)
    if q_cache8:
        kv_rows = quantize_cache_rows(kv_rows, ph((1, Hckv), "quant_scale_ckv", "float32"), "quant_ckv")
        kr_rows = quantize_cache_rows(kr_rows, ph((1, Dr), "quant_scale_ckr", "float32"), "quant_ckr")
    kv = C.scatter(kv_cache, index, kv_rows, layout=cache_mode, name="kv_cache_out")
    kr = C.scatter(kr_cache, index, kr_rows, layout=cache_mode, name="kr_cache_out")
    return query, query_rope, kv, kr
