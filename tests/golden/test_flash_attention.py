"""ks.ops.flash_attention's unfused baseline plan (Q K^T with the softmax, then P V; the P V matmul kept out of the
fused attention kernel where one forms): golden == run_tiled == twin bit for bit at small sizes with
tails (S not a multiple of the 128 block), D = 64 and 128, causal and not, GQA, the three layouts; checked against
the float64 attention; the errors it raises."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks

from ..codegen.merge import merge
from .attention_cases import attention
from .attention_cases import bnsd as _bnsd

# (layout, dtype, B, Nq, Nkv, Sq, Skv, D, causal)
CASES = (
    ("BNSD", "float16", 1, 4, 2, 40, 40, 64, True),    # GQA, causal, S a tail of one block
    ("BSND", "bfloat16", 1, 2, 2, 24, 136, 128, False),  # S_kv one block and a tail
    ("BSH", "float16", 2, 2, 1, 33, 33, 64, True),     # BSH, GQA to one kv head, causal
)


def _build(case: tuple) -> ks.Tensor:
    layout, dt, b, n, nkv, sq, skv, d, causal = case
    return attention(layout, b, n, nkv, sq, skv, d, dt, causal=causal)


def test_flash_attention_three_way_with_tails_gqa_causal_and_layouts(twin_cache):
    progs, inputs, want = [], {}, []
    for i, case in enumerate(CASES):
        layout, dt, b, n, nkv, sq, skv, d, causal = case
        out = _build(case)
        feeds = ks.ops.flash_attention_inputs(out, seed=i)
        assert ("atten_mask" in feeds) == causal
        sched = ks.create_schedule([out])
        for k in sched.kernels:  # the fused kernel has its own tests (test_flash_attention_fused.py)
            if k.family == "attention":
                sched.keep_out_of_fusion(k.root)
        assert "attention" not in {k.family for k in sched.kernels}
        prog = ks.lower(sched, target="ascend910b2")
        golden = np.asarray(ks.evaluate([out], feeds, schedule=sched)[0], np.float32)
        tiled = np.asarray(ks.run_tiled(prog, feeds), np.float32)  # one output: the array itself
        np.testing.assert_array_equal(tiled, golden, err_msg=f"{case} run_tiled")
        exact = ks.ops.plain_softmax_attention(_bnsd(feeds["query"], layout, n), _bnsd(feeds["key"], layout, nkv),
                                               _bnsd(feeds["value"], layout, nkv), mask=feeds.get("atten_mask"))
        np.testing.assert_allclose(_bnsd(golden, layout, n), exact, rtol=2e-2, atol=1e-2, err_msg=f"{case} exact")
        progs.append(prog)
        want.append(dict(zip(prog.outputs, [golden], strict=True)))
        inputs.update({f"c{i}_{k}": v for k, v in feeds.items()})
    got = ks.twin.run(ks.codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, case in enumerate(CASES):
        for name, g in want[i].items():
            np.testing.assert_array_equal(np.asarray(got[f"c{i}_{name}"], np.float32), g, err_msg=f"{case} twin")


def test_causal_mask_hides_the_future_and_gqa_shares_kv_heads():
    q = ks.placeholder((1, 4, 16, 64), "float32", name="query")
    k = ks.placeholder((1, 2, 16, 64), "float32", name="key")
    v = ks.placeholder((1, 2, 16, 64), "float32", name="value")
    out = ks.ops.flash_attention(q, k, v, causal=True)
    feeds = ks.ops.flash_attention_inputs(out)
    assert feeds["atten_mask"].dtype == np.int8 and feeds["atten_mask"][0, 1] == 1 and feeds["atten_mask"][1, 0] == 0
    got = np.asarray(ks.evaluate([out], feeds)[0])
    # the first query row sees key 0 alone: its output is value row 0 of its kv head (heads 0, 1 -> kv 0; 2, 3 -> 1)
    for h in range(4):
        np.testing.assert_allclose(got[0, h, 0], feeds["value"][0, h // 2, 0], rtol=1e-6, atol=1e-6)
    changed = dict(feeds, value=np.array(feeds["value"]))
    changed["value"][:, :, 15] += 1.0  # the last key is seen by the last query row only
    got2 = np.asarray(ks.evaluate([out], changed)[0])
    np.testing.assert_array_equal(got2[:, :, :15], got[:, :, :15])
    assert not np.allclose(got2[:, :, 15], got[:, :, 15])


def test_flash_attention_plan_is_one_fused_kernel_or_two_and_names_its_output():
    q, k, v = (ks.placeholder((1, 1, 256, 128), "float16", name=n) for n in ("query", "key", "value"))
    out = ks.ops.flash_attention(q, k, v)
    sched = ks.create_schedule([out])
    prog = ks.lower(sched, target="ascend910b2")
    assert prog.outputs == ("attention_out",)
    assert [k.does for k in prog.kernels] == ["flash_attention"]  # one kernel: S and P stay on chip
    sched.keep_out_of_fusion(out)
    prog = ks.lower(sched, target="ascend910b2")
    assert prog.outputs == ("attention_out",)
    assert len(prog.kernels) == 2  # Q K^T + softmax + cast, then P V: P goes through HBM


def _t(shape, dt="float16", name="x"):
    return ks.placeholder(shape, dt, name=name)


@pytest.mark.parametrize(("args", "kwargs", "error", "words"), [
    (((1, 3, 8, 64), (1, 2, 8, 64), (1, 2, 8, 64)), {}, ks.ShapeError, "3 query heads.*2 key/value heads.*gcd|3 query"),
    (((1, 2, 8, 64), (1, 2, 8, 32), (1, 2, 8, 32)), {}, ks.ShapeError, "D=64, k 32"),
    (((1, 2, 8, 64), (1, 2, 8, 64), (1, 2, 9, 64)), {}, ks.ShapeError, "k and v come in pairs"),
    (((2, 2, 8, 64), (1, 2, 8, 64), (1, 2, 8, 64)), {}, ks.ShapeError, "batch 2"),
    (((2, 8, 64), (2, 8, 64), (2, 8, 64)), {}, ks.ShapeError, "takes 4 dims"),
    (((1, 8, 96), (1, 8, 96), (1, 8, 96)), dict(layout="BSH", num_heads=5), ks.ShapeError, "H=96.*5 heads"),
    (((1, 8, 128), (1, 8, 128), (1, 8, 128)), dict(layout="BSH"), ks.ShapeError, "num_heads=None"),
    (((1, 2, 8, 64),) * 3, dict(layout="SBH"), ks.UnsupportedError, "'SBH'"),
    (((1, 2, 8, 64),) * 3, dict(scale=0.0), ks.InputError, "scale=0.0"),
    (((1, 2, 8, 64),) * 3, dict(num_kv_heads=1), ks.ShapeError, "num_kv_heads=1 but k has 2"),
    (((1, 2, 8, 64),) * 3, dict(causal=1), ks.InputError, "causal=1"),
])
def test_flash_attention_refuses_bad_inputs_naming_the_numbers(args, kwargs, error, words):
    q, k, v = (_t(s, name=n) for s, n in zip(args, ("q", "k", "v"), strict=True))
    with pytest.raises(error, match=words):
        ks.ops.flash_attention(q, k, v, **kwargs)


def test_flash_attention_refuses_mixed_or_integer_dtypes():
    q, k = _t((1, 1, 8, 64), name="q"), _t((1, 1, 8, 64), name="k")
    with pytest.raises(ks.DTypeError, match="float16, float16, float32"):
        ks.ops.flash_attention(q, k, _t((1, 1, 8, 64), "float32", name="v"))
    i = [_t((1, 1, 8, 64), "int8", name=n) for n in "qkv"]
    with pytest.raises(ks.DTypeError, match="int8"):
        ks.ops.flash_attention(*i)
    with pytest.raises(ks.InputError, match="ndarray"):
        ks.ops.flash_attention(np.zeros((1, 1, 8, 64)), k, k)
