"""Where the twin follows CANN exactly: the kernel mode without SetKernelMode (MIX), InitBuffer's 32-byte
rounding; and the API-call log (exact counts of a small kernel, flags by event, per core)."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import CallLog, run

from .conftest import load_bundle

STRICT = load_bundle(
    "twin_strict",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (64,), "float16")),
    (TensorSpec("y", (64,), "float16"), TensorSpec("ids", (6,), "int32")),
)
X = (np.arange(64) % 11).astype(np.float16)


def _inputs(mode: int) -> dict[str, np.ndarray]:
    return {"mode": np.array([mode], dtype=np.int32), "x": X}


def _run(mode: int, cache: Path, **kw: object):
    return run(STRICT, _inputs(mode), cache_dir=cache, **kw)


# --- SetKernelMode: MIX unless main.cpp says otherwise -------------------------------------------------
MIX_IDS = [100, 200, 201, 101, 202, 203]  # per block: AIC (GetBlockIdx b), AIV0 (2b), AIV1 (2b + 1)


def test_without_set_kernel_mode_the_launch_is_mix(twin_cache: Path) -> None:
    _, ids = _run(0, twin_cache)
    np.testing.assert_array_equal(ids, MIX_IDS)
    _, explicit = _run(7, twin_cache)  # the same kernel after SetKernelMode(MIX_MODE)
    np.testing.assert_array_equal(explicit, ids)


def test_default_mix_log_shows_three_cores_per_block(twin_cache: Path) -> None:
    _, log = _run(0, twin_cache, log_calls=True)
    assert [(la.kernel, la.mode, la.block_dim) for la in log.launches] == [("who_am_i", "MIX_MODE", 2)]
    assert [(c.block, c.core, c.block_idx) for c in sorted(log, key=lambda c: (c.block, c.core))] == [
        (0, "AIC", 0), (0, "AIV0", 0), (0, "AIV1", 1), (1, "AIC", 1), (1, "AIV0", 2), (1, "AIV1", 3)]
    assert log.counts(core="host") == Counter()  # main.cpp never called SetKernelMode


def test_aiv_only_kernel_without_set_kernel_mode_is_a_launch_error(twin_cache: Path) -> None:
    with pytest.raises(TwinError, match=r"launch: kernel declared_aiv_only declares KERNEL_TASK_TYPE_DEFAULT"
                                        r"\(KERNEL_TYPE_AIV_ONLY\) but main.cpp launched it in KernelMode::MIX_MODE "
                                        r"\(the default: main.cpp never called SetKernelMode\); call "
                                        r"AscendC::SetKernelMode\(KernelMode::AIV_MODE\)"):
        _run(1, twin_cache)


def test_unguarded_vector_code_in_the_default_mode_runs_on_the_aic_and_fails(twin_cache: Path) -> None:
    with pytest.raises(TwinError, match=r"launch: Duplicate runs on the AIC of block 0.*SetKernelMode\(KernelMode::"
                                        r"AIV_MODE\) before ICPU_RUN_KF \(without it the launch is MIX_MODE"):
        _run(2, twin_cache)


# --- InitBuffer rounds lengths up to 32 bytes ---------------------------------------------------------
def test_unaligned_init_buffer_holds_32_bytes_and_data_copy_pad_fits(twin_cache: Path) -> None:
    y, ids = _run(3, twin_cache)
    np.testing.assert_array_equal(ids[:2], [16, 16])  # 6 bytes -> 32 bytes = 16 half (queue and TBuf)
    np.testing.assert_array_equal(y[:3], X[:3] + np.float16(1))
    np.testing.assert_array_equal(y[3:], 0)  # DataCopyPad wrote exactly 3 elements back


def test_overrun_past_the_rounded_buffer_is_still_a_bounds_error(twin_cache: Path) -> None:
    with pytest.raises(TwinError, match=r"bounds: DataCopyPad\(VECIN <- GM, \{blockCount=2, blockLen=6 B.*elements "
                                        r"\[0, 32\) of a VECIN LocalTensor<half> of 16 elements"):
        _run(4, twin_cache)
    with pytest.raises(TwinError, match=r"bounds: TBuf<VECCALC>::Get<half>\(17\).*34 bytes asked from a buffer of "
                                        r"32 bytes"):
        _run(5, twin_cache)


# --- the API-call log ----------------------------------------------------------------------------------
PER_CORE = Counter({
    "InitBuffer": 1, "AllocTensor": 2, "DataCopy": 4, "EnQue": 2, "DeQue": 2, "Muls": 2, "Adds": 2,
    "SetFlag": 2, "WaitFlag": 2, "FreeTensor": 2, "PipeBarrier": 1,
})


def test_call_log_counts_of_a_known_kernel(twin_cache: Path) -> None:
    (y, _), log = _run(6, twin_cache, log_calls=True)
    np.testing.assert_array_equal(y, X * np.float16(2))
    assert isinstance(log, CallLog) and log.kernels == ("logged_loop",)
    assert log.counts(core="host") == Counter({"SetKernelMode": 1})
    assert [c.args["mode"] for c in log.select(api="SetKernelMode")] == ["AIV_MODE"]
    for block in (0, 1):
        assert log.counts(kernel="logged_loop", block=block) == PER_CORE
        assert log.counts(kernel="logged_loop", core="AIV", block_idx=block) == PER_CORE
        assert log.flags(kernel="logged_loop", block=block) == Counter({("SetFlag", "V_MTE3"): 2,
                                                                        ("WaitFlag", "V_MTE3"): 2})
    assert log.counts(kernel="logged_loop") == Counter({k: 2 * v for k, v in PER_CORE.items()})
    assert log.counts(kernel="logged_loop", core="AIC") == Counter()
    # one loop iteration, in program order, as a parity test would compare it with the TileIR
    seq = log.sequence(kernel="logged_loop", block=1)
    assert seq[1:10] == ["AllocTensor", "DataCopy", "EnQue", "DeQue", "Muls", "Adds", "SetFlag", "WaitFlag",
                         "DataCopy"]
    muls = log.select(kernel="logged_loop", block=0, api="Muls")
    assert [(c.args["dtype"], c.args["count"], c.args["repeats"]) for c in muls] == [("half", 16, 1)] * 2
    copies = log.select(kernel="logged_loop", block=0, api="DataCopy")
    assert [(c.args["src"], c.args["dst"]) for c in copies] == [("GM", "VECIN"), ("VECIN", "GM")] * 2


def test_call_log_is_off_unless_asked_and_kept_with_keep_dir(twin_cache: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KS_TWIN_LOG", str(tmp_path / "stray.log"))  # the runner decides, not the environment
    out = _run(6, twin_cache, keep_dir=str(tmp_path / "plain"))
    assert isinstance(out, tuple) and len(out) == 2
    assert not (tmp_path / "stray.log").exists() and not (tmp_path / "plain" / "calls.log").exists()
    _, log = _run(6, twin_cache, keep_dir=str(tmp_path / "logged"), log_calls=True, by_name=True)
    assert CallLog.read(tmp_path / "logged" / "calls.log").counts() == log.counts()


def test_a_failing_run_carries_the_calls_up_to_the_failure(twin_cache: Path) -> None:
    with pytest.raises(TwinError) as info:
        _run(4, twin_cache, log_calls=True)
    calls = info.value.calls  # type: ignore[attr-defined]
    assert calls.sequence(kernel="unaligned_overrun") == ["InitBuffer", "AllocTensor", "DataCopyPad"]


def test_by_name_returns_the_dict(twin_cache: Path) -> None:
    out = _run(3, twin_cache, by_name=True)
    assert list(out) == ["y", "ids"]
    np.testing.assert_array_equal(out["ids"][:2], [16, 16])


def test_call_log_rejects_what_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(TwinError, match=r"line 2 is not a twin call-log line"):
        CallLog.parse("# ks_twin call log 1\nC\tk\tnot-a-number\tAIV\t0\tAdds\t\n")
    with pytest.raises(TwinError, match=r"cannot read the twin call log"):
        CallLog.read(tmp_path / "missing.log")
    log = CallLog.parse("L\tk0::add\tAIV_MODE\t1\nC\tk0::add\t0\tAIV\t0\tAdds\tdtype=half count=8 repeats=1\n")
    assert log.kernels == ("add",) and log.counts(kernel="add") == Counter({"Adds": 1})
    with pytest.raises(TwinError, match=r"no kernel 'mul'; it launched \['add'\]"):
        log.counts(kernel="mul")
    with pytest.raises(TwinError, match=r"core='CUBE' is not a core kind"):
        log.counts(core="CUBE")


def test_an_unwritable_log_path_is_reported_before_the_kernel_runs(twin_cache: Path, tmp_path: Path) -> None:
    from kernelstudio.twin import compile as twin_compile

    binary = twin_compile(STRICT, cache_dir=twin_cache)
    env = {**os.environ, "KS_TWIN_LOG": str(tmp_path / "no-such-dir" / "calls.log")}
    proc = subprocess.run([str(binary)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3
    assert proc.stderr.startswith("KS_TWIN_ERROR log: cannot open KS_TWIN_LOG=")
    assert "point it at a writable file or unset it" in proc.stderr
