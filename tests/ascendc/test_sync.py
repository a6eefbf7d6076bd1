"""The sync checker on seeded bugs (copies of the samples with one edit: each found at the right core,
calls and lines), on the unmodified samples and every generated reference kernel (no findings), and on
hand-written call logs (cross-core cycles, queue misuse, version 1 logs)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.ascendc import check_sync, format_findings
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import CallLog

from ..reference_kernels import REFERENCE
from .conftest import KERNELS, TWIN_KERNELS, halves, line_of, seeded

FLAGS_DIR, PREFETCH_DIR = KERNELS / "add_flags", KERNELS / "add_prefetch"
ROWREDUCE_DIR = TWIN_KERNELS / "matmul_rowreduce"
BARE_MIX_DIR = TWIN_KERNELS / "bare_mix"
PREFETCH = "op_kernel/add_prefetch.cpp"
ROWREDUCE = "op_kernel/matmul_rowreduce.cpp"


def _vector(path, twin_cache, n=2 * 2048):
    x = halves(n)
    return ks.ascendc.load(path, args=[x, x, ks.ascendc.out(n, "float16")],
                           tiling={"blockLength": 2048, "tileLength": 512}, block_dim=n // 2048,
                           cache_dir=twin_cache)


def _rowreduce(path, twin_cache):
    m, n, kk, blocks = 96, 80, 64, 2
    cube = dict(usedCoreNum=blocks, M=m, N=n, Ka=kk, Kb=kk, singleCoreM=m // blocks, singleCoreN=n,
                singleCoreK=kk, baseM=32, baseN=48, baseK=64, isBias=0)
    a, b = np.ones((m, kk), np.float16), np.ones((n, kk), np.float16)
    return ks.ascendc.load(path, args=[a, b, ks.ascendc.out(m, "float32"), ks.ascendc.out(m, "float32")],
                           tiling={"rowsPerVector": m // blocks // 2, "cubeTilingData": cube}, block_dim=blocks,
                           cache_dir=twin_cache, timeout_s=30)


def _bare_mix(path, twin_cache):
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((32, 64)).astype(np.float16), rng.standard_normal((64, 32)).astype(np.float16)
    return ks.ascendc.load(path, args=[a, b, ks.ascendc.out((32, 32), "float32"), ks.ascendc.out((32, 32), "float32")],
                           cache_dir=twin_cache)


def _only(findings, kind):
    got = [f for f in findings if f.kind == kind]
    assert got, format_findings(findings)
    return got


def _lines(finding):
    return [int(s.rpartition(":")[2]) for s in finding.lines]


# ---- seeded bugs ------------------------------------------------------------------------------------
def test_a_removed_waitflag_is_a_race_naming_both_calls_and_a_lost_signal(tmp_path, twin_cache):
    path, text = seeded(tmp_path, FLAGS_DIR, "add_flags.cpp", "            WaitFlag<HardEvent::MTE2_V>(0);\n", "")
    findings = _vector(path, twin_cache).check_sync()
    races = _only(findings, "race")
    assert {tuple(_lines(f)) for f in races} == {(line_of(text, "DataCopy(x, xGm"), line_of(text, "Add(z, x, y")),
                                                 (line_of(text, "DataCopy(y, yGm"), line_of(text, "Add(z, x, y"))}
    race = races[0]
    assert race.core == "AIV" and race.block == 0 and race.kernel == "add_flags"
    assert race.calls[0].what == "DataCopy(VECCALC <- GM)" and race.calls[1].what == "Add"
    assert "RAW between pipes MTE2 and V" in race.message and race.lines[0].startswith(str(path))
    lost = _only(findings, "lost-signal")
    assert [_lines(f) for f in lost] == [[line_of(text, "SetFlag<HardEvent::MTE2_V>")] * 2]
    assert {f.kind for f in findings} == {"race", "lost-signal"}


def test_a_duplicated_setflag_is_a_lost_signal_at_both_lines(tmp_path, twin_cache):
    set_line = "            SetFlag<HardEvent::V_MTE3>(0);\n"
    path, text = seeded(tmp_path, FLAGS_DIR, "add_flags.cpp", set_line, set_line * 2)
    findings = _vector(path, twin_cache).check_sync()
    assert [f.kind for f in findings] == ["lost-signal"], format_findings(findings)
    first = line_of(text, "SetFlag<HardEvent::V_MTE3>")
    assert _lines(findings[0]) == [first, first + 1] and findings[0].core == "AIV"
    assert findings[0].calls[0].what == "SetFlag<V_MTE3>(0)"
    assert findings[0].occurrences == 2 * 4  # 4 tiles on each of 2 cores


def test_an_added_pipe_all_barrier_is_redundant(tmp_path, twin_cache):
    add = "            Add(z, x, y, this->tileLength);\n"
    path, text = seeded(tmp_path, FLAGS_DIR, "add_flags.cpp", add, add + "            PipeBarrier<PIPE_ALL>();\n")
    findings = _vector(path, twin_cache).check_sync()
    assert [f.kind for f in findings] == ["redundant-barrier"], format_findings(findings)
    assert _lines(findings[0]) == [line_of(text, "PipeBarrier<PIPE_ALL>")]
    assert findings[0].calls[0].what == "PipeBarrier<PIPE_ALL>()"


def test_a_pipe_all_barrier_that_replaces_a_flag_pair_is_needed(tmp_path, twin_cache):
    pair = "            SetFlag<HardEvent::MTE2_V>(0);\n            WaitFlag<HardEvent::MTE2_V>(0);\n"
    path, _ = seeded(tmp_path, FLAGS_DIR, "add_flags.cpp", pair, "            PipeBarrier<PIPE_ALL>();\n")
    assert _vector(path, twin_cache).check_sync() == []


def test_a_removed_setflag_leaves_a_wait_that_hangs(tmp_path, twin_cache):
    path, text = seeded(tmp_path, FLAGS_DIR, "add_flags.cpp", "            SetFlag<HardEvent::V_MTE3>(0);\n", "")
    findings = _vector(path, twin_cache).check_sync()
    hang = _only(findings, "hang")
    assert [_lines(f) for f in hang] == [[line_of(text, "WaitFlag<HardEvent::V_MTE3>")]]
    assert [_lines(f) for f in _only(findings, "race")] == [[line_of(text, "Add(z, x, y"),
                                                             line_of(text, "DataCopy(zGm")]]


def test_a_lowered_queue_depth_stops_the_run_and_the_checker_names_the_allocs(tmp_path, twin_cache):
    path, text = seeded(tmp_path, PREFETCH_DIR, PREFETCH, "int32_t BUFFER_NUM = 2", "int32_t BUFFER_NUM = 1")
    with pytest.raises(TwinError, match="queue: AllocTensor") as e:
        _vector(path.parent.parent, twin_cache)
    [f] = e.value.findings
    assert f.kind == "queue" and f.core == "AIV" and f.block == 0
    alloc = line_of(text, "inQueueX.AllocTensor")
    assert _lines(f) == [line_of(text, "pipe.InitBuffer(inQueueX"), alloc, alloc]
    assert "all 1 of its buffers" in f.message and "sync check: 1 finding" in str(e.value)


def test_a_tensor_freed_twice(tmp_path, twin_cache):
    free = "        outQueueZ.FreeTensor(zLocal);\n"
    path, text = seeded(tmp_path, PREFETCH_DIR, PREFETCH, free, free * 2)
    with pytest.raises(TwinError) as e:
        _vector(path.parent.parent, twin_cache)
    [f] = e.value.findings
    first = line_of(text, "outQueueZ.FreeTensor")
    assert f.kind == "queue" and _lines(f) == [first, first + 1] and "freed twice" in f.message


def test_a_deque_before_any_enque(tmp_path, twin_cache):
    path, text = seeded(tmp_path, PREFETCH_DIR, PREFETCH, "        inQueueX.EnQue(xLocal);\n", "")
    with pytest.raises(TwinError) as e:
        _vector(path.parent.parent, twin_cache)
    [f] = e.value.findings
    assert f.kind == "queue" and "DeQue before EnQue" in f.message
    assert _lines(f) == [line_of(text, "pipe.InitBuffer(inQueueX"), line_of(text, "inQueueX.DeQue")]


def test_a_removed_cross_core_set_hangs_the_aivs_and_the_run_stays_bounded(tmp_path, twin_cache):
    set_flag = "            CrossCoreSetFlag<2, PIPE_FIX>(SYNC_AIC_AIV_FLAG);\n"
    path, text = seeded(tmp_path, ROWREDUCE_DIR, ROWREDUCE, set_flag, "")
    with pytest.raises(TwinError, match="flag") as e:
        _rowreduce(path.parent.parent, twin_cache)
    hangs = _only(e.value.findings, "hang")
    [hang] = hangs  # both AIVs of block 0 wait at the same line; the twin stops the run there
    assert (hang.core, hang.block, hang.occurrences) == ("AIV0", 0, 2)
    assert _lines(hang) == [line_of(text, "CrossCoreWaitFlag(SYNC_AIC_AIV_FLAG)")]
    assert "AIC, which finished" in hang.message


def test_a_cross_core_wait_cycle_is_a_deadlock_naming_the_cycle(tmp_path, twin_cache):
    regist = "            REGIST_MATMUL_OBJ("
    wait = "            CrossCoreWaitFlag(SYNC_AIC_AIV_FLAG);\n"
    path, text = seeded(tmp_path, ROWREDUCE_DIR, ROWREDUCE, regist, wait + regist)
    with pytest.raises(TwinError) as e:
        _rowreduce(path.parent.parent, twin_cache)
    [dead] = _only(e.value.findings, "deadlock")
    assert "AIC -> AIV0 -> AIC" in dead.message and dead.core == "AIC"
    assert _lines(dead) == [line_of(text, "CrossCoreWaitFlag(SYNC_AIC_AIV_FLAG)", 0),
                            line_of(text, "CrossCoreWaitFlag(SYNC_AIC_AIV_FLAG)", 1)]


def test_a_removed_cross_core_wait_is_a_gm_race_naming_both_cores_and_lines(tmp_path, twin_cache):
    wait = "            CrossCoreWaitFlag(C_READY);\n"
    path, text = seeded(tmp_path, BARE_MIX_DIR, "op_kernel/bare_mix.cpp", wait, "")
    findings = _bare_mix(path.parent.parent, twin_cache).check_sync()
    [race] = findings  # the AIC's Fixpipe of C against each AIV's DataCopy of its rows of C (merged: same lines)
    assert race.kind == "race" and race.occurrences == 2 and race.block == 0
    assert _lines(race) == [line_of(text, "Fixpipe<float, float, CFG_ROW_MAJOR>(cGm"),
                            line_of(text, "DataCopy(c, cGm[offset]")]
    assert [c.on for c in race.calls] == ["AIC of block 0", "AIV0 of block 0"]
    assert [c.what for c in race.calls] == ["Fixpipe", "DataCopy(VECIN <- GM)"]
    assert "GM race between cores: AIC of block 0 writes bytes [0, 2048) of kernel parameter 2" in race.message
    assert "AIV0 of block 0 reads them" in race.message and "CrossCoreWaitFlag on the reading core" in race.message
    assert "AIV0 of block 0's call #" in str(race)


def test_the_unmodified_bare_mix_orders_its_gm_hand_off(twin_cache):
    assert _bare_mix(BARE_MIX_DIR, twin_cache).check_sync() == []


def _gm(core: str, api: str, args: str, gm: str, site: str) -> str:
    return _c(core, api, args, site, gm)


def test_gm_races_between_blocks_need_a_sync_all_and_respect_rows():
    write = _gm("AIV", "DataCopy", "dst=GM src=VECOUT dtype=float count=64", "gm=1:0+256", "k.cpp:10")
    read = "C | k | 1 | AIV | 1 | DataCopy | dst=VECIN src=GM dtype=float count=64 | k.cpp:12 | gm=1:128+256"
    sync0 = _c("AIV", "SyncAll", "isAIVOnly=1", "k.cpp:11")
    sync1 = "C | k | 1 | AIV | 1 | SyncAll | isAIVOnly=1 | k.cpp:11 | -"
    [f] = check_sync(_log(write, read))
    assert f.kind == "race" and f.lines == ("k.cpp:10", "k.cpp:12") and "bytes [128, 256)" in f.message
    assert [c.on for c in f.calls] == ["AIV of block 0", "AIV of block 1"] and "a SyncAll between" in f.message
    assert check_sync(_log(write, sync0, sync1, read)) == []
    # block 0 writes the even 64-byte rows, block 1 reads the odd ones: no byte in common
    even = _gm("AIV", "DataCopyPad", "dst=GM src=VECOUT dtype=float", "gm=1:0+256 gmrows=4x64/128", "k.cpp:10")
    odd = ("C | k | 1 | AIV | 1 | DataCopyPad | dst=VECIN src=GM dtype=float | k.cpp:12 | "
           "gm=1:64+256 gmrows=4x64/128")
    assert check_sync(_log(even, odd)) == []
    assert check_sync(_log(even, odd.replace("gm=1:64+", "gm=1:128+"))) != []


# ---- no false positives -------------------------------------------------------------------------------
def test_the_unmodified_samples_have_no_findings(twin_cache):
    assert _vector(FLAGS_DIR, twin_cache).check_sync() == []
    assert _vector(PREFETCH_DIR, twin_cache).check_sync() == []
    assert _rowreduce(ROWREDUCE_DIR, twin_cache).check_sync() == []
    x = halves(10037)
    add = ks.ascendc.load(TWIN_KERNELS / "add_custom", args=[x, x, ks.ascendc.out(x.shape, "float16")],
                          tiling={"totalLength": 10037, "blockLength": 1264, "tileLength": 512}, block_dim=8,
                          cache_dir=twin_cache)
    assert add.check_sync() == []


def _sync_all_rms():
    from ..codegen.test_sync_all import _mm_norm, _sync
    out = _mm_norm(40, 256, 128, "rms_norm")
    return out, _sync(out, double=False)


def _matmul_leaky_relu():
    a = ks.placeholder((96, 64), "float16", name="a")
    b = ks.placeholder((64, 80), "float16", name="b")
    out = ks.leaky_relu(ks.matmul(a, b), 0.1)
    return out, ks.lower(ks.create_schedule(out, fuse=True))


def _sync_all_groups():
    from ..codegen.test_sync_all import _mm_norm
    out = _mm_norm(40, 256, 128, "rms_norm")
    s = ks.create_schedule(out, fuse=True)
    s[s.kernels[0].name].sync_all(True).split("m", 16).split("n", 64).l1_c_steps(2, 2)
    return out, ks.lower(s, "ascend910b2")


# generated kernels whose cores hand data to each other through GM: (graph, lowered program)
GM_HAND_OFF = {"sync_all_rms_norm": _sync_all_rms, "matmul_leaky_relu": _matmul_leaky_relu,
               "sync_all_groups": _sync_all_groups}


@pytest.mark.parametrize("name", sorted(REFERENCE) + sorted(GM_HAND_OFF))
def test_generated_reference_kernels_have_no_findings(name, twin_cache):
    if name in GM_HAND_OFF:
        out, prog = GM_HAND_OFF[name]()
    else:
        out = REFERENCE[name]()
        prog = ks.lower(ks.create_schedule(out))
    code = ks.codegen(prog)
    _, log = ks.twin.run(code, ks.random_inputs(out, seed=0), log_calls=True, cache_dir=twin_cache)
    assert any(c.site for c in log), "the twin records call sites"
    assert check_sync(log) == [], format_findings(check_sync(log))
    if name in GM_HAND_OFF:  # the hand-off is what orders the cores: without its waits the reads race
        unordered = [c for c in log.calls if c.api not in ("CrossCoreWaitFlag", "SyncAll")]
        assert {f.kind for f in check_sync(unordered)} == {"race"}
        assert any("GM race between cores" in f.message for f in check_sync(unordered))


# ---- hand-written logs (no compiler) --------------------------------------------------------------------
def _log(*rows: str, version: int = 2) -> CallLog:
    head = f"# ks_twin call log {version}\nL\tk\tMIX_MODE\t1\n"
    return CallLog.parse(head + "".join(r.replace(" | ", "\t") + "\n" for r in rows))


def _c(core: str, api: str, args: str, site: str = "-", refs: str = "-") -> str:
    return f"C | k | 0 | {core} | 0 | {api} | {args} | {site} | {refs}"


def test_a_cycle_with_sets_after_the_waits_is_a_deadlock():
    to_aiv, to_aic = "mode=2 pipe=PIPE_FIX id=0", "mode=2 pipe=PIPE_MTE3 id=1"
    log = _log(_c("AIC", "CrossCoreWaitFlag", "id=1", "k.cpp:10"), _c("AIC", "CrossCoreSetFlag", to_aiv, "k.cpp:11"),
               _c("AIV0", "CrossCoreWaitFlag", "id=0", "k.cpp:20"), _c("AIV0", "CrossCoreSetFlag", to_aic, "k.cpp:21"),
               _c("AIV1", "CrossCoreWaitFlag", "id=0", "k.cpp:20"), _c("AIV1", "CrossCoreSetFlag", to_aic, "k.cpp:21"))
    [f] = check_sync(log)
    assert f.kind == "deadlock" and "AIC -> AIV0 -> AIC" in f.message and f.lines == ("k.cpp:10", "k.cpp:20")


def test_sets_before_waits_across_cores_are_clean():
    log = _log(_c("AIC", "CrossCoreSetFlag", "mode=2 pipe=PIPE_FIX id=0"), _c("AIC", "CrossCoreWaitFlag", "id=1"),
               _c("AIV0", "CrossCoreWaitFlag", "id=0"), _c("AIV0", "CrossCoreSetFlag", "mode=2 pipe=PIPE_MTE3 id=1"),
               _c("AIV1", "CrossCoreWaitFlag", "id=0"), _c("AIV1", "CrossCoreSetFlag", "mode=2 pipe=PIPE_MTE3 id=1"))
    assert check_sync(log) == []


def test_enque_beyond_the_queue_depth():
    q = "q=VECIN:0"
    log = _log(_c("AIV0", "InitBuffer", "que=VECIN depth=1 num=2 len=64", "k.cpp:5", q),
               _c("AIV0", "AllocTensor", "que=VECIN depth=1", "k.cpp:6", q + " slot=VECIN:0"),
               _c("AIV0", "EnQue", "que=VECIN depth=1", "k.cpp:7", q + " slot=VECIN:0"),
               _c("AIV0", "AllocTensor", "que=VECIN depth=1", "k.cpp:6", q + " slot=VECIN:64"),
               _c("AIV0", "EnQue", "que=VECIN depth=1", "k.cpp:7", q + " slot=VECIN:64"))
    [f] = check_sync(log)
    assert f.kind == "queue" and "depth is 1" in f.message and f.lines == ("k.cpp:5", "k.cpp:7", "k.cpp:7")


def test_a_version_1_log_still_parses_and_checks_without_lines():
    log = CallLog.parse("# ks_twin call log 1\nL\tk\tAIV_MODE\t1\n"
                        "C\tk\t0\tAIV\t0\tSetFlag\tevent=V_MTE3 id=0\nC\tk\t0\tAIV\t0\tSetFlag\tevent=V_MTE3 id=0\n")
    assert log.calls[0].site is None and log.calls[0].refs == ()
    [f] = check_sync(log)
    assert f.kind == "lost-signal" and f.lines == (None, None) and "an unrecorded line" in str(f)


def test_a_malformed_site_is_refused():
    with pytest.raises(TwinError, match="not a twin call-log line"):
        CallLog.parse("C\tk\t0\tAIV\t0\tAdds\tdtype=half\tno-line-here\t-\n")


def test_format_findings_without_findings():
    assert format_findings([]) == "sync check: no findings"


def test_a_cube_tile_read_before_its_load_is_ordered_is_a_race():
    load = _c("AIC", "LoadData", "dst=A2 src=A1 dtype=half format=2D", "k.cpp:30", "w=A2:0+512 r=A1:0+512")
    mmad = _c("AIC", "Mmad", "dtype=half m=16 n=16 k=16", "k.cpp:31", "w=CO1:0+1024 r=A2:0+512 r=B2:0+512")
    [f] = check_sync(_log(load, mmad))
    assert f.kind == "race" and f.lines == ("k.cpp:30", "k.cpp:31") and "MTE1 and M" in f.message
    ordered = [load, _c("AIC", "SetFlag", "event=MTE1_M id=0"), _c("AIC", "WaitFlag", "event=MTE1_M id=0"), mmad]
    assert check_sync(_log(*ordered)) == []
