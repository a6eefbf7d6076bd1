"""Every dtype through the three back ends: golden == run_tiled == twin."""

from __future__ import annotations

import pytest

import kernelstudio as ks

from . import reference


def _cases():
    a = ks.placeholder((40, 48), "bfloat16", name="a")
    w = ks.placeholder((48, 24), "bfloat16", name="w")
    x = ks.placeholder((30, 50), "bfloat16", name="x")
    i = ks.placeholder((30, 50), "int32", name="i")
    j = ks.placeholder((50,), "int32", name="j")
    f = ks.placeholder((30, 50), "float32", name="f")
    i8 = ks.placeholder((30, 64), "int8", name="i8")
    h = ks.placeholder((40, 48), "float16", name="h")
    hw = ks.placeholder((48, 24), "float16", name="hw")
    q = ks.placeholder((48, 24), "int8", name="q")
    p8 = ks.placeholder((40, 48), "int8", name="p8")
    return {
        "bf16_matmul_silu": ks.silu(ks.matmul(a, w)),
        "bf16_softmax": ks.softmax(x),
        "int32_chain": ks.maximum(i * 3 + j, 0),
        "fp32_layer_norm": ks.layer_norm(f),
        "int8_cast": ks.cast(i8, "float16") * 0.5,
        "fp16_matmul_out_fp32": ks.relu(ks.matmul(h, hw, out_dtype="float32")),
        "bf16_matmul_out_fp16": ks.matmul(a, w, out_dtype="float16"),
        "int8_matmul_int32": ks.matmul(p8, q),
        "int8_matmul_dequant": ks.cast(ks.matmul(p8, q), "float16", scale=0.05),
    }


@pytest.mark.parametrize("name", sorted(_cases()))
def test_dtypes_three_way(name: str, twin_cache) -> None:
    out = _cases()[name]
    reference.three_way(out, reference.lower(out), twin_cache)
