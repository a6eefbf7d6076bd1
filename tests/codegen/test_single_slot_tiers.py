"""double_buffer keeps the auto tiles; where they do not fit a tier twice, that tier keeps one slot
(L0A/L0B of a matmul, or a mixed kernel's epilogue queues in UB). The generated code with mixed slot
counts runs on the twin and matches the golden model, tails included."""

from __future__ import annotations

import kernelstudio as ks

from .reference import three_way


def _mm_layer_norm(m: int, n: int, k: int):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    return ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)


def _depths(prog) -> dict[str, int]:
    return {b.name: b.depth for b in prog.kernels[0].buffers}


def test_epilogue_ub_single_slot_three_way(twin_cache):
    out = _mm_layer_norm(48, 5000, 40)  # 5000-wide rows do not fit UB twice; 48 x 5000 x 40 has tails
    s = ks.create_schedule(out, fuse=True)
    prog = ks.lower(s, "ascend910b2")
    k = prog.kernels[0]
    assert any("the epilogue's UB queues keep one slot each" in n for n in k.notes)
    d = _depths(prog)
    assert d["a1"] == d["b1"] == d["a2"] == d["b2"] == 2
    assert {b.depth for b in k.buffers if b.tier.value == "UB" and b.queue is not None} == {1}
    assert dict(k.tiling)["vec_cols"] == 5000  # whole rows, as single-buffered
    three_way(out, prog, twin_cache)


def test_l0_single_slot_three_way(twin_cache):
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="b")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5) + b)
    prog = ks.lower(ks.create_schedule(out, fuse=True), "ascend910b2")
    d = _depths(prog)
    assert d["a2"] == d["b2"] == 1 and d["a1"] == d["b1"] == 2
    three_way(out, prog, twin_cache)
