"""FlashDecode (lower/attention_split.py): the attention kernel with S_kv split over the cores, each part writing
O_i = O / l and lse_i = m + ln(l), a SyncAll, then the log-sum-exp combine on the vector cores. golden ==
run_tiled within the dtype's tolerance (and == the NumPy split model up to float32 order), the combine's order
against the whole-row softmax, the auto split at decode, the timeline (parts on many cores, then the combine), the
knob's errors, and the generated Ascend C on the twin."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.lower.attention_split import KvSplitError
from kernelstudio.tileir.program import SyncAll, walk

from .attention_cases import bnsd_attention as _attention

TARGET = "ascend910b2"


def _lowered(out: ks.Tensor, parts: int | None = None, s2: int | None = None):
    s = ks.create_schedule([out], fuse=True)
    (att,) = [k for k in s.kernels if k.family == "attention"]
    if parts is not None:
        s[att.name].split("kv", parts)
    if s2 is not None:
        s[att.name].split("s2", s2)
    prog = ks.lower(s, target=TARGET)
    (kern,) = [k for k in prog.kernels if k.does == "flash_attention"]
    return prog, kern


# (B, N, S_q, S_kv, D, dtype, Nkv, parts, S2 block): S_kv tails (not a multiple of the block nor of the parts),
# uneven parts (3 blocks in 2), a few query rows, GQA, smaller S2 blocks
CASES = (
    (1, 2, 1, 1100, 64, "float16", None, 3, None),
    (2, 2, 3, 1500, 128, "bfloat16", None, 2, None),
    (1, 4, 1, 700, 64, "float16", 2, 2, None),
    (1, 1, 5, 2000, 64, "float16", None, 5, 256),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_split_kernel_equals_golden_and_the_split_model(case):
    b, n, s1, s2, d, dt, nkv, parts, s2b = case
    out = _attention(b, n, s1, s2, d, dt, nkv=nkv)
    prog, kern = _lowered(out, parts, s2b)
    t = dict(kern.tiling)
    groups = nkv if nkv and s1 == 1 else n  # GQA at S_q = 1: one task per kv head, its query heads as rows
    assert t["kv_splits"] == parts and kern.block_dim == b * groups * parts
    assert sum(isinstance(x, SyncAll) for side in (kern.aic, kern.aiv) for x in walk(side)) == 2
    feeds = ks.ops.flash_attention_inputs(out, seed=s2)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
    tol = 8e-3 if dt == "float16" else 3e-2
    np.testing.assert_allclose(got, golden, rtol=tol, atol=tol)
    model = ks.ops.split_softmax_attention(feeds["query"], feeds["key"], feeds["value"], parts=parts,
                                           chunk=t["s2_block"], dtype=dt)
    assert np.abs(got - np.asarray(model, np.float32)).max() <= (2e-3 if dt == "float16" else 1.6e-2)
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"])
    np.testing.assert_allclose(got, exact, rtol=tol, atol=tol)


def _ramp_feeds(out: ks.Tensor, s2: int, d: int) -> dict[str, np.ndarray]:
    """Scores that grow along S_kv (the last part holds the row max, the first parts' lse are far below it) and
    values of order 1 that differ by part, so a combine that weighed the parts wrongly would be far off."""
    feeds = ks.ops.flash_attention_inputs(out)
    ramp = np.linspace(0.0, 6.0, s2, dtype=np.float32)[:, None]
    feeds["key"] = (np.ones((1, 1, s2, d), np.float32) * ramp / d).astype(np.float16)
    feeds["query"] = np.ones((1, 1, 1, d), np.float16)
    pos = np.linspace(-2.0, 2.0, s2, dtype=np.float32)[:, None] + np.arange(d, dtype=np.float32) / (4 * d)
    feeds["value"] = pos.reshape(1, 1, s2, d).astype(np.float16)
    return feeds


def test_the_combine_weighs_each_part_by_its_log_sum_exp():
    s2, d = 1900, 64
    out = _attention(1, 1, 1, s2, d, scale=1.0)
    prog, kern = _lowered(out, 4)
    feeds = _ramp_feeds(out, s2, d)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"], scale=1.0)
    assert np.abs(exact).max() > 0.3  # outputs of order 1: the tolerance below means something
    np.testing.assert_allclose(got, exact, rtol=1e-2, atol=4e-3)
    # the parts' plain mean (no lse weights) is far from it: the weights carry the answer
    blocks = dict(kern.tiling)["s2_blocks"]
    bounds = [blocks * i // 4 * 512 for i in range(5)]
    parts = [ks.ops.plain_softmax_attention(feeds["query"], feeds["key"][:, :, a:min(b, s2)],
                                            feeds["value"][:, :, a:min(b, s2)], scale=1.0)
             for a, b in zip(bounds, bounds[1:], strict=False)]
    assert np.abs(np.mean(parts, axis=0) - exact).max() > 0.1


def test_a_user_mask_applies_in_each_part_and_a_wholly_masked_part_weighs_nothing():
    s2 = 1300  # 3 blocks in 3 parts; the mask keeps keys 600 .. 1199: part 0 (keys 0 .. 511) is wholly masked
    q = ks.placeholder((1, 2, 1, 64), "float16", name="query")
    k, v = (ks.placeholder((1, 2, s2, 64), "float16", name=n) for n in ("key", "value"))
    scores = ks.where(ks.placeholder((1, s2), "int8", name="pad_mask"), -1e30,
                      ks.mul(ks.matmul(q, k, transpose_b=True, out_dtype="float32"), 0.125))
    out = ks.matmul(ks.cast(ks.softmax(scores), "float16"), v, name="attention_out")
    prog, kern = _lowered(out)
    assert dict(kern.tiling)["kv_splits"] == 3
    feeds = ks.random_inputs([out], seed=0)
    mask = np.ones((1, s2), np.int8)
    mask[0, 600:1200] = 0
    feeds["pad_mask"] = mask
    feeds["value"] = (np.asarray(feeds["value"], np.float32) * 8).astype(np.float16)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"], scale=0.125, mask=mask)
    np.testing.assert_allclose(got, exact, rtol=8e-3, atol=2e-4)


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_the_split_model_is_the_whole_row_softmax(parts):
    rng = np.random.default_rng(parts)
    q = rng.standard_normal((1, 4, 3, 32)).astype(np.float32)
    k = rng.standard_normal((1, 2, 450, 32)).astype(np.float32) * 2
    v = rng.standard_normal((1, 2, 450, 32)).astype(np.float32)
    exact = ks.ops.plain_softmax_attention(q, k, v)
    got = ks.ops.split_softmax_attention(q, k, v, parts=parts, chunk=64)
    np.testing.assert_allclose(got, exact, rtol=2e-5, atol=2e-6)


def test_the_split_model_refuses_parts_it_cannot_make():
    q = np.zeros((1, 1, 1, 16), np.float32)
    kv = np.zeros((1, 1, 100, 16), np.float32)
    for parts in (0, 3, True):
        with pytest.raises(ks.ShapeError, match="from 1 to the 2 chunks of 64"):
            ks.ops.split_softmax_attention(q, kv, kv, parts=parts, chunk=64)


def test_auto_schedule_splits_at_decode_only():
    # 4 heads of one query row over 8 S_kv blocks: 4 x 4 parts of 2 blocks in one round (6 parts are 2 blocks
    # long too); over 64 blocks, 4 x 6 parts of up to 11 blocks fill the 24 cores in one round
    for s2, want in ((4096, 4), (32768, 6)):
        _, kern = _lowered(_attention(1, 4, 1, s2, 128))
        assert (dict(kern.tiling)["kv_splits"], kern.block_dim) == (want, min(24, 4 * want))
    assert any(n.startswith("FlashDecode: the 64 S_kv blocks in 6 parts") for n in kern.notes)
    # prefill (S_q = 128), causal decode, one S_kv block, and 13 heads (2 parts take 2 rounds): no split
    for out in (_attention(1, 4, 128, 4096, 128), _attention(1, 4, 1, 4096, 128, causal=True),
                _attention(1, 4, 1, 300, 128), _attention(1, 13, 1, 4096, 128)):
        _, kern = _lowered(out)
        assert "kv_splits" not in dict(kern.tiling)
        assert not any(isinstance(x, SyncAll) for x in walk(kern.aiv))


def test_gqa_decode_folds_each_group_into_the_rows_of_one_task():
    """32 query heads over 8 kv heads at S_q = 1: 8 tasks of 4 rows (before the split), each reading its kv head's
    K and V once; numerics as the whole-row softmax."""
    out = _attention(1, 32, 1, 4096, 128, nkv=8)
    prog, kern = _lowered(out, 1)
    assert (dict(kern.tiling)["tiles"], kern.block_dim) == (8, 8)
    assert any(n.startswith("GQA at S_q = 1: the 4 query heads of each kv head") for n in kern.notes)
    r = ks.simulate(prog)
    (row,) = [k for k in r.kernels if k["name"] == kern.name]
    kv_bytes = 2 * 8 * 4096 * 128 * 2
    # K and V once (read in place, no reshape kernel before) beside the workspaces, not once per query head
    assert kv_bytes <= row["hbm_read_bytes"] + row["l2_bytes"] < 1.25 * kv_bytes
    feeds = ks.ops.flash_attention_inputs(out, seed=3)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"])
    np.testing.assert_allclose(got, exact, rtol=8e-3, atol=8e-3)
    _, split = _lowered(out)
    assert (dict(split.tiling)["kv_splits"], split.block_dim) == (3, 24)  # 8 groups x 3 parts


@pytest.mark.parametrize(("n", "s2"), [(4, 4096), (2, 2048)])
def test_the_auto_split_is_the_fastest_part_count_in_the_simulator(n, s2):
    out = _attention(1, n, 1, s2, 128)
    auto_prog, auto = _lowered(out)
    blocks = dict(auto.tiling)["s2_blocks"]
    times = {p: ks.simulate(_lowered(out, p)[0]).time_us for p in range(1, blocks + 1)}
    assert dict(auto.tiling)["kv_splits"] == min(times, key=times.get)
    assert ks.simulate(auto_prog).time_us == times[dict(auto.tiling)["kv_splits"]]


def test_split_is_faster_at_decode_and_split_kv_1_keeps_one_part():
    out = _attention(1, 4, 1, 4096, 128)
    split_prog, _ = _lowered(out)
    one_prog, one = _lowered(out, 1)
    assert "kv_splits" not in dict(one.tiling) and one.block_dim == 4
    t_split, t_one = ks.simulate(split_prog).time_us, ks.simulate(one_prog).time_us
    assert t_split < 0.75 * t_one


def test_timeline_shows_the_parts_on_many_cores_then_the_combine():
    prog, kern = _lowered(_attention(1, 4, 1, 4096, 128))
    r = ks.simulate(prog)
    ev = r.events.where(kernel=kern.name)
    c = ev.columns
    text = [ev.instr_text[i] for i in c["instr"]]
    core = np.array([ev.core_labels[i] for i in c["core"]])
    bmm1 = np.array([t.startswith("bmm1") or " bmm1" in t for t in text])
    comb = np.array(["combine" in t for t in text])
    assert len(set(core[bmm1])) == 16  # 4 heads x 4 parts on 16 cube cores
    # the 4 output rows: one each on the first four vector cores, after every part's last bmm1
    assert sorted(set(core[comb])) == ["core0.veccore0", "core0.veccore1", "core1.veccore0", "core1.veccore1"]
    assert c["start_us"][comb].min() > c["end_us"][bmm1].max()


def test_bad_kv_splits_name_the_numbers_and_the_way_out():
    out = _attention(1, 2, 1, 1100, 64)
    s = ks.create_schedule([out], fuse=True)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ks.ScheduleError, match=r"split\('kv', .*whole number >= 1"):
            s[s.kernels[0].name].split("kv", bad)
    with pytest.raises(KvSplitError) as e:
        _lowered(out, 4)
    assert all(f in str(e.value) for f in ("split('kv', 4)", "S_kv = 1100 is 3 block(s) of 512", "at most 3",
                                           "split('kv', 3)", "split('s2', 256)"))
    with pytest.raises(KvSplitError, match=r"causal.*drop causal=True for decode.*split\('kv', 1\)"):
        _lowered(_attention(1, 2, 1, 1100, 64, causal=True), 2)
    mm = ks.matmul(ks.placeholder((64, 64), "float16", name="a"), ks.placeholder((64, 64), "float16", name="b"))
    s = ks.create_schedule([mm], fuse=True)
    with pytest.raises(ks.ScheduleError, match=r"split\('kv', 2\) splits the key/value sequence of an attention "
                                               r"kernel.*this kernel is cube"):
        s[s.kernels[0].name].split("kv", 2)


# the twin: S_kv tails, uneven parts, a few query rows, bfloat16, GQA (folded at S_q = 1); one merged binary
TWIN_CASES = (
    (1, 2, 1, 1100, 64, "float16", None, 3),
    (1, 4, 3, 700, 64, "bfloat16", 2, 2),
    (1, 6, 1, 600, 64, "float16", 2, 2),  # GQA at S_q = 1: the 3 query heads of a kv head are one task's rows
)


def test_split_kernel_three_way_on_the_twin(twin_cache):
    from ..codegen.merge import merge

    progs, inputs, want = [], {}, []
    for i, (b, n, s1, s2, d, dt, nkv, parts) in enumerate(TWIN_CASES):
        out = _attention(b, n, s1, s2, d, dt, nkv=nkv)
        prog, _ = _lowered(out, parts)
        feeds = ks.ops.flash_attention_inputs(out, seed=i)
        feeds["value"] = (np.asarray(feeds["value"], np.float32) * 8).astype(feeds["value"].dtype)  # outputs ~ 1
        tiled = np.asarray(ks.run_tiled(prog, feeds), np.float32)
        golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
        tol = 8e-3 if dt == "float16" else 3e-2
        np.testing.assert_allclose(tiled, golden, rtol=tol, atol=tol)
        progs.append(prog)
        want.append((tiled, golden, tol))
        inputs.update({f"c{i}_{k}": v for k, v in feeds.items()})
    bundle = ks.codegen(merge(progs))
    src = "".join(t for name, t in bundle.files.items() if name.endswith(".cpp"))
    assert src.count("AscendC::SyncAll<false>();") >= 4  # the cube and the vector side of each kernel
    assert "AscendC::Ln(" in src
    got = ks.twin.run(bundle, inputs, cache_dir=twin_cache, by_name=True)
    for i, case in enumerate(TWIN_CASES):
        tiled, golden, tol = want[i]
        twin = np.asarray(got[f"c{i}_attention_out"], np.float32)
        np.testing.assert_allclose(twin, tiled, rtol=tol / 4, atol=tol / 4, err_msg=f"{case} twin vs run_tiled")
        np.testing.assert_allclose(twin, golden, rtol=tol, atol=tol, err_msg=f"{case} twin vs golden")
