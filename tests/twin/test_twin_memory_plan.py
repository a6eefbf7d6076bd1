"""Lowering's memory plan is what the generated code allocates: the twin reports the bytes every
TPipe's InitBuffer calls took, and they equal `usage()` for every reference kernel, fused and
unfused. Scratch buffers (reduce work areas, select masks, ...) are decided by one function,
`lower.scratch.scratch_buffers`, which both sides use."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.tileir.capacity import usage
from kernelstudio.tileir.scratch import scratch_buffers
from kernelstudio.twin import runner
from tests.reference_kernels import REFERENCE

_LINE = re.compile(r"^KS_TWIN_MEMORY (?P<core>.+?) UB=(?P<UB>\d+) L1=(?P<L1>\d+) L0A=(?P<L0A>\d+) "
                   r"L0B=(?P<L0B>\d+) L0C=(?P<L0C>\d+)$", re.M)


def _twin_memory(code, inputs, cache: Path, tmp: Path) -> list[dict[str, int]]:
    binary = runner.compile(code, cache_dir=cache)
    storage, _ = runner._check_inputs(code, inputs)  # (arrays, run-time row dims)
    for name, arr in storage.items():
        arr.tofile(tmp / f"{name}.bin")
    env = {**os.environ, "KS_TWIN_MEMORY_REPORT": "1"}
    proc = subprocess.run([str(binary)], cwd=tmp, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [{k: int(v) for k, v in m.groupdict().items() if k != "core"} | {"aiv": "AIV" in m["core"]}
            for m in _LINE.finditer(proc.stderr)]
    assert rows, "the twin reported no pipes"
    return rows


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("ref", sorted(REFERENCE))
def test_twin_initbuffer_totals_equal_lowering_usage(ref: str, fuse: bool, twin_cache: Path, tmp_path: Path) -> None:
    out = REFERENCE[ref]()
    prog = ks.lower(ks.create_schedule(out, fuse=fuse))
    rows = _twin_memory(ks.codegen(prog), ks.random_inputs(out), twin_cache, tmp_path)
    planned_ub = {usage(k).get(("aiv", "UB"), 0) for k in prog.kernels if k.aiv}
    seen_ub = {r["UB"] for r in rows if r["aiv"]}
    assert seen_ub == planned_ub
    for tier in ("L1", "L0A", "L0B", "L0C"):  # the conv basic API allocates its cube buffers via InitBuffer
        seen = {r[tier] for r in rows if not r["aiv"] and r[tier]}
        if seen:
            assert seen <= {usage(k).get(("aic", tier), 0) for k in prog.kernels}


@pytest.mark.parametrize("shape,dtype", [((64, 12288), "bfloat16"), ((3, 12000), "float32"), ((5, 9000), "float16")])
def test_rms_norm_wide_rows_fit_ub_on_the_twin(shape, dtype, twin_cache: Path) -> None:
    x = ks.placeholder(shape, dtype, name="x")
    out = ks.rms_norm(x)
    prog = ks.lower(ks.create_schedule(out))
    k = prog.kernels[0]
    assert "workBuf" in scratch_buffers(k)
    assert usage(k)[("aiv", "UB")] <= ks.hw.get("ascend910b2").ub_bytes
    inputs = ks.random_inputs(out)
    got = ks.twin.run(ks.codegen(prog), inputs, cache_dir=twin_cache)
    want = ks.run_tiled(prog, inputs)
    # the same kernel: equal up to float32 rounding of the row statistic (the twin's Rsqrt vs NumPy's)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_scratch_counts_in_the_capacity_error() -> None:
    x = ks.placeholder((8, 12288), "float32", name="x")
    s = ks.create_schedule(ks.rms_norm(x))
    s[s.outputs[0]].vectorize(-1, 12288)
    with pytest.raises(ks.CapacityError, match=r"UB needs .* scratch workBuf = [\d,]+ B"):
        ks.lower(s)
