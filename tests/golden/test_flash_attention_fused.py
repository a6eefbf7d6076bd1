"""Attention as ONE fused cube-vector-cube kernel (fusion/attention.py, lower/attention.py): the fusion rule, the
kernel's four stages and flags, golden == run_tiled within the dtype's tolerance (the online softmax's rescaling
order checked against the chunked NumPy model and the float64 whole-row softmax), tails, the plan choice, the
unfused plan kept reachable, the simulator's timeline of the overlapping stages, and the generated Ascend C (two
Matmul objects on the AIC, the online softmax on the AIVs) on the twin."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.fusion.attention import attention_parts
from kernelstudio.lower.attention import FLAG_O, FLAG_P, FLAG_S
from kernelstudio.tileir.program import CrossSet, CrossWait, Mmad, walk

from .attention_cases import bnsd_attention as _attention

TARGET = "ascend910b2"


def _fused(out: ks.Tensor) -> tuple[ks.Schedule, object]:
    s = ks.create_schedule([out], fuse=True)
    return s, ks.lower(s, target=TARGET)


def test_attention_is_one_kernel_of_four_stages_and_three_flags():
    out = _attention(1, 2, 200, 1100, 64)  # S2: two blocks of 512 and a tail of 76
    s, prog = _fused(out)
    (k,) = s.kernels
    assert k.family == "attention" and len(k.nodes) == 9
    assert {r.name for _, r in k.reasons} == {"attention"}
    (kern,) = prog.kernels
    assert (kern.family, kern.kernel_type, kern.vec_per_block, kern.does) == ("attention", "MIX_AIC_1_2", 2,
                                                                              "flash_attention")
    mm = [x.comment for x in walk(kern.aic) if isinstance(x, Mmad)]
    assert [c.split(":")[0] for c in mm] == ["bmm1", "bmm2", "bmm2"]  # bmm2 in the loop and in the drain
    sets = {(side, x.flag) for side, prog_ in (("aic", kern.aic), ("aiv", kern.aiv)) for x in walk(prog_)
            if isinstance(x, CrossSet)}
    waits = {(side, x.flag) for side, prog_ in (("aic", kern.aic), ("aiv", kern.aiv)) for x in walk(prog_)
             if isinstance(x, CrossWait)}
    assert sets == {("aic", FLAG_S), ("aic", FLAG_O), ("aiv", FLAG_P)}
    assert waits == {("aiv", FLAG_S), ("aiv", FLAG_O), ("aic", FLAG_P)}
    ws = [t for t in prog.tensors if t.role == "workspace"]
    assert sorted((t.shape[1:], t.dtype) for t in ws) == [((3, 128, 64), "float32"), ((3, 128, 512), "float16"),
                                                          ((3, 128, 512), "float32")]  # three slots per core
    tiling = dict(kern.tiling)
    assert (tiling["s2_blocks"], tiling["cube_n"], tiling["tiles"]) == (3, 128, 4)  # 2 heads x 2 S1 blocks


# (B, N, S1, S2, D, dtype): S1 and S2 tails, S2 shorter than a block, a whole number of blocks, D = 64 / 128 / 192
CASES = (
    (1, 2, 200, 1100, 64, "float16"),
    (2, 1, 130, 1024, 128, "float16"),
    (1, 1, 64, 40, 128, "bfloat16"),
    (1, 3, 17, 129, 64, "bfloat16"),
    (1, 2, 150, 700, 192, "float16"),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_fused_kernel_equals_golden_and_the_online_softmax_model(case):
    b, n, s1, s2, d, dt = case
    out = _attention(b, n, s1, s2, d, dt)
    _, prog = _fused(out)
    (kern,) = prog.kernels
    assert kern.does == "flash_attention"
    feeds = ks.ops.flash_attention_inputs(out, seed=s1 + s2)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
    tol = 8e-3 if dt == "float16" else 3e-2  # a few units of the last place of outputs below 1
    np.testing.assert_allclose(got, golden, rtol=tol, atol=tol)
    # the kernel follows the chunked model's order (chunk = the S2 block): equal up to float32 summation order
    chunk = dict(kern.tiling)["s2_block"]
    model = ks.ops.online_softmax_attention(feeds["query"], feeds["key"], feeds["value"], chunk=chunk, dtype=dt)
    ulp = 2e-3 if dt == "float16" else 1.6e-2
    assert np.abs(got - np.asarray(model, np.float32)).max() <= ulp
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"])
    np.testing.assert_allclose(got, exact, rtol=tol, atol=tol)


def test_rescaling_matters_scores_that_grow_along_s2():
    """Rows whose max sits in the last block: every earlier block's sum and O are rescaled by e < 1 (a kernel
    that skipped the rescaling would be off by orders of magnitude)."""
    out = _attention(1, 1, 32, 1200, 64, "float16", scale=1.0)  # S2 blocks of 512, 512 and 176
    _, prog = _fused(out)
    assert dict(prog.kernels[0].tiling)["s2_blocks"] == 3
    feeds = ks.ops.flash_attention_inputs(out)
    ramp = np.linspace(0.0, 4.0, 1200, dtype=np.float32)[:, None]
    feeds["key"] = (np.ones((1, 1, 1200, 64), np.float32) * ramp / 8).astype(np.float16)
    feeds["query"] = np.ones((1, 1, 32, 64), np.float16)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"], scale=1.0)
    np.testing.assert_allclose(got, exact, rtol=1e-2, atol=2e-3)


def test_the_unfused_plan_stays_reachable():
    out = _attention(1, 2, 96, 160, 64)
    s = ks.create_schedule([out], fuse=True)
    (k,) = s.kernels
    s.keep_out_of_fusion(k.root)  # the P V matmul kept out: Q K^T + softmax, then P V
    assert [x.family for x in s.kernels] == ["cube_vector", "cube"]
    prog = ks.lower(s, target=TARGET)
    feeds = ks.ops.flash_attention_inputs(out)
    golden = np.asarray(ks.evaluate([out], feeds, schedule=s)[0], np.float32)
    np.testing.assert_allclose(np.asarray(ks.run_tiled(prog, feeds), np.float32), golden, rtol=1e-2, atol=1e-5)


def test_default_plan_is_the_fused_kernel_where_it_is_faster():
    out = _attention(1, 1, 512, 512, 128)
    s = ks.create_schedule([out], target=TARGET)
    (k,) = s.kernels
    assert k.family == "attention"
    (c,) = s.choices
    assert c.fused and c.fused_us < c.split_us
    assert any(n.startswith("fusion pays") for n in k.notes)


@pytest.mark.parametrize(("n", "nkv", "s1", "s2", "d"), [(2, 2, 150, 700, 64), (4, 2, 200, 200, 128)])
def test_causal_mask_is_applied_in_the_kernel(n, nkv, s1, s2, d):
    out = _attention(1, n, s1, s2, d, nkv=nkv, causal=True)
    s, prog = _fused(out)
    (att,) = [k for k in s.kernels if k.family == "attention"]
    assert "where" in [x.op.value for x in att.nodes]
    (kern,) = [k for k in prog.kernels if k.does == "flash_attention"]
    assert "atten_mask" in kern.params
    feeds = ks.ops.flash_attention_inputs(out)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"], mask=feeds["atten_mask"])
    np.testing.assert_allclose(got, exact, rtol=8e-3, atol=8e-3)
    # the first query row sees key 0 alone: its output is value row 0 of its kv head
    for h in range(n):
        np.testing.assert_allclose(got[0, h, 0], np.asarray(feeds["value"][0, h // (n // nkv), 0], np.float32),
                                   rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(("b", "n", "nkv"), [(1, 4, 2), (2, 6, 1), (2, 6, 3)])
def test_gqa_query_head_h_reads_kv_head_h_over_g(b, n, nkv):
    out = _attention(b, n, 40, 600, 64, nkv=nkv)  # S2: a block of 512 and a tail
    s, prog = _fused(out)
    (att,) = s.kernels  # the grouping reshapes are read through: one kernel
    assert att.family == "attention"
    m = attention_parts(att.nodes)
    assert m.q.shape[:3] == (b, nkv, n // nkv) and m.k.shape[:3] == (b, nkv, 1)  # the query heads in groups of G
    assert (m.q_in.shape, m.k_in.shape) == ((b, n, 40, 64), (b, nkv, 600, 64))  # the user's tensors, read in place
    feeds = ks.ops.flash_attention_inputs(out, seed=n)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    exact = ks.ops.plain_softmax_attention(feeds["query"], feeds["key"], feeds["value"])
    np.testing.assert_allclose(got, exact, rtol=8e-3, atol=8e-3)
    # one kv head changed moves only the query heads of its group
    changed = dict(feeds, value=np.array(feeds["value"]))
    changed["value"][:, 0] += np.float16(1.0)
    got2 = np.asarray(ks.run_tiled(prog, changed), np.float32)
    g = n // nkv
    np.testing.assert_array_equal(got2[:, g:], got[:, g:])
    assert np.abs(got2[:, :g] - got[:, :g]).min() > 0.5


def test_timeline_shows_the_four_stages_overlapping():
    out = _attention(1, 1, 128, 1024, 128)
    _, prog = _fused(out)
    r = ks.simulate(prog)
    ev = r.events.where(kernel=prog.kernels[0].name)
    c = ev.columns
    text = [ev.instr_text[i] for i in c["instr"]]
    stage = {name: np.array([name in t for t in text]) for name in ("bmm1", "bmm2", "vec1", "vec2")}
    assert all(m.sum() > 0 for m in stage.values())
    # block 0's cube computes bmm1 of later blocks while its vector cores run vec1 / vec2 of earlier ones
    core = np.array([ev.core_labels[i] for i in c["core"]])
    cube = stage["bmm1"] & (core == "core0.cubecore0")
    vec = (stage["vec1"] | stage["vec2"]) & np.char.startswith(core.astype(str), "core0.veccore")
    s1, e1 = c["start_us"][cube], c["end_us"][cube]
    s2, e2 = c["start_us"][vec], c["end_us"][vec]
    overlap = sum(max(0.0, min(e1[i], e2[j]) - max(s1[i], s2[j])) for i in range(len(s1)) for j in range(len(s2)))
    assert overlap > 0
    # and block 0 ends before its cube's and one vector core's busy times one after another would
    one = (core == "core0.cubecore0") | (core == "core0.veccore0")
    busy = float((c["end_us"][one] - c["start_us"][one]).sum())
    assert float(c["end_us"][one].max() - c["start_us"][one].min()) < busy


def test_d192_keeps_one_slot_of_each_l0_buffer():
    """Q (128 x 192) or K (128 x 192) in float16 is 48 KiB: two do not fit the 64 KiB L0A / L0B, nor two
    128 x 192 float32 accumulators the 128 KiB L0C; at D = 128 every L0 buffer is double-buffered."""
    depth = {}
    for d in (128, 192):
        _, prog = _fused(_attention(1, 1, 128, 512, d))
        depth[d] = {b.name: b.depth for b in prog.kernels[0].buffers if b.tier.value in ("L0A", "L0B", "L0C")}
    assert depth == {128: {"a2": 2, "b2": 2, "c": 2}, 192: {"a2": 1, "b2": 1, "c": 1}}


# (B, N, S1, S2, D, dtype, Nkv) for the twin: S1 tails (two tasks, the second short), three S2 blocks with a tail,
# S2 shorter than a block, D = 64 / 128, float16 and bfloat16, two cores, GQA, causal
TWIN_CASES = (
    (1, 2, 150, 1100, 64, "float16", None),
    (2, 1, 40, 200, 128, "bfloat16", None),
    (1, 4, 24, 136, 64, "float16", 2),  # GQA: query heads 0, 1 read kv head 0; 2, 3 kv head 1
    (1, 2, 70, 600, 64, "float16", "causal"),  # the causal mask, applied in vec1
)


def test_fused_kernel_three_way_on_the_twin(twin_cache):
    from ..codegen.merge import merge

    progs, inputs, want = [], {}, []
    for i, case in enumerate(TWIN_CASES):
        b, n, s1, s2, d, dt, nkv = case
        causal = nkv == "causal"
        out = _attention(b, n, s1, s2, d, dt, nkv=None if causal else nkv, causal=causal)
        _, prog = _fused(out)
        assert "flash_attention" in [k.does for k in prog.kernels]
        feeds = ks.ops.flash_attention_inputs(out, seed=i)
        tiled = np.asarray(ks.run_tiled(prog, feeds), np.float32)
        golden = np.asarray(ks.evaluate([out], feeds)[0], np.float32)
        tol = 8e-3 if dt == "float16" else 3e-2
        np.testing.assert_allclose(tiled, golden, rtol=tol, atol=tol, err_msg=f"{case} run_tiled")
        progs.append(prog)
        want.append((tiled, golden, tol))
        inputs.update({f"c{i}_{k}": v for k, v in feeds.items()})
    bundle = ks.codegen(merge(progs))
    src = "".join(t for name, t in bundle.files.items() if name.endswith(".cpp"))
    assert "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm1, &cubeTiling, mm2, &cubeTiling2);" in src
    assert "CrossCoreWaitFlag(1)" in src and "CrossCoreSetFlag<0x2, PIPE_MTE3>(1)" in src
    got = ks.twin.run(bundle, inputs, cache_dir=twin_cache, by_name=True)
    for i, case in enumerate(TWIN_CASES):
        tiled, golden, tol = want[i]
        twin = np.asarray(got[f"c{i}_attention_out"], np.float32)
        # the twin's Matmul sums k in its own order: within float32 rounding of run_tiled before the final cast
        np.testing.assert_allclose(twin, tiled, rtol=tol / 4, atol=tol / 4, err_msg=f"{case} twin vs run_tiled")
        np.testing.assert_allclose(twin, golden, rtol=tol, atol=tol, err_msg=f"{case} twin vs golden")


def test_s1_and_s2_blocks_are_schedule_knobs():
    out = _attention(1, 2, 200, 1100, 64)
    s = ks.create_schedule([out], fuse=True)
    s[out].split("s1", 64).split("s2", 256).parallel(cores=3)
    prog = ks.lower(s, target=TARGET)
    (kern,) = prog.kernels
    t = dict(kern.tiling)
    assert (t["s1_block"], t["s2_block"], t["s2_blocks"], t["tiles"], kern.block_dim) == (64, 256, 5, 8, 3)
    feeds = ks.ops.flash_attention_inputs(out)
    got = np.asarray(ks.run_tiled(prog, feeds), np.float32)
    model = ks.ops.online_softmax_attention(feeds["query"], feeds["key"], feeds["value"], chunk=256,
                                            dtype="float16")
    assert np.abs(got - np.asarray(model, np.float32)).max() <= 2e-3
    default = ks.simulate(_fused(out)[1]).time_us
    assert ks.simulate(prog).time_us != default


@pytest.mark.parametrize(("directive", "words"), [
    (lambda st: st.split("m", 64), "no axis 'm'.*'s1'.*'s2'"),
    (lambda st: st.split("s2", 100), "multiple of 16, e.g. 112"),
    (lambda st: st.parallel("s1", 4), "parallel\\(cores=...\\) alone"),
    (lambda st: st.sync_all(True), "sync_all.*does not apply to an attention kernel"),
    (lambda st: st.l1_k_steps(2), "l1_k_steps.*does not apply"),
])
def test_attention_kernel_refuses_directives_it_cannot_take(directive, words):
    out = _attention(1, 1, 64, 64, 64)
    s = ks.create_schedule([out], fuse=True)
    with pytest.raises(ks.ScheduleError, match=words):
        directive(s[out])


def test_causal_blocks_wholly_above_the_diagonal_are_skipped():
    """S = 1024 in S1 blocks of 128 and S2 blocks of 512: task i (rows 128 i ..) needs ceil((i + 1) / 4) of the two
    S2 blocks, 12 of the 16 blocks; each block is 4 cube tiles of bmm1 (and of bmm2)."""
    mmads = {}
    for causal in (False, True):
        _, prog = _fused(_attention(1, 1, 1024, 1024, 128, causal=causal))
        ev = ks.simulate(prog).events
        text = [ev.instr_text[i] for i in ev.columns["instr"]]
        mmads[causal] = tuple(sum(1 for t in text if t.startswith("mmad") and b in t) for b in ("bmm1", "bmm2"))
    # (every core holds one task here, so the time is the longest task's, which skips nothing: the skipped blocks
    # show in the count, and in the time once tasks share cores)
    assert mmads == {False: (64, 64), True: (48, 48)}


def test_blocks_too_big_for_a_buffer_name_the_attention_knobs():
    out = _attention(1, 1, 512, 512, 128)
    s = ks.create_schedule([out], fuse=True)
    s[out].split("s1", 512)  # Q or P blocks of 512 x 128 float16: 128 KiB, twice L0A
    with pytest.raises(ks.CapacityError, match="L0A needs 131,072 B.*split\\('s1', ...\\) / split\\('s2', ...\\)"):
        ks.lower(s, target=TARGET)


def test_idle_view_says_the_cube_loads_hold_the_stages_back():
    """At S = 2048 the cube core's MTE2 (K, V and P tiles into L1) idles least of its pipes, its cube waits for
    the tiles those loads bring, and the vector cores wait on the cube's flags (S or P V handed over)."""
    from kernelstudio.sim.idle import idle_breakdown

    _, prog = _fused(_attention(1, 1, 2048, 2048, 128))
    rows = {(r["core"], r["pipe"]): r for r in idle_breakdown(ks.simulate(prog), cores=1)}
    cube = {pipe: r["idle_pct"] for (core, pipe), r in rows.items() if core == "core0.cubecore0"}
    assert min(cube, key=cube.get) == "MTE2"
    assert "MTE2" in rows[("core0.cubecore0", "MTE1")]["causes"][0]["released_by"]
    vec = rows[("core0.veccore0", "VECTOR")]["causes"][0]
    assert vec["what"].startswith("cross_wait") and "cubecore0 FIXP" in vec["released_by"]


def test_slots_set_how_far_the_cube_runs_ahead():
    """slots(n): n S2 blocks in flight per core. The values are the same for every n (the same operations on the
    same data); one slot runs each block's stages one after another, and more slots let them overlap."""
    out = _attention(1, 1, 128, 2048, 128)
    feeds = ks.ops.flash_attention_inputs(out)
    got, times = {}, {}
    for n in (1, 2, 3, 4):
        s = ks.create_schedule([out], fuse=True)
        s[out].slots(n)
        prog = ks.lower(s, target=TARGET)
        assert [t.shape[1] for t in prog.tensors if t.role == "workspace"] == [n, n, n]
        got[n] = np.asarray(ks.run_tiled(prog, feeds), np.float32)
        times[n] = ks.simulate(prog).time_us
    for n in (2, 3, 4):
        np.testing.assert_array_equal(got[n], got[1])
    assert times[1] > times[2] > times[3]
    with pytest.raises(ks.ScheduleError, match="slots\\(5\\).*1 .*to 4"):
        ks.create_schedule([out], fuse=True)[out].slots(5)
